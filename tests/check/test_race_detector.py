"""The streaming race detector (symexec.check.races) against the batch formulation it replaced
(tests/check/oracle_races.py: every access logged, one pass over the whole log at the end).

Both must report the same pairs: same bytes (first and last), instructions, lanes, reasons and counts. Compared on
the recorded accesses of every regression case (real clocks: barriers, mbarriers, async
operations, proxies, tensor memory, atomics, cross-CTA release/acquire) and on random traces of
threads that access a few bytes (any size and alignment, in global memory and in per-CTA windows of
shared memory) and synchronise at barriers (hypothesis), with windows of a few accesses so that
state carried between windows is exercised.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ptx_parser
import tcgen05  # noqa: F401  (plugs the tensor-core unit into the machine)
from symexec import load_program
from symexec.check import races
from symexec.check.hb import Clocks, Kind, STAMPED
from symexec.check.races import ATOMIC, READ, WRITE, Event, RaceDetector
from symexec.check.run import new_run, run_checked
from symexec.events import Buffer, MemSpace
from volta.inputs import header, spec_launch
from volta.results import BadInput

import oracle_races

REGRESSION = Path(__file__).resolve().parents[1] / "regression"
CASES = sorted(p for p in REGRESSION.glob("*.ptx") if "expect" in header(p))
#: Cases whose full log the all-pairs oracle cannot hold: 128 CTAs run 64 tcgen05.mma each, every one
#: logging its shared-memory operand reads; the oracle's pass over that log was killed by the kernel's
#: OOM killer at 22 GB in the fresh-clone CI run at c433b93. Their verdicts (and the loop summary's
#: agreement with running every iteration) are tested by tests/test_regression.py and tests/check/test_loops.py.
ORACLE_TOO_LARGE = {
    "loop_tcgen05_pipeline_ok": "the oracle's log of 128 CTAs x 64 tcgen05.mma operand reads does not fit in memory",
    "loop_tcgen05_pipeline_late_reuse_race": "the oracle's log of 128 CTAs x 64 tcgen05.mma operand reads does not fit "
                                             "in memory",
    "loop_tcgen05_pipeline_early_reuse_race": "the oracle's log of 128 CTAs x 64 tcgen05.mma operand reads does not "
                                              "fit in memory",
}


def _old(pairs, log) -> list[tuple]:
    return [(q.buffer, q.byte, log[q.a_event].pc, q.a_lane, log[q.b_event].pc, q.b_lane, q.reason, q.benign, q.count,
             max(q.last, q.byte))
            for q in pairs]


def _new(pairs) -> list[tuple]:
    return [(p.buffer, p.byte, p.a.pc, p.a.lane, p.b.pc, p.b.lane, p.reason, p.benign, p.count, max(p.last, p.byte))
            for p in pairs]


@pytest.mark.parametrize("path", [pytest.param(p, id=p.stem, marks=[pytest.mark.skip(reason=ORACLE_TOO_LARGE[p.stem])]
                                               if p.stem in ORACLE_TOO_LARGE else []) for p in CASES])
def test_detector_matches_batch_pass_on_regression_case(path: Path, monkeypatch) -> None:
    monkeypatch.setattr(races, "WINDOW", 64)  # many windows: the state between them matters
    monkeypatch.setattr(races, "GC_EVERY", 256)  # and records dropped as soon as no byte refers to them
    monkeypatch.setattr(races, "GC_ALWAYS", True)
    module = ptx_parser.parse_file(path)
    try:
        launch, fn = spec_launch(path, module, None, None)
    except BadInput:
        pytest.skip("a launch CUDA refuses: nothing runs")
    prog = load_program(module, fn.name)
    run = new_run(prog, launch)
    run.state.log = []
    run_checked(run, prog, launch)
    log = run.state.log
    old = oracle_races.find_races(log, run.state.clocks, run.state.lanes_per_cta)
    assert _new(run.state.detector.races()) == _old(old, log)


# ------------------------------------------------------------------------------------- random traces

T = 4  # threads per CTA
STRIDE = 300  # bytes of "shared memory" per CTA: not a multiple of 16, and over a page of granules

_start = st.one_of(st.integers(0, 24), st.integers(240, 270))
_access = st.tuples(st.just("access"), st.integers(0, 2 * T - 1), st.integers(1, 2 * T - 1),
                    st.sampled_from([READ, READ, WRITE, WRITE, ATOMIC]), _start,
                    st.sampled_from([1, 2, 4, 4, 8, 16]), st.sampled_from([0, 0, 0, 1, 3]), st.integers(0, 2),
                    st.integers(0, 3), st.booleans())
_barrier = st.tuples(st.just("barrier"), st.integers(0, 1), st.integers(1, (1 << T) - 1))


def _trace(ops, ctas: int, detector: RaceDetector, clocks: Clocks) -> list[Event]:
    log = []
    detector.shared_bytes = STRIDE
    pk = STAMPED.index(Kind.P_GLOBAL)
    for time, op in enumerate(ops, start=1):
        if op[0] == "barrier":  # threads `mask` of one CTA release, then all of them acquire
            _, cta, mask = op
            if cta >= ctas:
                continue
            rows = np.array([cta * T + t for t in range(T) if mask >> t & 1])
            clocks.release(rows, ("bar", time))
            clocks.acquire(rows, ("bar", time))
            continue
        _, first, count, kind, start, nb, strong, value, pc, shared = op
        lanes = np.arange(first, min(first + count, ctas * T))
        if lanes.size == 0:
            continue
        s = clocks.stamp(lanes)
        flat = start + np.arange(nb)[None, :] + np.zeros((lanes.size, 1), np.int64)
        if kind != READ and lanes.size > 1 and value == 0:
            flat = flat + (lanes[:, None] % 2) * nb  # lanes of one store hit two places, pairwise shared
        if shared:  # each CTA its own window
            buf, size = Buffer(MemSpace.SHARED, 0), ctas * STRIDE
            flat = flat + (lanes[:, None] // T) * STRIDE
        else:
            buf, size = Buffer(MemSpace.GLOBAL, 0), STRIDE
        values = (np.full(lanes.size, value, np.uint64) if value < 2 else lanes.astype(np.uint64)) \
            if kind != READ else None
        e = Event(time, pc, kind, strong, buf, lanes, flat, lanes, s.bases[[0, pk]].astype(np.int32), s.epochs,
                  values, values, size=size)
        detector.add(e)
        log.append(e)
    return log


@settings(max_examples=200, deadline=None)
@given(ops=st.lists(st.one_of(_access, _access, _barrier), min_size=1, max_size=40), ctas=st.integers(1, 2),
       window=st.sampled_from([1, 8, 1 << 16]), gc=st.booleans(), defer=st.sampled_from([1, 2, 4096]))
def test_detector_matches_batch_pass_on_random_traces(ops, ctas: int, window: int, gc: bool, defer: int) -> None:
    """`gc`: drop the unreferenced records after every few accesses; `defer`: how many reads of a global
    buffer not written yet are kept aside before they are tested (RaceDetector.flush)."""
    saved = races.WINDOW, races.GC_EVERY, races.GC_ALWAYS, races.DEFER_MAX_EVENTS
    races.WINDOW = window
    races.DEFER_MAX_EVENTS = defer
    if gc:
        races.GC_EVERY, races.GC_ALWAYS = 4, True
    try:
        clocks = Clocks(ctas, T)
        detector = RaceDetector(clocks, T)
        log = _trace(ops, ctas, detector, clocks)
        new = _new(detector.races())
    finally:
        races.WINDOW, races.GC_EVERY, races.GC_ALWAYS, races.DEFER_MAX_EVENTS = saved
    assert new == _old(oracle_races.find_races(log, clocks, T), log), repr((ops, ctas, window, defer))


@pytest.mark.parametrize("window", [1, 1 << 16])
@pytest.mark.parametrize("defer", [1, 4096])
def test_read_kept_aside_races_with_the_first_write(window: int, defer: int, monkeypatch) -> None:
    """Thread 0 reads 4 bytes of a global buffer nothing has written, then thread 1 writes them with no
    synchronisation: the read, kept aside until a write comes (RaceDetector.flush), races with it."""
    monkeypatch.setattr(races, "WINDOW", window)
    monkeypatch.setattr(races, "DEFER_MAX_EVENTS", defer)
    ops = [("access", 0, 1, READ, 0, 4, 0, 0, 0, False), ("access", 1, 1, WRITE, 0, 4, 0, 0, 1, False)]
    clocks = Clocks(1, T)
    detector = RaceDetector(clocks, T)
    log = _trace(ops, 1, detector, clocks)
    got = detector.races()
    assert [(p.a.pc, p.a.kind, p.b.pc, p.b.kind, p.byte, p.last) for p in got] == [(0, READ, 1, WRITE, 0, 3)]
    assert _new(got) == _old(oracle_races.find_races(log, clocks, T), log)
    assert not detector._unwritten  # tested: nothing left aside


@pytest.mark.parametrize("ops, ctas, count", [
    # two CTAs' windows, each a 16-byte read by 4 lanes and an 8-byte atomic of lanes hitting two places
    ([("access", 0, 8, READ, 0, 16, 0, 0, 0, True), ("access", 0, 8, ATOMIC, 0, 8, 0, 0, 0, True)], 1, 64),
    ([("access", 0, 8, READ, 0, 16, 0, 0, 0, True), ("access", 0, 8, ATOMIC, 0, 8, 0, 0, 0, True)], 2, 128),
    # 67 pairs in CTA 0's window and 16 in CTA 1's (the CTAs alone: 67 and 16)
    ([("access", 0, 5, READ, 0, 1, 0, 0, 0, True), ("access", 0, 5, ATOMIC, 0, 8, 0, 0, 0, True),
      ("access", 0, 6, READ, 0, 16, 0, 0, 0, True)], 2, 83),
])
def test_atomic_and_plain_pairs_of_many_bytes_count_every_byte(ops, ctas: int, count: int) -> None:
    """Plain accesses and atomics of one pair of instructions meet on more bytes (24, 32) than the 20
    findings a report lists. The atomic-vs-plain test finds one pair per byte; all of them join the
    instructions' one finding, whose count is every conflicting byte pair. The detector and the oracle
    both cut the per-byte pairs at 20 before joining them (the detector said 79 for 83, the oracle 116
    for 128: the random traces failed on about 1 seed in 20)."""
    clocks = Clocks(ctas, T)
    detector = RaceDetector(clocks, T)
    log = _trace(ops, ctas, detector, clocks)
    new = _new(detector.races())
    assert [q[8] for q in new] == [count]
    assert new == _old(oracle_races.find_races(log, clocks, T), log)


def test_refined_granule_past_the_buffer_end() -> None:
    """A buffer whose size (STRIDE = 300 bytes) is not a multiple of the 16-byte granule: refining its last
    page copies the state of its last granule (288..303) to the finer granules up to that granule's end,
    past the buffer's last byte. A small buffer's per-byte state is kept dense (races.DENSE_MAX), and must
    reach to its last page's end as the paged state does (it raised IndexError)."""
    ops = [("access", 0, 1, WRITE, 256, 16, 0, 0, 0, False),  # page 1 starts with 16-byte granules
           ("access", 1, 1, WRITE, 258, 2, 0, 1, 1, False),  # 2-byte granules from now on: a race with the first
           ("access", 2, 1, READ, 288, 4, 0, 0, 2, False)]
    clocks = Clocks(1, T)
    detector = RaceDetector(clocks, T)
    log = _trace(ops, 1, detector, clocks)
    new = _new(detector.races())
    assert new and new == _old(oracle_races.find_races(log, clocks, T), log)


def test_finding_spans_the_bytes_of_all_its_pairs() -> None:
    """One pair of instructions races at shared byte 1 in CTA 0 (a read, then another lane's write) and at
    byte 300 (CTA 1's window: two lanes' writes): one finding counting 2 byte pairs, spanning 1..300. The
    oracle once lost the span of the first pair it met (byte 300) when a lower byte joined it (seed 57)."""
    ops = [("access", 0, 1, READ, 0, 2, 0, 0, 2, True), ("access", 5, 1, WRITE, 0, 1, 0, 0, 2, True),
           ("access", 0, 5, WRITE, 0, 1, 0, 0, 0, True)]
    clocks = Clocks(2, T)
    detector = RaceDetector(clocks, T)
    log = _trace(ops, 2, detector, clocks)
    got = [p for p in detector.races() if (p.a.pc, p.b.pc) == (2, 0)]
    assert [(p.byte, p.last, p.count) for p in got] == [(1, 300, 2)]
    assert _new(detector.races()) == _old(oracle_races.find_races(log, clocks, T), log)
