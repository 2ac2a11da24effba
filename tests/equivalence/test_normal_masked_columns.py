"""proofs.normal: indicators of comparisons of one label with constants (_indicator_algebra).

ce_zloss_smem_row's reference (Triton) sums where(cols == y, where(cols < N, z, -inf), 0) over whole column
blocks and stores where(valid, loss, 0), valid = y > -1 && y < N: a masked column j >= N is the atom
ite([y == j], -inf, 0) under [y >s -1] [y <s N], which is 0 there; the candidate picks z[y] among the N
columns only. The rules: the indicators of one term hold at once only on the intersection of their word sets
(empty: 0; one word v: [x == v] alone), and an ite atom under indicators that decide its condition is its
constant branch. Checked here against the comparisons' truth computed in Python, with wrong bounds and wrong
columns staying not equal.
"""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from proofs.normal import AtomKind, Normalizer
from semantics.terms import PRED, Mods, Op, TermStore, bits_sort, float_sort, mods_id

W = bits_sort(32)
F = float_sort("f32")
NEG_INF = 0xFF800000
ORDERED = ["lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"]


def _c(T: TermStore, v: int) -> np.ndarray:
    return T.const(W, np.uint64(v % (1 << 32)))


def _cmp(T: TermStore, a: np.ndarray, b: np.ndarray, cmp: str, signed: bool = True) -> np.ndarray:
    return T.make(Op.CMP, PRED, mods_id(Mods(cmp=cmp, signed=signed)), [a, b])


def _ite(T: TermStore, p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return T.make(Op.ITE, F, 0, [p, a, b])


def _and(T: TermStore, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    return T.make(Op.PAND, PRED, 0, [p, q])


def _add(T: TermStore, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return T.make(Op.FADD, F, 0, [a, b])


def _zero(T: TermStore) -> np.ndarray:
    return T.const(F, 0)


def _holds(v: int, cmp: str, c: int, signed: bool) -> bool:
    """v cmp c on 32-bit words as setp compares them (PTX ISA 9.7.3.x)."""
    v, c = v % (1 << 32), c % (1 << 32)
    if cmp in ("lo", "ls", "hi", "hs"):
        cmp, signed = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}[cmp], False
    if signed:
        v, c = (v - (1 << 32) if v >> 31 else v), (c - (1 << 32) if c >> 31 else c)
    return {"lt": v < c, "le": v <= c, "gt": v > c, "ge": v >= c}[cmp]


def _valid(T: TermStore, y: np.ndarray, n: int) -> np.ndarray:
    return _and(T, _cmp(T, y, _c(T, -1), "gt"), _cmp(T, y, _c(T, n), "lt"))


def _triton_pick(T: TermStore, y: np.ndarray, z: np.ndarray, cols: list[int], n: int, bound: int) -> np.ndarray:
    """where(valid, sum_j where(cols[j] == y, where(cols[j] < n, z[j], -inf), 0), 0), valid = -1 < y < bound."""
    acc = _zero(T)
    for j, col in enumerate(cols):
        zj = z[j:j + 1] if col < n else T.const(F, NEG_INF)
        acc = _add(T, acc, _ite(T, _cmp(T, y, _c(T, col), "eq"), zj, _zero(T)))
    return _ite(T, _valid(T, y, bound), acc, _zero(T))


def _chain_pick(T: TermStore, y: np.ndarray, z: np.ndarray, cols: list[int], n: int) -> np.ndarray:
    """where(valid, zy, 0) with zy = 0; for j with cols[j] < n: if (cols[j] == y) zy = z[j] (the candidate's)."""
    zy = _zero(T)
    for j, col in enumerate(cols):
        if col < n:
            zy = _ite(T, _cmp(T, _c(T, col), y, "eq"), z[j:j + 1], zy)
    return _ite(T, _valid(T, y, n), zy, _zero(T))


def _ite_atoms(N: Normalizer, x) -> int:
    return sum(N.atoms[m[i]][0] is AtomKind.APP and N.atoms[m[i]][1][0] == "ite"
               for m in x.num for i in range(0, len(m), 2))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from(ORDERED), st.integers(-3, 3), st.booleans())
def test_an_equality_times_an_ordered_comparison_is_its_truth(v: int, cmp: str, delta: int, signed: bool) -> None:
    """[y == v] [y cmp c] (c near v, or v's negation) is [y == v] where v cmp c holds and 0 where it does not."""
    for c in (v + delta, -v + delta):
        T = TermStore()
        y = T.input("labels", np.arange(1), W)
        z = T.input("z", np.arange(1), F)
        both = _ite(T, _cmp(T, y, _c(T, v), "eq"), _ite(T, _cmp(T, y, _c(T, c), cmp, signed), z, _zero(T)), _zero(T))
        alone = _ite(T, _cmp(T, y, _c(T, v), "eq"), z, _zero(T))
        N = Normalizer(T)
        a, b, zero = N.of(np.concatenate([both, alone, _zero(T)]))
        assert N.equal(a, b if _holds(v, cmp, c, signed) else zero)
        assert not N.equal(a, zero if _holds(v, cmp, c, signed) else b)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 12), st.lists(st.integers(0, 20), min_size=1, max_size=8, unique=True), st.randoms())
def test_masked_columns_under_the_label_test_are_zero(n: int, cols: list[int], rnd) -> None:
    """Triton's masked pick (columns >= n read -inf) under -1 < y < n is the select chain over the columns < n,
    and no ite atom is left."""
    T = TermStore()
    y = T.input("labels", np.arange(1), W)
    z = T.input("z", np.arange(len(cols)), F)
    order = list(range(len(cols)))
    rnd.shuffle(order)
    ref = _triton_pick(T, y, z, cols, n, n)
    cand = _chain_pick(T, y, z[order], [cols[j] for j in order], n)
    N = Normalizer(T)
    a, b = N.of(np.concatenate([cand, ref]))
    assert N.equal(a, b)
    assert _ite_atoms(N, b) == 0


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 12), st.lists(st.integers(0, 20), min_size=1, max_size=8, unique=True), st.data())
def test_a_wrong_label_bound_is_not_equal(n: int, cols: list[int], data) -> None:
    """The label test y < bound with bound > n lets a masked column n..bound-1 in (a -inf where the reference
    stores 0): not equal when such a column is summed; a wrong bound below n drops a real column."""
    bound = data.draw(st.integers(0, 24).filter(lambda b: b != n))
    T = TermStore()
    y = T.input("labels", np.arange(1), W)
    z = T.input("z", np.arange(len(cols)), F)
    ref = _triton_pick(T, y, z, cols, n, n)
    wrong = _triton_pick(T, y, z, cols, n, bound)
    N = Normalizer(T)
    a, b = N.of(np.concatenate([wrong, ref]))
    differs = any(min(n, bound) <= col < max(n, bound) for col in cols)
    assert N.equal(a, b) is not differs


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 12), st.lists(st.integers(0, 20), min_size=1, max_size=8, unique=True), st.data())
def test_a_wrong_column_is_not_equal(n: int, cols: list[int], data) -> None:
    """The candidate's chain testing another column (< n, not summed) than the one it reads is not equal."""
    live = [j for j, col in enumerate(cols) if col < n]
    free = [v for v in range(n) if v not in cols]
    assume(live and free)
    j = data.draw(st.sampled_from(live))
    wrong = data.draw(st.sampled_from(free))
    T = TermStore()
    y = T.input("labels", np.arange(1), W)
    z = T.input("z", np.arange(len(cols)), F)
    ref = _triton_pick(T, y, z, cols, n, n)
    cand = _chain_pick(T, y, z, [wrong if k == j else c for k, c in enumerate(cols)], n)
    N = Normalizer(T)
    a, b = N.of(np.concatenate([cand, ref]))
    assert not N.equal(a, b)


def test_the_ite_branch_under_an_unrelated_label_stays() -> None:
    """[w <s 3] ite([y == 5], -inf, 0) for another label w is not 0: the rule reads one term's indicators."""
    T = TermStore()
    yw = T.input("labels", np.arange(2), W)
    masked = _add(T, _zero(T), _ite(T, _cmp(T, yw[0:1], _c(T, 5), "eq"), T.const(F, NEG_INF), _zero(T)))
    out = _ite(T, _cmp(T, yw[1:2], _c(T, 3), "lt"), masked, _zero(T))
    N = Normalizer(T)
    a, zero = N.of(np.concatenate([out, _zero(T)]))
    assert not N.equal(a, zero) and _ite_atoms(N, a) == 1


def test_unsigned_and_signed_bounds_differ_on_negative_labels() -> None:
    """y == -1 is below 3 signed, above it unsigned: [y == -1] [y <s 3] = [y == -1], [y == -1] [y <u 3] = 0."""
    T = TermStore()
    y = T.input("labels", np.arange(1), W)
    z = T.input("z", np.arange(1), F)
    eq = _cmp(T, y, _c(T, -1), "eq")
    signed = _ite(T, eq, _ite(T, _cmp(T, y, _c(T, 3), "lt", True), z, _zero(T)), _zero(T))
    unsigned = _ite(T, eq, _ite(T, _cmp(T, y, _c(T, 3), "lo", False), z, _zero(T)), _zero(T))
    alone = _ite(T, eq, z, _zero(T))
    N = Normalizer(T)
    s, u, a, zero = N.of(np.concatenate([signed, unsigned, alone, _zero(T)]))
    assert N.equal(s, a) and N.equal(u, zero) and not N.equal(s, zero)
