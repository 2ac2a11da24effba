"""Asynchronous copies (PTX 9.7.9.25): cp.async, its groups and mbarrier hand-over, and bulk copies.

Non-bulk `cp.async` (9.7.9.25.3) completes at the latest legal point: its source bytes are read
when it is issued (changing them afterwards is undefined, 9.7.9.25.1) and written into shared
memory only when a completion mechanism of the issuing thread covers it: `cp.async.wait_group N`
/ `wait_all` (9.7.9.25.3.3), or completion of the mbarrier phase it was handed to by
`cp.async.mbarrier.arrive` (9.7.13.15.15). A kernel that reads the destination before its wait
therefore sees the old bytes. Bookkeeping is per thread and vectorised over lanes: a copy belongs
to its thread's current uncommitted group; `commit_group` closes it.

Bulk copies (9.7.9.25.4, sm_90) run in the async proxy. global -> shared copies complete tx bytes
on their mbarrier; their bytes land just before that barrier's phase completes (symexec.mbarrier).
shared -> global copies (`.bulk_group`) and `cp.reduce.async.bulk` to global are performed whole
(source read and destination written) when the issuing thread's `cp.async.bulk.wait_group{.read}`
covers their bulk async-group, or at the end of the kernel: a kernel that overwrites the source
before its `.read` wait sends the new bytes. Copies still pending when the batch ends (`finish`)
complete then and are recorded. Tensor copies (`cp{.reduce}.async.bulk{.prefetch}.tensor`,
9.7.9.25.5) go through their tensor maps in symexec.tma.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import numpy as np

from ptx_parser import ast as A
from semantics.errors import UndefinedBehavior, Unsupported
from semantics.ptx.core import tinfo

from . import asyncops
from . import mbarrier as MB
from .events import Completion, Proxy, Stream
from .errors import MemoryFault
from .machine import FindingKind, Group
from .memory import from_bytes, to_bytes
from .units import Unit, UnitState

if TYPE_CHECKING:  # pragma: no cover
    from .events import AsyncOp
    from .machine import Batch, Machine


@dataclass(eq=False)
class CopyRecord:
    """One cp.async instruction's copies, one row per issuing lane."""

    ins: A.Instruction
    lanes: np.ndarray  # (k,) thread slots
    group: np.ndarray  # (k,) index of the issuing thread's async-group the copy belongs to
    dst: np.ndarray  # (k,) shared-window offsets
    data: np.ndarray  # (k, nbytes) bytes to write (source snapshot, zero-filled)
    done: np.ndarray  # (k,) written already
    pc: int = -1  # where it was issued (check mode attributes the late write to it)
    op: "AsyncOp | None" = None  # for observers: each lane's part is its thread's operation


@dataclass(eq=False)
class BulkOp:
    """One thread's bulk copy or reduction to global memory, performed when a wait covers it.
    For observers it is two operations: its source reads, which `cp.async.bulk.wait_group.read`
    completes, and its destination writes, which only a wait without .read observes
    (9.7.9.25.6.2)."""

    ins: A.Instruction
    lane: int
    group: int  # index of the issuing thread's bulk async-group
    perform: Callable[[], None]
    pc: int = -1
    reads: "AsyncOp | None" = None
    writes: "AsyncOp | None" = None
    performed: bool = False


@dataclass(eq=False)
class AsyncCopyUnit(UnitState):
    """Per-batch state of the non-bulk and bulk async-group mechanisms."""

    n: int
    committed: np.ndarray = field(init=False)  # cp.async groups committed per thread
    records: list[CopyRecord] = field(default_factory=list)
    bulk_committed: np.ndarray = field(init=False)  # bulk async-groups committed per thread
    bulk_ops: list[BulkOp] = field(default_factory=list)
    # (instruction, thread slots) of cp.async copies still pending when their thread exited
    exited_pending: list[tuple[A.Instruction, np.ndarray]] = field(default_factory=list)
    # (instruction, thread slot) of bulk operations no wait covered before the end of the kernel
    unwaited_bulk: list[tuple[A.Instruction, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._alive_seen = -1
        self.committed = np.zeros(self.n, dtype=np.int64)
        self.bulk_committed = np.zeros(self.n, dtype=np.int64)

    def complete(self, batch: "Batch", which, point=None, observed: bool = False) -> None:
        """Write the copies selected by which(record) -> bool (k,), oldest first (groups complete in
        commit order, 9.7.9.25.1.1). For observers: they release into `point` (an mbarrier phase)
        and, if `observed`, their issuing threads observe them now (their wait)."""
        for rec in self.records:
            sel = which(rec) & ~rec.done
            if sel.any():
                lanes = rec.lanes[sel]
                with asyncops.performing(batch, rec.op, rec.ins, lanes, rec.pc):
                    batch.memory.write(".shared", lanes, rec.dst[sel], rec.data[sel], rec.ins)
                asyncops.complete(batch, rec.op, point, lanes if observed else None, implies_proxy_fence=False,
                                  lanes=lanes)
                rec.done |= sel
        self.records = [r for r in self.records if not r.done.all()]

    def on_exit(self, batch: "Batch", exiting: np.ndarray) -> None:
        """Threads that exit: their pending copies still complete; remember that they were pending."""
        for rec in self.records:
            hit = exiting[rec.lanes] & ~rec.done
            if hit.any():
                self.exited_pending.append((rec.ins, rec.lanes[hit].copy()))
        self.complete(batch, lambda r: exiting[r.lanes])

    def perform_bulk(self, batch: "Batch", which: Callable[[BulkOp], bool], reads_only: bool = False,
                     observed: bool = True) -> None:
        """Perform the selected bulk operations in issue order (bulk groups complete in order). Their
        issuing threads observe the completion of the source reads and, unless `reads_only` (a
        `.read` wait), of the writes (`observed`: a wait, not the end of the kernel)."""
        keep = []
        for op in self.bulk_ops:
            if not which(op):
                keep.append(op)
                continue
            lane = np.array([op.lane])
            if not op.performed:
                op.perform()
                op.performed = True
                asyncops.complete(batch, op.reads, observers=lane if observed else None)
            if reads_only:
                keep.append(op)  # its writes are not known to be complete to the thread yet
            else:
                asyncops.complete(batch, op.writes, observers=lane if observed else None)
        self.bulk_ops = keep

    def finish(self, batch: "Batch") -> None:
        """End of the batch (machine hook): whatever is still in flight completes now."""
        self.on_exit(batch, np.ones(self.n, dtype=bool))
        unwaited = [op for op in self.bulk_ops if not op.performed]
        self.unwaited_bulk += [(op.ins, op.lane) for op in unwaited]
        for op in {id(o.ins): o for o in unwaited}.values():  # one finding per instruction
            batch.report(FindingKind.UNDEFINED_BEHAVIOR,
                         f"{op.ins.name}: its thread exits before a cp.async.bulk.wait_group{{.read}} covers it, so "
                         "nothing orders its reads of the shared-memory source before the CTA's shared memory is "
                         "released (shared memory lives as long as its CTA, PTX 5.1; only a wait observes that "
                         "the source reads are done, 9.7.9.25.6.2)", op.ins, lane=op.lane)
        self.perform_bulk(batch, lambda op: True, observed=False)

    def reap(self, batch: "Batch") -> None:
        """Complete the copies of threads that have exited since the last look."""
        alive = int(batch.alive.sum())
        if self.records and alive != self._alive_seen:
            gone = ~batch.alive
            if any((gone[r.lanes] & ~r.done).any() for r in self.records):
                self.on_exit(batch, gone)
        self._alive_seen = alive


def unit(batch: "Batch") -> AsyncCopyUnit:
    return batch.unit("async_copy", lambda: AsyncCopyUnit(batch.n))


# ---------------------------------------------------------------------- dispatch


def cp(machine: "Machine", batch: "Batch", g: Group, ins: A.Instruction, mask: np.ndarray) -> bool:
    mods = ins.modifiers
    if ".async" not in mods:
        raise Unsupported(f"{ins.name}", ins)
    u = unit(batch)
    u.reap(batch)
    if ".reduce" in mods:
        fn = _reduce_bulk
    elif ".bulk" in mods:
        fn = (_bulk_commit if ".commit_group" in mods else _bulk_wait if ".wait_group" in mods
              else _prefetch if ".prefetch" in mods else _tensor if ".tensor" in mods else _bulk_copy)
    elif ".commit_group" in mods:
        fn = _commit
    elif ".wait_group" in mods or ".wait_all" in mods:
        fn = _wait
    elif ".mbarrier" in mods:
        fn = _mbarrier_arrive
    else:
        fn = _cp_async
    if mask.any():
        batch.ctx.begin(mask, ins)
        fn(machine, batch, u, ins, mask)
    g.pc += 1
    return True


def _check(ins: A.Instruction, allowed: set[str]) -> None:
    extra = ins.modifiers - allowed
    if extra:
        raise Unsupported(f"{ins.name}: modifier(s) {' '.join(sorted(extra))}", ins)


def _immediate(ins: A.Instruction, op: A.Operand) -> int:
    if not isinstance(op, A.IntLit):
        raise Unsupported(f"{ins.name}: operand must be an integer constant", ins)
    return op.value


def _lane_u32(batch: "Batch", op: A.Operand, lanes: np.ndarray) -> np.ndarray:
    return np.broadcast_to(np.asarray(batch.ctx.read(op, ".u32")), (batch.n,))[lanes].astype(np.int64)


def _shared_offsets(machine: "Machine", batch: "Batch", ins: A.Instruction, op: A.Operand,
                    lanes: np.ndarray) -> np.ndarray:
    """A `.shared{::cta}` / `.shared::cluster` address operand as shared-window offsets."""
    if ".shared::cluster" in ins.positional and tuple(machine.launch.cluster) != (1, 1, 1):
        raise Unsupported(f"{ins.name}: .shared::cluster destination in a cluster of several CTAs", ins)
    _, a = batch.ctx.address(op)
    return np.broadcast_to(np.asarray(a, dtype=np.uint64), (batch.n,))[lanes].astype(np.int64)


def _global_addrs(batch: "Batch", op: A.Operand, lanes: np.ndarray) -> np.ndarray:
    _, a = batch.ctx.address(op)
    return np.broadcast_to(np.asarray(a, dtype=np.uint64), (batch.n,))[lanes]


def _in_shared(batch: "Batch", ins: A.Instruction, lanes: np.ndarray, dst: np.ndarray, size: int) -> None:
    """A destination outside shared memory faults at issue (not later, when the bytes land)."""
    bad = (dst < 0) | (dst + size > batch.memory.shared_bytes)
    if bad.any():
        sel = np.nonzero(bad)[0][:8]
        raise MemoryFault(f"{ins.name}: shared memory destination out of bounds", ins,
                          [int(lanes[i]) for i in sel], [int(dst[i]) for i in sel], ".shared")


def _aligned(ins: A.Instruction, what: str, addrs: np.ndarray, align: int) -> None:
    bad = (addrs.astype(np.uint64) % np.uint64(align)) != 0
    if bad.any():
        raise UndefinedBehavior(f"{ins.name}: {what} address 0x{int(addrs[bad][0]):x} is not {align}-byte "
                                "aligned", ins)


# ---------------------------------------------------------------------- cp.async (9.7.9.25.3)

_CP_ASYNC = {".async", ".ca", ".cg", ".shared", ".shared::cta", ".global", ".L2::cache_hint", ".L2::64B",
             ".L2::128B", ".L2::256B"}


def _cp_async(machine: "Machine", batch: "Batch", u: AsyncCopyUnit, ins: A.Instruction, mask: np.ndarray) -> None:
    """cp.async.{ca,cg}.shared{::cta}.global [dst], [src], cp-size{, src-size | ignore-src}{, policy}."""
    _check(ins, _CP_ASYNC)
    if len(ins.positional) != 2 or ins.positional[1] != ".global" or ins.positional[0] not in (".shared",
                                                                                               ".shared::cta"):
        raise Unsupported(f"{ins.name}: only the .shared{{::cta}}.global direction exists", ins)
    ops = list(ins.operands)
    if ".L2::cache_hint" in ins.modifiers:
        if len(ops) < 4:
            raise Unsupported(f"{ins.name}: .L2::cache_hint without a cache-policy operand", ins)
        ops.pop()  # cache-policy: a performance hint
    if not 3 <= len(ops) <= 4:
        raise Unsupported(f"{ins.name}: {len(ins.operands)} operands", ins)
    size = _immediate(ins, ops[2])
    if size not in (4, 8, 16) or (".cg" in ins.modifiers and size != 16):
        raise Unsupported(f"{ins.name}: cp-size {size} (4, 8 or 16; 16 only with .cg)", ins)
    lanes = np.nonzero(mask)[0]
    if len(ops) == 4:
        extra = ops[3]
        decl = batch.prog.reg(extra.name) if isinstance(extra, A.Sym) else None
        if (decl is not None and decl.width == 1) or isinstance(extra, A.Negated):  # ignore-src predicate
            ignore = np.broadcast_to(np.asarray(batch.ctx.read(extra, ".pred")), (batch.n,))[lanes]
            src_size = np.where(ignore, 0, size).astype(np.int64)
        else:
            src_size = _lane_u32(batch, extra, lanes)
            if (src_size > size).any():
                raise UndefinedBehavior(f"{ins.name}: src-size {int(src_size.max())} larger than cp-size {size} "
                                        "(9.7.9.25.3.1)", ins)
    else:
        src_size = np.full(lanes.size, size, dtype=np.int64)
    dst = _shared_offsets(machine, batch, ins, ops[0], lanes)
    src = _global_addrs(batch, ops[1], lanes)
    _aligned(ins, "destination", dst, size)
    _in_shared(batch, ins, lanes, dst, size)
    reads = src_size > 0
    _aligned(ins, "source", src[reads], size)
    data = np.zeros((lanes.size, size), dtype=np.uint8)
    full = src_size == size
    mem = batch.memory
    # each thread's copy is its own asynchronous operation in the generic proxy (9.7.9.25.3); the
    # copies of one open async-group of a thread complete together (9.7.9.25.1.1)
    op = asyncops.issue(batch, "cp.async", ins, lanes, Completion.CP_ASYNC_GROUP, proxy=Proxy.GENERIC,
                        stream=Stream.CP_ASYNC)
    with asyncops.performing(batch, op, ins, lanes):  # the source may be read any time until completion
        if full.any():
            data[full] = mem.read(".global", lanes[full], src[full], size, ins)
        part = np.nonzero(reads & ~full)[0]
        for j in range(size):  # partial copies: only the first src-size bytes are read, the rest is zero
            sel = part[src_size[part] > j]
            if sel.size:
                data[sel, j] = mem.read(".global", lanes[sel], src[sel] + np.uint64(j), 1, ins)[:, 0]
    _same_group_overlap(u, ins, lanes, dst, size)
    u.records.append(CopyRecord(ins, lanes, u.committed[lanes].copy(), dst, data,
                                np.zeros(lanes.size, dtype=bool), batch.ctx.pc, op))


def _same_group_overlap(u: AsyncCopyUnit, ins: A.Instruction, lanes: np.ndarray, dst: np.ndarray, size: int) -> None:
    """Two cp.async of one thread's group writing the same bytes are undefined (9.7.9.25.3.2)."""
    for r in u.records:
        pos = np.searchsorted(r.lanes, lanes)  # lanes are ascending in both
        pos = np.minimum(pos, r.lanes.size - 1)
        same = (r.lanes[pos] == lanes) & ~r.done[pos] & (r.group[pos] == u.committed[lanes])
        if not same.any():
            continue
        other_size = r.data.shape[1]
        a, b = dst[same], r.dst[pos[same]]
        hit = (a < b + other_size) & (b < a + size)
        if hit.any():
            i = int(np.nonzero(same)[0][np.nonzero(hit)[0][0]])
            raise UndefinedBehavior(f"{ins.name}: thread slot {int(lanes[i])} copies to shared 0x{int(dst[i]):x}, "
                                    f"which an earlier cp.async of the same group (at {r.ins.span}) also writes "
                                    "(no order within a cp.async-group, 9.7.9.25.3.2)", ins)


def _commit(machine: "Machine", batch: "Batch", u: AsyncCopyUnit, ins: A.Instruction, mask: np.ndarray) -> None:
    """cp.async.commit_group (9.7.9.25.3.2): close each executing thread's current group."""
    _check(ins, {".async", ".commit_group"})
    u.committed[mask] += 1


def _wait(machine: "Machine", batch: "Batch", u: AsyncCopyUnit, ins: A.Instruction, mask: np.ndarray) -> None:
    """cp.async.wait_group N / wait_all (9.7.9.25.3.3): all but the N most recent committed groups
    of each executing thread complete (wait_all: commit, then wait for every group)."""
    if ".wait_all" in ins.modifiers:
        _check(ins, {".async", ".wait_all"})
        u.committed[mask] += 1
        keep = 0
    else:
        _check(ins, {".async", ".wait_group"})
        keep = _immediate(ins, ins.operands[0])
    limit = u.committed - keep
    u.complete(batch, lambda r: mask[r.lanes] & (r.group < limit[r.lanes]), observed=True)


def _mbarrier_arrive(machine: "Machine", batch: "Batch", u: AsyncCopyUnit, ins: A.Instruction,
                     mask: np.ndarray) -> None:
    """cp.async.mbarrier.arrive{.noinc}.shared{::cta}.b64 [addr] (9.7.13.15.15).

    The arrive-on is triggered when all prior cp.async of the thread complete. Modelled as: the
    copies are handed to the barrier's current phase and written when that phase completes (the
    latest point at which they can have completed); the arrive-on is counted now (without .noinc,
    the +1 it is preceded by cancels it)."""
    _check(ins, {".async", ".mbarrier", ".arrive", ".noinc", ".shared", ".shared::cta", ".b64"})
    mu = MB.unit(batch)
    lanes = np.nonzero(mask)[0]
    keys = MB.shared_keys(machine, batch, ins, ins.operands[0], lanes)
    noinc = ".noinc" in ins.modifiers
    for key, idx in MB.by_barrier(keys):
        mine = np.zeros(batch.n, dtype=bool)
        mine[lanes[idx]] = True
        # only the copies issued so far: later ones are not tracked by this arrive
        prior = {id(r): (r, mine[r.lanes] & ~r.done) for r in u.records}
        bar = mu.get(key, ins)

        def flush(prior=prior, bar=bar) -> None:
            def which(r: CopyRecord) -> np.ndarray:
                hit = prior.get(id(r))
                return hit[1] if hit is not None and hit[0] is r else np.zeros(r.lanes.size, dtype=bool)

            # the asynchronous arrive-on is ordered after the thread's prior cp.async only, not after
            # its other instructions (8.9.1.1): the copies release into the phase
            u.complete(batch, which, point=mu.point(bar, bar.phase))


        if not noinc:
            mu.add_pending(key, ins)
        bar.on_complete.append(flush)
        if noinc:
            for _ in idx:
                mu.arrive(key, 1, ins)


# ---------------------------------------------------------------------- bulk copies (9.7.9.25.4)

_BULK_HINTS = {".async", ".bulk", ".L2::cache_hint"}


def _bulk_copy(machine: "Machine", batch: "Batch", u: AsyncCopyUnit, ins: A.Instruction, mask: np.ndarray) -> None:
    pos = tuple(p for p in ins.positional if p.startswith((".shared", ".global")))
    ops = list(ins.operands)
    if ".L2::cache_hint" in ins.modifiers:
        ops.pop()
    lanes = np.nonzero(mask)[0]
    if pos in ((".shared::cluster", ".global"), (".shared::cta", ".global")):
        _check(ins, _BULK_HINTS | set(pos) | {".mbarrier::complete_tx::bytes"})
        if ".mbarrier::complete_tx::bytes" not in ins.modifiers or len(ops) != 4:
            raise Unsupported(f"{ins.name}", ins)
        dst = _shared_offsets(machine, batch, ins, ops[0], lanes)
        src = _global_addrs(batch, ops[1], lanes)
        size = _lane_u32(batch, ops[2], lanes)
        keys = MB.shared_keys(machine, batch, ins, ops[3], lanes)
        mu = MB.unit(batch)
        for i in range(lanes.size):
            n = _bulk_size(ins, int(size[i]), int(dst[i]), int(src[i]))
            li, di = lanes[i:i + 1], dst[i:i + 1]
            _in_shared(batch, ins, li, di, n)
            op = asyncops.issue(batch, "async_copy", ins, li, Completion.MBARRIER)
            with asyncops.performing(batch, op, ins, li):  # the source is read at issue (latest: any time)
                data = batch.memory.read(".global", li, src[i:i + 1], n, ins) if n else None

            def land(li=li, di=di, data=data, op=op, pc=batch.ctx.pc) -> None:
                if data is not None:
                    with asyncops.performing(batch, op, ins, li, pc):
                        batch.memory.write(".shared", li, di, data, ins)

            mu.track((int(keys[i, 0]), int(keys[i, 1])), n, land, ins, op, dest=li.tobytes() + di.tobytes())
        return
    if pos == (".global", ".shared::cta"):
        _check(ins, _BULK_HINTS | set(pos) | {".bulk_group"})
        if ".bulk_group" not in ins.modifiers or len(ops) != 3:
            raise Unsupported(f"{ins.name}", ins)
        dst = _global_addrs(batch, ops[0], lanes)
        src = _shared_offsets(machine, batch, ins, ops[1], lanes)
        size = _lane_u32(batch, ops[2], lanes)
        for i in range(lanes.size):
            n = _bulk_size(ins, int(size[i]), int(dst[i]), int(src[i]))
            li, si, di = lanes[i:i + 1], src[i:i + 1], dst[i:i + 1]
            _in_shared(batch, ins, li, si, n)
            _in_global(batch, ins, li, di, n)

            reads = asyncops.issue(batch, "bulk", ins, li, Completion.BULK_GROUP, stream=Stream.BULK_READS)
            writes = asyncops.issue(batch, "bulk", ins, li, Completion.BULK_GROUP, stream=Stream.BULK_WRITES)

            def store(li=li, si=si, di=di, n=n, reads=reads, writes=writes, pc=batch.ctx.pc) -> None:
                if n:
                    with asyncops.performing(batch, reads, ins, li, pc):
                        data = batch.memory.read(".shared", li, si, n, ins)
                    with asyncops.performing(batch, writes, ins, li, pc):
                        batch.memory.write(".global", li, di, data, ins)

            u.bulk_ops.append(BulkOp(ins, int(lanes[i]), int(u.bulk_committed[lanes[i]]), store, batch.ctx.pc,
                                     reads, writes))
        return
    raise Unsupported(f"{ins.name}: direction {' '.join(pos)} (shared::cta -> shared::cluster copies go to another "
                      "CTA of the cluster; clusters of several CTAs are not modelled)", ins)


def _tensor(machine: "Machine", batch: "Batch", u: AsyncCopyUnit, ins: A.Instruction, mask: np.ndarray) -> None:
    """cp.async.bulk.tensor (9.7.9.25.5.2): symexec.tma."""
    from . import tma

    tma.tensor_copy(machine, batch, u, ins, mask)


def _bulk_size(ins: A.Instruction, n: int, dst: int, src: int) -> int:
    if n % 16:
        raise UndefinedBehavior(f"{ins.name}: size {n} is not a multiple of 16 (9.7.9.25.4.1)", ins)
    if dst % 16 or src % 16:
        raise UndefinedBehavior(f"{ins.name}: addresses must be 16-byte aligned (dst 0x{dst:x}, src 0x{src:x})", ins)
    return n


def _in_global(batch: "Batch", ins: A.Instruction, lanes: np.ndarray, addrs: np.ndarray, size: int) -> None:
    """A global destination outside every allocation faults at issue."""
    if size:
        idx, _ = batch.memory.glob.locate(addrs.astype(np.uint64), size)
        if (idx < 0).any():
            raise MemoryFault(f"{ins.name}: global memory destination out of bounds", ins,
                              [int(x) for x in lanes], [int(a) for a in addrs], ".global")


def _bulk_commit(machine: "Machine", batch: "Batch", u: AsyncCopyUnit, ins: A.Instruction, mask: np.ndarray) -> None:
    """cp.async.bulk.commit_group (9.7.9.25.6.1): close each executing thread's bulk async-group."""
    _check(ins, {".async", ".bulk", ".commit_group"})
    u.bulk_committed[mask] += 1


def _bulk_wait(machine: "Machine", batch: "Batch", u: AsyncCopyUnit, ins: A.Instruction, mask: np.ndarray) -> None:
    """cp.async.bulk.wait_group{.read} N (9.7.9.25.6.2): all but the N most recent bulk groups of each
    executing thread complete (with .read only their source reads must be done; performing the whole
    operation then is a legal completion of both)."""
    _check(ins, {".async", ".bulk", ".wait_group", ".read"})
    limit = u.bulk_committed - _immediate(ins, ins.operands[0])
    u.perform_bulk(batch, lambda op: bool(mask[op.lane]) and op.group < limit[op.lane],
                   reads_only=".read" in ins.modifiers)


def _prefetch(machine: "Machine", batch: "Batch", u: AsyncCopyUnit, ins: A.Instruction, mask: np.ndarray) -> None:
    """cp.async.bulk.prefetch{.tensor}.L2 (9.7.9.25.4.3, 9.7.9.25.5.4): a cache hint, no values."""
    if ".tensor" in ins.modifiers:
        from . import tma

        return tma.tensor_prefetch(machine, batch, ins, mask)
    if ".L2" not in ins.modifiers:
        raise Unsupported(f"{ins.name}", ins)


# ---------------------------------------------------------------------- cp.reduce.async.bulk (9.7.9.25.4.2)

_RED_TYPES = {".add": {".u32", ".s32", ".u64"}, ".min": {".u32", ".s32", ".u64", ".s64"},
              ".max": {".u32", ".s32", ".u64", ".s64"}, ".inc": {".u32"}, ".dec": {".u32"},
              ".and": {".b32", ".b64"}, ".or": {".b32", ".b64"}, ".xor": {".b32", ".b64"}}


_FLOAT_ADD = {".f32", ".f64", ".f16", ".bf16"}


def _float_add(ty: str, noftz: bool, ins: A.Instruction):
    """Element update of `.add` on floats: round to nearest even; .f32 flushes subnormal inputs and
    results to sign-preserving zero; .f16/.bf16 require .noftz (9.7.9.25.4.2)."""
    from semantics import floatops as F

    if ty in (".f16", ".bf16") and not noftz:
        raise Unsupported(f"{ins.name}: .add{ty} requires .noftz", ins)
    if ty in (".f32", ".f64") and noftz:
        raise Unsupported(f"{ins.name}: .noftz is only defined for .f16/.bf16", ins)
    return lambda old, src: F.add(old, src, ty[1:], "rn", ftz=ty == ".f32")


def _reduce_bulk(machine: "Machine", batch: "Batch", u: AsyncCopyUnit, ins: A.Instruction, mask: np.ndarray) -> None:
    """cp.reduce.async.bulk.global.shared::cta.bulk_group.redOp.type [dst], [src], size: integer,
    bitwise and floating-point .add element types (.min/.max on .f16/.bf16 are not modelled)."""
    from semantics.ptx.memory import _update

    if ".tensor" in ins.modifiers:
        from . import tma

        return tma.tensor_reduce(machine, batch, u, ins, mask)
    pos = tuple(p for p in ins.positional if p.startswith((".shared", ".global")))
    red = [m for m in ins.modifiers if m in _RED_TYPES]
    if pos != (".global", ".shared::cta") or len(red) != 1 or len(ins.types) != 1:
        raise Unsupported(f"{ins.name}", ins)
    ty = ins.types[0]
    is_float = red[0] == ".add" and ty in _FLOAT_ADD
    if ty not in _RED_TYPES[red[0]] and not is_float:
        raise Unsupported(f"{ins.name}: {red[0]}{ty} (not modelled or not a valid combination)", ins)
    _check(ins, _BULK_HINTS | set(pos) | {".reduce", ".bulk_group", ".noftz", red[0], ty})
    ops = list(ins.operands)
    if ".L2::cache_hint" in ins.modifiers:
        ops.pop()
    t = tinfo(ty)
    eb = t.width // 8
    fn = _float_add(ty, ".noftz" in ins.modifiers, ins) if is_float else _update(red[0][1:], t)
    lanes = np.nonzero(mask)[0]
    dst = _global_addrs(batch, ops[0], lanes)
    src = _shared_offsets(machine, batch, ins, ops[1], lanes)
    size = _lane_u32(batch, ops[2], lanes)
    for i in range(lanes.size):
        n = _bulk_size(ins, int(size[i]), int(dst[i]), int(src[i]))
        li, si, di = lanes[i:i + 1], src[i:i + 1], dst[i:i + 1]
        _in_shared(batch, ins, li, si, n)
        _in_global(batch, ins, li, di, n)

        reads = asyncops.issue(batch, "bulk", ins, li, Completion.BULK_GROUP, stream=Stream.BULK_READS)
        writes = asyncops.issue(batch, "bulk", ins, li, Completion.BULK_GROUP, stream=Stream.BULK_WRITES)

        def reduce(li=li, si=si, di=di, n=n, reads=reads, writes=writes, pc=batch.ctx.pc) -> None:
            if n:
                with asyncops.performing(batch, reads, ins, li, pc):
                    s_ = from_bytes(batch.memory.read(".shared", li, si, n, ins).reshape(-1, eb))
                with asyncops.performing(batch, writes, ins, li, pc, atomic=True):  # element-wise atomic RMW
                    d_ = from_bytes(batch.memory.read(".global", li, di, n, ins).reshape(-1, eb))
                    new = np.asarray(fn(d_, s_)).astype(t.dtype)
                    batch.memory.write(".global", li, di, to_bytes(new, eb).reshape(1, n), ins)

        u.bulk_ops.append(BulkOp(ins, int(lanes[i]), int(u.bulk_committed[lanes[i]]), reduce, batch.ctx.pc,
                                 reads, writes))


UNIT = Unit("async_copy", {"cp": cp}, "cp.async and its groups, bulk copies and reductions (PTX 9.7.9.25)")
