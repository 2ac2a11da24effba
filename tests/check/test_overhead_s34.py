"""Check-mode overhead, session 34 (bench/results/check-overhead-2026-12-06s34): each change keeps the same
values. `RaceDetector._record_all` appends one-value columns as scalars and writes C's own entry into the
appended rows instead of building (total, SLOTS) arrays: every record column equals the one the previous
construction gave (kept here as the reference), on random traces with and without streams' own entries.
`product_numbers` keeps its leading states per (key, k, rkey): a repeated call gives the bits of the two mix
calls, and the kept states are not changed by a call."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from symexec.check import races
from symexec.check.hb import SLOTS, Clocks
from symexec.check.races import RaceDetector
from symexec.check.shadow import _PRODUCT_FIRST, mix, product_numbers

import test_race_detector as trd


def _record_all_reference(self: RaceDetector, events: list) -> list[np.ndarray]:
    """RaceDetector._record_all as it was at 3ef2214 (every column built as a full array)."""
    ks = [e.lanes.size for e in events]
    total = sum(ks)

    def per_event(values, dtype):
        return np.repeat(np.array(values, dtype), ks)

    def per_lane(arrays):
        return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)

    def per_lane_or(values, default, dtype):
        if all(v is None for v in values):
            return np.full(total, default, dtype)
        return per_lane([np.full(k, default, dtype) if v is None else np.broadcast_to(v, (k,))
                         for v, k in zip(values, ks)])

    hb = per_lane([e.hb for e in events])
    _, col, thread, slot = self.clocks.decode(hb)
    cown = np.full((total, SLOTS), -1, np.int32)
    pown = np.full((total, SLOTS), -1, np.int32)
    plain = [e.owns is None and e.hbrows is None for e in events]
    if all(plain):
        cown[:, 0] = per_lane([e.epochs for e in events])
    else:
        off = 0
        for e, k in zip(events, ks):
            if e.owns is not None:
                cown[off:off + k, :e.owns.shape[1]] = e.owns[0].T
                pown[off:off + k, :e.owns.shape[1]] = e.owns[1].T
            elif e.hbrows is None:
                cown[off:off + k, 0] = e.epochs
            off += k
    ids = self.R.append(
        total, time=per_event([e.time for e in events], np.int64), ev=per_event([e.seq for e in events], np.int64),
        pc=per_event([e.pc for e in events], np.int32), lane=per_lane([e.lanes for e in events]),
        kind=per_event([e.kind for e in events], np.int8), strong=per_event([e.strong for e in events], np.int8),
        row=per_lane([e.rows for e in events]), hbrow=hb,
        base=per_lane([e.bases[0] for e in events]), pbase=per_lane([e.bases[1] for e in events]),
        tbase=per_lane_or([e.tbases for e in events], 0, np.int32),
        epoch=per_lane([e.epochs for e in events]), proxy=per_event([e.proxy for e in events], np.int8),
        col=col, thread=thread, slot=slot,
        hash=per_lane_or([e.hashes for e in events], 0, np.uint64),
        real=per_lane_or([e.real for e in events], 0, np.uint64),
        start=per_lane([e.flat[:, 0] for e in events]), size=per_event([e.flat.shape[1] for e in events], np.int32),
        op=per_event([self._op_id(e) for e in events], np.int32), sem=per_event([e.sem for e in events], np.int8),
        cown=cown, pown=pown, undef=per_lane_or([e.undef for e in events], False, np.bool_),
        path=per_event([self._path_id(e.path) for e in events], np.int32))
    cut = np.cumsum(ks)
    return [ids[a:b] for a, b in zip((0, *cut[:-1].tolist()), cut.tolist())]


def _with_owns(events: list, which: list[bool]) -> None:
    """Give some events own entries of streams (as accesses of threads with streams have), others none."""
    for e, own in zip(events, which):
        if own:
            k = e.lanes.size
            e.owns = np.stack([np.stack([e.epochs, e.epochs + 1]), np.stack([e.epochs + 2, np.full(k, -1)])]) \
                .astype(np.int32)


@settings(max_examples=150, deadline=None)
@given(ops=st.lists(st.one_of(trd._access, trd._access, trd._barrier), min_size=1, max_size=30),
       ctas=st.integers(1, 2), owns=st.lists(st.booleans(), min_size=30, max_size=30),
       window=st.sampled_from([1, 8, 1 << 16]))
def test_record_columns_equal_the_full_array_construction(ops, ctas: int, owns: list[bool], window: int) -> None:
    saved = races.WINDOW
    races.WINDOW = window
    try:
        got = []
        for impl in (RaceDetector._record_all, _record_all_reference):
            clocks = Clocks(ctas, trd.T)
            det = RaceDetector(clocks, trd.T)
            det._record_all = impl.__get__(det)
            det.add = _adding(det, owns)
            trd._trace(ops, ctas, det, clocks)
            det.flush()
            got.append((det.R.n, {k: v[:det.R.n].copy() for k, v in det.R._cols.items()}, trd._new(det.races())))
    finally:
        races.WINDOW = saved
    (n_new, cols_new, found_new), (n_old, cols_old, found_old) = got
    assert n_new == n_old
    for k in cols_old:
        assert cols_new[k].dtype == cols_old[k].dtype, k
        assert np.array_equal(cols_new[k], cols_old[k]), k
    assert found_new == found_old


def _adding(det: RaceDetector, owns: list[bool]):
    add = det.add
    count = [0]

    def wrapped(e):
        _with_owns([e], [owns[count[0] % len(owns)]])
        count[0] += 1
        add(e)
    return wrapped


def test_product_numbers_repeated_calls_keep_their_leading_states() -> None:
    rng = np.random.default_rng(5)
    _PRODUCT_FIRST.clear()
    for rep in range(3):  # the first call makes the (key, k, rkey) states, the others reuse them
        for key, k, rkey in ((11, 0, 7), (11, 1, 7), (12, 0, 7), (11, 0, 8)):
            a, b, c, x, y = (rng.integers(0, 2 ** 63, 9, dtype=np.int64).astype(np.uint64) for _ in range(5))
            for c3 in (c, None):
                h, r = product_numbers(key, k, a, b, c3, rkey, x, y)
                parts = [np.minimum(a, b), np.maximum(a, b)] + ([c] if c3 is not None else [])
                assert np.array_equal(h, mix(key, np.uint64(k), *parts))
                assert np.array_equal(r, mix(rkey, np.minimum(x, y), np.maximum(x, y)))
    assert len(_PRODUCT_FIRST) == 4
    assert all(not v.flags.writeable for v in _PRODUCT_FIRST.values())
