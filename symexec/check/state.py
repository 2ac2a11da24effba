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
                      MemoryAccess, MemSpace, Observer, Proxy, Reconverged, Release, Stream, SyncKind)
from .hb import STAMPED, Clocks, Kind, Stamp, distinct
from .races import ACQUIRE, ATOMIC, READ, RELEASE, WRITE, Event, RaceDetector
from .shadow import (CONST_KEY, DATA, DEP, INPUT_KEY, SCHED, STALE, UNDEF, UNINIT, UNINIT_KEY, Tracker, key_of, mix,
                     some, row_number)
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
class SkippedWrites:
    """Global bytes of one buffer that iterations skipped by loop summaries (loops.py) would have written, and
    that no access has written since (`live`): per byte (ascending offsets in the buffer) the writing thread's
    happens-before row and its epoch when the summary was made (its writes in the skipped iterations come no
    later in its program order: a clock that covers the epoch covers them), row -1 where several threads or
    an instruction other than a plain st would have written it (then any later access voids the summary).

    The run's memory does not hold what those iterations would have written: a later read gives values
    whose bits may be wrong (their shadow carries STALE, exec.py audits their uses), and only a plain ld or
    st (9.7.9.8, 9.7.9.10) of a thread of the writer's CTA ordered after the writer (hb.py, PTX 8.9.4
    happens-before through the CTA's barriers) keeps the summary: the race detector never saw those
    writes, so an access not ordered after them, from another CTA, an atomic, an asynchronous copy (another
    proxy) or a non-coherent read (ld.global.nc, ldu: 9.7.9.9, 9.7.9.11) voids it (`CheckState.void`)."""

    offsets: np.ndarray
    row: np.ndarray
    epoch: np.ndarray
    live: np.ndarray

    def find(self, flat: np.ndarray) -> np.ndarray:
        """Per element of `flat`: its index in `offsets` where it is a live skipped byte, else -1."""
        f = np.asarray(flat, np.int64)
        if self.offsets.size == 0:
            return np.full(f.shape, -1, np.int64)
        i = np.minimum(np.searchsorted(self.offsets, f), self.offsets.size - 1)
        hit = (self.offsets[i] == f) & self.live[i]
        return np.where(hit, i, -1)

    def merged(self, offsets: np.ndarray, row: np.ndarray, epoch: np.ndarray) -> "SkippedWrites":
        """These records with bytes `offsets` (ascending, distinct) now last written by `row` at `epoch`."""
        keep = self.live & ~np.isin(self.offsets, offsets)
        o = np.concatenate([self.offsets[keep], offsets])
        order = np.argsort(o, kind="stable")
        return SkippedWrites(o[order], np.concatenate([self.row[keep], row])[order],
                             np.concatenate([self.epoch[keep], epoch])[order], np.ones(o.size, bool))


#: plain loads and stores (9.7.9.8 ld, 9.7.9.10 st): no ordering or caching semantics that a skipped write
#: could change (`SkippedWrites`)
_NOT_PLAIN = frozenset({".nc", ".volatile", ".relaxed", ".acquire", ".release", ".mmio", ".async", ".bulk"})


def plain_access(ins: A.Instruction | None, write: bool) -> bool:
    """A plain `ld` (read) or `st` (write) of a thread."""
    return ins is not None and ins.opcode == ("st" if write else "ld") and not (ins.modifiers & _NOT_PLAIN)


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
    # False: the trackers keep taints only, no value numbers (Tracker.numbered): a run whose numbers
    # nobody reads (no race records, no loop summaries, no term log: the equivalence shadow's runs)
    numbered: bool = True
    # False: no happens-before clocks are kept for synchronisation (release, acquire, fences return at
    # once): only race records read them (a run without race records or loop summaries)
    clocked: bool = True

    def __post_init__(self) -> None:
        self.mem: dict = {}
        self._ops: dict[int, tuple] = {}  # op ident -> (agent, epoch) or (lanes, rows, Stamp) of a stream
        self._read_bytes: dict[int, list[_Read]] = {}  # op -> shadows of the bytes it read, per read access
        self._op_source: dict[int, int] = {}  # a bulk store's writes op -> its reads op (whose bytes it writes)
        self._last_issued: AsyncOp | None = None
        self._layouts: dict[int, dict[int, _Layout]] = {}  # copy op -> lane -> where its written bytes come from
        self._opaque_next = 0  # fresh value numbers of copied bytes whose origin is not followed
        # tcgen05.st op -> per lane of the batch, the taint of the registers it stores, taken at issue: its cells
        # are written at tcgen05.wait::st (tcgen05/unit.py), when the register shadows are the wait's
        self.st_taint: dict[int, np.ndarray] = {}
        self.tracker = Tracker(1)
        self.clocks = Clocks(self.n_ctas, self.lanes_per_cta)
        self.detector = RaceDetector(self.clocks, self.lanes_per_cta)
        # global bytes summarised loop iterations would have written (loops.py), per buffer and byte
        self.skipped: dict[Buffer, SkippedWrites] = {}
        # why the summaries of this run do not hold (a skipped write read where it may not be, a STALE value
        # used where its bits matter: exec.py): the run is made again without them (grid.py `_represent`)
        self.footprint_hit: str | None = None
        # set once a summary skipped global writes: every later read of global, local or tensor memory (whose
        # shadows loop summaries do not compare) carries STALE, so that a summarised period audits what its
        # skipped periods' reads of bytes skipped writes left would do (loops.py `_skipped_reads`)
        self.stale_reads = False
        # global bytes summarised loop iterations would have read, per buffer, when the loop was summarised
        # although the run had a finding (loops.py `_reads_checked`): a write to them afterwards voids the summary
        self.read_footprints: dict[Buffer, list[tuple[int, int]]] = {}
        # per global buffer, the hull [lo, hi) of the bytes written so far (loops.py `_reads_checked`)
        self.global_written: dict[Buffer, tuple[int, int]] = {}

    # -------------------------------------------------------------- observer
    def on_batch(self, batch) -> None:
        self.n = batch.n
        self.cta_base = batch.cta_base
        self.tracker = Tracker(batch.n)
        self.tracker.mem = self.mem  # memory shadows outlive batches (global memory)
        self.tracker.terms = self.terms
        self.tracker.numbered = self.numbered
        self.detector.shared_bytes = batch.memory.shared_bytes

    def on_access(self, ev: MemoryAccess) -> None:
        self.access(ev)

    def on_release(self, ev: Release) -> None:
        if not self.clocked:
            return
        self.clocks.release(self.rows(ev.lanes), ev.point, relaxed=ev.relaxed)

    def on_acquire(self, ev: Acquire) -> None:
        if not self.clocked:
            return
        rows = self.rows(ev.lanes)
        self.clocks.acquire(rows, ev.point, ev.consume, relaxed=ev.relaxed)
        if ev.point.kind is SyncKind.BARRIER:
            # barrier instances complete in order and every waiter acquires at completion: what the
            # CTA released into earlier instances of this barrier is never acquired again
            bar_id, instance = ev.point.ident
            for cta in distinct(rows // self.lanes_per_cta).tolist():
                self.clocks.forget_barriers(cta, bar_id, instance)

    def on_fence(self, ev: Fence) -> None:
        if not self.clocked:
            return
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
        # a bulk store is issued as two operations, its source reads then its destination writes
        # (symexec/async_copy.py, tma.py): the writes move the reads' bytes
        prev, self._last_issued = self._last_issued, op
        if op.stream is Stream.BULK_WRITES and prev is not None and prev.stream is Stream.BULK_READS \
                and prev.ins is op.ins and np.array_equal(prev.lanes, op.lanes):
            self._op_source[op.ident] = prev.ident
        if op.unit == "tcgen05" and op.ins is not None and op.ins.opcode == "tcgen05" and ".st" in op.ins.modifiers:
            self._st_issued(op)
        rows = self.rows(op.lanes)
        if op.stream is not None:  # one operation per lane, of that thread's stream
            self._ops[op.ident] = (op.lanes, rows, self.clocks.stream_issue(op.stream, rows))
            return
        after = tuple(x for prev in op.after for x in self._agent_refs(prev))
        agent = self.clocks.issue(rows, op.unit, op.tensor_core, after)
        self._ops[op.ident] = (agent, agent.epoch)

    def _st_issued(self, op: AsyncOp) -> None:
        """A tcgen05.st issued: the taint of the registers it stores (9.7.16.8.4: the values are read at issue,
        written to tensor memory by the time of tcgen05.wait::st), with the branch regions' it runs under; the
        cells get it when written (`access`). Without it, data passed through tensor memory and loaded back
        looked like no data to the branch policy (a data-dependent branch on it was followed one way only)."""
        tr = self.tracker
        vec = op.ins.operands[-1] if op.ins.operands else None
        names = [e.name for e in vec.elements if isinstance(e, A.Sym)] if isinstance(vec, A.Vector) else \
            [vec.name] if isinstance(vec, A.Sym) else []
        t = np.zeros(self.n, np.uint8)
        for name in names:
            rt = tr.reg_taint.get(name)
            if rt is not None:
                t |= np.broadcast_to(rt, t.shape).astype(np.uint8)
        t[op.lanes] |= np.uint8(tr.control | tr.explore)
        if t[op.lanes].any():
            self.st_taint[op.ident] = t

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

    def on_copy_layout(self, ev: CopyLayout) -> None:
        """A copy that does not move its bytes in order (a tensor copy, symexec.tma)."""
        self._layouts.setdefault(ev.op.ident, {})[ev.lane] = _Layout(ev.source)

    def on_async_completed(self, ev: AsyncCompleted) -> None:
        op = ev.op
        if ev.lanes is None:
            self._op_source.pop(op.ident, None)
            self._layouts.pop(op.ident, None)
            self.st_taint.pop(op.ident, None)
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
    def layout_of(self, buffer: Buffer, size: int):
        """The page layout of this run's shadow of `buffer` (symexec.paged.PageLayout), None if it has none
        of that size yet: another observer's shadow of the buffer may share it (one page lookup per access
        for both, the access's `flat` array being the same object)."""
        s = self.mem.get(buffer)
        return s.layout if s is not None and s.size == size else None

    def _stale_read(self, ev: MemoryAccess) -> bool:
        """Does this read carry STALE (`stale_reads`)? Shared memory's shadows are part of a loop's compared
        state (loops.Canon), parameters and constants are never written."""
        return self.stale_reads and ev.buffer.space in (MemSpace.GLOBAL, MemSpace.LOCAL, MemSpace.TMEM)

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
            if self._stale_read(ev):
                taint = taint | STALE
            writer = shadow.cta[flat]
            taint = taint | np.where((writer >= 0) & (writer != ctas[:, None]), SCHED, np.uint8(0)).astype(np.uint8)
            self._read_bytes.setdefault(op.ident, []).append(_Read(lanes, shadow.hash[flat], shadow.pos[flat], taint))
            return None  # the read itself is shadowed as any load (access)
        k, nb = flat.shape
        source = self._op_source.get(op.ident, op.ident)  # a bulk store's writes carry its reads' bytes
        reads = self._read_bytes.get(source)
        laid_out = op.ident in self._layouts
        if reads is None and not laid_out:
            return None  # it read nothing: written from registers (tcgen05.st, wgmma results), the register shadows say
        reads = reads or []
        if (len(reads) == 1 and reads[0].h.shape[1] == nb and not ev.atomic and not laid_out
                and reads[0].distinct and _distinct(lanes)):  # one row read per lane, as many bytes as written
            got, rows = reads[0].take(lanes)
            H, P, T = (np.where(got[:, None], x[rows], c) for x, c in zip(reads[0].arrays(), _const_bytes(nb)))
            if not _per_lane_fill(op.ins):
                for i in np.nonzero(~got)[0].tolist():  # a lane whose read is not known: never a constant
                    H[i], P[i], T[i] = self._opaque(op, int(lanes[i]), nb, None)
        else:
            H = np.empty((k, nb), np.uint64)
            P = np.empty((k, nb), np.uint8)
            T = np.empty((k, nb), np.uint8)
            for lane in np.unique(lanes).tolist():
                at = np.nonzero(lanes == lane)[0]  # this lane's rows of the write, in order
                h, p, t = self._lane_bytes(op, reads, lane, at.size, nb, ev.atomic)
                H[at], P[at], T[at] = h.reshape(at.size, nb), p.reshape(at.size, nb), t.reshape(at.size, nb)
        if self.tracker.control or self.tracker.explore:
            T |= self.tracker.control | self.tracker.explore
        shadow.hash[flat], shadow.pos[flat], shadow.taint[flat] = H, P, T
        shadow.cta[flat] = np.repeat(ctas.astype(np.int32)[:, None], nb, axis=1)  # (whole: the assignment's fast path)
        exact = row_number(key_of("value"), H)
        return exact, exact, np.bitwise_or.reduce(T, axis=1)

    def _lane_bytes(self, op: AsyncOp, reads: list[_Read], lane: int, rows: int, nb: int,
                    atomic: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Shadows (hash, pos, taint; rows * nb each) of the next `rows` rows of `nb` bytes copy `op`
        writes for `lane`. Moved bytes keep the numbers and taint of the bytes read: in the emulator's
        byte mapping where it reported one (CopyLayout: a tensor copy), else in order when one row is
        written (cp.async, cp.async.bulk); a zero fill is constant (cp.async src-size 0, a tensor
        copy's out-of-bounds elements). Any other mapping gets fresh numbers carrying the taint of
        everything the lane read, DATA where it is not known what was read: never a constant."""
        n = rows * nb
        lanes_layouts = self._layouts.get(op.ident)
        layout = lanes_layouts.get(lane) if lanes_layouts is not None else None
        if layout is not None:
            if layout.bytes is None:  # gathered once: a store writes its bytes in two accesses
                layout.bytes = _lane_reads(reads, lane)
            h, p, t = layout.bytes
            src = layout.source[layout.cursor:layout.cursor + n]
            layout.cursor += n
            if layout.cursor >= layout.source.size:
                del lanes_layouts[lane]
                if not lanes_layouts:
                    del self._layouts[op.ident]
            if src.size == n and not atomic and (not src.size or int(src.max()) < h.size):
                moved = src >= 0
                at = np.where(moved, src, 0)
                if not h.size:  # nothing read: all zero fill
                    return _const_bytes(n)
                return tuple(np.where(moved, x[at], c) for x, c in zip((h, p, t), _const_bytes(n)))
            return self._opaque(op, lane, n, t)  # fewer bytes read than the layout names: never guess
        h, p, t = _lane_reads(reads, lane)
        if not atomic and rows == 1:
            if h.size == n:  # the bytes read, in order, are the bytes written
                return h, p, t
            if 0 < h.size < n:  # cp.async src-size: the rest is zero-filled (9.7.9.25.3.1)
                ch, cp, ct = _const_bytes(n - h.size)
                return np.r_[h, ch], np.r_[p, cp], np.r_[t, ct]
        if not h.size and _per_lane_fill(op.ins):  # cp.async src-size 0 for this lane: cp-size zero bytes
            return _const_bytes(n)
        return self._opaque(op, lane, n, t if h.size else None)

    def _opaque(self, op: AsyncOp, lane: int, n: int, read_taint: np.ndarray | None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`n` written bytes whose mapping from the bytes read is not followed: fresh value numbers (no
        two bytes, and no two writes, ever share one), the taint of everything read (`read_taint`),
        DATA when what was read is not known."""
        h = mix(key_of("async"), np.uint64(op.ident), np.uint64(lane),
                np.arange(self._opaque_next, self._opaque_next + n, dtype=np.uint64))
        self._opaque_next += n
        t = np.uint8(DATA) if read_taint is None or not read_taint.size else np.bitwise_or.reduce(read_taint)
        return h, np.full(n, 0xFF, np.uint8), np.full(n, t, np.uint8)

    def void(self, why: str) -> None:
        """The loop summaries of this run do not hold (the first reason is kept)."""
        if self.footprint_hit is None:
            self.footprint_hit = why

    def _skipped_access(self, ev: MemoryAccess, flat: np.ndarray, lanes: np.ndarray) -> None:
        """An access to global bytes that iterations skipped by a loop summary would have written
        (`SkippedWrites`): kept only for a plain ld/st of threads of the writer's CTA ordered after the writer;
        a write makes the bytes the run's again."""
        rec = self.skipped[ev.buffer]
        f2 = flat.reshape(flat.shape[0], -1)
        at = rec.find(f2)
        hit = at >= 0
        if not some(hit):
            return
        where = f"{ev.ins.name if ev.ins is not None else 'an access'} at {ev.ins.span if ev.ins is not None else '?'}"
        what = "writes" if ev.write else "reads"
        if ev.op is not None or ev.atomic or not plain_access(ev.ins, bool(ev.write)):
            self.void(f"{where} {what} global bytes that iterations a loop summary skipped would have written, "
                      "and is not a plain ld or st")
            return
        idx = at[hit]
        rows = np.broadcast_to(self.rows(lanes)[:, None], f2.shape)[hit]
        w_rows, w_epochs = rec.row[idx], rec.epoch[idx]
        c = self.clocks
        if (w_rows < 0).any():
            why = "several threads (or an instruction other than a plain st) would have written them"
        elif (c.cta_of(w_rows) != c.cta_of(rows)).any():
            why = "another CTA would have written them"
        elif not c.ordered(w_rows, w_epochs, rows, c.base[Kind.C, rows], None).all():
            why = "the thread is not ordered after the thread that would have written them"
        else:
            if ev.write:
                rec.live[idx] = False
            return
        self.void(f"{where} {what} global bytes that iterations a loop summary skipped would have written: {why}")

    def access(self, ev: MemoryAccess) -> None:
        lanes, flat = ev.lanes, ev.flat
        if self.skipped and self.footprint_hit is None and ev.buffer in self.skipped and flat.size:
            self._skipped_access(ev, flat, lanes)
        if ev.atomic and self.stale_reads and self.footprint_hit is None and flat.size:
            # an atomic stores a function of the bytes' old value with its operands' taint only
            # (Tracker.on_store): on STALE bytes that value's bits are not the kernel's and nothing would say so
            had = self.mem.get(ev.buffer)
            if had is not None and some(had.taint[flat] & STALE):
                self.void(f"{ev.ins.name if ev.ins is not None else 'an atomic'} at "
                          f"{ev.ins.span if ev.ins is not None else '?'} updates bytes holding a STALE value")
        if (ev.write or ev.atomic) and ev.buffer.space is MemSpace.GLOBAL and flat.size:
            lo, hi = int(flat.min()), int(flat.max()) + 1
            was = self.global_written.get(ev.buffer)
            self.global_written[ev.buffer] = (lo, hi) if was is None else (min(lo, was[0]), max(hi, was[1]))
            if self.footprint_hit is None and any(lo < b_hi and b_lo < hi
                                                  for b_lo, b_hi in self.read_footprints.get(ev.buffer, ())):
                self.footprint_hit = (f"{ev.ins.name if ev.ins is not None else 'an access'} at "
                                      f"{ev.ins.span if ev.ins is not None else '?'} writes global bytes that "
                                      "iterations the loop summary did not run would have read")
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
                stored = self.st_taint.get(ev.op.ident) if ev.op is not None else None
                if stored is not None:  # a tcgen05.st landing at its wait::st: its registers' taint (`_st_issued`)
                    taint = taint | stored[lanes]
                    shadow.taint[flat] |= stored[lanes][:, None]
            undef = (np.broadcast_to(taint, lanes.shape) & (UNINIT | UNDEF)) != 0
            if ev.buffer.space is MemSpace.GLOBAL:  # an output: uninitialised shared data must not reach it
                bad = (taint & UNINIT) != 0
                if some(bad) and len(self.uninit_outputs) < 8:
                    self.uninit_outputs.append((ev.ins, int(lanes[np.argmax(bad)]), ev.pc))
        elif ev.op is not None and ev.op.unit == "tcgen05" and not ev.op.copy:
            # read by tcgen05.mma, whose results take only the taint of what it read (_computed)
            self.tracker.on_load_summary(shadow, flat, lanes, ctas, stale=self._stale_read(ev))
        elif copied is None:
            # the old value an atomic returns depends on the order of the atomics
            self.tracker.on_load(shadow, flat, lanes, flat.shape[1], ctas, volatile=ev.atomic,
                                 stale=self._stale_read(ev))
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
                  size=ev.size, path=self.path, undef=undef, consecutive=ev.consecutive)
        if self.log is not None:
            self.log.append(e)
        return e


@dataclass
class _Layout:
    """A tensor copy's byte mapping for one lane (symexec.events.CopyLayout): the i-th byte it writes
    is the source[i]-th byte its reads reported (-1: a zero fill); `bytes`: those reads' shadows,
    gathered at the first write; `cursor`: bytes written so far."""

    source: np.ndarray
    bytes: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    cursor: int = 0


def _lane_reads(reads: list["_Read"], lane: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The shadows of every byte the reads `reads` reported for `lane`, in the order reported; used up."""
    parts = [(r.h[i].reshape(-1), r.p[i].reshape(-1), r.t[i].reshape(-1)) for r in reads
             for i in (r.take_all(lane),) if i.size]
    if not parts:
        return np.empty(0, np.uint64), np.empty(0, np.uint8), np.empty(0, np.uint8)
    if len(parts) == 1:
        return parts[0]
    return tuple(np.concatenate([x[j] for x in parts]) for j in range(3))


def _distinct(lanes: np.ndarray) -> bool:
    """Are the (ascending, as the machine reports them) lanes all different? False when unsure."""
    return lanes.size < 2 or bool((lanes[1:] > lanes[:-1]).all())


def _per_lane_fill(ins: A.Instruction | None) -> bool:
    """A non-bulk cp.async: a lane whose src-size (or ignore-src) is 0 reads nothing and writes
    cp-size zero bytes (PTX ISA 9.7.9.25.3.1; symexec/async_copy.py)."""
    return ins is not None and ins.name.startswith("cp.async.c")


class _Read:
    """The shadows (hash, pos, taint; (k, nbytes) each) of the bytes an asynchronous operation read for
    its lanes in one access; a lane's row is used once (by its write, or dropped at completion)."""

    def __init__(self, lanes: np.ndarray, h: np.ndarray, p: np.ndarray, t: np.ndarray) -> None:
        self.order = np.argsort(lanes, kind="stable")
        self.lanes = lanes[self.order]
        self.h, self.p, self.t = h, p, t
        self.live = np.ones(lanes.size, bool)
        self.distinct = _distinct(self.lanes)

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

    def take_all(self, lane: int) -> np.ndarray:
        """The live rows of `lane` (a one-lane copy reports many rows), in the order reported; used up."""
        lo, hi = np.searchsorted(self.lanes, [lane, lane + 1])
        rows = self.order[lo:hi]
        rows = rows[self.live[rows]]
        self.live[rows] = False
        return rows


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
