"""Verdicts and findings of `volta check`, with witnesses a person can read.

The verdict names, their exit codes and the JSON shape are part of the public contract:
`race_free`/`verified` exit 0, a bug exits 1, bad input 2 (decided by the CLI), `unsupported: <what>`
and `inconclusive: <why>` exit 3.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum, IntEnum

from ptx_parser import ast as A

from ..machine import FindingKind


class ExitCode(IntEnum):
    OK = 0  # proved
    BUG = 1  # a bug was found
    BAD_INPUT = 2  # a parse error, an unknown kernel, a bad option
    UNDECIDED = 3  # unsupported or inconclusive


class Verdict(str, Enum):
    RACE_FREE = "race_free"
    VERIFIED = "verified"
    OUT_OF_BOUNDS = "out_of_bounds"
    TRAP = "trap"
    RACE = "race"
    DEADLOCK = "deadlock"
    DIVERGENCE = "divergence"
    UNINITIALIZED = "uninitialized"
    UNDEFINED_BEHAVIOR = "undefined_behavior"
    UNSUPPORTED = "unsupported"
    INCONCLUSIVE = "inconclusive"

    @property
    def exit_code(self) -> ExitCode:
        if self in (Verdict.RACE_FREE, Verdict.VERIFIED):
            return ExitCode.OK
        if self in (Verdict.UNSUPPORTED, Verdict.INCONCLUSIVE):
            return ExitCode.UNDECIDED
        return ExitCode.BUG

    @staticmethod
    def of(kind: FindingKind) -> "Verdict":
        return Verdict(kind.value)


#: Findings, most severe first: the verdict of a report with findings is the most severe one's. A
#: deadlock or a barrier that not every thread reaches comes before races: the accesses it fails to
#: order then race as a consequence, and the verdict names the cause.
SEVERITY = [FindingKind.OUT_OF_BOUNDS, FindingKind.TRAP, FindingKind.DEADLOCK, FindingKind.DIVERGENCE, FindingKind.RACE,
            FindingKind.UNINITIALIZED, FindingKind.UNDEFINED_BEHAVIOR]


class GridMethod(Enum):
    """How the CTAs of the grid were covered."""

    ENUMERATE = "enumerate"  # every CTA executed
    SYMBOLIC = "symbolic"  # two representative CTAs executed, the rest covered by Z3 (grid.py)
    NONE = "none"  # neither could be used

    def describe(self, detail: str = "") -> str:
        return self.value + (f" ({detail})" if detail else "")


@dataclass
class Site:
    """One side of a finding: a thread and the PTX instruction it executed."""

    cta: tuple[int, int, int]
    thread: tuple[int, int, int]
    ptx: str  # file:line:col
    instruction: str
    source: str | None = None  # Triton/CUDA file:line from .loc
    access: str | None = None  # read / write / atomic
    address: str | None = None  # in the user's terms: "x[12]", "partial[1] (0x4)" (places.py)
    space: str | None = None  # ".global", ".shared", ...
    byte: int | None = None  # the byte: a global address, or the offset in the space (shared: in the CTA's)

    def describe(self) -> str:
        who = f"CTA {self.cta} thread {self.thread}"
        what = f"{self.access} " if self.access else ""
        at = f" of {self.space.lstrip('.')} {self.address}" if self.address and self.space else \
            f" of {self.address}" if self.address else ""
        src = f" [{self.source}]" if self.source else ""
        return f"{who}: {what}{self.instruction}{at} at {self.ptx}{src}"


@dataclass
class Finding:
    kind: FindingKind
    message: str
    sites: list[Site] = field(default_factory=list)
    details: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        d = asdict(self)
        d["kind"] = self.kind.value
        return d


@dataclass
class Report:
    """A verdict (`outcome`, with `reason` for unsupported/inconclusive), its findings, the
    assumptions it relies on and how it was reached."""

    outcome: Verdict
    kernel: str
    reason: str = ""
    findings: list[Finding] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # inconclusive/unsupported reasons
    stats: dict = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        """The verdict as printed: `race`, `unsupported: <what>`, ..."""
        return f"{self.outcome.value}: {self.reason}" if self.reason else self.outcome.value

    def decide(self, outcome: Verdict, reason: str = "") -> None:
        self.outcome, self.reason = outcome, reason

    @property
    def exit_code(self) -> int:
        return int(self.outcome.exit_code)

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
