"""Comparison and selection instructions: setp, set, selp, slct (PTX 9.7.6)."""

from __future__ import annotations

import numpy as np

from ptx_parser import ast as A
from semantics import compare as C
from semantics.errors import Unsupported

from .core import Exec, TypeInfo, check_mods, handler, tinfo

_CMP = set(C.INT_OPS) | set(C.FLOAT_OPS)
_BOOL = {"and", "or", "xor"}


def _kind(t: TypeInfo):
    return t.fmt if t.kind == "f" else (t.kind, t.width)


def _parse(ins: A.Instruction) -> tuple[str, str | None]:
    mods = {m.lstrip(".") for m in ins.modifiers - set(ins.types)}
    cmp = [m for m in mods if m in _CMP]
    boolop = [m for m in mods if m in _BOOL]
    rest = mods - set(cmp) - set(boolop) - {"ftz"}
    if len(cmp) != 1 or len(boolop) > 1 or rest:
        raise Unsupported(f"{ins.name}", ins)
    return cmp[0], (boolop[0] if boolop else None)


def _bool_source(ins: A.Instruction, x: Exec, op: A.Operand) -> tuple[np.ndarray, bool]:
    if isinstance(op, A.Negated):
        return x.read(op.operand, ".pred"), True
    return x.read(op, ".pred"), False


@handler("setp")
def setp(ins: A.Instruction, x: Exec) -> None:
    t = tinfo(ins.types[-1])
    cmp, boolop = _parse(ins)
    if t.lanes == 2:
        raise Unsupported(f"{ins.name} (packed setp)", ins)
    a, b = x.read(ins.operands[1], t.name), x.read(ins.operands[2], t.name)
    c = neg = None
    if boolop is not None:
        c, neg = _bool_source(ins, x, ins.operands[3])
    p, q = C.setp(a, b, cmp, _kind(t), bool_op=boolop, c=c, negate_c=bool(neg), ftz=".ftz" in ins.modifiers)
    dst = ins.operands[0]
    if isinstance(dst, A.Pair):
        x.write(dst.first, p, ".pred")
        x.write(dst.second, q, ".pred")
    else:
        x.write(dst, p, ".pred")


@handler("set")
def set_(ins: A.Instruction, x: Exec) -> None:
    if len(ins.types) != 2:
        raise Unsupported(f"{ins.name}", ins)
    dt, st = tinfo(ins.types[0]), tinfo(ins.types[1])
    cmp, boolop = _parse(ins)
    a, b = x.read(ins.operands[1], st.name), x.read(ins.operands[2], st.name)
    c = neg = None
    if boolop is not None:
        c, neg = _bool_source(ins, x, ins.operands[3])
    r = C.set_(a, b, cmp, _kind(st), dt.name, bool_op=boolop, c=c, negate_c=bool(neg),
               ftz=".ftz" in ins.modifiers)
    x.write(ins.operands[0], r, dt.name)


@handler("selp")
def selp(ins: A.Instruction, x: Exec) -> None:
    t = tinfo(ins.types[-1])
    check_mods(ins, set())
    a, b = x.read(ins.operands[1], t.name), x.read(ins.operands[2], t.name)
    c, neg = _bool_source(ins, x, ins.operands[3])
    x.write(ins.operands[0], C.selp(a, b, ~c if neg else c), t.name)


@handler("slct")
def slct(ins: A.Instruction, x: Exec) -> None:
    if len(ins.types) != 2:
        raise Unsupported(f"{ins.name}", ins)
    check_mods(ins, {".ftz"})
    dt, ct = tinfo(ins.types[0]), tinfo(ins.types[1])
    a, b = x.read(ins.operands[1], dt.name), x.read(ins.operands[2], dt.name)
    c = x.read(ins.operands[3], ct.name)
    x.write(ins.operands[0], C.slct(a, b, c, ct.name, ftz=".ftz" in ins.modifiers), dt.name)
