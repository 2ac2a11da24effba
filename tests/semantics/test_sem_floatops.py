"""Floating-point arithmetic against exact rational arithmetic and numpy/torch oracles."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sem_ref import SHAPES, arr, bits_strategy, bits_value, largest_finite, ref_round

from semantics import floatops as fo
from semantics.formats import BF16, F16, F32, F64, FormatError, get_format

MODES = ("rn", "rz", "rm", "rp")
DT = {"f64": np.uint64, "f32": np.uint32, "f16": np.uint16, "bf16": np.uint16}


def _sign(name: str, bits: int) -> int:
    eb, mb = SHAPES[name]
    return bits >> (eb + mb) & 1


def _flush(name: str, bits: int) -> int:
    eb, mb = SHAPES[name]
    mag = bits & ((1 << (eb + mb)) - 1)
    return bits & (1 << (eb + mb)) if 0 < mag < (1 << mb) else bits


def expect(name: str, exact: Fraction, rnd: str, zero_neg: bool, ftz: bool) -> int:
    eb, mb = SHAPES[name]
    bits, over = ref_round(exact, name, rnd, zero_neg)
    if over:
        bits += 1  # largest finite + 1 = the infinity pattern
    if ftz and is_tiny(exact, eb, mb, rnd):
        return bits & (1 << (eb + mb))
    return bits


def is_tiny(exact: Fraction, eb: int, mb: int, rnd: str) -> bool:
    """IEEE tininess after rounding to mb+1 bits with an unbounded exponent (the H200's .ftz)."""
    emin = 2 - (1 << (eb - 1))
    ax = abs(exact)
    if ax == 0 or ax >= Fraction(2) ** emin:
        return False
    e = emin - 1
    while ax < Fraction(2) ** e:
        e -= 1
    ulp = Fraction(2) ** (e - mb)  # ax in [2**e, 2**(e+1)): round to a multiple of ulp
    lo = (ax // ulp) * ulp
    if lo == ax:
        r = lo
    elif rnd == "rz" or (rnd == "rm" and exact > 0) or (rnd == "rp" and exact < 0):
        r = lo
    elif rnd in ("rm", "rp"):
        r = lo + ulp
    else:
        d = ax - lo
        r = lo + ulp if d > ulp / 2 or (d == ulp / 2 and (lo / ulp) % 2 == 1) else lo
    return r < Fraction(2) ** emin


def check_nan(name: str, out: int) -> bool:
    eb, mb = SHAPES[name]
    mag = out & ((1 << (eb + mb)) - 1)
    return mag > ((1 << eb) - 1) << mb


def run_binary(op: str, name: str, a: int, b: int, c: int | None, rnd: str, ftz: bool) -> None:
    fmt = get_format(name)
    dt = DT[name]
    if ftz:
        a, b = _flush(name, a), _flush(name, b)
        c = _flush(name, c) if c is not None else None
    va, vb = bits_value(name, a), bits_value(name, b)
    vc = bits_value(name, c) if c is not None else Fraction(0)
    sa, sb = _sign(name, a), _sign(name, b)
    sc = _sign(name, c) if c is not None else 0
    if op == "fma":
        got = int(fo.fma(arr([a], dt), arr([b], dt), arr([c], dt), fmt, rnd, ftz=ftz)[0])
    else:
        got = int(getattr(fo, op)(arr([a], dt), arr([b], dt), fmt, rnd, ftz=ftz)[0])
    if va is None or vb is None or vc is None:  # a NaN or inf operand: compare with IEEE floats
        fa, fb = float(fo.decode(arr([a], dt), fmt)[0]), float(fo.decode(arr([b], dt), fmt)[0])
        fc = float(fo.decode(arr([c], dt), fmt)[0]) if c is not None else 0.0
        with np.errstate(all="ignore"):
            ref = {"add": np.add(fa, fb), "sub": np.subtract(fa, fb), "mul": np.multiply(fa, fb),
                   "div": np.divide(fa, fb), "fma": np.add(np.multiply(fa, fb), fc)}[op]
        if math.isnan(ref):
            assert check_nan(name, got), hex(got)
        else:
            assert float(fo.decode(arr([got], dt), fmt)[0]) == ref
        return
    if op == "div" and vb == 0:
        if va == 0:
            assert check_nan(name, got)
        else:
            assert got == expect(name, Fraction(0), rnd, False, False) | (
                ((sa ^ sb) << (fmt.bits - 1)) | (largest_finite(name) + 1))
        return
    if op == "add":
        exact, zero_neg = va + vb, (sa | sb) if rnd == "rm" else (sa & sb)
    elif op == "sub":
        exact, zero_neg = va - vb, (sa | (1 - sb)) if rnd == "rm" else (sa & (1 - sb))
    elif op == "mul":
        exact, zero_neg = va * vb, sa ^ sb
    elif op == "div":
        exact, zero_neg = va / vb, sa ^ sb
    else:
        sp = sa ^ sb
        exact = va * vb + vc
        zero_neg = (sp | sc) if rnd == "rm" else (sp & sc)
        if va * vb != 0 or vc != 0:
            zero_neg = rnd == "rm"
    if op in ("add", "sub") and exact == 0 and (va != 0 or vb != 0):
        zero_neg = rnd == "rm"
    want = expect(name, exact, rnd, bool(zero_neg), ftz)
    assert got == want, (op, name, rnd, hex(a), hex(b), hex(c or 0), hex(got), hex(want))


@pytest.mark.parametrize("name", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("op", ["add", "sub", "mul"])
@settings(max_examples=150, deadline=None)
@given(data=st.data(), rnd=st.sampled_from(MODES), ftz=st.booleans())
def test_narrow_binary_exact(name: str, op: str, data: st.DataObject, rnd: str, ftz: bool) -> None:
    a, b = data.draw(bits_strategy(name)), data.draw(bits_strategy(name))
    run_binary(op, name, a, b, None, rnd, ftz)


@pytest.mark.parametrize("name", ["f32", "f16", "bf16"])
@settings(max_examples=250, deadline=None)
@given(data=st.data(), rnd=st.sampled_from(MODES), ftz=st.booleans())
def test_narrow_fma_exact(name: str, data: st.DataObject, rnd: str, ftz: bool) -> None:
    a, b, c = (data.draw(bits_strategy(name)) for _ in range(3))
    run_binary("fma", name, a, b, c, rnd, ftz)


@settings(max_examples=300, deadline=None)
@given(a=bits_strategy("f32"), b=bits_strategy("f32"), rnd=st.sampled_from(MODES), ftz=st.booleans())
def test_f32_div_exact(a: int, b: int, rnd: str, ftz: bool) -> None:
    run_binary("div", "f32", a, b, None, rnd, ftz)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "fma"])
@settings(max_examples=60, deadline=None)
@given(data=st.data(), rnd=st.sampled_from(MODES))
def test_f64_exact(op: str, data: st.DataObject, rnd: str) -> None:
    a, b, c = (data.draw(bits_strategy("f64")) for _ in range(3))
    run_binary(op, "f64", a, b, c if op == "fma" else None, rnd, False)


def test_f64_fma_cancellation_and_tiny() -> None:
    one = 0x3FF0000000000000
    eps = 0x3CB0000000000000  # 2**-52
    a = arr([one + 1, 1, one], np.uint64)
    b = arr([one + 1, 1, one], np.uint64)
    c = arr([0xBFF0000000000000 | 2, 0, 0x8000000000000000 | eps], np.uint64)
    for rnd in MODES:
        out = fo.fma(a, b, c, F64, rnd)
        exact0 = (Fraction(1) + Fraction(1, 2**52)) ** 2 - (1 + Fraction(2, 2**52))
        assert int(out[0]) == ref_round(exact0, "f64", rnd)[0]
        assert int(out[1]) == (1 if rnd == "rp" else 0)  # 2**-2148 + 0
        assert int(out[2]) == ref_round(1 - Fraction(1, 2**52), "f64", rnd)[0]


@settings(max_examples=150, deadline=None)
@given(a=bits_strategy("f32"), rnd=st.sampled_from(MODES), ftz=st.booleans())
def test_f32_sqrt_directed(a: int, rnd: str, ftz: bool) -> None:
    if ftz:
        a = _flush("f32", a)
    got = int(fo.sqrt(arr([a], np.uint32), F32, rnd, ftz=ftz)[0])
    v = bits_value("f32", a)
    if v is None or v < 0:
        x = float(fo.decode(arr([a], np.uint32), F32)[0])
        if math.isnan(x) or x < 0:
            assert check_nan("f32", got)
        else:
            assert got == 0x7F800000
        return
    if v == 0:
        assert got == a
        return
    # bracket sqrt(v) by its two f32 neighbours: the correct result r satisfies the mode's rule
    r = bits_value("f32", got)
    assert r is not None and r > 0
    nxt = bits_value("f32", got + 1) or Fraction(2) ** 128
    prv = bits_value("f32", got - 1)
    if rnd == "rz" or rnd == "rm":
        assert r * r <= v < nxt * nxt
    elif rnd == "rp":
        assert prv * prv < v <= r * r
    else:
        lo_mid, hi_mid = (prv + r) / 2, (r + nxt) / 2
        assert lo_mid * lo_mid <= v <= hi_mid * hi_mid


def test_f64_sqrt_directed() -> None:
    xs = arr([0x4000000000000000, 0x4008000000000000, 0x0000000000000003, 0x7FEFFFFFFFFFFFFF], np.uint64)
    rn = fo.sqrt(xs, F64, "rn")
    assert np.array_equal(rn, np.sqrt(xs.view(np.float64)).view(np.uint64))
    up, down = fo.sqrt(xs, F64, "rp"), fo.sqrt(xs, F64, "rz")
    assert np.all(up.astype(np.int64) - down.astype(np.int64) == 1)  # none of these is a perfect square
    assert int(fo.sqrt(arr([0x4010000000000000], np.uint64), F64, "rp")[0]) == 0x4000000000000000


def test_f32_rn_matches_numpy_bulk() -> None:
    rng = np.random.default_rng(7)
    a = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32)
    fa, fb = a.view(np.float32), b.view(np.float32)
    with np.errstate(all="ignore"):
        refs = {"add": fa + fb, "sub": fa - fb, "mul": fa * fb, "div": fa / fb}
    for op, ref in refs.items():
        got = getattr(fo, op)(a, b, F32, "rn")
        nan = np.isnan(ref)
        assert np.array_equal(got[~nan], ref.view(np.uint32)[~nan]), op
        assert np.all(got[nan] == F32.canonical_nan), op
    with np.errstate(all="ignore"):
        ref = np.sqrt(fa)
    got = fo.sqrt(a, F32, "rn")
    ok = ~np.isnan(ref)
    assert np.array_equal(got[ok], ref.view(np.uint32)[ok])


def test_f16_bf16_rn_match_numpy_torch_exhaustive_pairs() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    a = rng.integers(0, 2**16, 30000, dtype=np.uint64).astype(np.uint16)
    b = rng.integers(0, 2**16, 30000, dtype=np.uint64).astype(np.uint16)
    fa, fb = a.view(np.float16), b.view(np.float16)
    with np.errstate(all="ignore"):
        for op, ref in (("add", fa + fb), ("mul", fa * fb)):
            got = getattr(fo, op)(a, b, F16)
            ok = ~np.isnan(ref)
            assert np.array_equal(got[ok], ref.view(np.uint16)[ok])
    ta = torch.from_numpy(a.astype(np.int16)).view(torch.bfloat16)
    tb = torch.from_numpy(b.astype(np.int16)).view(torch.bfloat16)
    for op, ref in (("add", ta + tb), ("mul", ta * tb)):
        refb = ref.view(torch.int16).numpy().astype(np.uint16)
        got = getattr(fo, op)(a, b, BF16)
        ok = ~torch.isnan(ref).numpy()
        assert np.array_equal(got[ok], refb[ok]), op


def test_sat_and_nan_rules() -> None:
    a = arr([0x3FC00000, 0xBF800000, 0x7FC00000, 0x3F000000, 0x80000000], np.uint32)
    z = arr([0, 0, 0, 0, 0x80000000], np.uint32)
    out = fo.add(a, z, F32, "rn", sat=True)
    assert list(out) == [0x3F800000, 0, 0, 0x3F000000, 0]
    # f32 NaNs are canonical; f64 NaNs propagate (quieted)
    assert int(fo.mul(arr([0x7F800001], np.uint32), arr([0x3F800000], np.uint32))[0]) == 0x7FFFFFFF
    snan = 0x7FF0000000000123
    assert int(fo.add(arr([snan], np.uint64), arr([0], np.uint64), F64)[0]) == snan | (1 << 51)
    assert int(fo.add(arr([0x7FF0000000000000], np.uint64), arr([0xFFF0000000000000], np.uint64), F64)[0]) \
        == F64.canonical_nan == 0xFFF8000000000000
    qa, qb, qc = 0x7FF8000000000AAA, 0x7FF0000000000BBB, 0xFFF8000000000CCC  # which NaN wins (H200)
    a, b, c = arr([qa], np.uint64), arr([qb], np.uint64), arr([qc], np.uint64)
    assert int(fo.add(a, b, F64)[0]) == qb | (1 << 51)
    assert int(fo.div(a, b, F64)[0]) == qa
    assert int(fo.fma(a, arr([0x3FF0000000000000], np.uint64), c, F64)[0]) == qc
    assert int(fo.fma(a, b, c, F64)[0]) == qb | (1 << 51)


def test_ftz_flushes_inputs_and_results() -> None:
    tiny = arr([0x00000001], np.uint32)
    assert int(fo.add(tiny, tiny, F32, "rn", ftz=True)[0]) == 0
    assert int(fo.add(tiny, tiny, F32, "rn")[0]) == 2
    almost = arr([0x3F7FFFFF], np.uint32)  # (1 - 2**-24) * 2**-126 rounds to 2**-126 but is tiny
    mn, mmn = arr([0x00800000], np.uint32), arr([0x80800000], np.uint32)
    assert int(fo.mul(almost, mn, F32, "rn")[0]) == 0x00800000
    assert int(fo.mul(almost, mn, F32, "rn", ftz=True)[0]) == 0
    assert int(fo.fma(almost, mmn, arr([0], np.uint32), F32, "rp", ftz=True)[0]) == 0x80000000
    assert int(fo.fma(mn, mn, mmn, F32, "rn", ftz=True)[0]) == 0x80800000  # 24-bit rounding: not tiny
    assert int(fo.fma(mn, mn, mmn, F32, "rp", ftz=True)[0]) == 0x80000000
    half_min = arr([0x00400000], np.uint32)  # 2**-127
    two = arr([0x40000000], np.uint32)
    assert int(fo.mul(half_min, two, F32)[0]) == 0x00800000
    assert int(fo.mul(arr([0x3F000000], np.uint32), arr([0x00800000], np.uint32), F32, ftz=True)[0]) == 0
    neg = arr([0x80000001], np.uint32)
    assert int(fo.mul(neg, two, F32, ftz=True)[0]) == 0x80000000


def test_packed_lanes() -> None:
    one, two = 0x3C00, 0x4000
    a = fo.join2(arr([one], np.uint16), arr([two], np.uint16), 16)
    assert int(a[0]) == (two << 16) | one
    out = fo.packed(fo.add, a, a, fmt=F16)
    lo, hi = fo.split2(out, 16)
    assert int(lo[0]) == two and int(hi[0]) == 0x4400
    f = fo.join2(arr([0x3F800000], np.uint32), arr([0x40400000], np.uint32), 32)
    prod = fo.packed(fo.mul, f, f, fmt=F32, rnd="rz")
    assert [int(x[0]) for x in fo.split2(prod, 32)] == [0x3F800000, 0x41100000]


def test_fma_relu_and_errors() -> None:
    a = arr([0xBC00, 0x7E00], np.uint16)  # -1, NaN
    out = fo.fma(a, arr([0x3C00, 0x3C00], np.uint16), arr([0, 0], np.uint16), F16, relu_=True)
    assert list(out) == [0, 0x7FFF]
    with pytest.raises(FormatError):
        fo.div(a, a, F16)
    with pytest.raises(FormatError):
        fo.add(a, a, F16, "bogus")


def test_f64_fma_rn_vectorised_bulk() -> None:
    """The vectorised f64 .rn fma agrees with exact rational rounding on many random triples."""
    from semantics.formats import round_fraction

    rng = np.random.default_rng(17)
    n = 3000
    sign = rng.integers(0, 2, (3, n), dtype=np.uint64) << np.uint64(63)
    mant = rng.integers(0, 2**52, (3, n), dtype=np.uint64)
    expo = rng.integers(1023 - 40, 1023 + 40, (3, n), dtype=np.uint64)
    expo[2] = np.where(rng.random(n) < 0.5, expo[0] + expo[1] - 1023, expo[2])  # cancellations
    ops = sign | (expo << np.uint64(52)) | mant
    ops[1, : n // 10] = ops[0, : n // 10]
    ops[2, : n // 10] = (ops[0, : n // 10] * 0) | np.uint64(0x8000000000000000) | mant[2, : n // 10]
    # a double-rounding trap: exact = 1 + 2**-53 + 2**-106 - 2**-158 must round up to 1 + 2**-52
    ops[:, 0] = [0x3FF0000000000001, 0x3C9FFFFFFFFFFFFF, 0x3FF0000000000000]
    got = fo.fma(ops[0], ops[1], ops[2], F64, "rn")
    assert int(got[0]) == 0x3FF0000000000001
    vals = ops.view(np.float64)
    for i in range(n):
        exact = Fraction(float(vals[0, i])) * Fraction(float(vals[1, i])) + Fraction(float(vals[2, i]))
        assert int(got[i]) == round_fraction(exact, F64, "rn"), i


def test_f32_fma_rn_double_rounding_trap() -> None:
    """fma.rn.f32's binary64 fast path (floatops._fma_f32_rn): a*b + c = 1 + 2**-24 + 2**-70 is just
    above a binary32 midpoint, but RN64 of it is the midpoint, whose cast would round to even (1.0);
    the single rounding gives 1 + 2**-23. The lane must take the exact path."""
    a = arr([0x3F800001], np.uint32)  # 1 + 2**-23
    b = arr([0x80000000 | (102 << 23) | 0x7FFFFE], np.uint32)  # -(2**-24 - 2**-47): a*b = -2**-24 + 2**-70
    c = arr([0x3F800001], np.uint32)
    assert int(fo.fma(a, b, c, F32, "rn")[0]) == 0x3F800001
    assert int(fo.fma(a, b, c, F32, "rn", ftz=True)[0]) == 0x3F800001


def test_f32_fma_rn_fast_path_bulk() -> None:
    """fma.rn.f32 on many lanes at once (the binary64 fast path and its exact fallback lanes) agrees
    with exact rational rounding: random bits, cancellations, exact midpoints of small integers,
    subnormal-range and overflowing results, with and without .ftz."""
    from semantics.formats import round_fraction

    rng = np.random.default_rng(23)
    n = 2000
    groups = [rng.integers(0, 2**32, (3, n), dtype=np.uint64).astype(np.uint32)]
    x, y = rng.standard_normal((2, n)).astype(np.float32)
    groups.append(np.stack([x, y, (-(x.astype(np.float64) * y)).astype(np.float32)]).view(np.uint32))
    xi, yi = rng.integers(-2**12, 2**12, (2, n)).astype(np.float32)
    ci = (rng.integers(-2**24, 2**24, n) * 2.0 ** rng.integers(-2, 3, n)).astype(np.float32)
    groups.append(np.stack([xi, yi, ci]).view(np.uint32))
    tiny = np.stack([rng.standard_normal(n) * 2.0**-70, rng.standard_normal(n) * 2.0**-60,
                     rng.standard_normal(n) * 2.0**-128]).astype(np.float32)
    groups.append(tiny.view(np.uint32))
    with np.errstate(over="ignore"):
        huge = np.stack([rng.standard_normal(n) * 2.0**64, rng.standard_normal(n) * 2.0**63,
                         rng.standard_normal(n) * 2.0**127]).astype(np.float32)
    groups.append(huge.view(np.uint32))
    for ops in groups:
        for ftz in (False, True):
            got = fo.fma(ops[0], ops[1], ops[2], F32, "rn", ftz=ftz)
            for i in range(n):
                a, b, c = (int(v) for v in ops[:, i])
                if ftz:
                    a, b, c = _flush("f32", a), _flush("f32", b), _flush("f32", c)
                va, vb, vc = bits_value("f32", a), bits_value("f32", b), bits_value("f32", c)
                if va is None or vb is None or vc is None:
                    continue  # NaN/inf operands: test_narrow_fma_exact
                exact = va * vb + vc
                if exact == 0:
                    continue  # signed zeros: test_narrow_fma_exact
                want = round_fraction(exact, F32, "rn")
                if ftz and is_tiny(exact, 8, 23, "rn"):
                    want &= 0x80000000
                assert int(got[i]) == want, (ftz, hex(a), hex(b), hex(c), hex(int(got[i])), hex(want))
