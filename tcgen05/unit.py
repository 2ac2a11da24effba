"""The tcgen05 unit of the machine: `tcgen05.*` instructions (PTX 9.7.16) on a batch of CTAs.

Section numbers are those of PTX ISA 9.1/9.2 (9.7.16.7 allocation, 9.7.16.8 ld/st/wait, 9.7.16.9
cp/shift, 9.7.16.10 mma, 9.7.16.11 fences, 9.7.16.12.1 commit; 9.7.16.6 the memory model).

State per batch (`batch.unit("tcgen05")`): the tensor memory and allocator of every CTA slot
(`tcgen05.tmem`), the `tcgen05.ld`/`st` operations each warp has issued and not yet waited for,
and each thread's queue of issued `tcgen05.mma`/`cp`/`shift` operations.

Values: completion at the LATEST legal point (9.7.16.6), so a missing wait shows up as wrong
values instead of being hidden:
- `tcgen05.ld`: tensor memory is read and the destination registers are written when the issuing
  thread executes `tcgen05.wait::ld`, or earlier when an instruction of that thread reads one of
  the destination registers: a true register dependency on a `tcgen05.ld` is respected without
  any wait (9.7.16.6.4.5; Triton converts the loaded values before its `wait::ld`). Writing a
  destination register before the load completes is an anti-dependency hazard the manual requires
  `wait::ld` for: undefined behaviour.
- `tcgen05.st`: source registers are read at issue; the cells are written at `tcgen05.wait::st`.
- `tcgen05.mma`, `tcgen05.cp`, `tcgen05.shift`: queued per issuing thread. `tcgen05.commit ...
  mbarrier::arrive::one` tracks "all the prior asynchronous tcgen05 operations ... initiated by the
  executing thread" (9.7.16.12.1): the thread's queue so far, performed in issue order (one legal
  order: it keeps every pipelined pair of 9.7.16.6.2 in order) just before the phase that the
  commit's arrive-on counts toward completes (symexec.mbarrier runs `Barrier.on_complete` then).
  Operations never committed are never performed.

Events (only when the batch has observers; a plain run builds none). Every asynchronous op is an
`AsyncOp` of unit "tcgen05" with `tensor_core=True` (symexec.asyncops):
- `tcgen05.mma` (one op per issuing thread; Completion.TCGEN05_COMMIT; proxy ASYNC). `after=`:
  the ops of the same thread it is pipelined behind (9.7.16.6.2): the last earlier mma with the
  same accumulator address, M/N/K and kind, and every cp and shift issued since then (cp -> mma,
  shift -> mma; earlier ones are behind that mma already). Accesses when performed: the exact
  shared-memory bytes of A (unless A is in tensor memory) and B through the descriptors and
  swizzle, reads of `Buffer(SHARED, batch_id)` at `cta_slot * shared_bytes + offset` in the async
  proxy (9.7.16.6.5); tensor memory (tcgen05.tmem.byte_offsets): A's cells when A is in tensor
  memory, for the block-scaled kinds the selected bytes of the scale factors of A and B in all
  four 32-lane duplicates (tcgen05.scales), and D's cells when enable-input-d, read, then D's
  cells written. The op is a computing one (`copy=False`): the checker gives D fresh values
  carrying the taint of everything the op read.
- `tcgen05.cp` (one op per issuing thread; TCGEN05_COMMIT; proxy ASYNC; after= every earlier shift
  of the thread for .4x256b, 9.7.16.6.2): the source bytes read from shared memory (async proxy,
  9.7.16.6.5), then the destination cells (with their multicast replicas) written.
- `tcgen05.shift` (one op per issuing thread; TCGEN05_COMMIT; after= the last mma of every
  accumulator of the thread, mma -> shift): reads lanes L..L+30 and writes L+1..L+31 of 8 columns.
- Completion of mma/cp/shift: when the phase of a commit that tracks them completes, each tracked
  op gets `complete(point=MbarrierUnit.point(bar, phase))`, `phase` being the phase the commit's
  arrive-on counts toward. An op tracked by several commits (every later commit of the thread
  tracks it too) completes into each of their phases. `implies_proxy_fence=False`: the manual
  states an implicit generic-async proxy fence at completion for bulk copies (9.7.9.25.1) and
  wgmma (9.7.15.4) and for nothing in tcgen05; 9.7.16.6.5 says only that tcgen05.mma/cp read
  shared memory through the async proxy and that `fence.proxy.async` is needed across proxies.
  The committing thread also gets a TCGEN05_BEFORE Fence right after its commit: "No explicit
  tcgen05.fence::before_thread_sync is needed as this is implicitly performed by tcgen05.commit"
  (9.7.16.6.4.2). The commit's arrive-on itself publishes nothing of the thread (it is signalled by
  the system "upon the completion of the tracked operations").
- `tcgen05.ld` / `tcgen05.st` (one op per warp, lanes = the warp's 32 thread slots;
  TCGEN05_WAIT_LD / _ST; they touch tensor memory only): ld reads its cells when performed (the
  low 2 bytes of each cell with .pack::16b), st writes its cells (all 4 bytes) at wait::st. They
  complete at the warp's `tcgen05.wait::ld/st` with `observers=` the warp's lanes. A load
  performed early for a true register dependency reports its reads then, but its completion is
  observed only at the wait::ld: "This form of register dependency does not imply any other form
  of ordering ... a register dependency does not imply that a dependee instruction's memory
  accesses will be performed before a dependent instruction's memory accesses" (9.7.16.6.4.5).
- Tensor-memory accesses are reported in the generic proxy for every op: the manual names no proxy
  for tensor memory (9.7.16.6.5 is about shared memory), so no proxy fence is ever asked between
  them.
- Ops still in flight when the batch ends (never waited, never committed) have their accesses
  reported by `finish` (they may have happened any time after issue), without a completion.
- `tcgen05.fence::before_thread_sync` / `after_thread_sync`: a Fence (TCGEN05_BEFORE/_AFTER) per
  executing lane. `alloc` writes the allocated address to shared memory through `batch.memory`
  (a weak generic-proxy store, 9.7.16.7.1); `dealloc`, `relinquish_alloc_permit`, `wait::*` emit
  nothing else.

Checks (`UndefinedBehavior` at the instruction, citing the manual; `Unsupported` for what is not
modelled):
- issue granularity and .sync.aligned (9.7.16.5, 9.7.16.7.1, 9.7.16.8.3-5): alloc/dealloc/
  relinquish/ld/st/wait executed by whole warps; for alloc/dealloc/relinquish/ld/st also "if any
  thread in the warp has exited"; nCols and the ld/st address the same in all threads of a warp;
- allocator (tcgen05.tmem): nCols a power of two in [32, 512], no alloc after relinquish, no
  growing allocation size, dealloc of a live allocation's start (partial or larger frees
  `Unsupported`), leaks at the end of the batch;
- every tensor-memory access of ld/st/mma/cp/shift inside 128 x 512 and in allocated columns,
  checked at issue and again when performed (both are legal performance points); after a
  dealloc the columns are no longer allocated;
- ld/st: lane ownership, warp w of a warpgroup may only access lanes 32*(w%4)..+31 (9.7.16.8.1);
  .num per shape (Table 49); register count per shape and .num;
- shift: the lane of taddr aligned to 32 (9.7.16.9.3);
- cp: the shape/multicast combinations of 9.7.16.9.2; the source inside shared memory;
  decompression (.b8x16.b6x16_p32/.b4x16_p64, given by figures only) and multicast with a
  tensor-memory lane other than 0 `Unsupported`;
- descriptors (tcgen05.descriptors): shared-memory descriptor fields, instruction descriptor
  fields per kind and cta_group::1; undocumented bits set (Triton sets some) are warned, not
  rejected (`DescriptorWarning`);
- one `.cta_group` in the kernel (9.7.16.9.2 and every tcgen05 instruction: "All tcgen05
  instructions within a kernel must specify the same value"; checked per batch, ptxas checks per
  function); `.cta_group::2`, commit `.multicast::cluster`, `.ws`, sparse, `.ashift`,
  `.collector_usage`, disable-output-lane and scale-input-d are `Unsupported` with their names;
- block-scaled mma (`.block_scale` with .kind::mxf8f6f4 / mxf4 / mxf4nvf4, 9.7.16.10.7): the
  `.scale_vectorsize` per kind (Table 55), the descriptor's scale type and IDs, the scale
  addresses at lane 0 and allocated, and, when performed, the four 32-lane duplicates of every
  scale factor equal (tcgen05.scales).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Callable

import numpy as np

from ptx_parser import ast as A
from semantics.errors import UndefinedBehavior, Unsupported
from symexec import asyncops
from semantics.mxformats import Container
from symexec.events import (AsyncOp, Buffer, Completion, Fence, FenceKind, MemSpace, Proxy,
                             TensorMmaPerformed)
from symexec.machine import Group
from symexec.memory import to_bytes
from symexec.units import Unit, UnitState

from . import ops
from . import tmem as T
from .descriptors import (BLOCK_SCALED_KINDS, SCALE_VEC_QUALIFIERS, InstrDescriptor, ScaleVec, SmemDescriptor,
                          check_smem_desc, decode_instr_desc, decode_smem_desc, scale_vec_of)
from .tmem import TensorMemory, split_address

if TYPE_CHECKING:  # pragma: no cover
    from symexec.machine import Batch, Machine

UNIT_NAME = "tcgen05"
TMEM_PROXY = Proxy.GENERIC  # the proxy tensor-memory accesses are reported in (see the module docstring)


class Sub(Enum):
    """The tcgen05 operation an instruction performs (the modifier naming it)."""

    ALLOC = ".alloc"
    DEALLOC = ".dealloc"
    RELINQUISH = ".relinquish_alloc_permit"
    LD = ".ld"
    ST = ".st"
    WAIT_LD = ".wait::ld"
    WAIT_ST = ".wait::st"
    MMA = ".mma"
    COMMIT = ".commit"
    FENCE_BEFORE = ".fence::before_thread_sync"
    FENCE_AFTER = ".fence::after_thread_sync"
    CP = ".cp"
    SHIFT = ".shift"


_ALIGNED = {".sync", ".aligned"}
_CP_FORMATS = {".b8x16", ".b6x16_p32", ".b4x16_p64"}


class DescriptorWarning(UserWarning):
    """A descriptor sets bits the manual reserves (Triton does, e.g. bit 29): reported, not rejected."""


# ---------------------------------------------------------------------- state


@dataclass
class PendingLd:
    """A tcgen05.ld of some warps not yet performed (per thread slot)."""

    ins: A.Instruction
    lanes: np.ndarray  # thread slots (k,)
    cta: np.ndarray  # (k,)
    tlane: np.ndarray  # (k, R)
    tcol: np.ndarray  # (k, R)
    regs: tuple[A.Operand, ...]
    pack: bool
    handles: dict[int, AsyncOp] | None  # batch warp index -> the warp's op (observers only)

    def subset(self, sel: np.ndarray) -> "PendingLd":
        return PendingLd(self.ins, self.lanes[sel], self.cta[sel], self.tlane[sel], self.tcol[sel], self.regs,
                         self.pack, self.handles)


@dataclass
class PendingSt:
    """A tcgen05.st of some warps not yet performed; the source registers were read at issue."""

    ins: A.Instruction
    lanes: np.ndarray
    cta: np.ndarray
    tlane: np.ndarray
    tcol: np.ndarray
    values: np.ndarray  # (k, R) uint32
    unpack: bool
    handles: dict[int, AsyncOp] | None

    def subset(self, sel: np.ndarray) -> "PendingSt":
        return PendingSt(self.ins, self.lanes[sel], self.cta[sel], self.tlane[sel], self.tcol[sel], self.values[sel],
                         self.unpack, self.handles)


@dataclass
class LdObservation:
    """A load performed early (true register dependency) whose completion a wait::ld observes."""

    handle: AsyncOp
    lanes: np.ndarray


@dataclass(frozen=True)
class MmaKey:
    """What makes two tcgen05.mma of one thread a pipeline (9.7.16.6.2: same N, accumulator, shape
    and kind; this unit models cta_group::1 only)."""

    d_addr: int
    m: int
    n: int
    k: int
    kind: str


@dataclass
class MmaOp:
    ins: A.Instruction
    pc: int
    cta: int
    d_addr: int
    a: ops.AOperand
    b_desc: int
    idesc: InstrDescriptor
    enable_input_d: bool
    scaled: ops.ScaleOperands | None = None  # block-scaled kinds: the scale matrices
    handle: AsyncOp | None = None

    @property
    def key(self) -> MmaKey:
        return MmaKey(self.d_addr, self.idesc.m, self.idesc.n, self.idesc.k, self.idesc.kind)


@dataclass
class CpOp:
    ins: A.Instruction
    pc: int
    cta: int
    taddr: int
    desc: SmemDescriptor
    layout: ops.CpLayout
    handle: AsyncOp | None = None


@dataclass
class ShiftOp:
    ins: A.Instruction
    pc: int
    cta: int
    taddr: int
    handle: AsyncOp | None = None


TensorOp = MmaOp | CpOp | ShiftOp


@dataclass
class ThreadQueue:
    ops: list[TensorOp] = field(default_factory=list)
    done: int = 0  # ops[:done] have been performed


@dataclass
class Pipeline:
    """A thread's issued mma/cp/shift ops, for the `after=` of the next (9.7.16.6.2), observers only.
    Pipelining is transitive, so each list keeps only what is not behind something it names."""

    seq: int = 0
    last_mma: dict[MmaKey, tuple[int, AsyncOp]] = field(default_factory=dict)
    cps: list[tuple[int, AsyncOp]] = field(default_factory=list)
    shifts: list[tuple[int, AsyncOp]] = field(default_factory=list)

    def after_mma(self, key: MmaKey) -> tuple[AsyncOp, ...]:
        """mma -> mma (same key), cp -> mma, shift -> mma: the last same-key mma and the cps and
        shifts issued since (older ones are behind that mma)."""
        prev = self.last_mma.get(key)
        since = prev[0] if prev is not None else -1
        out = [prev[1]] if prev is not None else []
        out += [op for s, op in self.cps if s > since]
        out += [op for s, op in self.shifts if s > since]
        return tuple(out)

    def after_shift(self) -> tuple[AsyncOp, ...]:
        """mma -> shift: the last mma of every accumulator (each is behind the earlier ones)."""
        return tuple(op for _, op in self.last_mma.values())

    def after_cp(self, layout: ops.CpLayout) -> tuple[AsyncOp, ...]:
        """shift -> cp.4x256b: every earlier shift (shifts are not pipelined with each other)."""
        if layout.shape is ops.CpShape.S4x256b:
            return tuple(op for _, op in self.shifts)
        return ()

    def note(self, op: TensorOp) -> None:
        if op.handle is None:
            return
        self.seq += 1
        if isinstance(op, MmaOp):
            self.last_mma[op.key] = (self.seq, op.handle)
        elif isinstance(op, CpOp):
            self.cps.append((self.seq, op.handle))
        else:
            self.shifts.append((self.seq, op.handle))


class Tcgen05Unit(UnitState):
    def __init__(self, batch: "Batch") -> None:
        self.batch = batch
        self.tmem = TensorMemory(batch.n_ctas)
        self.pending_ld: list[PendingLd] = []
        self.pending_st: list[PendingSt] = []
        self.ld_observations: list[LdObservation] = []  # performed early, completion at wait::ld
        self.queues: dict[int, ThreadQueue] = {}  # thread slot -> issued mma/cp/shift
        self.pipelines: dict[int, Pipeline] = {}  # thread slot -> pipelining facts (observers only)
        self.cta_group: str | None = None
        self.warnings: list[str] = []  # undocumented descriptor bits and similar (never rejected)
        self.mmas_performed = 0
        self.ld_regs: set[str] = set()  # registers watched for pending tcgen05.ld (batch.reg_watch)
        self.finished = False

    def smem(self, cta: int) -> np.ndarray:
        sb = self.batch.memory.shared_bytes
        return self.batch.memory.shared[cta * sb:(cta + 1) * sb]

    def warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)
            warnings.warn(text, DescriptorWarning, stacklevel=2)

    def queue(self, lane: int) -> ThreadQueue:
        return self.queues.setdefault(lane, ThreadQueue())

    def enqueue(self, lane: int, op: TensorOp) -> None:
        self.queue(lane).ops.append(op)
        if op.handle is not None:
            self.pipelines.setdefault(lane, Pipeline()).note(op)

    def flush(self, lane: int, upto: int) -> None:
        """Perform the thread's queued ops up to index `upto` that have not been performed."""
        q = self.queues.get(lane)
        if q is None:
            return
        while q.done < upto:
            op = q.ops[q.done]
            q.done += 1
            _perform(self, lane, op)

    def loop_state(self, canon) -> tuple:
        """The unit's state as loop summaries compare it (tcgen05.loopstate)."""
        from .loopstate import loop_state
        return loop_state(self, canon)

    def loop_watches(self, batch: "Batch") -> set[str]:
        from .loopstate import loop_watches
        return loop_watches(self, batch)

    def finish(self, batch: "Batch") -> None:
        """End of the batch: report what is still in flight (observers), then tensor memory still
        allocated is a missing tcgen05.dealloc (9.7.16.1.2)."""
        if self.finished:
            return
        self.finished = True
        if batch.observers:
            _report_in_flight(self)
        leaks = self.tmem.leaks()
        if leaks:
            cta, start, n, ins = leaks[0]
            raise UndefinedBehavior(f"kernel exits with tensor memory columns {start}..{start + n - 1} of CTA slot "
                                    f"{cta} still allocated (missing tcgen05.dealloc, PTX 9.7.16.1.2)", ins)


def unit(batch: "Batch") -> Tcgen05Unit:
    return batch.unit(UNIT_NAME, lambda: Tcgen05Unit(batch))


# ---------------------------------------------------------------------- events


def _shared_buffer(b: "Batch") -> Buffer:
    return Buffer(MemSpace.SHARED, b.batch_id)


def _report_smem_read(b: "Batch", handle: AsyncOp | None, lane: int, cta: int, offsets: np.ndarray) -> None:
    """Bytes `offsets` (CTA-relative) of shared memory read by the op of thread slot `lane` (async proxy)."""
    if handle is None or not b.observers:
        return
    flat = (cta * b.memory.shared_bytes + np.asarray(offsets, dtype=np.int64)).reshape(1, -1)
    asyncops.access(b, handle, False, _shared_buffer(b), b.memory.shared.size, np.array([lane]), flat,
                    proxy=Proxy.ASYNC)


def _report_tmem(b: "Batch", handle: AsyncOp | None, write: bool, lanes: np.ndarray, cta: np.ndarray,
                 tlane: np.ndarray, tcol: np.ndarray, first: int = 0, nbytes: int = T.CELL_BYTES) -> None:
    """Tensor-memory cells (k, ...) accessed for thread slots `lanes` (k,) on behalf of `handle`."""
    if handle is None or not b.observers:
        return
    lanes = np.asarray(lanes, dtype=np.int64).reshape(-1)
    k = lanes.size
    cta = np.asarray(cta, dtype=np.int64).reshape((k,) + (1,) * (np.ndim(tlane) - 1)) if np.ndim(cta) else cta
    flat = T.byte_offsets(cta, tlane, tcol, first, nbytes).reshape(k, -1)
    asyncops.access(b, handle, write, T.buffer(b.batch_id), b.n_ctas * T.CTA_BYTES, lanes, flat, proxy=TMEM_PROXY)


def _report_thread_tmem(b: "Batch", handle: AsyncOp | None, write: bool, lane: int, cta: int,
                        tlane: np.ndarray, tcol: np.ndarray) -> None:
    """All cells (tlane, tcol) accessed by the one-thread op of slot `lane`, as one row of bytes."""
    if handle is None or not b.observers:
        return
    tl, tc = np.broadcast_arrays(tlane, tcol)
    _report_tmem(b, handle, write, np.array([lane]), np.array([cta]), tl.reshape(1, -1), tc.reshape(1, -1))


def _by_warp(handles: dict[int, AsyncOp] | None, lanes: np.ndarray):
    """(op, index array into `lanes`) per warp of `lanes` (observers only)."""
    if not handles:
        return []
    warps = lanes // 32
    return [(handles[int(w)], np.nonzero(warps == w)[0]) for w in np.unique(warps) if int(w) in handles]


def _report_in_flight(u: Tcgen05Unit) -> None:
    """At the end of the batch: accesses of ops issued and never performed (they could have been
    performed any time after issue), with no completion."""
    b = u.batch
    for e in u.pending_st:
        for op, idx in _by_warp(e.handles, e.lanes):
            _report_tmem(b, op, True, e.lanes[idx], e.cta[idx], e.tlane[idx], e.tcol[idx])
            if e.unpack:
                _report_tmem(b, op, True, e.lanes[idx], e.cta[idx], e.tlane[idx], e.tcol[idx] + 1)
    for e in u.pending_ld:
        _report_ld_reads(b, e)
    for lane, q in u.queues.items():
        for op in q.ops[q.done:]:
            _report_footprint(u, lane, op)


# ---------------------------------------------------------------------- helpers


def _subop(ins: A.Instruction) -> Sub:
    found = [s for s in Sub if s.value in ins.modifiers]
    if len(found) != 1:
        raise Unsupported(f"{ins.name}: unrecognised tcgen05 operation", ins)
    return found[0]


def _check(ins: A.Instruction, allowed: set[str]) -> None:
    extra = ins.modifiers - allowed
    if extra:
        raise Unsupported(f"{ins.name}: modifier(s) {' '.join(sorted(extra))}", ins)


def _cta_group(u: Tcgen05Unit, ins: A.Instruction) -> None:
    groups = [m for m in ins.modifiers if m.startswith(".cta_group::")]
    if not groups:
        return
    cg = groups[0]
    if cg != ".cta_group::1":
        raise Unsupported(f"{ins.name}: {cg} (CTA pairs are not modelled)", ins)
    if u.cta_group is not None and u.cta_group != cg:
        raise UndefinedBehavior(f"{ins.name}: {cg} mixed with {u.cta_group} in one kernel (\"All tcgen05 "
                                "instructions within a kernel must specify the same value for the .cta_group "
                                "qualifier\", PTX 9.7.16.7.1)", ins)
    u.cta_group = cg


def _whole_warps(b: "Batch", mask: np.ndarray, ins: A.Instruction, no_exited: bool = False) -> np.ndarray:
    """Warp indices executing a .sync.aligned instruction; UB if only part of a warp does (or, with
    `no_exited`, if a thread of the warp has exited: 9.7.16.7.1, 9.7.16.8.3-4)."""
    w = mask.reshape(-1, 32)
    alive = b.alive.reshape(-1, 32)
    active = w.any(axis=1)
    partial = active & (w != alive).any(axis=1)
    if partial.any():
        wi = int(np.nonzero(partial)[0][0])
        raise UndefinedBehavior(f"{ins.name} executed by {int(w[wi].sum())} of the {int(alive[wi].sum())} threads of "
                                f"warp {wi % b.warps_per_cta} (CTA slot {wi // b.warps_per_cta}); .sync.aligned "
                                "needs the whole warp", ins)
    if no_exited:
        gone = active & (b.valid.reshape(-1, 32) & ~alive).any(axis=1)
        if gone.any():
            wi = int(np.nonzero(gone)[0][0])
            raise UndefinedBehavior(f"{ins.name} executed by warp {wi % b.warps_per_cta} (CTA slot "
                                    f"{wi // b.warps_per_cta}) after some of its threads exited (undefined, "
                                    "PTX 9.7.16.7.1 / 9.7.16.8.3)", ins)
    return np.nonzero(active)[0]


def _lane_vals(b: "Batch", op: A.Operand, ty: str, lanes: np.ndarray) -> np.ndarray:
    return np.broadcast_to(np.asarray(b.ctx.read(op, ty)), (b.n,))[lanes]


def _tmem_addr(b: "Batch", op: A.Operand, lanes: np.ndarray, ins: A.Instruction) -> np.ndarray:
    """32-bit tensor-memory addresses of an operand `[taddr]` / `[taddr+imm]` / `taddr`, per lane."""
    if isinstance(op, A.Address):
        if op.base is not None and op.base.name in b.var_addr:
            raise UndefinedBehavior(f"{ins.name}: a tensor memory address must be a register, not a variable", ins)
        _, v = b.ctx.address(op)
        v = np.broadcast_to(np.asarray(v, dtype=np.uint64), (b.n,))[lanes]
    else:
        v = _lane_vals(b, op, ".b32", lanes).astype(np.uint64)
    return (v & np.uint64(0xFFFFFFFF)).astype(np.int64)


def _uniform_per_warp(vals: np.ndarray, lanes: np.ndarray, what: str, ins: A.Instruction,
                      documented: bool = True) -> None:
    """Every thread of a warp passes the same value (UB where the manual says so, else Unsupported)."""
    warps = lanes // 32
    for w in np.unique(warps):
        v = vals[warps == w]
        if (v != v[0]).any():
            if documented:
                raise UndefinedBehavior(f"{ins.name}: {what} differs between the threads of a warp (undefined, "
                                        "PTX 9.7.16)", ins)
            raise Unsupported(f"{ins.name}: {what} differs between the threads of a warp (not documented)", ins)


def _advance(g: Group) -> bool:
    g.pc += 1
    return True


def _fence(b: "Batch", ins: A.Instruction, lanes: np.ndarray, kind: FenceKind) -> None:
    if b.observers and lanes.size:
        b.emit(Fence(np.asarray(lanes, dtype=np.int64), kind, ins))


# ---------------------------------------------------------------------- the handler


def tcgen05(machine: "Machine", b: "Batch", g: Group, ins: A.Instruction, mask: np.ndarray) -> bool:
    sub = _subop(ins)
    u = unit(b)
    _cta_group(u, ins)
    if sub in (Sub.FENCE_BEFORE, Sub.FENCE_AFTER):
        _check(ins, {sub.value})
        kind = FenceKind.TCGEN05_BEFORE if sub is Sub.FENCE_BEFORE else FenceKind.TCGEN05_AFTER
        _fence(b, ins, np.nonzero(mask)[0], kind)
        return _advance(g)
    if not mask.any():
        return _advance(g)
    b.ctx.begin(mask, ins)
    if sub is Sub.ALLOC:
        return _alloc(b, g, ins, mask, u)
    if sub is Sub.DEALLOC:
        _dealloc(b, ins, mask, u)
    elif sub is Sub.RELINQUISH:
        _check(ins, _ALIGNED | {sub.value, ".cta_group::1"})
        for w in _whole_warps(b, mask, ins, no_exited=True):
            u.tmem.relinquish(int(b.cta_of_lane[32 * w]))
    elif sub in (Sub.LD, Sub.ST):
        _ld_st(b, ins, mask, u, sub is Sub.LD)
    elif sub in (Sub.WAIT_LD, Sub.WAIT_ST):
        _check(ins, _ALIGNED | {sub.value})
        _whole_warps(b, mask, ins)
        if sub is Sub.WAIT_LD:
            _complete_ld(b, mask, u)
            _observe_early_loads(b, mask, u)
        else:
            _complete_st(b, mask, u)
    elif sub is Sub.MMA:
        _mma(b, ins, mask, u)
    elif sub is Sub.CP:
        _cp(b, ins, mask, u)
    elif sub is Sub.SHIFT:
        _shift(b, ins, mask, u)
    elif sub is Sub.COMMIT:
        _commit(machine, b, ins, mask, u)
    return _advance(g)


# ---------------------------------------------------------------------- allocation (9.7.16.7.1)


def _alloc(b: "Batch", g: Group, ins: A.Instruction, mask: np.ndarray, u: Tcgen05Unit) -> bool:
    _check(ins, _ALIGNED | {".alloc", ".cta_group::1", ".shared::cta", ".b32"})
    if ".shared::cta" not in ins.modifiers:
        raise Unsupported(f"{ins.name}: destination in generic addressing (only .shared::cta is modelled)", ins)
    blocked = np.zeros_like(mask)
    for w in _whole_warps(b, mask, ins, no_exited=True):
        lanes = np.arange(32 * w, 32 * w + 32)[mask[32 * w:32 * w + 32]]
        space, addrs = b.ctx.address(ins.operands[0])
        dst = np.broadcast_to(np.asarray(addrs, dtype=np.uint64), (b.n,))[lanes].astype(np.int64)
        ncols = _lane_vals(b, ins.operands[1], ".u32", lanes).astype(np.int64)
        _uniform_per_warp(ncols, lanes, "the column count nCols", ins)
        _uniform_per_warp(dst, lanes, "the destination address", ins, documented=False)
        cta = int(b.cta_of_lane[lanes[0]])
        base = u.tmem.try_alloc(cta, int(ncols[0]), ins)
        if base is None:
            blocked[lanes] = True
            continue
        if dst[0] % 4:
            raise UndefinedBehavior(f"{ins.name}: destination 0x{int(dst[0]):x} is not 4-byte aligned", ins)
        # the address is written by a weak generic-proxy store ("The store operation in tcgen05.alloc
        # is treated as a weak memory operation", 9.7.16.7.1)
        b.memory.write(".shared", lanes[:1], dst[:1], to_bytes(np.array([base], dtype=np.uint32), 4), ins)
    if not blocked.any():
        return _advance(g)
    # not enough free columns: these warps wait until a dealloc frees them ("tcgen05.alloc blocks if
    # the requested amount of Tensor Memory is not available", 9.7.16.7.1)
    go = g.mask & ~blocked
    if go.any():
        b.split(g, go, g.pc + 1, ins)
    g.status = "wait"
    ctas = sorted(set(b.cta_of_lane[np.nonzero(blocked)[0]].tolist()))
    ncols_all = int(_lane_vals(b, ins.operands[1], ".u32", np.nonzero(blocked)[0][:1])[0])

    def wake() -> bool:
        return all(u.tmem.alloc[c].find(ncols_all) is not None for c in ctas)

    g.wake = wake
    g.waiting_for = f"tcgen05.alloc of {ncols_all} tensor memory columns (no free block; waits for a dealloc)"
    return False


def _dealloc(b: "Batch", ins: A.Instruction, mask: np.ndarray, u: Tcgen05Unit) -> None:
    _check(ins, _ALIGNED | {".dealloc", ".cta_group::1", ".b32"})
    for w in _whole_warps(b, mask, ins, no_exited=True):
        lanes = np.arange(32 * w, 32 * w + 32)[mask[32 * w:32 * w + 32]]
        taddr = _tmem_addr(b, ins.operands[0], lanes, ins)
        ncols = _lane_vals(b, ins.operands[1], ".u32", lanes).astype(np.int64)
        _uniform_per_warp(ncols, lanes, "the column count nCols", ins)
        _uniform_per_warp(taddr, lanes, "the address taddr", ins, documented=False)
        cta = int(b.cta_of_lane[lanes[0]])
        if b.observers:  # for the checker: freeing the columns conflicts with every access not ordered
            # before it (all warps' tensor-memory accesses must be, 9.7.16.7.1), like a write of them
            start = int(taddr[0]) & 0xFFFF
            cols = np.arange(start, min(start + int(ncols[0]), T.COLUMNS))
            flat = T.byte_offsets(cta, np.arange(T.LANES)[:, None], cols[None, :]).reshape(1, -1)
            asyncops.access(b, None, True, T.buffer(b.batch_id), b.n_ctas * T.CTA_BYTES, lanes[:1], flat, ins,
                            proxy=TMEM_PROXY)
        u.tmem.dealloc(cta, int(taddr[0]), int(ncols[0]), ins)


# ---------------------------------------------------------------------- ld / st (9.7.16.8)


def _shape_num(ins: A.Instruction) -> tuple[str, int]:
    shapes = [s.lstrip(".") for s in ins.modifiers if s.lstrip(".") in ops.SHAPES]
    nums = [m for m in ins.modifiers if m.startswith(".x") and m[2:].isdigit()]
    if len(shapes) != 1 or len(nums) != 1:
        raise Unsupported(f"{ins.name}: needs one shape and one .num", ins)
    shape, num = shapes[0], int(nums[0][2:])
    _, max_num = ops.SHAPES[shape]
    if num < 1 or num > max_num or num & (num - 1):
        raise UndefinedBehavior(f"{ins.name}: .x{num} is not a valid .num for .{shape} (Table 49)", ins)
    return shape, num


def _ld_st(b: "Batch", ins: A.Instruction, mask: np.ndarray, u: Tcgen05Unit, is_ld: bool) -> None:
    packname = ".pack::16b" if is_ld else ".unpack::16b"
    shape, num = _shape_num(ins)
    _check(ins, _ALIGNED | {".ld" if is_ld else ".st", f".{shape}", f".x{num}", packname, ".b32"})
    pack = packname in ins.modifiers
    ops_ = ins.operands
    if is_ld:
        vec, addr_op, rest = ops_[0], ops_[1], ops_[2:]
    else:
        addr_op, vec, rest = ops_[0], ops_[-1], ops_[1:-1]
    split = 0
    if shape == "16x32bx2":
        if len(rest) != 1:
            raise Unsupported(f"{ins.name}: .16x32bx2 needs the immHalfSplitoff operand", ins)
        split = int(np.asarray(b.ctx.read(rest[0], ".u32")).reshape(-1)[0])
    elif rest:
        raise Unsupported(f"{ins.name}: unexpected operand(s)", ins)
    regs = vec.elements if isinstance(vec, A.Vector) else (vec,)
    fr = ops.fragment(shape, num, split, pack)
    if len(regs) != fr.regs:
        raise Unsupported(f"{ins.name}: {len(regs)} registers given, .{shape}.x{num} moves {fr.regs}", ins)
    warps = _whole_warps(b, mask, ins, no_exited=True)
    lanes = np.nonzero(mask)[0]
    taddr = _tmem_addr(b, addr_op, lanes, ins)
    _uniform_per_warp(taddr, lanes, "the tensor memory address", ins)
    base_lane, base_col = split_address(taddr)
    t = lanes % 32
    tlane = base_lane[:, None] + fr.lane[t]
    tcol = base_col[:, None] + fr.col[t]
    # access restriction (9.7.16.8.1): warp w of a warpgroup reaches lanes 32*(w%4) .. 32*(w%4)+31
    quarter = 32 * (((lanes % b.lanes_per_cta) // 32) % 4)
    bad = (tlane < quarter[:, None]) | (tlane >= quarter[:, None] + 32)
    if bad.any():
        i = int(np.nonzero(bad.any(axis=1))[0][0])
        w = int((lanes[i] % b.lanes_per_cta) // 32)
        raise UndefinedBehavior(f"{ins.name}: warp {w} accesses tensor memory lane {int(tlane[i][bad[i]][0])}; "
                                f"it may only access lanes {int(quarter[i])}..{int(quarter[i]) + 31} (PTX 9.7.16.8.1)",
                                ins, lane=int(lanes[i]))
    cta = b.cta_of_lane[lanes].astype(np.int64)
    what = "tcgen05.ld" if is_ld else "tcgen05.st"
    u.tmem.check_access(cta[:, None], tlane, tcol, what, ins)
    if pack:
        u.tmem.check_access(cta[:, None], tlane, tcol + 1, what, ins)
    handles = None
    if b.observers:
        completion = Completion.TCGEN05_WAIT_LD if is_ld else Completion.TCGEN05_WAIT_ST
        handles = {int(w): asyncops.issue(b, UNIT_NAME, ins, np.arange(32 * w, 32 * w + 32)[mask[32 * w:32 * w + 32]],
                                          completion, proxy=TMEM_PROXY, tensor_core=True) for w in warps}
    if is_ld:
        for r in regs:
            if isinstance(r, A.Sym) and r.name in b.reg_watch and r.name not in u.ld_regs:
                raise Unsupported(f"{ins.name}: destination {r.name} is watched by another unit", ins)
        u.pending_ld.append(PendingLd(ins, lanes, cta, tlane, tcol, tuple(regs), pack, handles))
        _watch_ld_registers(b, u, regs)
    else:
        vals = np.stack([_lane_vals(b, r, ".b32", lanes).astype(np.uint32) for r in regs], axis=1)
        u.pending_st.append(PendingSt(ins, lanes, cta, tlane, tcol, vals, pack, handles))


def _report_ld_reads(b: "Batch", e: PendingLd) -> None:
    """Cells read by a load (with .pack::16b, the low 16 bits of each of the two cells)."""
    for op, idx in _by_warp(e.handles, e.lanes):
        if e.pack:
            _report_tmem(b, op, False, e.lanes[idx], e.cta[idx], np.stack([e.tlane[idx]] * 2, axis=2),
                         np.stack([e.tcol[idx], e.tcol[idx] + 1], axis=2), 0, 2)
        else:
            _report_tmem(b, op, False, e.lanes[idx], e.cta[idx], e.tlane[idx], e.tcol[idx])


def _complete_ld(b: "Batch", mask: np.ndarray, u: Tcgen05Unit, only: str | None = None) -> None:
    """The loads of the threads in `mask` (all of them: tcgen05.wait::ld, which also observes their
    completion; `only`: those writing register `only`, performed for a true register dependency,
    their completion observed at the next wait::ld) read tensor memory and write their registers."""
    keep = []
    done = []
    for e in u.pending_ld:
        sel = mask[e.lanes]
        if only is not None and not any(isinstance(r, A.Sym) and r.name == only for r in e.regs):
            sel = np.zeros_like(sel)
        if sel.any():
            done.append(e.subset(sel))
        if (~sel).any():
            keep.append(e.subset(~sel))
    u.pending_ld = keep
    _watch_ld_registers(b, u, None)
    for e in done:  # in issue order: a later load of the same register wins
        lanes = e.lanes
        vals = ops.gather_cells(u.tmem, e.cta, e.tlane, e.tcol, e.pack)
        lane_mask = np.zeros(b.n, dtype=bool)
        lane_mask[lanes] = True
        with b.ctx.nested(lane_mask, e.ins):
            if b.observers:  # in the load's own context: its registers take the bytes it read
                _report_ld_reads(b, e)
            for j, r in enumerate(e.regs):
                full = np.zeros(b.n, dtype=np.uint32)  # a fresh array: registers keep what they are given
                full[lanes] = vals[:, j]
                b.ctx.write(r, full, ".b32")
        for op, idx in _by_warp(e.handles, lanes):
            if only is None:
                asyncops.complete(b, op, observers=lanes[idx], implies_proxy_fence=False)
            else:
                u.ld_observations.append(LdObservation(op, lanes[idx]))


def _observe_early_loads(b: "Batch", mask: np.ndarray, u: Tcgen05Unit) -> None:
    """tcgen05.wait::ld: loads performed early for a register dependency complete for these threads."""
    if not u.ld_observations:
        return
    keep = []
    for o in u.ld_observations:
        sel = mask[o.lanes]
        if sel.any():
            asyncops.complete(b, o.handle, observers=o.lanes[sel], implies_proxy_fence=False)
        if (~sel).any():
            keep.append(LdObservation(o.handle, o.lanes[~sel]))
    u.ld_observations = keep


def _watch_ld_registers(b: "Batch", u: Tcgen05Unit, regs) -> None:
    """Keep `batch.reg_watch` on exactly the destination registers of pending loads (`regs`: newly
    added ones; None: recompute after completions)."""
    want = {r.name for e in u.pending_ld for r in e.regs if isinstance(r, A.Sym)}
    for name in u.ld_regs - want:
        b.reg_watch.pop(name, None)
    for name in want - u.ld_regs:
        b.reg_watch[name] = lambda mask, name, ins, kind, u=u, b=b: _ld_register_touched(b, u, mask, name, ins, kind)
    u.ld_regs = want


def _ld_register_touched(b: "Batch", u: Tcgen05Unit, mask: np.ndarray, name: str, ins, kind: str) -> None:
    """An instruction reads or writes a destination register of a pending tcgen05.ld."""
    pending = np.zeros(b.n, dtype=bool)
    for e in u.pending_ld:
        if any(isinstance(r, A.Sym) and r.name == name for r in e.regs):
            pending[e.lanes] = True
    hit = pending & np.broadcast_to(mask, (b.n,))
    if not hit.any():
        return
    if kind == "write":
        lane = int(np.nonzero(hit)[0][0])
        raise UndefinedBehavior(f"{ins.name if ins is not None else 'an instruction'} writes {name}, a destination "
                                f"of a tcgen05.ld not yet completed by tcgen05.wait::ld (thread slot {lane}; "
                                "anti-dependency hazard, PTX 9.7.16.6.4.5)", ins)
    _complete_ld(b, hit, u, only=name)  # a true register dependency: the value must be there


def _complete_st(b: "Batch", mask: np.ndarray, u: Tcgen05Unit) -> None:
    """tcgen05.wait::st: the executing warps' stores land in tensor memory, in issue order."""
    keep = []
    for e in u.pending_st:
        sel = mask[e.lanes]
        if sel.any():
            d = e.subset(sel)
            ops.scatter_cells(u.tmem, d.cta, d.tlane, d.tcol, d.values, d.unpack)
            for op, idx in _by_warp(d.handles, d.lanes):
                _report_tmem(b, op, True, d.lanes[idx], d.cta[idx], d.tlane[idx], d.tcol[idx])
                if d.unpack:
                    _report_tmem(b, op, True, d.lanes[idx], d.cta[idx], d.tlane[idx], d.tcol[idx] + 1)
                asyncops.complete(b, op, observers=d.lanes[idx], implies_proxy_fence=False)
        if (~sel).any():
            keep.append(e.subset(~sel))
    u.pending_st = keep


# ---------------------------------------------------------------------- mma / cp / shift / commit


def _issue(b: "Batch", u: Tcgen05Unit, ins: A.Instruction, lane: int, after: Callable[[Pipeline], tuple],
           proxy: Proxy, copy: bool = True) -> AsyncOp | None:
    """The op of one issuing thread (observers only), pipelined behind `after(thread's pipeline)`.
    `copy`: False for tcgen05.mma, which computes its writes (symexec.asyncops.issue)."""
    if not b.observers:
        return None
    pipe = u.pipelines.setdefault(lane, Pipeline())
    return asyncops.issue(b, UNIT_NAME, ins, np.array([lane]), Completion.TCGEN05_COMMIT, proxy=proxy,
                          tensor_core=True, after=after(pipe), copy=copy)


def _warn_descriptor(u: Tcgen05Unit, d: SmemDescriptor, ins: A.Instruction) -> None:
    for note in d.notes:
        u.warn(f"{note} at {ins.span}")


_PLAIN_KINDS = ("f16", "tf32", "f8f6f4", "i8")


@dataclass(frozen=True)
class MmaForm:
    """The syntactic form of one tcgen05.mma (9.7.16.10.9.1): its kind and, with `.block_scale`,
    the scale vector size (`descriptors.scale_vec_of`)."""

    kind: str
    vec: ScaleVec | None  # None: not block-scaled

    @property
    def operands(self) -> int:
        """d, a, b, idesc, enable-input-d, plus [scale-A-tmem], [scale-B-tmem] when block-scaled."""
        return 5 if self.vec is None else 7


def _mma_form(ins: A.Instruction) -> MmaForm:
    """Kind and scale vector size; `Unsupported` for every qualifier not modelled."""
    for mod, what in ((".ws", "weight-stationary tcgen05.mma.ws"), (".sp", "sparse tcgen05.mma.sp"),
                      (".ashift", "tcgen05.mma .ashift")):
        if mod in ins.modifiers:
            raise Unsupported(f"{ins.name}: {what} is not modelled", ins)
    kinds = [m for m in ins.modifiers if m.startswith(".kind::")]
    if len(kinds) != 1:
        raise Unsupported(f"{ins.name}: needs exactly one .kind", ins)
    kind = kinds[0][len(".kind::"):]
    scaled = ".block_scale" in ins.modifiers
    if kind not in _PLAIN_KINDS + BLOCK_SCALED_KINDS:
        raise Unsupported(f"{ins.name}: .kind::{kind}", ins)
    if scaled != (kind in BLOCK_SCALED_KINDS):
        raise Unsupported(f"{ins.name}: .kind::{kind} {'with' if scaled else 'without'} .block_scale is not a form of "
                          "PTX 9.7.16.10.9.1 (.block_scale goes with .kind::mxf8f6f4/mxf4/mxf4nvf4, and they with it)",
                          ins)
    vecs = [m for m in ins.modifiers if m in SCALE_VEC_QUALIFIERS]
    if not scaled:
        _check(ins, {".mma", ".cta_group::1", kinds[0]})
        return MmaForm(kind, None)
    _check(ins, {".mma", ".cta_group::1", kinds[0], ".block_scale", *vecs})
    return MmaForm(kind, scale_vec_of(kind, vecs, ins))


def _mma(b: "Batch", ins: A.Instruction, mask: np.ndarray, u: Tcgen05Unit) -> None:
    """tcgen05.mma.cta_group::1.kind [d-tmem], a-desc|[a-tmem], b-desc, idesc, enable-input-d and
    tcgen05.mma.cta_group::1.kind.block_scale{.scale_vectorsize} [d-tmem], a-desc|[a-tmem], b-desc,
    idesc, [scale-A-tmem], [scale-B-tmem], enable-input-d (9.7.16.10.9)."""
    form = _mma_form(ins)
    opnds = ins.operands
    if len(opnds) != form.operands or any(isinstance(o, A.Vector) for o in opnds):
        raise Unsupported(f"{ins.name}: disable-output-lane / scale-input-d operands are not modelled "
                          f"({len(opnds)} operands)", ins)
    if form.vec is not None and not all(isinstance(o, A.Address) for o in opnds[4:6]):
        raise Unsupported(f"{ins.name}: the scale operands must be [scale-A-tmem], [scale-B-tmem] addresses", ins)
    lanes = np.nonzero(mask)[0]
    d_addr = _tmem_addr(b, opnds[0], lanes, ins)
    a_tmem = isinstance(opnds[1], A.Address)
    a_val = (_tmem_addr(b, opnds[1], lanes, ins) if a_tmem
             else _lane_vals(b, opnds[1], ".b64", lanes).astype(np.uint64))
    b_desc = _lane_vals(b, opnds[2], ".b64", lanes).astype(np.uint64)
    idesc_raw = _lane_vals(b, opnds[3], ".b32", lanes).astype(np.uint64)
    if form.vec is not None:
        sfa = _tmem_addr(b, opnds[4], lanes, ins)
        sfb = _tmem_addr(b, opnds[5], lanes, ins)
    enable = _lane_vals(b, opnds[-1], ".pred", lanes).astype(bool)
    sb = b.memory.shared_bytes
    for i, lane in enumerate(lanes):
        idesc = decode_instr_desc(int(idesc_raw[i]), form.kind, ins)
        for note in idesc.notes:
            u.warn(f"{note} at {ins.span}")
        if idesc.max_shift:
            u.warn(f"instruction descriptor {int(idesc_raw[i]):#010x}: maximum-shift bits 30-31 set without .ws "
                   f"at {ins.span}")
        a = ops.AOperand(a_tmem, int(a_val[i]))
        for raw in ([int(b_desc[i])] if a_tmem else [int(a_val[i]), int(b_desc[i])]):
            d = decode_smem_desc(raw)
            check_smem_desc(d, ins)
            _warn_descriptor(u, d, ins)
        scaled = (ops.scale_operands(idesc, form.vec, int(sfa[i]), int(sfb[i]), ins)
                  if form.vec is not None else None)
        cta = int(b.cta_of_lane[lane])
        # validate now: the operation may be performed at any time from its issue on
        fp = ops.mma_footprint(idesc, int(d_addr[i]), a, int(b_desc[i]), bool(enable[i]), sb, ins, scaled)
        u.tmem.check_access(np.asarray(cta), *fp.d, "tcgen05.mma D", ins)
        if fp.a_tmem is not None:
            u.tmem.check_access(np.asarray(cta), *fp.a_tmem, "tcgen05.mma A operand", ins)
        for sc, what in zip(fp.scales, ("scale-A-tmem", "scale-B-tmem")):
            u.tmem.check_access(np.asarray(cta), sc.lanes, sc.cols, f"tcgen05.mma {what}", ins)
        op = MmaOp(ins, b.ctx.pc, cta, int(d_addr[i]), a, int(b_desc[i]), idesc, bool(enable[i]), scaled)
        op.handle = _issue(b, u, ins, int(lane), lambda p, k=op.key: p.after_mma(k), Proxy.ASYNC, copy=False)
        u.enqueue(int(lane), op)


def _cp(b: "Batch", ins: A.Instruction, mask: np.ndarray, u: Tcgen05Unit) -> None:
    """tcgen05.cp.cta_group::1.shape{.multicast} [taddr], s-desc (9.7.16.9.2)."""
    fmts = sorted(ins.modifiers & _CP_FORMATS)
    if fmts:
        raise Unsupported(f"{ins.name}: decompression {''.join(fmts)} (the 4/6-bit to 8-bit conversion of "
                          "PTX 9.7.16.9.1 is given by figures only) is not modelled", ins)
    shapes = [m for m in ins.modifiers if m.lstrip(".") in {s.value for s in ops.CpShape}]
    casts = [m for m in ins.modifiers if m in {c.value for c in ops.CpMulticast if c.value}]
    if len(shapes) != 1 or len(casts) > 1:
        raise Unsupported(f"{ins.name}: needs one .shape and at most one .multicast", ins)
    _check(ins, {".cp", ".cta_group::1", shapes[0], *casts})
    layout = ops.cp_layout(shapes[0].lstrip("."), casts[0] if casts else "", ins)
    if len(ins.operands) != 2:
        raise Unsupported(f"{ins.name}: expects [taddr], s-desc", ins)
    lanes = np.nonzero(mask)[0]
    taddr = _tmem_addr(b, ins.operands[0], lanes, ins)
    descs = _lane_vals(b, ins.operands[1], ".b64", lanes).astype(np.uint64)
    sb = b.memory.shared_bytes
    for i, lane in enumerate(lanes):
        d = decode_smem_desc(int(descs[i]))
        _warn_descriptor(u, d, ins)
        if layout.multicast is not ops.CpMulticast.NONE and int(taddr[i]) >> 16:
            raise Unsupported(f"{ins.name}: multicast {layout.multicast.value} to tensor memory lane "
                              f"{int(taddr[i]) >> 16} (which lanes receive the rows is documented for lane 0 only)",
                              ins)
        ops.cp_source_addresses(sb, d, layout, ins)
        cta = int(b.cta_of_lane[lane])
        u.tmem.check_access(np.asarray(cta), *ops.cp_dest_cells(layout, int(taddr[i])), "tcgen05.cp destination", ins)
        op = CpOp(ins, b.ctx.pc, cta, int(taddr[i]), d, layout)
        op.handle = _issue(b, u, ins, int(lane), lambda p, lay=layout: p.after_cp(lay), Proxy.ASYNC)
        u.enqueue(int(lane), op)


def _shift(b: "Batch", ins: A.Instruction, mask: np.ndarray, u: Tcgen05Unit) -> None:
    """tcgen05.shift.cta_group::1.down [taddr] (9.7.16.9.3)."""
    _check(ins, {".shift", ".cta_group::1", ".down"})
    if ".down" not in ins.modifiers or len(ins.operands) != 1:
        raise Unsupported(f"{ins.name}: expects tcgen05.shift.cta_group::1.down [taddr]", ins)
    lanes = np.nonzero(mask)[0]
    taddr = _tmem_addr(b, ins.operands[0], lanes, ins)
    for i, lane in enumerate(lanes):
        t = int(taddr[i])
        if (t >> 16) % 32:
            raise UndefinedBehavior(f"{ins.name}: tensor memory address {t:#x}: \"The lane of the address operand "
                                    "taddr must be aligned to 32\" (PTX 9.7.16.9.3)", ins)
        cta = int(b.cta_of_lane[lane])
        for cells in ops.shift_cells(t):
            u.tmem.check_access(np.asarray(cta), *cells, "tcgen05.shift", ins)
        op = ShiftOp(ins, b.ctx.pc, cta, t)
        op.handle = _issue(b, u, ins, int(lane), Pipeline.after_shift, Proxy.ASYNC)
        u.enqueue(int(lane), op)


def _perform(u: Tcgen05Unit, lane: int, op: TensorOp) -> None:
    """Perform one queued op of thread slot `lane` (values), telling observers its accesses."""
    b = u.batch
    if b.observers:
        if isinstance(op, MmaOp) and op.handle is not None:  # performed now (never for ops left in flight)
            _tell_mma(u, op.handle, op)
        _report_footprint(u, lane, op)
    if isinstance(op, MmaOp):
        ops.mma(u.tmem, op.cta, u.smem(op.cta), op.d_addr, op.a, op.b_desc, op.idesc, op.enable_input_d, op.ins,
                op.scaled)
        u.mmas_performed += 1
    elif isinstance(op, CpOp):
        ops.cp(u.tmem, op.cta, u.smem(op.cta), op.taddr, op.desc, op.layout, op.ins)
    else:
        ops.shift(u.tmem, op.cta, op.taddr, op.ins)


def _report_footprint(u: Tcgen05Unit, lane: int, op: TensorOp) -> None:
    """The accesses of one mma/cp/shift: shared-memory reads (async proxy), tensor-memory reads, then
    tensor-memory writes."""
    b = u.batch
    h = op.handle
    if h is None:
        return
    if isinstance(op, MmaOp):
        fp = ops.mma_footprint(op.idesc, op.d_addr, op.a, op.b_desc, op.enable_input_d, b.memory.shared_bytes, op.ins,
                               op.scaled)
        if fp.a_smem is not None:
            _report_smem_read(b, h, lane, op.cta, fp.a_smem)
        _report_smem_read(b, h, lane, op.cta, fp.b_smem)
        if fp.a_tmem is not None:
            _report_thread_tmem(b, h, False, lane, op.cta, *fp.a_tmem)
        for sc in fp.scales:  # the selected bytes of every duplicate (tcgen05.scales)
            _report_tmem(b, h, False, np.array([lane]), np.array([op.cta]), sc.lanes.reshape(1, -1),
                         sc.cols.reshape(1, -1), sc.first, sc.nbytes)
        if fp.reads_d:
            _report_thread_tmem(b, h, False, lane, op.cta, *fp.d)
        _report_thread_tmem(b, h, True, lane, op.cta, *fp.d)
    elif isinstance(op, CpOp):
        addr = ops.cp_source_addresses(b.memory.shared_bytes, op.desc, op.layout, op.ins)
        _report_smem_read(b, h, lane, op.cta, np.unique(addr))
        _report_thread_tmem(b, h, True, lane, op.cta, *ops.cp_dest_cells(op.layout, op.taddr))
    else:
        (rl, rc), (wl, wc) = ops.shift_cells(op.taddr)
        _report_thread_tmem(b, h, False, lane, op.cta, rl, rc)
        _report_thread_tmem(b, h, True, lane, op.cta, wl, wc)


def _tell_mma(u: Tcgen05Unit, h: AsyncOp, op: MmaOp) -> None:
    """Tell observers the MMA being performed (events.TensorMmaPerformed) with the element addresses the
    emulator itself reads (ops.operand_addresses_checked, as ops.mma does; for A in tensor memory the cells of
    ops.tmem_operand and their bytes) and the old D cells. Byte-container
    kinds only: sub-byte elements (.kind::mxf8f6f4 f6/f4, mxf4) get no addresses (an observer sees
    block_scaled and the kind)."""
    b = u.batch
    idesc = op.idesc
    sb = b.memory.shared_bytes
    base = op.cta * sb

    def elements(raw: int, rows: int, ty: str, k_major: bool) -> np.ndarray | None:
        container = ops.operand_container(idesc.kind, ty)
        if container is not Container.BYTE:
            return None
        return base + ops.operand_addresses_checked(sb, decode_smem_desc(raw), rows, idesc.k, ty, k_major, op.ins,
                                                    container)

    fp = ops.mma_footprint(idesc, op.d_addr, op.a, op.b_desc, True, sb, op.ins, op.scaled)
    a_bits = None
    if op.a.in_tmem:  # byte elements only (ops.check_modelled): (rows, k, eb) of the cells, MODEL layout of ops.tmem_operand
        eb = ops.element_bytes(idesc.atype, op.ins)
        lanes, cols = fp.a_tmem
        a_bytes = T.byte_offsets(op.cta, lanes, cols).reshape(idesc.m, -1)[:, :idesc.k * eb].reshape(idesc.m, idesc.k, eb)
        words = u.tmem.cells[op.cta][lanes, cols].astype("<u4")
        a_bits = words.view(np.uint8).reshape(idesc.m, -1)[:, :idesc.k * eb].reshape(idesc.m, idesc.k, eb).copy()
    else:
        a_bytes = elements(op.a.value, idesc.m, idesc.atype, not idesc.transpose_a)
    b_bytes = elements(op.b_desc, idesc.n, idesc.btype, not idesc.transpose_b)
    d_old = None
    if op.enable_input_d:
        lanes, cols = fp.d
        d_old = u.tmem.cells[op.cta][lanes, cols].copy()
    b.emit(TensorMmaPerformed(h, idesc.kind, idesc.atype, idesc.btype, idesc.dtype, idesc.m, idesc.n, idesc.k,
                              op.a.in_tmem, a_bytes, a_bits, b_bytes, op.enable_input_d, d_old, idesc.negate_a, idesc.negate_b,
                              idesc.block_scaled, idesc.saturate))


def _commit(machine: "Machine", b: "Batch", ins: A.Instruction, mask: np.ndarray, u: Tcgen05Unit) -> None:
    """tcgen05.commit.cta_group::1.mbarrier::arrive::one{.shared::cluster}.b64 [mbar] (9.7.16.12.1):
    the mbarrier tracks all prior mma/cp/shift of the executing thread; upon their completion an
    arrive-on (count 1) is signalled on it. Implies tcgen05.fence::before_thread_sync (9.7.16.6.4.2)."""
    if ".multicast::cluster" in ins.modifiers:
        raise Unsupported(f"{ins.name}: .multicast::cluster commit (signalling other CTAs) is not modelled", ins)
    _check(ins, {".commit", ".cta_group::1", ".mbarrier::arrive::one", ".shared::cluster", ".b64"})
    if ".mbarrier::arrive::one" not in ins.modifiers:
        raise Unsupported(f"{ins.name}: commit without .mbarrier::arrive::one", ins)
    if len(ins.operands) != 1:
        raise Unsupported(f"{ins.name}: multicast commit (ctaMask operand)", ins)
    lanes = np.nonzero(mask)[0]
    for lane in lanes:
        q = u.queue(int(lane))
        upto = len(q.ops)
        tracked = [op.handle for op in q.ops[:upto] if op.handle is not None] if b.observers else []
        _arrive_when_done(machine, b, ins, int(lane), u, upto, tracked)
    _fence(b, ins, lanes, FenceKind.TCGEN05_BEFORE)


def _arrive_when_done(machine: "Machine", b: "Batch", ins: A.Instruction, lane: int, u: Tcgen05Unit, upto: int,
                      tracked: list[AsyncOp]) -> None:
    """Arrive once on the mbarrier operand of `ins` for thread slot `lane`; the thread's ops up to
    `upto` are performed just before the phase this arrival counts toward completes (the latest
    point the commit allows), and the `tracked` ops complete into that phase."""
    try:
        from symexec import mbarrier as mb
    except ModuleNotFoundError:  # pragma: no cover - the mbarrier unit ships with symexec
        raise Unsupported(f"{ins.name}: needs the mbarrier unit (symexec.mbarrier)", ins) from None
    mu = mb.unit(b)
    keys = mb.shared_keys(machine, b, ins, ins.operands[0], np.array([lane]))
    key = (int(keys[0, 0]), int(keys[0, 1]))
    bar = mu.get(key, ins)
    bar.on_complete.append(CommitDone(b, u, lane, upto, tracked, mu.point(bar, bar.phase)))
    mu.arrive(key, 1, ins)


@dataclass(eq=False)
class CommitDone:
    """What the completion of a committed phase does (`Barrier.on_complete`): thread slot `lane`'s
    queued ops up to `upto` are performed, and the `tracked` ops complete into `point`."""

    batch: "Batch"
    u: Tcgen05Unit
    lane: int
    upto: int
    tracked: list[AsyncOp]
    point: object

    def __call__(self) -> None:
        self.u.flush(self.lane, self.upto)
        for op in self.tracked:
            asyncops.complete(self.batch, op, point=self.point, implies_proxy_fence=False)

    def loop_key(self, canon, phase: int) -> tuple:
        """Canonical form for loop summaries (symexec.check.loops.Canon) on a barrier now in `phase`:
        the queued ops still to perform, relative to those performed, the point's phase relative to
        `phase`, and the tracked ops whose completion can still change a clock (`Canon.op_live`;
        completing one whose agent was retired or reused does nothing)."""
        q = self.u.queues.get(self.lane)
        done = q.done if q is not None else 0
        ident = self.point.ident
        return ("tcgen05.commit", self.lane, max(0, self.upto - done), ident[0], ident[2] - (phase & 0xFFFFFFFF),
                tuple(canon.op_label(op) for op in self.tracked if canon.op_live(op)))


UNIT = Unit(UNIT_NAME, {"tcgen05": tcgen05}, "Blackwell tensor cores and tensor memory (PTX 9.7.16)")
