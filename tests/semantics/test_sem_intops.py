"""Integer, bit and comparison semantics against Python-integer oracles and the manual's loops."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semantics import bitops as bo
from semantics import compare as cp
from semantics import intops as io
from semantics.formats import F32

WIDTHS = (8, 16, 32, 64)
DT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def ints(width: int) -> st.SearchStrategy[int]:
    edge = [0, 1, 2, (1 << (width - 1)) - 1, 1 << (width - 1), (1 << (width - 1)) + 1, (1 << width) - 1,
            (1 << width) - 2]
    return st.one_of(st.sampled_from(edge), st.integers(0, (1 << width) - 1))


def A(x: int, width: int) -> np.ndarray:
    return np.array([x], dtype=np.uint64).astype(DT[width])


def sv(x: int, width: int) -> int:
    return x - (1 << width) if x >> (width - 1) else x


def one(r: np.ndarray) -> int:
    return int(np.asarray(r).reshape(-1)[0])


@pytest.mark.parametrize("width", WIDTHS)
@settings(max_examples=120, deadline=None)
@given(data=st.data(), signed=st.booleans())
def test_arith_against_python(width: int, data: st.DataObject, signed: bool) -> None:
    a, b, c = (data.draw(ints(width)) for _ in range(3))
    m = (1 << width) - 1
    va, vb = (sv(a, width), sv(b, width)) if signed else (a, b)
    x, y = A(a, width), A(b, width)
    assert one(io.add(x, y, width)) == (a + b) & m
    assert one(io.sub(x, y, width)) == (a - b) & m
    assert one(io.mul(x, y, width, signed, "lo")) == (va * vb) & m
    assert one(io.mul(x, y, width, signed, "hi")) == ((va * vb) >> width) & m
    if width in (16, 32):
        assert one(io.mul(x, y, width, signed, "wide")) == (va * vb) & ((1 << 2 * width) - 1)
    assert one(io.mad(x, y, A(c, width), width, signed, "lo")) == (va * vb + c) & m
    q, undef = io.div(x, y, width, signed)
    r, undef_r = io.rem(x, y, width, signed)
    assert bool(undef[0]) == bool(undef_r[0]) == (b == 0)
    if b:
        tq = abs(va) // abs(vb) * (1 if (va < 0) == (vb < 0) else -1)  # truncating division
        assert one(q) == tq & m
        assert one(r) == (va - tq * vb) & m
    lo, hi = io.limits(width, signed)
    if width < 64:
        assert one(io.add(x, y, width, signed, sat=True)) == min(max(va + vb, lo), hi) & m
        assert one(io.sub(x, y, width, signed, sat=True)) == min(max(va - vb, lo), hi) & m
    assert one(io.min_(x, y, width, signed)) == min(va, vb) & m
    assert one(io.max_(x, y, width, signed)) == max(va, vb) & m
    if signed:
        assert one(io.abs_(x, width)) == abs(va) & m
        assert one(io.neg(x, width)) == (-va) & m
    assert one(io.sad(x, y, A(c, width), width, signed)) == (c + abs(va - vb)) & m


@pytest.mark.parametrize("width", (32, 64))
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_carry_chains_make_wide_arithmetic(width: int, data: st.DataObject) -> None:
    """add.cc/addc and sub.cc/subc over 4 words equal 4*width-bit arithmetic (9.7.2)."""
    words = 4
    big = 1 << (width * words)
    p, q = data.draw(st.integers(0, big - 1)), data.draw(st.integers(0, big - 1))
    m = (1 << width) - 1
    pw = [A((p >> (width * i)) & m, width) for i in range(words)]
    qw = [A((q >> (width * i)) & m, width) for i in range(words)]
    for op, ref in ((io.add_cc, (p + q) % big), (io.sub_cc, (p - q) % big)):
        cf: object = 0
        total = 0
        for i in range(words):
            d, cf = op(pw[i], qw[i], width, cf)
            total |= one(d) << (width * i)
        assert total == ref
        assert bool(np.asarray(cf)[0]) == ((p + q >= big) if op is io.add_cc else (p < q))


@settings(max_examples=100, deadline=None)
@given(a=ints(32), b=ints(32), c=ints(32), cin=st.booleans())
def test_mad_cc(a: int, b: int, c: int, cin: bool) -> None:
    for mode, t in (("lo", (a * b) & 0xFFFFFFFF), ("hi", (a * b) >> 32)):
        d, cf = io.mad_cc(A(a, 32), A(b, 32), A(c, 32), 32, False, mode, int(cin))
        s = t + c + int(cin)
        assert one(d) == s & 0xFFFFFFFF and bool(cf[0]) == (s >> 32 == 1)


def test_mul24_and_dot_products() -> None:
    a, b = A(0x00FFFFFF, 32), A(0x00800001, 32)
    assert one(io.mul24(a, b, True, "lo")) == ((-1 * -0x7FFFFF) & 0xFFFFFFFF)
    assert one(io.mul24(a, b, False, "hi")) == ((0xFFFFFF * 0x800001) >> 16) & 0xFFFFFFFF
    x, y = A(0x80FF0102, 32), A(0x7F02FF03, 32)
    sa = [0x02, 0x01, -1, -128]
    sb = [0x03, -1, 0x02, 0x7F]
    assert one(io.dp4a(x, y, A(5, 32), True, True)) == (5 + sum(p * q for p, q in zip(sa, sb))) & 0xFFFFFFFF
    ua = [0x02, 0x01, 0xFF, 0x80]
    ub = [0x03, 0xFF, 0x02, 0x7F]
    assert one(io.dp4a(x, y, A(5, 32), False, False)) == (5 + sum(p * q for p, q in zip(ua, ub))) & 0xFFFFFFFF
    h = [0x0102, sv(0x80FF, 16)]
    assert one(io.dp2a(x, y, A(0, 32), True, True, "hi")) == (h[0] * 0x02 + h[1] * 0x7F) & 0xFFFFFFFF


def test_simd_packed_forms() -> None:
    a, b = A(0x7FFF8000, 32), A(0x00010001, 32)
    assert one(io.simd(io.add, a, b, lane_bits=16)) == 0x80008001
    assert one(io.simd(io.add, a, b, lane_bits=16, signed=True, sat=True)) == 0x7FFF8001
    assert one(io.simd(io.min_, a, b, lane_bits=8, signed=True, relu=True)) == 0
    assert one(io.simd(io.max_, a, b, lane_bits=8, signed=True)) == 0x7F010001
    assert one(io.simd(io.max_, a, b, lane_bits=8, signed=False)) == 0x7FFF8001


# --------------------------------------------------------------------------------------------- bits


FIELD_MASK = {32: 0xFF, 64: 0xFFFFFFFF}  # 64-bit: whole u32 position/length, as measured on an H200


def bfe_manual(a: int, pos: int, ln: int, width: int, signed: bool) -> int:
    msb = width - 1
    pos, ln = pos & FIELD_MASK[width], ln & FIELD_MASK[width]
    sbit = 0 if (not signed or ln == 0) else (a >> min(pos + ln - 1, msb)) & 1
    d = 0
    for i in range(width):
        bit = (a >> (pos + i)) & 1 if (i < ln and pos + i <= msb) else sbit
        d |= bit << i
    return d


def bfi_manual(a: int, b: int, pos: int, ln: int, width: int) -> int:
    pos, ln = pos & FIELD_MASK[width], ln & FIELD_MASK[width]
    f = b
    i = 0
    while i < ln and pos + i <= width - 1:
        f = (f & ~(1 << (pos + i))) | (((a >> i) & 1) << (pos + i))
        i += 1
    return f


small = st.one_of(st.integers(0, 70), st.integers(0, 2**32 - 1))


@pytest.mark.parametrize("width", (32, 64))
@settings(max_examples=150, deadline=None)
@given(data=st.data(), pos=small, ln=small, signed=st.booleans())
def test_bit_fields(width: int, data: st.DataObject, pos: int, ln: int, signed: bool) -> None:
    a, b = data.draw(ints(width)), data.draw(ints(width))
    assert one(bo.bfe(A(a, width), A(pos, 32), A(ln, 32), width, signed)) == bfe_manual(a, pos, ln, width, signed)
    assert one(bo.bfi(A(a, width), A(b, width), A(pos, 32), A(ln, 32), width)) == bfi_manual(a, b, pos, ln, width)


@pytest.mark.parametrize("width", (16, 32, 64))
@settings(max_examples=120, deadline=None)
@given(data=st.data(), amt=st.one_of(st.integers(0, 70), st.integers(0, 2**32 - 1)))
def test_shifts_and_counts(width: int, data: st.DataObject, amt: int) -> None:
    a = data.draw(ints(width))
    m = (1 << width) - 1
    n = min(amt, width)
    assert one(bo.shl(A(a, width), A(amt, 32), width)) == (a << n) & m
    assert one(bo.shr(A(a, width), A(amt, 32), width)) == a >> n
    assert one(bo.shr(A(a, width), A(amt, 32), width, signed=True)) == (sv(a, width) >> n) & m
    if width in (32, 64):
        assert one(bo.popc(A(a, width), width)) == bin(a).count("1")
        assert one(bo.clz(A(a, width), width)) == width - a.bit_length()
        assert one(bo.brev(A(a, width), width)) == int(f"{a:0{width}b}"[::-1], 2)
        unsigned = a.bit_length() - 1 if a else 0xFFFFFFFF
        assert one(bo.bfind(A(a, width), width)) == unsigned
        s = sv(a, width)
        t = ~s if s < 0 else s
        signed = t.bit_length() - 1 if t else 0xFFFFFFFF
        assert one(bo.bfind(A(a, width), width, signed=True)) == signed
        shift = (width - 1 - signed) if signed != 0xFFFFFFFF else 0xFFFFFFFF
        assert one(bo.bfind(A(a, width), width, signed=True, shiftamt=True)) == shift


@settings(max_examples=100, deadline=None)
@given(a=ints(32), b=ints(32), c=st.integers(0, 80), mode=st.sampled_from(["clamp", "wrap"]))
def test_funnel_shift(a: int, b: int, c: int, mode: str) -> None:
    n = min(c, 32) if mode == "clamp" else c & 31
    cat = (b << 32) | a
    assert one(bo.shf(A(a, 32), A(b, 32), A(c, 32), "l", mode)) == ((cat << n) >> 32) & 0xFFFFFFFF
    assert one(bo.shf(A(a, 32), A(b, 32), A(c, 32), "r", mode)) == (cat >> n) & 0xFFFFFFFF


LOP_FUNCS = [
    lambda a, b, c: a & b & c, lambda a, b, c: a | b | c, lambda a, b, c: (a & b | c) ^ a,
    lambda a, b, c: a ^ b ^ c, lambda a, b, c: (a & ~b) | (b & c), lambda a, b, c: ~(a | c) & b,
    lambda a, b, c: 0, lambda a, b, c: ~0,
]


@settings(max_examples=100, deadline=None)
@given(a=ints(32), b=ints(32), c=ints(32), f=st.sampled_from(LOP_FUNCS))
def test_lop3_by_truth_table(a: int, b: int, c: int, f) -> None:  # noqa: ANN001
    lut = f(0xF0, 0xCC, 0xAA) & 0xFF
    assert one(bo.lop3(A(a, 32), A(b, 32), A(c, 32), lut)) == f(a, b, c) & 0xFFFFFFFF


def test_prmt_modes() -> None:
    a, b = A(0x33221100, 32), A(0x77665544, 32)
    assert one(bo.prmt(a, b, A(0x3210, 32))) == 0x33221100
    assert one(bo.prmt(a, b, A(0x7654, 32))) == 0x77665544
    assert one(bo.prmt(a, b, A(0x0123, 32))) == 0x00112233
    assert one(bo.prmt(A(0x0080F000, 32), b, A(0x8989, 32))) == 0x00FF00FF  # d.b0 = sign(byte 1), d.b1 = sign(byte 0)
    assert one(bo.prmt(a, b, A(1, 32), "f4e")) == 0x44332211
    assert one(bo.prmt(a, b, A(0, 32), "b4e")) == 0x55667700
    assert one(bo.prmt(a, b, A(2, 32), "rc8")) == 0x22222222
    assert one(bo.prmt(a, b, A(1, 32), "ecl")) == 0x33221111
    assert one(bo.prmt(a, b, A(2, 32), "ecr")) == 0x22221100
    assert one(bo.prmt(a, b, A(1, 32), "rc16")) == 0x33223322


def test_misc_bit_instructions() -> None:
    assert one(bo.bmsk(A(1, 32), A(2, 32), "wrap")) == 0x6
    assert one(bo.bmsk(A(40, 32), A(2, 32), "clamp")) == 0
    assert one(bo.szext(A(0xFFFFFFFF, 32), A(0, 32), "wrap", False)) == 0
    assert one(bo.szext(A(0x80, 32), A(8, 32), "clamp", True)) == 0xFFFFFF80
    assert one(bo.szext(A(0x1234, 32), A(40, 32), "clamp", True)) == 0x1234
    mask = A(0xAAAAAAAA, 32)
    got = [one(bo.fns(mask, A(base, 32), A(off & 0xFFFFFFFF, 32))[0]) for base, off in ((3, 1), (3, -1), (2, 1), (2, -1))]
    assert got == [3, 3, 3, 1]  # the manual's examples
    assert one(bo.cnot(A(0, 16), 16)) == 1 and one(bo.cnot(A(7, 16), 16)) == 0
    assert bool(bo.lop3_pred(A(0, 32), np.array([True]), "and")[0]) is False


@settings(max_examples=100, deadline=None)
@given(a=ints(32), b=ints(32))
def test_integer_compare(a: int, b: int) -> None:
    x, y = A(a, 32), A(b, 32)
    sa, sb = sv(a, 32), sv(b, 32)
    assert bool(cp.compare(x, y, "lt", ("s", 32))[0]) == (sa < sb)
    assert bool(cp.compare(x, y, "lo", ("u", 32))[0]) == (a < b)
    assert bool(cp.compare(x, y, "hs", ("u", 32))[0]) == (a >= b)
    assert one(cp.set_(x, y, "ne", ("b", 32), "u32")) == (0xFFFFFFFF if a != b else 0)
    p, q = cp.setp(x, y, "ge", ("s", 32), bool_op="xor", c=np.array([True]))
    assert bool(p[0]) == ((sa >= sb) ^ True) and bool(q[0]) == ((sa < sb) ^ True)
    assert one(cp.slct(A(1, 32), A(2, 32), y, "s32")) == (1 if sb >= 0 else 2)


def test_float_compare_unordered() -> None:
    nan, one_, mzero, zero = 0x7FC00000, 0x3F800000, 0x80000000, 0
    x = A(nan, 32)
    y = A(one_, 32)
    assert not cp.compare(x, y, "lt", F32)[0] and cp.compare(x, y, "ltu", F32)[0]
    assert cp.compare(x, y, "nan", F32)[0] and not cp.compare(x, y, "num", F32)[0]
    assert cp.compare(A(mzero, 32), A(zero, 32), "eq", F32)[0]
    assert one(cp.set_(y, y, "eq", F32, "f32")) == 0x3F800000
    sub = A(1, 32)
    assert cp.compare(sub, A(zero, 32), "eq", F32, ftz=True)[0]
    assert not cp.compare(sub, A(zero, 32), "eq", F32)[0]
    assert one(cp.slct(A(1, 32), A(2, 32), A(nan, 32), "f32")) == 2
    assert one(cp.slct(A(1, 32), A(2, 32), A(mzero, 32), "f32")) == 1
    with pytest.raises(io.IntOpError):
        cp.compare(x, y, "lo", ("s", 32))
