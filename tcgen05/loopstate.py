"""The tcgen05 unit's state in the canonical form loop summaries compare (symexec.check.loops.Canon).

A pipelined K loop of an sm_100a GEMM (tcgen05.mma on shared-memory stages, tcgen05.commit to the
stage's mbarrier) repeats its unit state every few iterations up to what later behaviour cannot
tell apart. Everything that can influence a later step is kept, and only that:

- tensor memory of every CTA slot: the allocator (columns owned and freed, blocks, the last size,
  relinquished; 9.7.16.7.1), and the cells as bytes where they do not depend on data, with the
  shadow of the bytes touched (taint, writer CTA; value numbers renamed by `Canon`, so an
  accumulator that an MMA rewrote each iteration compares equal when the same cells hold fresh
  values);
- tcgen05.ld/st issued and not yet waited for (9.7.16.8.3-5): instruction, lanes, cells, packing,
  the destination registers (watched) or stored values, and each warp's operation by its ranked
  clocks (`Canon.op_label`); loads performed early whose completion a wait::ld still observes;
- per issuing thread, the mma/cp/shift operations queued and not performed (a later commit
  tracks them, 9.7.16.12.1), each with its operands and descriptors; and the pipelining facts the
  next issue is ordered after (9.7.16.6.2): the last mma per accumulator key and the cps and
  shifts since, with sequence numbers relative to the thread's count;
- the kernel's `.cta_group`.

Not kept: operations already performed (their queue entries are read by nothing later: a commit
tracks the entries after the last one performed), counters reported as statistics, warnings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ptx_parser import ast as A

from . import tmem as T

if TYPE_CHECKING:  # pragma: no cover
    from symexec.machine import Batch

    from .unit import Tcgen05Unit


def loop_state(u: "Tcgen05Unit", canon) -> tuple:
    b = u.batch
    tm = u.tmem
    allocs = tuple((bytes(a.owned.tobytes()), bytes(a.freed.tobytes()), tuple(sorted(a.blocks.items())), a.last_size,
                    a.relinquished) for a in tm.alloc)
    cells = canon.memory(T.buffer(b.batch_id), tm.cells.view(np.uint8).reshape(-1))
    label = canon.op_label

    def handles(h) -> tuple:
        return tuple(sorted((w, label(op)) for w, op in h.items())) if h else ()

    lds = tuple((id(e.ins), e.lanes.tobytes(), e.cta.tobytes(), e.tlane.tobytes(), e.tcol.tobytes(),
                 tuple(_reg(r) for r in e.regs), e.pack, handles(e.handles)) for e in u.pending_ld)
    sts = tuple((id(e.ins), e.lanes.tobytes(), e.cta.tobytes(), e.tlane.tobytes(), e.tcol.tobytes(),
                 e.values.tobytes(), e.unpack, handles(e.handles)) for e in u.pending_st)
    early = tuple((label(o.handle), o.lanes.tobytes()) for o in u.ld_observations)
    queues = tuple((lane, tuple(_queued(op, label) for op in q.ops[q.done:]))
                   for lane, q in sorted(u.queues.items()) if q.done < len(q.ops))
    pipes = []
    for lane, p in sorted(u.pipelines.items()):
        pipes.append((lane, tuple(sorted(((k, p.seq - s, label(op)) for k, (s, op) in p.last_mma.items()), key=repr)),
                      tuple((p.seq - s, label(op)) for s, op in p.cps),
                      tuple((p.seq - s, label(op)) for s, op in p.shifts)))
    return (allocs, cells, lds, sts, early, queues, tuple(pipes), u.cta_group, tuple(sorted(u.ld_regs)))


def loop_watches(u: "Tcgen05Unit", batch: "Batch") -> set[str]:
    """The destination registers of pending tcgen05.ld that the unit itself watches (their loads are
    part of `loop_state`)."""
    return {name for name in u.ld_regs if name in batch.reg_watch}


def _reg(r: A.Operand) -> object:
    return r.name if isinstance(r, A.Sym) else repr(r)


def _queued(op, label) -> tuple:
    """An issued, not yet performed mma/cp/shift: its kind, instruction and operands."""
    fields = {k: v for k, v in vars(op).items() if k not in ("ins", "handle")}
    return (type(op).__name__, id(op.ins), tuple(sorted((k, repr(v)) for k, v in fields.items())), label(op.handle))
