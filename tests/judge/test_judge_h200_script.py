"""bench/h200_eval.py end to end on the CPU with a fake GPU session: the phases, the time budget,
the JSON and Markdown it writes. (The real GPU run is the lead's; this keeps the script honest.)"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

from judge_fakes import FakeClock, FakeSide
from test_judge_pipeline import FakeGpu

from harness.judge import roofline
from harness.judge.report import StageResult
from harness.judge.timing import Stats, TimingPlan, WallCheck, compare
from harness.judge.worker import BaselineRow

ROOT = Path(__file__).parents[2]
spec = importlib.util.spec_from_file_location("h200_eval", ROOT / "bench" / "h200_eval.py")
h200 = importlib.util.module_from_spec(spec)
spec.loader.exec_module(h200)


class FakeSession(FakeGpu):
    """GpuSession's interface; a kernel that does nothing takes 2 us."""

    def __init__(self, timeout: float = 0, space_limit: int = 6) -> None:
        super().__init__()
        self.info = {"device": "NVIDIA H200 (fake)", "capability": 90, "torch": "-", "triton": "-",
                     "cuda_python": "-", "python": "-"}
        self.closed = False

    def start(self) -> "FakeSession":
        return self

    def close(self) -> None:
        self.closed = True

    def baseline(self, name, instance, plan, seed=0) -> BaselineRow:
        from harness import suite

        c = suite.get(name)
        floor = roofline.floor(c, instance, roofline.H200).ms
        return BaselineRow(name, instance, c.resolve(instance).dims, "num_warps in [4] x num_stages in [1]",
                           "warps=4 stages=1", Stats.of([0.13, 0.131, 0.132, 0.13]), WallCheck(10, 0.13, 0.14),
                           floor)

    def time(self, request):
        from harness import suite

        clock = FakeClock()
        ms = 0.002 if request.candidate == "early_exit.ptx" else 0.12
        floor = roofline.floor(suite.get(request.contract), "bench", roofline.H200)
        problems, detail = compare(FakeSide("candidate", ms, clock), FakeSide("baseline", 0.13, clock), clock,
                                   TimingPlan(warmup=1, min_reps=10, max_reps=10), "bench", floor)
        return StageResult.from_problems("timing", problems, str(detail.speedup), detail)


def test_h200_script_with_a_fake_session(tmp_path: Path) -> None:
    cands = tmp_path / "candidates" / "relu"
    cands.mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "integrity" / "honest_relu.ptx", cands / "fast_relu.ptx")
    out = tmp_path / "out"
    rc = h200.main(["--out", str(out), "--contracts", "relu", "--candidates", str(tmp_path / "candidates"),
                    "--workers", "0", "--budget", "600", "--cases", "honest_relu", "early_exit", "globaltimer"],
                   session_factory=FakeSession)
    assert rc == 0
    data = json.loads((out / "h200_eval.json").read_text())
    assert [b["contract"] for b in data["baselines"]] == ["relu"]
    cand = data["candidates"][0]
    assert cand["contract"] == "relu" and cand["report"]["verdict"] == "accepted"
    assert {c["case"]: c["ok"] for c in data["integrity"]} == {"early_exit": True, "globaltimer": True,
                                                                "honest_relu": True}
    early = next(c for c in data["integrity"] if c["case"] == "early_exit")
    assert "impossible_speed" in early["reasons"]
    md = (out / "h200_eval.md").read_text()
    assert "| relu | N=67108864 | warps=4 stages=1 |" in md and "3 of 3 as expected" in md


def test_no_time_left_is_recorded_not_dropped(tmp_path: Path) -> None:
    out = tmp_path / "out"
    h200.main(["--out", str(out), "--contracts", "relu", "--candidates", str(tmp_path), "--workers", "0",
               "--budget", "0.001", "--cases", "honest_relu"], session_factory=FakeSession)
    data = json.loads((out / "h200_eval.json").read_text())
    assert "baseline relu" in data["skipped"] and "integrity honest_relu" in data["skipped"]
