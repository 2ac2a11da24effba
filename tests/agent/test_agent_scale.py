"""Scale-out through Ray in local mode: the same verdicts as in-process evaluation, CPU tasks for the
checker, a generic map; the merge of a GPU run's report with the CPU task's verify stage."""

from __future__ import annotations

import dataclasses

import pytest
from agent_fakes import integrity_ptx, rewritten

from harness.judge.pipeline import EvalOptions
from harness.judge.report import Report, StageResult, Status
from taic_agent.records import sha256
from taic_agent.scale import EvalRequest, LocalExecutor, merge_verify


@pytest.mark.slow
def test_ray_local_mode_matches_in_process(tmp_path) -> None:
    pytest.importorskip("ray")
    from taic_agent.scale import RayExecutor

    opts = EvalOptions(seed=2, unseen=1)
    reqs = [EvalRequest("relu", "sm_90a", "nc.ptx", rewritten("relu", "nc-loads"), opts),
            EvalRequest("rowsum", "sm_90a", "race.ptx", integrity_ptx("missing_barrier"), opts),
            EvalRequest("relu", "sm_90a", "id.ptx", integrity_ptx("identity"), opts)]
    local = LocalExecutor().evaluate(reqs)
    ex = RayExecutor(num_cpus=2)
    try:
        assert ex.cpus == 2 and ex.gpus == 0 and "local Ray instance" in ex.description
        remote = ex.evaluate(reqs)
        assert ex.map(sha256, ["a", "b"]) == [sha256("a"), sha256("b")]  # any importable function
    finally:
        ex.close()
    assert [r.verdict.value for r in remote] == [r.verdict.value for r in local] == ["accepted", "rejected",
                                                                                     "rejected"]
    assert [sorted(x.value for x in r.reasons) for r in remote] == [[], ["verify_finding"], ["wrong_values"]]
    assert [r.ptx_sha256 for r in remote] == [r.ptx_sha256 for r in local]


def test_merge_takes_the_cpu_verify_stage() -> None:
    gpu = Report("relu", "c.ptx", "sm_90a", "ab", "gpu", [
        StageResult("static", Status.PASSED), StageResult("numeric", Status.PASSED),
        StageResult("verify", Status.SKIPPED, "skipped on request"), StageResult("timing", Status.PASSED)])
    cpu = Report("relu", "c.ptx", "sm_90a", "ab", "cpu", [
        StageResult("static", Status.PASSED), StageResult("numeric", Status.SKIPPED),
        StageResult("verify", Status.REJECTED, "race")])
    merged = merge_verify(gpu, cpu)
    assert [s.status for s in merged.stages] == [Status.PASSED, Status.PASSED, Status.REJECTED, Status.PASSED]
    assert merged.verdict.value == "rejected" and merged.mode == "gpu"
    ok = merge_verify(gpu, dataclasses.replace(cpu, stages=[StageResult("verify", Status.PASSED, "race_free")]))
    assert ok.verdict.value == "accepted"
