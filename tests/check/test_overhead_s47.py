"""Check-mode overhead, session 47 (bench/results/ovh47b-2026-12-07s47): exact speed-ups of the race detector's
window pass. The detector must report and keep exactly what it did before them (tests/check/races_before_s47.py,
main's pass kept verbatim): on random traces (reads, writes, atomics, strong accesses, barriers, identical
re-reads, accesses through the async proxy, runs of equal-width accesses, 1-2 CTAs, shared and global memory,
windows of 1, 8 and 65536 byte accesses, eager collection on or off) the findings (every field of every pair,
sites included), the same-value count, the reasons left out, every byte's kept state (latest write, reads since
with their counts) and the records are equal. The new helpers are checked against the numpy formulas they
replace."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symexec.check import races
from symexec.check.hb import Clocks, Kind, STAMPED
from symexec.check.races import ATOMIC, READ, WRITE, Event, RaceDetector, Records
from symexec.events import Buffer, MemSpace

import races_before_s47 as before
import test_overhead_s39 as s39
import test_race_detector as trd

T = trd.T

#: ("access", first lane, lanes, kind, start, bytes, strong, value, pc, shared) as test_race_detector's, plus a
#: proxy (0 generic, 1 async) and "repeat" (the previous access again: a thread polling)
_access = st.tuples(trd._access, st.sampled_from([0, 0, 0, 1])).map(lambda t: (*t[0], t[1]))
_read = st.tuples(s39._read, st.sampled_from([0, 0, 1])).map(lambda t: (*t[0], t[1]))
#: a run of accesses of one width (RaceDetector._step takes their keys in one `entries`): lanes of one
#: instruction each, consecutive and aligned as a vector load of a tile is
_run = st.tuples(st.sampled_from([READ, READ, WRITE]), st.sampled_from([1, 2, 4, 8, 16]), st.integers(2, 4),
                 st.integers(0, 3), st.sampled_from([0, 16, 64, 128]), st.booleans()).map(
    lambda t: [("access", 0, 2 * T, t[0], t[4] + i * t[1], t[1], 0, 3, t[3], t[5], 0) for i in range(t[2])])
_ops = st.lists(st.one_of(_access, _access, _read, trd._barrier, st.just(("repeat",)), _run), min_size=1,
                max_size=30).map(lambda xs: [y for x in xs for y in (x if isinstance(x, list) else [x])])


def _trace(ops, ctas: int, detector: RaceDetector, clocks: Clocks) -> None:
    """test_race_detector._trace with a proxy per access and repeats."""
    detector.shared_bytes = trd.STRIDE
    pk = STAMPED.index(Kind.P_GLOBAL)
    last = None
    for time, op in enumerate(ops, start=1):
        if op[0] == "barrier":
            _, cta, mask = op
            if cta >= ctas:
                continue
            rows = np.array([cta * T + t for t in range(T) if mask >> t & 1])
            clocks.release(rows, ("bar", time))
            clocks.acquire(rows, ("bar", time))
            continue
        if op[0] == "repeat":
            if last is None:
                continue
            op = last
        last = op
        _, first, count, kind, start, nb, strong, value, pc, shared, proxy = op
        lanes = np.arange(first, min(first + count, ctas * T))
        if lanes.size == 0:
            continue
        s = clocks.stamp(lanes)
        flat = start + np.arange(nb)[None, :] + np.zeros((lanes.size, 1), np.int64)
        if kind != READ and lanes.size > 1 and value == 0:
            flat = flat + (lanes[:, None] % 2) * nb
        if value == 3:  # lanes side by side in their CTA's window (a vector access of a tile)
            flat = flat + (lanes[:, None] % T) * nb * 4
        if shared:
            buf, size = Buffer(MemSpace.SHARED, 0), ctas * trd.STRIDE
            flat = flat + (lanes[:, None] // T) * trd.STRIDE
        else:
            buf, size = Buffer(MemSpace.GLOBAL, 0), trd.STRIDE * T * 8
        values = (np.full(lanes.size, value, np.uint64) if value < 2 else lanes.astype(np.uint64)) \
            if kind != READ else None
        detector.add(Event(time, pc, kind, strong, buf, lanes, flat, lanes, s.bases[[0, pk]].astype(np.int32),
                           s.epochs, values, values, size=size, proxy=proxy,
                           consecutive=bool((np.diff(flat, axis=1) == 1).all())))


def _everything(cls, ops, ctas: int, window: int, gc: bool, monkeypatch) -> tuple:
    monkeypatch.setattr(races, "WINDOW", window)
    if gc:
        monkeypatch.setattr(races, "GC_EVERY", 4)
        monkeypatch.setattr(races, "GC_ALWAYS", True)
    clocks = Clocks(ctas, T)
    detector = cls(clocks, T)
    _trace(ops, ctas, detector, clocks)
    found = repr(detector.races())
    records = {k: detector.R[k][:detector.R.n].tolist() for k in ("time", "ev", "lane", "kind", "pc", "proxy")}
    return (found, detector.same_value, sorted(detector.left_out), s39._state(detector), records,
            detector._node_mult[:detector._nodes].tolist())


@settings(max_examples=400, deadline=None)
@given(ops=_ops, ctas=st.integers(1, 2), window=st.sampled_from([1, 8, 64, 1 << 16]), gc=st.booleans())
def test_window_pass_keeps_and_reports_what_it_did_before(ops, ctas: int, window: int, gc: bool) -> None:
    with pytest.MonkeyPatch.context() as mp:
        now = _everything(RaceDetector, ops, ctas, window, gc, mp)
    with pytest.MonkeyPatch.context() as mp:
        then = _everything(before.DetectorBefore, ops, ctas, window, gc, mp)
    assert now == then, repr((ops, ctas, window, gc))


def test_a_run_of_vector_reads_is_keyed_in_one_call_and_a_race_in_it_is_found(monkeypatch) -> None:
    """Lanes 0-7 store a tile bytewise, then (no barrier) read it back as four 16-byte rows per lane in four
    instructions of one width, all in one window: the reads' keys come from one `entries` call (the writes
    touched the page, and its granules fit the reads), and the reads race with the bytes' writers, as before."""
    ops = [("access", 0, 2 * T, WRITE, i, 1, 0, 3, 0, True, 0) for i in range(16)] + \
          [("access", 0, 2 * T, READ, 16 * i, 16, 0, 3, 1, True, 0) for i in range(4)]
    calls = []
    entries = races._BufferState.entries
    monkeypatch.setattr(races._BufferState, "entries",
                        lambda self, flat, touch=True: (calls.append((flat.shape[0], touch)),
                                                        entries(self, flat, touch))[1])
    got = []
    for cls in (RaceDetector, before.DetectorBefore):
        clocks = Clocks(2, T)
        detector = cls(clocks, T)
        _trace(ops, 2, detector, clocks)
        got.append(repr(detector.races()))
    assert (4 * T * 2, False) in calls  # the four reads' rows at once
    assert got[0] == got[1] and "RacePair" in got[0]


@settings(max_examples=300, deadline=None)
@given(bits=st.lists(st.booleans(), max_size=200), dense=st.sampled_from([0.0, 0.05, 0.5, 1.0]), seed=st.integers(0, 99))
def test_last_and_next_true_positions_are_the_accumulate_formulas(bits, dense: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    for mask in (np.array(bits, bool), rng.random(len(bits) * 3) < dense):
        n = mask.size
        pos = np.arange(n)
        assert races._last_at_or_before(mask).tolist() == np.maximum.accumulate(np.where(mask, pos, -1)).tolist()
        assert races._next_at_or_after(mask).tolist() == \
            np.minimum.accumulate(np.where(mask, pos, n)[::-1])[::-1].tolist()


def test_record_flags_say_whether_any_record_is_strong_async_an_agents_or_atomic() -> None:
    R = Records()
    assert not (R.any_strong or R.any_proxy or R.any_agent or R.any_atomic)
    R.append(3, kind=np.int8(READ), strong=np.int8(0), proxy=np.int8(0), slot=np.array([0, 1, 0], np.int8))
    assert not (R.any_strong or R.any_proxy or R.any_agent or R.any_atomic)
    R.append(2, kind=np.array([WRITE, ATOMIC], np.int8), strong=np.array([0, 3], np.int8), proxy=np.int8(0),
             slot=np.int8(0))
    assert R.any_atomic and R.any_strong and not (R.any_proxy or R.any_agent)
    R.append(1, kind=np.int8(READ), strong=np.int8(0), proxy=np.int8(1), slot=np.int8(-1))
    assert R.any_proxy and R.any_agent
    R.keep(np.array([0], np.int64))  # dropping records never clears a flag (a True flag only costs time)
    assert R.any_strong and R.any_proxy and R.any_agent and R.any_atomic
