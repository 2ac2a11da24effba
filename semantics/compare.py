"""Comparison and selection: setp, set, selp, slct (9.7.6) and the f16/bf16 forms (9.7.7).

``compare(a, b, op, kind)`` returns a bool array.  ``kind`` is an integer kind ``("u", w)``,
``("s", w)``, ``("b", w)`` or a float format (``F32``, ``F64``, ``F16``, ``BF16``).
"""

from __future__ import annotations

import numpy as np

from semantics.formats import F32, FloatFormat, decode, flush_subnormal, get_format
from semantics.intops import IntOpError, u, value

INT_OPS = ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs")
FLOAT_OPS = ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")
BOOL_OPS = ("and", "or", "xor")

_ORDERED = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal,
}
_UNSIGNED_ALIAS = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}

Kind = tuple[str, int] | FloatFormat | str


def compare(a: np.ndarray, b: np.ndarray, op: str, kind: Kind, *, ftz: bool = False) -> np.ndarray:
    op = op.lstrip(".")
    if isinstance(kind, tuple):
        sign, width = kind
        if op not in INT_OPS:
            raise IntOpError(f"comparison .{op} is not defined for integers")
        if op in _UNSIGNED_ALIAS:
            if sign == "s":
                raise IntOpError(f".{op} is for unsigned comparisons")
            op = _UNSIGNED_ALIAS[op]
        if sign == "b" and op not in ("eq", "ne"):
            raise IntOpError("bit-size types compare only with eq / ne")
        return _ORDERED[op](value(a, width, sign == "s"), value(b, width, sign == "s"))
    fmt = get_format(kind)
    if op not in FLOAT_OPS:
        raise IntOpError(f"comparison .{op} is not defined for floating point")
    ab, bb = np.asarray(a).astype(fmt.dtype), np.asarray(b).astype(fmt.dtype)
    if ftz:
        ab, bb = flush_subnormal(ab, fmt), flush_subnormal(bb, fmt)
    x, y = decode(ab, fmt), decode(bb, fmt)
    unordered = np.isnan(x) | np.isnan(y)
    if op == "num":
        return ~unordered
    if op == "nan":
        return unordered
    with np.errstate(invalid="ignore"):
        if op.endswith("u"):
            return _ORDERED[op[:-1]](x, y) | unordered
        return _ORDERED[op](x, y) & ~unordered  # -0 == +0 numerically


def combine(t: np.ndarray, c: np.ndarray | None, bool_op: str | None, negate_c: bool = False) -> np.ndarray:
    """Apply the optional .BoolOp of set/setp: t BoolOp {!}c."""
    if bool_op is None:
        return t
    cc = np.asarray(c).astype(bool)
    if negate_c:
        cc = ~cc
    if bool_op == "and":
        return t & cc
    if bool_op == "or":
        return t | cc
    if bool_op == "xor":
        return t ^ cc
    raise IntOpError(f"unknown BoolOp {bool_op!r}")


def setp(a: np.ndarray, b: np.ndarray, op: str, kind: Kind, *, bool_op: str | None = None,
         c: np.ndarray | None = None, negate_c: bool = False, ftz: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """setp: (p, q) with p = t BoolOp c and q = !t BoolOp c (9.7.6.2)."""
    t = compare(a, b, op, kind, ftz=ftz)
    return combine(t, c, bool_op, negate_c), combine(~t, c, bool_op, negate_c)


def set_(a: np.ndarray, b: np.ndarray, op: str, kind: Kind, dtype: str, *, bool_op: str | None = None,
         c: np.ndarray | None = None, negate_c: bool = False, ftz: bool = False) -> np.ndarray:
    """set: 0xFFFFFFFF / 1.0f on true, 0 on false (9.7.6.1).  dtype is u32, s32 or f32."""
    r = combine(compare(a, b, op, kind, ftz=ftz), c, bool_op, negate_c)
    true = 0x3F800000 if dtype.lstrip(".") == "f32" else 0xFFFFFFFF
    return np.where(r, np.uint32(true), np.uint32(0)).astype(np.uint32)


def selp(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """selp: c ? a : b (9.7.6.3)."""
    return np.where(np.asarray(c).astype(bool), a, b)


def slct(a: np.ndarray, b: np.ndarray, c: np.ndarray, ctype: str, *, ftz: bool = False) -> np.ndarray:
    """slct: c >= 0 ? a : b.  For .f32 c: -0 counts as >= 0, NaN selects b, .ftz flushes c (9.7.6.4)."""
    if ctype.lstrip(".") == "s32":
        pick_a = value(c, 32, True) >= 0
    elif ctype.lstrip(".") == "f32":
        cb = u(c, 32)
        if ftz:
            cb = flush_subnormal(cb, F32)
        with np.errstate(invalid="ignore"):
            pick_a = decode(cb, F32) >= 0
    else:
        raise IntOpError("slct compares an .s32 or .f32 operand")
    return np.where(pick_a, a, b)
