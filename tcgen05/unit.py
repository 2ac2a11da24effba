"""The tcgen05 unit of the machine: `tcgen05.*` instructions (PTX 9.7.16) on a batch of CTAs.

State per batch (`batch.unit("tcgen05")`): the tensor memory and allocator of every CTA slot
(`tcgen05.tmem`), the `tcgen05.ld`/`st` operations each warp has issued and not yet waited for,
and each thread's queue of issued `tcgen05.mma` operations.

Completion is modelled at the LATEST legal point (9.7.16.6), so a missing wait shows up as
wrong values instead of being hidden:
- `tcgen05.ld`: tensor memory is read and the destination registers are written when the issuing
  thread executes `tcgen05.wait::ld`, or earlier when an instruction of that thread reads one of
  the destination registers: a true register dependency on a `tcgen05.ld` is respected without
  any wait (9.7.16.6.4.5; Triton converts the loaded values before its `wait::ld`). Writing a
  destination register before the load completes is an anti-dependency hazard the manual requires
  `wait::ld` for: undefined behaviour.
- `tcgen05.st`: source registers are read at issue; the cells are written at `tcgen05.wait::st`.
- `tcgen05.mma`: queued per issuing thread. `tcgen05.commit ... mbarrier::arrive::one` hands the
  thread's queue (everything issued before it, in issue order, so same-accumulator MMAs stay
  pipelined) to the mbarrier; the MMAs are performed just before that mbarrier's phase completes
  (symexec.mbarrier runs `Barrier.on_complete` callbacks then), then the arrive counts. MMAs never
  committed are never performed.
`tcgen05.fence::*` have no value effect here (ordering is the checkers' business).

Lifecycle and access errors are `UndefinedBehavior` at the instruction: partial-warp execution of
the `.sync.aligned` forms, a tensor-memory lane outside the warp's quarter (warp w owns lanes
32*(w%4)..+31, 9.7.16.8.3), columns that are not allocated or out of range, alloc after relinquish,
increasing allocation size, double free, mixed `.cta_group`. Columns still allocated when the
batch ends are reported by `Tcgen05Unit.finish(batch)` (the machine should call it when a batch
is done). `cta_group::2`, `tcgen05.cp`, `tcgen05.shift`, `.ws`, sparse, block-scaled and
disable-output-lane forms are `Unsupported`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import numpy as np

from ptx_parser import ast as A
from semantics.errors import UndefinedBehavior, Unsupported
from symexec.machine import Group
from symexec.memory import to_bytes
from symexec.units import Unit, UnitState

from . import ops
from .descriptors import InstrDescriptor, check_smem_desc, decode_instr_desc, decode_smem_desc
from .tmem import TensorMemory, split_address

if TYPE_CHECKING:  # pragma: no cover
    from symexec.machine import Batch, Machine

_SUBOPS = (".alloc", ".dealloc", ".relinquish_alloc_permit", ".ld", ".st", ".wait::ld", ".wait::st", ".mma",
           ".commit", ".fence::before_thread_sync", ".fence::after_thread_sync", ".cp", ".shift")
_ALIGNED = {".sync", ".aligned"}


class DescriptorWarning(UserWarning):
    """A descriptor sets bits the manual reserves (Triton does, e.g. bit 29): reported, not rejected."""


@dataclass
class PendingLd:
    ins: A.Instruction
    lanes: np.ndarray  # thread slots (k,)
    cta: np.ndarray  # (k,)
    tlane: np.ndarray  # (k, R)
    tcol: np.ndarray  # (k, R)
    regs: tuple[A.Operand, ...]
    pack: bool


@dataclass
class PendingSt:
    lanes: np.ndarray
    cta: np.ndarray
    tlane: np.ndarray
    tcol: np.ndarray
    values: np.ndarray  # (k, R) uint32, read at issue
    unpack: bool


@dataclass
class MmaOp:
    ins: A.Instruction
    cta: int
    d_addr: int
    a: tuple[str, int]
    b_desc: int
    idesc: InstrDescriptor
    enable_input_d: bool


@dataclass
class ThreadQueue:
    ops: list[MmaOp] = field(default_factory=list)
    done: int = 0  # ops[:done] have been performed


class Tcgen05Unit(UnitState):
    def __init__(self, batch: "Batch") -> None:
        self.batch = batch
        self.tmem = TensorMemory(batch.n_ctas)
        self.pending_ld: list[PendingLd] = []
        self.pending_st: list[PendingSt] = []
        self.queues: dict[int, ThreadQueue] = {}  # thread slot -> issued MMAs
        self.cta_group: str | None = None
        self.warnings: list[str] = []  # undocumented descriptor bits and similar (never rejected)
        self.mmas_performed = 0
        self.ld_regs: set[str] = set()  # registers watched for pending tcgen05.ld (batch.reg_watch)

    def smem(self, cta: int) -> np.ndarray:
        sb = self.batch.memory.shared_bytes
        return self.batch.memory.shared[cta * sb:(cta + 1) * sb]

    def warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)
            warnings.warn(text, DescriptorWarning, stacklevel=2)

    def flush(self, lane: int, upto: int) -> None:
        """Perform the thread's queued MMAs up to index `upto` that have not been performed."""
        q = self.queues.get(lane)
        if q is None:
            return
        while q.done < upto:
            op = q.ops[q.done]
            q.done += 1
            ops.mma(self.tmem, op.cta, self.smem(op.cta), op.d_addr, op.a, op.b_desc, op.idesc,
                    op.enable_input_d, op.ins)
            self.mmas_performed += 1

    def finish(self, batch: "Batch") -> None:
        """End of the batch: tensor memory still allocated is a missing tcgen05.dealloc."""
        leaks = self.tmem.leaks()
        if leaks:
            cta, start, n, ins = leaks[0]
            raise UndefinedBehavior(f"kernel exits with tensor memory columns {start}..{start + n - 1} of CTA slot "
                                    f"{cta} still allocated (missing tcgen05.dealloc, PTX 9.7.16.1.2)", ins)


def unit(batch: "Batch") -> Tcgen05Unit:
    return batch.unit("tcgen05", lambda: Tcgen05Unit(batch))


# ---------------------------------------------------------------------- helpers


def _subop(ins: A.Instruction) -> str:
    found = [s for s in _SUBOPS if s in ins.modifiers]
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
        raise UndefinedBehavior(f"{ins.name}: {cg} mixed with {u.cta_group} in one kernel (PTX 9.7.16)", ins)
    u.cta_group = cg


def _whole_warps(b: "Batch", mask: np.ndarray, ins: A.Instruction) -> np.ndarray:
    """Warp indices executing a .sync.aligned instruction; UB if only part of a warp does."""
    w = mask.reshape(-1, 32)
    alive = b.alive.reshape(-1, 32)
    active = w.any(axis=1)
    partial = active & (w != alive).any(axis=1)
    if partial.any():
        wi = int(np.nonzero(partial)[0][0])
        raise UndefinedBehavior(f"{ins.name} executed by {int(w[wi].sum())} of the {int(alive[wi].sum())} threads of "
                                f"warp {wi % b.warps_per_cta} (CTA slot {wi // b.warps_per_cta}); .sync.aligned "
                                "needs the whole warp", ins)
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


def _uniform_per_warp(vals: np.ndarray, lanes: np.ndarray, what: str, ins: A.Instruction) -> None:
    warps = lanes // 32
    for w in np.unique(warps):
        v = vals[warps == w]
        if (v != v[0]).any():
            raise UndefinedBehavior(f"{ins.name}: {what} differs between the threads of a warp", ins)


def _advance(g: Group) -> bool:
    g.pc += 1
    return True


# ---------------------------------------------------------------------- the handler


def tcgen05(machine: "Machine", b: "Batch", g: Group, ins: A.Instruction, mask: np.ndarray) -> bool:
    sub = _subop(ins)
    u = unit(b)
    _cta_group(u, ins)
    if sub in (".cp", ".shift"):
        raise Unsupported(f"{ins.name} (tcgen05{sub} is not modelled)", ins)
    if sub in (".fence::before_thread_sync", ".fence::after_thread_sync"):
        _check(ins, {sub})
        return _advance(g)
    if not mask.any():
        return _advance(g)
    b.ctx.begin(mask, ins)
    if sub == ".alloc":
        return _alloc(b, g, ins, mask, u)
    if sub == ".dealloc":
        _check(ins, _ALIGNED | {sub, ".cta_group::1", ".b32"})
        for w in _whole_warps(b, mask, ins):
            lanes = np.arange(32 * w, 32 * w + 32)[mask[32 * w:32 * w + 32]]
            taddr = _tmem_addr(b, ins.operands[0], lanes, ins)
            ncols = _lane_vals(b, ins.operands[1], ".u32", lanes).astype(np.int64)
            _uniform_per_warp(taddr, lanes, "the address", ins)
            _uniform_per_warp(ncols, lanes, "the column count", ins)
            u.tmem.dealloc(int(b.cta_of_lane[lanes[0]]), int(taddr[0]), int(ncols[0]), ins)
        return _advance(g)
    if sub == ".relinquish_alloc_permit":
        _check(ins, _ALIGNED | {sub, ".cta_group::1"})
        for w in _whole_warps(b, mask, ins):
            u.tmem.relinquish(int(b.cta_of_lane[32 * w]))
        return _advance(g)
    if sub in (".ld", ".st"):
        _ld_st(b, ins, mask, u, sub == ".ld")
        return _advance(g)
    if sub in (".wait::ld", ".wait::st"):
        _check(ins, _ALIGNED | {sub})
        _whole_warps(b, mask, ins)
        if sub == ".wait::ld":
            _complete_ld(b, mask, u)
        else:
            _complete_st(mask, u)
        return _advance(g)
    if sub == ".mma":
        _mma(b, ins, mask, u)
        return _advance(g)
    if sub == ".commit":
        _commit(machine, b, ins, mask, u)
        return _advance(g)
    raise Unsupported(f"{ins.name}", ins)  # pragma: no cover


# ---------------------------------------------------------------------- allocation (9.7.16.7.1)


def _alloc(b: "Batch", g: Group, ins: A.Instruction, mask: np.ndarray, u: Tcgen05Unit) -> bool:
    _check(ins, _ALIGNED | {".alloc", ".cta_group::1", ".shared::cta", ".b32"})
    if ".shared::cta" not in ins.modifiers:
        raise Unsupported(f"{ins.name}: destination state space other than .shared::cta", ins)
    blocked = np.zeros_like(mask)
    for w in _whole_warps(b, mask, ins):
        lanes = np.arange(32 * w, 32 * w + 32)[mask[32 * w:32 * w + 32]]
        space, addrs = b.ctx.address(ins.operands[0])
        dst = np.broadcast_to(np.asarray(addrs, dtype=np.uint64), (b.n,))[lanes].astype(np.int64)
        ncols = _lane_vals(b, ins.operands[1], ".u32", lanes).astype(np.int64)
        _uniform_per_warp(dst, lanes, "the destination address", ins)
        _uniform_per_warp(ncols, lanes, "the column count", ins)
        cta = int(b.cta_of_lane[lanes[0]])
        base = u.tmem.try_alloc(cta, int(ncols[0]), ins)
        if base is None:
            blocked[lanes] = True
            continue
        if dst[0] % 4:
            raise UndefinedBehavior(f"{ins.name}: destination 0x{int(dst[0]):x} is not 4-byte aligned", ins)
        b.memory.write(".shared", lanes[:1], dst[:1], to_bytes(np.array([base], dtype=np.uint32), 4), ins)
    if not blocked.any():
        return _advance(g)
    # not enough free columns: these warps wait until a dealloc frees them (9.7.16.7.1: alloc blocks)
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


# ---------------------------------------------------------------------- ld / st (9.7.16.8.3-4)


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
    _whole_warps(b, mask, ins)
    lanes = np.nonzero(mask)[0]
    taddr = _tmem_addr(b, addr_op, lanes, ins)
    _uniform_per_warp(taddr, lanes, "the tensor memory address", ins)
    base_lane, base_col = split_address(taddr)
    t = lanes % 32
    tlane = base_lane[:, None] + fr.lane[t]
    tcol = base_col[:, None] + fr.col[t]
    # lane access restriction (9.7.16.8.3): warp w of the CTA reaches lanes 32*(w%4) .. 32*(w%4)+31
    quarter = 32 * (((lanes % b.lanes_per_cta) // 32) % 4)
    bad = (tlane < quarter[:, None]) | (tlane >= quarter[:, None] + 32)
    if bad.any():
        i = int(np.nonzero(bad.any(axis=1))[0][0])
        w = int((lanes[i] % b.lanes_per_cta) // 32)
        raise UndefinedBehavior(f"{ins.name}: warp {w} accesses tensor memory lane {int(tlane[i][bad[i]][0])}; "
                                f"it may only access lanes {int(quarter[i])}..{int(quarter[i]) + 31} (PTX 9.7.16.8.3)",
                                ins)
    cta = b.cta_of_lane[lanes].astype(np.int64)
    what = "tcgen05.ld" if is_ld else "tcgen05.st"
    u.tmem.check_access(cta[:, None], tlane, tcol, what, ins)
    if pack:
        u.tmem.check_access(cta[:, None], tlane, tcol + 1, what, ins)
    if is_ld:
        for r in regs:
            if isinstance(r, A.Sym) and r.name in b.reg_watch and r.name not in u.ld_regs:
                raise Unsupported(f"{ins.name}: destination {r.name} is watched by another unit", ins)
        u.pending_ld.append(PendingLd(ins, lanes, cta, tlane, tcol, tuple(regs), pack))
        _watch_ld_registers(b, u, regs)
    else:
        vals = np.stack([_lane_vals(b, r, ".b32", lanes).astype(np.uint32) for r in regs], axis=1)
        u.pending_st.append(PendingSt(lanes, cta, tlane, tcol, vals, pack))


def _complete_ld(b: "Batch", mask: np.ndarray, u: Tcgen05Unit, only=None) -> None:
    """The loads of the threads in `mask` (all of them: tcgen05.wait::ld; `only`: those writing
    register `only`) read tensor memory and write their destination registers."""
    keep = []
    done = []
    for e in u.pending_ld:
        sel = mask[e.lanes]
        if only is not None and not any(isinstance(r, A.Sym) and r.name == only for r in e.regs):
            sel = np.zeros_like(sel)
        if sel.any():
            done.append((e, sel))
        if (~sel).any():
            keep.append(PendingLd(e.ins, e.lanes[~sel], e.cta[~sel], e.tlane[~sel], e.tcol[~sel], e.regs, e.pack))
    u.pending_ld = keep
    _watch_ld_registers(b, u, None)
    for e, sel in done:  # in issue order: a later load of the same register wins
        lanes = e.lanes[sel]
        vals = ops.gather_cells(u.tmem, e.cta[sel], e.tlane[sel], e.tcol[sel], e.pack)
        lane_mask = np.zeros(b.n, dtype=bool)
        lane_mask[lanes] = True
        with b.ctx.nested(lane_mask, e.ins):
            for j, r in enumerate(e.regs):
                full = np.zeros(b.n, dtype=np.uint32)  # a fresh array: registers keep what they are given
                full[lanes] = vals[:, j]
                b.ctx.write(r, full, ".b32")


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


def _complete_st(mask: np.ndarray, u: Tcgen05Unit) -> None:
    """tcgen05.wait::st: the executing warps' stores land in tensor memory, in issue order."""
    keep = []
    for e in u.pending_st:
        sel = mask[e.lanes]
        if sel.any():
            ops.scatter_cells(u.tmem, e.cta[sel], e.tlane[sel], e.tcol[sel], e.values[sel], e.unpack)
        if (~sel).any():
            keep.append(PendingSt(e.lanes[~sel], e.cta[~sel], e.tlane[~sel], e.tcol[~sel], e.values[~sel], e.unpack))
    u.pending_st = keep


# ---------------------------------------------------------------------- mma / commit (9.7.16.10)


def _mma(b: "Batch", ins: A.Instruction, mask: np.ndarray, u: Tcgen05Unit) -> None:
    kinds = [m for m in ins.modifiers if m.startswith(".kind::")]
    if len(kinds) != 1:
        raise Unsupported(f"{ins.name}: needs exactly one .kind", ins)
    kind = kinds[0][len(".kind::"):]
    if kind not in ("f16", "tf32", "f8f6f4", "i8"):
        raise Unsupported(f"{ins.name}: .kind::{kind} (block-scaled kinds are not modelled)", ins)
    _check(ins, {".mma", ".cta_group::1", kinds[0]})
    opnds = ins.operands
    if len(opnds) != 5 or any(isinstance(o, A.Vector) for o in opnds):
        raise Unsupported(f"{ins.name}: disable-output-lane / scale-input-d operands are not modelled "
                          f"({len(opnds)} operands)", ins)
    lanes = np.nonzero(mask)[0]
    d_addr = _tmem_addr(b, opnds[0], lanes, ins)
    a_tmem = isinstance(opnds[1], A.Address)
    a_val = (_tmem_addr(b, opnds[1], lanes, ins) if a_tmem
             else _lane_vals(b, opnds[1], ".b64", lanes).astype(np.uint64))
    b_desc = _lane_vals(b, opnds[2], ".b64", lanes).astype(np.uint64)
    idesc_raw = _lane_vals(b, opnds[3], ".b32", lanes).astype(np.uint64)
    enable = _lane_vals(b, opnds[4], ".pred", lanes).astype(bool)
    for i, lane in enumerate(lanes):
        idesc = decode_instr_desc(int(idesc_raw[i]), kind, ins)
        for note in idesc.notes:
            u.warn(f"{note} at {ins.span}")
        ops.check_modelled(idesc, a_tmem, ins)
        for raw in ([int(b_desc[i])] if a_tmem else [int(a_val[i]), int(b_desc[i])]):
            check_smem_desc(decode_smem_desc(raw), ins)
        if idesc.max_shift:
            u.warn(f"instruction descriptor {int(idesc_raw[i]):#010x}: maximum-shift bits 30-31 set without .ws "
                   f"at {ins.span}")
        op = MmaOp(ins, int(b.cta_of_lane[lane]), int(d_addr[i]), ("tmem" if a_tmem else "desc", int(a_val[i])),
                   int(b_desc[i]), idesc, bool(enable[i]))
        u.queues.setdefault(int(lane), ThreadQueue()).ops.append(op)


def _commit(machine: "Machine", b: "Batch", ins: A.Instruction, mask: np.ndarray, u: Tcgen05Unit) -> None:
    """tcgen05.commit.cta_group::1.mbarrier::arrive::one{.shared::cluster}.b64 [mbar] (9.7.16.10.10)."""
    _check(ins, {".commit", ".cta_group::1", ".mbarrier::arrive::one", ".shared::cluster", ".b64"})
    if ".mbarrier::arrive::one" not in ins.modifiers:
        raise Unsupported(f"{ins.name}: commit without .mbarrier::arrive::one", ins)
    if len(ins.operands) != 1:
        raise Unsupported(f"{ins.name}: multicast commit (ctaMask operand)", ins)
    lanes = np.nonzero(mask)[0]
    for lane in lanes:
        q = u.queues.setdefault(int(lane), ThreadQueue())
        upto = len(q.ops)
        _arrive_when_done(machine, b, ins, int(lane), lambda lane=int(lane), upto=upto: u.flush(lane, upto))


def _arrive_when_done(machine: "Machine", b: "Batch", ins: A.Instruction, lane: int,
                      work: Callable[[], None]) -> None:
    """Arrive once on the mbarrier operand of `ins` for thread slot `lane`, performing `work` just before
    the phase this arrival belongs to completes (the latest point the commit allows)."""
    try:
        from symexec import mbarrier as mb
    except ModuleNotFoundError:  # pragma: no cover - the mbarrier unit ships with symexec
        raise Unsupported(f"{ins.name}: needs the mbarrier unit (symexec.mbarrier)", ins) from None
    mu = mb.unit(b)
    keys = mb.shared_keys(machine, b, ins, ins.operands[0], np.array([lane]))
    key = (int(keys[0, 0]), int(keys[0, 1]))
    mu.get(key, ins).on_complete.append(work)
    mu.arrive(key, 1, ins)


UNIT = Unit("tcgen05", {"tcgen05": tcgen05}, "Blackwell tensor cores and tensor memory (PTX 9.7.16)")
