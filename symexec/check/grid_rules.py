"""Per-opcode rules of the %ctaid shadow (grid_shadow.py): integer instructions as exact
bit-vector expressions (PTX 9.7.1 integer arithmetic, 9.7.8 logic/shift, 9.7.9.x cvt/cvta,
9.7.3 setp/selp). Anything without a rule here yields TOP; floating point always does."""

from __future__ import annotations

import numpy as np

from ptx_parser import ast as A
from semantics.ptx.core import tinfo

from .grid_expr import CMP, TOP, K, Sv, adapt, leaves, width

_PLAIN = {"add", "sub", "mul", "mad", "shl", "shr", "and", "or", "xor", "not", "neg", "min", "max", "div", "rem",
          "mov", "cvt", "cvta", "selp", "setp"}


def _uniform_const(sh, op, ty: str):
    """The operand's value when independent and the same on every lane, else None."""
    if sh.state(op) is not None:
        return None
    v = np.asarray(sh.concrete(op, ty))
    if v.ndim == 0 or (v == v.reshape(-1)[0]).all():
        return int(v.reshape(-1)[0])
    return None


def _wrap(v: np.ndarray, w: int) -> np.ndarray:
    v = np.asarray(v).astype(np.uint64)
    return v & np.uint64((1 << w) - 1) if w < 64 else v


def transfer(sh, ins: A.Instruction):
    op = ins.opcode
    srcs = ins.operands[1:]
    states = [sh.state(o) for o in srcs]
    if all(s is None for s in states) and op not in ("mov", "cvt") or all(s is None for s in states):
        return None
    if any(s is TOP for s in states) or op not in _PLAIN:
        return TOP
    mods = ins.modifiers
    if mods & {".sat", ".cc", ".ftz", ".approx", ".rn", ".rz", ".rm", ".rp", ".rni", ".rzi", ".rmi", ".rpi"}:
        return TOP
    types = ins.types
    t = tinfo(types[-1])
    if t.kind not in ("s", "u", "b", "pred"):
        return TOP
    w = t.width
    signed = t.kind == "s"
    if op == "mov":
        if t.kind == "pred":
            return sh.expr(srcs[0], ".pred")
        if isinstance(ins.operands[0], A.Vector) or isinstance(srcs[0], A.Vector):
            return TOP
        return sh.sv(srcs[0], types[-1])
    if op == "cvt":
        st = tinfo(types[1])
        if st.kind not in ("s", "u", "b") or tinfo(types[0]).kind not in ("s", "u", "b"):
            return TOP
        e = sh.expr(srcs[0], types[1])
        return Sv(adapt(e, tinfo(types[0]).width, st.kind == "s"))
    if op == "cvta":
        base = sh.batch.ctx.generic_base(next((m for m in ins.positional), ".global")) if ins.positional else 0
        a = sh.sv(srcs[0], types[-1])
        sign = -1 if ".to" in mods else 1
        return Sv(("add", w, a.expr, K(sign * base, w)), a.off)
    if t.kind == "pred":
        if op in ("and", "or", "xor"):
            return ("b" + op, 0, sh.expr(srcs[0], ".pred"), sh.expr(srcs[1], ".pred"))
        if op == "not":
            return ("not", 0, sh.expr(srcs[0], ".pred"))
        return TOP
    if op == "setp":
        cmp = next((m[1:] for m in mods if m[1:] in ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs")), None)
        if cmp is None or isinstance(ins.operands[0], A.Pair):
            return TOP
        c = CMP[cmp]
        uns = cmp in ("lo", "ls", "hi", "hs") or not signed
        e = ("cmp", 0, (c if c in ("eq", "ne") else ("u" if uns else "s") + c), sh.expr(srcs[0], types[-1]),
             sh.expr(srcs[1], types[-1]))
        bop = next((m[1:] for m in mods if m in (".and", ".or", ".xor")), None)
        if bop is not None:
            e = ("b" + bop, 0, e, sh.expr(srcs[2], ".pred"))
        return e
    if op == "selp":
        return Sv(("ite", w, sh.expr(srcs[2], ".pred"), sh.expr(srcs[0], types[-1]), sh.expr(srcs[1], types[-1])))
    if op in ("add", "sub"):
        if ".extended" in ins.name or "addc" in ins.name:
            return TOP
        for i, j in ((0, 1), (1, 0)):
            if states[j] is None and states[i] is not None:
                a = sh.sv(srcs[i], types[-1])
                v = _wrap(sh.concrete(srcs[j], types[-1]), w)
                base = np.zeros((), np.uint64) if a.off is None else a.off
                if op == "add":
                    return Sv(a.expr, _wrap(base + v, w))
                if i == 0:  # a - v
                    return Sv(a.expr, _wrap(base - v, w))
        f = "add" if op == "add" else "sub"
        return Sv((f, w, sh.expr(srcs[0], types[-1]), sh.expr(srcs[1], types[-1])))
    if op in ("mul", "mad"):
        wide = ".wide" in mods
        if ".hi" in mods:
            if op != "mul":
                return TOP
            x = adapt(sh.expr(srcs[0], types[-1]), 2 * w, signed)
            y = adapt(sh.expr(srcs[1], types[-1]), 2 * w, signed)
            return Sv(("high", w, ("mul", 2 * w, x, y)))
        rw = 2 * w if wide else w
        for i, j in ((0, 1), (1, 0)):
            k = _uniform_const(sh, srcs[j], types[-1])
            if k is not None and states[i] is not None and not wide:
                a = sh.sv(srcs[i], types[-1])
                prod = Sv(("mul", w, a.expr, K(k, w)), None if a.off is None else _wrap(a.off * np.uint64(k & (2**64 - 1)), w))
                break
        else:
            x = adapt(sh.expr(srcs[0], types[-1]), rw, signed)
            y = adapt(sh.expr(srcs[1], types[-1]), rw, signed)
            prod = Sv(("mul", rw, x, y))
        if op == "mul":
            return prod
        ct = types[-1] if not wide else ("." + t.kind + str(rw))
        cs = sh.state(srcs[2])
        if cs is None:
            v = _wrap(sh.concrete(srcs[2], ct), rw)
            return Sv(prod.expr, _wrap((prod.off if prod.off is not None else 0) + v, rw))
        pe = prod.expr if prod.off is None else ("add", rw, prod.expr, sh.leaf(prod.off, rw))
        return Sv(("add", rw, pe, sh.expr(srcs[2], ct)))
    if op in ("shl", "shr") and w < 32:  # the amount is .u32 and clamps at the width: shift in 32 bits
        x = adapt(sh.expr(srcs[0], types[-1]), 32, signed)
        f = "shl" if op == "shl" else "ashr" if signed else "lshr"
        return Sv(("trunc", w, (f, 32, x, sh.expr(srcs[1], ".u32"))))
    if op == "shl" and w >= 32:
        k = _uniform_const(sh, srcs[1], ".u32")
        if k is not None and k < w:
            a = sh.sv(srcs[0], types[-1])
            return Sv(("shl", w, a.expr, K(k, w)), None if a.off is None else _wrap(a.off << np.uint64(k), w))
        return Sv(("shl", w, sh.expr(srcs[0], types[-1]), adapt(sh.expr(srcs[1], ".u32"), w)))
    if op == "shr":
        return Sv(("ashr" if signed else "lshr", w, sh.expr(srcs[0], types[-1]), adapt(sh.expr(srcs[1], ".u32"), w)))
    if op in ("and", "or", "xor"):
        return Sv((op, w, sh.expr(srcs[0], types[-1]), sh.expr(srcs[1], types[-1])))
    if op == "not":
        return Sv(("xor", w, sh.expr(srcs[0], types[-1]), K(-1, w)))
    if op == "neg":
        a = sh.sv(srcs[0], types[-1])
        return Sv(("sub", w, K(0, w), a.expr), None if a.off is None else _wrap(-a.off.astype(np.int64), w))
    if op in ("min", "max"):
        if mods - {".s32", ".u32", ".s64", ".u64", ".s16", ".u16"}:
            return TOP
        return Sv((("s" if signed else "u") + op, w, sh.expr(srcs[0], types[-1]), sh.expr(srcs[1], types[-1])))
    if op in ("div", "rem"):
        d = sh.expr(srcs[1], types[-1])
        if d[0] == "k" and d[2] == 0:
            return TOP  # division by zero gives an unspecified value (PTX 9.7.1.6)
        if d[0] != "k":  # the divisor must be proven non-zero in every CTA (grid.py)
            if sh.loop is not None and leaves(d, ("t",)) and sh.outer is not None:  # else one obligation per
                # period (`Shadow.divisor`, grid.py); an inner period's stays unsummarised
                sh.loop_fail(f"the divisor of {ins.name} at {ins.span} changes from iteration to iteration", d)
            sh.divisor(d, f"{ins.name} at {ins.span}")
        return Sv((("s" if signed else "u") + op, w, sh.expr(srcs[0], types[-1]), d))
    return TOP


__all__ = ["transfer", "width"]
