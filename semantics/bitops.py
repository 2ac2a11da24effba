"""Logic, shift, bit-field and byte-permute instructions of PTX, bit-exact on numpy arrays.

Sections 9.7.1.14-22 (popc clz bfind fns brev bfe bfi szext bmsk), 9.7.8 (and or xor not cnot
lop3 shf shl shr) and 9.7.9.7 (prmt) of the PTX ISA 9.2.  Operands are unsigned bit patterns of
the instruction width; shift amounts and bit positions are .u32 values.
"""

from __future__ import annotations

import numpy as np

from semantics.intops import _DT, IntOpError, s, u

_ALL64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def _lowmask(n: np.ndarray) -> np.ndarray:
    """uint64 mask with the low ``n`` bits set, for n in 0..64 (and beyond: all ones)."""
    n = np.asarray(n).astype(np.int64)
    m = (np.uint64(1) << np.minimum(n, 63).astype(np.uint64)) - np.uint64(1)
    return np.where(n >= 64, _ALL64, m)


def _shl64(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    """x << n on uint64 with n >= 64 giving 0 (numpy leaves large shifts undefined)."""
    n = np.asarray(n).astype(np.int64)
    return np.where(n >= 64, np.uint64(0), np.asarray(x, dtype=np.uint64) << np.minimum(n, 63).astype(np.uint64))


def _shr64(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    n = np.asarray(n).astype(np.int64)
    return np.where(n >= 64, np.uint64(0), np.asarray(x, dtype=np.uint64) >> np.minimum(n, 63).astype(np.uint64))


# ---------------------------------------------------------------------------------------------
# logic


def and_(a: np.ndarray, b: np.ndarray, width: int) -> np.ndarray:
    return u(a, width) & u(b, width)


def or_(a: np.ndarray, b: np.ndarray, width: int) -> np.ndarray:
    return u(a, width) | u(b, width)


def xor(a: np.ndarray, b: np.ndarray, width: int) -> np.ndarray:
    return u(a, width) ^ u(b, width)


def not_(a: np.ndarray, width: int) -> np.ndarray:
    return ~u(a, width)


def cnot(a: np.ndarray, width: int) -> np.ndarray:
    """cnot: (a == 0) ? 1 : 0 (9.7.8.5)."""
    return (u(a, width) == 0).astype(_DT[width])


def lop3(a: np.ndarray, b: np.ndarray, c: np.ndarray, imm_lut: int) -> np.ndarray:
    """lop3.b32: bit k of immLut is F(a=k>>2&1, b=k>>1&1, c=k&1), from ta=0xF0, tb=0xCC, tc=0xAA."""
    if not 0 <= int(imm_lut) <= 255:
        raise IntOpError(f"lop3 immLut must be in 0..255, got {imm_lut}")
    x, y, z = u(a, 32), u(b, 32), u(c, 32)
    out = np.zeros(x.shape, dtype=np.uint32)
    for k in range(8):
        if (int(imm_lut) >> k) & 1:
            term = (x if k & 4 else ~x) & (y if k & 2 else ~y) & (z if k & 1 else ~z)
            out |= term
    return out


def lop3_pred(d: np.ndarray, q: np.ndarray, bool_op: str) -> np.ndarray:
    """lop3.{or,and}: p = (d != 0) BoolOp q."""
    t = u(d, 32) != 0
    qb = np.asarray(q).astype(bool)
    if bool_op == "or":
        return t | qb
    if bool_op == "and":
        return t & qb
    raise IntOpError(f"lop3 BoolOp must be .or or .and, got {bool_op!r}")


# ---------------------------------------------------------------------------------------------
# shifts


def shl(a: np.ndarray, b: np.ndarray, width: int) -> np.ndarray:
    """shl: amounts above the width clamp to the width, giving 0 (9.7.8.8)."""
    amt = u(b, 32).astype(np.int64)
    return _shl64(u(a, width).astype(np.uint64), amt).astype(_DT[width])


def shr(a: np.ndarray, b: np.ndarray, width: int, signed: bool = False) -> np.ndarray:
    """shr: zero fill (.b/.u) or sign fill (.s); amounts clamp to the width (9.7.8.9)."""
    amt = np.minimum(u(b, 32).astype(np.int64), width)
    if signed:
        v = s(a, width)
        return (v >> np.minimum(amt, 63)).view(np.uint64).astype(_DT[width])
    return _shr64(u(a, width).astype(np.uint64), amt).astype(_DT[width])


def shf(a: np.ndarray, b: np.ndarray, c: np.ndarray, direction: str, mode: str) -> np.ndarray:
    """shf.{l,r}.{clamp,wrap}.b32 funnel shift of [b:a] (9.7.8.7)."""
    n = u(c, 32).astype(np.int64)
    if mode == "clamp":
        n = np.minimum(n, 32)
    elif mode == "wrap":
        n = n & 31
    else:
        raise IntOpError(f"shf mode must be clamp or wrap, got {mode!r}")
    cat = (u(b, 32).astype(np.uint64) << np.uint64(32)) | u(a, 32).astype(np.uint64)
    if direction == "l":
        return (_shl64(cat, n) >> np.uint64(32)).astype(np.uint32)
    if direction == "r":
        return _shr64(cat, n).astype(np.uint32)
    raise IntOpError(f"shf direction must be l or r, got {direction!r}")


# ---------------------------------------------------------------------------------------------
# bit counting


def popc(a: np.ndarray, width: int) -> np.ndarray:
    """popc.b32/.b64: number of one bits, as .u32 (9.7.1.14)."""
    x = u(a, width)
    if hasattr(np, "bitwise_count"):  # numpy >= 2.0
        return np.bitwise_count(x).astype(np.uint32)
    x = x.astype(np.uint64)
    n = np.zeros(x.shape, dtype=np.uint32)
    for i in range(width // 8):
        n += _POPC8[((x >> np.uint64(8 * i)) & np.uint64(0xFF)).astype(np.int64)]
    return n


def _bitlen(x: np.ndarray) -> np.ndarray:
    """Number of significant bits of each uint64 (0 for 0)."""
    x = np.asarray(x, dtype=np.uint64).copy()
    n = np.zeros(x.shape, dtype=np.int64)
    for sh in (32, 16, 8, 4, 2, 1):
        big = x >= (np.uint64(1) << np.uint64(sh))
        x = np.where(big, x >> np.uint64(sh), x)
        n += big * sh
    return n + (x > 0)


def clz(a: np.ndarray, width: int) -> np.ndarray:
    """clz.b32/.b64: leading zeros, 0..width (9.7.1.15)."""
    return (width - _bitlen(u(a, width).astype(np.uint64))).astype(np.uint32)


def bfind(a: np.ndarray, width: int, signed: bool = False, *, shiftamt: bool = False) -> np.ndarray:
    """bfind{.shiftamt}: most significant non-sign bit, 0xFFFFFFFF if none (9.7.1.16)."""
    x = u(a, width)
    if signed:
        x = np.where(s(a, width) < 0, ~x, x)
    pos = _bitlen(x.astype(np.uint64)) - 1
    if shiftamt:
        pos = np.where(pos >= 0, (width - 1) - pos, -1)
    return np.where(pos < 0, 0xFFFFFFFF, pos).astype(np.uint32)


_POPC8 = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint32)
_REV8 = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], dtype=np.uint64)


def brev(a: np.ndarray, width: int) -> np.ndarray:
    """brev.b32/.b64: d[i] = a[msb - i] (9.7.1.18)."""
    x = u(a, width).astype(np.uint64)
    out = np.zeros(x.shape, dtype=np.uint64)
    nbytes = width // 8
    for i in range(nbytes):
        byte = (x >> np.uint64(8 * i)) & np.uint64(0xFF)
        out |= _REV8[byte.astype(np.int64)] << np.uint64(8 * (nbytes - 1 - i))
    return out.astype(_DT[width])


def fns(mask: np.ndarray, base: np.ndarray, offset: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """fns.b32: n-th set bit from ``base``; returns (d, undefined) with base > 31 undefined.

    Undefined lanes hold 0xFFFFFFFF, which is what an H200 returns for them.
    """
    m = u(mask, 32).astype(np.int64)
    b = u(base, 32).astype(np.int64)
    off = s(offset, 32)
    bad = b > 31
    b = np.where(bad, 0, b)
    d = np.full(m.shape, 0xFFFFFFFF, dtype=np.int64)
    at_base = ((m >> b) & 1) == 1
    d = np.where((off == 0) & at_base, b, d)
    step = np.where(off > 0, 1, -1)
    count = np.abs(off) - 1
    found = off == 0
    pos = b.copy()
    for _ in range(32):
        inside = (pos >= 0) & (pos < 32) & ~found
        bit = inside & (((m >> np.clip(pos, 0, 31)) & 1) == 1)
        hit = bit & (count == 0)
        d = np.where(hit, pos, d)
        found |= hit
        count = np.where(bit & ~hit, count - 1, count)
        pos = pos + step
    d = np.where(bad, 0xFFFFFFFF, d)
    return d.astype(np.uint32), bad


# ---------------------------------------------------------------------------------------------
# bit fields


def _field_bounds(p: np.ndarray, n: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """(position, length) of a bit field: & 0xff for 32-bit types (the manual), whole u32 for
    64-bit types (measured on an H200, sm_90; the manual says & 0xff)."""
    mask = np.uint32(0xFF) if width == 32 else np.uint32(0xFFFFFFFF)
    return (u(p, 32) & mask).astype(np.int64), (u(n, 32) & mask).astype(np.int64)


def bfe(a: np.ndarray, b: np.ndarray, c: np.ndarray, width: int, signed: bool = False) -> np.ndarray:
    """bfe: extract c&0xff bits at b&0xff, zero- or sign-extended (9.7.1.19).

    For .u64/.s64 an H200 uses the whole 32-bit position and length (no & 0xff; positions or
    lengths of 256 and more act as "beyond the msb"), which we follow: ``_field_bounds``.
    """
    msb = width - 1
    pos, ln = _field_bounds(b, c, width)
    x = u(a, width).astype(np.uint64)
    n = np.clip(np.minimum(ln, width - pos), 0, width)  # field bits actually inside a
    field = _shr64(x, pos) & _lowmask(n)
    if signed:
        sb_pos = np.minimum(pos + ln - 1, msb)
        sbit = (ln > 0) & ((_shr64(x, np.maximum(sb_pos, 0)) & np.uint64(1)) == 1)
        fill = _ALL64 & ~_lowmask(n)
        field = np.where(sbit, field | fill, field)
    return field.astype(_DT[width])


def bfi(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray, width: int) -> np.ndarray:
    """bfi: insert the low d&0xff bits of a into b at c&0xff (9.7.1.20); .b64: see ``bfe``."""
    pos, ln = _field_bounds(c, d, width)
    n = np.clip(np.minimum(ln, width - pos), 0, width)
    mask = _shl64(_lowmask(n), pos)
    x, y = u(a, width).astype(np.uint64), u(b, width).astype(np.uint64)
    return ((y & ~mask) | (_shl64(x, pos) & mask)).astype(_DT[width])


def szext(a: np.ndarray, b: np.ndarray, mode: str, signed: bool) -> np.ndarray:
    """szext.{clamp,wrap}.{u32,s32} (9.7.1.21)."""
    if mode not in ("clamp", "wrap"):
        raise IntOpError(f"szext mode must be clamp or wrap, got {mode!r}")
    x = u(a, 32).astype(np.uint64)
    bb = u(b, 32).astype(np.int64)
    b1 = bb & 0x1F
    too_large = (bb >= 32) & (mode == "clamp")
    mask = np.where(too_large, np.uint64(0), _shl64(np.uint64(0xFFFFFFFF), b1) & np.uint64(0xFFFFFFFF))
    sign_pos = (b1 - 1) & 0x1F
    sbit = signed & (b1 != 0) & ~too_large & (((x >> sign_pos.astype(np.uint64)) & np.uint64(1)) == 1)
    out = (x & ~mask & np.uint64(0xFFFFFFFF)) | np.where(sbit, mask, np.uint64(0))
    return out.astype(np.uint32)


def bmsk(a: np.ndarray, b: np.ndarray, mode: str) -> np.ndarray:
    """bmsk.{clamp,wrap}.b32 (9.7.1.22)."""
    if mode not in ("clamp", "wrap"):
        raise IntOpError(f"bmsk mode must be clamp or wrap, got {mode!r}")
    aa, bb = u(a, 32).astype(np.int64), u(b, 32).astype(np.int64)
    a1, b1 = aa & 0x1F, bb & 0x1F
    full = np.uint64(0xFFFFFFFF)
    mask0 = _shl64(full, a1) & full
    ssum = a1 + b1
    mask1 = _shl64(full, ssum) & full
    overflow = ssum >= 32
    if mode == "clamp":
        mask0 = np.where(aa >= 32, np.uint64(0), mask0)
        overflow = overflow | (aa >= 32) | (bb >= 32)
    mask1 = np.where(overflow, np.uint64(0), np.where(b1 == 0, full, mask1))
    return (mask0 & ~mask1 & full).astype(np.uint32)


# ---------------------------------------------------------------------------------------------
# prmt (9.7.9.7)

# For each mode: source byte index for (selector c[1:0]) x (destination byte 0..3).
_PRMT_MODES = {
    "f4e": [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]],
    "b4e": [[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]],
    "rc8": [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]],
    "ecl": [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]],
    "ecr": [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]],
    "rc16": [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]],
}
PRMT_MODES = ("",) + tuple(_PRMT_MODES)


def prmt_source_bytes(selector: int, mode: str = "") -> frozenset[int]:
    """The bytes of {b, a} (0-3 from a, 4-7 from b) that prmt.b32{.mode} with this concrete selector
    reads; any other byte cannot change its result (9.7.9.7). Default mode: each of the selector's
    four low nibbles picks byte nibble[2:0], its msb replicating that same byte's sign bit, so the
    sign replication reads no other byte; the selector's bits 16-31 are unused. The other modes read
    the bytes their table names for selector[1:0] (the same table `prmt` computes with)."""
    mode = mode.lstrip(".")
    if mode:
        if mode not in _PRMT_MODES:
            raise IntOpError(f"unknown prmt mode {mode!r}")
        return frozenset(_PRMT_MODES[mode][selector & 3])
    return frozenset((selector >> (4 * k)) & 7 for k in range(4))


def prmt(a: np.ndarray, b: np.ndarray, c: np.ndarray, mode: str = "") -> np.ndarray:
    """prmt.b32{.mode}: pick bytes of {b, a} (bytes 0-3 from a, 4-7 from b)."""
    mode = mode.lstrip(".")
    if mode and mode not in _PRMT_MODES:
        raise IntOpError(f"unknown prmt mode {mode!r}")
    x, y, ctl = np.broadcast_arrays(u(a, 32), u(b, 32), u(c, 32).astype(np.int64))
    shape = x.shape
    src = ((y.astype(np.uint64).reshape(-1) << np.uint64(32)) | x.astype(np.uint64).reshape(-1))
    src8 = src.astype("<u8").view(np.uint8).reshape(-1, 8)  # byte i of {b, a} at column i
    ctl = ctl.reshape(-1)
    if mode:
        idx = np.array(_PRMT_MODES[mode])[ctl & 3]
        picked = np.take_along_axis(src8, idx, axis=1)
    else:
        sel = (ctl[:, None] >> np.array([0, 4, 8, 12])) & 0xF
        picked = np.take_along_axis(src8, sel & 7, axis=1)
        picked = np.where(sel >= 8, np.where(picked >= 0x80, 0xFF, 0), picked).astype(np.uint8)
    return np.ascontiguousarray(picked).view("<u4").reshape(shape).astype(np.uint32)
