"""Floating-point min/max, abs/neg, testp, copysign and the ``.approx`` special functions.

Sections 9.7.3.1-2, 9.7.3.8-22 and 9.7.4.5-10 of the PTX ISA 9.2.

``.approx`` functions (rcp, sqrt, rsqrt, ex2, lg2, sin, cos, tanh, div.approx/div.full) are
modelled as the correctly rounded result of the exact function (computed in binary64, then
rounded once).  The hardware (MUFU) results differ in the last bits; the manual's stated
error bounds are in ``APPROX_BOUNDS`` so that a verifier can accept any value within the
bound.  A bit-for-bit hardware model is future work (to be fitted on an H200).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from semantics.floatops import _fmt, _inputs, _nan_result, _sign
from semantics.formats import (
    BF16,
    F16,
    F32,
    F64,
    FloatFormat,
    FormatError,
    decode,
    flush_subnormal,
    get_format,
    is_inf,
    is_nan,
    is_subnormal,
    is_zero,
    round_f64,
)

# ---------------------------------------------------------------------------------------------
# min / max (9.7.3.11-12, 9.7.4.7-8)


def _minmax(is_max: bool, a: np.ndarray, b: np.ndarray, c: np.ndarray | None, fmt: FloatFormat | str, ftz: bool,
            nan: bool, abs_: bool, xorsign: bool) -> np.ndarray:
    fmt = _fmt(fmt)
    if xorsign and (not abs_ or c is not None):
        raise FormatError(".xorsign requires .abs and two inputs")
    ops = _inputs(fmt, ftz, *(x for x in (a, b, c) if x is not None))
    xs = _sign(ops[0], fmt) ^ _sign(ops[1], fmt)
    smask = fmt.dtype(1 << (fmt.bits - 1))
    if abs_:
        ops = [np.where(is_nan(o, fmt), o, o & ~smask).astype(fmt.dtype) for o in ops]

    def two(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        vx, vy = decode(x, fmt), decode(y, fmt)
        nx, ny = np.isnan(vx), np.isnan(vy)
        sx, sy = _sign(x, fmt), _sign(y, fmt)
        # -0 < +0: zeros of different sign are ordered by their sign bit
        if is_max:
            pick_x = (vx > vy) | ((vx == vy) & ~sx & sy)
        else:
            pick_x = (vx < vy) | ((vx == vy) & sx & ~sy)
        out = np.where(pick_x, x, y)
        out = np.where(nx & ~ny, y, np.where(ny & ~nx, x, out))
        any_nan = (nx | ny) if nan else (nx & ny)
        if fmt is F64:  # an H200 returns the second NaN operand, quieted (first if only it is NaN)
            quiet = np.where(ny, y, x) | np.uint64(1 << 51)
            return np.where(any_nan, quiet, out).astype(np.uint64)
        return np.where(any_nan, fmt.dtype(fmt.canonical_nan), out).astype(fmt.dtype)

    d = two(ops[0], ops[1])
    if c is not None:
        d = two(d, ops[2])
    if xorsign:
        d = np.where(is_nan(d, fmt), d, np.where(xs, d | smask, d & ~smask)).astype(fmt.dtype)
    if ftz:
        d = flush_subnormal(d, fmt)
    return d


def fmin(a: np.ndarray, b: np.ndarray, fmt: FloatFormat | str = F32, *, c: np.ndarray | None = None, ftz: bool = False,
         nan: bool = False, abs_: bool = False, xorsign: bool = False) -> np.ndarray:
    """min{.ftz}{.NaN}{.xorsign.abs}: NaN operands are ignored unless .NaN; -0 < +0."""
    return _minmax(False, a, b, c, fmt, ftz, nan, abs_, xorsign)


def fmax(a: np.ndarray, b: np.ndarray, fmt: FloatFormat | str = F32, *, c: np.ndarray | None = None, ftz: bool = False,
         nan: bool = False, abs_: bool = False, xorsign: bool = False) -> np.ndarray:
    return _minmax(True, a, b, c, fmt, ftz, nan, abs_, xorsign)


# ---------------------------------------------------------------------------------------------
# sign operations, testp, copysign


def _sign_op_nan(b: np.ndarray, out: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """abs/neg of a NaN, as measured on an H200: f32/f16/bf16 give the canonical NaN; f64 gives
    the operand quieted with its sign unchanged (the manual: "unspecified NaN")."""
    nan = is_nan(b, fmt)
    if fmt is F64:
        return np.where(nan, b | np.uint64(1 << 51), out).astype(np.uint64)
    return np.where(nan, fmt.dtype(fmt.canonical_nan), out).astype(fmt.dtype)


def fabs(a: np.ndarray, fmt: FloatFormat | str = F32, *, ftz: bool = False) -> np.ndarray:
    """abs{.ftz}: clear the sign bit (NaNs: see ``_sign_op_nan``)."""
    fmt = get_format(fmt)
    (b,) = _inputs(fmt, ftz, a)
    return _sign_op_nan(b, (b & ~fmt.dtype(1 << (fmt.bits - 1))).astype(fmt.dtype), fmt)


def fneg(a: np.ndarray, fmt: FloatFormat | str = F32, *, ftz: bool = False) -> np.ndarray:
    """neg{.ftz}: flip the sign bit (NaNs: see ``_sign_op_nan``)."""
    fmt = get_format(fmt)
    (b,) = _inputs(fmt, ftz, a)
    return _sign_op_nan(b, (b ^ fmt.dtype(1 << (fmt.bits - 1))).astype(fmt.dtype), fmt)


def copysign(a: np.ndarray, b: np.ndarray, fmt: FloatFormat | str = F32) -> np.ndarray:
    """copysign d, a, b: sign of a, the rest of b (9.7.3.2)."""
    fmt = get_format(fmt)
    smask = fmt.dtype(1 << (fmt.bits - 1))
    x, y = np.asarray(a).astype(fmt.dtype), np.asarray(b).astype(fmt.dtype)
    return ((x & smask) | (y & ~smask)).astype(fmt.dtype)


TESTP_OPS = ("finite", "infinite", "number", "notanumber", "normal", "subnormal")


def testp(a: np.ndarray, op: str, fmt: FloatFormat | str = F32) -> np.ndarray:
    """testp.op: zeros count as normal (9.7.3.1)."""
    fmt = get_format(fmt)
    b = np.asarray(a).astype(fmt.dtype)
    nan, inf, sub = is_nan(b, fmt), is_inf(b, fmt), is_subnormal(b, fmt)
    op = op.lstrip(".")
    if op == "finite":
        return ~(nan | inf)
    if op == "infinite":
        return inf
    if op == "number":
        return ~nan
    if op == "notanumber":
        return nan
    if op == "normal":
        return ~(nan | inf | sub)
    if op == "subnormal":
        return sub
    raise FormatError(f"unknown testp operation .{op}")


# ---------------------------------------------------------------------------------------------
# approximate functions


@dataclass(frozen=True)
class ErrorBound:
    """The manual's accuracy promise: ``kind`` is "ulp", "rel" or "abs" (log2 for rel/abs)."""

    kind: str
    value: float
    note: str = ""


APPROX_BOUNDS: dict[str, ErrorBound] = {
    "rcp.approx.f32": ErrorBound("ulp", 1, "max 1 ulp over the full range (9.7.3.13)"),
    "sqrt.approx.f32": ErrorBound("rel", -23, "relative 2**-23 over positive finite inputs (9.7.3.15)"),
    "rsqrt.approx.f32": ErrorBound("rel", -22.9, "relative 2**-22.9 (9.7.3.16)"),
    "ex2.approx.f32": ErrorBound("ulp", 2, "2 ulp from the correctly rounded result (9.7.3.21)"),
    "lg2.approx.f32": ErrorBound("abs", -22, "abs 2**-22 on (0.5, 2), else relative 2**-22 (9.7.3.20)"),
    "sin.approx.f32": ErrorBound("abs", -20.5, "abs 2**-20.5 on [-2pi, 2pi]; 2**-14.7 to 100pi; none beyond"),
    "cos.approx.f32": ErrorBound("abs", -20.5, "abs 2**-20.5 on [-2pi, 2pi]; 2**-14.7 to 100pi; none beyond"),
    "tanh.approx.f32": ErrorBound("rel", -11, "relative 2**-11 over the full range (9.7.3.22)"),
    "div.approx.f32": ErrorBound("ulp", 2, "2 ulp for |b| in [2**-126, 2**126]; 0 beyond (9.7.3.8)"),
    "div.full.f32": ErrorBound("ulp", 2, "2 ulp over the full range (9.7.3.8)"),
    "rcp.approx.ftz.f64": ErrorBound("rel", -19, "gross: from the top 20 fraction bits (ASSUMED bound)"),
    "rsqrt.approx.ftz.f64": ErrorBound("rel", -19, "gross (ASSUMED bound)"),
    "ex2.approx.f16": ErrorBound("ulp", 1, "ASSUMED; the manual gives no figure (9.7.4.10)"),
    "tanh.approx.f16": ErrorBound("rel", -10, "ASSUMED; the manual gives no figure (9.7.4.9)"),
}

_FUNCS = {
    "rcp": lambda x: 1.0 / x,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "ex2": np.exp2,
    "lg2": np.log2,
    "sin": np.sin,
    "cos": np.cos,
    "tanh": np.tanh,
}


def approx(fn: str, a: np.ndarray, fmt: FloatFormat | str = F32, *, ftz: bool = False) -> np.ndarray:
    """{rcp,sqrt,rsqrt,ex2,lg2,sin,cos,tanh}.approx{.ftz}: correctly rounded model.

    Special values follow the manual's tables (e.g. lg2(-0) = -inf, rsqrt(-0) = -inf,
    sin(+-inf) = NaN), which the IEEE binary64 functions reproduce.
    """
    fmt = get_format(fmt)
    if fn not in _FUNCS:
        raise FormatError(f"no approximate function {fn!r}")
    if fmt not in (F32, F16, BF16):
        raise FormatError(f"{fn}.approx is defined for .f32 (and ex2/tanh for .f16/.bf16)")
    (b,) = _inputs(fmt, ftz, a)
    x = decode(b, fmt)
    with np.errstate(all="ignore"):
        y = _FUNCS[fn](x)
        if fn == "rsqrt":
            y = np.where(x == 0, np.copysign(np.inf, x), y)
        if fn == "lg2":
            y = np.where(x == 0, -np.inf, y)
    out = round_f64(y, fmt, "rn", ftz=ftz)
    if fn == "tanh":  # "subnormal inputs get passed through" (9.7.3.22)
        out = np.where(is_subnormal(b, fmt) | is_zero(b, fmt), b, out).astype(fmt.dtype)
    return _nan_result(fmt, [b], out, np.isnan(y))


def div_approx(a: np.ndarray, b: np.ndarray, *, ftz: bool = False) -> np.ndarray:
    """div.approx.f32: a * (1/b) within 2 ulp; for 2**126 < |b| < 2**128 the result is a signed
    zero, or NaN when a is infinite (9.7.3.8).  Modelled as the correctly rounded quotient
    elsewhere (an H200 also divides by subnormal b without overflowing 1/b)."""
    x, y = _inputs(F32, ftz, a, b)
    out = div_full(x, y, ftz=ftz)  # in range, modelled as the correctly rounded quotient
    vy = np.abs(decode(y, F32))
    huge = (vy > 2.0**126) & np.isfinite(vy)
    zero = (_sign(x, F32) ^ _sign(y, F32)).astype(np.uint32) << np.uint32(31)
    special = np.where(is_inf(x, F32), np.uint32(F32.canonical_nan), zero)
    return np.where(huge, special, out).astype(np.uint32)


def div_full(a: np.ndarray, b: np.ndarray, *, ftz: bool = False) -> np.ndarray:
    """div.full.f32: modelled as the correctly rounded quotient (the manual allows 2 ulp)."""
    from semantics.floatops import div

    return div(a, b, F32, "rn", ftz=ftz)


def _upper_word_f64(fn: str, a: np.ndarray) -> np.ndarray:
    """rcp/rsqrt.approx.ftz.f64: work on the upper 32 bits (1.11.20), zero the low word.

    NaN -> 0x7fffffff00000000; subnormals flush to sign-preserving zero (9.7.3.14, 9.7.3.17).
    The reduced-precision result is modelled as the exact function truncated to 20 fraction
    bits; an H200 agrees on about 93 % of lanes and is one unit in bit 32 away elsewhere.
    """
    bits = np.asarray(a).astype(np.uint64)
    top = bits & np.uint64(0xFFFFFFFF00000000)
    top = flush_subnormal(top, F64)
    x = decode(top, F64)
    with np.errstate(all="ignore"):
        y = 1.0 / x if fn == "rcp" else 1.0 / np.sqrt(x)
        if fn == "rsqrt":
            y = np.where(x == 0, np.copysign(np.inf, x), y)
    yb = flush_subnormal(round_f64(y, F64), F64) & np.uint64(0xFFFFFFFF00000000)
    return np.where(np.isnan(y), np.uint64(0x7FFFFFFF00000000), yb).astype(np.uint64)


def rcp_approx_ftz_f64(a: np.ndarray) -> np.ndarray:
    return _upper_word_f64("rcp", a)


def rsqrt_approx_ftz_f64(a: np.ndarray) -> np.ndarray:
    return _upper_word_f64("rsqrt", a)
