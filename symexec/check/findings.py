"""Findings and verdicts of `volta check`, with witnesses a person can read."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ptx_parser import ast as A

# Verdicts, most severe first; exit codes are part of the public contract.
VERDICT_EXIT = {"race_free": 0, "verified": 0, "race": 1, "deadlock": 1, "divergence": 1,
                "out_of_bounds": 1, "uninitialized": 1, "undefined_behavior": 1,
                "unsupported": 3, "inconclusive": 3}


@dataclass
class Site:
    """One side of a finding: a thread and the PTX instruction it executed."""

    cta: tuple[int, int, int]
    thread: tuple[int, int, int]
    ptx: str  # file:line:col
    instruction: str
    source: str | None = None  # Triton/CUDA file:line from .loc
    access: str | None = None  # read / write / atomic
    address: str | None = None
    space: str | None = None

    def describe(self) -> str:
        who = f"CTA {self.cta} thread {self.thread}"
        what = f"{self.access} " if self.access else ""
        at = f" of {self.space} {self.address}" if self.address else ""
        src = f" [{self.source}]" if self.source else ""
        return f"{who}: {what}{self.instruction}{at} at {self.ptx}{src}"


@dataclass
class Finding:
    kind: str  # race | deadlock | divergence | out_of_bounds | uninitialized | undefined_behavior
    message: str
    sites: list[Site] = field(default_factory=list)
    details: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class Report:
    verdict: str
    kernel: str
    findings: list[Finding] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # inconclusive/unsupported reasons
    stats: dict = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        return VERDICT_EXIT.get(self.verdict.split(":")[0], 3)

    def to_json(self) -> dict:
        return {"verdict": self.verdict, "kernel": self.kernel, "exit_code": self.exit_code,
                "findings": [f.to_json() for f in self.findings], "assumptions": self.assumptions,
                "notes": self.notes, "stats": self.stats}


def site_for(module: A.Module, ins: A.Instruction | None, cta, thread, **kw) -> Site:
    from ptx_parser import source_location

    ptx = str(ins.span) if ins is not None and ins.span is not None else "<unknown>"
    src = source_location(module, ins) if ins is not None else None
    return Site(tuple(int(v) for v in cta), tuple(int(v) for v in thread), ptx,
                ins.name if ins is not None else "<end of kernel>", str(src) if src else None, **kw)
