"""TermStore.make of one row takes a scalar path (TermStore.make1: Python ints, no arrays; prmt's byte
slices and concatenations make ~180 k such rows in sage_attention's runs). It must give the store the
array path gives: the same ids, columns, shape hashes, hash index and spill table, for any row sequence,
hash collisions included (forced here with a weak mixer in both paths)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import semantics.terms as terms
from semantics.terms import Mods, Op, TermStore, bits_sort, float_sort, mods_id

S32, S16, F32 = bits_sort(32), bits_sort(16), float_sort("f32")
AUXES = [mods_id(Mods()), mods_id(Mods(lo=8, width=8)), mods_id(Mods(cmp="lt", signed=True))]


def _array_make(T: TermStore, op: Op, sort: int, aux: int, kids: list[int]) -> int:
    """The array path of one row, as make took it before the scalar path (_rows, then _intern)."""
    rows, h = terms._rows(op, sort, aux, [np.array([k], np.int64) for k in kids])
    return int(T._intern(int(op), rows, h)[0])


def _state(T: TermStore) -> tuple:
    cols = [T._op, T._sort, T._aux, T._off, T._nk, T._kids, T._shape, T._index.hashes]
    return (tuple(c.view.tobytes() for c in cols), T._index.table.tobytes(), T._index.count, dict(T._spill))


def _rows_drawn(data) -> list[tuple]:
    out: list[tuple] = []
    n = 3  # the leaves made first (below)
    for _ in range(data.draw(st.integers(1, 200))):
        kind = data.draw(st.sampled_from(["const", "input", "unary", "binary", "ternary", "again"]))
        if kind == "again" and out:
            out.append(out[data.draw(st.integers(0, len(out) - 1))])
            continue
        if kind == "const":  # negative and top-bit values: the uint64 views of CONST leaves
            v = data.draw(st.integers(-(1 << 63), (1 << 63) - 1))
            out.append((Op.CONST, data.draw(st.sampled_from([S32, S16, F32])), v, []))
        elif kind == "input":
            out.append((Op.INPUT, S32, (data.draw(st.integers(0, 3)) << 40) | data.draw(st.integers(0, 99)), []))
        else:
            k = {"unary": 1, "binary": 2, "ternary": 3}.get(kind, 2)
            op = data.draw(st.sampled_from([Op.NOT, Op.EXTRACT] if k == 1 else
                                           [Op.AND, Op.IADD, Op.CONCAT, Op.SHL, Op.FADD] if k == 2 else [Op.ITE, Op.BFE]))
            kids = [data.draw(st.integers(0, n - 1)) for _ in range(k)]
            out.append((op, S32, data.draw(st.sampled_from(AUXES)), kids))
        n += 1
    return out


def _build(rows: list[tuple], scalar: bool) -> tuple[TermStore, list[int]]:
    T = TermStore()
    ids = [int(x) for x in T.input("x", np.arange(3), S32)]
    got = []
    n = len(ids)
    for op, sort, aux, kids in rows:
        kids = [min(k, n - 1) for k in kids]
        if scalar:  # through make's dispatch, with the argument kinds callers pass
            i = int(T.make(op, sort, np.int64(aux), [np.array([k]) for k in kids])[0])
        else:
            i = _array_make(T, op, sort, aux, kids)
        got.append(i)
        n = len(T)
    return T, got


@settings(max_examples=120, deadline=None)
@given(st.data())
def test_scalar_make_builds_the_array_paths_store(data) -> None:
    rows = _rows_drawn(data)
    A, ia = _build(rows, scalar=False)
    B, ib = _build(rows, scalar=True)
    assert ia == ib
    assert _state(A) == _state(B)


@pytest.mark.parametrize("seed", range(6))
def test_scalar_make_with_colliding_hashes(seed: int, monkeypatch) -> None:
    """A mixer with 8 values: most rows collide with another row's hash; both paths must put the same
    rows in the spill table and never merge two different rows."""
    monkeypatch.setattr(terms, "_mix", lambda h, v: (h ^ v.astype(np.uint64, copy=False)) & np.uint64(7))
    monkeypatch.setattr(terms, "_mix1", lambda h, v: (h ^ (v & terms._M64)) & 7)
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(300):
        k = int(rng.integers(0, 3))
        op = [Op.CONST, Op.NOT, Op.IADD][k]
        rows.append((op, S32, int(rng.integers(-5, 5)) if k == 0 else AUXES[0], [int(rng.integers(0, 3 + i)) for _ in range(k)]))
    A, ia = _build(rows, scalar=False)
    B, ib = _build(rows, scalar=True)
    assert ia == ib and _state(A) == _state(B)
    assert A._spill  # collisions happened
    for i, (op, sort, aux, kids) in enumerate(rows):  # different rows, different ids
        for j in range(i):
            if ia[i] == ia[j]:
                assert rows[i][:3] == rows[j][:3]


def test_make_of_one_row_returns_an_int64_array() -> None:
    T = TermStore()
    x = T.input("x", np.arange(2), S32)
    a = T.make(Op.IADD, S32, mods_id(Mods()), [x[1:], x[:1]])
    b = T.make(Op.IADD, S32, mods_id(Mods()), [x[:1], x[1:]])  # commutative: one node
    assert a.dtype == np.int64 and a.shape == (1,) and a[0] == b[0]
    c = T.const(S32, np.uint64(0xFFFFFFFFFFFFFFFF))
    assert int(T.aux[c[0]]) == -1 and int(T.const(S32, -1)[0]) == int(c[0])


def _slicing_run(data_ops: list[tuple], few: int, monkeypatch) -> tuple[TermStore, list[list[int]]]:
    """Builder.extract / concat calls (prmt's byte slices and their concatenations) on a few lanes."""
    import semantics.symbolic as symbolic

    monkeypatch.setattr(symbolic, "_FEW", few)
    T = TermStore()
    B = symbolic.Builder(T, 8)
    pool = [int(x) for x in T.input("a", np.arange(4), S32)] + [int(x) for x in T.input("h", np.arange(2), S16)]
    pool += [int(T.const(S32, 0x12345678)[0])]
    outs = []
    for kind, picks, lo in data_ops:
        ids = np.array([pool[p % len(pool)] for p in picks], np.int64)
        if kind == "extract":
            w = SORTS_W(T, ids)
            got = B.extract(ids, lo % w, min(8, w - lo % w)) if w >= 8 else ids
        else:
            k = 2 + lo % 3
            parts = [np.array([pool[(p + j) % len(pool)] for p in picks], np.int64) for j in range(k)]
            got = B.concat(parts)
        got = [int(x) for x in got]
        pool += [g for g in got if T.sort_of(g).width <= 64]
        outs.append(got)
    return T, outs


def SORTS_W(T: TermStore, ids: np.ndarray) -> int:
    return min(T.sort_of(int(i)).width for i in ids)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["extract", "concat"]), st.lists(st.integers(0, 60), min_size=1, max_size=12),
                          st.integers(0, 31)), min_size=1, max_size=25))
def test_few_lane_slicing_builds_the_array_paths_store(ops: list[tuple]) -> None:
    """Builder.extract and concat of at most _FEW lanes (Python ints) make the array path's nodes in its
    order: the same ids and the same store."""
    with pytest.MonkeyPatch.context() as mp:
        A, oa = _slicing_run(ops, 0, mp)
    with pytest.MonkeyPatch.context() as mp:
        B, ob = _slicing_run(ops, 16, mp)
    assert oa == ob
    assert _state(A) == _state(B)
