"""Check-mode overhead, session 40 (bench/results/i10ovh2-2026-12-06s40): a release publishes every CTA's
snapshots of every clock at once (`Clocks._release_uniform`) and an acquire joins every clock of a CTA at once
(`Clocks._join_uniform`) when each CTA's threads share one base id per clock (after a barrier, the common case),
instead of one `_clock` / `_join` per CTA and clock. On random sequences of releases (some relaxed), acquires
(some relaxed, some direct, some not consuming), proxy and tcgen05 fences (which give one CTA's threads different
base ids), stream issues and observations (own entries beyond the epoch) over thread sets in any order (repeats
too, which take the per-kind path), the clocks with and without the shortcuts end in the same state after every
step: the same base vectors in the same order, the same base ids and own entries, the same snapshots pending."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symexec.check.hb import Clocks, Kind
from symexec.events import Stream

T = 4  # threads per CTA

_rows = st.lists(st.integers(0, 3 * T - 1), min_size=1, max_size=3 * T)
_op = st.one_of(
    st.tuples(st.just("release"), _rows, st.integers(0, 2), st.booleans(), st.booleans()),
    st.tuples(st.just("acquire"), _rows, st.integers(0, 2), st.booleans(), st.booleans(), st.booleans(), st.booleans()),
    st.tuples(st.just("fence"), _rows, st.sampled_from([Kind.P_SHARED, Kind.P_GLOBAL, Kind.B])),
    st.tuples(st.just("after"), _rows),
    st.tuples(st.just("issue"), _rows, st.sampled_from(list(Stream))),
    st.tuples(st.just("observe"), _rows, st.sampled_from(list(Stream)), st.integers(0, 3), st.booleans()))


def _rows_of(rows: list[int], ctas: int, ordered: bool) -> np.ndarray:
    """Thread rows of the first `ctas` CTAs: ascending and distinct (as events give them) when `ordered`."""
    r = np.array([x for x in rows if x < ctas * T], np.int64)
    return np.unique(r) if ordered else r


def _apply(c: Clocks, op: tuple, ctas: int) -> None:
    kind = op[0]
    if kind == "release":
        _, rows, key, relaxed, ordered = op
        r = _rows_of(rows, ctas, ordered)
        if r.size:
            c.release(r, ("bar", key), relaxed=relaxed)
    elif kind == "acquire":
        _, rows, key, consume, relaxed, direct, ordered = op
        r = _rows_of(rows, ctas, ordered)
        if r.size:
            c.acquire(r, ("bar", key), consume=consume, relaxed=relaxed, direct=direct)
    elif kind == "fence":
        r = _rows_of(op[1], ctas, True)
        if r.size:
            c.fence(r, op[2])
    elif kind == "after":
        r = _rows_of(op[1], ctas, True)
        if r.size:
            c.after_thread_sync(r)
    elif kind == "issue":
        r = _rows_of(op[1], ctas, True)
        if r.size:
            c.stream_issue(op[2], r)
    else:
        _, rows, stream, upto, fence = op
        r = _rows_of(rows, ctas, True)
        if r.size:
            c.stream_observe(stream, r, np.full(r.size, upto, np.int32), fence)


def _state(c: Clocks) -> tuple:
    pending = sorted((k, sorted((str(kk), v.tolist()) for kk, v in snaps.items())) for k, snaps in c.pending.items())
    return (c.n_bases, c.table.tolist(), c.base.tolist(), c.owns.tolist(), c.next_op.tolist(), pending)


@settings(max_examples=300, deadline=None)
@given(ops=st.lists(_op, min_size=1, max_size=30), ctas=st.integers(1, 3))
def test_uniform_release_and_join_keep_the_clocks_of_the_per_kind_path(ops, ctas: int) -> None:
    fast, slow = Clocks(ctas, T), Clocks(ctas, T)
    with pytest.MonkeyPatch.context() as mp:
        for op in ops:
            mp.undo()
            _apply(fast, op, ctas)
            mp.setattr(Clocks, "_release_uniform", lambda self, *a: False)
            mp.setattr(Clocks, "_join_uniform", lambda self, *a: False)
            _apply(slow, op, ctas)
            assert _state(fast) == _state(slow), repr(op)


def _ordered(c: Clocks, a: int, epoch: int, b: int) -> bool:
    """Is thread a's access at `epoch` ordered before thread b's access now?"""
    s = c.stamp(np.array([b]))
    return bool(c.ordered(np.array([a]), np.array([epoch], np.int32), np.array([b]), s.bases[0], s.owns[0])[0])


@pytest.mark.parametrize("shortcut", [True, False])
def test_barrier_orders_the_threads_that_take_part(shortcut: bool, monkeypatch) -> None:
    """Two CTAs of 4 threads: threads 0-2 of CTA 0 and all of CTA 1 (rows 4-7) pass a barrier (one release of
    all of them, then each CTA's acquire); CTA 0's thread 3 does not. Thread 0's access before it is ordered
    before thread 1's access after it, and not before thread 3's; row 4's before row 7's. A stream operation
    thread 2 issued and observed before the barrier is ordered before thread 1's later access through the
    published own entry, and one issued after it is not. With the shortcut, the release takes it (once)."""
    calls = []
    if shortcut:
        release_uniform = Clocks._release_uniform
        monkeypatch.setattr(Clocks, "_release_uniform",
                            lambda self, *a: (calls.append(1), release_uniform(self, *a))[1])
    else:
        monkeypatch.setattr(Clocks, "_release_uniform", lambda self, *a: False)
        monkeypatch.setattr(Clocks, "_join_uniform", lambda self, *a: False)
    c = Clocks(2, T)
    epoch0, epoch4 = int(c.owns[Kind.C, 0, 0]), int(c.owns[Kind.C, 0, 4])
    stream = Stream.CP_ASYNC
    op = c.stream_issue(stream, np.array([2]))
    c.stream_observe(stream, np.array([2]), op.epochs, False)
    c.release(np.array([0, 1, 2, 4, 5, 6, 7]), ("bar", 0))
    c.acquire(np.array([0, 1, 2]), ("bar", 0))
    c.acquire(np.array([4, 5, 6, 7]), ("bar", 0))
    late = c.stream_issue(stream, np.array([2]))
    assert calls == ([1] if shortcut else [])
    assert _ordered(c, 0, epoch0, 1)
    assert not _ordered(c, 0, epoch0, 3)
    assert _ordered(c, 4, epoch4, 7)
    stream_row = int(c.stream_rows(stream, np.array([2]))[0])
    assert _ordered(c, stream_row, int(op.epochs[0]), 1)
    assert not _ordered(c, stream_row, int(late.epochs[0]), 1)
