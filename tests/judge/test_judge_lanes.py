"""The compute-sanitizer and Nsight Compute lanes without a GPU: their output parsed (formats as
compute-sanitizer 2023-2026 and ncu --csv print them), errors mapped to PTX lines through the line
table, unknown metrics dropped and retried, and 'unavailable' said plainly."""

from __future__ import annotations

from types import SimpleNamespace

from harness.judge import profile, sanitizer
from harness.judge.report import Reason, Status

MEMCHECK = """\
========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at relu_kernel+0x50 in candidate.ptx:38
=========     by thread (80,0,0) in block (2,0,0)
=========     Address 0x7f3a4c002740 is out of bounds
=========     and is 1 bytes after the nearest allocation at 0x7f3a4c000000 of size 10048 bytes
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: cuLaunchKernel [0x2dcdbf] in libcuda.so.1
=========
========= Invalid __global__ read of size 4 bytes
=========     at relu_kernel(float *)+0x40
=========     by thread (81,0,0) in block (2,0,0)
=========     Access at 0x7f3a4c002744 is out of bounds
=========
========= Program hit CUDA_ERROR_LAUNCH_FAILED (error 719) due to "unspecified launch failure" on CUDA API call to cuCtxSynchronize.
=========
========= ERROR SUMMARY: 3 errors
"""

RACECHECK = """\
========= COMPUTE-SANITIZER
========= Warning: Maximum number of hazards reached.
========= Error: Race reported between Write access at rowsum_kernel+0x1f0 in candidate.ptx:47
=========     and Read access at rowsum_kernel+0x2a0 in candidate.ptx:55 [128 hazards]
=========
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
"""

CLEAN = "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n"
GVISOR = "========= COMPUTE-SANITIZER\n========= Error: Device not supported. Please refer to the documentation.\n"


def test_memcheck_errors_map_to_ptx_lines() -> None:
    errors, summary = sanitizer.parse(MEMCHECK, {0x40: 31, 0x50: 38})
    assert summary == "ERROR SUMMARY: 3 errors"
    assert [e.text.split(" of ")[0] for e in errors[:2]] == ["Invalid __global__ write", "Invalid __global__ read"]
    assert errors[0].ptx_lines == [38] and errors[0].thread == (80, 0, 0) and errors[0].block == (2, 0, 0)
    assert errors[1].ptx_lines == [31] and errors[1].offsets == [0x40]  # no file:line: the twin's line table
    result = sanitizer.judge("memcheck", 99, MEMCHECK, {0x40: 31, 0x50: 38}, "cand.ptx")
    assert result.status is Status.REJECTED and result.problems[0].reason is Reason.SANITIZER
    assert result.problems[0].where == "cand.ptx:38"


def test_racecheck_and_clean_and_unavailable() -> None:
    race = sanitizer.judge("racecheck", 99, RACECHECK, {}, "cand.ptx")
    assert race.status is Status.REJECTED and race.problems[0].where == "cand.ptx:47, cand.ptx:55"
    assert sanitizer.judge("memcheck", 0, CLEAN, {}, "c.ptx").status is Status.PASSED
    gone = sanitizer.judge("memcheck", 1, GVISOR, {}, "c.ptx")
    assert gone.status is Status.UNAVAILABLE and "Device not supported" in gone.summary
    silent = sanitizer.judge("initcheck", 1, "Traceback: boom\n", {}, "c.ptx")
    assert silent.status is Status.UNAVAILABLE  # no report is never a pass


def test_unmapped_errors_say_so() -> None:
    text = "========= Invalid __shared__ read of size 4 bytes\n=========     at k+0x999\n========= ERROR SUMMARY: 1 error\n"
    result = sanitizer.judge("memcheck", 99, text, {}, "c.ptx")
    assert any("could not be mapped" in p.message for p in result.problems)


RAW = '''==PROF== Connected to process 1234
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","gpu__time_duration.sum","dram__throughput.avg.pct_of_peak_sustained_elapsed","sm__warps_active.avg.pct_of_peak_sustained_active","smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio","smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio","l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum","smsp__inst_executed.sum"
"","","","","","","","","","","","nsecond","%","%","ratio","ratio","","inst"
"0","1234","python3","host","relu_kernel","1","7","(128, 1, 1)","(65536, 1, 1)","0","9.0","131,872","91.42","47.10","12.53","0.20","0","1,572,864"
'''

SOURCE = '''"Address","Source","Warp Stall Sampling (All Samples)","Warp Stall Sampling (Not-issued Samples)"
"0x0","LDC R1, c[0x0][0x28]","2","1"
"0x30","LDG.E.128 R4, desc[UR4][R2.64]","90","80"
"0x40","FSEL R5, R4, RZ, P0","8","2"
'''


def test_raw_metrics_and_source_page_condense() -> None:
    m = profile.parse_raw(RAW, "relu_kernel")
    assert m["duration"] == 131872 and m["dram_pct"] == 91.42 and m["instructions"] == 1572864
    hot = profile.parse_source(SOURCE, {0x30: 33, 0x40: 35}, top=2)
    assert [(h.ptx_line, round(h.share, 2)) for h in hot] == [(33, 0.9), (35, 0.08)]
    text = profile.condense(m, hot, "cand.ptx")
    assert "0.1319 ms" in text and "DRAM 91% of peak" in text and "achieved occupancy 47%" in text
    assert "long_scoreboard 12.53" in text and "cand.ptx:33 (LDG.E.128, 90%)" in text


def test_unknown_metric_is_dropped_and_retried(monkeypatch) -> None:
    calls = []

    def fake_run(cmd, timeout):
        calls.append(cmd)
        metrics = cmd[cmd.index("--metrics") + 1] if "--metrics" in cmd else ""
        if "--metrics" in cmd and "sm__inst_executed_pipe_tensor.sum" in metrics:
            return 1, "==ERROR== Failed to find metric sm__inst_executed_pipe_tensor.sum"
        if "--metrics" in cmd:
            return 0, RAW
        return 0, SOURCE

    req = SimpleNamespace(entry="relu_kernel", candidate="cand.ptx", line_map={0x30: 33})
    monkeypatch.setattr(profile, "_ncu", lambda: "/usr/bin/ncu")
    monkeypatch.setattr(profile, "_run", fake_run)
    result = profile.run(req)
    assert result.status is Status.PASSED and len(calls) == 3
    assert any("sm__inst_executed_pipe_tensor.sum" in n for n in result.detail.notes)
    assert result.detail.hot[0].ptx_line == 33


def test_no_counters_is_unavailable(monkeypatch) -> None:
    monkeypatch.setattr(profile, "_ncu", lambda: "/usr/bin/ncu")
    monkeypatch.setattr(profile, "_run", lambda cmd, t: (1, "==ERROR== Failed to initialize the profiler: "
                                                            "LibraryNotLoaded"))

    req = SimpleNamespace(entry="k", candidate="c.ptx", line_map={})
    result = profile.run(req)
    assert result.status is Status.UNAVAILABLE and "LibraryNotLoaded" in result.summary
    monkeypatch.setattr(profile, "_ncu", lambda: None)
    assert profile.run(req).status is Status.UNAVAILABLE
