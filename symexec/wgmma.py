"""Hopper warpgroup MMA (PTX 9.7.15): wgmma.fence / mma_async / commit_group / wait_group.

Asynchrony model. `wgmma.mma_async` is recorded at issue with only the values the manual does
not let it read later: the matrix descriptors and the scale-d predicate (ordinary input
operands). The accumulator D, the A registers and the shared-memory matrices are read
asynchronously (9.7.15.5.2, 9.7.15.7.3), so the operation is *performed* at the latest legal
point: when a `wgmma.wait_group N` retires the wgmma-group that holds it, operations in issue
order. A missing fence.proxy.async / barrier / wait therefore shows up as wrong numbers: a read
of D before the covering wait sees the old value, a shared-memory store before it changes the
operand. Checked as undefined behaviour (UndefinedBehavior): a warpgroup that does not execute
a wgmma instruction with all its 128 threads (.aligned, 9.7.15.1), descriptors that differ inside
a warpgroup (9.7.15.5.2), a mma_async with no wgmma.fence before it in the warpgroup, or whose D
or A registers were written after the last wgmma.fence (9.7.15.7.1; accumulator chaining across
wgmma.mma_async is exempt), and a write to the D or A registers of a pending mma_async before
its covering wait (9.7.15.7.3). Not checked: ordinary *reads* of those registers while pending
(they see the old value; catching them needs a register-access hook in GroupExec).

Arithmetic (the accumulation order and rounding are unspecified, 9.7.15.5.2; symexec.wgmma_numerics):
by default products are exact and summed in float64 together with the old D (unless scale-d is
false), then rounded once to the accumulator type with round-to-nearest-even; set_arithmetic("sm90")
selects the measured H200 behaviour instead. tf32 inputs drop their low 13 bits as the manual
specifies. Integer MMA is exact, then clamped to int32 (.satfinite) or wrapped.
Measured on an H200 (tests/emulator/wgmma_gpu.py, recorded in tests/data/wgmma_h200.npz): every
layout, swizzle and fragment agrees; integer results are bit-identical; with the default "model"
30-60% of f32-accumulator results differ by about one ulp (the hardware truncates), and with
e4m3/e5m2 inputs and f32 accumulation the H200 keeps at most 14 significant bits (the 9.7.15.5.2
note); the "sm90" model reproduced all 71 measured kernels (hand-written cases, Triton GEMMs,
attention) bit for bit.
"""

from __future__ import annotations

import os
import re
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from ptx_parser import ast as A
from semantics.constexpr import evaluate
from semantics.errors import UndefinedBehavior, Unsupported
from semantics.formats import BF16, E4M3, E5M2, F16, F32, decode

from . import asyncops
from .events import AsyncOp, Completion, MmaPerformed
from .machine import Batch, FindingKind, Group, Machine
from .memory import from_bytes
from .units import Unit, UnitState
from .wgmma_numerics import MODES, accumulate
from .wgmma_layout import (K_BYTES, LayoutError, MatrixDescriptor, a_fragment, d_fragment, decode_descriptor,
                           matrix_addresses)

# The arithmetic model of wgmma_numerics: "model" (default) or "sm90" (the measured H200 behaviour);
# set_arithmetic() or the environment variable VOLTA_WGMMA_ARITHMETIC chooses.
ARITHMETIC = os.environ.get("VOLTA_WGMMA_ARITHMETIC", "model")


def set_arithmetic(mode: str) -> str:
    """Choose the wgmma arithmetic model; returns the previous one."""
    global ARITHMETIC
    if mode not in MODES:
        raise ValueError(f"unknown wgmma arithmetic {mode!r}; known: {', '.join(MODES)}")
    old, ARITHMETIC = ARITHMETIC, mode
    return old


_SHAPE = re.compile(r"\.m64n(\d+)k(\d+)$")
_ELEM_BITS = {".f16": 16, ".bf16": 16, ".tf32": 32, ".e4m3": 8, ".e5m2": 8, ".s8": 8, ".u8": 8}
_FMT = {".f16": F16, ".bf16": BF16, ".e4m3": E4M3, ".e5m2": E5M2}
# .s32 with 8-bit integers: N = 8, 16, 24, 32 and multiples of 16 up to 256 (9.7.15.5.1.1.3)
_INT_N = {8, 16, 24, 32} | set(range(48, 257, 16))


@dataclass(frozen=True)
class Spec:
    """What one wgmma.mma_async instruction asks for (its operands checked once)."""

    n: int
    k: int
    dtype: str
    atype: str
    btype: str
    d_regs: tuple[A.Sym, ...]
    a_regs: tuple[A.Sym, ...] | None  # None: A from a descriptor
    a_desc: A.Sym | None
    b_desc: A.Sym
    scale_d: A.Operand
    scale_a: int
    scale_b: int
    trans_a: bool
    trans_b: bool
    satfinite: bool


def parse_spec(ins: A.Instruction) -> Spec:
    """Check a wgmma.mma_async against 9.7.15.5.2 (syntax, shapes, types); Unsupported otherwise."""
    mods = set(ins.modifiers)
    if ".sp" in mods:
        raise Unsupported(f"{ins.name}: sparse wgmma (.sp) is not modelled", ins)
    shapes = [m for m in mods if _SHAPE.match(m)]
    if len(shapes) != 1 or len(ins.types) != 3:
        raise Unsupported(f"{ins.name}: expected one .m64nNkK shape and three types (.dtype.atype.btype)", ins)
    n, k = (int(x) for x in _SHAPE.match(shapes[0]).groups())  # type: ignore[union-attr]
    dtype, atype, btype = ins.types
    extra = mods - {".mma_async", ".sync", ".aligned", ".satfinite", shapes[0]} - set(ins.types)
    if extra or not {".sync", ".aligned"} <= mods:
        raise Unsupported(f"{ins.name}: modifiers {' '.join(sorted(extra)) or '(.sync.aligned missing)'}", ins)
    integer = atype in (".s8", ".u8")
    if atype in (".f16", ".bf16"):
        ok = btype == atype and (dtype == ".f32" or (dtype == ".f16" and atype == ".f16")) and k == 16
    elif atype == ".tf32":
        ok = btype == ".tf32" and dtype == ".f32" and k == 8
    elif atype in (".e4m3", ".e5m2"):
        ok = btype in (".e4m3", ".e5m2") and dtype in (".f16", ".f32") and k == 32
    elif integer:
        ok = btype in (".s8", ".u8") and dtype == ".s32" and k == 32 and n in _INT_N
    else:
        raise Unsupported(f"{ins.name}: .atype {atype} is not modelled", ins)
    if not ok or not (8 <= n <= 256 and n % 8 == 0):
        raise Unsupported(f"{ins.name}: shape/type combination not in 9.7.15.2/9.7.15.5.2", ins)
    if ".satfinite" in mods and not integer:
        raise Unsupported(f"{ins.name}: .satfinite on a floating-point wgmma", ins)
    ops = ins.operands
    a_regs = _reg_vector(ops[1], 4, ins) if len(ops) > 1 and isinstance(ops[1], A.Vector) else None
    n_imm = {16: 4 if a_regs is None else 3, 8: 2, 32: 0 if integer else 2}[k]
    if len(ops) != 4 + n_imm:
        raise Unsupported(f"{ins.name}: expected {4 + n_imm} operands, got {len(ops)}", ins)
    d_count = n // 4 if dtype == ".f16" else n // 2
    d_regs = _reg_vector(ops[0], d_count, ins)
    if a_regs is None and not isinstance(ops[1], A.Sym):
        raise Unsupported(f"{ins.name}: operand a must be a descriptor register or a vector of 4 registers", ins)
    if not isinstance(ops[2], A.Sym):
        raise Unsupported(f"{ins.name}: operand b-desc must be a register", ins)
    imm = [_imm(o, ins) for o in ops[4:]]
    scale_a, scale_b = (imm[0], imm[1]) if n_imm >= 2 else (1, 1)
    trans = imm[2:]
    trans_a = bool(trans[0]) if a_regs is None and len(trans) == 2 else False
    trans_b = bool(trans[-1]) if trans else False
    if scale_a not in (1, -1) or scale_b not in (1, -1) or any(t not in (0, 1) for t in trans):
        raise Unsupported(f"{ins.name}: imm-scale must be 1 or -1 and imm-trans 0 or 1", ins)
    return Spec(n, k, dtype, atype, btype, d_regs, a_regs, None if a_regs is not None else ops[1], ops[2],
                ops[3], scale_a, scale_b, trans_a, trans_b, ".satfinite" in mods)


def _reg_vector(op: A.Operand, count: int, ins: A.Instruction) -> tuple[A.Sym, ...]:
    if not isinstance(op, A.Vector) or len(op.elements) != count or \
            not all(isinstance(e, A.Sym) and e.component is None for e in op.elements):
        raise Unsupported(f"{ins.name}: expected a vector of {count} registers", ins)
    return tuple(op.elements)  # type: ignore[arg-type]


def _imm(op: A.Operand, ins: A.Instruction) -> int:
    try:
        return int(evaluate(op))
    except Exception:
        raise Unsupported(f"{ins.name}: operand {op!r} must be an integer constant", ins) from None


# ---------------------------------------------------------------------------- unit state


@dataclass(eq=False)
class Op:
    spec: Spec
    ins: A.Instruction
    lanes: np.ndarray  # the warpgroup's 128 lanes
    desc_a: MatrixDescriptor | None
    desc_b: MatrixDescriptor
    scale_d: bool
    async_op: "AsyncOp | None" = None  # for observers (symexec.asyncops)


@dataclass
class WarpgroupState:
    uncommitted: list[Op] = field(default_factory=list)
    groups: deque = field(default_factory=deque)  # committed wgmma-groups, oldest first
    fence_regs: dict | None = None  # register objects at the last wgmma.fence (None: never fenced)
    pending_regs: dict = field(default_factory=dict)  # D/A registers of pending ops -> expected object
    watchers: dict = field(default_factory=dict)  # register -> its batch.reg_watch callback
    reported: set = field(default_factory=set)  # (reading instruction, operation) pairs reported
    wgmma_written: dict = field(default_factory=dict)  # registers last written by a performed mma


class WgmmaUnit(UnitState):
    def __init__(self) -> None:
        self.wgs: dict[int, WarpgroupState] = {}
        self.specs: dict[int, Spec] = {}

    def state(self, wg: int) -> WarpgroupState:
        st = self.wgs.get(wg)
        if st is None:
            st = self.wgs[wg] = WarpgroupState()
        return st

    def spec(self, ins: A.Instruction) -> Spec:
        s = self.specs.get(id(ins))
        if s is None:
            s = self.specs[id(ins)] = parse_spec(ins)
        return s


# ---------------------------------------------------------------------------- handlers


def wgmma(machine: Machine, b: Batch, g: Group, ins: A.Instruction, mask: np.ndarray) -> bool:
    mods = ins.modifiers
    kinds = [m for m in (".fence", ".commit_group", ".wait_group", ".mma_async") if m in mods]
    if len(kinds) != 1:
        raise Unsupported(f"{ins.name}", ins)
    kind = kinds[0]
    if kind != ".mma_async" and mods != {kind, ".sync", ".aligned"}:
        raise Unsupported(f"{ins.name}: expected {kind[1:]}.sync.aligned", ins)
    unit: WgmmaUnit = b.unit("wgmma", WgmmaUnit)
    spec = unit.spec(ins) if kind == ".mma_async" else None
    wgs = warpgroups(b, g, ins, mask)
    if kind == ".fence":
        snapshot = dict(b.regs)
        for wg, _ in wgs:
            unit.state(wg).fence_regs = snapshot
    elif kind == ".commit_group":
        for wg, _ in wgs:
            st = unit.state(wg)
            st.groups.append(st.uncommitted)
            st.uncommitted = []
    elif kind == ".wait_group":
        if len(ins.operands) != 1:
            raise Unsupported(f"{ins.name}: expected one immediate operand N", ins)
        keep = _imm(ins.operands[0], ins)
        for wg, _ in wgs:
            st = unit.state(wg)
            while len(st.groups) > max(keep, 0):
                for op in st.groups.popleft():
                    _perform(b, st, op)
                    # completion is followed by an implicit generic-async proxy fence (9.7.15.4)
                    asyncops.complete(b, op.async_op, observers=op.lanes[mask[op.lanes]])
            if not st.groups and not st.uncommitted:
                for name in st.pending_regs:
                    if b.reg_watch.get(name) is st.watchers.get(name):
                        b.reg_watch.pop(name, None)
                st.pending_regs.clear()
                st.watchers.clear()
        if wgs:
            b.ctx.begin(mask, ins)
    else:
        assert spec is not None
        for wg, lanes in wgs:
            _issue(machine, b, unit.state(wg), spec, ins, lanes)
    g.pc += 1
    return True


def warpgroups(b: Batch, g: Group, ins: A.Instruction, mask: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """The warpgroups executing `ins` (9.7.15.1: four consecutive warps, the first of warp rank
    a multiple of 4), each with its 128 lanes; .aligned requires all 128 threads of each."""
    lanes = np.nonzero(mask)[0]
    if lanes.size == 0:
        return []
    lpc = b.lanes_per_cta
    keys = np.unique((lanes // lpc) * 64 + (lanes % lpc) // 128)
    out = []
    for key in keys.tolist():
        cta, wgi = divmod(key, 64)
        first = cta * lpc + wgi * 128
        wl = np.arange(first, first + 128)
        if first + 128 > (cta + 1) * lpc or not b.valid[wl].all():
            raise UndefinedBehavior(f"{ins.name}: warpgroup {wgi} is incomplete (the CTA has "
                                    f"{b.launch.threads_per_block} threads; PTX 9.7.15.1)", ins)
        missing = wl[~mask[wl]]
        if missing.size:
            if (g.mask[missing]).any() or (~b.alive[missing]).any():
                first_missing = int(missing[0]) - cta * lpc
            raise UndefinedBehavior(f"{ins.name} executed by only {128 - missing.size} of the 128 threads of "
                                    f"warpgroup {wgi} (.aligned; first missing thread {first_missing})", ins)
            raise Unsupported(f"{ins.name}: warpgroup {wgi} reaches it on divergent paths (threads in different "
                              "groups); a rendezvous is not modelled", ins)
        out.append((int(key), wl))
    return out


def _uniform(values: np.ndarray, lanes: np.ndarray, what: str, ins: A.Instruction, exc=UndefinedBehavior) -> int:
    v = np.asarray(values)
    if v.ndim == 0:
        return int(v)
    u = np.unique(v[lanes])
    if u.size != 1:
        raise exc(f"{ins.name}: {what} differs between threads of the warpgroup "
                  f"({[hex(int(x)) for x in u[:3].tolist()]})", ins)
    return int(u[0])


def _watch(machine: Machine, b: Batch, st: WarpgroupState, name: str) -> None:
    """Report a read of a pending operation's D or A register by another instruction: its value is
    undefined until the wgmma.wait_group that covers the operation (9.7.15.7.3)."""
    if name in st.watchers:
        return
    seen = st.reported

    def touched(mask: np.ndarray, reg: str, ins: A.Instruction, kind: str) -> None:
        if kind != "read" or ins is None or ins.opcode == "wgmma":
            return
        for op in list(st.uncommitted) + [op for grp in st.groups for op in grp]:
            if any(r.name == reg for r in op.spec.d_regs + (op.spec.a_regs or ())) and mask[op.lanes].any():
                if (id(ins), id(op.ins)) in seen:
                    return  # one finding per reading instruction and operation
                seen.add((id(ins), id(op.ins)))
                machine.report(b, FindingKind.UNINITIALIZED,
                               f"{ins.name} reads {reg}, a register of the wgmma.mma_async at {op.ins.span} before "
                               "the wgmma.wait_group that covers it: its value is undefined until then (PTX 9.7.15.7.3)",
                               ins, lane=int(op.lanes[np.argmax(mask[op.lanes])]))
                return

    st.watchers[name] = touched
    b.reg_watch[name] = touched


def _issue(machine: Machine, b: Batch, st: WarpgroupState, spec: Spec, ins: A.Instruction,
           lanes: np.ndarray) -> None:
    ctx = b.ctx
    try:
        desc_b = decode_descriptor(_uniform(ctx.read(spec.b_desc, ".b64"), lanes, "matrix descriptor b-desc", ins))
        desc_a = None
        if spec.a_desc is not None:
            desc_a = decode_descriptor(_uniform(ctx.read(spec.a_desc, ".b64"), lanes, "matrix descriptor a-desc", ins))
    except LayoutError as e:
        raise Unsupported(f"{ins.name}: {e}", ins) from None
    if isinstance(spec.scale_d, A.Sym):
        scale_d = bool(_uniform(ctx.read(spec.scale_d, ".pred"), lanes, "scale-d", ins, Unsupported))
    else:
        scale_d = bool(_imm(spec.scale_d, ins))
    if st.fence_regs is None:
        raise UndefinedBehavior(f"{ins.name}: no wgmma.fence before the first wgmma.mma_async of the warpgroup "
                                "(PTX 9.7.15.7.1)", ins)
    regs = spec.d_regs + (spec.a_regs or ())
    for r in regs:
        cur = b.regs.get(r.name)
        if r.name in st.pending_regs:  # chained on a pending op: the register must be untouched since
            if not _same(cur, st.pending_regs[r.name], lanes):
                raise UndefinedBehavior(f"{ins.name}: register {r.name} of a pending wgmma.mma_async was written "
                                        "before the wgmma.wait_group covering it (PTX 9.7.15.7.3)", ins)
            continue
        if not (_same(cur, st.fence_regs.get(r.name), lanes) or
                (r.name in st.wgmma_written and _same(cur, st.wgmma_written[r.name], lanes))):
            raise UndefinedBehavior(f"{ins.name}: register {r.name} was written after the last wgmma.fence and "
                                    "before this wgmma.mma_async (PTX 9.7.15.7.1)", ins)
        st.pending_regs[r.name] = cur
        _watch(machine, b, st, r.name)
    # the shared-memory operands are read through the async proxy, at any moment until the covering
    # wgmma.wait_group (9.7.15.4, 9.7.15.7.3)
    op = asyncops.issue(b, "wgmma", ins, lanes, Completion.WGMMA_GROUP, copy=False)
    st.uncommitted.append(Op(spec, ins, lanes, desc_a, desc_b, scale_d, op))


def _same(x, y, lanes: np.ndarray) -> bool:
    if x is y:
        return True
    xv = np.zeros((), np.uint32) if x is None else np.asarray(x)
    yv = np.zeros((), np.uint32) if y is None else np.asarray(y)
    xs = xv[lanes] if xv.ndim else np.broadcast_to(xv, lanes.shape)
    ys = yv[lanes] if yv.ndim else np.broadcast_to(yv, lanes.shape)
    return bool((xs.astype(np.uint64) == ys.astype(np.uint64)).all())


# ---------------------------------------------------------------------------- performing an operation


def _perform(b: Batch, st: WarpgroupState, op: Op) -> None:
    """Read A, B, D now, compute, write D (the completion point of the operation), as the
    operation (its pc, through the async proxy) for observers."""
    with asyncops.performing(b, op.async_op, op.ins, op.lanes):
        if b.observers and op.async_op is not None:
            s = op.spec
            b.emit(MmaPerformed(op.async_op, s.n, s.k, s.dtype, s.atype, s.btype, s.a_regs is not None, op.scale_d,
                                s.scale_a, s.scale_b, s.satfinite))
        _compute(b, st, op)


def _compute(b: Batch, st: WarpgroupState, op: Op) -> None:
    spec, ins, lanes = op.spec, op.ins, op.lanes
    ctx = b.ctx
    for r in spec.d_regs + (spec.a_regs or ()):
        if not _same(b.regs.get(r.name), st.pending_regs.get(r.name), lanes):
            raise UndefinedBehavior(f"{ins.name}: register {r.name} of this pending wgmma.mma_async was written "
                                    "before the wgmma.wait_group covering it (PTX 9.7.15.7.3)", ins)
    elem_a, elem_b = _ELEM_BITS[spec.atype] // 8, _ELEM_BITS[spec.btype] // 8
    k = K_BYTES // elem_a
    try:
        if op.desc_a is not None:
            a = _values(_smem(b, lanes[0], op.desc_a, 64, k, elem_a, spec.trans_a, ins), spec.atype)
        else:
            a = _a_from_regs(ctx, spec, lanes)
        bm = _values(_smem(b, lanes[0], op.desc_b, spec.n, k, elem_b, spec.trans_b, ins), spec.btype)
    except LayoutError as e:
        raise Unsupported(f"{ins.name}: {e}", ins) from None
    rows, cols = d_fragment(spec.n)
    d_bits = np.stack([np.broadcast_to(ctx.read(r, ".b32"), (b.n,))[lanes] for r in spec.d_regs], axis=1)
    integer = spec.dtype == ".s32"
    if integer:
        acc = (a.astype(np.int64) @ bm.astype(np.int64).T)
        if op.scale_d:
            old = np.zeros((64, spec.n), dtype=np.int64)
            old[rows, cols] = d_bits.view(np.int32).astype(np.int64)
            acc = acc + old
        if spec.satfinite:
            acc = np.clip(acc, -2**31, 2**31 - 1)
        out = (acc[rows, cols] & 0xFFFFFFFF).astype(np.uint32)
    else:
        old = None
        if op.scale_d:
            old = np.zeros((64, spec.n))
            if spec.dtype == ".f16":
                halves = np.stack([d_bits & 0xFFFF, d_bits >> 16], axis=2).reshape(128, -1).astype(np.uint16)
                old[rows, cols] = decode(halves, F16)
            else:
                old[rows, cols] = decode(d_bits.astype(np.uint32), F32)
        res = accumulate(spec.scale_a * a, spec.scale_b * bm, old, spec.atype, spec.dtype, ARITHMETIC)[rows, cols]
        if spec.dtype == ".f16":
            res = res.astype(np.uint32).reshape(128, -1, 2)
            out = res[:, :, 0] | (res[:, :, 1] << 16)
        else:
            out = res.astype(np.uint32)
    for j, r in enumerate(spec.d_regs):
        full = np.zeros(b.n, dtype=np.uint32)  # a fresh array: the register file keeps it
        full[lanes] = out[:, j]
        ctx.write(r, full, ".b32")
        st.pending_regs[r.name] = st.wgmma_written[r.name] = b.regs.get(r.name)


def _smem(b: Batch, lane0: int, desc: MatrixDescriptor, rows: int, k: int, elem: int, mn_major: bool,
          ins: A.Instruction) -> np.ndarray:
    """Element bits (rows, k) of a shared-memory operand of the warpgroup's CTA."""
    addrs = matrix_addresses(desc, rows, k, elem, mn_major).reshape(-1)
    raw = b.memory.read(".shared", np.full(addrs.size, lane0), addrs.astype(np.uint64), elem, ins)
    return from_bytes(raw).reshape(rows, k)


def _values(bits: np.ndarray, ty: str) -> np.ndarray:
    """Element bits -> float64 (or int64) values."""
    if ty == ".tf32":  # the low 13 bits are dropped before the multiplication (9.7.15.5.2)
        return decode((bits.astype(np.uint32) & np.uint32(0xFFFFE000)), F32)
    if ty == ".s8":
        return bits.astype(np.uint8).view(np.int8).astype(np.int64)
    if ty == ".u8":
        return bits.astype(np.int64)
    return decode(bits.astype({16: np.uint16, 8: np.uint8}[_ELEM_BITS[ty]]), _FMT[ty])


def _a_from_regs(ctx, spec: Spec, lanes: np.ndarray) -> np.ndarray:
    """A (64 x K) assembled from the warpgroup's four A registers (9.7.15.5.1.1)."""
    bits_per = _ELEM_BITS[spec.atype]
    per_reg = 32 // bits_per
    regs = np.stack([np.broadcast_to(ctx.read(r, ".b32"), (ctx.n,))[lanes] for r in spec.a_regs], axis=1)
    shifts = (np.arange(per_reg, dtype=np.uint64) * bits_per)
    elems = ((regs.astype(np.uint64)[:, :, None] >> shifts) & np.uint64((1 << bits_per) - 1)).reshape(128, -1)
    rows, cols = a_fragment(bits_per)
    k = K_BYTES // (bits_per // 8)
    out = np.zeros((64, k), dtype=np.int64 if spec.atype in (".s8", ".u8") else np.float64)
    out[rows, cols] = _values(elems, spec.atype)
    return out


UNIT = Unit("wgmma", {"wgmma": wgmma}, "Hopper warpgroup MMA (PTX 9.7.15)")
