"""What the machine tells its observers: typed events, and the observer interface.

The machine, its memory and its units *emit* events; they know no listener. A plain run has no
observers and builds no events. Check mode (symexec.check) is one observer: it keeps the access
log and the happens-before clocks, and turns events into findings. This is the inspection-event
idea of angr's memory mixins (named events before/after, the memory unaware of who listens) for
the questions a GPU verifier asks:
- memory accesses, with their space, proxy (PTX 8.6: generic, async, tensormap), bytes,
  strength, scope and release/acquire semantics;
- synchronisation: a release into a synchronisation point (barrier arrival, mbarrier arrive-on,
  warp sync) and an acquire of one (barrier completion, a wait that observed an mbarrier phase);
- fences (kind and proxy);
- asynchronous operations issued and completed (the mechanism that completes them); their read
  and write footprints are the memory accesses that name them;
- thread groups split (divergence, both paths of a data-dependent branch) and reconverged.

Observers subclass `Observer` and override the hooks they need (all default to no-ops).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, IntEnum
from typing import TYPE_CHECKING

import numpy as np

from ptx_parser import ast as A

from .opcodes import Order, Scope

if TYPE_CHECKING:  # pragma: no cover
    from .machine import Batch, Group, Join


class Proxy(Enum):
    """The path a memory access takes (PTX 8.6 proxies)."""

    GENERIC = "generic"
    ASYNC = "async"  # cp.async.bulk{.tensor}, cp.reduce.async.bulk, wgmma and tcgen05 operand reads
    TENSORMAP = "tensormap"


class AccessKind(IntEnum):
    READ = 0
    WRITE = 1
    ATOMIC = 2


class MemSpace(Enum):
    GLOBAL = "global"
    SHARED = "shared"
    LOCAL = "local"
    PARAM = "param"
    TMEM = "tmem"  # tensor memory (PTX 9.7.16.1): one buffer of lanes x columns x 4 bytes per CTA slot


@dataclass(frozen=True)
class Buffer:
    """One addressable array of bytes: a global allocation (index), the shared or local memory of
    a CTA batch (batch id), the parameter buffer, or a batch's tensor memory."""

    space: MemSpace
    index: int = 0


@dataclass(frozen=True, eq=False)
class MemoryAccess:
    """Bytes `flat` (k, nbytes: offsets into `buffer`) read or written by thread slots `lanes`."""

    write: bool
    buffer: Buffer
    size: int  # bytes in the buffer
    lanes: np.ndarray
    flat: np.ndarray
    ins: A.Instruction | None
    pc: int
    scope: Scope = Scope.NONE  # strength: NONE for a weak access (PTX 8.4)
    order: Order = Order.NONE
    atomic: bool = False  # part of a read-modify-write (atom, red)
    proxy: Proxy = Proxy.GENERIC
    op: "AsyncOp | None" = None  # performed on behalf of this asynchronous operation
    # every row of `flat` is consecutive ascending bytes (Memory.read / write make them so): the race
    # detector need not test it (races._contiguous)
    consecutive: bool = False


# ---------------------------------------------------------------------- synchronisation


class SyncKind(Enum):
    BARRIER = "bar"  # bar/barrier id, completion count of that id in the CTA (PTX 9.7.13.1)
    MBARRIER = "mbarrier"  # shared offset, initialisations at that offset so far, phase (9.7.13.15)
    WARP_SYNC = "warpsync"  # warp within the CTA, occurrence (bar.warp.sync, 9.7.13.2)


@dataclass(frozen=True)
class SyncPoint:
    """A synchronisation object instance, per CTA (the CTA comes from the lanes)."""

    kind: SyncKind
    ident: tuple[int, ...]


@dataclass(frozen=True, eq=False)
class Release:
    """Thread slots `lanes` publish what they did so far into `point` (an arrival, a release
    arrive-on, the start of a warp sync)."""

    lanes: np.ndarray
    point: SyncPoint
    ins: A.Instruction | None = None
    relaxed: bool = False  # no release semantics (mbarrier .relaxed): orders only through tcgen05 fences


@dataclass(frozen=True, eq=False)
class Acquire:
    """Thread slots `lanes` observe `point` complete and join what was released into it.
    `consume`: the point is never acquired again (its record may be dropped)."""

    lanes: np.ndarray
    point: SyncPoint
    ins: A.Instruction | None = None
    consume: bool = False
    relaxed: bool = False  # no acquire semantics (mbarrier .relaxed wait)


class FenceKind(Enum):
    MEMORY = "memory"  # fence.{sc,acq_rel}.scope, membar (PTX 9.7.13.4)
    PROXY = "proxy"  # fence.proxy.* between the generic proxy and another (9.7.13.4, 8.6)
    MBARRIER_INIT = "mbarrier_init"  # fence.mbarrier_init.release.cluster
    TCGEN05_BEFORE = "tcgen05_before_thread_sync"  # tcgen05.fence::before_thread_sync (9.7.16.6.2)
    TCGEN05_AFTER = "tcgen05_after_thread_sync"  # tcgen05.fence::after_thread_sync


@dataclass(frozen=True, eq=False)
class Fence:
    lanes: np.ndarray
    kind: FenceKind
    ins: A.Instruction
    proxy: Proxy | None = None  # PROXY fences: the other proxy
    space: str | None = None  # PROXY fences: the state space named (.shared::cta, .global, ...) or None: all


# ---------------------------------------------------------------------- asynchronous operations


class Stream(IntEnum):
    """Per-thread sequences of asynchronous operations that complete in issue order and that the
    issuing thread's own waits observe: each issuing lane's part is that thread's operation."""

    CP_ASYNC = 1  # cp.async (9.7.9.25.3): cp.async.wait_group / wait_all, or an mbarrier hand-over
    BULK_READS = 2  # source reads of bulk stores/reductions: cp.async.bulk.wait_group{.read} (9.7.9.25.6)
    BULK_WRITES = 3  # their destination writes: cp.async.bulk.wait_group without .read


class Completion(Enum):
    """How the issuing thread (or others) learns that an asynchronous operation is complete."""

    CP_ASYNC_GROUP = "cp.async.wait_group"  # cp.async.commit_group + wait_group/wait_all (9.7.9.25.3)
    MBARRIER = "mbarrier"  # complete-tx / arrive-on an mbarrier phase (9.7.13.15)
    BULK_GROUP = "cp.async.bulk.wait_group"  # bulk async-groups (9.7.9.25.6)
    WGMMA_GROUP = "wgmma.wait_group"  # (9.7.15.7)
    TCGEN05_COMMIT = "tcgen05.commit"  # tcgen05.commit -> mbarrier (9.7.16.10.10)
    TCGEN05_WAIT_LD = "tcgen05.wait::ld"
    TCGEN05_WAIT_ST = "tcgen05.wait::st"


@dataclass(eq=False)
class AsyncOp:
    """An asynchronous operation from issue to completion (symexec.asyncops). Its memory accesses
    name it (MemoryAccess.op); they may happen anywhere between its issue and its completion."""

    ident: int
    unit: str
    ins: A.Instruction
    pc: int
    lanes: np.ndarray  # issuing thread slots
    completion: Completion
    proxy: Proxy = Proxy.ASYNC
    tensor_core: bool = False  # a tcgen05 asynchronous operation (9.7.16.6.1)
    after: tuple["AsyncOp", ...] = ()  # operations it is pipelined behind (9.7.16.6.2)
    stream: "Stream | None" = None  # per-thread operations completing in issue order (one per lane)
    copy: bool = True  # what it writes to memory are the bytes it read (else: values computed from them)


@dataclass(frozen=True, eq=False)
class AsyncIssued:
    op: AsyncOp


@dataclass(frozen=True, eq=False)
class CopyLayout:
    """Where the bytes of a copy that does not move them in order come from (a tensor copy:
    out-of-bounds box elements, symexec.tma): the `i`-th byte `op` writes for lane `lane`, counted
    over its write accesses in the order they are reported, is the `source[i]`-th byte its reads
    (those of `reads`, or of `op` itself) reported for that lane, or a zero fill where -1."""

    op: AsyncOp
    lane: int
    source: np.ndarray  # (bytes written,) int64
    reads: AsyncOp | None = None


@dataclass(frozen=True, eq=False)
class AsyncCompleted:
    """The operation is performed: it releases into `point` (an mbarrier phase) and the thread
    slots `observers` observe its completion now (a wait of the issuing thread). Who else may rely
    on it is a happens-before question: an Acquire of `point`."""

    op: AsyncOp
    point: SyncPoint | None = None
    observers: np.ndarray | None = None
    implies_proxy_fence: bool = True
    lanes: np.ndarray | None = None  # stream operations: the lanes whose part completed (None: all)


@dataclass(frozen=True, eq=False)
class MmaPerformed:
    """A warpgroup MMA (wgmma.mma_async, PTX 9.7.15.5.2) is being performed, told inside its
    `asyncops.performing` context before it reads its operands (symexec/wgmma.py): what an
    observer needs beside the accesses and register reads that follow to give D a meaning. Its
    reads come in the emulator's order: A's (64 x k) elements through a descriptor (none when A is
    in registers: its four registers are read instead), then B's (n x k) elements, each row-major
    (MN index, then K: symexec.wgmma_layout.matrix_addresses), then the D registers."""

    op: AsyncOp
    n: int
    k: int
    dtype: str  # .f32, .f16, .s32
    atype: str
    btype: str
    a_in_registers: bool
    scale_d: bool  # False: D = A*B, the old D is not an input (9.7.15.5.2)
    scale_a: int  # imm-scale-a: 1 or -1 (negate A)
    scale_b: int
    satfinite: bool = False  # integer (.s32) only: clamp to int32 instead of wrapping (9.7.15.5.2)


@dataclass(frozen=True, eq=False)
class TensorMmaPerformed:
    """A Blackwell tensor-core MMA (tcgen05.mma, PTX 9.7.16.10.9) is being performed, told by the tcgen05 unit
    before it reports the op's accesses (shared-memory reads of A and B, the old D cells when enable-input-d,
    then D's cells written): what an observer needs to give D a meaning. The element addresses are the
    emulator's own (tcgen05.ops.operand_addresses_checked, swizzle and major-ness applied), as flat byte
    indices of the batch's shared-memory buffer; D's cells are written in (M, N) row-major order, 4 bytes
    each (tcgen05.ops.d_region)."""

    op: AsyncOp
    kind: str  # .kind:: without the prefix: f16, tf32, f8f6f4, i8, mxf8f6f4, ...
    atype: str  # element types without the dot (instruction descriptor, 9.7.16.4.2)
    btype: str
    dtype: str
    m: int
    n: int
    k: int
    a_in_tmem: bool  # A is read from tensor memory ([a-tmem])
    # (m, k, element bytes) / (n, k, element bytes) flat byte indices of each element: of the batch's shared-memory
    # buffer, for A in tensor memory of its tensor-memory buffer; None for sub-byte elements (f6/f4)
    a_bytes: np.ndarray | None
    a_tmem_bits: np.ndarray | None  # (m, k, element bytes) uint8: A's bytes in tensor memory (the observer has none)
    b_bytes: np.ndarray | None
    enable_input_d: bool  # False: D = A*B, the old D is not an input
    d_old: np.ndarray | None  # (m, n) uint32 old D cells when enable_input_d
    negate_a: bool
    negate_b: bool
    block_scaled: bool
    saturate: bool


# ---------------------------------------------------------------------- thread groups


class SplitReason(Enum):
    DIVERGENCE = "divergence"  # a branch taken by some lanes: reconverge at the post-dominator
    BOTH_PATHS = "both_paths"  # a data-dependent branch explored both ways with every lane
    GUARD = "guard"  # lanes whose guard was false go on while the others block


@dataclass(frozen=True, eq=False)
class GroupSplit:
    parent: "Group"
    children: tuple["Group", ...]
    reason: SplitReason
    ins: A.Instruction | None = None


@dataclass(frozen=True, eq=False)
class Reconverged:
    """Groups parked at `join` merged into `group`; `data_registers`: registers written on two
    paths explored for a data-dependent branch (their values depend on the data's choice)."""

    join: "Join"
    group: "Group"
    data_registers: frozenset[str] = frozenset()


@dataclass(frozen=True, eq=False)
class Exited:
    lanes: np.ndarray


Event = (MemoryAccess | Release | Acquire | Fence | AsyncIssued | CopyLayout | AsyncCompleted | MmaPerformed | TensorMmaPerformed | GroupSplit
         | Reconverged | Exited)


class Observer:
    """Listens to a machine's events; override what you need. `on_batch` comes first for every
    CTA batch (its lanes are the thread slots the events name)."""

    def on_batch(self, batch: "Batch") -> None: ...

    def on_access(self, ev: MemoryAccess) -> None: ...

    def on_release(self, ev: Release) -> None: ...

    def on_acquire(self, ev: Acquire) -> None: ...

    def on_fence(self, ev: Fence) -> None: ...

    def on_async_issued(self, ev: AsyncIssued) -> None: ...

    def on_copy_layout(self, ev: CopyLayout) -> None: ...

    def on_async_completed(self, ev: AsyncCompleted) -> None: ...

    def on_mma_performed(self, ev: MmaPerformed) -> None: ...

    def on_tensor_mma_performed(self, ev: TensorMmaPerformed) -> None: ...

    def on_split(self, ev: GroupSplit) -> None: ...

    def on_reconverge(self, ev: Reconverged) -> None: ...

    def on_exit(self, ev: Exited) -> None: ...


_HOOK = {MemoryAccess: "on_access", Release: "on_release", Acquire: "on_acquire", Fence: "on_fence",
         AsyncIssued: "on_async_issued", CopyLayout: "on_copy_layout", AsyncCompleted: "on_async_completed",
         MmaPerformed: "on_mma_performed", TensorMmaPerformed: "on_tensor_mma_performed",
         GroupSplit: "on_split",
         Reconverged: "on_reconverge", Exited: "on_exit"}


def hook_name(event_type: type) -> str:
    return _HOOK[event_type]
