"""Verdicts and findings of `volta check`, with witnesses a person can read.

The verdict names, their exit codes and the JSON shape are part of the public contract:
`race_free`/`verified` exit 0, a bug (`race`, ..., `not_equivalent`) exits 1, bad input 2 (decided by the
CLI), `unsupported: <what>` and `inconclusive: <why>` exit 3.
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
    NOT_EQUIVALENT = "not_equivalent"  # equivalence: an input on which the outputs differ (proofs/)
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
            FindingKind.UNINITIALIZED, FindingKind.UNDEFINED_BEHAVIOR,
            FindingKind.NOT_EQUIVALENT]


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


@dataclass(frozen=True)
class Reach:
    """How a finding was reached in a run that explored data-dependent branches both ways (read by
    symexec.check.reach, never printed): alternatives, each the (explored path, clock row) of every
    side that must hold together; for a race, its two instructions' pcs and the buffer."""

    alternatives: tuple[tuple[tuple[tuple[int, ...], int], ...], ...] = ()
    race: tuple[int, int, object] | None = None


@dataclass
class Finding:
    kind: FindingKind
    message: str
    sites: list[Site] = field(default_factory=list)
    details: dict = field(default_factory=dict)
    origin: Reach | None = field(default=None, repr=False, compare=False)
    region: "Region | None" = field(default=None, repr=False, compare=False)  # a race's bytes (group_findings)

    @property
    def key(self) -> tuple:
        """What identifies the finding across runs: its kind and its PTX instructions."""
        return (self.kind, tuple(sorted({(s.ptx, s.instruction) for s in self.sites})))

    def to_json(self) -> dict:
        d = asdict(self)
        d.pop("origin", None)
        d.pop("region", None)
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
    # the launch whose input the findings were replayed on, when it is not the one checked (an input
    # Z3 found for an explored path, reach.py); None: the checked launch (not part of the JSON)
    witness_launch: object = field(default=None, repr=False, compare=False)

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


@dataclass(frozen=True)
class Region:
    """Bytes lo..hi (offsets in `label`: a space's variable or buffer) that a finding touches, with
    its first and last byte named as witnesses name them (places.py: `partial[1] (0x4)`)."""

    space: str  # "shared", "global", "tmem"
    label: str
    lo: int
    hi: int
    first: str = ""
    last: str = ""

    def describe(self) -> str:
        if self.hi == self.lo:
            return f"{self.space} {self.first}"
        if self.last:
            return f"{self.space} {self.first} to {self.last} ({self.hi - self.lo + 1} bytes)"
        return f"{self.space} {self.first} and the next {self.hi - self.lo} bytes"

    def joins(self, other: "Region") -> bool:
        """Overlapping or adjacent bytes of the same variable."""
        return self.label == other.label and self.lo <= other.hi + 1 and other.lo <= self.hi + 1

    def union(self, other: "Region") -> "Region":
        low, high = (self, other) if self.lo <= other.lo else (other, self)
        top = high if high.hi >= low.hi else low
        last = (top.last or top.first) if top.hi > low.lo else ""
        return Region(self.space, self.label, low.lo, max(self.hi, other.hi), low.first, last)


def race_message(region: Region, why: str, conflicts: int, pairs: int = 1) -> str:
    more = f" ({conflicts} conflicting byte pairs between " + ("these two instructions)" if pairs == 1 else
                                                               f"{pairs} pairs of instructions)") if conflicts > 1 else ""
    return f"data race on {region.describe()}: {why}{more}"


def group_findings(findings: list[Finding]) -> list[Finding]:
    """One finding per bug: the byte pairs of one pair of instructions become one finding over the
    region they touch (a 4-byte race is one finding, not four), and races with the same reason on
    overlapping bytes of one variable (one missing barrier between several loads and stores) become
    one finding that lists its other pairs of instructions."""
    out: list[Finding] = []
    by_key: dict[tuple, Finding] = {}
    for f in findings:
        region = f.region
        if f.kind is not FindingKind.RACE or region is None or "why" not in f.details:
            out.append(f)
            continue
        key = (f.key, region.label, f.details["why"])
        g = by_key.get(key)
        if g is None:
            f.region = region
            by_key[key] = f
            out.append(f)
            continue
        g.region = g.region.union(region)
        g.details["conflicts"] = g.details.get("conflicts", 1) + f.details.get("conflicts", 1)
        _merge_origin(g, f)
    merged: list[Finding] = []
    for f in out:  # several pairs of instructions, one region and one reason
        r = f.region
        host = next((g for g in merged if r is not None and g.region is not None and g.region.joins(r)
                     and g.details.get("why") == f.details.get("why")), None) if r is not None else None
        if host is None:
            merged.append(f)
            continue
        host.region = host.region.union(r)
        host.details["conflicts"] = host.details.get("conflicts", 1) + f.details.get("conflicts", 1)
        host.details.setdefault("also", []).append(" / ".join(f"{s.instruction} at {s.ptx}" for s in f.sites))
        _merge_origin(host, f)
    for f in merged:
        r = f.region
        if r is None:
            continue
        also = f.details.get("also", [])
        f.details["region"] = r.describe()
        f.message = race_message(r, f.details["why"], f.details.get("conflicts", 1), 1 + len(also))
        if also:
            f.message += "; the same bytes also race between " + "; ".join(also[:6]) + \
                (f" and {len(also) - 6} more pairs" if len(also) > 6 else "")
    return merged


def _merge_origin(into: Finding, other: Finding) -> None:
    if into.origin is not None and other.origin is not None and into.origin.race == other.origin.race:
        into.origin = Reach(into.origin.alternatives + other.origin.alternatives, into.origin.race)
    elif other.origin is not None:
        into.origin = None  # different pairs of instructions: judged as one, nothing to prune on


def site_for(module: A.Module, ins: A.Instruction | None, cta, thread, **kw) -> Site:
    from ptx_parser import source_location

    ptx = str(ins.span) if ins is not None and ins.span is not None else "<unknown>"
    src = source_location(module, ins) if ins is not None else None
    return Site(tuple(int(v) for v in cta), tuple(int(v) for v in thread), ptx,
                ins.name if ins is not None else "<end of kernel>", str(src) if src else None, **kw)
