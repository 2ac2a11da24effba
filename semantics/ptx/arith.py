"""Integer and floating-point arithmetic instructions (PTX 9.7.1-9.7.4)."""

from __future__ import annotations

import numpy as np

from ptx_parser import ast as A
from semantics import floatops as F
from semantics import fspecial as FS
from semantics import intops as I
from semantics.errors import Unsupported

from .core import Exec, check_mods, handler, one_type, rounding, tinfo

_CC = A.Sym("%%cc")  # the carry flag written by .cc and read by addc/subc/madc (PTX 9.7.1.x)
_RND = {".rn", ".rz", ".rm", ".rp"}


#: A float operation runs on the executing lanes only when at most this fraction of the batch executes
#: (one warp of eight in the naive attention's P V loop); otherwise on every lane, as its operands come.
SPARSE_FRACTION = 0.25


def _float_op(fn, ins: A.Instruction, x: Exec, t, *ops, **kw) -> None:
    """Apply a float operation on scalar or packed (x2) types."""
    if t.lanes == 2:
        res = F.packed(fn, *ops, fmt=t.fmt, **kw)
    else:
        lanes = _sparse_lanes(ins, x, ops)
        if lanes is None:
            res = fn(*ops, t.fmt, **kw)
        else:  # lane by lane: the executing lanes' results are the same; the others' bits are never kept
            part = fn(*(o[lanes] if o.ndim else o for o in ops), t.fmt, **kw)
            res = np.zeros(x.mask.size, np.asarray(part).dtype)
            res[lanes] = part
    x.write(ins.operands[0], res, t.name)


def _sparse_lanes(ins: A.Instruction, x: Exec, ops: tuple) -> np.ndarray | None:
    """The executing lanes, where few lanes of many execute an unguarded instruction on per-lane
    operands; None otherwise. A register write keeps the result on the executing lanes only
    (execctx.write_reg), and the check-mode observers read the other lanes' bits only where a guard
    that depends on data left them out (termshadow's if-then-else of a guarded write): so never for an
    unguarded instruction."""
    mask = getattr(x, "mask", None)
    if ins.guard is not None or not isinstance(mask, np.ndarray) or mask.ndim != 1 or mask.dtype != np.bool_:
        return None
    n = mask.size
    if n < 64 or not all(isinstance(o, np.ndarray) and (o.ndim == 0 or o.shape == (n,)) for o in ops) \
            or not any(o.ndim for o in ops):
        return None
    if np.count_nonzero(mask) > SPARSE_FRACTION * n:  # the common case, without listing the lanes
        return None
    return np.flatnonzero(mask)


def _src(ins: A.Instruction, x: Exec, ty: str, k: int) -> list[np.ndarray]:
    return [x.read(op, ty) for op in ins.operands[1:1 + k]]


def _mixed(ins: A.Instruction, x: Exec) -> bool:
    """add/sub/fma.f32.{f16,bf16} (PTX 9.7.5, sm_100+): the f16/bf16 sources are widened exactly to
    f32 (every f16/bf16 value is an f32 value), then the f32 operation rounds once."""
    if len(ins.types) != 2 or ins.types[0] != ".f32" or ins.types[1] not in (".f16", ".bf16"):
        return False
    check_mods(ins, _RND | {".sat"})
    from semantics.convert import cvt as _cvt

    narrow = ins.types[1]
    ops = ins.operands[1:]
    narrow_count = 2 if ins.opcode == "fma" else 1  # a (and b) are narrow; c is f32
    vals = [_cvt(x.read(op, narrow), "f32", narrow[1:]) if i < narrow_count else x.read(op, ".f32")
            for i, op in enumerate(ops)]
    fn = {"add": F.add, "sub": F.sub, "fma": F.fma}[ins.opcode]
    x.write(ins.operands[0], fn(*vals, tinfo(".f32").fmt, rounding(ins), sat=".sat" in ins.modifiers), ".f32")
    return True


@handler("add", "sub")
def add_sub(ins: A.Instruction, x: Exec) -> None:
    if _mixed(ins, x):
        return
    t = one_type(ins)
    a, b = _src(ins, x, t.name, 2)
    if t.kind == "f":
        check_mods(ins, _RND | {".ftz", ".sat"})
        fn = F.add if ins.opcode == "add" else F.sub
        _float_op(fn, ins, x, t, a, b, rnd=rounding(ins), ftz=".ftz" in ins.modifiers,
                  sat=".sat" in ins.modifiers)
        return
    check_mods(ins, {".sat", ".cc"})
    if t.lanes == 2:  # add.u16x2 / add.s16x2
        fn = I.add if ins.opcode == "add" else I.sub
        x.write(ins.operands[0], I.simd(fn, a, b, lane_bits=16, signed=t.signed, sat=".sat" in ins.modifiers), t.name)
        return
    if ".cc" in ins.modifiers:
        fn = I.add_cc if ins.opcode == "add" else I.sub_cc
        r, carry = fn(a, b, t.width)
        x.write(_CC, carry.astype(bool), ".pred")
        x.write(ins.operands[0], r, t.name)
        return
    fn = I.add if ins.opcode == "add" else I.sub
    x.write(ins.operands[0], fn(a, b, t.width, t.signed, sat=".sat" in ins.modifiers), t.name)


@handler("addc", "subc")
def addc(ins: A.Instruction, x: Exec) -> None:
    t = one_type(ins)
    check_mods(ins, {".cc"})
    a, b = _src(ins, x, t.name, 2)
    cin = x.read(_CC, ".pred").astype(np.uint64)
    fn = I.add_cc if ins.opcode == "addc" else I.sub_cc
    r, carry = fn(a, b, t.width, cin)
    if ".cc" in ins.modifiers:
        x.write(_CC, carry.astype(bool), ".pred")
    x.write(ins.operands[0], r, t.name)


def _int_mode(ins: A.Instruction) -> str:
    for m in ("hi", "lo", "wide"):
        if "." + m in ins.modifiers:
            return m
    raise Unsupported(f"{ins.name}: integer mul/mad needs .lo, .hi or .wide", ins)


def _wide_type(t) -> str:
    return f"{t.kind}{2 * t.width}"


@handler("mul")
def mul(ins: A.Instruction, x: Exec) -> None:
    t = one_type(ins)
    a, b = _src(ins, x, t.name, 2)
    if t.kind == "f":
        check_mods(ins, _RND | {".ftz", ".sat"})
        _float_op(F.mul, ins, x, t, a, b, rnd=rounding(ins), ftz=".ftz" in ins.modifiers,
                  sat=".sat" in ins.modifiers)
        return
    check_mods(ins, {".lo", ".hi", ".wide"})
    mode = _int_mode(ins)
    x.write(ins.operands[0], I.mul(a, b, t.width, t.signed, mode), _wide_type(t) if mode == "wide" else t.name)


@handler("mad", "fma")
def mad(ins: A.Instruction, x: Exec) -> None:
    if ins.opcode == "fma" and _mixed(ins, x):
        return
    t = one_type(ins)
    if t.kind == "f":
        check_mods(ins, _RND | {".ftz", ".sat", ".relu"})
        if rounding(ins, None) is None:
            raise Unsupported(f"{ins.name} without a rounding modifier (legacy pre-sm_20 semantics)", ins)
        a, b, c = _src(ins, x, t.name, 3)
        _float_op(F.fma, ins, x, t, a, b, c, rnd=rounding(ins), ftz=".ftz" in ins.modifiers,
                  sat=".sat" in ins.modifiers, relu_=".relu" in ins.modifiers)
        return
    check_mods(ins, {".lo", ".hi", ".wide", ".sat", ".cc"})
    mode = _int_mode(ins)
    a, b = _src(ins, x, t.name, 2)
    ctype = _wide_type(t) if mode == "wide" else t.name
    c = x.read(ins.operands[3], ctype)
    if ".cc" in ins.modifiers:
        if mode == "wide":
            raise Unsupported(f"{ins.name}", ins)
        r, carry = I.mad_cc(a, b, c, t.width, t.signed, mode)
        x.write(_CC, carry.astype(bool), ".pred")
        x.write(ins.operands[0], r, t.name)
        return
    x.write(ins.operands[0], I.mad(a, b, c, t.width, t.signed, mode, sat=".sat" in ins.modifiers), ctype)


@handler("madc")
def madc(ins: A.Instruction, x: Exec) -> None:
    t = one_type(ins)
    check_mods(ins, {".lo", ".hi", ".cc"})
    a, b, c = _src(ins, x, t.name, 3)
    cin = x.read(_CC, ".pred").astype(np.uint64)
    r, carry = I.mad_cc(a, b, c, t.width, t.signed, _int_mode(ins), carry_in=cin)
    if ".cc" in ins.modifiers:
        x.write(_CC, carry.astype(bool), ".pred")
    x.write(ins.operands[0], r, t.name)


@handler("mul24", "mad24")
def mul24(ins: A.Instruction, x: Exec) -> None:
    t = one_type(ins)
    check_mods(ins, {".lo", ".hi", ".sat"})
    mode = _int_mode(ins)
    if ins.opcode == "mul24":
        a, b = _src(ins, x, t.name, 2)
        x.write(ins.operands[0], I.mul24(a, b, t.signed, mode), t.name)
    else:
        a, b, c = _src(ins, x, t.name, 3)
        x.write(ins.operands[0], I.mad24(a, b, c, t.signed, mode, sat=".sat" in ins.modifiers), t.name)


@handler("sad")
def sad(ins: A.Instruction, x: Exec) -> None:
    t = one_type(ins)
    check_mods(ins, set())
    a, b, c = _src(ins, x, t.name, 3)
    x.write(ins.operands[0], I.sad(a, b, c, t.width, t.signed), t.name)


@handler("div", "rem")
def div(ins: A.Instruction, x: Exec) -> None:
    t = one_type(ins)
    a, b = _src(ins, x, t.name, 2)
    if t.kind == "f":
        if ins.opcode == "rem":
            raise Unsupported(f"{ins.name}", ins)
        check_mods(ins, _RND | {".ftz", ".approx", ".full"})
        ftz = ".ftz" in ins.modifiers
        if ".approx" in ins.modifiers:
            r = FS.div_approx(a, b, ftz=ftz)
        elif ".full" in ins.modifiers:
            r = FS.div_full(a, b, ftz=ftz)
        else:
            if rounding(ins, None) is None:
                raise Unsupported(f"{ins.name} without .rn/.rz/.rm/.rp, .approx or .full", ins)
            r = F.div(a, b, t.fmt, rounding(ins), ftz=ftz)
        x.write(ins.operands[0], r, t.name)
        return
    check_mods(ins, set())
    fn = I.div if ins.opcode == "div" else I.rem
    r, undefined = fn(a, b, t.width, t.signed)
    x.note_undefined(np.asarray(undefined), f"{ins.opcode} by zero", ins)
    x.write(ins.operands[0], r, t.name)


@handler("min", "max")
def minmax(ins: A.Instruction, x: Exec) -> None:
    t = tinfo(ins.types[-1])
    srcs = [x.read(op, t.name) for op in ins.operands[1:]]
    is_max = ins.opcode == "max"
    if t.kind == "f":
        check_mods(ins, {".ftz", ".NaN", ".xorsign.abs", ".abs", ".xorsign"})
        fn = FS.fmax if is_max else FS.fmin
        kw = dict(ftz=".ftz" in ins.modifiers, nan=".NaN" in ins.modifiers)
        c = srcs[2] if len(srcs) == 3 else None
        if t.lanes == 2:
            res = F.packed(lambda a, b, fmt, **k: fn(a, b, fmt, **k), srcs[0], srcs[1], fmt=t.fmt, **kw)
        else:
            res = fn(srcs[0], srcs[1], t.fmt, c=c, **kw)
        x.write(ins.operands[0], res, t.name)
        return
    check_mods(ins, {".relu"})
    fn = I.max_ if is_max else I.min_
    if t.lanes == 2:
        res = I.simd(fn, srcs[0], srcs[1], lane_bits=16, signed=t.signed, relu=".relu" in ins.modifiers)
    else:
        res = fn(srcs[0], srcs[1], t.width, t.signed, relu=".relu" in ins.modifiers)
        if len(srcs) == 3:
            res = fn(res, srcs[2], t.width, t.signed, relu=".relu" in ins.modifiers)
    x.write(ins.operands[0], res, t.name)


@handler("abs", "neg")
def abs_neg(ins: A.Instruction, x: Exec) -> None:
    t = one_type(ins)
    a = x.read(ins.operands[1], t.name)
    if t.kind == "f":
        check_mods(ins, {".ftz"})
        fn = FS.fabs if ins.opcode == "abs" else FS.fneg
        if t.lanes == 2:
            res = F.packed(lambda v, fmt, **k: fn(v, fmt, **k), a, fmt=t.fmt, ftz=".ftz" in ins.modifiers)
        else:
            res = fn(a, t.fmt, ftz=".ftz" in ins.modifiers)
        x.write(ins.operands[0], res, t.name)
        return
    check_mods(ins, set())
    fn = I.abs_ if ins.opcode == "abs" else I.neg
    x.write(ins.operands[0], fn(a, t.width), t.name)


@handler("rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh")
def special(ins: A.Instruction, x: Exec) -> None:
    t = one_type(ins)
    a = x.read(ins.operands[1], t.name)
    ftz = ".ftz" in ins.modifiers
    if ".approx" in ins.modifiers:
        check_mods(ins, {".approx", ".ftz"})
        if t.name == "f64" and ins.opcode in ("rcp", "rsqrt") and ftz:
            r = FS.rcp_approx_ftz_f64(a) if ins.opcode == "rcp" else FS.rsqrt_approx_ftz_f64(a)
        elif t.lanes == 2:
            r = F.packed(lambda v, fmt, **k: FS.approx(ins.opcode, v, fmt, **k), a, fmt=t.fmt, ftz=ftz)
        else:
            r = FS.approx(ins.opcode, a, t.fmt, ftz=ftz)
        x.write(ins.operands[0], r, t.name)
        return
    check_mods(ins, _RND | {".ftz"})
    if ins.opcode == "rcp" and rounding(ins, None):
        x.write(ins.operands[0], F.rcp(a, t.fmt, rounding(ins), ftz=ftz), t.name)
    elif ins.opcode == "sqrt" and rounding(ins, None):
        x.write(ins.operands[0], F.sqrt(a, t.fmt, rounding(ins), ftz=ftz), t.name)
    else:
        raise Unsupported(f"{ins.name}", ins)


@handler("copysign")
def copysign(ins: A.Instruction, x: Exec) -> None:
    t = one_type(ins)
    check_mods(ins, set())
    a, b = _src(ins, x, t.name, 2)
    x.write(ins.operands[0], FS.copysign(a, b, t.fmt), t.name)


@handler("testp")
def testp(ins: A.Instruction, x: Exec) -> None:
    t = one_type(ins)
    ops = [m.lstrip(".") for m in ins.modifiers - set(ins.types)]
    if len(ops) != 1:
        raise Unsupported(f"{ins.name}", ins)
    a = x.read(ins.operands[1], t.name)
    x.write(ins.operands[0], FS.testp(a, ops[0], t.fmt), ".pred")


@handler("dp4a", "dp2a")
def dot_accumulate(ins: A.Instruction, x: Exec) -> None:
    if len(ins.types) != 2:
        raise Unsupported(f"{ins.name}", ins)
    ta, tb = tinfo(ins.types[0]), tinfo(ins.types[1])
    a = x.read(ins.operands[1], ".b32")
    b = x.read(ins.operands[2], ".b32")
    signed = ta.signed or tb.signed
    c = x.read(ins.operands[3], ".s32" if signed else ".u32")
    if ins.opcode == "dp4a":
        check_mods(ins, set())
        r = I.dp4a(a, b, c, ta.signed, tb.signed)
    else:
        check_mods(ins, {".lo", ".hi"})
        r = I.dp2a(a, b, c, ta.signed, tb.signed, _int_mode(ins))
    x.write(ins.operands[0], r, ".b32")
