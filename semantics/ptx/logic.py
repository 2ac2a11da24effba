"""Logic, shift, bit-field and byte-permute instructions (PTX 9.7.7, 9.7.8)."""

from __future__ import annotations

import numpy as np

from ptx_parser import ast as A
from semantics import bitops as B
from semantics.constexpr import evaluate
from semantics.errors import Unsupported

from .core import Exec, check_mods, handler, one_type, tinfo


@handler("and", "or", "xor")
def andorxor(ins: A.Instruction, x: Exec) -> None:
    t = one_type(ins)
    check_mods(ins, set())
    a, b = (x.read(op, t.name) for op in ins.operands[1:3])
    if t.kind == "pred":
        r = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[ins.opcode](a, b)
    else:
        r = {"and": B.and_, "or": B.or_, "xor": B.xor}[ins.opcode](a, b, t.width)
    x.write(ins.operands[0], r, t.name)


@handler("not", "cnot")
def not_(ins: A.Instruction, x: Exec) -> None:
    t = one_type(ins)
    check_mods(ins, set())
    a = x.read(ins.operands[1], t.name)
    if t.kind == "pred":
        if ins.opcode == "cnot":
            raise Unsupported(f"{ins.name}", ins)
        x.write(ins.operands[0], np.logical_not(a), t.name)
        return
    fn = B.not_ if ins.opcode == "not" else B.cnot
    x.write(ins.operands[0], fn(a, t.width), t.name)


@handler("lop3")
def lop3(ins: A.Instruction, x: Exec) -> None:
    t = one_type(ins)
    ops = list(ins.operands)
    if isinstance(ops[0], A.Pair) or any(m in ins.modifiers for m in (".and", ".or")):
        raise Unsupported(f"{ins.name} with a predicate output", ins)
    check_mods(ins, set())
    a, b, c = (x.read(op, t.name) for op in ops[1:4])
    lut = int(evaluate(ops[4]))
    x.write(ops[0], B.lop3(a, b, c, lut), t.name)


@handler("shl", "shr")
def shifts(ins: A.Instruction, x: Exec) -> None:
    t = one_type(ins)
    check_mods(ins, set())
    a = x.read(ins.operands[1], t.name)
    n = x.read(ins.operands[2], ".u32")
    if ins.opcode == "shl":
        r = B.shl(a, n, t.width)
    else:
        r = B.shr(a, n, t.width, signed=t.signed)
    x.write(ins.operands[0], r, t.name)


@handler("shf")
def shf(ins: A.Instruction, x: Exec) -> None:
    check_mods(ins, {".l", ".r", ".clamp", ".wrap"})
    a, b, c = (x.read(op, ".b32") for op in ins.operands[1:4])
    direction = "l" if ".l" in ins.modifiers else "r"
    mode = "clamp" if ".clamp" in ins.modifiers else "wrap"
    x.write(ins.operands[0], B.shf(a, b, c, direction, mode), ".b32")


@handler("popc", "clz", "brev")
def counts(ins: A.Instruction, x: Exec) -> None:
    t = one_type(ins)
    check_mods(ins, set())
    a = x.read(ins.operands[1], t.name)
    if ins.opcode == "brev":
        x.write(ins.operands[0], B.brev(a, t.width), t.name)
    else:
        x.write(ins.operands[0], getattr(B, ins.opcode)(a, t.width), ".u32")


@handler("bfind")
def bfind(ins: A.Instruction, x: Exec) -> None:
    t = one_type(ins)
    check_mods(ins, {".shiftamt"})
    a = x.read(ins.operands[1], t.name)
    x.write(ins.operands[0], B.bfind(a, t.width, t.signed, shiftamt=".shiftamt" in ins.modifiers), ".u32")


@handler("bfe")
def bfe(ins: A.Instruction, x: Exec) -> None:
    t = one_type(ins)
    check_mods(ins, set())
    a = x.read(ins.operands[1], t.name)
    b, c = x.read(ins.operands[2], ".u32"), x.read(ins.operands[3], ".u32")
    x.write(ins.operands[0], B.bfe(a, b, c, t.width, t.signed), t.name)


@handler("bfi")
def bfi(ins: A.Instruction, x: Exec) -> None:
    t = one_type(ins)
    check_mods(ins, set())
    a, b = x.read(ins.operands[1], t.name), x.read(ins.operands[2], t.name)
    c, d = x.read(ins.operands[3], ".u32"), x.read(ins.operands[4], ".u32")
    x.write(ins.operands[0], B.bfi(a, b, c, d, t.width), t.name)


@handler("prmt")
def prmt(ins: A.Instruction, x: Exec) -> None:
    modes = {".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"}
    check_mods(ins, modes)
    mode = next((m.lstrip(".") for m in ins.modifiers if m in modes), "")
    a, b, c = (x.read(op, ".b32") for op in ins.operands[1:4])
    x.write(ins.operands[0], B.prmt(a, b, c, mode), ".b32")


@handler("bmsk", "szext")
def bmsk_szext(ins: A.Instruction, x: Exec) -> None:
    t = tinfo(ins.types[-1])
    check_mods(ins, {".clamp", ".wrap"})
    mode = "clamp" if ".clamp" in ins.modifiers else "wrap"
    a, b = x.read(ins.operands[1], ".b32"), x.read(ins.operands[2], ".u32")
    r = B.bmsk(a, b, mode) if ins.opcode == "bmsk" else B.szext(a, b, mode, t.signed)
    x.write(ins.operands[0], r, ".b32")


@handler("fns")
def fns(ins: A.Instruction, x: Exec) -> None:
    check_mods(ins, set())
    mask, base = x.read(ins.operands[1], ".b32"), x.read(ins.operands[2], ".u32")
    offset = x.read(ins.operands[3], ".s32")
    r, _ = B.fns(mask, base, offset)
    x.write(ins.operands[0], r, ".b32")
