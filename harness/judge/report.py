"""The evaluation report: one record per stage, typed problems, one verdict.

A stage (harness.judge.pipeline.STAGES) returns a :class:`StageResult`: a :class:`Status`, a one-line
summary, the :class:`Problem` s it found (each a :class:`Reason` with a message and, where known, the
PTX line) and a stage-specific detail record (a dataclass). The :class:`Report` is the list of them
plus the candidate's identity (contract, target, sha256 of the PTX bytes); its verdict is derived,
never stored, so a stage added to the table changes no caller.

Reasons live in one table (:data:`REASONS`) that ties each to the exploit class of
docs/harness-integrity.md (../shared) it defends against.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import Any


class Status(str, enum.Enum):
    PASSED = "passed"
    REJECTED = "rejected"  # the candidate failed this gate: not accepted
    UNDECIDED = "undecided"  # the gate could not decide (verify unsupported/inconclusive): not accepted
    SKIPPED = "skipped"  # not run: an earlier gate rejected, or not asked for
    UNAVAILABLE = "unavailable"  # this machine cannot run it (no GPU, no counters): the report says why


class Severity(str, enum.Enum):
    REJECT = "reject"  # the candidate is not accepted
    FLAG = "flag"  # accepted, but a person should look


class Reason(str, enum.Enum):
    """Why a stage rejected or flagged a candidate. :data:`REASONS` describes each."""

    BAD_PTX = "bad_ptx"
    ENTRY_NAME = "entry_name"
    PARAMETERS = "parameters"
    TARGET = "target"
    LAUNCH_CONFIG = "launch_config"
    GLOBAL_DATA = "global_data"
    SPECIAL_REGISTER = "special_register"
    FOREIGN_CALL = "foreign_call"
    PRECISION_DOWNGRADE = "precision_downgrade"
    NARROWING_CONVERSION = "narrowing_conversion"
    PTXAS = "ptxas"
    SPILLS = "spills"
    VERIFY_FINDING = "verify_finding"
    VERIFY_UNDECIDED = "verify_undecided"
    WRONG_VALUES = "wrong_values"
    NAN_INF_MISMATCH = "nan_inf_mismatch"
    UNWRITTEN_OUTPUT = "unwritten_output"
    INPUT_MUTATED = "input_mutated"
    GUARD_BAND = "guard_band"
    MEMORY_FAULT = "memory_fault"
    NONDETERMINISTIC = "nondeterministic"
    LAUNCH_FAILED = "launch_failed"
    SANITIZER = "sanitizer"
    IMPOSSIBLE_SPEED = "impossible_speed"
    CLOCK_MISMATCH = "clock_mismatch"
    LARGE_SPEEDUP = "large_speedup"
    WITHIN_NOISE = "within_noise"


@dataclass(frozen=True)
class ReasonInfo:
    text: str
    exploit: tuple[int, ...] = ()  # classes of docs/harness-integrity.md this defends against


REASONS: dict[Reason, ReasonInfo] = {
    Reason.BAD_PTX: ReasonInfo("the PTX does not parse"),
    Reason.ENTRY_NAME: ReasonInfo("the .entry name differs from the contract's Triton kernel"),
    Reason.PARAMETERS: ReasonInfo("the parameter list cannot carry the contract's arguments"),
    Reason.TARGET: ReasonInfo("the .target cannot run on the contract's target"),
    Reason.LAUNCH_CONFIG: ReasonInfo(".reqntid/.maxntid/.maxnctapersm contradict the launch the harness makes, or the "
                                     "candidate's `// volta-launch:` header cannot be read"),
    Reason.GLOBAL_DATA: ReasonInfo(".global/.const data the reference does not declare (cross-launch state)", (8,)),
    Reason.SPECIAL_REGISTER: ReasonInfo("reads a timer/placement special register the reference does not", (9,)),
    Reason.FOREIGN_CALL: ReasonInfo("calls a function the reference does not (device-side launches, host "
                                    "services)", (10,)),
    Reason.PRECISION_DOWNGRADE: ReasonInfo("tensor-core operands of lower precision than the reference's", (6,)),
    Reason.NARROWING_CONVERSION: ReasonInfo("converts to a floating type the reference never converts to", (6,)),
    Reason.PTXAS: ReasonInfo("ptxas rejects the PTX for the contract's target"),
    Reason.SPILLS: ReasonInfo("registers spill to local memory"),
    Reason.VERIFY_FINDING: ReasonInfo("volta check found a race, out-of-bounds access, deadlock or other bug", (3, 7)),
    Reason.VERIFY_UNDECIDED: ReasonInfo("volta check could not decide (unsupported or inconclusive)"),
    Reason.WRONG_VALUES: ReasonInfo("outputs outside the dtype's tolerance of the float64 reference", (4, 6, 14)),
    Reason.NAN_INF_MISMATCH: ReasonInfo("NaN/Inf where the reference has none, or the reverse", (5,)),
    Reason.UNWRITTEN_OUTPUT: ReasonInfo("output elements left unwritten (differ between two sentinel fills)", (1,)),
    Reason.INPUT_MUTATED: ReasonInfo("an input buffer changed during the run", (2,)),
    Reason.GUARD_BAND: ReasonInfo("bytes written in the guard band around a buffer", (3,)),
    Reason.MEMORY_FAULT: ReasonInfo("an access outside every allocation", (3,)),
    Reason.NONDETERMINISTIC: ReasonInfo("two runs on the same inputs differ bitwise", (7,)),
    Reason.LAUNCH_FAILED: ReasonInfo("the launch failed (load, resources, a trap)"),
    Reason.SANITIZER: ReasonInfo("compute-sanitizer reported an error", (3, 7)),
    Reason.IMPOSSIBLE_SPEED: ReasonInfo("faster than the roofline floor of the shape", (13,)),
    Reason.CLOCK_MISMATCH: ReasonInfo("CUDA events and the synchronised wall clock disagree", (10,)),
    Reason.LARGE_SPEEDUP: ReasonInfo("more than 10x faster than the baseline: a person should look", (13,)),
    Reason.WITHIN_NOISE: ReasonInfo("the difference is within the run-to-run spread", (12,)),
}


@dataclass(frozen=True)
class Problem:
    reason: Reason
    message: str
    severity: Severity = Severity.REJECT
    where: str | None = None  # file:line[:col] of the PTX, when known

    def to_json(self) -> dict[str, Any]:
        return {"reason": self.reason.value, "severity": self.severity.value, "message": self.message,
                "where": self.where, "exploit_classes": list(REASONS[self.reason].exploit)}

    def __str__(self) -> str:
        at = f" at {self.where}" if self.where else ""
        return f"{self.reason.value}: {self.message}{at}"


@dataclass
class StageResult:
    stage: str
    status: Status
    summary: str = ""
    problems: list[Problem] = field(default_factory=list)
    detail: Any = None  # a stage's own dataclass (or None)
    seconds: float = 0.0

    @classmethod
    def from_problems(cls, stage: str, problems: list[Problem], passed: str, detail: Any = None) -> "StageResult":
        """REJECTED with the first rejecting problem as summary, else PASSED (flags kept)."""
        rejects = [p for p in problems if p.severity is Severity.REJECT]
        if rejects:
            more = f" (+{len(rejects) - 1} more)" if len(rejects) > 1 else ""
            return cls(stage, Status.REJECTED, str(rejects[0]) + more, problems, detail)
        return cls(stage, Status.PASSED, passed, problems, detail)

    @property
    def rejected(self) -> bool:
        return self.status is Status.REJECTED

    def to_json(self) -> dict[str, Any]:
        return {"stage": self.stage, "status": self.status.value, "summary": self.summary,
                "problems": [p.to_json() for p in self.problems], "seconds": round(self.seconds, 3),
                "detail": to_jsonable(self.detail)}


class Verdict(str, enum.Enum):
    ACCEPTED = "accepted"  # every gate that ran passed
    REJECTED = "rejected"  # a gate rejected it
    UNDECIDED = "undecided"  # no rejection, but a gate could not decide


@dataclass
class Report:
    contract: str
    candidate: str
    target: str
    ptx_sha256: str
    mode: str  # "cpu" (emulator numerics, no timing) or "gpu"
    stages: list[StageResult] = field(default_factory=list)
    seeds: list[int] = field(default_factory=list)

    @property
    def verdict(self) -> Verdict:
        if any(s.status is Status.REJECTED for s in self.stages):
            return Verdict.REJECTED
        if any(s.status is Status.UNDECIDED for s in self.stages):
            return Verdict.UNDECIDED
        return Verdict.ACCEPTED

    @property
    def accepted(self) -> bool:
        return self.verdict is Verdict.ACCEPTED

    def stage(self, name: str) -> StageResult | None:
        return next((s for s in self.stages if s.stage == name), None)

    @property
    def problems(self) -> list[Problem]:
        return [p for s in self.stages for p in s.problems]

    @property
    def reasons(self) -> set[Reason]:
        """Every reason that rejected the candidate."""
        return {p.reason for p in self.problems if p.severity is Severity.REJECT}

    @property
    def speedup(self) -> Any:
        t = self.stage("timing")
        return getattr(t.detail, "speedup", None) if t is not None else None

    @property
    def exit_code(self) -> int:
        """0 accepted, 1 rejected, 3 undecided (the `volta check` convention)."""
        return {Verdict.ACCEPTED: 0, Verdict.REJECTED: 1, Verdict.UNDECIDED: 3}[self.verdict]

    def to_json(self) -> dict[str, Any]:
        return {"contract": self.contract, "candidate": self.candidate, "target": self.target,
                "ptx_sha256": self.ptx_sha256, "mode": self.mode, "verdict": self.verdict.value,
                "seeds": self.seeds, "speedup": to_jsonable(self.speedup),
                "stages": [s.to_json() for s in self.stages]}


def to_jsonable(x: Any) -> Any:
    """Dataclasses, enums, tuples and numpy scalars -> plain JSON values."""
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: to_jsonable(getattr(x, f.name)) for f in dataclasses.fields(x)}
    if isinstance(x, enum.Enum):
        return x.value
    if isinstance(x, dict):
        return {str(k): to_jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [to_jsonable(v) for v in x]
    if hasattr(x, "item") and callable(x.item):  # numpy scalar
        return x.item()
    if isinstance(x, float) and x != x:
        return None
    return x
