"""Happens-before between the threads of a CTA and its asynchronous operations: vector clocks.

Each thread has one clock entry per column of its CTA; its own entry is its epoch, starting at 1.
Releasing (arriving at a barrier, bar.sync/bar.arrive PTX 9.7.13.1; a release arrive-on an
mbarrier 9.7.13.15) publishes a snapshot and then advances the epoch; a thread that acquires (the
barrier completes, a wait observes the phase) joins the snapshot (element-wise max). An access by
thread a at epoch e is ordered before a later access of thread b iff b's clock at that time has
a's column >= e.

Asynchronous operations (PTX 8.9.1.1: cp.async, bulk and tensor copies, wgmma, tcgen05) are
performed apart from their thread, at any moment between issue and completion. Two shapes:
- A *stream* of one thread (cp.async, the source reads of its bulk stores and their writes):
  operations complete in issue order and the issuing thread's own waits observe them
  (wait_group). Each thread has a column per stream; its k-th operation is access epoch k of that
  column, its clock is the thread's at issue, and a wait that completes operations up to k sets
  the thread's own entry of the column to k (no new vector). An mbarrier hand-over
  (cp.async.mbarrier.arrive) publishes the column into the phase instead.
- An *agent* (bulk/TMA loads on an mbarrier, wgmma, tcgen05): a virtual thread with a column of
  its own, whose clock is its issuers' at issue, released once at completion into the point that
  completes it (an mbarrier phase) and/or to the threads that observe it. Agents are pooled per
  CTA and unit: a column is reused only when the new issuer has observed the completion of its
  previous operation, so reuse adds no ordering that did not exist.
The issuer's epoch advances at every issue, so its later accesses are not ordered before it.

Beside the base clock C every thread carries derived clocks, one table per kind of fact (Kind):
- P_SHARED / P_GLOBAL / P_TENSORMAP: what is ordered before the thread *through a proxy fence*
  (8.6, 8.9.5 proxy-preserved base causality): `fence.proxy.async{.space}` copies C into P (and
  advances the epoch, so later accesses are not covered); completions that imply a generic-async
  proxy fence (bulk copies 9.7.9.25.2, wgmma 9.7.15.4) release into P as well. An access
  through one proxy is ordered before an access through another iff the later one's P covers it.
- B, K_PENDING, K: tcgen05 ordering through tcgen05.fence::before/after_thread_sync (9.7.16.6.3).
  B is C at the thread's last before_thread_sync (tcgen05.commit implies one); every release
  publishes B, relaxed ones (mbarrier .relaxed) only B; acquires join it into K_PENDING, and
  after_thread_sync moves K_PENDING into K; a wait::ld/st of the issuing thread joins K directly
  (9.7.16.6.4.2). A tcgen05 agent's tensor-memory clock T is its issuers' C joined with K and with
  the clocks of the operations it is pipelined behind (9.7.16.6.2).

Clocks are stored compactly: a thread's clock of each kind is a shared *base* vector (one per CTA
per synchronisation, shared by all threads that joined the same things) plus its own entries (its
epoch and its streams' observed counts: `owns`). An access records (base ids, own entries, epoch)
of its thread or agent, which is all a later ordering question needs (`ordered`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

from ..events import Stream, SyncKind


def distinct(a: np.ndarray) -> np.ndarray:
    """np.unique(a) (its distinct values, ascending, 1-D) without the sort when every element is
    one value, the common case here (one CTA's rows, threads sharing one base after a barrier):
    one count_nonzero (~1 us) instead of np.unique (~5 us) on a few hundred rows."""
    if a.size and np.count_nonzero(a != a.reshape(-1)[0]) == 0:
        return a.reshape(-1)[:1].copy()
    return np.unique(a)


class Kind(IntEnum):
    """The clock tables of a thread (see the module docstring)."""

    C = 0
    P_SHARED = 1
    P_GLOBAL = 2
    P_TENSORMAP = 3
    B = 4
    K_PENDING = 5
    K = 6


PROXY_KINDS = (Kind.P_SHARED, Kind.P_GLOBAL, Kind.P_TENSORMAP)
STAMPED = (Kind.C, *PROXY_KINDS)  # the tables an access records
_OWNED = (Kind.C, *PROXY_KINDS, Kind.B)  # tables with own entries


SLOTS = 1 + len(Stream)
_STAMPED_IDX = np.array([int(k) for k in STAMPED], np.intp)
_SLOT_IDX = np.arange(SLOTS)
#: the snapshots a (not relaxed) release publishes, in release's order: "T" (of B), then STAMPED's
_RELEASED = ("T", *STAMPED)
_RELEASED_IDX = np.array([int(Kind.B), *(int(k) for k in STAMPED)], np.intp)


@dataclass
class Agent:
    row: int
    cta: int
    col: int
    unit: str
    epoch: int
    completed: bool = False
    bases: dict = field(default_factory=dict)  # Kind (STAMPED) and "T" -> base id (frozen at issue)


@dataclass(frozen=True)
class Stamp:
    """What an access records of its thread or agent, for k lanes: base ids (len(STAMPED), k), own
    entries (len(STAMPED), SLOTS, k; -1 for an agent), the tcgen05 base ids (k,) and epochs (k,)."""

    bases: np.ndarray
    owns: np.ndarray
    tbases: np.ndarray
    epochs: np.ndarray


class Clocks:
    def __init__(self, n_ctas: int, threads: int) -> None:
        self.T = threads
        self.n_ctas = n_ctas
        self.n_threads = n_ctas * threads
        self._table = np.zeros((64, threads), dtype=np.int32)
        self.n_bases = 1  # base 0: all zeros
        self._cols = threads  # columns in use (threads first, then streams' and agents')
        self._stream_col = {}  # Stream -> first of its T columns
        n = self.n_threads
        self.base = np.zeros((len(Kind), n), dtype=np.int64)
        self.owns = np.zeros((len(Kind), SLOTS, n), dtype=np.int32)
        self.owns[Kind.C, 0] = 1  # epochs start at 1
        self.next_op = np.zeros((SLOTS, n), dtype=np.int32)  # operations issued per stream
        # (CTA slot, sync object) -> {Kind or "T": snapshot}
        self.pending: dict[tuple[int, object], dict] = {}
        self.agents: list[Agent] = []
        self._free: dict[tuple[int, str], list[Agent]] = {}

    # ------------------------------------------------------------------ table
    def _grow(self, cols: int) -> None:
        if cols > self._table.shape[1]:
            new = np.zeros((self._table.shape[0], max(cols, 2 * self._table.shape[1])), dtype=np.int32)
            new[:, :self._table.shape[1]] = self._table
            self._table = new
        self._cols = max(self._cols, cols)

    def _add(self, vec: np.ndarray) -> int:
        if self.n_bases == self._table.shape[0]:
            new = np.zeros((2 * self._table.shape[0], self._table.shape[1]), dtype=np.int32)
            new[:self.n_bases] = self._table[:self.n_bases]
            self._table = new
        self._table[self.n_bases, :vec.size] = vec[:self._table.shape[1]]
        self._table[self.n_bases, vec.size:] = 0
        self.n_bases += 1
        return self.n_bases - 1

    @property
    def table(self) -> np.ndarray:
        return self._table[:self.n_bases]

    def _full(self, v: np.ndarray) -> np.ndarray:
        out = np.zeros(self._table.shape[1], np.int32)
        out[:min(v.size, out.size)] = v[:out.size]
        return out

    # ------------------------------------------------------------------ rows and columns
    def rows_of(self, lanes: np.ndarray, lanes_per_cta: int) -> np.ndarray:
        """Batch lanes -> thread rows (CTA slot * T + thread index)."""
        return (lanes // lanes_per_cta) * self.T + (lanes % lanes_per_cta)

    @property
    def slots_in_use(self) -> int:
        """Own-entry slots any thread may have (its epoch, then the streams used so far)."""
        return 1 + max((int(s) for s in self._stream_col), default=0)

    def stream_col(self, stream: Stream) -> int:
        c = self._stream_col.get(stream)
        if c is None:
            c = self._stream_col[stream] = self._cols
            self._grow(self._cols + self.T)
        return c

    def stream_rows(self, stream: Stream, rows: np.ndarray) -> np.ndarray:
        """Happens-before rows of threads `rows`' stream (rows n_threads * stream + row)."""
        self.stream_col(stream)
        return self.n_threads * int(stream) + rows

    def _decode(self, rows: np.ndarray):
        """(CTA, column, owning thread row or -1, own slot or -1) of happens-before rows."""
        rows = np.asarray(rows, dtype=np.int64)
        n = self.n_threads
        if rows.size == 0 or rows.max() < n:  # threads only: the common case
            return rows // self.T, rows % self.T, rows, np.zeros(rows.shape, np.int64)
        cta, col, thread = rows // self.T, rows % self.T, rows.copy()
        slot = np.zeros(rows.shape, np.int64)
        hi = np.nonzero(rows >= n)[0]
        r = rows[hi]
        s_ = np.where(r < n * SLOTS, r // n, -1)
        t_ = np.where(s_ >= 0, r % n, -1)
        scol = np.array([0] + [self._stream_col.get(s, 0) for s in Stream], dtype=np.int64)
        c_ = np.where(s_ >= 0, t_ // self.T, 0)
        col_ = np.where(s_ >= 0, scol[np.maximum(s_, 0)] + t_ % self.T, 0)
        ag = s_ < 0
        if ag.any():
            idx = r[ag] - n * SLOTS
            c_[ag] = self._agent_ctas()[idx]
            col_[ag] = self._agent_cols()[idx]
        cta[hi], col[hi], thread[hi], slot[hi] = c_, col_, t_, s_
        return cta, col, thread, slot

    def _agent_ctas(self) -> np.ndarray:
        if getattr(self, "_ac", (None, -1))[1] != len(self.agents):
            self._ac = (np.array([a.cta for a in self.agents], dtype=np.int64), len(self.agents))
        return self._ac[0]

    def _agent_cols(self) -> np.ndarray:
        if getattr(self, "_acol", (None, -1))[1] != len(self.agents):
            self._acol = (np.array([a.col for a in self.agents], dtype=np.int64), len(self.agents))
        return self._acol[0]

    def decode(self, rows: np.ndarray):
        """(CTA, column, owning thread row or -1, own slot or -1) of happens-before rows."""
        return self._decode(rows)

    def cta_of(self, rows: np.ndarray) -> np.ndarray:
        return self._decode(rows)[0]

    def _set_owns(self, snap: np.ndarray, kind: Kind, rows: np.ndarray) -> None:
        cols = rows % self.T
        np.maximum.at(snap, cols, self.owns[kind, 0, rows])
        for s, c in self._stream_col.items():
            np.maximum.at(snap, c + cols, self.owns[kind, int(s), rows])

    def _clock(self, kind: Kind, rows: np.ndarray) -> np.ndarray:
        """The join of thread rows' (one CTA) clocks of `kind`, own entries included."""
        snap = self.table[distinct(self.base[kind, rows])].max(axis=0)
        if kind in _OWNED:
            self._set_owns(snap, kind, rows)
        return snap

    # ------------------------------------------------------------------ synchronisation
    def release(self, rows: np.ndarray, key: object, relaxed: bool = False) -> None:
        """Threads `rows` publish their clocks into `key` (per CTA) and advance their epochs. A
        relaxed release (mbarrier .relaxed) publishes only the tcgen05-fenced part (B)."""
        ctas = rows // self.T
        if relaxed or not self._release_uniform(rows, ctas, key):
            for c in distinct(ctas):
                sel = rows[ctas == c]
                snaps = {"T": self._clock(Kind.B, sel)}
                if not relaxed:
                    for k in STAMPED:
                        snaps[k] = self._clock(k, sel)
                self._publish(int(c), key, snaps)
        self.owns[Kind.C, 0, rows] += 1

    def _release_uniform(self, rows: np.ndarray, ctas: np.ndarray, key: object) -> bool:
        """release's snapshots (not relaxed) for every CTA and clock at once, when its rows are ascending
        (distinct threads, grouped by CTA) and each CTA's rows share one base id per clock (threads that
        joined the same things: after a barrier, the common case); False, publishing nothing, otherwise.
        The same snapshots as `_clock` per CTA and kind: the join of one base vector is that vector, and
        `_set_owns`' np.maximum.at on distinct columns (distinct threads of one CTA; each stream its own
        columns) is an element-wise maximum at those columns. A bar.sync of 8 CTAs took 40 `_clock` calls
        (~750 us on cross_entropy_zloss); this takes one gather per step."""
        n = rows.size
        if n < 2 or np.count_nonzero(rows[1:] > rows[:-1]) != n - 1:
            return False
        ids = self.base[_RELEASED_IDX[:, None], rows[None, :]]  # (kinds, rows)
        first = np.flatnonzero(np.r_[True, ctas[1:] != ctas[:-1]])
        lens = np.diff(np.r_[first, n])
        if np.count_nonzero(ids != np.repeat(ids[:, first], lens, axis=1)):
            return False
        snaps = self._table[ids[:, first]]  # (kinds, CTAs, columns): each CTA's base vector, copied
        cta = np.repeat(np.arange(first.size), lens)
        cols = rows % self.T
        for s, c in ((0, 0), *((int(st), c) for st, c in self._stream_col.items())):
            at = snaps[:, cta, c + cols]
            snaps[:, cta, c + cols] = np.maximum(at, self.owns[_RELEASED_IDX[:, None], s, rows[None, :]])
        for j, c in enumerate(ctas[first].tolist()):
            self._publish(int(c), key, {k: snaps[i, j] for i, k in enumerate(_RELEASED)})
        return True

    def _publish(self, cta: int, key: object, snaps: dict) -> None:
        prev = self.pending.get((cta, key))
        if prev is None:
            if getattr(key, "kind", None) is SyncKind.MBARRIER:
                self._forget_phases(cta, key)
            self.pending[(cta, key)] = {k: self._full(v) for k, v in snaps.items()}
            return
        for k, v in snaps.items():
            v = self._full(v)
            old = prev.get(k)
            prev[k] = v if old is None else np.maximum(self._full(old), v)

    def acquire(self, rows: np.ndarray, key: object, consume: bool = True, relaxed: bool = False,
                direct: bool = False) -> None:
        """Threads `rows` join what was released into `key` (a completed barrier or phase). A relaxed
        acquire joins only the tcgen05 part (into K_PENDING); `direct`: an observation of the
        issuing thread's own operations (tcgen05.wait::ld/st), whose tcgen05 part is usable at once."""
        ctas = rows // self.T
        for c in distinct(ctas):
            snaps = self.pending.get((int(c), key))
            if snaps is None:
                continue
            sel = rows[ctas == c]
            joins = [(k, snaps[k]) for k in STAMPED if k in snaps] if not relaxed else []
            if "T" in snaps:
                joins.append((Kind.K_PENDING, snaps["T"]))
                if direct:
                    joins.append((Kind.K, snaps["T"]))
            if not self._join_uniform(sel, joins):
                for k, snap in joins:
                    self._join(k, sel, snap)
            if consume:
                self.pending.pop((int(c), key), None)

    def _forget_phases(self, cta: int, key) -> None:
        """A release into a new phase p of an mbarrier object: what its phases before p - 1 hold is never
        acquired again, since a wait observes only the current or the immediately preceding phase
        (9.7.13.15.16); dropping it keeps the state of a pipelined loop from growing with its phases."""
        off, gen, phase = key.ident
        stale = [k for k in self.pending if k[0] == cta and getattr(k[1], "kind", None) is SyncKind.MBARRIER
                 and k[1].ident[:2] == (off, gen) and (phase - k[1].ident[2]) & 0xFFFFFFFF > 1
                 and (phase - k[1].ident[2]) & 0xFFFFFFFF < 1 << 31]
        for k in stale:
            del self.pending[k]

    def forget_barriers(self, cta: int, bar_id: int, before: int) -> None:
        """Drop what CTA `cta` released into instances of barrier `bar_id` older than `before`."""
        stale = [k for k in self.pending if k[0] == cta and getattr(k[1], "kind", None) is SyncKind.BARRIER
                 and k[1].ident[0] == bar_id and k[1].ident[1] < before]
        for k in stale:
            del self.pending[k]

    def _join_uniform(self, rows: np.ndarray, joins: list[tuple[Kind, np.ndarray]]) -> bool:
        """The joins (kind, snapshot), in order, of threads `rows` (one CTA) when each kind's rows share
        one base id (after a barrier, the common case): `_join`'s new vectors and base ids (made in the
        same order), with one gather of the rows' ids and current vectors for all kinds instead of
        `_join`'s per kind; False, joining nothing, otherwise."""
        if not joins or not rows.size:
            return False
        kinds = np.array([int(k) for k, _ in joins], np.intp)
        ids = self.base[kinds[:, None], rows[None, :]]
        if np.count_nonzero(ids != ids[:, :1]):
            return False
        cur = self._table[ids[:, 0]]  # (kinds, columns), copied: _add only appends rows
        full = np.stack([self._full(snap) for _, snap in joins])
        for i in np.flatnonzero((full > cur).any(axis=1)).tolist():  # (_join: not all(full <= cur))
            self.base[kinds[i], rows] = self._add(np.maximum(cur[i], full[i]))
        return True

    def _join(self, kind: Kind, rows: np.ndarray, snap: np.ndarray) -> None:
        full = self._full(snap)
        ids = self.base[kind, rows]
        for b in distinct(ids):
            cur = self._table[int(b)]
            if (full <= cur).all():
                continue  # nothing new
            self.base[kind, rows[ids == b]] = self._add(np.maximum(cur, full))

    def fence(self, rows: np.ndarray, kind: Kind) -> None:
        """A proxy fence (kind = P_*) or tcgen05.fence::before_thread_sync (kind = B) by `rows`:
        everything ordered before them so far is now fenced; later accesses are not."""
        self.base[kind, rows] = self.base[Kind.C, rows]
        self.owns[kind, :, rows] = self.owns[Kind.C, :, rows]
        self.owns[Kind.C, 0, rows] += 1

    def after_thread_sync(self, rows: np.ndarray) -> None:
        """tcgen05.fence::after_thread_sync: what the thread acquired for tcgen05 becomes usable."""
        ids = np.stack([self.base[Kind.K, rows], self.base[Kind.K_PENDING, rows]], axis=1)
        for pair in np.unique(ids, axis=0):
            sel = rows[(ids == pair).all(axis=1)]
            self.base[Kind.K, sel] = self._add(np.maximum(self._table[pair[0]], self._table[pair[1]]))

    # ------------------------------------------------------------------ streams
    def stream_issue(self, stream: Stream, rows: np.ndarray) -> Stamp:
        """Operations of `stream` issued by thread rows `rows` (one each): their stamps (their clock
        is the thread's now); the threads' epochs advance."""
        s = int(stream)
        self.stream_col(stream)
        self.next_op[s, rows] += 1
        st = self.stamp(rows)
        st = Stamp(st.bases, st.owns, st.tbases, self.next_op[s, rows].copy())
        self.owns[Kind.C, 0, rows] += 1
        return st

    def stream_observe(self, stream: Stream, rows: np.ndarray, upto: np.ndarray, implies_proxy_fence: bool) -> None:
        """Threads `rows` observe their own stream's operations up to index `upto` complete."""
        s = int(stream)
        np.maximum.at(self.owns[Kind.C, s], rows, upto.astype(np.int32))
        if implies_proxy_fence:
            for k in PROXY_KINDS:
                np.maximum.at(self.owns[k, s], rows, upto.astype(np.int32))

    def stream_publish(self, stream: Stream, row: int, upto: int, at_issue: Stamp, key: object,
                       implies_proxy_fence: bool) -> None:
        """Thread `row`'s stream operations up to `upto` release into `key` (an mbarrier hand-over:
        ordered after those operations only, not after the thread's other instructions, 8.9.1.1);
        `at_issue`: the stamp of the last of them."""
        col = self.stream_col(stream) + row % self.T
        snaps = {}
        for i, k in enumerate(STAMPED):
            v = self._full(self._table[int(at_issue.bases[i, 0])])
            self._set_own_entries(v, row, at_issue.owns[i, :, 0])
            if k is Kind.C or implies_proxy_fence:
                v[col] = max(int(v[col]), upto)
            snaps[k] = v
        self._publish(row // self.T, key, snaps)

    def _set_own_entries(self, v: np.ndarray, row: int, owns: np.ndarray) -> None:
        t = row % self.T
        v[t] = max(int(v[t]), int(owns[0]))
        for s, c in self._stream_col.items():
            v[c + t] = max(int(v[c + t]), int(owns[int(s)]))

    # ------------------------------------------------------------------ agents
    def issue(self, rows: np.ndarray, unit: str, tensor_core: bool = False,
              after: tuple[tuple[int, int, int], ...] = ()) -> Agent:
        """An asynchronous operation issued by thread rows `rows` (one CTA): an agent ordered after
        what they did so far; their epochs advance. `after`: (column, epoch, T base) of operations
        it is pipelined behind (9.7.16.6.2)."""
        cta = int(rows[0] // self.T)
        agent = self._reusable(cta, unit, rows)
        if agent is None:
            col = self._cols
            self._grow(col + 1)
            agent = Agent(self.n_threads * SLOTS + len(self.agents), cta, col, unit, 1)
            self.agents.append(agent)
        else:
            agent.epoch += 1
            agent.completed = False
        bases = {k: self._add(self._clock(k, rows)) for k in STAMPED}
        if tensor_core:
            t = np.maximum(self._table[bases[Kind.C]], self._clock(Kind.K, rows))
            for col, epoch, tbase in after:
                t = np.maximum(t, self._table[tbase])
                t[col] = max(int(t[col]), epoch)
            bases["T"] = self._add(t)
        else:
            bases["T"] = bases[Kind.C]
        agent.bases = bases
        self.owns[Kind.C, 0, rows] += 1
        return agent

    def _reusable(self, cta: int, unit: str, rows: np.ndarray) -> Agent | None:
        """A completed agent of this CTA and unit whose completion every issuing thread observed."""
        pool = self._free.get((cta, unit))
        if not pool:
            return None
        seen = self.table[distinct(self.base[Kind.C, rows])].min(axis=0)
        for i, a in enumerate(pool):
            if seen[a.col] >= a.epoch:
                return pool.pop(i)
        return None

    def complete(self, agent: Agent, key: object | None, observers: np.ndarray | None,
                 implies_proxy_fence: bool, tensor_core: bool) -> None:
        """The agent's operation is performed: it releases into `key` (an mbarrier phase) and/or
        thread rows `observers` (its own CTA) observe it now."""
        first = not agent.completed  # a later tcgen05.commit may track it again: publish again
        agent.completed = True
        col = agent.col
        snaps = {}
        c = self._full(self._table[agent.bases[Kind.C]])
        c[col] = agent.epoch
        snaps[Kind.C] = c
        for k in PROXY_KINDS:
            p = self._full(self._table[agent.bases[k]])
            if implies_proxy_fence:
                p[col] = agent.epoch
            snaps[k] = p
        if tensor_core:  # tcgen05.commit implies before_thread_sync (9.7.16.6.4.2)
            t = self._full(self._table[agent.bases["T"]])
            t[col] = agent.epoch
            snaps["T"] = np.maximum(t, c)
        if key is not None:
            self._publish(agent.cta, key, snaps)
        if observers is not None and observers.size:
            once = ("observed", agent.row, agent.epoch)
            self._publish(agent.cta, once, snaps)
            self.acquire(observers, once, consume=True, direct=True)
        if first:
            self._free.setdefault((agent.cta, agent.unit), []).append(agent)

    # ------------------------------------------------------------------ queries
    def stamp(self, rows: np.ndarray) -> Stamp:
        """What an access of thread rows `rows` records now."""
        k = _STAMPED_IDX[:, None]  # index the rows directly: not a copy of every row's tables first
        return Stamp(self.base[k, rows[None, :]], self.owns[k[:, :, None], _SLOT_IDX[None, :, None], rows],
                     np.zeros(rows.size, np.int64), self.owns[Kind.C, 0, rows].copy())

    def access_stamp(self, rows: np.ndarray, table: int, slots: int | None
                     ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
        """What a thread access of rows `rows` records, as the race detector keeps it: base ids (2, k)
        of C and of STAMPED[table] (the proxy-fenced clock that orders it), own entries (2, slots, k)
        of the same two (None when not asked for: one slot, the epoch, is all a thread has) and
        epochs (k,). `stamp` narrowed to what an access uses, without gathering the rest."""
        kinds = _STAMPED_IDX[[0, table]]
        bases = self.base[kinds[:, None], rows[None, :]].astype(np.int32)
        owns = None if slots is None else \
            self.owns[kinds[:, None, None], _SLOT_IDX[None, :slots, None], rows[None, None, :]]
        return bases, owns, self.owns[Kind.C, 0, rows].copy()

    def thread_tbase(self, rows: np.ndarray) -> int:
        """A base id for the tensor-memory clock of threads `rows` (one CTA) now: C joined with K,
        what a synchronous tcgen05 instruction of theirs (tcgen05.dealloc) is ordered after."""
        return self._add(np.maximum(self._clock(Kind.C, rows), self._clock(Kind.K, rows)))

    def agent_stamp(self, agent: Agent, k: int) -> Stamp:
        """What the agent's accesses (k lanes) record."""
        b = np.array([agent.bases[kd] for kd in STAMPED], dtype=np.int64)
        return Stamp(np.repeat(b[:, None], k, axis=1), np.full((len(STAMPED), SLOTS, k), -1, np.int32),
                     np.full(k, agent.bases["T"], np.int64), np.full(k, agent.epoch, np.int32))

    def ordered(self, a_rows: np.ndarray, a_epochs: np.ndarray, b_rows: np.ndarray, b_bases: np.ndarray,
                b_owns: np.ndarray | None, decoded: tuple | None = None) -> np.ndarray:
        """For pairs (a, b) with a earlier: is a ordered before b? b's clock is base `b_bases` plus,
        for a thread's access, its own entries `b_owns` (SLOTS, k) (None: b's epoch is its only own
        entry; that of a thread row): a's column is then b's own (the same thread, or one of its
        streams) when a belongs to b's thread."""
        if a_rows.size == 0:
            return np.zeros(0, bool)
        if decoded is None:  # (a's column, thread, slot; b's thread), as _decode gives them
            _, a_col, a_thread, a_slot = self._decode(a_rows)
            b_thread = self._decode(b_rows)[2] if b_owns is not None else None
        else:
            a_col, a_thread, a_slot, b_thread = decoded
        seen = self.table[b_bases, np.minimum(a_col, self._table.shape[1] - 1)]
        if b_owns is None:  # threads only: the same thread is ordered by program order
            return (seen >= a_epochs) | (a_rows == b_rows)
        seen = seen.astype(np.int64)
        mine = (a_slot >= 0) & (a_thread == b_thread)
        if mine.any():
            idx = np.nonzero(mine)[0]
            seen[idx] = np.maximum(seen[idx], b_owns[a_slot[idx], idx])
        # one agent's accesses are in its operation's order (a reused column: the new operation's
        # issuer observed the old one complete)
        same_agent = (a_slot < 0) & (a_rows == b_rows)
        return (seen >= a_epochs) | same_agent
