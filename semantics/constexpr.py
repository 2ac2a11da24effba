"""Constant expressions (PTX 4.5.4-4.5.6): 64-bit signed/unsigned integers and f64, C precedence.

Integer values are (value, unsigned) pairs kept in [0, 2^64); the signed reading is taken where
an operator needs it (division, ordered comparison, right shift).
"""

from __future__ import annotations

import struct

from ptx_parser import ast as A

_M = (1 << 64) - 1


class ConstExprError(ValueError):
    """A constant expression that cannot be evaluated (undefined symbol, bad operand types)."""


def _s(v: int) -> int:
    return v - (1 << 64) if v >> 63 else v


def _bits_to_f64(bits: int, width: int) -> float:
    if width == 32:
        return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]
    return struct.unpack("<d", struct.pack("<Q", bits & _M))[0]


def evaluate_typed(e, symbols: dict[str, int] | None = None) -> tuple[int | float, bool]:
    """Evaluate to (value, unsigned) for integers or (float, False) for floating values.

    `symbols` gives the addresses of variables (for initializers such as `arr+4`).
    """
    if isinstance(e, A.IntLit):
        return e.value & _M, e.unsigned
    if isinstance(e, A.FloatLit):
        return (e.value if e.value is not None else _bits_to_f64(e.bits or 0, e.width)), False
    if isinstance(e, A.Paren):
        return evaluate_typed(e.inner, symbols)
    if isinstance(e, A.Sym):
        if e.name == "WARP_SZ":
            return 32, False
        if symbols is not None and e.name in symbols:
            return symbols[e.name] & _M, True
        raise ConstExprError(f"'{e.name}' is not a constant")
    if isinstance(e, A.FuncExpr):
        if e.func == "generic" and symbols is not None and e.arg in symbols:
            return symbols[e.arg] & _M, True
        raise ConstExprError(f"cannot evaluate {e.func}({e.arg})")
    if isinstance(e, A.Cast):
        v, _ = evaluate_typed(e.operand, symbols)
        if isinstance(v, float):
            raise ConstExprError("casts apply to integers only")
        return v, e.type == ".u64"
    if isinstance(e, A.Unary):
        v, u = evaluate_typed(e.operand, symbols)
        if isinstance(v, float):
            if e.op == "-":
                return -v, False
            if e.op == "+":
                return v, False
            raise ConstExprError(f"operator {e.op} needs an integer")
        if e.op == "-":
            return (-v) & _M, u
        if e.op == "+":
            return v, u
        if e.op == "!":
            return int(v == 0), False
        if e.op == "~":
            return (~v) & _M, True
    if isinstance(e, A.Cond):
        c, _ = evaluate_typed(e.cond, symbols)
        return evaluate_typed(e.then if c else e.other, symbols)
    if isinstance(e, A.Binary):
        return _binary(e.op, evaluate_typed(e.lhs, symbols), evaluate_typed(e.rhs, symbols))
    raise ConstExprError(f"not a constant expression: {e!r}")


def _binary(op: str, a: tuple, b: tuple) -> tuple[int | float, bool]:
    (x, xu), (y, yu) = a, b
    if isinstance(x, float) or isinstance(y, float):
        fx, fy = float(_s(x) if not isinstance(x, float) and not xu else x), float(_s(y) if not isinstance(y, float) and not yu else y)
        table = {"+": lambda: fx + fy, "-": lambda: fx - fy, "*": lambda: fx * fy,
                 "/": lambda: fx / fy if fy != 0 else float("nan"),
                 "<": lambda: int(fx < fy), ">": lambda: int(fx > fy), "<=": lambda: int(fx <= fy),
                 ">=": lambda: int(fx >= fy), "==": lambda: int(fx == fy), "!=": lambda: int(fx != fy)}
        if op not in table:
            raise ConstExprError(f"operator {op} needs integers")
        r = table[op]()
        return (r, False) if isinstance(r, int) else (float(r), False)
    u = xu or yu  # usual arithmetic conversions
    if op in ("<<", ">>"):
        n = y & _M
        if op == "<<":
            return (x << n) & _M if n < 64 else 0, xu
        if xu:
            return (x >> n) if n < 64 else 0, True
        return (_s(x) >> min(n, 63)) & _M, False
    if op == "%":  # remainder reads both operands as unsigned (4.5.5)
        if y == 0:
            raise ConstExprError("remainder by zero")
        return x % y, True
    if op == "/":
        if y == 0:
            raise ConstExprError("division by zero")
        if u:
            return x // y, True
        q = abs(_s(x)) // abs(_s(y))
        return (q if (_s(x) < 0) == (_s(y) < 0) else -q) & _M, False
    if op in ("+", "-", "*", "&", "|", "^"):
        r = {"+": x + y, "-": x - y, "*": x * y, "&": x & y, "|": x | y, "^": x ^ y}[op]
        return r & _M, u
    if op in ("<", ">", "<=", ">="):
        a_, b_ = (x, y) if u else (_s(x), _s(y))
        return int({"<": a_ < b_, ">": a_ > b_, "<=": a_ <= b_, ">=": a_ >= b_}[op]), False
    if op in ("==", "!="):
        return int((x == y) == (op == "==")), False
    if op == "&&":
        return int(bool(x) and bool(y)), False
    if op == "||":
        return int(bool(x) or bool(y)), False
    raise ConstExprError(f"unknown operator {op}")


def evaluate(e, symbols: dict[str, int] | None = None) -> int | float:
    """Evaluate; integers come back with their signed reading unless unsigned."""
    v, u = evaluate_typed(e, symbols)
    if isinstance(v, float) or u:
        return v
    return _s(v)
