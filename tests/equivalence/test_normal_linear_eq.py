"""proofs.normal reads an integer equality whose one side is +-x plus constants and whose other side is a
constant as x == value (modulo 2^w): ce_zloss_smem_row's `(8i | 3) - y == 3` and Triton's `col == y`
test one column against a label and must give one indicator. Ordered comparisons are left alone
(adding a constant to both sides of < is not sound where the sum wraps)."""

from __future__ import annotations

import numpy as np

from proofs.normal import Normalizer
from semantics.terms import PRED, Mods, Op, TermStore, bits_sort, float_sort, mods_id

W = bits_sort(32)


def _cmp(T: TermStore, cmp: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return T.make(Op.CMP, PRED, mods_id(Mods(cmp=cmp, signed=True)), [a, b])


def _select(T: TermStore, p: np.ndarray) -> np.ndarray:
    """p ? 1.0 : 0.0 as an f32 (the selp of both kernels)."""
    f = float_sort("f32")
    return T.make(Op.ITE, f, 0, [p, T.const(f, 0x3F800000), T.const(f, 0)])


def test_shifted_equalities_meet() -> None:
    T = TermStore()
    y = T.input("labels", np.arange(1), W)
    c = lambda v: T.const(W, np.uint64(v % (1 << 32)))  # noqa: E731
    col = 40
    direct = _select(T, _cmp(T, "eq", c(col), y))  # Triton: cols == y
    shifted = _select(T, _cmp(T, "eq", T.make(Op.ISUB, W, 0, [c(col | 3), y]), c(3)))  # (8i | 3) - y == 3
    twice = _select(T, _cmp(T, "eq", T.make(Op.IADD, W, 0, [T.make(Op.ISUB, W, 0, [c(col + 5), y]), c(-3)]),
                            c(2)))  # ((col + 5) - y) - 3 == 2
    other = _select(T, _cmp(T, "eq", T.make(Op.ISUB, W, 0, [c(col | 3), y]), c(2)))  # column 41
    N = Normalizer(T)
    a, b, d, e = N.of(np.concatenate([direct, shifted, twice, other]))
    assert N.equal(a, b) and N.equal(a, d)
    assert not N.equal(a, e)


def test_ordered_comparisons_are_not_shifted() -> None:
    T = TermStore()
    y = T.input("labels", np.arange(1), W)
    c = lambda v: T.const(W, np.uint64(v % (1 << 32)))  # noqa: E731
    # y + 1 > 0 is not y > -1 when y + 1 wraps (y = 2^31 - 1): two different indicators
    plus = _select(T, _cmp(T, "gt", T.make(Op.IADD, W, 0, [y, c(1)]), c(0)))
    plain = _select(T, _cmp(T, "gt", y, c(-1)))
    N = Normalizer(T)
    a, b = N.of(np.concatenate([plus, plain]))
    assert not N.equal(a, b)
