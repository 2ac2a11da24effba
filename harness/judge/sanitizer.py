"""The compute-sanitizer lane: memcheck, racecheck, synccheck and initcheck on one launch of the
candidate, each error mapped back to the candidate's PTX lines.

Each tool runs ``python -m harness.judge.gpu_one REQUEST trial`` (one trial at the verify size with
the harness's guarded buffers) under ``compute-sanitizer --tool T``, on the line-annotated twin
cubin (harness.judge.ptxas.annotate): the sanitizer prints ``candidate.ptx:LINE`` itself where it
reads line info, and every ``kernel+0xOFFSET`` is mapped through the twin's line table otherwise.
On a machine where the tool cannot run (gVisor: "Device not supported"; no compute-sanitizer on
PATH) the lane is ``unavailable`` and says why; it never passes silently.
"""

from __future__ import annotations

import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .report import Problem, Reason, StageResult, Status

TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")
_PREFIX = "========="
_PC = re.compile(r"\+0x([0-9a-fA-F]+)")  # "at kernel+0x50", "at f(int, float *)+0x4bd0"
_FILE_LINE = re.compile(r"([\w./$-]+\.ptx):(\d+)")
_THREAD = re.compile(r"thread \((\d+),(\d+),(\d+)\)")
_BLOCK = re.compile(r"block \((\d+),(\d+),(\d+)\)")
_SUMMARY = re.compile(r"(?:ERROR|RACECHECK) SUMMARY: (\d+)")
_NOT_ERRORS = ("COMPUTE-SANITIZER", "ERROR SUMMARY", "RACECHECK SUMMARY", "LEAK SUMMARY", "Target application")
_UNAVAILABLE = ("Device not supported", "not supported on this", "Unable to find injection library",
                "Failed to initialize", "unrecognised option", "unrecognized option", "Unknown option")


@dataclass
class SanitizerError:
    text: str  # the tool's header line, e.g. "Invalid __global__ write of size 4 bytes"
    ptx_lines: list[int] = field(default_factory=list)
    offsets: list[int] = field(default_factory=list)
    thread: tuple[int, int, int] | None = None
    block: tuple[int, int, int] | None = None
    details: list[str] = field(default_factory=list)

    def where(self, name: str) -> str | None:
        return ", ".join(f"{name}:{n}" for n in self.ptx_lines) or None


@dataclass
class SanitizerDetail:
    tool: str
    errors: list[SanitizerError] = field(default_factory=list)
    summary: str = ""
    mapped: bool = True  # every error has a PTX line
    log_tail: str = ""


def parse(log: str, line_map: dict[int, int]) -> tuple[list[SanitizerError], str]:
    """The error blocks of a compute-sanitizer log (and its ERROR SUMMARY line)."""
    errors: list[SanitizerError] = []
    summary = ""
    current: SanitizerError | None = None
    for raw in log.splitlines():
        if not raw.startswith(_PREFIX):
            continue
        body = raw[len(_PREFIX):]
        text = body.strip()
        if not text:
            continue
        if _SUMMARY.search(text):
            summary = text
            current = None
            continue
        if not body.startswith("  ") and not body.startswith("\t"):  # a header line
            if (text.startswith(_NOT_ERRORS) or text.startswith("Saved host backtrace")
                    or (text.startswith("Warning:") and "Race reported" not in text)):
                current = None
                continue
            current = SanitizerError(text)
            errors.append(current)
            _collect(current, text, line_map)
            continue
        if current is None or "Host Frame" in text or text.startswith("Saved host backtrace"):
            continue
        current.details.append(text)
        _collect(current, text, line_map)
    return errors, summary


def _collect(err: SanitizerError, text: str, line_map: dict[int, int]) -> None:
    for m in _FILE_LINE.finditer(text):
        n = int(m.group(2))
        if n not in err.ptx_lines:
            err.ptx_lines.append(n)
    for m in _PC.finditer(text):
        off = int(m.group(1), 16)
        err.offsets.append(off)
        line = line_map.get(off)
        if line is not None and not _FILE_LINE.search(text) and line not in err.ptx_lines:
            err.ptx_lines.append(line)
    t, b = _THREAD.search(text), _BLOCK.search(text)
    if t:
        err.thread = tuple(int(x) for x in t.groups())  # type: ignore[assignment]
    if b:
        err.block = tuple(int(x) for x in b.groups())  # type: ignore[assignment]


def judge(tool: str, rc: int, log: str, line_map: dict[int, int], candidate: str) -> StageResult:
    """The StageResult of one tool's run (``rc`` the sanitizer's exit status)."""
    unavailable = next((u for u in _UNAVAILABLE if u in log), None)
    errors, summary = parse(log, line_map)
    errors = [e for e in errors if not any(u in e.text for u in _UNAVAILABLE)]  # the tool's own failure
    tail = "\n".join(log.strip().splitlines()[-12:])
    detail = SanitizerDetail(tool, errors, summary, all(e.ptx_lines for e in errors), tail)
    if unavailable and not errors:
        return StageResult(tool, Status.UNAVAILABLE, f"compute-sanitizer cannot run here ({unavailable})",
                           detail=detail)
    if errors:
        problems = [Problem(Reason.SANITIZER, f"{tool}: {e.text}" + (f" (thread {e.thread} block {e.block})"
                                                                      if e.thread else ""),
                            where=e.where(candidate)) for e in errors[:20]]
        if not detail.mapped:
            problems.append(Problem(Reason.SANITIZER, f"{tool}: some errors could not be mapped to PTX lines "
                                    "(no line info for their offsets)"))
        return StageResult.from_problems(tool, problems, "", detail)
    if rc != 0 or not summary:
        return StageResult(tool, Status.UNAVAILABLE, f"compute-sanitizer exited with {rc} and no error report: "
                           + (tail.splitlines()[-1] if tail else "no output"), detail=detail)
    return StageResult(tool, Status.PASSED, summary, detail=detail)


def command(tool: str, log: Path, argv: list[str]) -> list[str]:
    exe = os.environ.get("VOLTA_COMPUTE_SANITIZER") or shutil.which("compute-sanitizer")
    if exe is None:
        raise FileNotFoundError("compute-sanitizer is not on PATH")
    extra = ["--racecheck-report", "all"] if tool == "racecheck" else []
    return [exe, "--tool", tool, *extra, "--print-limit", "100", "--error-exitcode", "99",
            "--log-file", str(log), *argv]


def run(tool: str, request: object, trial: object, timeout: float = 300.0) -> StageResult:
    """One tool on one trial of the candidate (``request``: a GpuRequest with the twin cubin)."""
    name = getattr(request, "candidate", "candidate.ptx")
    line_map = getattr(request, "line_map", {}) or {}
    if not getattr(request, "twin_cubin", b""):
        return StageResult(tool, Status.UNAVAILABLE, "no line-annotated twin could be assembled")
    with tempfile.TemporaryDirectory(prefix="volta-sanitize-") as tmp:
        req = Path(tmp) / "request.pkl"
        req.write_bytes(pickle.dumps((request, trial)))
        log = Path(tmp) / "sanitizer.log"
        try:
            cmd = command(tool, log, [sys.executable, "-m", "harness.judge.gpu_one", str(req), "trial"])
        except FileNotFoundError as e:
            return StageResult(tool, Status.UNAVAILABLE, str(e))
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return StageResult(tool, Status.UNAVAILABLE, f"ran past {timeout:.0f} s")
        text = (log.read_text(errors="replace") if log.exists() else "") + "\n" + proc.stdout + proc.stderr
    return judge(tool, proc.returncode, text, line_map, name)
