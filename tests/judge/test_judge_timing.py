"""The timing logic on a simulated clock (integrity classes 10-13): L2 flushed before every timed
launch, inputs rotated, candidate and baseline alternated, medians with a bootstrap interval, the
roofline floor, the wall-clock cross-check, flags for noise and for >10x."""

from __future__ import annotations

from judge_fakes import FakeClock, FakeSide

from harness import suite
from harness.judge import roofline
from harness.judge.report import Reason, Severity
from harness.judge.timing import Stats, TimingPlan, compare, time_alone

PLAN = TimingPlan(warmup=2, min_reps=30, max_reps=30, block=10)


def _compare(c_ms: float, b_ms: float, floor=None, jitter=0.0, deferred=0.0, plan=PLAN):
    clock = FakeClock(1)
    cand = FakeSide("candidate", c_ms, clock, jitter=jitter, deferred=deferred)
    base = FakeSide("baseline", b_ms, clock, jitter=jitter)
    problems, detail = compare(cand, base, clock, plan, "bench", floor)
    return clock, cand, base, problems, detail


def test_faster_candidate_and_its_interval() -> None:
    _, cand, base, problems, d = _compare(1.0, 2.0, jitter=0.01)
    assert problems == []
    assert 1.95 < d.speedup.value < 2.05 and d.speedup.low < d.speedup.value < d.speedup.high
    assert d.candidate.n == d.baseline.n == 30 and d.candidate.spread < 0.05


def test_every_timed_launch_follows_an_l2_flush_and_sides_alternate() -> None:
    clock, cand, base, _, _ = _compare(1.0, 2.0)
    sampled = [i for i, e in enumerate(clock.log) if e[0] == "launch"][:2 * (PLAN.warmup + PLAN.max_reps)]
    assert all(clock.log[i - 2] == ("flush",) and clock.log[i - 1] == ("start",) for i in sampled)
    order = [clock.log[i][1] for i in sampled][2 * PLAN.warmup:]
    assert order[:4] == ["candidate", "baseline", "baseline", "candidate"]  # A B B A
    assert set(cand.indices) == {0, 1, 2} and cand.indices[2 * PLAN.warmup:][:6] != [0] * 6  # rotated


def test_below_the_roofline_floor_is_impossible() -> None:
    floor = roofline.floor(suite.get("relu"), "bench", roofline.H200)  # 2^26 fp32 in and out: ~0.112 ms
    _, _, _, problems, _ = _compare(0.01, 0.13, floor=floor)
    assert Reason.IMPOSSIBLE_SPEED in {p.reason for p in problems if p.severity is Severity.REJECT}
    _, _, _, problems, _ = _compare(0.12, 0.13, floor=floor)
    assert Reason.IMPOSSIBLE_SPEED not in {p.reason for p in problems}


def test_work_outside_the_events_is_a_clock_mismatch() -> None:
    _, _, _, problems, d = _compare(0.1, 1.0, deferred=2.0)
    assert Reason.CLOCK_MISMATCH in {p.reason for p in problems}
    assert d.wall["candidate"].wall_ms > d.wall["candidate"].events_ms + 1.5


def test_noise_and_large_speedups_are_flagged_not_rejected() -> None:
    _, _, _, problems, _ = _compare(1.0, 1.0, jitter=0.05)
    assert {p.reason for p in problems} == {Reason.WITHIN_NOISE}
    assert all(p.severity is Severity.FLAG for p in problems)
    _, _, _, problems, _ = _compare(0.05, 1.0)
    assert {p.reason for p in problems} == {Reason.LARGE_SPEEDUP}


def test_reps_follow_the_time_budget() -> None:
    plan = TimingPlan(warmup=2, min_reps=5, max_reps=500, budget_s=0.1)
    _, _, _, _, d = _compare(10.0, 10.0, plan=plan)  # 20 ms per pair: 5 reps fit 0.1 s
    assert d.candidate.n == 5
    stats, wall = time_alone(FakeSide("baseline", 1.0, FakeClock()), FakeClock(), PLAN)
    assert isinstance(stats, Stats) and wall.launches == PLAN.block


def test_run_to_run_spread_is_half_against_half() -> None:
    s = Stats.of([1.0] * 10 + [1.1] * 10)
    assert abs(s.run_to_run - 0.1 / s.median_ms) < 1e-9
