"""Check-mode state of a run: vector clocks, shadow values and the race detector they feed.

`CheckState` is an observer of the machine (symexec.events): every memory access event updates
the memory shadows and goes with its thread's clock stamp to the race detector (races.py); release/acquire events advance the
vector clocks (hb.py); reconvergence after a both-ways exploration marks the registers the two
paths wrote as data-dependent. The instruction context (symexec.check.exec.CheckedExec) feeds
the register shadows. The detector tests each access, as it happens, against the latest write and
the reads since of its bytes; `detector.races()` gives the conflicting accesses that
happens-before does not order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ptx_parser import ast as A

from ..events import (Acquire, AsyncCompleted, AsyncIssued, AsyncOp, Buffer, CopyLayout, Fence, FenceKind,
                      MemoryAccess, MemSpace, Observer, Proxy, Reconverged, Release, SyncKind)
from .hb import STAMPED, Clocks, Kind, Stamp
from .races import ACQUIRE, ATOMIC, READ, RELEASE, WRITE, Event, RaceDetector
from .shadow import (CONST_KEY, DATA, DEP, INPUT_KEY, SCHED, UNDEF, UNINIT, UNINIT_KEY, Tracker, key_of, mix, some,
                     row_number)
from .terms import TermLog

PROXY_CODE = {Proxy.GENERIC: 0, Proxy.ASYNC: 1, Proxy.TENSORMAP: 2}


@dataclass(frozen=True)
class Decision:
    """A data-dependent branch explored both ways (id: its index in CheckState.decisions). Per lane
    of the branching group: its clock row, whether the launch's input takes the branch, and the
    term number and taint of the predicate (symexec.check.paths reads them back as Z3 terms)."""

    id: int
    pc: int
    ins: A.Instruction
    rows: np.ndarray
    taken: np.ndarray
    hashes: np.ndarray
    taints: np.ndarray

    def lane(self, row: int) -> int | None:
        """Index of clock row `row` in this decision's arrays."""
        i = int(np.searchsorted(self.rows, row))
        return i if i < self.rows.size and self.rows[i] == row else None


@dataclass(frozen=True)
class Candidate:
    """An error on a path explored for a data-dependent branch (an out-of-bounds access, a trap,
    undefined behaviour): a finding only if some input takes that path (symexec.check.reach)."""

    error: Exception
    ins: A.Instruction | None
    rows: np.ndarray  # clock rows of the failing threads
    lanes: np.ndarray  # their lanes in the batch
    path: tuple[int, ...]


@dataclass
class CheckState(Observer):
    """One per run; each CTA batch starts with `on_batch` (CTA slots map to global CTA indices)."""

    lanes_per_cta: int
    n_ctas: int
    tracker: Tracker = field(init=False)
    clocks: Clocks = field(init=False)
    log: list[Event] | None = None  # every access, when wanted (paths.race_alternatives, tests); the detector
    # keeps only what it needs
    races: bool = True  # False: accesses update the data shadows only, no race records (a run whose safety
    # verdict comes from another check: the equivalence shadow's runs, proofs/prove.py)
    data_dependent: list[tuple[str, A.Instruction, bool]] = field(default_factory=list)  # (what, where, schedule)
    uninit_outputs: list[tuple[A.Instruction, int, int]] = field(default_factory=list)
    input_buffers: set = field(default_factory=set)
    time: int = 0
    pc: int = -1
    ins: A.Instruction | None = None
    cta_base: int = 0
    n: int = 0
    both_paths: int = 0  # data-dependent branches explored both ways
    async_ops: int = 0
    path: tuple[int, ...] = ()  # the running group's explored choices (Group.path)
    decisions: list[Decision] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    spin_waits: set = field(default_factory=set)  # pcs of loops taken as spin-waits (policy)
    terms: TermLog | None = None  # record how data-dependent values are computed (reach.py asks)

    def __post_init__(self) -> None:
        self.mem: dict = {}
        self._ops: dict[int, tuple] = {}  # op ident -> (agent, epoch) or (lanes, rows, Stamp) of a stream
        self._read_bytes: dict[int, list[_Read]] = {}  # op -> shadows of the bytes it read, per read access
        self._layouts: dict[tuple[int, int], _Layout] = {}  # (op, lane) -> a tensor copy's byte mapping
        self.tracker = Tracker(1)
        self.clocks = Clocks(self.n_ctas, self.lanes_per_cta)
        self.detector = RaceDetector(self.clocks, self.lanes_per_cta)
        # global bytes summarised loop iterations would have written (loops.py), per buffer; an access to
        # them afterwards voids the summary
        self.footprints: dict[Buffer, list[tuple[int, int]]] = {}
        self.footprint_hit: str | None = None

    # -------------------------------------------------------------- observer
    def on_batch(self, batch) -> None:
        self.n = batch.n
        self.cta_base = batch.cta_base
        self.tracker = Tracker(batch.n)
        self.tracker.mem = self.mem  # memory shadows outlive batches (global memory)
        self.tracker.terms = self.terms
        self.detector.shared_bytes = batch.memory.shared_bytes

    def on_access(self, ev: MemoryAccess) -> None:
        self.access(ev)

    def on_release(self, ev: Release) -> None:
        self.clocks.release(self.rows(ev.lanes), ev.point, relaxed=ev.relaxed)

    def on_acquire(self, ev: Acquire) -> None:
        rows = self.rows(ev.lanes)
        self.clocks.acquire(rows, ev.point, ev.consume, relaxed=ev.relaxed)
        if ev.point.kind is SyncKind.BARRIER:
            # barrier instances complete in order and every waiter acquires at completion: what the
            # CTA released into earlier instances of this barrier is never acquired again
            bar_id, instance = ev.point.ident
            for cta in np.unique(rows // self.lanes_per_cta).tolist():
                self.clocks.forget_barriers(cta, bar_id, instance)

    def on_fence(self, ev: Fence) -> None:
        rows = self.rows(ev.lanes)
        if ev.kind is FenceKind.PROXY:
            for k in _proxy_kinds(ev):
                self.clocks.fence(rows, k)
        elif ev.kind is FenceKind.TCGEN05_BEFORE:
            self.clocks.fence(rows, Kind.B)
        elif ev.kind is FenceKind.TCGEN05_AFTER:
            self.clocks.after_thread_sync(rows)

    # -------------------------------------------------------------- asynchronous operations
    def on_async_issued(self, ev: AsyncIssued) -> None:
        op = ev.op
        self.async_ops += 1
        rows = self.rows(op.lanes)
        if op.stream is not None:  # one operation per lane, of that thread's stream
            self._ops[op.ident] = (op.lanes, rows, self.clocks.stream_issue(op.stream, rows))
            return
        after = tuple(x for prev in op.after for x in self._agent_refs(prev))
        agent = self.clocks.issue(rows, op.unit, op.tensor_core, after)
        self._ops[op.ident] = (agent, agent.epoch)

    def _computed(self, op: AsyncOp, shadow, flat: np.ndarray, lanes: np.ndarray, ctas: np.ndarray):
        """A computing operation writes memory (tcgen05.mma's D): fresh values carrying the taint of
        what the operation read so far (the per-instruction load summary) and of its registers."""
        tr = self.tracker
        taint = tr.in_taint.copy()
        if tr.loaded is not None:
            taint |= np.bitwise_or.reduce(tr.loaded[2], axis=1)
        t = np.full(lanes.size, np.bitwise_or.reduce(taint), np.uint8)  # the whole operation's inputs
        t |= tr.control | tr.explore
        k, nb = flat.shape
        H = mix(key_of("computed"), np.uint64(op.ident), flat.reshape(-1).astype(np.uint64)).reshape(k, nb)
        shadow.hash[flat], shadow.pos[flat] = H, 0xFF
        shadow.taint[flat] = t[:, None]
        shadow.cta[flat] = ctas[:, None]
        exact = row_number(key_of("value"), H)
        return exact, exact, t

    def _agent_refs(self, op: AsyncOp) -> list[tuple[int, int, int]]:
        got = self._ops.get(op.ident)
        if got is None or op.stream is not None or got[0].epoch != got[1]:
            return []
        return [(got[0].col, got[1], got[0].bases["T"])]

    def _stamp_of(self, op: AsyncOp, lanes: np.ndarray) -> tuple[Stamp, np.ndarray]:
        """What the accesses of `op` by lanes `lanes` record, and their happens-before rows."""
        got = self._ops.get(op.ident)
        if got is None:
            raise AssertionError(f"access of an asynchronous operation never issued ({op.ins.name})")
        if op.stream is None:
            agent, _ = got
            return self.clocks.agent_stamp(agent, lanes.size), np.full(lanes.size, agent.row, np.int64)
        issued, rows, st = got
        idx = np.searchsorted(issued, lanes)  # issuing lanes are ascending
        sub = Stamp(st.bases[:, idx], st.owns[:, :, idx], st.tbases[idx], st.epochs[idx])
        return sub, self.clocks.stream_rows(op.stream, rows[idx])

    def on_async_completed(self, ev: AsyncCompleted) -> None:
        op = ev.op
        reads = self._read_bytes.get(op.ident)
        if reads is not None:  # what it read and did not write (a read-only op)
            if ev.lanes is not None:
                for r in reads:
                    r.take(ev.lanes)
            if ev.lanes is None or not any(r.live.any() for r in reads):
                del self._read_bytes[op.ident]
        got = self._ops.get(op.ident)
        if got is None:
            return
        if op.stream is None:
            agent, epoch = got
            if agent.epoch == epoch:
                self.clocks.complete(agent, ev.point, None if ev.observers is None else self.rows(ev.observers),
                                     ev.implies_proxy_fence, op.tensor_core)
            return
        issued, rows, st = got
        lanes = issued if ev.lanes is None else ev.lanes
        idx = np.searchsorted(issued, lanes)
        if ev.observers is not None:  # the issuing threads' own waits
            self.clocks.stream_observe(op.stream, rows[idx], st.epochs[idx], ev.implies_proxy_fence)
        if ev.point is not None:
            for i in idx.tolist():
                one = Stamp(st.bases[:, i:i + 1], st.owns[:, :, i:i + 1], st.tbases[i:i + 1], st.epochs[i:i + 1])
                self.clocks.stream_publish(op.stream, int(rows[i]), int(st.epochs[i]), one, ev.point,
                                           ev.implies_proxy_fence)

    def on_copy_layout(self, ev: CopyLayout) -> None:
        """A tensor copy's byte mapping (symexec/tma.py): its writes for `ev.lane` take the bytes its
        reads (or those of `ev.reads`, a bulk store's read operation) reported, by `ev.source`."""
        self._layouts[(ev.op.ident, ev.lane)] = _Layout(ev.source, (ev.reads if ev.reads is not None else ev.op).ident)

    def on_reconverge(self, ev: Reconverged) -> None:
        if ev.data_registers:
            self.tracker.taint_registers(ev.data_registers, int(ev.join.dep) or int(DATA))

    def rows(self, lanes: np.ndarray) -> np.ndarray:
        return self.clocks.rows_of(lanes + self.cta_base * self.lanes_per_cta, self.lanes_per_cta)

    # -------------------------------------------------------------- per instruction
    def begin(self, ins: A.Instruction, pc: int) -> None:
        self.time += 1
        self.pc = pc
        self.ins = ins
        self.tracker.begin(ins)
        self.tracker.pc = pc

    def note_dependence(self, what: str, taint: np.ndarray, mask: np.ndarray) -> None:
        """A branch, address or synchronisation operand computed from input data or from the
        schedule (then another run of the same input may differ)."""
        if not some(taint):  # the common case (an address from the launch's fixed values): no masking
            return
        t = np.broadcast_to(taint, (self.n,))[mask]
        if (t & DEP).any() and len(self.data_dependent) < 32:
            self.data_dependent.append((what, self.ins, bool((t & SCHED).any())))

    def record_decision(self, ins: A.Instruction, pc: int, mask: np.ndarray, pred: np.ndarray) -> int:
        """A branch explored both ways; `pred`: whether each lane takes it on the launch's input."""
        tr = self.tracker
        name = ins.guard.pred
        lanes = np.nonzero(mask)[0]
        h = np.broadcast_to(tr.reg_hash.get(name, np.zeros((), np.uint64)), (self.n,))[lanes]
        t = np.broadcast_to(tr.reg_taint.get(name, np.zeros((), np.uint8)), (self.n,))[lanes]
        taken = np.broadcast_to(pred, (self.n,))[lanes].astype(bool)
        if ins.guard.negated:
            taken = ~taken
        d = Decision(len(self.decisions), pc, ins, self.rows(lanes), taken, h.copy(), t.copy())
        self.decisions.append(d)
        return d.id

    def record_candidate(self, error: Exception, lanes: np.ndarray, path: tuple[int, ...]) -> None:
        if len(self.candidates) < 256:
            self.candidates.append(Candidate(error, getattr(error, "ins", None), self.rows(lanes), lanes, path))

    # -------------------------------------------------------------- memory
    def shadow_for(self, buffer: Buffer, size: int):
        if buffer.space is MemSpace.SHARED:
            return self.tracker.shadow(buffer, size, int(UNINIT), UNINIT_KEY, 1)
        if buffer.space is MemSpace.GLOBAL and buffer.index in self.input_buffers:
            return self.tracker.shadow(buffer, size, int(DATA), INPUT_KEY, hash(buffer) & 0xFFFFFFFF)
        if buffer.space is MemSpace.LOCAL:  # never written: no defined value (same_value.py)
            return self.tracker.shadow(buffer, size, int(UNDEF), INPUT_KEY, hash(buffer) & 0xFFFFFFFF)
        return self.tracker.shadow(buffer, size, 0, INPUT_KEY, hash(buffer) & 0xFFFFFFFF)

    def _copied(self, ev: MemoryAccess, shadow, flat: np.ndarray, lanes: np.ndarray, ctas: np.ndarray):
        """Shadows of an asynchronous operation's bytes: what it reads is kept per lane (a copy's
        source, read at issue); what it writes is those bytes in order, the rest of the destination
        zero-filled (cp.async src-size), so values and their data dependence travel with the copy.
        An operation that writes more than it read the other way round (a reduction, a gather with
        another byte order) gets opaque values carrying the taint of everything it read.
        Returns (value numbers, real numbers, taint) of a write, None for a read or a plain write."""
        op = ev.op
        if not op.copy:
            return self._computed(op, shadow, flat, lanes, ctas) if ev.write else None
        if not ev.write:
            if ev.proxy is Proxy.TENSORMAP:  # a tensor copy reading its tensor map: no data moved
                return None
            taint = shadow.taint[flat]
            writer = shadow.cta[flat]
            taint = taint | np.where((writer >= 0) & (writer != ctas[:, None]), SCHED, np.uint8(0)).astype(np.uint8)
            self._read_bytes.setdefault(op.ident, []).append(_Read(lanes, shadow.hash[flat], shadow.pos[flat], taint))
            return None  # the read itself is shadowed as any load (access)
        k, nb = flat.shape
        reads = self._read_bytes.get(op.ident, [])
        laid = self._laid_out(op, lanes, k * nb) if lanes.size and (lanes == lanes[0]).all() else None
        if laid is not None:  # a tensor copy (all rows one issuing lane): its bytes by their layout
            H, P, T = (x.reshape(k, nb) for x in laid)
        elif len(reads) == 1 and reads[0].h.shape[1] == nb and not ev.atomic:  # one read of as many bytes per lane
            got, rows = reads[0].take(lanes)
            if not got.any():
                return None
            H, P, T = (np.where(got[:, None], x[rows], c) for x, c in zip(reads[0].arrays(), _const_bytes(nb)))
        else:
            H = np.empty((k, nb), np.uint64)
            P = np.empty((k, nb), np.uint8)
            T = np.empty((k, nb), np.uint8)
            any_read = False
            for i, lane in enumerate(lanes.tolist()):
                parts = [r.pop(lane) for r in reads]
                parts = [x for x in parts if x is not None]
                if not parts:
                    h, p, t = _const_bytes(nb)
                else:
                    any_read = True
                    h, p, t = (np.concatenate([x[j] for x in parts]) for j in range(3))
                    if h.size < nb:  # zero fill
                        ch, cp, ct = _const_bytes(nb - h.size)
                        h, p, t = np.r_[h, ch], np.r_[p, cp], np.r_[t, ct]
                    elif h.size > nb or ev.atomic:
                        opaque = mix(key_of("async"), np.uint64(op.ident), np.uint64(lane),
                                     np.arange(nb, dtype=np.uint64))
                        h, p, t = opaque, np.full(nb, 0xFF, np.uint8), np.full(nb, np.bitwise_or.reduce(t), np.uint8)
                H[i], P[i], T[i] = h, p, t
            if not any_read:
                return None  # written from registers (tcgen05.st, wgmma results): the register shadows say
        if self.tracker.control or self.tracker.explore:
            T |= self.tracker.control | self.tracker.explore
        shadow.hash[flat], shadow.pos[flat], shadow.taint[flat] = H, P, T
        shadow.cta[flat] = ctas[:, None]
        exact = row_number(key_of("value"), H)
        return exact, exact, np.bitwise_or.reduce(T, axis=1)

    def _laid_out(self, op: AsyncOp, lanes: np.ndarray, n: int) -> tuple | None:
        """Shadows (hash, pos, taint; n each) of the next `n` bytes a tensor copy writes for its one lane:
        each the byte its reads reported at the layout's index (CopyLayout: the reads' rows of that lane
        in the order reported, bytes in order), zero fill where -1. A bulk tensor copy is issued by one
        lane, so its rows cannot be paired with the read rows lane by lane. None: no layout, or nothing
        read for the lane (then the caller's rules apply); an index past the bytes read gives opaque
        bytes carrying the taint of all of them (never a guess)."""
        lane = int(lanes[0])
        lay = self._layouts.get((op.ident, lane))
        if lay is None:
            return None
        src = lay.source[lay.cursor:lay.cursor + n]
        lay.cursor += n
        reads = self._read_bytes.get(lay.reads, [])
        rows = [(r, r.order[r.lanes == lane]) for r in reads]
        rows = [(r, i[r.live[i]]) for r, i in rows]
        if lay.cursor >= lay.source.size:
            del self._layouts[(op.ident, lane)]
            for r, i in rows:
                r.live[i] = False  # used up (as a lane's row by its write)
        if not any(i.size for _, i in rows):
            return None
        h = np.concatenate([r.h[i].reshape(-1) for r, i in rows])
        p = np.concatenate([r.p[i].reshape(-1) for r, i in rows])
        t = np.concatenate([r.t[i].reshape(-1) for r, i in rows])
        if src.size < n or int(src.max(initial=-1)) >= h.size:
            opaque = mix(key_of("async"), np.uint64(op.ident), np.uint64(lane), np.arange(n, dtype=np.uint64))
            return opaque, np.full(n, 0xFF, np.uint8), np.full(n, np.bitwise_or.reduce(t), np.uint8)
        ch, cp, ct = _const_bytes(n)
        moved = src >= 0
        at = np.where(moved, src, 0)
        return np.where(moved, h[at], ch), np.where(moved, p[at], cp), np.where(moved, t[at], ct)

    def access(self, ev: MemoryAccess) -> None:
        lanes, flat = ev.lanes, ev.flat
        if self.footprints and ev.buffer in self.footprints and self.footprint_hit is None:
            lo, hi = int(flat.min()), int(flat.max()) + 1
            spans = [(b_lo, b_hi) for b_lo, b_hi in self.footprints[ev.buffer] if lo < b_hi and b_lo < hi]
            if spans:  # per lane (the lanes of two CTAs lie rows apart, around the other's footprint)
                f2 = flat.reshape(flat.shape[0], -1)
                l_lo, l_hi = f2.min(axis=1), f2.max(axis=1) + 1
                spans = [s for s in spans if ((l_lo < s[1]) & (s[0] < l_hi)).any()]
            if spans:
                self.footprint_hit = (f"{ev.ins.name if ev.ins is not None else 'an access'} at "
                                      f"{ev.ins.span if ev.ins is not None else '?'} touches global bytes that "
                                      "iterations the loop summary did not run would have written")
        shadow = self.shadow_for(ev.buffer, ev.size)
        is_write = ev.write
        k = ATOMIC if ev.atomic else (WRITE if is_write else READ)
        hashes = real = undef = None
        rows = self.rows(lanes)
        ctas = rows // self.lanes_per_cta
        copied = self._copied(ev, shadow, flat, lanes, ctas) if ev.op is not None else None
        if is_write:
            if copied is not None:  # an asynchronous copy: the bytes it read, moved
                hashes, real, taint = copied
            else:
                hashes, real = self.tracker.on_store(shadow, flat, lanes, flat.shape[1], ctas)
                taint = self.tracker.in_taint[lanes]
            undef = (np.broadcast_to(taint, lanes.shape) & (UNINIT | UNDEF)) != 0
            if ev.buffer.space is MemSpace.GLOBAL:  # an output: uninitialised shared data must not reach it
                bad = (taint & UNINIT) != 0
                if bad.any() and len(self.uninit_outputs) < 8:
                    self.uninit_outputs.append((ev.ins, int(lanes[np.argmax(bad)]), ev.pc))
        elif ev.op is not None and ev.op.unit == "tcgen05" and not ev.op.copy:
            # read by tcgen05.mma, whose results take only the taint of what it read (_computed)
            self.tracker.on_load_summary(shadow, flat, lanes, ctas)
        elif copied is None:
            # the old value an atomic returns depends on the order of the atomics
            self.tracker.on_load(shadow, flat, lanes, flat.shape[1], ctas, volatile=ev.atomic)
        if ev.atomic and not is_write:
            return  # an atomic is logged once, as its write
        if not self.races:
            return
        if ev.buffer.space is MemSpace.PARAM:
            # kernel parameters are read-only (PTX 5.1.6.1; a store to them faults before it is
            # observed, symexec.memory): a read of them conflicts with nothing, so it is not recorded
            return
        proxy = PROXY_CODE[ev.proxy]
        pk = proxy_table(ev.buffer, ev.proxy)
        slots = self.clocks.slots_in_use
        if ev.op is None and ev.buffer.space is not MemSpace.TMEM:  # a thread's access: the common case
            bases, owns, epochs = self.clocks.access_stamp(rows, pk, slots if slots > 1 else None)
            self.detector.add(self._event(ev, k, lanes, flat, rows, bases, epochs, hashes, real, owns, proxy,
                                          undef))
            return
        if ev.op is None:
            st, hb = self.clocks.stamp(rows), None
            if ev.buffer.space is MemSpace.TMEM:  # a synchronous tcgen05 instruction (dealloc)
                ids = np.array([self.clocks.thread_tbase(rows[rows // self.lanes_per_cta == c])
                                for c in (rows // self.lanes_per_cta).tolist()], dtype=np.int64)
                st = Stamp(st.bases, st.owns, ids, st.epochs)
        else:
            st, hb = self._stamp_of(ev.op, lanes)
        bases = st.bases[[0, pk]].astype(np.int32)
        owns = st.owns[[0, pk], :slots].astype(np.int32)
        self.detector.add(self._event(ev, k, lanes, flat, rows, bases, st.epochs, hashes, real, owns, proxy, undef,
                                      hb, st.tbases.astype(np.int32)))

    def _event(self, ev: MemoryAccess, k: int, lanes, flat, rows, bases, epochs, hashes, real, owns, proxy: int,
               undef, hb=None, tbases=None) -> Event:
        """The race detector's record of access `ev` (kept in `log` when asked)."""
        e = Event(self.time, ev.pc, k, int(ev.scope), ev.buffer, lanes, flat, rows, bases, epochs,
                  hashes, real, int(ev.order), hbrows=hb, tbases=tbases, owns=owns, proxy=proxy, op=ev.op,
                  size=ev.size, path=self.path, undef=undef)
        if self.log is not None:
            self.log.append(e)
        return e


@dataclass
class _Layout:
    """A tensor copy's byte mapping (symexec.events.CopyLayout) and how many of its bytes were written."""

    source: np.ndarray
    reads: int  # the operation whose reads supply the bytes
    cursor: int = 0


class _Read:
    """The shadows (hash, pos, taint; (k, nbytes) each) of the bytes an asynchronous operation read for
    its lanes in one access; a lane's row is used once (by its write, or dropped at completion)."""

    def __init__(self, lanes: np.ndarray, h: np.ndarray, p: np.ndarray, t: np.ndarray) -> None:
        self.order = np.argsort(lanes, kind="stable")
        self.lanes = lanes[self.order]
        self.h, self.p, self.t = h, p, t
        self.live = np.ones(lanes.size, bool)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.h, self.p, self.t

    def take(self, lanes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(found, row) per lane of `lanes`: whether it has a live row here, and which; they are used up."""
        pos = np.minimum(np.searchsorted(self.lanes, lanes), self.lanes.size - 1)
        found = self.lanes[pos] == lanes
        rows = self.order[pos]
        found &= self.live[rows]
        self.live[rows[found]] = False
        return found, rows

    def pop(self, lane: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        found, rows = self.take(np.array([lane]))
        if not found[0]:
            return None
        r = int(rows[0])
        return self.h[r], self.p[r], self.t[r]


def proxy_table(buffer: Buffer, proxy: Proxy = Proxy.GENERIC) -> int:
    """Index in hb.STAMPED of the proxy-fenced clock that orders an access of `buffer` through
    `proxy` after a generic one: the tensormap proxy's own (fence.proxy.tensormap::generic), else
    that of the state space (fence.proxy.async.shared::cta / .global)."""
    if proxy is Proxy.TENSORMAP:
        return STAMPED.index(Kind.P_TENSORMAP)
    return STAMPED.index(Kind.P_SHARED if buffer.space is MemSpace.SHARED else Kind.P_GLOBAL)


_CONST_BYTES: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}


def _const_bytes(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Shadows of n zero bytes (a copy's zero fill); read-only, shared."""
    got = _CONST_BYTES.get(n)
    if got is None:
        got = _CONST_BYTES[n] = (mix(CONST_KEY, np.zeros(n, np.uint64)), np.full(n, 0xFF, np.uint8),
                                 np.zeros(n, np.uint8))
        for a in got:
            a.flags.writeable = False
    return got


def _proxy_kinds(ev: Fence) -> tuple[Kind, ...]:
    """The clock tables a proxy fence updates (PTX 9.7.13.4: fence.proxy.async{.space};
    fence.proxy.tensormap::generic). A fence naming one state space orders only that space."""
    if ev.proxy is Proxy.TENSORMAP:
        return (Kind.P_TENSORMAP,)
    if ev.space is None:
        return (Kind.P_SHARED, Kind.P_GLOBAL)
    return (Kind.P_SHARED,) if ev.space.startswith(".shared") else (Kind.P_GLOBAL,)
