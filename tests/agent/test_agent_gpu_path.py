"""The loop with the harness's own timing (HarnessTiming: the report's speedup, no fake timer):
the GPU runner is a fake at the device level (emulator numerics, a simulated clock whose kernel
time depends on the candidate's bytes, a profile with counters), so the timing stage's statistics,
the report's JSON and the profile level of the ladder are the real code paths."""

from __future__ import annotations

import sys
from pathlib import Path

from agent_fakes import rewritten, triton_ptx

from harness.judge.device import EmulatorDevice
from harness.judge.numeric import run_numeric
from harness.judge.profile import ProfileDetail, condense
from harness.judge.report import StageResult, Status
from harness.judge.timing import TimingPlan, compare
from taic_agent.records import StopReason, sha256
from taic_agent.scale import LocalExecutor
from taic_agent.session import Settings, optimize
from taic_agent.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "judge"))
from judge_fakes import FakeClock, FakeSide  # noqa: E402

BASELINE_MS = 0.60


class TimedGpu:
    """A GpuRunner whose candidate takes ``ms[sha256]`` milliseconds (Triton's baseline 0.60 ms)."""

    device_name, capability = "NVIDIA H200 (simulated)", 90

    def __init__(self, ms: dict[str, float], metrics: dict[str, float]) -> None:
        self.ms, self.metrics, self.timed = ms, metrics, []

    def numeric(self, request, trials):
        from harness import suite

        return run_numeric(EmulatorDevice(), request.code(), suite.get(request.contract), request.arch, trials,
                           request.param_count)

    def sanitize(self, request, tool, trial):
        return StageResult(tool, Status.PASSED, "ERROR SUMMARY: 0 errors")

    def time(self, request):
        self.timed.append(request.ptx_sha256)
        clock = FakeClock(seed=len(self.timed))
        ms = self.ms.get(request.ptx_sha256, BASELINE_MS)
        problems, detail = compare(FakeSide("candidate", ms, clock, jitter=0.002),
                                   FakeSide("baseline", BASELINE_MS, clock, jitter=0.002), clock,
                                   TimingPlan(warmup=1, min_reps=20, max_reps=20), "bench", None)
        return StageResult.from_problems("timing", problems, str(detail.speedup), detail)

    def profile(self, request):
        d = ProfileDetail(metrics=dict(self.metrics))
        d.text = condense(d.metrics, [], request.candidate)
        return StageResult("profile", Status.PASSED, d.text.splitlines()[0], detail=d)


def test_harness_timing_and_profile_drive_the_loop(tmp_path) -> None:
    nc = rewritten("relu", "nc-loads")
    both = rewritten("relu", "nc-loads", "streaming-stores")
    cs = rewritten("relu", "streaming-stores")
    ms = {sha256(triton_ptx("relu")): 0.60, sha256(both): 0.50, sha256(nc): 0.55, sha256(cs): 0.61}
    # a latency-bound profile: nc-loads and the others that address memory latency are offered
    gpu = TimedGpu(ms, {"dram_pct": 40.0, "sm_pct": 15.0, "stall_long_scoreboard": 6.0, "stall_wait": 1.0,
                        "achieved_occupancy": 80.0, "theoretical_occupancy": 100.0})
    store = Store(tmp_path / "agent.sqlite")
    s = Settings(contract="relu", eval_seed=5, unseen=1, rounds=2)
    res = optimize(s, store, executor=LocalExecutor(gpu))
    run = res.runs[0]
    c = {x["name"]: x for x in store.candidates(session=res.session)}
    assert c["r0.start"]["timing_source"] == "harness" and abs(c["r0.start"]["speedup"] - 1.0) < 0.02
    plan1 = store.plans(run.run)[0]["plan"]
    # with a profile, a pattern must address its bottleneck: streaming stores (bandwidth) is not offered
    assert plan1["diagnosis"]["level_name"] == "pattern triage"
    assert "memory_latency" in plan1["bottleneck"]
    assert [ch["key"] for ch in plan1["changes"]] == ["rule:nc-loads"]
    assert c["r1.h0"]["decision"] == "survived" and c["r1.h0"]["speedup"] > 1.05
    # round 2: no rule left that addresses latency -> the profile names the bottleneck (level 2), and the
    # rule generator has nothing to implement at that level
    plan2 = store.plans(run.run)[1]["plan"]
    assert plan2["diagnosis"]["level_name"] == "profiling diagnosis" and plan2["bottleneck"] == "memory_latency"
    assert run.stop is StopReason.NO_IDEAS and run.best_name == "r1.h0"
    assert store.ideas("relu", "sm_90a")["rule:nc-loads"]["status"] == "validated"
    assert len(gpu.timed) == 2  # the start and r1.h0; nothing rejected was timed
