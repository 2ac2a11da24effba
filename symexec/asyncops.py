"""How units report asynchronous operations to the machine's observers (symexec.events).

An asynchronous operation (cp.async, bulk and tensor copies, wgmma.mma_async, tcgen05.mma/ld/st,
...) is performed by the hardware apart from the issuing thread: its memory accesses may happen at
any moment between its issue and the completion that some thread observes (PTX 8.9.1.1). The
emulator performs it at its latest legal point; a checker must treat its accesses as live over
the whole interval. A unit therefore reports, only when the batch has observers:

1. `issue(...)` when the instruction executes: the operation, its issuing lanes and the mechanism
   that will complete it. Observers take the issuing threads' knowledge *now* (what the operation
   is ordered after).
2. Its memory accesses, made inside `performing(batch, op, ...)` (through `batch.memory`, which
   tags them with the operation and proxy) or told with `access(...)` for memory the unit keeps
   itself (tensor memory, shared memory read directly).
3. `complete(batch, op, point=..., observers=...)` when it is performed: it releases into a
   synchronisation point (the mbarrier phase it completes a transaction on or arrives at) and/or
   is observed at once by `observers` (a wait of the issuing thread: cp.async.wait_group,
   cp.async.bulk.wait_group, wgmma.wait_group, tcgen05.wait::ld/st).

Plain runs have no observers: `issue` returns None and the other calls do nothing with it.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import numpy as np

from ptx_parser import ast as A

from .events import AsyncCompleted, AsyncIssued, AsyncOp, Buffer, Completion, MemoryAccess, Proxy, Stream, SyncPoint

if TYPE_CHECKING:  # pragma: no cover
    from .machine import Batch

_IDS = itertools.count(1)


def issue(batch: "Batch", unit: str, ins: A.Instruction, lanes: np.ndarray, completion: Completion,
          proxy: Proxy = Proxy.ASYNC, pc: int | None = None, tensor_core: bool = False,
          after: tuple[AsyncOp | None, ...] = (), stream: Stream | None = None, copy: bool = True) -> AsyncOp | None:
    """Report an operation issued by thread slots `lanes` (one thread, a warp, a warpgroup).
    `proxy`: the proxy of its memory accesses (cp.async non-bulk is generic, 9.7.9.25.1; bulk and
    tensor copies, wgmma and tcgen05 shared-memory reads are async). `tensor_core`: a tcgen05
    asynchronous operation, ordered with other threads' tcgen05 operations only through
    tcgen05.fence::before/after_thread_sync (9.7.16.6.3). `after`: earlier operations this one is
    pipelined behind (9.7.16.6.2: executes after them without any fence). `stream`: every issuing
    lane's part is an operation of that thread's stream (cp.async, bulk store reads/writes), which
    completes in issue order when the thread's own wait covers it. `copy`: the bytes it writes to
    memory are the bytes it read, in order (copies); False for operations that compute (wgmma,
    tcgen05.mma): the checker then gives their results fresh value numbers with the taint of
    everything they read."""
    if not batch.observers:
        return None
    op = AsyncOp(next(_IDS), unit, ins, batch.ctx.pc if pc is None else pc, np.asarray(lanes, dtype=np.int64),
                 completion, proxy=proxy, tensor_core=tensor_core, after=tuple(a for a in after if a is not None),
                 stream=stream, copy=copy)
    batch.emit(AsyncIssued(op))
    return op


def performing(batch: "Batch", op: AsyncOp | None, ins: A.Instruction, lanes: np.ndarray, pc: int | None = None,
               proxy: Proxy | None = None, atomic: bool = False):
    """Context for memory accesses made on behalf of `op` (at issue or later): they are reported as
    the operation's, through its proxy, attributed to `ins` at `pc` (its line in witnesses).
    `atomic`: they are element-wise .relaxed.gpu atomics (the destination side of
    cp.reduce.async.bulk, 9.7.9.25.4.2), morally strong with other such reductions (8.7)."""
    mask = np.zeros(batch.n, dtype=bool)
    mask[np.asarray(lanes, dtype=np.int64)] = True
    if op is None:
        return batch.ctx.nested(mask, ins, pc)
    return batch.ctx.nested(mask, ins, op.pc if pc is None else pc, proxy=proxy or op.proxy, op=op, atomic=atomic)


def access(batch: "Batch", op: AsyncOp | None, write: bool, buffer: Buffer, size: int, lanes: np.ndarray,
           flat: np.ndarray, ins: A.Instruction | None = None, proxy: Proxy | None = None) -> None:
    """Report an access the unit makes to memory it keeps itself: bytes `flat` (k, nbytes) of
    `buffer` (of `size` bytes) for lanes (k,) on behalf of `op`."""
    if not batch.observers:
        return
    ins = ins if ins is not None else (op.ins if op is not None else None)
    ev = MemoryAccess(write, buffer, size, np.asarray(lanes, dtype=np.int64), np.asarray(flat, dtype=np.int64), ins,
                      op.pc if op is not None else batch.ctx.pc, proxy=proxy or (op.proxy if op else Proxy.GENERIC),
                      op=op)
    for o in batch.observers:
        o.on_access(ev)


def complete(batch: "Batch", op: AsyncOp | None, point: SyncPoint | None = None,
             observers: np.ndarray | None = None, implies_proxy_fence: bool = True,
             lanes: np.ndarray | None = None) -> None:
    """`op` is performed. It releases into `point` (None: none) and thread slots `observers` observe
    its completion now. `implies_proxy_fence`: its completion is followed by an implicit
    generic-async proxy fence (bulk copies 9.7.9.25.1, wgmma 9.7.15.4), so generic accesses ordered
    after the completion need no fence.proxy.async. `lanes`: for a stream operation, the lanes
    whose part completed (each observed by its own thread when `observers` is given)."""
    if op is None or not batch.observers:
        return
    obs = None if observers is None else np.asarray(observers, dtype=np.int64)
    batch.emit(AsyncCompleted(op, point, obs, implies_proxy_fence,
                              None if lanes is None else np.asarray(lanes, dtype=np.int64)))
