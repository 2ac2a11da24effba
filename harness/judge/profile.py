"""The profile lane: Nsight Compute metrics a model can act on, condensed to a few lines, with the
hottest instructions linked to the candidate's PTX lines.

``ncu`` profiles one launch of the line-annotated twin (harness.judge.ptxas) at the timed instance
(``python -m harness.judge.gpu_one REQUEST profile``), clocks left alone (``--clock-control
none``). Two passes: raw metrics (:data:`METRICS`: throughput against peak, occupancy, warp stall
reasons, shared-memory bank conflicts, instruction mix) and the per-instruction source page
(SASS offsets with their warp-stall samples, mapped to PTX lines through the twin's line table).
A metric this ncu does not know is dropped and the pass retried; when counters cannot be read at
all (gVisor, no ncu), the lane is ``unavailable`` and the report carries the timing alone.
"""

from __future__ import annotations

import csv
import io
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .report import StageResult, Status

STALLS = ("long_scoreboard", "short_scoreboard", "barrier", "membar", "mio_throttle", "lg_throttle",
          "math_pipe_throttle", "tex_throttle", "wait", "not_selected", "no_instruction", "branch_resolving",
          "dispatch_stall", "drain", "imc_miss", "sleeping", "misc")
METRICS: dict[str, str] = {
    "gpu__time_duration.sum": "duration",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "dram_pct",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": "sm_pct",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": "memory_pct",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved_occupancy",
    "sm__maximum_warps_per_active_cycle_pct": "theoretical_occupancy",
    "launch__registers_per_thread": "registers",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": "bank_conflicts_ld",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": "bank_conflicts_st",
    "smsp__inst_executed.sum": "instructions",
    "smsp__sass_inst_executed_op_global_ld.sum": "global_loads",
    "smsp__sass_inst_executed_op_global_st.sum": "global_stores",
    "smsp__sass_inst_executed_op_shared_ld.sum": "shared_loads",
    "smsp__sass_inst_executed_op_shared_st.sum": "shared_stores",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": "ffma_thread_ops",
    "sm__inst_executed_pipe_tensor.sum": "tensor_instructions",
    **{f"smsp__average_warps_issue_stalled_{s}_per_issue_active.ratio": f"stall_{s}" for s in STALLS},
}
_BAD_METRIC = re.compile(r"(?:Failed to find metric|metric[^\n]*not found|Invalid metric)[^\n]*?([a-z0-9_]+__[\w.]+)", re.I)


@dataclass
class HotLine:
    ptx_line: int | None
    offset: int
    sass: str
    share: float  # of all warp-stall samples


@dataclass
class ProfileDetail:
    metrics: dict[str, float] = field(default_factory=dict)
    hot: list[HotLine] = field(default_factory=list)
    text: str = ""
    notes: list[str] = field(default_factory=list)


def _number(text: str) -> float | None:
    t = text.strip().replace(",", "")
    try:
        return float(t)
    except ValueError:
        return None


def parse_raw(text: str, entry: str) -> dict[str, float]:
    """``ncu --csv --page raw``: a header row (ID, ..., Kernel Name, ..., metrics), a units row, then
    one row per profiled kernel; the values of the last row whose Kernel Name starts with ``entry``."""
    rows = list(csv.reader(io.StringIO(text[text.find('"ID"'):] if '"ID"' in text else text)))
    if not rows or "Kernel Name" not in rows[0]:
        return {}
    head = rows[0]
    kcol = head.index("Kernel Name")
    values = [r for r in rows[1:] if len(r) == len(head) and r[kcol].startswith(entry)]
    if not values:
        return {}
    out = {}
    for name, v in zip(head, values[-1]):
        if name in METRICS:
            num = _number(v)
            if num is not None:
                out[METRICS[name]] = num
    return out


def parse_source(text: str, line_map: dict[int, int], top: int = 5) -> list[HotLine]:
    """``ncu --page source --csv --print-source sass``: per SASS instruction its address and warp-stall
    samples; the ``top`` instructions by samples with their PTX lines."""
    start = text.find('"Address"')
    if start < 0:
        return []
    rows = list(csv.reader(io.StringIO(text[start:])))
    head = rows[0]
    try:
        acol = head.index("Address")
    except ValueError:
        return []
    scol = next((i for i, h in enumerate(head) if h.startswith("Warp Stall Sampling (All")), None)
    if scol is None:
        scol = next((i for i, h in enumerate(head) if "Sampling" in h), None)
    src = next((i for i, h in enumerate(head) if h == "Source"), None)
    if scol is None:
        return []
    entries = []
    for r in rows[1:]:
        if len(r) != len(head):
            continue
        off, samples = _number(str(int(r[acol], 16)) if r[acol].lower().startswith("0x") else r[acol]), _number(r[scol])
        if off is None or samples is None:
            continue
        entries.append((int(off), samples, r[src] if src is not None else ""))
    total = sum(s for _, s, _ in entries) or 1.0
    entries.sort(key=lambda e: -e[1])
    return [HotLine(line_map.get(o), o, text_, s / total) for o, s, text_ in entries[:top] if s > 0]


def condense(m: dict[str, float], hot: list[HotLine], name: str) -> str:
    """A few lines a model can act on."""
    parts = []
    if "duration" in m:
        parts.append(f"{m['duration'] / 1e6:.4f} ms" if m["duration"] > 1e4 else f"{m['duration']:.0f} ns")
    tp = [f"{label} {m[k]:.0f}% of peak" for k, label in (("dram_pct", "DRAM"), ("sm_pct", "SM"),
                                                            ("memory_pct", "memory")) if k in m]
    if tp:
        parts.append(", ".join(tp))
    if "achieved_occupancy" in m:
        theo = f" (theoretical {m['theoretical_occupancy']:.0f}%)" if "theoretical_occupancy" in m else ""
        parts.append(f"achieved occupancy {m['achieved_occupancy']:.0f}%{theo}")
    lines = ["; ".join(parts)] if parts else []
    stalls = sorted(((k[6:], v) for k, v in m.items() if k.startswith("stall_")), key=lambda kv: -kv[1])[:3]
    if stalls:
        lines.append("top stalls (cycles per issued instruction): " + ", ".join(f"{k} {v:.2f}" for k, v in stalls))
    if "bank_conflicts_ld" in m or "bank_conflicts_st" in m:
        lines.append(f"shared-memory bank conflicts: {m.get('bank_conflicts_ld', 0):.0f} ld, "
                     f"{m.get('bank_conflicts_st', 0):.0f} st")
    mix = [f"{label} {m[k]:.3g}" for k, label in (("instructions", "warp instructions"), ("global_loads", "LDG"),
                                                  ("global_stores", "STG"), ("shared_loads", "LDS"),
                                                  ("shared_stores", "STS"), ("tensor_instructions", "tensor"),
                                                  ("ffma_thread_ops", "FFMA thread-ops")) if k in m]
    if mix:
        lines.append("instruction mix: " + ", ".join(mix))
    if hot:
        lines.append("hot instructions: " + ", ".join(
            f"{name}:{h.ptx_line if h.ptx_line is not None else '?'} ({h.sass.split()[0] if h.sass else '?'}, "
            f"{h.share:.0%})" for h in hot))
    return "\n".join(lines)


def _ncu() -> str | None:
    return os.environ.get("VOLTA_NCU") or shutil.which("ncu")


def _run(cmd: list[str], timeout: float) -> tuple[int, str]:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return -1, f"ncu ran past {timeout:.0f} s"
    return p.returncode, p.stdout + p.stderr


def run(request: object, timeout: float = 300.0) -> StageResult:
    ncu = _ncu()
    if ncu is None:
        return StageResult("profile", Status.UNAVAILABLE, "ncu is not on PATH: no counters; the timing stands alone")
    entry = getattr(request, "entry", "")
    name = getattr(request, "candidate", "candidate.ptx")
    line_map = getattr(request, "line_map", {}) or {}
    detail = ProfileDetail()
    with tempfile.TemporaryDirectory(prefix="volta-profile-") as tmp:
        req = Path(tmp) / "request.pkl"
        req.write_bytes(pickle.dumps((request, None)))
        app = [sys.executable, "-m", "harness.judge.gpu_one", str(req), "profile"]
        base = [ncu, "--clock-control", "none", "--kernel-name", f"regex:^{re.escape(entry)}$", "--launch-count", "1",
                "--csv"]
        metrics = list(METRICS)
        out = ""
        for _ in range(4):
            rc, out = _run(base + ["--page", "raw", "--metrics", ",".join(metrics)] + app, timeout)
            detail.metrics = parse_raw(out, entry)
            bad = _BAD_METRIC.findall(out)
            if detail.metrics or not bad:
                break
            dropped = [b for b in bad if b in metrics]
            if not dropped:
                break
            detail.notes.append(f"ncu does not know {', '.join(dropped)}: dropped")
            metrics = [m for m in metrics if m not in dropped]
        if not detail.metrics:
            tail = " ".join(out.strip().splitlines()[-3:])[:300]
            return StageResult("profile", Status.UNAVAILABLE, f"counters could not be read ({tail or 'no output'}); "
                               "the timing stands alone", detail=detail)
        rc, src = _run(base + ["--section", "SourceCounters", "--page", "source", "--print-source", "sass"] + app,
                       timeout)
        detail.hot = parse_source(src, line_map)
        if not detail.hot:
            detail.notes.append("per-instruction samples not read: " + " ".join(src.strip().splitlines()[-2:])[:200])
        elif not line_map:
            detail.notes.append("no line table: hot instructions are SASS offsets only")
    detail.text = condense(detail.metrics, detail.hot, name)
    return StageResult("profile", Status.PASSED, detail.text.splitlines()[0] if detail.text else "metrics read",
                       detail=detail)
