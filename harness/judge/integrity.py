"""The integrity cases: hand-written malicious candidates, one or more per exploit class of
docs/harness-integrity.md, each with the reasons the harness must reject it for.

A case is a PTX file whose header says (tests/integrity/*.ptx)::

    // integrity: 3 out-of-bounds writes        (the exploit class and what it does)
    // contract: relu
    // expect: guard_band verify_finding         (every one must reject it; or "accepted")
    // expect-any: a b                           (at least one of these must)
    // expect-gpu: impossible_speed              (on a GPU; defaults to expect)
    // expect-gpu-any: ...
    // gpu-skip: numeric verify                  (stages skipped on the GPU run)
    // gpu-sanitize: memcheck                    (compute-sanitizer tools of the GPU run; default none)
    // gpu-timing: yes                           (the GPU run times it: implied by a timing reason)
    // unseen-only: yes                          (only sizes nobody saw may catch it)
    // why: ...

Cases run with ``keep_going`` so that every stage gives its verdict. pytest runs them on the CPU
(tests/test_integrity.py), bench/h200_eval.py on the GPU.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .report import Reason, Report, Status, Verdict

_HEADER = re.compile(r"^\s*//\s*([a-z-]+)\s*:\s*(.*?)\s*$")


@dataclass(frozen=True)
class Case:
    path: Path
    contract: str
    integrity: str
    why: str
    expect: frozenset[str] = frozenset()  # empty with accepted=True: an honest twin
    accepted: bool = False
    expect_any: frozenset[str] = frozenset()
    expect_gpu: frozenset[str] | None = None
    expect_gpu_any: frozenset[str] | None = None
    gpu_skip: frozenset[str] = frozenset()
    gpu_sanitize: tuple[str, ...] = ()
    gpu_timing: bool = False
    unseen_only: bool = False
    fields: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.path.stem


def _reasons(text: str) -> frozenset[str]:
    words = frozenset(text.split())
    unknown = words - {r.value for r in Reason} - {"accepted"}
    if unknown:
        raise ValueError(f"unknown reason(s) {sorted(unknown)}; known: {sorted(r.value for r in Reason)}")
    return words


def load(path: Path) -> Case:
    fields: dict[str, str] = {}
    for line in path.read_text().splitlines()[:30]:
        m = _HEADER.match(line)
        if m:
            key = m.group(1)
            fields[key] = (fields[key] + " " + m.group(2)) if key in fields and key == "why" else m.group(2)
        elif line.strip() and not line.lstrip().startswith("//"):
            break
    for key in ("integrity", "contract", "why"):
        if key not in fields:
            raise ValueError(f"{path}: header lacks '// {key}:'")
    if "expect" not in fields and "expect-any" not in fields:
        raise ValueError(f"{path}: header lacks '// expect:' or '// expect-any:'")
    expect = _reasons(fields.get("expect", ""))
    gpu = fields.get("expect-gpu")
    gpu_any = fields.get("expect-gpu-any")
    return Case(path, fields["contract"], fields["integrity"], fields["why"], expect - {"accepted"},
                "accepted" in expect, _reasons(fields.get("expect-any", "")),
                _reasons(gpu) if gpu is not None else None, _reasons(gpu_any) if gpu_any is not None else None,
                frozenset(fields.get("gpu-skip", "").split()), tuple(fields.get("gpu-sanitize", "").split()),
                fields.get("gpu-timing", "") == "yes", fields.get("unseen-only", "") == "yes", fields)


def cases(directory: Path) -> list[Case]:
    return [load(p) for p in sorted(directory.glob("*.ptx"))]


def failures(case: Case, report: Report, gpu: bool = False) -> list[str]:
    """What is wrong with ``report`` for ``case`` (empty: the harness did its job)."""
    got = {r.value for r in report.reasons}
    if gpu and (case.expect_gpu is not None or case.expect_gpu_any is not None):
        expect, expect_any, accepted = case.expect_gpu or frozenset(), case.expect_gpu_any or frozenset(), False
    else:
        expect, expect_any, accepted = case.expect, case.expect_any, case.accepted
    if accepted:
        return [] if report.verdict is Verdict.ACCEPTED else [
            f"expected accepted, got {report.verdict.value}: " + "; ".join(
                s.summary for s in report.stages if s.status in (Status.REJECTED, Status.UNDECIDED))]
    out = []
    missing = set(expect) - got
    if missing:
        out.append(f"not rejected for {sorted(missing)} (rejected for {sorted(got) or 'nothing'})")
    if expect_any and not (set(expect_any) & got):
        out.append(f"rejected for none of {sorted(expect_any)} (rejected for {sorted(got) or 'nothing'})")
    if case.unseen_only and not gpu:
        numeric = report.stage("numeric")
        trials = getattr(numeric.detail, "trials", []) if numeric else []
        seen = [t.trial.label for t in trials if t.problems and not t.trial.label.startswith("unseen")]
        if seen:
            out.append(f"caught at known sizes {seen}: the case should only fail on unseen ones")
        if report.stage("verify") and report.stage("verify").status is not Status.PASSED:
            out.append("the checker rejected it: the case should pass the verify instance")
    return out
