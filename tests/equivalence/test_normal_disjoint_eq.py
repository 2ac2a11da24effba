"""proofs.normal: [x == a] [x == b] = 0 for distinct constants a, b compared with one bit-vector term x.

ce_zloss_smem_row picks z[y] by a chain of selects (`if (col0 + j == y) zy = z[j]`), whose normal form
multiplies the column indicators ([y == 3104] [y == 3105]); Triton's is the masked sum of z[j] [y == j].
The rule holds only for the canonical equality indicators of one term (same id, so the same width) with
different values; the same value keeps [c]^2 = [c], another term or an ordered comparison keeps the product.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from proofs.normal import AtomKind, Normalizer
from semantics.terms import PRED, Mods, Op, TermStore, bits_sort, float_sort, mods_id

W = bits_sort(32)
F = float_sort("f32")


def _c(T: TermStore, v: int) -> np.ndarray:
    return T.const(W, np.uint64(v % (1 << 32)))


def _eq(T: TermStore, a: np.ndarray, b: np.ndarray, cmp: str = "eq") -> np.ndarray:
    return T.make(Op.CMP, PRED, mods_id(Mods(cmp=cmp, signed=True)), [a, b])


def _ite(T: TermStore, p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return T.make(Op.ITE, F, 0, [p, a, b])


def _add(T: TermStore, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return T.make(Op.FADD, F, 0, [a, b])


def _chain(T: TermStore, y: np.ndarray, z: np.ndarray, cols: list[int]) -> np.ndarray:
    """zy = 0; for j: if (cols[j] == y) zy = z[j] (the last match wins), the candidate's select chain."""
    zy = T.const(F, 0)
    for j, col in enumerate(cols):
        zy = _ite(T, _eq(T, _c(T, col), y), z[j:j + 1], zy)
    return zy


def _masked_sum(T: TermStore, y: np.ndarray, z: np.ndarray, cols: list[int]) -> np.ndarray:
    """sum_j (cols[j] == y ? z[j] : 0), Triton's tl.sum(tl.where(cols == y, z, 0))."""
    acc = T.const(F, 0)
    for j, col in enumerate(cols):
        acc = _add(T, acc, _ite(T, _eq(T, y, _c(T, col)), z[j:j + 1], T.const(F, 0)))
    return acc


def _forms(T: TermStore, *roots: np.ndarray) -> tuple[Normalizer, list]:
    N = Normalizer(T)
    return N, N.of(np.concatenate(roots))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 2**32 - 1), min_size=2, max_size=8, unique=True), st.randoms())
def test_select_chain_is_the_masked_sum(cols: list[int], rnd) -> None:
    T = TermStore()
    y = T.input("labels", np.arange(1), W)
    z = T.input("z", np.arange(len(cols)), F)
    order = list(range(len(cols)))
    rnd.shuffle(order)
    chain = _chain(T, y, z[order], [cols[j] for j in order])
    N, (a, b) = _forms(T, chain, _masked_sum(T, y, z, cols))
    assert N.equal(a, b)
    inds = [sum(N.atoms[m[i]][0] is AtomKind.IND for i in range(0, len(m), 2)) for m in a.num]
    assert max(inds) == 1  # no product of two column indicators is left


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 2**16), min_size=2, max_size=6, unique=True), st.data())
def test_one_wrong_index_is_not_equal(cols: list[int], data) -> None:
    T = TermStore()
    y = T.input("labels", np.arange(1), W)
    z = T.input("z", np.arange(len(cols)), F)
    j = data.draw(st.integers(0, len(cols) - 1))
    wrong = data.draw(st.integers(0, 2**16 + 1).filter(lambda v: v not in cols))
    bad = list(cols)
    bad[j] = wrong
    N, (a, b) = _forms(T, _chain(T, y, z, bad), _masked_sum(T, y, z, cols))
    assert not N.equal(a, b)


def test_the_same_value_twice_is_not_zero() -> None:
    """if (y == 5) zy = z1; if (y == 5) zy = z0 picks z0 where y == 5: [y==5]^2 = [y==5], not 0."""
    T = TermStore()
    y = T.input("labels", np.arange(1), W)
    z = T.input("z", np.arange(2), F)
    chain = _chain(T, y, z[::-1], [5, 5])  # z[1] first, then z[0] (wins)
    picked = _ite(T, _eq(T, y, _c(T, 5)), z[0:1], T.const(F, 0))
    summed = _masked_sum(T, y, z, [5, 5])  # z0 + z1 where y == 5
    N, (a, b, s) = _forms(T, chain, picked, summed)
    assert N.equal(a, b) and not N.equal(a, s)


def test_another_term_keeps_the_product() -> None:
    """[y == 1] [w == 2] for two labels y, w is not 0 (y = 1 and w = 2 at once)."""
    T = TermStore()
    yw = T.input("labels", np.arange(2), W)
    z = T.input("z", np.arange(1), F)
    both = _ite(T, _eq(T, yw[0:1], _c(T, 1)), _ite(T, _eq(T, yw[1:2], _c(T, 2)), z, T.const(F, 0)), T.const(F, 0))
    N, (a, zero) = _forms(T, both, T.const(F, 0))
    assert not N.equal(a, zero)
    (m,) = a.num
    assert len(m) == 6  # z * [y == 1] * [w == 2]


def test_ordered_comparisons_keep_the_product() -> None:
    """[y > 3] [y < 7] (ordered comparisons) is not 0: the rule is for equalities only."""
    T = TermStore()
    y = T.input("labels", np.arange(1), W)
    z = T.input("z", np.arange(1), F)
    both = _ite(T, _eq(T, y, _c(T, 3), "gt"), _ite(T, _eq(T, y, _c(T, 7), "lt"), z, T.const(F, 0)), T.const(F, 0))
    N, (a, zero) = _forms(T, both, T.const(F, 0))
    assert not N.equal(a, zero)


def test_different_widths_are_different_terms() -> None:
    """y (32 bits) and its low 16 bits are two terms: [y == 0x10005] [lo16(y) == 5] can both be 1."""
    T = TermStore()
    y = T.input("labels", np.arange(1), W)
    h = bits_sort(16)
    lo = T.make(Op.EXTRACT, h, mods_id(Mods(lo=0, width=16)), [y])
    z = T.input("z", np.arange(1), F)
    p_lo = T.make(Op.CMP, PRED, mods_id(Mods(cmp="eq", signed=False)), [lo, T.const(h, np.uint64(5))])
    both = _ite(T, _eq(T, y, _c(T, 0x10005)), _ite(T, p_lo, z, T.const(F, 0)), T.const(F, 0))
    N, (a, zero) = _forms(T, both, T.const(F, 0))
    assert not N.equal(a, zero)
