"""Bit-exact integer arithmetic of PTX (sections 9.7.1 and 9.7.2 of the PTX ISA 9.2).

Values are numpy arrays of unsigned bit patterns of the operation width (uint8 ... uint64),
one element per thread; ``signed`` selects the .sNN reading.  Results come back as unsigned
patterns of the result width.  Instructions with carry (``add.cc`` ...) return
``(result, carry_out)``; ``div``/``rem`` return ``(result, undefined)`` where ``undefined``
marks lanes whose value the manual leaves unspecified (division by zero).

Logic, shift, bit-field and byte-permute instructions live in ``semantics.bitops``.
"""

from __future__ import annotations

import numpy as np

WIDTHS = (8, 16, 32, 64)
_DT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
_SDT = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}


class IntOpError(ValueError):
    """An integer operation was asked for a width or mode PTX does not have."""


def _w(width: int) -> int:
    if width not in WIDTHS:
        raise IntOpError(f"integer width must be one of {WIDTHS}, got {width}")
    return width


def u(bits: np.ndarray | int, width: int) -> np.ndarray:
    """The low ``width`` bits of ``bits`` as an unsigned array of that width."""
    b = np.asarray(bits)
    if b.dtype.kind in "ui":  # integers: one conversion keeps the low bits as two would (modulo 2^width)
        return b.astype(_DT[_w(width)])
    return b.astype(np.uint64).astype(_DT[_w(width)])


def s(bits: np.ndarray | int, width: int) -> np.ndarray:
    """The low ``width`` bits read as two's complement, as int64."""
    return u(bits, width).view(_SDT[width]).astype(np.int64)


def value(bits: np.ndarray | int, width: int, signed: bool) -> np.ndarray:
    """Numeric value: int64 for signed / narrow, uint64 for u64."""
    if signed:
        return s(bits, width)
    return u(bits, width).astype(np.uint64 if width == 64 else np.int64)


def wrap(x: np.ndarray, width: int) -> np.ndarray:
    """Two's-complement wrap of an int64/uint64 array to ``width`` bits."""
    x = np.asarray(x)
    if x.dtype != np.uint64:
        x = x.astype(np.int64).view(np.uint64)
    return x.astype(_DT[width])


def limits(width: int, signed: bool) -> tuple[int, int]:
    return (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)


def _clip(x: np.ndarray, width: int, signed: bool) -> np.ndarray:
    lo, hi = limits(width, signed)
    return wrap(np.clip(x, lo, hi), width)


def _sat_ok(width: int) -> None:
    if width == 64:
        raise IntOpError(".sat is not defined for 64-bit integer arithmetic")


# ---------------------------------------------------------------------------------------------
# add / sub with optional saturation and carries


def add(a: np.ndarray, b: np.ndarray, width: int, signed: bool = False, *, sat: bool = False) -> np.ndarray:
    """add{.sat}: wraps; .sat clamps to MININT..MAXINT of the type (9.7.1.1)."""
    if sat:
        _sat_ok(width)
        return _clip(value(a, width, signed) + value(b, width, signed), width, signed)
    return (u(a, width) + u(b, width)).astype(_DT[width])


def sub(a: np.ndarray, b: np.ndarray, width: int, signed: bool = False, *, sat: bool = False) -> np.ndarray:
    if sat:
        _sat_ok(width)
        return _clip(value(a, width, signed) - value(b, width, signed), width, signed)
    return (u(a, width) - u(b, width)).astype(_DT[width])


def _cc_width(width: int) -> None:
    if width not in (32, 64):
        raise IntOpError("carry instructions exist for 32- and 64-bit types only (9.7.2)")


def add_cc(a: np.ndarray, b: np.ndarray, width: int, carry_in: np.ndarray | int = 0) -> tuple[np.ndarray, np.ndarray]:
    """add.cc (carry_in 0) / addc{.cc}: d = a + b + CC.CF, returns (d, carry-out) (9.7.2.1-2)."""
    _cc_width(width)
    x, y = u(a, width), u(b, width)
    cin = (np.asarray(carry_in) != 0).astype(_DT[width])
    t = (x + y).astype(_DT[width])
    c1 = t < x
    d = (t + cin).astype(_DT[width])
    c2 = d < t
    return d, (c1 | c2)


def sub_cc(a: np.ndarray, b: np.ndarray, width: int, borrow_in: np.ndarray | int = 0) -> tuple[np.ndarray, np.ndarray]:
    """sub.cc / subc{.cc}: d = a - (b + CC.CF), returns (d, borrow-out) (9.7.2.3-4)."""
    _cc_width(width)
    x, y = u(a, width), u(b, width)
    bin_ = (np.asarray(borrow_in) != 0)
    d = (x - y - bin_.astype(_DT[width])).astype(_DT[width])
    borrow = (x < y) | ((x == y) & bin_)
    return d, borrow


# ---------------------------------------------------------------------------------------------
# multiplication


def _mul_full_u64(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(high, low) 64-bit halves of the 128-bit product of two uint64 arrays."""
    m32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    xl, xh, yl, yh = x & m32, x >> s32, y & m32, y >> s32
    ll, lh, hl, hh = xl * yl, xl * yh, xh * yl, xh * yh
    mid = (ll >> s32) + (lh & m32) + (hl & m32)
    hi = hh + (lh >> s32) + (hl >> s32) + (mid >> s32)
    lo = (mid << s32) | (ll & m32)
    return hi, lo


def mul_full(a: np.ndarray, b: np.ndarray, width: int, signed: bool) -> tuple[np.ndarray, np.ndarray]:
    """(high half, low half) of the 2*width-bit product, as width-bit patterns."""
    if width <= 16 or (width == 32):
        p = value(a, width, signed) * value(b, width, signed)  # fits in int64
        pu = p.view(np.uint64) if p.dtype == np.int64 else p
        lo = pu.astype(_DT[width])
        hi = (pu >> np.uint64(width)).astype(_DT[width])
        return hi, lo
    x, y = u(a, 64), u(b, 64)
    hi, lo = _mul_full_u64(x, y)
    if signed:  # hi(signed) = hi(unsigned) - (a<0 ? b : 0) - (b<0 ? a : 0)  (mod 2**64)
        hi = hi - np.where(x >> np.uint64(63) == 1, y, np.uint64(0)) - np.where(y >> np.uint64(63) == 1, x, np.uint64(0))
    return hi.astype(np.uint64), lo


def mul(a: np.ndarray, b: np.ndarray, width: int, signed: bool = False, mode: str = "lo") -> np.ndarray:
    """mul.{lo,hi,wide} (9.7.1.3).  .wide returns a 2*width-bit pattern (16/32-bit types only)."""
    _w(width)
    hi, lo = mul_full(a, b, width, signed)
    if mode == "lo":
        return lo
    if mode == "hi":
        return hi
    if mode == "wide":
        if width not in (16, 32):
            raise IntOpError("mul.wide exists for 16- and 32-bit types only")
        w2 = 2 * width
        return ((hi.astype(np.uint64) << np.uint64(width)) | lo.astype(np.uint64)).astype(_DT[w2])
    raise IntOpError(f"unknown mul mode {mode!r}")


def mad(a: np.ndarray, b: np.ndarray, c: np.ndarray, width: int, signed: bool = False, mode: str = "lo", *,
        sat: bool = False) -> np.ndarray:
    """mad.{lo,hi,wide}; mad.hi.sat.s32 saturates the final addition (9.7.1.4)."""
    t = mul(a, b, width, signed, mode)
    rw = 2 * width if mode == "wide" else width
    if sat:
        if not (mode == "hi" and signed and width == 32):
            raise IntOpError(".sat applies only to mad.hi.s32")
        return add(t, c, 32, True, sat=True)
    return add(t, c, rw)


def mad_cc(a: np.ndarray, b: np.ndarray, c: np.ndarray, width: int, signed: bool = False, mode: str = "lo",
           carry_in: np.ndarray | int = 0) -> tuple[np.ndarray, np.ndarray]:
    """mad{.hi,.lo}.cc (carry_in 0) / madc: (t<half> + c + CC.CF, carry-out) (9.7.2.5-6)."""
    if mode not in ("lo", "hi"):
        raise IntOpError("mad.cc takes .lo or .hi")
    return add_cc(mul(a, b, width, signed, mode), c, width, carry_in)


def _low24(a: np.ndarray, signed: bool) -> np.ndarray:
    x = s(a, 32) if signed else u(a, 32).astype(np.int64)
    x = x & 0xFFFFFF
    return np.where(signed & (x >= 1 << 23), x - (1 << 24), x)


def mul24(a: np.ndarray, b: np.ndarray, signed: bool = False, mode: str = "lo") -> np.ndarray:
    """mul24.{lo,hi}: 24x24-bit product of the low 24 bits; .hi = t<47..16> (9.7.1.5)."""
    t = (_low24(a, signed) * _low24(b, signed)).view(np.uint64)
    return (t >> np.uint64(16 if mode == "hi" else 0)).astype(np.uint32)


def mad24(a: np.ndarray, b: np.ndarray, c: np.ndarray, signed: bool = False, mode: str = "lo", *,
          sat: bool = False) -> np.ndarray:
    return add(mul24(a, b, signed, mode), c, 32, signed, sat=sat)


def sad(a: np.ndarray, b: np.ndarray, c: np.ndarray, width: int, signed: bool = False) -> np.ndarray:
    """sad: c + |a - b| (wrapping) (9.7.1.7)."""
    x, y = value(a, width, signed), value(b, width, signed)
    diff = np.where(x < y, u(b, width) - u(a, width), u(a, width) - u(b, width)).astype(_DT[width])
    return add(diff, c, width)


# ---------------------------------------------------------------------------------------------
# division


def _divmod(a: np.ndarray, b: np.ndarray, width: int, signed: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x, y = u(a, width).astype(np.uint64), u(b, width).astype(np.uint64)
    zero = y == 0
    ysafe = np.where(zero, np.uint64(1), y)
    if not signed:
        return (x // ysafe).astype(_DT[width]), (x % ysafe).astype(_DT[width]), zero
    sx, sy = s(a, width) < 0, s(b, width) < 0
    m = np.uint64((1 << width) - 1) if width < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
    ax = np.where(sx, (np.uint64(0) - x) & m, x)  # |INT_MIN| = 2**(w-1) fits unsigned
    ay = np.where(sy, (np.uint64(0) - ysafe) & m, ysafe)
    qm, rm = ax // ay, ax % ay
    q = np.where(sx ^ sy, np.uint64(0) - qm, qm)  # C semantics: truncate toward zero
    r = np.where(sx, np.uint64(0) - rm, rm)  # remainder takes the sign of the dividend
    return q.astype(_DT[width]), r.astype(_DT[width]), zero


def div(a: np.ndarray, b: np.ndarray, width: int, signed: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """div: (quotient truncated toward zero, undefined-mask) (9.7.1.8).

    Division by zero is unspecified: such lanes are flagged and hold all ones, as an H200 gives
    for every signed and unsigned width.  MININT / -1 wraps to MININT, unflagged.
    """
    _w(width)
    q, _, zero = _divmod(a, b, width, signed)
    return np.where(zero, _DT[width]((1 << width) - 1), q).astype(_DT[width]), zero


def rem(a: np.ndarray, b: np.ndarray, width: int, signed: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """rem: (remainder with the dividend's sign, undefined-mask) (9.7.1.9).

    The manual calls negative operands machine-dependent; an H200 uses C semantics (truncating
    division).  x % 0 is flagged; the H200 returns all ones, which we return too.
    """
    _w(width)
    _, r, zero = _divmod(a, b, width, signed)
    return np.where(zero, _DT[width]((1 << width) - 1), r).astype(_DT[width]), zero


# ---------------------------------------------------------------------------------------------
# abs / neg / min / max


def neg(a: np.ndarray, width: int) -> np.ndarray:
    return (np.zeros_like(u(a, width)) - u(a, width)).astype(_DT[width])


def abs_(a: np.ndarray, width: int) -> np.ndarray:
    """abs.sNN: |MININT| wraps to MININT."""
    return np.where(s(a, width) < 0, neg(a, width), u(a, width)).astype(_DT[width])


def min_(a: np.ndarray, b: np.ndarray, width: int, signed: bool = False, *, relu: bool = False) -> np.ndarray:
    x, y = value(a, width, signed), value(b, width, signed)
    out = np.where(x < y, u(a, width), u(b, width)).astype(_DT[width])
    return _relu(out, width) if relu else out


def max_(a: np.ndarray, b: np.ndarray, width: int, signed: bool = False, *, relu: bool = False) -> np.ndarray:
    x, y = value(a, width, signed), value(b, width, signed)
    out = np.where(x > y, u(a, width), u(b, width)).astype(_DT[width])
    return _relu(out, width) if relu else out


def _relu(x: np.ndarray, width: int) -> np.ndarray:
    return np.where(s(x, width) < 0, _DT[width](0), x).astype(_DT[width])


# ---------------------------------------------------------------------------------------------
# packed SIMD integer forms: .u16x2 .s16x2 .u8x4 .s8x4 (element 0 in the low bits)


def simd(fn, *ops: np.ndarray, lane_bits: int, **kw: object) -> np.ndarray:
    """Apply ``fn(*lanes, lane_bits, **kw)`` per lane of packed 32-bit operands."""
    n = 32 // lane_bits
    m = np.uint32((1 << lane_bits) - 1)
    out = np.zeros(np.shape(ops[0]), dtype=np.uint32)
    for i in range(n):
        sh = np.uint32(i * lane_bits)
        lanes = [((u(op, 32) >> sh) & m).astype(_DT[lane_bits]) for op in ops]
        r = np.asarray(fn(*lanes, lane_bits, **kw))
        out |= (r.astype(np.uint32) & m) << sh
    return out


# ---------------------------------------------------------------------------------------------
# dot products


def _bytes(x: np.ndarray, signed: bool, nbits: int, count: int) -> list[np.ndarray]:
    return [value((u(x, 32) >> np.uint32(i * nbits)), nbits, signed).astype(np.int64) for i in range(count)]


def dp4a(a: np.ndarray, b: np.ndarray, c: np.ndarray, a_signed: bool, b_signed: bool) -> np.ndarray:
    """dp4a: c + sum of four byte products, wrapping at 32 bits (9.7.1.23)."""
    acc = value(c, 32, a_signed or b_signed).astype(np.int64)
    for x, y in zip(_bytes(a, a_signed, 8, 4), _bytes(b, b_signed, 8, 4)):
        acc = acc + x * y
    return wrap(acc, 32)


def dp2a(a: np.ndarray, b: np.ndarray, c: np.ndarray, a_signed: bool, b_signed: bool, mode: str = "lo") -> np.ndarray:
    """dp2a.{lo,hi}: two 16-bit lanes of a times bytes 0-1 (.lo) or 2-3 (.hi) of b (9.7.1.24)."""
    acc = value(c, 32, a_signed or b_signed).astype(np.int64)
    va = _bytes(a, a_signed, 16, 2)
    vb = _bytes(b, b_signed, 8, 4)
    sel = 0 if mode == "lo" else 2
    for i in range(2):
        acc = acc + va[i] * vb[sel + i]
    return wrap(acc, 32)
