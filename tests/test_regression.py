"""Every kernel in tests/regression/ gets the verdict its `// expect:` header states.

Each case is a small hand-written PTX kernel (most come as a broken kernel and its fixed twin);
the header gives the expected verdict, a one-line reason and the launch. The expectations follow
the PTX ISA, not the checker: where the checker is known to disagree the case is marked
xfail(strict=True) with the reason, so that fixing the checker turns it into an XPASS failure and
the mark must then be removed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from volta.check_cli import check_file, header

HERE = Path(__file__).parent / "regression"
CASES = sorted(p for p in HERE.glob("*.ptx") if "expect" in header(p))

# Known checker gaps (file stem -> why the expectation is right and the checker is not).
KNOWN_GAPS: dict[str, str] = {
    "barrier_after_warp_exit": (
        "checker says deadlock: warp 1 branches to the final ret and is parked at the reconvergence "
        "point waiting for warp 0, which waits at bar.sync; reconvergence is per warp, so warp 1 "
        "exits and the barrier runs with an exited warp (divergence, 9.7.13.1)"),
    "loop_barrier_trip_differs": (
        "checker says deadlock: warp 0 leaves the loop and is parked at the loop exit waiting for "
        "warp 1 (reconvergence across warps); warp 0 really exits and warp 1's second bar.sync "
        "runs without it (divergence, 9.7.13.1)"),
    "named_barrier_count_mismatch": (
        "checker says race_free: bar.arrive 1, 128 and bar.sync 1, 64 on one barrier; the last "
        "count wins in the model, but warps must agree on barrier name and thread count (9.7.13.1)"),
    "warp_smem_reduction_bar_warp_sync": (
        "checker says race: bar.warp.sync is checked for membermask but adds no happens-before "
        "edge, although it orders memory among the participating lanes (9.7.13.2)"),
    "atomic_vs_plain_store_race": (
        "checker says race_free: the plain st by thread 0 is compared only with the first lane of "
        "each collapsed multi-lane atom event (thread 0 itself, program order), and atomic-atomic "
        "pairs are skipped, so the unordered atomics of other threads are never paired with it (8.7.1)"),
    "atomic_vs_plain_load_race": (
        "checker says race_free: same cause as atomic_vs_plain_store_race, for a plain ld (8.7.1)"),
    "barrier_nonaligned_divergent_arms_ok": (
        "checker says race: barrier.sync (no .aligned) reached by the two halves of a warp at two "
        "instructions; the model marks the warp arrived at the first half's arrival, so the barrier "
        "completes before the other half arrives (9.7.13.1 allows non-aligned barriers per thread)"),
    "message_passing_release_acquire": (
        "checker says race: a release store observed by an acquire load creates no happens-before "
        "edge between CTAs in the model (8.8 release/acquire patterns, 8.9.4 synchronizes-with)"),
    "strong_mixed_size_race": (
        "checker says race_free: a u32 relaxed.gpu store and a u16 relaxed.gpu load of the same "
        "bytes are treated as morally strong, but they do not overlap completely (8.7)"),
    "barrier_red_popc_ok": (
        "checker says unsupported: bar.red.popc is not modelled; it is a CTA-wide barrier like "
        "bar.sync plus a population count (9.7.13.1)"),
}


@pytest.mark.parametrize("path", [
    pytest.param(p, id=p.stem, marks=[pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[p.stem])]
                 if p.stem in KNOWN_GAPS else [])
    for p in CASES])
def test_regression_case(path: Path) -> None:
    expected = header(path)["expect"]
    report = check_file(path)
    assert report.verdict.split(":")[0] == expected, (
        f"{path.name}: expected {expected}, got {report.verdict}: "
        + (report.findings[0].message if report.findings else "; ".join(report.notes[:1])))


def test_suite_is_complete() -> None:
    """Every case states a verdict, a reason and a launch, and the known gaps name real files."""
    assert len(CASES) >= 60
    for p in HERE.glob("*.ptx"):
        h = header(p)
        assert {"expect", "why", "launch"} <= set(h), f"{p.name}: header lacks {({'expect', 'why', 'launch'} - set(h))}"
    stems = {p.stem for p in CASES}
    assert set(KNOWN_GAPS) <= stems


def test_suite_is_balanced() -> None:
    """The suite is balanced: at least 20 cases are expected race_free and 30 expected to fail."""
    verdicts = [header(p)["expect"] for p in CASES]
    assert verdicts.count("race_free") >= 20
    assert sum(v != "race_free" for v in verdicts) >= 30
