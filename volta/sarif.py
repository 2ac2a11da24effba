"""SARIF 2.1.0 output for code-scanning tools: one run, one result per finding.

A finding's primary location is the CUDA/Triton source line of its first site when the PTX has
`.loc` information (what a person edits), else the PTX line; the PTX lines of every site are
related locations, and a race's two threads are a code flow of two thread flows. Files that could
not be decided are `warning` results; bad input is a tool-execution notification of the one
invocation, which records the command line, the exit code and the times.
"""

from __future__ import annotations

import os
import re
from datetime import datetime, timezone
from pathlib import Path

from .results import CheckResult

_LOC = re.compile(r"^(?P<file>.*?):(?P<line>\d+)(?::(?P<col>\d+))?$")
_RULES = {
    "race": "Data race: conflicting accesses not ordered by synchronisation",
    "deadlock": "Deadlock: a barrier or wait that can never complete",
    "divergence": "Barrier divergence: a barrier not reached by every thread it needs",
    "out_of_bounds": "Out-of-bounds memory access",
    "trap": "The kernel executes trap or fails a device assert: the launch fails",
    "uninitialized": "Uninitialised shared memory or accumulator reaches memory",
    "undefined_behavior": "Behaviour the PTX ISA leaves undefined",
    "not_equivalent": "An output differs from the reference's beyond the tolerance on a replayed input",
    "undecided": "Volta could not decide (unsupported or inconclusive)",
}


def _uri(file: str) -> str:
    p = Path(file)
    return p.as_uri() if p.is_absolute() else p.as_posix()


def _location(where: str | None, message: str | None = None) -> dict | None:
    """`file:line:col` (or `file:line`, or a bare file) as a SARIF location; None for nothing."""
    if not where or where.startswith("<"):
        return None
    m = _LOC.match(where)
    phys: dict = {"artifactLocation": {"uri": _uri(m.group("file") if m else where)}}
    if m:
        region = {"startLine": int(m.group("line"))}
        if m.group("col") and int(m.group("col")) >= 1:  # .loc may say column 0: unknown
            region["startColumn"] = int(m.group("col"))
        phys["region"] = region
    loc: dict = {"physicalLocation": phys}
    if message:
        loc["message"] = {"text": message}
    return loc


def _result(r: CheckResult, f) -> dict:
    sites = f.sites
    primary = next((x for x in (_location(s.source) or _location(s.ptx) for s in sites[:1]) if x), None) \
        or _location(str(r.path))
    related = []
    for s in sites:
        for where in (s.ptx, s.source):
            loc = _location(where, s.describe())
            if loc is not None:
                related.append(dict(loc, id=len(related)))
    out = {
        "ruleId": f.kind.value,
        "level": "error",
        "message": {"text": f"{r.kernel}: {f.message}" + "".join(f"\n{s.describe()}" for s in sites)},
        "locations": [primary],
        "relatedLocations": related,
        "properties": {"verdict": r.report.verdict, "kernel": r.kernel, "assumptions": r.report.assumptions},
    }
    flows = []
    for s in sites:
        steps = [{"location": loc} for loc in (_location(s.source, s.describe()), _location(s.ptx, s.describe()))
                 if loc is not None][:1]
        if steps:
            flows.append({"message": {"text": f"CTA {s.cta} thread {s.thread}"}, "locations": steps})
    if len(flows) > 1:
        out["codeFlows"] = [{"message": {"text": f.message}, "threadFlows": flows}]
    return out


def _utc(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def to_sarif(results: list[CheckResult], invocation: dict | None = None) -> dict:
    """The SARIF log of `volta check` results; `invocation`: argv, started, ended (epoch seconds)
    and exit_code of the command."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        ver = version("volta")
    except PackageNotFoundError:  # pragma: no cover - running from a checkout
        ver = "0"
    sarif_results, notes = [], []
    for r in results:
        if r.report is None:
            note = {"level": "error", "message": {"text": str(r.error)}, "descriptor": {"id": "bad-input"}}
            loc = _location(f"{r.error.file}:{r.error.line}:{r.error.col}" if r.error.line else
                            (r.error.file or str(r.path)))
            if loc is not None:
                note["locations"] = [loc]
            notes.append(note)
            continue
        for f in r.report.findings:
            sarif_results.append(_result(r, f))
        if r.exit_code == 3:
            sarif_results.append({"ruleId": "undecided", "level": "warning",
                                  "message": {"text": f"{r.kernel}: {r.verdict}"},
                                  "locations": [_location(str(r.path))],
                                  "properties": {"notes": r.report.notes}})
    run: dict = {"tool": {"driver": {"name": "volta", "version": ver, "semanticVersion": ver,
                                     "rules": [{"id": k, "shortDescription": {"text": v}} for k, v in _RULES.items()],
                                     "notifications": [{"id": "bad-input", "shortDescription": {
                                         "text": "Input Volta cannot check (parse error, bad launch, bad option)"}}]}},
                 "results": sarif_results}
    if invocation is not None:
        inv = {"commandLine": " ".join(invocation.get("argv", [])), "arguments": list(invocation.get("argv", [])[1:]),
               "executionSuccessful": not notes, "exitCode": int(invocation.get("exit_code", 0)),
               "workingDirectory": {"uri": Path(os.getcwd()).as_uri()}}
        if "started" in invocation:
            inv["startTimeUtc"] = _utc(invocation["started"])
        if "ended" in invocation:
            inv["endTimeUtc"] = _utc(invocation["ended"])
        if notes:
            inv["toolExecutionNotifications"] = notes
        run["invocations"] = [inv]
    return {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0", "runs": [run]}


__all__ = ["to_sarif"]
