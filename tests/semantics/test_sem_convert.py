"""cvt: every family of conversions against Python / Fraction / torch oracles."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sem_ref import SHAPES, arr, bits_strategy, bits_value, ref_round

from semantics.convert import ConvertError, cvt, cvt_bf16x2_scaled, cvt_x2_f32, cvt_x2_from_x2
from semantics.formats import F32, decode

INTS = [f"{k}{w}" for k in "us" for w in (8, 16, 32, 64)]
FLOATS = ["f16", "bf16", "f32", "f64"]
DT = {"f64": np.uint64, "f32": np.uint32, "f16": np.uint16, "bf16": np.uint16}
IRND = {"rni": lambda v: round(v), "rzi": math.trunc, "rmi": math.floor, "rpi": math.ceil}


def irange(t: str) -> tuple[int, int]:
    w = int(t[1:])
    return (-(1 << (w - 1)), (1 << (w - 1)) - 1) if t[0] == "s" else (0, (1 << w) - 1)


@pytest.mark.parametrize("src", FLOATS)
@settings(max_examples=200, deadline=None)
@given(data=st.data(), dst=st.sampled_from(INTS), rnd=st.sampled_from(list(IRND)))
def test_float_to_int(src: str, data: st.DataObject, dst: str, rnd: str) -> None:
    a = data.draw(bits_strategy(src))
    got = int(cvt(arr([a], DT[src]), dst, src, rnd)[0])
    w = int(dst[1:])
    lo, hi = irange(dst)
    x = float(decode(arr([a], DT[src]), src)[0])
    if math.isnan(x):
        want = (1 << (w - 1)) if (src == "f64" or w == 64) else 0
    elif math.isinf(x):
        want = (hi if x > 0 else lo) & ((1 << w) - 1)
    else:
        v = IRND[rnd](Fraction(x))  # Python round() on a Fraction is round-half-even
        want = min(max(v, lo), hi) & ((1 << w) - 1)
    assert got == want, (src, dst, rnd, hex(a), got, want)


@pytest.mark.parametrize("dst", FLOATS)
@settings(max_examples=150, deadline=None)
@given(data=st.data(), src=st.sampled_from(INTS), rnd=st.sampled_from(["rn", "rz", "rm", "rp"]))
def test_int_to_float(dst: str, data: st.DataObject, src: str, rnd: str) -> None:
    w = int(src[1:])
    a = data.draw(st.one_of(st.integers(0, (1 << w) - 1), st.sampled_from([0, 1, (1 << w) - 1, 1 << (w - 1),
                                                                          (1 << (w - 1)) - 1, (1 << 53) + 1 & ((1 << w) - 1)])))
    got = int(cvt(np.array([a], dtype=np.uint64), dst, src, rnd)[0])
    v = a - (1 << w) if (src[0] == "s" and a >> (w - 1)) else a
    want, over = ref_round(Fraction(v), dst, rnd)
    if over:
        want += 1  # infinity
    assert got == want, (src, dst, rnd, a, hex(got), hex(want))


@settings(max_examples=300, deadline=None)
@given(data=st.data(), pair=st.sampled_from([(d, s) for d in FLOATS + ["tf32", "e4m3", "e5m2", "e2m1", "e2m3", "e3m2"]
                                            for s in FLOATS if d != s]),
       rnd=st.sampled_from(["rn", "rz", "rm", "rp"]))
def test_float_to_float(data: st.DataObject, pair: tuple[str, str], rnd: str) -> None:
    dst, src = pair
    a = data.draw(bits_strategy(src))
    narrowing = SHAPES[dst][1] < SHAPES[src][1] or SHAPES[dst][0] < SHAPES[src][0]
    fp8 = dst in ("e4m3", "e5m2", "e2m1", "e2m3", "e3m2")
    if dst == "tf32" and src != "f32":
        with pytest.raises(ConvertError):
            cvt(arr([a], DT[src]), dst, src, "rn")
        return
    if dst == "tf32" and rnd in ("rm", "rp"):
        rnd = "rz"
    if not narrowing:
        out = cvt(arr([a], DT[src]), dst, src)
        with pytest.raises(ConvertError):
            cvt(arr([a], DT[src]), dst, src, "rn")
        x, y = decode(arr([a], DT[src]), src)[0], decode(out, dst)[0]
        assert (math.isnan(x) and math.isnan(y)) or x == y and math.copysign(1, x) == math.copysign(1, y)
        return
    satfinite = fp8
    got = int(cvt(arr([a], DT[src]), dst, src, rnd, satfinite=satfinite)[0])
    shift = 13 if dst == "tf32" else 0
    v = bits_value(src, a)
    x = float(decode(arr([a], DT[src]), src)[0])
    eb, mb = SHAPES[dst]
    if v is None:
        if math.isnan(x):
            y = float(decode(np.array([got]), dst)[0])
            if dst == "tf32" and rnd == "rna":  # sm_90 integer rounding: low-payload NaNs become inf
                return
            assert math.isnan(y) or (dst in ("e2m1", "e2m3", "e3m2") and got == (1 << (eb + mb)) - 1)
        else:
            y = float(decode(np.array([got]), dst)[0])
            assert y == x or (satfinite and abs(y) < math.inf and math.copysign(1, y) == math.copysign(1, x))
        return
    want, over = ref_round(v, dst, rnd, neg_zero=a >> (1 + sum(SHAPES[src]) - 1) & 1 == 1)
    if over and not satfinite:
        want += 1  # IEEE infinity
    assert got >> shift == want, (dst, src, rnd, hex(a), hex(got), hex(want))


def test_int_to_int() -> None:
    x = np.array([0xFFFFFF80, 200, 0x12345678], dtype=np.uint32)
    assert list(cvt(x, "s8", "u32")) == [0x80, 200, 0x78]
    assert list(cvt(x, "s8", "u32", sat=True)) == [127, 127, 127]
    assert list(cvt(x, "s8", "s32", sat=True)) == [0x80, 127, 127]
    assert list(cvt(x, "u8", "s32", sat=True)) == [0, 200, 255]
    assert list(cvt(x, "s64", "s32")) == [0xFFFFFFFFFFFFFF80, 200, 0x12345678]
    assert list(cvt(x, "u64", "s8")) == [0xFFFFFFFFFFFFFF80, 0xFFFFFFFFFFFFFFC8, 0x78]
    big = np.array([2**64 - 1, 2**63], dtype=np.uint64)
    assert list(cvt(big, "s64", "u64", sat=True)) == [2**63 - 1, 2**63 - 1]
    assert list(cvt(big, "u32", "s64", sat=True)) == [0, 0]
    with pytest.raises(ConvertError):
        cvt(x, "s8", "u32", "rn")


def test_float_integer_rounding_and_modifiers() -> None:
    x = arr([0x3FC00000, 0xBF000000, 0x40200000, 0x00000001, 0x7FC00000], np.uint32)  # 1.5 -0.5 2.5 tiny NaN
    assert list(cvt(x, "f32", "f32", "rni")) == [0x40000000, 0x80000000, 0x40000000, 0, 0x7FFFFFFF]
    assert list(cvt(x, "f32", "f32", "rpi")) == [0x40000000, 0x80000000, 0x40400000, 0x3F800000, 0x7FFFFFFF]
    assert int(cvt(x, "f32", "f32", "rpi", ftz=True)[3]) == 0
    assert list(cvt(x, "s32", "f32", "rpi", ftz=True))[3] == 0
    assert list(cvt(x, "s32", "f32", "rpi"))[3] == 1
    assert list(cvt(x, "f16", "f32", "rn", sat=True)) == [0x3C00, 0, 0x3C00, 0, 0]
    assert list(cvt(x, "f16", "f32", "rn", relu_=True)) == [0x3E00, 0, 0x4100, 0, 0x7FFF]
    f = arr([0x477FF000, 0x7F800000, 0xC7800000], np.uint32)  # 65520, inf, -65536
    assert list(cvt(f, "f16", "f32", "rn")) == [0x7C00, 0x7C00, 0xFC00]
    assert list(cvt(f, "f16", "f32", "rn", satfinite=True)) == [0x7BFF, 0x7BFF, 0xFBFF]
    assert list(cvt(f, "f16", "f32", "rz")) == [0x7BFF, 0x7C00, 0xFBFF]
    t = arr([0x3F801000, 0x3F803000, 0x3F802FFF], np.uint32)
    assert list(cvt(t, "tf32", "f32", "rna")) == [0x3F802000, 0x3F804000, 0x3F802000]
    assert list(cvt(t, "tf32", "f32", "rn")) == [0x3F800000, 0x3F804000, 0x3F802000]
    with pytest.raises(ConvertError):
        cvt(x, "f16", "f32")  # rounding is mandatory when narrowing
    with pytest.raises(ConvertError):
        cvt(x, "s32", "f32", "rn")
    with pytest.raises(ConvertError):
        cvt(x, "f64", "f16", ftz=True)


def test_packed_conversions() -> None:
    torch = pytest.importorskip("torch")
    a = arr([0x3F800000, 0x43E80000], np.uint32)  # 1.0, 464
    b = arr([0xC0000000, 0x7F800000], np.uint32)  # -2.0, inf
    d = cvt_x2_f32(a, b, "f16x2", "rn")
    assert list(d) == [(0x3C00 << 16) | 0xC000, (0x5F40 << 16) | 0x7C00]  # a in the upper half
    d8 = cvt_x2_f32(a, b, "e4m3x2", "rn", satfinite=True)
    ta = torch.from_numpy(a.view(np.float32)).to(torch.float8_e4m3fn).view(torch.uint8).numpy()
    tb = torch.from_numpy(b.view(np.float32)).to(torch.float8_e4m3fn).view(torch.uint8).numpy()
    assert list(d8) == [(int(x) << 8) | int(y) for x, y in zip(ta, tb)]
    with pytest.raises(ConvertError):
        cvt_x2_f32(a, b, "e4m3x2", "rn")  # .satfinite is mandatory
    back = cvt_x2_from_x2(d8, "f16x2", "e4m3x2")
    assert list(back) == [(0x3C00 << 16) | 0xC000, (0x5F00 << 16) | 0x5F00]
    e5 = cvt_x2_from_x2(np.array([0x7F3C], dtype=np.uint16), "f16x2", "e5m2x2")
    assert int(e5[0]) == (0x7FFF << 16) | 0x3C00  # e5m2 NaN -> canonical f16 NaN (H200)
    h = np.array([(0x3C00 << 16) | 0x5F40], dtype=np.uint32)  # f16x2 {1.0, 464}
    assert int(cvt_x2_from_x2(h, "e4m3x2", "f16x2", satfinite=True)[0]) == (0x38 << 8) | 0x7E
    assert int(cvt_x2_f32(a, b, "bf16x2", "rz")[0]) == (0x3F80 << 16) | 0xC000
    f4 = cvt_x2_f32(arr([0x40400000], np.uint32), arr([0xBF400000], np.uint32), "e2m1x2", "rn", satfinite=True)
    assert int(f4[0]) == (0x5 << 4) | 0xA  # 3.0 -> 0b0101; -0.75 -> -1.0 (tie to even) = 0b1010
    f6 = cvt_x2_f32(arr([0x40F00000], np.uint32), arr([0x7FC00000], np.uint32), "e2m3x2", "rn", satfinite=True)
    assert int(f6[0]) == (0x1F << 8) | 0x1F  # 7.5 is max; NaN -> +MAX_NORM
    sc = cvt_bf16x2_scaled(np.array([0x3840], dtype=np.uint16), "e4m3x2", np.array([0x8180], dtype=np.uint16))
    assert int(sc[0]) == (0x4080 << 16) | 0x4080  # upper 1.0 * 2**2, lower 2.0 * 2**1: both 4.0


def test_f32_cvt_rn_matches_numpy_f16() -> None:
    rng = np.random.default_rng(5)
    bits = rng.integers(0, 2**32, 30000, dtype=np.uint64).astype(np.uint32)
    with np.errstate(all="ignore"):
        ref = bits.view(np.float32).astype(np.float16)
    got = cvt(bits, "f16", "f32", "rn")
    ok = ~np.isnan(ref)
    assert np.array_equal(got[ok], ref.view(np.uint16)[ok])
    back = cvt(got, "f32", "f16")
    assert np.array_equal(back[ok], ref[ok].astype(np.float32).view(np.uint32))
    assert F32.canonical_nan == 0x7FFFFFFF


def test_f32_to_bf16_tf32_bulk() -> None:
    """The integer fast path for f32 -> bf16/tf32 agrees with torch and the generic rounding."""
    torch = pytest.importorskip("torch")
    from semantics.formats import BF16, TF32, round_f64

    rng = np.random.default_rng(9)
    bits = rng.integers(0, 2**32, 40000, dtype=np.uint64).astype(np.uint32)
    bits[:6] = [0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0x00000001, 0x3F808000, 0x3F818000]
    with np.errstate(invalid="ignore"):
        x = decode(bits, F32)
    ok = ~np.isnan(x)
    ref = torch.from_numpy(bits.view(np.float32)).to(torch.bfloat16).view(torch.int16).numpy().astype(np.uint16)
    assert np.array_equal(cvt(bits, "bf16", "f32", "rn")[ok], ref[ok])
    for fmt in (BF16, TF32):
        for r in ("rn", "rna", "rz"):
            if fmt is BF16 and r == "rna":
                continue
            assert np.array_equal(cvt(bits, fmt.name, "f32", r)[ok], round_f64(x, fmt, r)[ok]), (fmt.name, r)


def test_ue8m0_pairs() -> None:
    from semantics.convert import cvt_bf16x2_from_ue8m0x2, cvt_ue8m0x2

    a = arr([0x3F800000, 0x40400000], np.uint32)  # 1.0, 3.0
    b = arr([0x7FC00000, 0x00000001], np.uint32)  # NaN, 2**-149
    assert list(cvt_ue8m0x2(a, b, "f32", "rp")) == [(127 << 8) | 0xFF, (129 << 8) | 0]
    assert list(cvt_ue8m0x2(np.array([0x3F804040], dtype=np.uint32), None, "bf16x2", "rz")) == [(127 << 8) | 128]
    out = cvt_bf16x2_from_ue8m0x2(np.array([(127 << 8) | 0], dtype=np.uint16))
    assert int(out[0]) == (0x3F80 << 16) | 0x0040  # 1.0 and 2**-127 (a bf16 subnormal)
    with pytest.raises(ConvertError):
        cvt_ue8m0x2(a, None, "f32", "rz")


def test_nan_conversions_measured_on_h200() -> None:
    f32 = arr([0x7F800001, 0xFFC00001], np.uint32)
    assert list(cvt(f32, "f64", "f32")) == [0x7FF8000020000000, 0xFFF8000020000000]
    assert list(cvt(f32, "f16", "f32", "rn")) == [0x7FFF, 0x7FFF]
    f64 = arr([0x7FF400318ABB5B87, 0xFFF8000000000123], np.uint64)
    assert list(cvt(f64, "f32", "f64", "rz")) == [0x7FE0018C, 0xFFC00000]
    assert list(cvt(f64, "f16", "f64", "rn")) == [0x7E00, 0xFE00]
    assert list(cvt(f64, "bf16", "f64", "rn")) == [0x7FC0, 0xFFC0]
    assert list(cvt(f64, "f64", "f64", "rzi")) == [0x7FFC00318ABB5B87, 0xFFF8000000000123]
    assert list(cvt(arr([0x7F81], np.uint16), "f32", "bf16")) == [0x7F810000]
    assert list(cvt(arr([0x7C01], np.uint16), "f64", "f16")) == [0x7FF8040000000000]
    assert list(cvt(arr([0x7C01], np.uint16), "f32", "f16")) == [0x7FFFFFFF]
    t = arr([0x7FC00000, 0x7F800001, 0xFFC00001, 0x7F800000, 0x7F7FF000], np.uint32)
    assert list(cvt(t, "tf32", "f32", "rna")) == [0x7FC00000, 0x7F800000, 0xFFC00000, 0x7F800000, 0x7F800000]
    assert list(cvt(t, "tf32", "f32", "rna", satfinite=True)) == [0x7FBFE000, 0x7F7FE000, 0xFFBFE000, 0x7F7FE000,
                                                                   0x7F7FE000]
    # .ftz does not flush the f32 source of a conversion to f16 (H200)
    assert int(cvt(arr([0x007FFFFF], np.uint32), "f16", "f32", "rp", ftz=True)[0]) == 1


def test_register_widening() -> None:
    from semantics.convert import to_register

    r = cvt(arr([0xBF800000, 0x42FE0000], np.uint32), "s8", "f32", "rni")
    assert list(to_register(r, "s8", 16)) == [0xFFFF, 0x7F]
    assert list(to_register(cvt(arr([300], np.uint32), "u8", "u32", sat=True), "u8", 32)) == [255]
    with pytest.raises(ConvertError):
        to_register(r, "s32", 16)
