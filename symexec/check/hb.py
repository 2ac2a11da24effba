"""Happens-before between the threads of a CTA: vector clocks advanced by synchronisation.

Each thread's clock has one entry per thread of its CTA; its own entry is its epoch, starting at
1. Arriving at a barrier (bar.sync/bar.arrive, PTX 9.7.13.1) or releasing on an mbarrier publishes
a snapshot and then advances the epoch, so the arriving thread's later accesses are not ordered
before the waiters'. When the barrier completes, each thread that waits on it joins (element-wise
max) the snapshots of all arrivals. An access by thread a at epoch e is ordered before a later
access of thread b iff b's clock at that time has entry a >= e.

Clocks are stored compactly: a thread's clock is a shared *base* vector (one per CTA per
synchronisation, shared by all threads that joined the same things) plus its own epoch. An access
records (base id, epoch) of its thread, which is all a later ordering question needs.
"""

from __future__ import annotations

import numpy as np


class Clocks:
    def __init__(self, n_ctas: int, threads: int) -> None:
        self.T = threads
        self.bases: list[np.ndarray] = [np.zeros(threads, dtype=np.int32)]
        self.base_id = np.zeros(n_ctas * threads, dtype=np.int64)
        self.own = np.ones(n_ctas * threads, dtype=np.int32)
        self.pending: dict[tuple[int, object], np.ndarray] = {}  # (CTA slot, sync object) -> snapshot

    def rows_of(self, lanes: np.ndarray, lanes_per_cta: int) -> np.ndarray:
        """Batch lanes -> clock rows (CTA slot * T + thread index)."""
        return (lanes // lanes_per_cta) * self.T + (lanes % lanes_per_cta)

    def release(self, rows: np.ndarray, key: object) -> None:
        """Threads `rows` publish their clocks into `key` (per CTA) and advance their epochs."""
        ctas = rows // self.T
        for c in np.unique(ctas):
            sel = rows[ctas == c]
            snap = np.max(np.stack([self.bases[b] for b in np.unique(self.base_id[sel])]), axis=0).copy()
            np.maximum.at(snap, sel % self.T, self.own[sel])
            k = (int(c), key)
            prev = self.pending.get(k)
            self.pending[k] = snap if prev is None else np.maximum(prev, snap)
        self.own[rows] += 1

    def acquire(self, rows: np.ndarray, key: object, consume: bool = True) -> None:
        """Threads `rows` join what was released into `key` (a completed barrier or phase)."""
        ctas = rows // self.T
        for c in np.unique(ctas):
            snap = self.pending.get((int(c), key))
            if snap is None:
                continue
            sel = rows[ctas == c]
            for b in np.unique(self.base_id[sel]):
                joined = np.maximum(self.bases[int(b)], snap)
                self.bases.append(joined)
                self.base_id[sel[self.base_id[sel] == b]] = len(self.bases) - 1
            if consume:
                self.pending.pop((int(c), key), None)

    def stamp(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(base id, epoch) of each row now: what an access records."""
        return self.base_id[rows].copy(), self.own[rows].copy()

    def ordered(self, a_rows: np.ndarray, a_epochs: np.ndarray, b_rows: np.ndarray,
                b_bases: np.ndarray) -> np.ndarray:
        """For pairs (a, b) with a earlier: is a ordered before b? The same thread always is."""
        out = a_rows == b_rows
        idx = np.nonzero(~out)[0]
        if idx.size:
            table = np.stack(self.bases)
            seen = table[b_bases[idx], a_rows[idx] % self.T]
            out[idx] = seen >= a_epochs[idx]
        return out
