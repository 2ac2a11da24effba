"""SARIF 2.1.0 output for code-scanning tools (one run, one result per finding)."""

from __future__ import annotations

import re

_LOC = re.compile(r"^(?P<file>.*):(?P<line>\d+):(?P<col>\d+)$")
_RULES = {
    "race": "Data race: conflicting accesses not ordered by synchronisation",
    "deadlock": "Deadlock: a barrier or wait that can never complete",
    "divergence": "Barrier divergence: a barrier not reached by every thread it needs",
    "out_of_bounds": "Out-of-bounds memory access",
    "uninitialized": "Uninitialised shared memory reaches global memory",
    "undefined_behavior": "Behaviour the PTX ISA leaves undefined",
}


def _location(ptx: str) -> dict:
    m = _LOC.match(ptx)
    if m is None:
        return {"physicalLocation": {"artifactLocation": {"uri": ptx}}}
    return {"physicalLocation": {"artifactLocation": {"uri": m.group("file")},
                                 "region": {"startLine": int(m.group("line")), "startColumn": int(m.group("col"))}}}


def to_sarif(reports) -> dict:
    from importlib.metadata import PackageNotFoundError, version

    try:
        ver = version("volta")
    except PackageNotFoundError:  # pragma: no cover - running from a checkout
        ver = "0"
    results = []
    for r in reports:
        for f in r.findings:
            locs = [_location(s.ptx) for s in f.sites] or [_location(r.kernel)]
            results.append({
                "ruleId": f.kind.value,
                "level": "error",
                "message": {"text": f.message + "".join(f"\n{s.describe()}" for s in f.sites)},
                "locations": locs[:1],
                "relatedLocations": [dict(loc, id=i, message={"text": s.describe()})
                                     for i, (loc, s) in enumerate(zip(locs, f.sites))],
                "properties": {"verdict": r.verdict, "assumptions": r.assumptions},
            })
        if r.exit_code == 3:
            results.append({"ruleId": "undecided", "level": "warning",
                            "message": {"text": f"{r.kernel}: {r.verdict}"},
                            "locations": [_location(r.kernel.split(":")[0])]})
    rules = [{"id": k, "shortDescription": {"text": v}} for k, v in _RULES.items()]
    rules.append({"id": "undecided", "shortDescription": {"text": "Volta could not decide (unsupported or inconclusive)"}})
    return {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0",
            "runs": [{"tool": {"driver": {"name": "volta", "version": ver, "rules": rules}},
                      "results": results}]}
