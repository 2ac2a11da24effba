"""The loop's typed records: what a diagnosis found, what a plan proposes, what a candidate is, how
the harness judged it and what the loop decided.

``Judged`` is the loop's view of a harness :class:`harness.judge.report.Report`, built only from
the report's public fields (and rebuilt from its JSON, so a resumed run needs no pickles).
"""

from __future__ import annotations

import enum
import hashlib
import re
from dataclasses import dataclass, field
from typing import Any


class Level(enum.IntEnum):
    """The diagnosis ladder, climbed only when the level below cannot explain the slowdown."""

    PATTERN = 1  # pattern triage: a known fix from the library matches the PTX (and the profile)
    PROFILE = 2  # profiling diagnosis: the condensed Nsight Compute profile names a bottleneck
    IR = 3  # IR attribution: TTIR, TTGIR, LLVM IR and PTX lined up through .loc
    COMPILER = 4  # compiler-source escalation: a narrow question answered from Triton's pass sources

    @property
    def title(self) -> str:
        return {1: "pattern triage", 2: "profiling diagnosis", 3: "IR attribution",
                4: "compiler-source escalation"}[self.value]


class ChangeKind(str, enum.Enum):
    LOCAL = "local"  # instruction edits in place
    GLOBAL = "global"  # thread mapping, data movement, synchronisation


@dataclass(frozen=True)
class Change:
    """One proposed change, tied to the measured metric it should move. ``key`` names the idea for
    the loop's memory (``rule:nc-loads``, ``model:<normalised title>``)."""

    key: str
    title: str
    kind: ChangeKind
    metric: str  # a profile metric (harness.judge.profile.METRICS label) or "time"
    expected: str = ""  # what should happen to the metric
    level: Level = Level.PATTERN
    evidence: tuple[str, ...] = ()
    rule: str | None = None  # an executable rewrite (taic_agent.rules.RULES) or None

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "title": self.title, "kind": self.kind.value, "metric": self.metric,
                "expected": self.expected, "level": int(self.level), "level_name": self.level.title,
                "evidence": list(self.evidence), "rule": self.rule}

    @staticmethod
    def from_json(d: dict[str, Any]) -> "Change":
        return Change(d["key"], d["title"], ChangeKind(d["kind"]), d["metric"], d.get("expected", ""),
                      Level(d["level"]), tuple(d.get("evidence", ())), d.get("rule"))


def idea_key(title: str) -> str:
    """A model's change title as a key for the memory of ideas (case, punctuation and spacing
    ignored, so a reworded retry of the same idea is still recognised when it is only reworded)."""
    words = re.findall(r"[a-z0-9]+", title.lower())
    return "model:" + "-".join(words)[:80]


@dataclass(frozen=True)
class Diagnosis:
    """What the ladder found: the level that explained it, the bottleneck, the evidence, and why
    each lower level could not explain it."""

    level: Level
    bottleneck: str
    evidence: tuple[str, ...] = ()
    matches: tuple[str, ...] = ()  # pattern keys that matched (level 1)
    climbed: tuple[str, ...] = ()  # "level: why it could not explain"
    question: str = ""  # the narrow compiler question (level 4)
    answer: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"level": int(self.level), "level_name": self.level.title, "bottleneck": self.bottleneck,
                "evidence": list(self.evidence), "matches": list(self.matches), "climbed": list(self.climbed),
                "question": self.question, "answer": self.answer}


@dataclass(frozen=True)
class Plan:
    bottleneck: str
    changes: tuple[Change, ...]
    diagnosis: Diagnosis

    def to_json(self) -> dict[str, Any]:
        return {"bottleneck": self.bottleneck, "changes": [c.to_json() for c in self.changes],
                "diagnosis": self.diagnosis.to_json()}


@dataclass(frozen=True)
class Proposal:
    """A generator's answer for one candidate: PTX text, or why there is none (malformed answer,
    no rule applies). ``changes``: the keys of the plan's changes it implements."""

    ptx: str | None
    changes: tuple[str, ...] = ()
    note: str = ""
    malformed: str = ""


@dataclass(frozen=True)
class Analysis:
    """A failure analysis: the cause of a rejection and the fix to try."""

    cause: str
    fix: str = ""
    malformed: str = ""


@dataclass(frozen=True)
class Measurement:
    """A candidate's speedup over the contract's baseline, with its 95% interval, and where it came
    from ("harness": timed on the GPU against autotuned Triton)."""

    speedup: float
    low: float
    high: float
    source: str = "harness"

    def beats(self, other: "Measurement | None", min_gain: float) -> bool:
        """Faster than ``other`` beyond the noise: the intervals do not overlap and the medians
        differ by at least ``min_gain`` (relative)."""
        if other is None:
            return True
        return self.low > other.high and self.speedup >= other.speedup * (1.0 + min_gain)

    def __str__(self) -> str:
        return f"{self.speedup:.3f}x [{self.low:.3f}, {self.high:.3f}]"


class Decision(str, enum.Enum):
    """What the loop did with a candidate."""

    START = "start"  # the run's starting point, accepted
    SURVIVED = "survived"  # passed every gate and is faster: seeds the next round
    NOT_FASTER = "not_faster"  # passed every gate, not faster than the current best
    UNTIMED = "untimed"  # passed every gate; no timing on this machine, so not known to be faster
    REJECTED = "rejected"  # a gate rejected it
    UNDECIDED = "undecided"  # a gate could not decide (never accepted)
    DUPLICATE = "duplicate"  # the same bytes as an earlier candidate of the run
    MALFORMED = "malformed"  # the generator's answer held no usable PTX
    REPAIRED = "repaired"  # rejected, then a repair of it was accepted


class StopReason(str, enum.Enum):
    ROUNDS = "rounds"  # the rounds asked for are done
    BUDGET = "budget"  # money or tokens spent
    NO_IDEAS = "no_ideas"  # the planner proposed nothing that has not failed before
    NO_START = "no_start"  # the starting PTX and its repairs were all rejected
    NO_TIMING = "no_timing"  # candidates passed, but nothing can be called faster without timing
    NO_IMPROVEMENT = "no_improvement"  # a round without a survivor
    ERROR = "error"  # the endpoint failed for good


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ProblemView:
    reason: str
    message: str
    severity: str
    where: str | None
    stage: str

    def __str__(self) -> str:
        at = f" at {self.where}" if self.where else ""
        return f"{self.stage}: {self.reason}{at}: {self.message}"


@dataclass(frozen=True)
class StageView:
    name: str
    status: str
    summary: str


@dataclass(frozen=True)
class Judged:
    """The harness's verdict on one candidate, as the loop reads it."""

    verdict: str  # harness Verdict value: accepted, rejected, undecided
    sha256: str
    mode: str
    stages: tuple[StageView, ...]
    problems: tuple[ProblemView, ...]
    speedup: Measurement | None = None
    profile_text: str = ""
    profile_metrics: dict[str, float] = field(default_factory=dict)
    hot_lines: tuple[int, ...] = ()
    certificate: Any = None  # the equivalence stage's certificate, once that gate exists
    report_json: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def accepted(self) -> bool:
        return self.verdict == "accepted"

    @property
    def reasons(self) -> tuple[str, ...]:
        return tuple(sorted({p.reason for p in self.problems if p.severity == "reject"}))

    def stage(self, name: str) -> StageView | None:
        return next((s for s in self.stages if s.name == name), None)

    @property
    def rejected_at(self) -> str:
        """The first stage that rejected or could not decide ("" when accepted)."""
        return next((s.name for s in self.stages if s.status in ("rejected", "undecided")), "")

    def summary(self) -> str:
        if self.accepted:
            return "accepted" + (f", {self.speedup}" if self.speedup else "")
        bad = next((s for s in self.stages if s.status in ("rejected", "undecided")), None)
        return f"{self.verdict} at {bad.name}: {bad.summary}" if bad else self.verdict

    @staticmethod
    def from_report(report: Any) -> "Judged":
        return Judged.from_json(report.to_json())

    @staticmethod
    def from_json(d: dict[str, Any]) -> "Judged":
        stages = tuple(StageView(s["stage"], s["status"], s.get("summary", "")) for s in d.get("stages", ()))
        problems = tuple(ProblemView(p["reason"], p.get("message", ""), p.get("severity", "reject"), p.get("where"),
                                     s["stage"]) for s in d.get("stages", ()) for p in s.get("problems", ()))
        sp = d.get("speedup")
        speedup = Measurement(float(sp["value"]), float(sp["low"]), float(sp["high"]), "harness") if sp else None
        profile = next((s for s in d.get("stages", ()) if s["stage"] == "profile" and s["status"] == "passed"), None)
        pdetail = (profile or {}).get("detail") or {}
        hot = tuple(h["ptx_line"] for h in pdetail.get("hot", ()) if h.get("ptx_line") is not None)
        equiv = next((s for s in d.get("stages", ()) if s["stage"] == "equivalence"), None)
        cert = ((equiv or {}).get("detail") or {}).get("certificate") if equiv else None
        return Judged(d["verdict"], d["ptx_sha256"], d.get("mode", "cpu"), stages, problems, speedup,
                      pdetail.get("text", ""), dict(pdetail.get("metrics", {})), hot, cert, d)
