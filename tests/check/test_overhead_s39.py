"""Check-mode overhead, session 39 (bench/results/i10ovh-2026-12-06s39): a window of one buffer's reads only is
tested without merging the kept accesses into it (`RaceDetector._read_pairs`). On random traces (those of
test_race_detector, read-heavy ones too, windows of 1, 8 and 65536 accesses) the detector with it and the
detector that merges every window (`_merged_pairs`, the construction before it) end with the same findings
(witnesses, reasons, counts), the same latest write of every byte and the same reads kept since (records, in
order, and how many identical reads each stands for), and the same records."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symexec.check import races
from symexec.check.hb import Clocks
from symexec.check.races import READ, RaceDetector

import test_race_detector as trd

#: reads more often than test_race_detector's traces, so that many windows hold reads only
_read = st.tuples(st.just("access"), st.integers(0, 2 * trd.T - 1), st.integers(1, 2 * trd.T - 1), st.just(READ),
                  trd._start, st.sampled_from([1, 2, 4, 4, 8, 16]), st.sampled_from([0, 0, 0, 1, 3]),
                  st.integers(0, 2), st.integers(0, 3), st.booleans())


def _merge_always(self: RaceDetector, st_, byte, rec, kind) -> None:
    self._merged_pairs(st_, byte, rec, kind)


def _state(detector: RaceDetector) -> list:
    """Everything the bytes keep, per buffer: latest writes, the reads since (record, count), oldest first."""
    out = []
    for st_ in sorted(detector._buffers.values(), key=lambda s: s.order):
        w = st_.lastw.dense(whole_pages=True).copy() if st_._dense else st_.lastw.materialised().copy()
        keys = np.arange(st_.nbytes)
        heads = np.array([int(st_.rhead[int(k)]) for k in keys], np.int64)
        has = heads >= 0
        reads = ([], [], []) if not has.any() else detector._reads(keys[has], heads[has])
        out.append((st_.order, w.tolist(), [np.asarray(x).tolist() for x in reads], sorted(st_.same),
                    sorted(st_.found_key.items())))
    return out


def _run(ops, ctas: int, window: int, merge: bool, monkeypatch) -> tuple:
    monkeypatch.setattr(races, "WINDOW", window)
    if merge:
        monkeypatch.setattr(RaceDetector, "_pairs", _merge_always)
    try:
        clocks = Clocks(ctas, trd.T)
        detector = RaceDetector(clocks, trd.T)
        trd._trace(ops, ctas, detector, clocks)
        found = trd._new(detector.races())
        records = {k: detector.R[k][:detector.R.n].tolist() for k in ("time", "lane", "kind", "pc")}
        return found, _state(detector), records, detector.same_value
    finally:
        monkeypatch.undo()


@settings(max_examples=300, deadline=None)
@given(ops=st.lists(st.one_of(trd._access, _read, _read, trd._barrier), min_size=1, max_size=40),
       ctas=st.integers(1, 2), window=st.sampled_from([1, 8, 1 << 16]))
def test_read_windows_keep_what_the_merge_keeps(ops, ctas: int, window: int) -> None:
    with pytest.MonkeyPatch.context() as mp:
        fast = _run(ops, ctas, window, False, mp)
    with pytest.MonkeyPatch.context() as mp:
        merged = _run(ops, ctas, window, True, mp)
    assert fast == merged, repr((ops, ctas, window))


def _races(ops) -> list:
    """The races one CTA's trace `ops` leaves (races.WINDOW as the caller set it)."""
    clocks = Clocks(1, trd.T)
    detector = RaceDetector(clocks, trd.T)
    trd._trace(ops, 1, detector, clocks)
    return detector.races()


def test_read_window_after_a_write_races_and_a_barrier_orders_it(monkeypatch) -> None:
    """Thread 1 reads 4 bytes thread 0 wrote, in a window of reads only: a race without a barrier between
    (both bytes' pairs counted), none with one."""
    ops = [("access", 0, 1, races.WRITE, 0, 4, 0, 1, 0, True), ("access", 1, 1, READ, 0, 4, 0, 0, 1, True)]
    monkeypatch.setattr(races, "WINDOW", 1)
    for barrier, expect in ((False, [(0, races.WRITE, 1, READ, 0, 3, 4)]), (True, [])):
        trace = ops[:1] + ([("barrier", 0, 0b11)] if barrier else []) + ops[1:]
        got = _races(trace)
        assert [(p.a.pc, p.a.kind, p.b.pc, p.b.kind, p.byte, p.last, p.count) for p in got] == expect



@pytest.mark.parametrize("window", [8, 1 << 16])
def test_read_window_pairs_each_byte_with_its_own_write(window: int, monkeypatch) -> None:
    """Lane 0 writes bytes 0-3, a barrier of lanes 0-2, lane 1 writes bytes 4-7; then lane 2 reads bytes 0-3
    and lane 3 bytes 4-7. With windows of 8 byte accesses the two reads form a window of reads only: each
    read is tested against its own bytes' latest write, so lane 3's read races with lane 1's write (4 byte
    pairs), and lane 2's, ordered after lane 0's write by the barrier, does not. The same in one window with
    the writes (65536: the merge)."""
    ops = [("access", 0, 1, races.WRITE, 0, 4, 0, 1, 0, True), ("barrier", 0, 0b111),
           ("access", 1, 1, races.WRITE, 4, 4, 0, 1, 1, True), ("access", 2, 1, READ, 0, 4, 0, 0, 2, True),
           ("access", 3, 1, READ, 4, 4, 0, 0, 3, True)]
    monkeypatch.setattr(races, "WINDOW", window)
    calls = []
    read_pairs = RaceDetector._read_pairs
    monkeypatch.setattr(RaceDetector, "_read_pairs",
                        lambda self, *a: (calls.append(a[1].size), read_pairs(self, *a))[1])
    got = _races(ops)
    assert calls == ([2] if window == 8 else [])  # the two reads' granules (4 bytes each), in one window
    assert [(p.a.pc, p.a.lane, p.b.pc, p.b.lane, p.byte, p.last, p.count) for p in got] == [(1, 1, 3, 3, 4, 7, 4)]
