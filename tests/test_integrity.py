"""Every malicious candidate in tests/integrity/ is rejected for the reasons its header states, and
the honest twins are accepted (harness.judge.integrity describes the header). CPU only: numerics
on the emulator; the GPU lanes run in bench/h200_eval.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import suite
from harness.judge import integrity
from harness.judge.pipeline import EvalOptions, evaluate
from harness.judge.report import REASONS

HERE = Path(__file__).parent / "integrity"
CASES = integrity.cases(HERE)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_integrity_case(case: integrity.Case) -> None:
    report = evaluate(case.contract, case.path.read_text(), name=case.path.name,
                      options=EvalOptions(keep_going=True, seed=1))
    problems = integrity.failures(case, report)
    assert not problems, f"{case.name}: " + "; ".join(problems) + "\n" + "\n".join(
        f"  {s.stage}: {s.status.value} {s.summary[:200]}" for s in report.stages)


def test_every_exploit_class_has_a_case() -> None:
    """Classes 1-9 and 13-14 of harness-integrity.md have a PTX case here; 10-12 (timing) are tested
    with fakes in tests/judge/test_judge_timing.py and 15 in tests/judge/test_judge_pipeline.py."""
    covered = {int(w) for c in CASES for w in c.integrity.split()[:1] if w.isdigit()}
    assert {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 14} <= covered
    assert sum(c.accepted for c in CASES) >= 2
    for reason in {r for c in CASES for r in c.expect | c.expect_any}:
        assert any(reason == r.value for r in REASONS)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["relu", "gemm_fp16", "cross_entropy_zloss"])
def test_triton_own_ptx_is_accepted(name: str) -> None:
    """The harness never rejects the honest reference: Triton's PTX for the contract passes every CPU
    stage (all distributions, unseen sizes, two sentinel runs, the checker). The whole suite was
    swept once by hand (see the closing note)."""
    from harness.compile import compile_contract

    ref = compile_contract(suite.get(name), "sm_90a", "verify")
    report = evaluate(name, ref.ptx, name=f"{name}.ptx", options=EvalOptions(seed=3))
    assert report.verdict.value == "accepted", [f"{s.stage}: {s.summary}" for s in report.stages]
