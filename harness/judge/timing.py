"""Timing a candidate against the baseline, honestly (harness-integrity classes 10-13).

Written against two small interfaces so that the logic is tested without a GPU:

- a :class:`Side` launches one kernel on input set ``i`` (inputs are rotated between sets);
- a :class:`Clock` flushes the L2, records start/stop events around a launch, synchronises and
  reads a wall clock (harness.judge.cuda implements it with CUDA events).

Per sample: flush L2, start event, launch, stop event, synchronise; candidate and baseline
alternate A B B A (drift cancels), after warm-up. Then a wall-clock block per side: synchronise,
K back-to-back launches inside events, synchronise; events must fit inside the wall-clock interval
and the wall clock must not see much more time than the events for the candidate than for the
baseline (work outside the measured window). The result: medians with quartiles, the run-to-run
spread of each side (first half of its samples against the second), speedup = baseline median /
candidate median with a bootstrap 95% interval; a candidate median below the roofline floor is
rejected, a speedup above 10x or one inside the noise is flagged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from .report import Problem, Reason, Severity
from .roofline import Floor


class Side(Protocol):
    name: str
    sets: int

    def launch(self, index: int) -> None: ...


class Clock(Protocol):
    def flush_l2(self) -> None: ...

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def sync(self) -> None: ...

    def elapsed_ms(self) -> float: ...

    def now(self) -> float: ...


@dataclass(frozen=True)
class TimingPlan:
    warmup: int = 5
    min_reps: int = 20
    max_reps: int = 200
    budget_s: float = 4.0  # sampled time of one candidate/baseline comparison (both sides)
    block: int = 20  # launches in the wall-clock block
    large_speedup: float = 10.0
    seed: int = 0


@dataclass
class Stats:
    n: int
    median_ms: float
    q25_ms: float
    q75_ms: float
    min_ms: float
    run_to_run: float  # |median of the first half - median of the second| / median

    @property
    def spread(self) -> float:
        """Interquartile range / median."""
        return (self.q75_ms - self.q25_ms) / self.median_ms if self.median_ms > 0 else float("inf")

    @staticmethod
    def of(samples: list[float]) -> "Stats":
        a = np.asarray(samples, np.float64)
        med = float(np.median(a))
        half = len(a) // 2
        r2r = abs(float(np.median(a[:half])) - float(np.median(a[half:]))) / med if half and med > 0 else 0.0
        return Stats(len(a), med, float(np.quantile(a, 0.25)), float(np.quantile(a, 0.75)), float(a.min()), r2r)


@dataclass
class WallCheck:
    launches: int
    events_ms: float  # per launch
    wall_ms: float  # per launch


@dataclass
class Speedup:
    value: float
    low: float  # bootstrap 95% interval
    high: float
    noise: float  # the baseline's run-to-run spread (relative)

    def __str__(self) -> str:
        return f"{self.value:.3f}x [{self.low:.3f}, {self.high:.3f}]"


@dataclass
class TimingDetail:
    instance: str
    candidate: Stats | None = None
    baseline: Stats | None = None
    baseline_config: str = ""
    speedup: Speedup | None = None
    floor_ms: float = 0.0
    floor: Floor | None = None
    wall: dict[str, WallCheck] = field(default_factory=dict)
    samples_ms: dict[str, list[float]] = field(default_factory=dict)
    timed_check: Any = None  # harness.judge.timed.TimedCheck of the timed launch's outputs


def _sample(side: Side, clock: Clock, index: int) -> float:
    clock.flush_l2()
    clock.start()
    side.launch(index)
    clock.stop()
    clock.sync()
    return clock.elapsed_ms()


def _wall_block(side: Side, clock: Clock, k: int) -> WallCheck:
    clock.sync()
    t0 = clock.now()
    clock.start()
    for i in range(k):
        side.launch(i % side.sets)
    clock.stop()
    clock.sync()
    wall = (clock.now() - t0) * 1e3
    return WallCheck(k, clock.elapsed_ms() / k, wall / k)


def _reps(per_pair_ms: float, plan: TimingPlan) -> int:
    if per_pair_ms <= 0:
        return plan.max_reps
    return int(min(plan.max_reps, max(plan.min_reps, plan.budget_s * 1e3 / per_pair_ms)))


def sample_sides(sides: list[Side], clock: Clock, plan: TimingPlan) -> dict[str, list[float]]:
    """Warm up, then samples of every side, alternating (A B, B A, ...) on rotating input sets."""
    sets = max(1, min(s.sets for s in sides))
    t0 = clock.now()
    for w in range(plan.warmup):
        for s in sides:
            _sample(s, clock, w % sets)
    per_round = (clock.now() - t0) * 1e3 / max(plan.warmup, 1)
    reps = _reps(per_round, plan)
    out: dict[str, list[float]] = {s.name: [] for s in sides}
    for r in range(reps):
        order = sides if r % 2 == 0 else list(reversed(sides))
        for s in order:
            out[s.name].append(_sample(s, clock, r % sets))
    return out


def _bootstrap(base: np.ndarray, cand: np.ndarray, seed: int, rounds: int = 1000) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    b = np.median(rng.choice(base, (rounds, base.size)), axis=1)
    c = np.median(rng.choice(cand, (rounds, cand.size)), axis=1)
    ratio = b / c
    return float(np.quantile(ratio, 0.025)), float(np.quantile(ratio, 0.975))


def judge(detail: TimingDetail, plan: TimingPlan) -> list[Problem]:
    """The problems of a measured comparison (see the module docstring)."""
    out: list[Problem] = []
    cand, base = detail.candidate, detail.baseline
    if cand is None:
        return out
    if detail.floor_ms > 0 and cand.median_ms < detail.floor_ms:
        f = detail.floor
        why = (f"{f.bytes / 1e9:.3f} GB at peak bandwidth: {f.memory_ms:.4f} ms; {f.flops / 1e12:.3f} TFLOP at peak "
               f"rate: {f.compute_ms:.4f} ms") if f else ""
        out.append(Problem(Reason.IMPOSSIBLE_SPEED, f"median {cand.median_ms:.4f} ms is below the roofline floor "
                           f"{detail.floor_ms:.4f} ms ({why})"))
    wc, wb = detail.wall.get("candidate"), detail.wall.get("baseline")
    if wc is not None:
        if wc.events_ms > wc.wall_ms * 1.02 + 0.01:
            out.append(Problem(Reason.CLOCK_MISMATCH, f"events say {wc.events_ms:.4f} ms per launch but the "
                               f"synchronised wall clock only {wc.wall_ms:.4f} ms"))
        if wb is not None:
            gap_c, gap_b = wc.wall_ms - wc.events_ms, max(wb.wall_ms - wb.events_ms, 0.0)
            if gap_c > max(3 * gap_b, gap_b + 0.05):
                out.append(Problem(Reason.CLOCK_MISMATCH, f"the wall clock sees {gap_c:.4f} ms per launch beyond the "
                                   f"events (the baseline: {gap_b:.4f} ms): work outside the measured window"))
    s = detail.speedup
    if s is not None and base is not None:
        if s.value > plan.large_speedup:
            out.append(Problem(Reason.LARGE_SPEEDUP, f"{s} over the baseline: a person should look", Severity.FLAG))
        if s.low <= 1.0 <= s.high or abs(s.value - 1.0) < s.noise:
            out.append(Problem(Reason.WITHIN_NOISE, f"speedup {s} is within the run-to-run noise "
                               f"({s.noise:.1%})", Severity.FLAG))
    return out


def compare(candidate: Side, baseline: Side, clock: Clock, plan: TimingPlan, instance: str,
            floor: Floor | None, baseline_config: str = "") -> tuple[list[Problem], TimingDetail]:
    """Time ``candidate`` against ``baseline`` (alternating) and judge the result."""
    samples = sample_sides([candidate, baseline], clock, plan)
    c, b = np.asarray(samples[candidate.name]), np.asarray(samples[baseline.name])
    detail = TimingDetail(instance, Stats.of(list(c)), Stats.of(list(b)), baseline_config,
                          floor_ms=floor.ms if floor else 0.0, floor=floor, samples_ms={
                              "candidate": [round(x, 6) for x in c], "baseline": [round(x, 6) for x in b]})
    low, high = _bootstrap(b, c, plan.seed)
    detail.speedup = Speedup(float(np.median(b) / np.median(c)), low, high,
                             max(detail.baseline.run_to_run, detail.candidate.run_to_run))
    detail.wall = {"candidate": _wall_block(candidate, clock, plan.block),
                   "baseline": _wall_block(baseline, clock, plan.block)}
    return judge(detail, plan), detail


def time_alone(side: Side, clock: Clock, plan: TimingPlan) -> tuple[Stats, WallCheck]:
    """One side timed alone (the baseline table): its statistics and wall-clock block."""
    samples = sample_sides([side], clock, plan)[side.name]
    return Stats.of(samples), _wall_block(side, clock, plan.block)
