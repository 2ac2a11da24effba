"""proofs.normal knows that a sum of exponentials is positive: the online softmax merge of
ce_zloss_smem_row, `s = (s == 0 ? 0 : s * exp2(m - mn)) + ...`, guards an empty set's sum, and where s is
a sum of exp2 terms the guard is never taken in real arithmetic. A sum with any other term (an input,
a negative coefficient) keeps its indicator."""

from __future__ import annotations

import numpy as np

from proofs.normal import Normalizer
from semantics.terms import PRED, Mods, Op, TermStore, float_sort, mods_id

F = float_sort("f32")


def _guarded(T: TermStore, s: np.ndarray, z: np.ndarray) -> np.ndarray:
    """s == 0 ? 0 : s * z."""
    zero = T.const(F, 0)
    p = T.make(Op.CMP, PRED, mods_id(Mods(cmp="eq")), [s, zero])
    return T.make(Op.ITE, F, 0, [p, zero, T.make(Op.FMUL, F, 0, [s, z])])


def test_sum_of_exponentials_is_never_zero() -> None:
    T = TermStore()
    x, y, z = (T.input(n, np.arange(1), F) for n in ("x", "y", "z"))
    ex, ey = (T.make(Op.FEX2, F, 0, [v]) for v in (x, y))
    s = T.make(Op.FADD, F, 0, [ex, ey])
    N = Normalizer(T)
    guarded, plain = N.of(np.concatenate([_guarded(T, s, z), T.make(Op.FMUL, F, 0, [s, z])]))
    assert N.equal(guarded, plain)


def test_other_sums_keep_the_guard() -> None:
    T = TermStore()
    x, y, z = (T.input(n, np.arange(1), F) for n in ("x", "y", "z"))
    s = T.make(Op.FADD, F, 0, [x, T.make(Op.FEX2, F, 0, [y])])  # x + exp2(y) may be 0
    N = Normalizer(T)
    guarded, plain = N.of(np.concatenate([_guarded(T, s, z), T.make(Op.FMUL, F, 0, [s, z])]))
    assert not N.equal(guarded, plain)
