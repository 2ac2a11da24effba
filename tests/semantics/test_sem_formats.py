"""Number formats: exhaustive decodes against numpy/torch, rounding against the reference."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sem_ref import SHAPES, bits_value, largest_finite, magnitude, ref_round

from semantics import formats as fm

NARROW = ["f32", "f16", "bf16", "tf32", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1"]
MODES = ("rn", "rna", "rz", "rm", "rp")


def test_decode_exhaustive_f16_bf16_fp8() -> None:
    torch = pytest.importorskip("torch")
    allh = np.arange(1 << 16, dtype=np.uint16)
    ref = allh.view(np.float16).astype(np.float64)
    got = fm.decode(allh, fm.F16)
    assert np.array_equal(np.isnan(got), np.isnan(ref)) and np.array_equal(got[~np.isnan(ref)], ref[~np.isnan(ref)])
    tb = torch.from_numpy(allh.astype(np.int16)).view(torch.bfloat16).to(torch.float64).numpy()
    got = fm.decode(allh, fm.BF16)
    assert np.array_equal(np.isnan(got), np.isnan(tb)) and np.array_equal(got[~np.isnan(tb)], tb[~np.isnan(tb)])
    all8 = np.arange(256, dtype=np.uint8)
    for fmt, tdt in ((fm.E4M3, torch.float8_e4m3fn), (fm.E5M2, torch.float8_e5m2)):
        ref = torch.from_numpy(all8).view(tdt).to(torch.float64).numpy()
        got = fm.decode(all8, fmt)
        nan = np.isnan(ref)
        assert np.array_equal(np.isnan(got), nan) and np.array_equal(got[~nan], ref[~nan]), fmt.name
    assert int(np.isnan(fm.decode(all8, fm.E4M3)).sum()) == 2  # only 0x7F and 0xFF


def test_decode_matches_reference_for_small_formats() -> None:
    for name in ("e2m1", "e2m3", "e3m2", "e4m3", "e5m2"):
        fmt = fm.get_format(name)
        width = 1 + sum(SHAPES[name])
        for bits in range(1 << width):
            v = bits_value(name, bits)
            got = float(fm.decode(np.array([bits]), fmt)[0])
            if v is not None:
                assert got == float(v), (name, bits)
    assert [float(x) for x in fm.decode(np.array([0x7, 0xF, 0x1]), fm.E2M1)] == [6.0, -6.0, 0.5]
    assert fm.E4M3.max_value == 448.0 and fm.E5M2.max_value == 57344.0 and fm.E2M3.max_value == 7.5


@st.composite
def near_grid(draw: st.DrawFn, name: str) -> float:
    """A value on, between, or just beside the representable points of ``name``."""
    top = largest_finite(name)
    m = draw(st.integers(0, top))
    lo, hi = magnitude(name, m), magnitude(name, m + 1)
    frac = draw(st.sampled_from([Fraction(0), Fraction(1, 4), Fraction(1, 2), Fraction(3, 4)]))
    x = lo + frac * (hi - lo)
    nudge = draw(st.sampled_from([0, 1, -1]))
    xf = float(x)
    if nudge:
        xf = float(np.nextafter(xf, np.inf if nudge > 0 else -np.inf))
    return -xf if draw(st.booleans()) else xf


@pytest.mark.parametrize("name", NARROW)
@settings(max_examples=150, deadline=None)
@given(data=st.data(), rnd=st.sampled_from(MODES))
def test_round_f64_against_reference(name: str, data: st.DataObject, rnd: str) -> None:
    x = data.draw(st.one_of(near_grid(name), st.floats(allow_nan=False, allow_infinity=False, width=64)))
    fmt = fm.get_format(name)
    got = int(fm.round_f64(np.array([x]), fmt, rnd, satfinite=True)[0]) >> fmt.shift
    want, over = ref_round(Fraction(x), name, rnd, neg_zero=np.signbit(x))
    if over:
        want = (want & (1 << sum(SHAPES[name]))) | largest_finite(name)  # satfinite clamps
    assert got == want, (name, rnd, x, hex(got), hex(want))
    assert fm.round_fraction(Fraction(x), fmt, rnd, negative_zero=bool(np.signbit(x)), satfinite=True) \
        >> fmt.shift == want


@pytest.mark.parametrize("name", ["f32", "bf16", "f16", "e4m3"])
@settings(max_examples=150, deadline=None)
@given(data=st.data(), rnd=st.sampled_from(MODES))
def test_to_odd_pairs_round_like_exact_sums(name: str, data: st.DataObject, rnd: str) -> None:
    a = data.draw(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e30, max_value=1e30))
    b = data.draw(st.one_of(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e30, max_value=1e30),
                            st.sampled_from([1e-30, -1e-300, 2.0**-60, 0.0])))
    hi, lo = fm.two_sum(np.array([a]), np.array([b]))
    assert Fraction(float(hi[0])) + Fraction(float(lo[0])) == Fraction(a) + Fraction(b)
    exact = Fraction(a) + Fraction(b)
    if exact == 0:
        return
    fmt = fm.get_format(name)
    got = int(fm.round_f64(fm.to_odd(hi, lo), fmt, rnd, satfinite=True)[0]) >> fmt.shift
    want, over = ref_round(exact, name, rnd)
    if over:
        want = (want & (1 << sum(SHAPES[name]))) | largest_finite(name)
    assert got == want


def test_overflow_nan_ftz_rules() -> None:
    big = np.array([1e300, -1e300, np.inf, np.nan, 500.0])
    assert list(fm.round_f64(big, fm.F16, "rn")) == [0x7C00, 0xFC00, 0x7C00, 0x7FFF, 0x5FD0]
    assert list(fm.round_f64(big, fm.F16, "rz")) == [0x7BFF, 0xFBFF, 0x7C00, 0x7FFF, 0x5FD0]
    assert list(fm.round_f64(big, fm.F16, "rp")) == [0x7C00, 0xFBFF, 0x7C00, 0x7FFF, 0x5FD0]
    assert list(fm.round_f64(big, fm.F16, "rn", satfinite=True)) == [0x7BFF, 0xFBFF, 0x7BFF, 0x7FFF, 0x5FD0]
    assert list(fm.round_f64(big, fm.E4M3, "rn")) == [0x7F, 0xFF, 0x7F, 0x7F, 0x7F]
    assert list(fm.round_f64(big, fm.E4M3, "rn", satfinite=True)) == [0x7E, 0xFE, 0x7E, 0x7F, 0x7E]
    assert list(fm.round_f64(big, fm.E2M1, "rn", satfinite=True)) == [0x7, 0xF, 0x7, 0x7, 0x7]
    tiny = np.array([2.0**-140, -(2.0**-140), 2.0**-126])
    assert list(fm.round_f64(tiny, fm.F32, "rn", ftz=True)) == [0, 0x80000000, 0x00800000]
    assert list(fm.round_f64(tiny, fm.TF32, "rz")) == [0, 0x80000000, 0x00800000]  # below 2**-136
    assert list(fm.round_f64(tiny, fm.TF32, "rp")) == [0x00002000, 0x80000000, 0x00800000]
    assert int(fm.canonical_nan(fm.F32)) == 0x7FFFFFFF
    assert list(fm.flush_subnormal(np.array([1, 0x80000001, 0x00800000], dtype=np.uint32), fm.F32)) == \
        [0, 0x80000000, 0x00800000]
    with pytest.raises(fm.FormatError):
        fm.round_f64(big, fm.F32, "rx")
    with pytest.raises(fm.FormatError):
        fm.get_format("f128")


def test_torch_conversions_agree() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    bits = rng.integers(0, 2**32, 50000, dtype=np.uint64).astype(np.uint32)
    bits[:4] = [0x7F800000, 0xFF800000, 0x43E80000, 0x47700000]  # inf, -inf, 464, 61440
    x = bits.view(np.float32)
    with np.errstate(invalid="ignore"):  # signalling NaNs
        scaled = (x.astype(np.float64) * 2.0**-100).astype(np.float32)  # bring many into fp8 range
        t = torch.from_numpy(np.concatenate([x, scaled]))
        vals = t.numpy().astype(np.float64)
    ok = ~np.isnan(vals)
    for fmt, tdt, kw in ((fm.BF16, torch.bfloat16, {}), (fm.F16, torch.float16, {}),
                         (fm.E4M3, torch.float8_e4m3fn, {"satfinite": True}), (fm.E5M2, torch.float8_e5m2, {})):
        ref = t.to(tdt).view(torch.int16 if fmt.bits == 16 else torch.uint8).numpy().astype(np.uint64)
        got = fm.round_f64(vals, fmt, "rn", **kw).astype(np.uint64) & np.uint64((1 << fmt.bits) - 1)
        assert np.array_equal(got[ok], ref[ok] & np.uint64((1 << fmt.bits) - 1)), fmt.name


def test_ue8m0() -> None:
    torch = pytest.importorskip("torch")
    all8 = np.arange(256, dtype=np.uint8)
    ref = torch.from_numpy(all8).view(torch.float8_e8m0fnu).to(torch.float64).numpy()
    got = fm.decode_ue8m0(all8)
    assert np.array_equal(np.isnan(got), np.isnan(ref)) and np.array_equal(got[:255], ref[:255])
    x = np.array([1.0, 1.5, 3.0, 2.0**-130, 0.0, 2.0**130, np.nan, 2.0**127])
    assert list(fm.encode_ue8m0(x, "rz")) == [127, 127, 128, 0, 0, 0xFF, 0xFF, 254]
    assert list(fm.encode_ue8m0(x, "rp", satfinite=True)) == [127, 128, 129, 0, 0, 0xFE, 0xFF, 254]
    with pytest.raises(fm.FormatError):
        fm.encode_ue8m0(x, "rn")
