"""min/max, sign operations, testp and the .approx functions (within the manual's bounds)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sem_ref import arr, bits_strategy

from semantics import fspecial as fs
from semantics.formats import BF16, F16, F32, F64, FormatError, decode

NAN, ONE, MZERO, PZERO, MONE, INF = 0x7FC00000, 0x3F800000, 0x80000000, 0, 0xBF800000, 0x7F800000


def u32(*xs: int) -> np.ndarray:
    return arr(list(xs), np.uint32)


def test_min_max_rules() -> None:
    a = u32(MZERO, NAN, ONE, NAN, MONE)
    b = u32(PZERO, ONE, NAN, NAN, ONE)
    assert list(fs.fmin(a, b)) == [MZERO, ONE, ONE, 0x7FFFFFFF, MONE]
    assert list(fs.fmax(a, b)) == [PZERO, ONE, ONE, 0x7FFFFFFF, ONE]
    assert list(fs.fmax(a, b, nan=True)) == [PZERO, 0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFFF, ONE]
    assert list(fs.fmin(b, a)) == [MZERO, ONE, ONE, 0x7FFFFFFF, MONE]  # -0 < +0 in either order
    # .xorsign.abs: |.| picks magnitude, sign = xor of input signs
    assert list(fs.fmax(u32(MONE), u32(0x40000000), abs_=True, xorsign=True)) == [0xC0000000]
    assert list(fs.fmin(u32(MONE), u32(0xC0000000), abs_=True, xorsign=True)) == [ONE]
    # three inputs
    assert list(fs.fmax(u32(ONE), u32(NAN), c=u32(0x40000000))) == [0x40000000]
    assert list(fs.fmin(u32(0x00000001), u32(ONE), ftz=True)) == [0]
    with pytest.raises(FormatError):
        fs.fmax(u32(ONE), u32(ONE), c=u32(ONE), abs_=True, xorsign=True)
    h = arr([0xBC00, 0x7E00], np.uint16)
    assert list(fs.fmax(h, arr([0x3C00, 0x3C00], np.uint16), F16)) == [0x3C00, 0x3C00]
    d = arr([0x8000000000000000], np.uint64)
    assert list(fs.fmax(d, arr([0], np.uint64), F64)) == [0]


@settings(max_examples=200, deadline=None)
@given(a=bits_strategy("f32"), b=bits_strategy("f32"))
def test_min_max_against_python(a: int, b: int) -> None:
    x, y = float(decode(u32(a), F32)[0]), float(decode(u32(b), F32)[0])
    lo, hi = int(fs.fmin(u32(a), u32(b))[0]), int(fs.fmax(u32(a), u32(b))[0])
    if math.isnan(x) and math.isnan(y):
        assert lo == hi == 0x7FFFFFFF
    elif math.isnan(x) or math.isnan(y):
        other = b if math.isnan(x) else a
        assert lo == hi == other
    else:
        key = lambda v, bits: (v, bits >> 31 == 0)  # noqa: E731  (-0 sorts below +0)
        assert lo == min((a, b), key=lambda t: key(float(decode(u32(t), F32)[0]), t))
        assert hi == max((a, b), key=lambda t: key(float(decode(u32(t), F32)[0]), t))


def test_sign_ops_testp_copysign() -> None:
    x = u32(ONE, MONE, NAN, 0x00000001, INF, MZERO)
    assert list(fs.fabs(x)) == [ONE, ONE, 0x7FFFFFFF, 1, INF, 0]  # f32 NaN -> canonical (H200)
    assert list(fs.fneg(x)) == [MONE, ONE, 0x7FFFFFFF, 0x80000001, 0xFF800000, 0]
    d = np.array([0xFFF0000000000123, 0x3FF0000000000000], dtype=np.uint64)
    assert list(fs.fabs(d, F64)) == [0xFFF8000000000123, 0x3FF0000000000000]  # f64: quieted, sign kept
    assert list(fs.fneg(d, F64)) == [0xFFF8000000000123, 0xBFF0000000000000]
    assert list(fs.fneg(x, ftz=True))[3] == 0x80000000
    assert list(fs.copysign(u32(MZERO), u32(ONE))) == [MONE]
    tests = {op: list(fs.testp(x, op)) for op in fs.TESTP_OPS}
    assert tests["finite"] == [True, True, False, True, False, True]
    assert tests["infinite"] == [False, False, False, False, True, False]
    assert tests["notanumber"] == [False, False, True, False, False, False]
    assert tests["normal"] == [True, True, False, False, False, True]  # zero counts as normal
    assert tests["subnormal"] == [False, False, False, True, False, False]
    with pytest.raises(FormatError):
        fs.testp(x, "odd")


def ulps(got: int, exact: float) -> float:
    """Distance in f32 units in the last place of the exact value."""
    g = float(decode(u32(got), F32)[0])
    if g == exact:
        return 0.0
    ulp = 2.0 ** max(math.frexp(abs(exact))[1] - 24, -149) if exact else 2.0**-149
    return abs(g - exact) / ulp


@settings(max_examples=200, deadline=None)
@given(a=bits_strategy("f32"))
def test_approx_within_manual_bounds(a: int) -> None:
    x = float(decode(u32(a), F32)[0])
    if not math.isfinite(x):
        return
    if x > 2.0**-126:
        assert ulps(int(fs.approx("rcp", u32(a))[0]), 1 / x) <= 1
        r = float(decode(fs.approx("sqrt", u32(a)), F32)[0])
        assert abs(r - math.sqrt(x)) <= 2.0**-23 * math.sqrt(x)
        lg = float(decode(fs.approx("lg2", u32(a)), F32)[0])
        assert abs(lg - math.log2(x)) <= (2.0**-22 if 0.5 < x < 2 else 2.0**-22 * abs(math.log2(x)) + 1e-300)
    if abs(x) < 100:
        e = float(decode(fs.approx("ex2", u32(a)), F32)[0])
        assert ulps(int(fs.approx("ex2", u32(a))[0]), 2.0**x) <= 2 or e == 2.0**x
    if abs(x) <= 2 * math.pi:
        for fn, ref in (("sin", math.sin), ("cos", math.cos)):
            assert abs(float(decode(fs.approx(fn, u32(a)), F32)[0]) - ref(x)) <= 2.0**-20.5
    t = float(decode(fs.approx("tanh", u32(a)), F32)[0])
    assert abs(t - math.tanh(x)) <= 2.0**-11 * abs(math.tanh(x)) or t == x


def test_approx_special_tables() -> None:
    specials = u32(0xFF800000, MZERO, PZERO, INF, NAN)
    table = {
        "rcp": [0x80000000, 0xFF800000, INF, 0, 0x7FFFFFFF],
        "sqrt": [0x7FFFFFFF, MZERO, 0, INF, 0x7FFFFFFF],
        "rsqrt": [0x7FFFFFFF, 0xFF800000, INF, 0, 0x7FFFFFFF],
        "ex2": [0, ONE, ONE, INF, 0x7FFFFFFF],
        "lg2": [0x7FFFFFFF, 0xFF800000, 0xFF800000, INF, 0x7FFFFFFF],
        "sin": [0x7FFFFFFF, MZERO, 0, 0x7FFFFFFF, 0x7FFFFFFF],
        "cos": [0x7FFFFFFF, ONE, ONE, 0x7FFFFFFF, 0x7FFFFFFF],
        "tanh": [MONE, MZERO, 0, ONE, 0x7FFFFFFF],
    }
    for fn, want in table.items():
        assert list(fs.approx(fn, specials)) == want, fn
    assert int(fs.approx("tanh", u32(0x00000005))[0]) == 5  # subnormals pass through
    assert int(fs.approx("ex2", arr([0x3C00], np.uint16), F16)[0]) == 0x4000
    assert int(fs.approx("ex2", arr([0x3F80], np.uint16), BF16)[0]) == 0x4000
    assert set(fs.APPROX_BOUNDS) >= {f"{f}.approx.f32" for f in table}


def test_div_approx_full_and_f64_gross() -> None:
    assert int(fs.div_approx(u32(0x40400000), u32(0x40000000))[0]) == 0x3FC00000
    big = u32(0x7F000000)  # 2**127 > 2**126
    assert list(fs.div_approx(u32(ONE, INF, MONE), u32(0x7F000000, 0x7F000000, 0x7F000000))) == \
        [0, 0x7FFFFFFF, MZERO]
    assert int(fs.div_full(u32(ONE), big)[0]) == 0x00400000  # full range: 2**-127 (subnormal)
    d = arr([0x4000000000000000, 0x7FF8000000000001, 0x0000000000000001, 0x3FF0000012345678], np.uint64)
    assert list(fs.rcp_approx_ftz_f64(d)) == [0x3FE0000000000000, 0x7FFFFFFF00000000, 0x7FF0000000000000,
                                               0x3FF0000000000000]  # low word of a ignored
    assert int(fs.rsqrt_approx_ftz_f64(arr([0x4010000000000000], np.uint64))[0]) == 0x3FE0000000000000
