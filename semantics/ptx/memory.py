"""Loads, stores, atomics and address conversion (PTX 9.7.9.8-9.7.9.16, 9.7.13.4-5)."""

from __future__ import annotations

import re

import numpy as np

from ptx_parser import ast as A
from semantics import floatops as F
from semantics import fspecial as FS
from semantics import intops as I
from semantics.errors import Unsupported

from .core import Exec, handler, tinfo

# Modifiers that do not change the value a single-threaded reading observes: caching and
# eviction hints, memory-order qualifiers and scopes (ordering is the race checker's business).
_HINT = re.compile(r"^\.(ca|cg|cs|lu|cv|wb|wt|nc|weak|volatile|relaxed|acquire|release|acq_rel|mmio|"
                   r"cta|cluster|gpu|sys|unified|L1::[a-z_]+|L2::[a-zA-Z0-9_]+|level::[a-z_:0-9]+|"
                   r"L2::cache_hint|noftz)$")
_SPACE = re.compile(r"^\.(global|shared|local|const|param)(::[a-z_]+)?$")
_VEC = {".v2": 2, ".v4": 4, ".v8": 8}


def space_of(ins: A.Instruction) -> str:
    """The state space an instruction addresses (`.generic` when none is named, PTX 6.4)."""
    for m in ins.positional:
        s = _SPACE.match(m)
        if s:
            sub = s.group(2)
            if s.group(1) == "shared" and sub == "::cluster":
                return ".shared::cluster"
            if s.group(1) == "param" and sub == "::func":
                raise Unsupported(f"{ins.name}: .param::func", ins)
            return "." + s.group(1)
    return ".generic"


def _param_space(space: str, hint: str | None) -> str:
    """ld/st.param on a call's argument or return variable: those live in each thread's local
    memory; on a kernel parameter: the kernel's parameter buffer (PTX 5.1.6)."""
    return ".local" if space == ".param" and hint == ".local" else space


def _check(ins: A.Instruction, extra: set[str] = frozenset()) -> None:
    bad = [m for m in ins.modifiers if not (_HINT.match(m) or _SPACE.match(m) or m in _VEC or m in extra)
           and m not in ins.types]
    if bad:
        raise Unsupported(f"{ins.name}: modifier(s) {' '.join(sorted(bad))}", ins)


def _vec(ins: A.Instruction) -> int:
    return next((n for m, n in _VEC.items() if m in ins.modifiers), 1)


def _regs(op: A.Operand) -> tuple:
    return op.elements if isinstance(op, A.Vector) else (op,)


def _elem_bytes(t) -> int:
    return max(1, t.width // 8)


@handler("ld", "ldu")
def ld(ins: A.Instruction, x: Exec) -> None:
    _check(ins)
    t = tinfo(ins.types[-1])
    n = _vec(ins)
    dsts = _regs(ins.operands[0])
    if len(dsts) != n:
        raise Unsupported(f"{ins.name}: {len(dsts)} destinations for .v{n}", ins)
    if len(ins.operands) > 2:
        pass  # cache-policy operand: a hint
    hint, addrs = x.address(ins.operands[1])
    eb = _elem_bytes(t)
    data = x.load(_param_space(space_of(ins), hint), addrs, eb * n, ins)
    vals = np.ascontiguousarray(data).view(tinfo(f"b{8 * eb}").dtype).reshape(x.n, n)
    for i, d in enumerate(dsts):
        if not isinstance(d, A.Sink):
            x.write(d, vals[:, i], t.name)


@handler("st")
def st(ins: A.Instruction, x: Exec) -> None:
    _check(ins)
    t = tinfo(ins.types[-1])
    n = _vec(ins)
    srcs = _regs(ins.operands[1])
    if len(srcs) != n:
        raise Unsupported(f"{ins.name}: {len(srcs)} sources for .v{n}", ins)
    hint, addrs = x.address(ins.operands[0])
    eb = _elem_bytes(t)
    cols = [np.broadcast_to(x.read(s, f".b{8 * eb}"), (x.n,)) for s in srcs]
    vals = np.stack(cols, axis=1).astype(tinfo(f"b{8 * eb}").dtype)
    x.store(_param_space(space_of(ins), hint), addrs, np.ascontiguousarray(vals).view(np.uint8).reshape(x.n, eb * n), ins)


_ATOM_OPS = {".add", ".and", ".or", ".xor", ".exch", ".cas", ".inc", ".dec", ".min", ".max"}


def _update(op: str, t):
    """new = f(old, operand[, operand2]) on (k,) arrays of t's bits (PTX 9.7.13.5 table)."""
    w = t.width
    if op == "add":
        if t.kind == "f":
            fmt = t.fmt
            if t.lanes == 2:
                return lambda old, b, c=None: F.packed(F.add, old, b, fmt=fmt, rnd="rn")
            return lambda old, b, c=None: F.add(old, b, fmt, "rn")
        return lambda old, b, c=None: I.add(old, b, w)
    if op in ("and", "or", "xor"):
        return {"and": lambda o, b, c=None: o & b, "or": lambda o, b, c=None: o | b,
                "xor": lambda o, b, c=None: o ^ b}[op]
    if op == "exch":
        return lambda old, b, c=None: b
    if op == "cas":
        return lambda old, b, c: np.where(old == b, c, old)
    if op == "inc":
        return lambda old, b, c=None: np.where(old >= b, 0, old + 1).astype(t.dtype)
    if op == "dec":
        return lambda old, b, c=None: np.where((old == 0) | (old > b), b, old - 1).astype(t.dtype)
    if op in ("min", "max"):
        if t.kind == "f":
            fn = FS.fmin if op == "min" else FS.fmax
            return lambda old, b, c=None: fn(old, b, t.fmt)
        fn = I.min_ if op == "min" else I.max_
        return lambda old, b, c=None: fn(old, b, w, t.signed)
    raise Unsupported(f"atomic .{op}")


def _atomic(ins: A.Instruction, x: Exec, has_dest: bool) -> None:
    ops = [m for m in ins.modifiers if m in _ATOM_OPS]
    _check(ins, _ATOM_OPS)
    if len(ops) != 1 or _vec(ins) != 1:
        raise Unsupported(f"{ins.name}", ins)
    t = tinfo(ins.types[-1])
    operands = list(ins.operands)
    dst = operands.pop(0) if has_dest else None
    _, addrs = x.address(operands[0])
    b = np.broadcast_to(x.read(operands[1], t.name), (x.n,))
    c = np.broadcast_to(x.read(operands[2], t.name), (x.n,)) if ops[0] == ".cas" else None
    fn = _update(ops[0][1:], t)
    old = x.atomic(space_of(ins), addrs, max(1, t.width // 8), fn, b if c is None else np.stack([b, c], 1), ins)
    if dst is not None:
        x.write(dst, old, t.name)


@handler("atom")
def atom(ins: A.Instruction, x: Exec) -> None:
    _atomic(ins, x, True)


@handler("red")
def red(ins: A.Instruction, x: Exec) -> None:
    _atomic(ins, x, False)


@handler("cvta")
def cvta(ins: A.Instruction, x: Exec) -> None:
    """cvta{.to}.space.size: between a window address and a generic address (PTX 9.7.9.20); `.param`
    is `.param::entry`, the kernel parameters' window."""
    t = tinfo(ins.types[-1])
    sp = space_of(ins)
    if sp == ".shared::cluster":
        raise Unsupported(f"{ins.name}", ins)
    a = x.read(ins.operands[1], t.name).astype(np.uint64)
    base = np.uint64(x.generic_base(sp))
    r = a - base if ".to" in ins.modifiers else a + base
    x.write(ins.operands[0], r.astype(t.dtype), t.name)


@handler("isspacep")
def isspacep(ins: A.Instruction, x: Exec) -> None:
    sp = space_of(ins)
    a = x.read(ins.operands[1], ".u64")
    x.write(ins.operands[0], x.in_space(sp, a), ".pred")


@handler("prefetch", "prefetchu", "applypriority", "createpolicy")
def no_value_effect(ins: A.Instruction, x: Exec) -> None:
    """Hints: no effect on values (fence/membar are the machine's: they order, symexec.machine)."""
    if ins.opcode == "createpolicy":  # an opaque cache policy: any value is a valid one
        x.write(ins.operands[0], np.uint64(0), ".b64")
