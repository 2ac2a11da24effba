"""The witness search judges a difference with the contract's own tolerance: `atol + rtol * scale`,
where the scale is the contract's reference on |inputs| when it declares `scale_by_abs_reference`
(a sum's rounding error is bounded by the sum of |terms|, which cancellation does not shrink), and
|reference| otherwise. A difference the contract allows is no witness of `not_equivalent`."""

from __future__ import annotations

import numpy as np

from harness.equivalence import contract_draws, contract_scale, contract_tolerance
from harness.suite import all_contracts
from proofs.witness import Tolerance

CONTRACTS = {c.name: c for c in all_contracts()}


def test_tolerance_uses_the_scale_when_given() -> None:
    tol = Tolerance(rtol=1e-5, atol=1e-6)
    c, r = np.array([1.0 + 3e-5, 0.0, np.nan]), np.array([1.0, 1e-3, np.nan])
    assert tol.bad(c, r).tolist() == [True, True, False]
    # the same values against a scale of 10 and 1000: the first is allowed, the second still not
    assert tol.bad(c, r, np.array([10.0, 1e-3, 1.0])).tolist() == [False, True, False]
    assert tol.allowed(r, np.array([10.0, 1e-3, 1.0]))[0] == 1e-6 + 1e-5 * 10.0
    # NaN against a number stays a difference whatever the scale
    assert tol.bad(np.array([np.nan]), np.array([1.0]), np.array([1e30])).tolist() == [True]


def test_split_k_summation_order_difference_is_within_gemm_accumulates_tolerance() -> None:
    """The 2026-12-02 `not_equivalent` of gemm_splitk: c[410] on the normal draw, seed 0, was
    -0.161970139 (four K splits added by red.global.add.f32) against Triton's -0.161966562, 3.6e-6
    apart; that is over 1e-6 + 1e-5 |r| = 2.62e-6, but the contract judges C's errors against
    |C| + |A| @ |B| (345.8 there), and any fp32 summation order of the 529 terms is within
    gamma_529 * 345.8 ~ 1.1e-2 of the exact value: a rounding difference, not a different function."""
    c = CONTRACTS["gemm_accumulate"]
    draw = contract_draws(c, "verify", count=1)[0]
    assert draw.label == "contract inputs: distribution normal, seed 0"
    scale = draw.scale["c"]
    assert scale.shape == (144 * 80,) and 300 < scale[410] < 400
    tol = contract_tolerance(c, "c")
    cand, ref = np.array([-0.161970139]), np.array([-0.161966562])
    assert tol.bad(cand, ref).tolist() == [True]  # against |reference| alone it would be a "witness"
    assert tol.bad(cand, ref, scale[[410]]).tolist() == [False]
    # a difference of 1% of the scale (a missing K split's kind) is far outside it
    assert tol.bad(ref + 0.01 * scale[[410]], ref, scale[[410]]).tolist() == [True]


def test_contracts_without_an_abs_scale_judge_against_the_reference() -> None:
    c = CONTRACTS["softmax"]
    assert not c.scale_by_abs_reference
    assert contract_scale(c, "verify", {}) == {}
    assert all(d.scale == {} for d in contract_draws(c, "verify", count=2))
