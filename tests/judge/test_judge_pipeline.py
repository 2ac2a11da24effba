"""The pipeline: the stage table, the GPU path through a fake runner, one hash from the PTX text to
the cubin the GPU loads (integrity class 15), keep-going and skips, adding a gate, JSON."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import pytest
from judge_fakes import FakeClock, FakeSide

from harness.judge import pipeline
from harness.judge.device import EmulatorDevice
from harness.judge.numeric import run_numeric
from harness.judge.pipeline import EvalOptions, EvaluationError, GpuRequest, Stage, evaluate
from harness.judge.report import Problem, Reason, StageResult, Status, Verdict
from harness.judge.timing import TimingPlan, compare

HERE = Path(__file__).parents[1] / "integrity"
HONEST = (HERE / "honest_relu.ptx").read_text()
OPTIONS = EvalOptions(seed=7, unseen=1)


class FakeGpu:
    """A GpuRunner: numerics on the emulator (the request's code path), a simulated timing."""

    device_name, capability = "NVIDIA H200", 90

    def __init__(self) -> None:
        self.requests: list[tuple[str, GpuRequest]] = []

    def numeric(self, request, trials):
        self.requests.append(("numeric", request))
        from harness import suite

        return run_numeric(EmulatorDevice(), request.code(), suite.get(request.contract), request.arch, trials,
                           request.param_count)

    def sanitize(self, request, tool, trial):
        self.requests.append((tool, request))
        return StageResult(tool, Status.PASSED, "ERROR SUMMARY: 0 errors")

    def time(self, request):
        self.requests.append(("time", request))
        clock = FakeClock()
        problems, detail = compare(FakeSide("candidate", 0.5, clock), FakeSide("baseline", 0.6, clock), clock,
                                   TimingPlan(warmup=1, min_reps=10, max_reps=10), "bench", None)
        return StageResult.from_problems("timing", problems, str(detail.speedup), detail)

    def profile(self, request):
        self.requests.append(("profile", request))
        return StageResult("profile", Status.UNAVAILABLE, "no counters (fake)")


def test_cpu_evaluation_skips_the_gpu_lanes_and_hashes_the_text() -> None:
    r = evaluate("relu", HONEST, name="h.ptx", options=OPTIONS)
    assert r.verdict is Verdict.ACCEPTED and r.mode == "cpu" and r.target == "sm_90a"
    assert [s.stage for s in r.stages] == [s.name for s in pipeline.STAGES]
    assert {s.stage for s in r.stages if s.status is Status.SKIPPED} == {"sanitize", "timing", "profile"}
    assert r.ptx_sha256 == hashlib.sha256(HONEST.encode()).hexdigest() == r.stage("verify").detail.ptx_sha256
    assert r.seeds == [7] and r.exit_code == 0
    json.dumps(r.to_json())  # plain JSON


def test_gpu_path_sends_the_assembled_cubin_and_a_line_mapped_twin() -> None:
    gpu = FakeGpu()
    r = evaluate("relu", HONEST, name="h.ptx", gpu=gpu, options=dataclasses.replace(OPTIONS, sanitizers=("memcheck",)))
    assert r.mode == "gpu" and r.verdict is Verdict.ACCEPTED, [s.summary for s in r.stages]
    assert r.speedup is not None and 1.1 < r.speedup.value < 1.3
    assert r.stage("profile").status is Status.UNAVAILABLE  # said, not hidden; does not block
    ops = {op: req for op, req in gpu.requests}
    assert set(ops) == {"numeric", "memcheck", "time", "profile"}
    cubin_sha = r.stage("assemble").detail.cubin_sha256
    assert all(req.cubin_sha256 == cubin_sha == hashlib.sha256(req.cubin).hexdigest() for req in ops.values())
    assert ops["memcheck"].twin_cubin and ops["memcheck"].line_map and not ops["numeric"].twin_cubin


def test_a_cubin_that_is_not_the_verified_one_is_refused() -> None:
    """Integrity class 15: the GPU side checks the hash of what it loads."""
    gpu = FakeGpu()
    evaluate("relu", HONEST, gpu=gpu, options=dataclasses.replace(OPTIONS, sanitizers=()))
    req = gpu.requests[0][1]
    tampered = dataclasses.replace(req, cubin=req.cubin[:-1] + bytes([req.cubin[-1] ^ 1]))
    with pytest.raises(ValueError, match="not the one assembled"):
        tampered.code()


def test_stop_at_first_rejection_or_keep_going() -> None:
    text = (HERE / "oob_write.ptx").read_text()
    r = evaluate("relu", text, options=OPTIONS)
    assert r.stage("verify").status is Status.SKIPPED and "after numeric rejected" in r.stage("verify").summary
    r = evaluate("relu", text, options=dataclasses.replace(OPTIONS, keep_going=True))
    assert r.stage("verify").status is Status.REJECTED
    r = evaluate("relu", text, options=dataclasses.replace(OPTIONS, skip=frozenset({"numeric"})))
    assert r.stage("numeric").summary == "skipped on request" and r.reasons == {Reason.VERIFY_FINDING}


def test_a_new_gate_is_one_row(monkeypatch: pytest.MonkeyPatch) -> None:
    def equivalence(ctx):
        return StageResult.from_problems("equivalence", [Problem(Reason.WRONG_VALUES, "not equivalent")], "")

    monkeypatch.setattr(pipeline, "STAGES", pipeline.STAGES[:4] + (Stage("equivalence", "equivalence", equivalence),)
                        + pipeline.STAGES[4:])
    r = evaluate("relu", HONEST, options=OPTIONS)
    assert r.stage("equivalence").status is Status.REJECTED and r.verdict is Verdict.REJECTED


def test_bad_inputs() -> None:
    with pytest.raises(EvaluationError, match="unknown kernel"):
        evaluate("no_such_contract", HONEST)
    with pytest.raises(EvaluationError, match="sm_100"):
        evaluate("gemm_tcgen05_ws", HONEST, arch="sm_90a")
    r = evaluate("relu", "this is not PTX", options=OPTIONS)
    assert r.reasons == {Reason.BAD_PTX} and r.stage("static").problems[0].where.startswith("candidate.ptx:1:")


def test_same_seed_same_trials() -> None:
    a = evaluate("relu", HONEST, options=OPTIONS).stage("numeric").detail.trials
    b = evaluate("relu", HONEST, options=OPTIONS).stage("numeric").detail.trials
    assert [t.trial for t in a] == [t.trial for t in b]
