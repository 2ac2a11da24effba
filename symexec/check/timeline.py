"""The synchronisation each thread took part in, for witnesses: a race is shown as a timeline of
the two threads' accesses with the barrier and mbarrier epochs (releases and acquires) and fences
between them.

`SyncLog` is an observer beside `CheckState`: every Release/Acquire/Fence is kept with the check
state's instruction clock (`CheckState.time`) and the threads (clock rows) as runs of consecutive
rows, which keeps a whole CTA's barrier arrival to one pair of numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ptx_parser import ast as A

from ..events import Acquire, Fence, Observer, Release, SyncKind, SyncPoint


@dataclass(frozen=True)
class SyncRecord:
    time: int
    what: str  # "arrive" (release), "complete" (acquire), "fence"
    ins: A.Instruction | None
    point: SyncPoint | None
    runs: np.ndarray  # (k, 2) [first, last] clock rows

    def has(self, row: int) -> bool:
        r = self.runs
        return bool(((r[:, 0] <= row) & (row <= r[:, 1])).any())


def _runs(rows: np.ndarray) -> np.ndarray:
    v = np.asarray(rows, dtype=np.int64).reshape(-1)
    if v.size and v[-1] - v[0] == v.size - 1 and np.count_nonzero(np.diff(v) != 1) == 0:
        return np.array([[v[0], v[-1]]], np.int64)  # one run of consecutive rows, ascending: np.unique's too
    v = np.unique(v)
    if v.size == 0:
        return np.zeros((0, 2), np.int64)
    cuts = np.nonzero(np.diff(v) != 1)[0] + 1
    starts = np.concatenate(([0], cuts))
    ends = np.concatenate((cuts - 1, [v.size - 1]))
    return np.stack([v[starts], v[ends]], axis=1)


class SyncLog(Observer):
    """Records synchronisation events of a check-mode run (after `state`, which stamps the time)."""

    def __init__(self, state) -> None:
        self.state = state
        self.records: list[SyncRecord] = []
        self._arrived_at: dict[SyncPoint, A.Instruction] = {}  # the instruction a completion belongs to

    def _add(self, what: str, lanes: np.ndarray, ins, point) -> None:
        st = self.state
        self.records.append(SyncRecord(st.time, what, ins, point, _runs(st.rows(np.asarray(lanes)))))

    def on_release(self, ev: Release) -> None:
        ins = ev.ins or self.state.ins
        if ins is not None:
            self._arrived_at[ev.point] = ins
        self._add("arrive", ev.lanes, ins, ev.point)

    def on_acquire(self, ev: Acquire) -> None:
        self._add("complete", ev.lanes, ev.ins or self._arrived_at.get(ev.point), ev.point)

    def on_fence(self, ev: Fence) -> None:
        self._add("fence", ev.lanes, ev.ins, None)

    def of(self, row: int, t0: int, t1: int, context: int = 2, most: int = 24) -> list[SyncRecord]:
        """Thread `row`'s records from time t0 to t1, and up to `context` before t0."""
        mine = [r for r in self.records if r.time <= t1 and r.has(row)]
        before = [r for r in mine if r.time < t0][-context:]
        inside = [r for r in mine if r.time >= t0]
        return before + inside[:most]


def describe_point(p: SyncPoint | None) -> str:
    if p is None:
        return ""
    if p.kind is SyncKind.BARRIER:
        return f"barrier {p.ident[0]}, instance {p.ident[1]}"
    if p.kind is SyncKind.MBARRIER:
        off = p.ident[0]
        phase = p.ident[2] if len(p.ident) > 2 else "?"
        return f"mbarrier at shared 0x{off:x}, phase {phase}"
    if p.kind is SyncKind.WARP_SYNC:
        return f"warp {p.ident[0]} sync #{p.ident[1] if len(p.ident) > 1 else 0}"
    return f"{p.kind.value} {p.ident}"


__all__ = ["SyncLog", "SyncRecord", "describe_point"]
