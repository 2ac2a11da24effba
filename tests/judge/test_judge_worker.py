"""The GPU session's process machinery with a fake worker in a real child process: results, harness
errors (the worker lives on), a fault that takes the context down and a hang (the worker is
replaced), and how each reaches the report."""

from __future__ import annotations

import pytest

from harness.judge.worker import GpuSession, WorkerError

FAKE = "judge_fakes:FakeWorker"


def test_session_survives_errors_and_replaces_lost_workers() -> None:
    with GpuSession(timeout=20, factory=FAKE) as s:
        assert s.capability == 90 and s.call("echo", 5) == (5, 1)
        with pytest.raises(WorkerError) as e:
            s.call("fail")
        assert e.value.kind == "error" and not e.value.candidate_fault
        assert s.call("echo", 6) == (6, 2)  # the same worker
        with pytest.raises(WorkerError) as e:
            s.call("fault")
        assert e.value.kind == "lost" and "memory_fault" in str(e.value)
        assert s.call("echo", 7) == (7, 1)  # a fresh worker
        with pytest.raises(WorkerError) as e:
            s.call("hang", timeout=2)
        assert e.value.kind == "hang"
        assert s.call("echo", 8) == (8, 1)


def test_a_harness_failure_is_undecided_not_the_candidates_fault() -> None:
    with GpuSession(timeout=20, factory=FAKE) as s:
        problems, detail = s.numeric(None, [])
    assert problems == [] and "compile failed" in detail.undecided and not detail.device_lost
