"""Bit-exact floating-point arithmetic of PTX (sections 9.7.3 and 9.7.4 of the PTX ISA 9.2).

Operands and results are numpy arrays of raw bit patterns (uint16 / uint32 / uint64), one
element per thread.  Every function takes ``fmt`` (``F64``, ``F32``, ``F16``, ``BF16``), the
rounding modifier ``rnd`` (``rn``/``rz``/``rm``/``rp``), ``ftz`` (flush subnormal inputs and
results to sign-preserving zero) and, where PTX has it, ``sat`` (clamp to [0, 1], NaN -> +0).

How results are computed exactly (narrow formats, p <= 24):

* add/sub: ``two_sum`` in binary64 gives hi + lo == a + b exactly; ``to_odd`` folds lo into
  the last bit of hi (round to odd at 53 bits); ``round_f64`` then rounds once, correctly, in
  any mode (53 >= p + 2).
* mul: the product of two p<=24-bit significands has <= 48 bits and its exponent stays in the
  binary64 normal range (2**-298 .. 2**256), so ``a * b`` in binary64 is exact.
* fma: exact product (as above), then ``two_sum`` + ``to_odd`` + one rounding: a single
  rounding of the exact a*b + c, as 9.7.3.6 requires.
* div, sqrt: binary64 RN(a / b) and RN(sqrt(a)) then one rounding to p bits.  This is exact in
  every mode: for p-bit operands the exact quotient/root is never within 2**-53 (relative) of
  a p+1-bit number unless it equals it (|a - y*b| >= 2**-(2p+1) * y*b for a p+1-bit y, likewise
  for a - y*y), so the binary64 value lies strictly between the same rounding boundaries as the
  exact value.  (This is the 2p+2 double-rounding argument, extended to directed modes.)

binary64 results: RN add/sub/mul/div/sqrt use numpy (IEEE correctly rounded); directed add/sub
use ``two_sum`` and step one ulp by the sign of the error term; ``fma.rn.f64`` is vectorised
(``_fma_f64_rn``); directed mul/div/sqrt/fma and edge lanes take the slow exact path with
``fractions.Fraction`` (per element).

NaNs: f32/f16/bf16 results are the canonical NaN (the manual: "unspecified NaN"; the hardware
canonical NaN is EMPIRICAL).  f64 propagates the first NaN operand, quieted (9.7.3 says
payloads are supported; which operand wins is EMPIRICAL).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from math import isqrt

import numpy as np

from semantics.formats import (
    BF16,
    F16,
    F32,
    F64,
    FloatFormat,
    FormatError,
    check_rounding,
    decode,
    flush_subnormal,
    flush_tiny,
    get_format,
    is_nan,
    round_f64,
    round_fraction,
    to_odd,
    two_sum,
)

ARITH_FORMATS = (F64, F32, F16, BF16)


def _fmt(fmt: FloatFormat | str) -> FloatFormat:
    f = get_format(fmt)
    if f not in ARITH_FORMATS:
        raise FormatError(f"no floating-point arithmetic on {f.name}")
    return f


def _inputs(fmt: FloatFormat, ftz: bool, *ops: np.ndarray) -> list[np.ndarray]:
    out = []
    for op in ops:
        b = np.asarray(op).astype(fmt.dtype)
        out.append(flush_subnormal(b, fmt) if ftz else b)
    return out


def _sign(bits: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    return ((bits.astype(np.uint64) >> np.uint64(fmt.bits - 1)) & np.uint64(1)).astype(bool)


# Which NaN operand an f64 result carries when several are NaN, as measured on an H200 (the
# order ptxas gives the SASS operands; the manual only says payloads propagate): add, sub, mul
# prefer b; div prefers a; fma prefers b, then c, then a.
NAN_PRIORITY = {"add": (1, 0), "mul": (1, 0), "div": (0, 1), "sqrt": (0,), "fma": (1, 2, 0)}


def _nan_result(fmt: FloatFormat, ops: list[np.ndarray], out: np.ndarray, produced: np.ndarray,
                priority: tuple[int, ...] | None = None) -> np.ndarray:
    """Put NaNs into ``out`` where ``produced``: f64 propagates operands, others canonical."""
    if not produced.any():
        return out
    if fmt is not F64:
        return np.where(produced, fmt.dtype(fmt.canonical_nan), out).astype(fmt.dtype)
    nan = np.full(out.shape, np.uint64(F64.canonical_nan))
    order = priority if priority is not None else tuple(range(len(ops)))
    for i in reversed(order):
        nan = np.where(is_nan(ops[i], F64), ops[i] | np.uint64(1 << 51), nan)
    return np.where(produced, nan, out).astype(np.uint64)


def saturate(bits: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """.sat: clamp to [0.0, 1.0]; NaN -> +0.0.  -0.0 -> +0.0 (EMPIRICAL)."""
    v = decode(bits, fmt)
    one = int(round_f64(np.array([1.0]), fmt)[0])
    out = np.where(np.isnan(v) | (v <= 0), 0, bits)
    return np.where(v > 1.0, one, out).astype(fmt.dtype)


def relu(bits: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """.relu: negative -> +0, NaN -> canonical NaN (9.7.4.4).  -0.0 -> +0.0 (EMPIRICAL)."""
    b = np.asarray(bits).astype(fmt.dtype)
    nan = is_nan(b, fmt)
    out = np.where(_sign(b, fmt), 0, b)
    return np.where(nan, fmt.canonical_nan, out).astype(fmt.dtype)


def _finish(x: np.ndarray, fmt: FloatFormat, rnd: str, ftz: bool, sat: bool) -> np.ndarray:
    out = round_f64(x, fmt, rnd, ftz=ftz)
    return saturate(out, fmt) if sat else out


# ---------------------------------------------------------------------------------------------
# binary64 helpers


def _step_f64(hi: np.ndarray, lo: np.ndarray, rnd: str) -> np.ndarray:
    """Directed rounding of the exact value hi + lo, given hi = RN(hi + lo), in binary64."""
    if rnd == "rn":
        return hi
    if rnd == "rna":
        raise FormatError(".rna is not defined for f64 results")
    with np.errstate(invalid="ignore"):
        if rnd == "rp":
            move = lo > 0
            target = np.full(hi.shape, np.inf)
        elif rnd == "rm":
            move = lo < 0
            target = np.full(hi.shape, -np.inf)
        else:  # rz: move toward zero when the error points toward zero
            move = ((hi > 0) & (lo < 0)) | ((hi < 0) & (lo > 0))
            target = np.zeros(hi.shape)
    with np.errstate(over="ignore"):
        return np.where(move, np.nextafter(hi, target), hi)


def _overflow_f64(res: np.ndarray, finite_in: np.ndarray, rnd: str) -> np.ndarray:
    """Directed rounding of an overflowed RN result (+-inf from finite operands)."""
    if rnd in ("rn", "rna"):
        return res
    ovf = np.isinf(res) & finite_in
    maxf = np.finfo(np.float64).max
    if rnd == "rz":
        to_max = ovf
    elif rnd == "rp":
        to_max = ovf & (res < 0)
    else:
        to_max = ovf & (res > 0)
    return np.where(to_max, np.copysign(maxf, res), res)


def _exact_f64(fn: Callable[..., tuple[Fraction, bool]], ops: list[np.ndarray], mask: np.ndarray, rnd: str,
               out: np.ndarray) -> np.ndarray:
    """Slow path: ``fn`` maps exact operand values to (exact result, sign of zero)."""
    idx = np.flatnonzero(mask)
    vals = [decode(op, F64) for op in ops]
    flat = out.reshape(-1).copy()
    for i in idx:
        exact, neg0 = fn(*(Fraction(float(v.reshape(-1)[i])) for v in vals))
        flat[i] = round_fraction(exact, F64, rnd, negative_zero=neg0)
    return flat.reshape(out.shape)


_NATIVE = {F64: np.float64, F32: np.float32, F16: np.float16}
_UFUNCS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "sqrt": np.sqrt}


def _native_rn(op: str, fmt: FloatFormat, ftz: bool, sat: bool, *ops: np.ndarray) -> np.ndarray:
    """Fast path for .rn: numpy's IEEE arithmetic in the format's own dtype is correctly rounded
    (numpy's float16 ops compute in binary32 and round once: innocuous, as 24 >= 2*11 + 2)."""
    with np.errstate(all="ignore"):
        r = _UFUNCS[op](*(o.view(_NATIVE[fmt]) for o in ops))
    prio = NAN_PRIORITY.get("add" if op == "sub" else op)
    out = _nan_result(fmt, list(ops), r.view(fmt.dtype), np.isnan(r), prio)
    if ftz:  # judge tininess on the binary64 value (exact, or RN64 of a quotient: rounds alike)
        with np.errstate(all="ignore"):
            wide = _UFUNCS[op](*(decode(o, fmt) for o in ops))
        out = flush_tiny(out, wide, fmt, "rn")
    return saturate(out, fmt) if sat else out


# ---------------------------------------------------------------------------------------------
# add / sub / mul / fma


def add(a: np.ndarray, b: np.ndarray, fmt: FloatFormat | str = F32, rnd: str = "rn", *, ftz: bool = False,
        sat: bool = False) -> np.ndarray:
    """add{.rnd}{.ftz}{.sat}.{f32,f64,f16,bf16} (9.7.3.3, 9.7.4.1)."""
    fmt, rnd = _fmt(fmt), check_rounding(rnd)
    a, b = _inputs(fmt, ftz, a, b)
    if rnd == "rn" and fmt in _NATIVE:
        return _native_rn("add", fmt, ftz, sat, a, b)
    x, y = decode(a, fmt), decode(b, fmt)
    hi, lo = two_sum(x, y)
    with np.errstate(invalid="ignore"):
        nan = np.isnan(hi)
    zero_sign = (_sign(a, fmt) | _sign(b, fmt)) if rnd == "rm" else (_sign(a, fmt) & _sign(b, fmt))
    hi = np.where(hi == 0, np.where(zero_sign, -0.0, 0.0), hi)
    if fmt is F64:
        res = _overflow_f64(_step_f64(hi, lo, rnd), np.isfinite(x) & np.isfinite(y), rnd)
        out = round_f64(res, F64)
    else:
        out = _finish(to_odd(hi, lo), fmt, rnd, ftz, False)
    out = _nan_result(fmt, [a, b], out, nan, NAN_PRIORITY["add"])
    return saturate(out, fmt) if sat else out


def neg_bits(a: np.ndarray, fmt: FloatFormat | str = F32) -> np.ndarray:
    fmt = get_format(fmt)
    return (np.asarray(a).astype(fmt.dtype) ^ fmt.dtype(1 << (fmt.bits - 1))).astype(fmt.dtype)


def sub(a: np.ndarray, b: np.ndarray, fmt: FloatFormat | str = F32, rnd: str = "rn", *, ftz: bool = False,
        sat: bool = False) -> np.ndarray:
    """sub = add(a, -b); a NaN b keeps its (canonicalised or propagated) NaN."""
    fmt = _fmt(fmt)
    b = np.asarray(b).astype(fmt.dtype)
    nb = np.where(is_nan(b, fmt), b, neg_bits(b, fmt)).astype(fmt.dtype)
    return add(a, nb, fmt, rnd, ftz=ftz, sat=sat)


def mul(a: np.ndarray, b: np.ndarray, fmt: FloatFormat | str = F32, rnd: str = "rn", *, ftz: bool = False,
        sat: bool = False) -> np.ndarray:
    """mul{.rnd}{.ftz}{.sat} (9.7.3.5, 9.7.4.3)."""
    fmt, rnd = _fmt(fmt), check_rounding(rnd)
    a, b = _inputs(fmt, ftz, a, b)
    if rnd == "rn" and fmt in _NATIVE:
        return _native_rn("mul", fmt, ftz, sat, a, b)
    x, y = decode(a, fmt), decode(b, fmt)
    with np.errstate(invalid="ignore", over="ignore"):
        p = x * y  # exact for p <= 24 formats; RN for f64
    nan = np.isnan(p)
    if fmt is F64:
        out = round_f64(_overflow_f64(p, np.isfinite(x) & np.isfinite(y), rnd), F64)
        if rnd != "rn":
            slow = np.isfinite(p) & (p != 0) | (np.isinf(p) & np.isfinite(x) & np.isfinite(y))
            slow |= (p == 0) & (x != 0) & (y != 0)  # underflow to zero: directed may give min subnormal
            out = _exact_f64(lambda u, v: (u * v, False), [a, b], slow, rnd, out)
    else:
        out = _finish(p, fmt, rnd, ftz, False)
    out = _nan_result(fmt, [a, b], out, nan, NAN_PRIORITY["mul"])
    return saturate(out, fmt) if sat else out


def fma(a: np.ndarray, b: np.ndarray, c: np.ndarray, fmt: FloatFormat | str = F32, rnd: str = "rn", *,
        ftz: bool = False, sat: bool = False, relu_: bool = False) -> np.ndarray:
    """fma.rnd{.ftz}{.sat}{.relu} / mad.rnd: a*b + c with a single rounding (9.7.3.6, 9.7.4.4)."""
    fmt, rnd = _fmt(fmt), check_rounding(rnd)
    a, b, c = _inputs(fmt, ftz, a, b, c)
    if fmt is F32 and rnd == "rn":
        out = _fma_f32_rn(a, b, c, ftz)
    else:
        out = _fma_exact(a, b, c, fmt, rnd, ftz)
    if relu_:
        out = relu(out, fmt)
    return saturate(out, fmt) if sat else out


# bits of a binary64 below binary32's precision (52 - 23) and the pattern of a binary32 midpoint there
_F32_LOW = np.uint64((1 << 29) - 1)
_F32_TIE = np.uint64(1 << 28)
_F32_MIN_NORMAL = 2.0**-126


def _fma_f32_rn(a: np.ndarray, b: np.ndarray, c: np.ndarray, ftz: bool) -> np.ndarray:
    """fma.rn.f32 from one binary64 sum: s = RN64(x*y + z) (x*y is exact, module docstring), then
    RN32(s) by numpy's cast. Double rounding can only differ from the single RN32 of the exact sum
    where s is a binary32 midpoint: every midpoint of the binary32 grid (normal range, and the
    overflow threshold MAX + ulp/2) is a binary64 number and RN64 is monotone, so an exact sum off a
    midpoint rounds to s on the same side of it. Those lanes (low 29 bits of s = 1 << 28), the
    subnormal-range results (nonzero |s| < 2**-126: another midpoint grid, and .ftz's tininess) and
    NaNs (canonical NaN) take the exact path (_fma_exact). An exact zero sum is s's IEEE zero (the
    sign rule of 9.7.3.6 / IEEE 754 6.3 for RN); infinities are exact."""
    f32 = np.float32
    with np.errstate(all="ignore"):
        s = a.view(f32).astype(np.float64) * b.view(f32) + c.view(f32)
        out = s.astype(f32).view(np.uint32)
        m = np.abs(s)
        slow = ((s.view(np.uint64) & _F32_LOW) == _F32_TIE) | (~(m >= _F32_MIN_NORMAL) & (m != 0))  # NaN: m >= fails
    if np.count_nonzero(slow):
        out = np.array(np.broadcast_to(out, slow.shape))
        args = [np.broadcast_to(o, slow.shape)[slow] for o in (a, b, c)]
        out[slow] = _fma_exact(*args, F32, "rn", ftz)
    return np.asarray(out)  # a 0-d array (not a numpy scalar) from 0-d operands, as _fma_exact gives


def _fma_exact(a: np.ndarray, b: np.ndarray, c: np.ndarray, fmt: FloatFormat, rnd: str, ftz: bool) -> np.ndarray:
    """fma without .sat/.relu on inputs already in the format's bits (and flushed under .ftz)."""
    x, y, z = decode(a, fmt), decode(b, fmt), decode(c, fmt)
    with np.errstate(invalid="ignore", over="ignore"):
        p = x * y  # exact for the narrow formats (see the module docstring)
    if fmt is not F64:
        hi, lo = two_sum(p, z)  # hi is numpy's IEEE p + z, which signs exact zeros as .rn/.rz/.rp do
        nan = np.isnan(hi)
        if rnd == "rm":  # exact zero under .rm: -0 unless both terms are +0
            hi = np.where(hi == 0, np.where(np.signbit(p) | np.signbit(z), -0.0, 0.0), hi)
        out = round_f64(to_odd(hi, lo), fmt, rnd, ftz=ftz)
    else:
        with np.errstate(invalid="ignore", over="ignore"):
            s = p + z
        # the exact product of finite operands is finite even where RN64(a*b) overflows
        s = np.where(np.isfinite(x) & np.isfinite(y) & np.isinf(z), z, s)
        nan = np.isnan(s)
        out = round_f64(s, F64)
        finite = np.isfinite(x) & np.isfinite(y) & np.isfinite(z)
        slow = finite
        if rnd == "rn":
            fast, ok = _fma_f64_rn(x, y, z)
            ok &= finite
            out = np.where(ok, fast.view(np.uint64), out)
            slow = finite & ~ok

        def exact(u: Fraction, v: Fraction, w: Fraction) -> tuple[Fraction, bool]:
            r = u * v + w
            return r, r == 0 and rnd == "rm"  # exact cancellation: -0 only under .rm

        out = _exact_f64(exact, [a, b, c], slow, rnd, out)
        # a zero product plus a zero addend: the sign follows the IEEE rule on the operand signs
        sp, sc = _sign(a, fmt) ^ _sign(b, fmt), _sign(c, fmt)
        zero_sign = (sp | sc) if rnd == "rm" else (sp & sc)
        zmask = finite & ((x == 0) | (y == 0)) & (z == 0)
        out = np.where(zmask, np.where(zero_sign, np.uint64(1 << 63), np.uint64(0)), out)
    return _nan_result(fmt, [a, b, c], out, nan, NAN_PRIORITY["fma"])


def _split(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Veltkamp split: hi has at most 26 significant bits and hi + lo == v."""
    t = v * 134217729.0  # 2**27 + 1
    hi = t - (t - v)
    return hi, v - hi


def _fma_f64_rn(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised RN(x*y + z) in binary64 and the lanes where it is proven exact.

    Boldo & Melquiond's emulated FMA: the product is split exactly (Dekker), the three-term sum
    is formed with two ``two_sum`` steps, the low part is rounded to odd and one final RN
    addition gives the correctly rounded result.  Valid without overflow in the splits and
    without underflow in the product's error term or near the result; other lanes report
    ``ok = False`` and take the exact path.
    """
    with np.errstate(all="ignore"):
        ph = x * y
        xh, xl = _split(x)
        yh, yl = _split(y)
        pl = ((xh * yh - ph) + xh * yl + xl * yh) + xl * yl
        th, tl = two_sum(z, ph)
        v = to_odd(*two_sum(tl, pl))
        r = th + v
        r = np.where(r == 0, 0.0, r)  # an exact cancellation is +0 under .rn (zero operands: caller)
        big, small = 2.0**995, 2.0**-900
        ok = (np.abs(x) < big) & (np.abs(y) < big) & (np.abs(z) < big)
        ok &= ((np.abs(ph) > small) | (x == 0) | (y == 0)) & ((np.abs(r) > small) | (r == 0))
        ok &= (np.abs(th) > small) | (th == 0)
    return r, ok & np.isfinite(r)


# ---------------------------------------------------------------------------------------------
# div / rcp / sqrt


def div(a: np.ndarray, b: np.ndarray, fmt: FloatFormat | str = F32, rnd: str = "rn", *,
        ftz: bool = False) -> np.ndarray:
    """div.rnd{.ftz}.{f32,f64}: IEEE 754 correctly rounded division (9.7.3.8)."""
    fmt, rnd = _fmt(fmt), check_rounding(rnd)
    if fmt not in (F32, F64):
        raise FormatError("div exists only for .f32 and .f64")
    a, b = _inputs(fmt, ftz, a, b)
    if rnd == "rn":
        return _native_rn("div", fmt, ftz, False, a, b)
    x, y = decode(a, fmt), decode(b, fmt)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        q = x / y
    nan = np.isnan(q)
    if fmt is F64:
        out = round_f64(q, F64)
        if rnd != "rn":
            slow = np.isfinite(x) & np.isfinite(y) & (y != 0) & (x != 0)
            out = _exact_f64(lambda u, v: (u / v, False), [a, b], slow, rnd, out)
    else:
        out = round_f64(q, fmt, rnd, ftz=ftz)
    return _nan_result(fmt, [a, b], out, nan, NAN_PRIORITY["div"])


def rcp(a: np.ndarray, fmt: FloatFormat | str = F32, rnd: str = "rn", *, ftz: bool = False) -> np.ndarray:
    """rcp.rnd{.ftz}: correctly rounded 1/a (9.7.3.13)."""
    fmt = _fmt(fmt)
    one = round_f64(np.ones(np.shape(a)), fmt)
    return div(one, a, fmt, rnd, ftz=ftz)


def _sqrt_fraction(x: Fraction) -> Fraction:
    """A rational that rounds like sqrt(x) in binary64 (exact, or round-to-odd at 2**-1100)."""
    k = 1100
    n = x.numerator << (2 * k)
    s = isqrt(n // x.denominator)
    if s * s * x.denominator == n:
        return Fraction(s, 1 << k)
    return Fraction(2 * s + 1, 1 << (k + 1))


def sqrt(a: np.ndarray, fmt: FloatFormat | str = F32, rnd: str = "rn", *, ftz: bool = False) -> np.ndarray:
    """sqrt.rnd{.ftz}: correctly rounded square root; sqrt(-0) = -0, negative -> NaN (9.7.3.15)."""
    fmt, rnd = _fmt(fmt), check_rounding(rnd)
    if fmt not in (F32, F64):
        raise FormatError("sqrt.rnd exists only for .f32 and .f64")
    (a,) = _inputs(fmt, ftz, a)
    if rnd == "rn":
        return _native_rn("sqrt", fmt, ftz, False, a)
    x = decode(a, fmt)
    with np.errstate(invalid="ignore"):
        r = np.sqrt(x)
    nan = np.isnan(r)
    if fmt is F64:
        out = round_f64(r, F64)
        if rnd != "rn":
            slow = np.isfinite(x) & (x > 0)
            out = _exact_f64(lambda u: (_sqrt_fraction(u), False), [a], slow, rnd, out)
    else:
        out = round_f64(r, fmt, rnd, ftz=ftz)
    return _nan_result(fmt, [a], out, nan)


# ---------------------------------------------------------------------------------------------
# packed forms: f16x2 / bf16x2 (lanes of 16 bits in a .b32) and f32x2 (lanes of 32 in a .b64)


def split2(bits: np.ndarray, lane_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """(element 0 = low half, element 1 = high half), as in the manuals' a[0:15], a[16:31]."""
    w = np.asarray(bits).astype(np.uint64)
    mask = np.uint64((1 << lane_bits) - 1)
    dt = {16: np.uint16, 32: np.uint32}[lane_bits]
    return (w & mask).astype(dt), ((w >> np.uint64(lane_bits)) & mask).astype(dt)


def join2(lo: np.ndarray, hi: np.ndarray, lane_bits: int) -> np.ndarray:
    dt = {16: np.uint32, 32: np.uint64}[lane_bits]
    return (np.asarray(lo).astype(np.uint64) | (np.asarray(hi).astype(np.uint64) << np.uint64(lane_bits))).astype(dt)


def packed(fn: Callable[..., np.ndarray], *ops: np.ndarray, fmt: FloatFormat | str = F16, **kw: object) -> np.ndarray:
    """Apply a scalar operation lane-wise to .f16x2/.bf16x2 (fmt f16/bf16) or .f32x2 (fmt f32)."""
    f = get_format(fmt)
    lanes = [split2(op, f.bits) for op in ops]
    lo = fn(*(p[0] for p in lanes), f, **kw)
    hi = fn(*(p[1] for p in lanes), f, **kw)
    return join2(lo, hi, f.bits)
