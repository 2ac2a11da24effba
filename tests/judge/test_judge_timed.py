"""The check of the timed launch (harness.judge.timed) on host arrays: outputs are judged against the
float64 reference on the timed inputs with the contract's tolerance and abs-scale, Triton's error is
reported beside the candidate's and never decides the verdict."""

from __future__ import annotations

import numpy as np

from harness import suite
from harness.contract import compare_arrays
from harness.judge.report import Reason
from harness.judge.shapes import with_instance
from harness.judge.timed import judge_timed, summary

# the timed instance at a size the test can afford
ROWSUM = with_instance(suite.get("rowsum"), "bench", {"M": 64, "N": 2064})
RELU = with_instance(suite.get("relu"), "bench", {"N": 4096})


def _cancelling_rows(m: int = 64, n: int = 2064, seed: int = 1) -> np.ndarray:
    """Every other row's second half nearly cancels its first: the row sum is tiny next to sum |x|."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((m, n)) * 100).astype(np.float32)
    x[::2, n // 2:] = -x[::2, :n // 2] + (rng.standard_normal((m // 2, n // 2)) * 1e-3).astype(np.float32)
    return x


def _fp32_sum(x: np.ndarray, reverse: bool) -> np.ndarray:
    acc = np.zeros(x.shape[0], np.float32)
    for j in (reversed(range(x.shape[1])) if reverse else range(x.shape[1])):
        acc += x[:, j]
    return acc


def test_two_correct_fp32_orders_both_pass_where_they_disagree() -> None:
    """The defect of the first H200 run: candidate-vs-Triton at twice the tolerance rejects a correct
    summation order where sums cancel; against the reference (with the abs-scale) both pass."""
    x = _cancelling_rows()
    mine, theirs = _fp32_sum(x, reverse=True), _fp32_sum(x, reverse=False)
    rtol, atol = ROWSUM.tolerance_for("fp32")
    assert not compare_arrays("y", "fp32", mine, theirs.astype(np.float64), 2 * rtol, 2 * atol).ok
    problems, check = judge_timed(ROWSUM, "bench", {"x": x}, {"y": mine}, {"y": theirs})
    assert problems == []
    (out,) = check.outputs
    assert out.name == "y" and out.elements == 64 and out.candidate.ok and out.triton.ok
    assert 0 < out.candidate.worst <= 1 and check.reference_s >= 0
    assert "'y'" in summary(check) and "Triton" in summary(check)


def test_candidate_computing_something_else_is_rejected_with_tritons_error_beside() -> None:
    """Integrity class 14 (skips_large_sizes): right elsewhere, cheaper at the timed size."""
    x = _cancelling_rows()
    theirs = _fp32_sum(x, reverse=False)
    skipped = _fp32_sum(x[:, :-16], reverse=False)  # the last 16 columns never read
    problems, check = judge_timed(ROWSUM, "bench", {"x": x}, {"y": skipped}, {"y": theirs})
    assert [p.reason for p in problems] == [Reason.WRONG_VALUES]
    msg = problems[0].message
    assert "timed instance (bench)" in msg and "float64 reference" in msg
    assert "Triton's kernel on the same inputs: within the tolerance" in msg
    assert check.outputs[0].candidate.bad > 0 and not check.outputs[0].candidate.ok


def test_unwritten_output_is_rejected_and_tritons_error_does_not_excuse_it() -> None:
    x = np.linspace(-3, 3, 4096, dtype=np.float32)
    want = np.maximum(x, 0)
    unwritten = want.copy()
    unwritten[17] = np.nan  # the NaN prefill left in place
    wrong_triton = want + 1
    problems, check = judge_timed(RELU, "bench", {"x": x}, {"y": unwritten}, {"y": wrong_triton})
    assert [p.reason for p in problems] == [Reason.WRONG_VALUES]
    assert "(17,)" in problems[0].message
    assert not check.outputs[0].triton.ok and check.outputs[0].triton.bad == x.size


def test_tritons_error_alone_never_rejects_the_candidate() -> None:
    x = np.linspace(-3, 3, 4096, dtype=np.float32)
    want = np.maximum(x, 0)
    problems, check = judge_timed(RELU, "bench", {"x": x}, {"y": want}, {"y": want * 1.5})
    assert problems == [] and check.outputs[0].candidate.worst == 0.0 and not check.outputs[0].triton.ok


def test_chunked_comparison_matches_one_call(monkeypatch) -> None:
    """The timed outputs are compared in flat chunks (bench sizes reach 1e9 elements): counts, worst
    ratio and the first bad element's index are those of one compare_arrays call on the whole."""
    import harness.judge.timed as T

    monkeypatch.setattr(T, "CHUNK", 7)  # chunks that cut rows
    x = _cancelling_rows(m=8, n=64)
    want = x.astype(np.float64).sum(1)
    got = want.astype(np.float32)
    got[[3, 5]] += 1.0
    contract = with_instance(suite.get("rowsum"), "bench", {"M": 8, "N": 64})
    problems, check = judge_timed(contract, "bench", {"x": x}, {"y": got}, None)
    rtol, atol = contract.tolerance_for("fp32")
    whole = compare_arrays("y", "fp32", got, want, rtol, atol, np.abs(x.astype(np.float64)).sum(1))
    side = check.outputs[0].candidate
    assert (side.ok, side.bad, side.worst) == (whole.ok, whole.bad, whole.worst) == (False, 2, whole.worst)
    assert "first bad at (3,)" in side.detail and whole.first_bad == (3,)
    assert check.outputs[0].triton is None and "(Triton" not in problems[0].message
