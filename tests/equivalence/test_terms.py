"""The term DAG (semantics.terms), its builders (semantics.symbolic) and its bit-exact evaluator
(semantics.termeval): interning is structural, bit slicing simplifies exactly, and evaluation
agrees with the value-level functions the instruction handlers use."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semantics import floatops as F
from semantics.symbolic import Builder
from semantics.termeval import Incremental, evaluate, subgraph
from semantics.terms import NO_MODS, Mods, Op, TermStore, bits_sort, float_sort, mods_id

F32 = float_sort("f32")
RN = mods_id(Mods(rnd="rn"))


def test_interning_is_structural() -> None:
    T = TermStore()
    x = T.input("x", np.arange(4), F32)
    a = T.make(Op.FADD, F32, RN, [x[:2], x[2:]])
    b = T.make(Op.FADD, F32, RN, [x[2:], x[:2]])  # commutative: operands sorted
    assert (a == b).all()
    c = T.make(Op.FSUB, F32, RN, [x[:2], x[2:]])
    d = T.make(Op.FSUB, F32, RN, [x[2:], x[:2]])
    assert not (c == d).any() and not np.isin(c, a).any()
    assert (T.make(Op.FADD, F32, RN, [x[:2], x[2:]]) == a).all()  # again: the same ids
    assert len(set(T.input("x", np.arange(4), F32).tolist())) == 4
    assert (T.input("y", [0], F32) != x[0]).all()  # another buffer, another leaf


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=40))
def test_interning_batches(rows: list[tuple[int, int]]) -> None:
    """One batched make gives equal ids exactly to equal rows, and the same ids as single makes."""
    T = TermStore()
    leaves = T.input("x", np.arange(6), F32)
    K = np.array([[leaves[a], leaves[b]] for a, b in rows], np.int64)
    ids = T.make(Op.FSUB, F32, RN, K)
    for i, (a, b) in enumerate(rows):
        assert ids[i] == T.make(Op.FSUB, F32, RN, [np.array([leaves[a]]), np.array([leaves[b]])])[0]
        for j, r2 in enumerate(rows):
            assert (ids[i] == ids[j]) == ((a, b) == r2)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(0, 2**16 - 1), min_size=2, max_size=4), st.integers(0, 3), st.integers(1, 4))
def test_extract_concat_match_bits(parts: list[int], lo_part: int, count: int) -> None:
    """Slices of concatenations (of constants and of input leaves) evaluate to the bits numpy gives."""
    T = TermStore()
    B = Builder(T, 1)
    n = len(parts)
    lo_part, count = lo_part % n, min(count, n - lo_part % n)
    h16 = bits_sort(16)
    leaves = T.input("w", np.arange(n), h16)
    for use_leaves in (False, True):
        kids = [np.array([leaves[i]]) if use_leaves else T.const(h16, p) for i, p in enumerate(parts)]
        cat = B.concat(list(reversed(kids)))  # element 0 lowest
        sl = B.extract(cat, 16 * lo_part, 16 * count)
        want = 0
        for i in range(lo_part + count - 1, lo_part - 1, -1):
            want = (want << 16) | parts[i]

        def leaf(buf, elems, sort):
            return np.array([parts[e] for e in elems], np.uint64)

        assert int(evaluate(T, sl, leaf)[0]) == want
        if count == 1 and use_leaves:  # a slice that is one part is that part itself
            assert sl[0] == leaves[lo_part]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, width=32), min_size=3, max_size=3))
def test_float_nodes_evaluate_as_handlers(vals: list[float]) -> None:
    T = TermStore()
    x = T.input("x", np.arange(3), F32)
    bits = np.array(vals, np.float32).view(np.uint32)

    def leaf(buf, elems, sort):
        return bits[elems].astype(np.uint64)

    add = T.make(Op.FADD, F32, RN, [x[:1], x[1:2]])
    fma = T.make(Op.FFMA, F32, RN, [x[:1], x[1:2], x[2:3]])
    mx = T.make(Op.FMAX, F32, NO_MODS, [x[:1], x[2:3]])
    got = evaluate(T, np.concatenate([add, fma, mx]), leaf)
    a, b, c = (bits[i:i + 1] for i in range(3))
    assert got[0] == F.add(a, b)[0]
    assert got[1] == F.fma(a, b, c)[0]
    from semantics import fspecial as FS

    assert got[2] == FS.fmax(a, c)[0]


def test_incremental_matches_batch() -> None:
    T = TermStore()
    x = T.input("x", np.arange(8), F32)
    bits = np.linspace(-3, 5, 8).astype(np.float32).view(np.uint32)

    def leaf(buf, elems, sort):
        return bits[elems].astype(np.uint64)

    inc = Incremental(T, leaf)
    s = x[:1]
    for i in range(1, 8):
        s = T.make(Op.FADD, F32, RN, [s, x[i:i + 1]])
        inc.extend()
        assert inc.val[s[0]] == evaluate(T, s, leaf)[0]
    assert subgraph(T, s).size == 8 + 7


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=300))
def test_make_interns_a_batch_as_one_row_at_a_time(pairs: list[tuple[int, int]]) -> None:
    """A batch with repeated rows (the store's sort-free dedupe and hash placement) gets the ids that
    interning its rows one by one in a second store gives, up to renumbering; int32 children read back."""
    A, B = TermStore(), TermStore()
    k = np.array(pairs, dtype=np.int64)
    xa, xb = A.input("x", np.arange(6), F32), B.input("x", np.arange(6), F32)
    got = A.make(Op.FMUL, F32, RN, [xa[k[:, 0]], xa[k[:, 1]]])
    one = np.array([B.make(Op.FMUL, F32, RN, [xb[i:i + 1], xb[j:j + 1]])[0] for i, j in pairs])
    assert len(A) == len(B)
    for i in range(len(pairs)):
        assert (got == got[i]).tolist() == (one == one[i]).tolist()
        assert sorted(A.kids(int(got[i]))) == sorted(int(v) for v in xa[list(pairs[i])])
    assert A.kid(got, 0).dtype == np.int64



def _slices_agree(widths: list[int], lo: int, width: int, n: int) -> None:
    T = TermStore()
    total = sum(widths)
    leaves = [T.input(f"p{j}", np.arange(n), bits_sort(w)) for j, w in enumerate(widths)]
    cat = T.make(Op.CONCAT, bits_sort(total), NO_MODS, leaves)  # widths[0] high
    many = Builder(T, n).extract(np.concatenate([cat] * 2), lo, width)  # 2n > _FEW when n > 8
    few = np.concatenate([Builder(T, 1).extract(cat[i:i + 1], lo, width) for i in range(n)] * 2)
    assert (many == few).all()
    rng = np.random.default_rng(n)
    vals = {f"p{j}": rng.integers(0, 1 << w, n, dtype=np.uint64) for j, w in enumerate(widths)}

    def leaf(buf, elems, sort):
        return vals[buf][elems]

    word = [0] * n
    for j, w in enumerate(widths):
        word = [(x << w) | int(v) for x, v in zip(word, vals[f"p{j}"])]
    assert all(T.sort_of(int(i)).width == width for i in many)
    assert [int(g) for g in evaluate(T, many[:n], leaf)] == [(x >> lo) & ((1 << width) - 1) for x in word]


@pytest.mark.parametrize("widths,lo,width", [([8, 4, 12], 0, 8), ([16, 8, 24, 16], 0, 16), ([16, 8, 24, 16], 48, 16),
                                             ([16, 16, 16], 16, 16), ([8, 8, 8, 8], 24, 8)])
def test_extract_of_unequal_parts(widths: list[int], lo: int, width: int) -> None:
    """Builder.extract of more than _FEW terms (arrays) and of a few (each term's _extract1) give the same
    slices, each of the width asked for and evaluating to its bits: concatenations of unequal parts
    included (8 | 4 | 12 bits: its bits 0-7 are not its 12-bit part, though its first part is 8 bits wide
    and 3 x 8 = 24; the array path took the 12-bit part until 2026-12-05)."""
    _slices_agree(widths, lo, width, 20)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([4, 8, 12, 16]), min_size=2, max_size=4), st.integers(0, 3), st.integers(1, 40),
       st.data())
def test_extract_of_many_and_of_few_terms_agree(widths: list[int], lo_k: int, n: int, data) -> None:
    total = sum(widths)
    width = data.draw(st.sampled_from([w for w in (4, 8, 12, 16) if w <= total]))
    _slices_agree(widths, (lo_k * width) % (total - width + 1), width, n)


_COLUMN_OPS = st.lists(st.one_of(st.tuples(st.just("append"), st.integers(-2**31, 2**31 - 1)),
                                 st.tuples(st.just("extend"), st.lists(st.integers(-2**31, 2**31 - 1), max_size=40)),
                                 st.tuples(st.just("hold"), st.just(0)), st.tuples(st.just("drop"), st.just(0))),
                       max_size=120)


@settings(max_examples=200, deadline=None)
@given(_COLUMN_OPS)
def test_column_grows_in_place_or_by_copy_and_views_keep_their_values(ops) -> None:
    """semantics.terms._Column grows by a copy (since 2026-12-06s39; up to then in place by resizing when no view
    was alive): its contents equal a list's, and every view taken earlier still shows what it showed then (a
    resize under a live view would leave it pointing at freed memory)."""
    from semantics.terms import _Column

    col, ref, held = _Column(np.int64, capacity=2), [], []
    for op, arg in ops:
        if op == "append":
            assert col.append(arg) == len(ref)
            ref.append(arg)
        elif op == "extend":
            assert col.extend(np.array(arg, np.int64)) == len(ref)
            ref.extend(arg)
        elif op == "hold":
            held.append((col.view, list(ref)))
        elif held:
            held.pop(0)
        assert col.view.tolist() == ref and col.a.size >= col.n
        for view, seen in held:
            assert view.tolist() == seen


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 300), min_size=1, max_size=12), st.integers(1, 64))
def test_hash_index_rehash_in_steps_finds_every_node(batches: list[int], step: int) -> None:
    """The structural-hash index rehashed a few slots and entries at a time (`_HashIndex._REHASH_STEP`, as small
    as one): every node made stays found (`find` gives its id) and making it again adds nothing."""
    T = TermStore()
    T._index._REHASH_STEP = step
    x = T.input("x", np.arange(40), F32)
    made, rows = [], []
    rng = np.random.default_rng(sum(batches) + step)
    for m in batches:
        K = x[rng.integers(0, x.size, (m, 2))]
        made.append(T.make(Op.FSUB, F32, RN, K))
        rows.append(K)
    n = len(T)
    for K, ids in zip(rows, made):
        assert (T.find(Op.FSUB, F32, RN, K) == ids).all()
        assert (T.make(Op.FSUB, F32, RN, K) == ids).all()
    assert len(T) == n and T._index.table.size >= T._index._FILL * len(T._index)
