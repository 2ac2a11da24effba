"""Block-scaled number formats and element containers (semantics.mxformats) against numpy references
written from the format definitions (OCP Microscaling Formats v1.0 and PTX 5.2.3), not from the code
under test."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from semantics.mxformats import (ScaleType, check_ue4m3, decode_elements, decode_scale, from_container8, from_packed4,
                                 from_padded16, to_container8, to_packed4, to_padded16)

# (exponent bits, mantissa bits, bias): OCP MX v1.0 section 5.3.3 (FP6 E2M3 / E3M2, FP4 E2M1: no inf, no NaN)
_OCP = {"e2m1": (2, 1, 1), "e2m3": (2, 3, 1), "e3m2": (3, 2, 3)}
# the eight E2M1 magnitudes listed by the OCP specification (Table 5)
_E2M1_TABLE = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


def _ref_minifloat(code: int, ebits: int, mbits: int, bias: int) -> float:
    """(-1)^s * 2^(1-bias) * (0.m) for e = 0, (-1)^s * 2^(e-bias) * (1.m) otherwise."""
    sign = -1.0 if code >> (ebits + mbits) & 1 else 1.0
    e = (code >> mbits) & ((1 << ebits) - 1)
    m = code & ((1 << mbits) - 1)
    if e == 0:
        return sign * (m / (1 << mbits)) * 2.0 ** (1 - bias)
    return sign * (1 + m / (1 << mbits)) * 2.0 ** (e - bias)


def _ref_ue4m3(code: int) -> float:
    if code == 0x7F:
        return float("nan")
    return _ref_minifloat(code, 4, 3, 7)


def _ref_ue8m0(code: int) -> float:
    return float("nan") if code == 0xFF else 2.0 ** (code - 127)


def test_e2m1_is_the_ocp_table():
    got = decode_elements(np.arange(16), "e2m1")
    assert got[:8].tolist() == _E2M1_TABLE
    assert got[8:].tolist() == [-x for x in _E2M1_TABLE]


def test_landmarks():
    assert decode_elements(np.array([0x1F]), "e2m3")[0] == 7.5  # max normal
    assert decode_elements(np.array([0x1F]), "e3m2")[0] == 28.0
    assert decode_elements(np.array([0x01]), "e3m2")[0] == 2.0 ** -4  # min subnormal 0.25 * 2^-2
    assert decode_scale(np.array([0x7E]), ScaleType.UE4M3)[0] == 448.0
    assert decode_scale(np.array([0x01]), ScaleType.UE4M3)[0] == 2.0 ** -9
    assert decode_scale(np.array([0, 127, 254]), ScaleType.UE8M0).tolist() == [2.0 ** -127, 1.0, 2.0 ** 127]
    assert np.isnan(decode_scale(np.array([0xFF]), ScaleType.UE8M0)[0])
    assert np.isnan(decode_scale(np.array([0x7F]), ScaleType.UE4M3)[0])


@given(st.sampled_from(sorted(_OCP)), st.lists(st.integers(0, 255), min_size=1, max_size=64))
@settings(max_examples=100, deadline=None)
def test_sub_byte_decoders_match_the_definition(fmt, codes):
    ebits, mbits, bias = _OCP[fmt]
    width = 1 + ebits + mbits
    c = np.array(codes) & ((1 << width) - 1)
    want = [_ref_minifloat(int(x), ebits, mbits, bias) for x in c]
    assert decode_elements(c, fmt).tolist() == want


@given(st.lists(st.integers(0, 255), min_size=1, max_size=64))
@settings(max_examples=100, deadline=None)
def test_scale_decoders_match_the_definition(codes):
    c = np.array(codes)
    got8 = decode_scale(c, ScaleType.UE8M0)
    want8 = np.array([_ref_ue8m0(int(x)) for x in c])
    assert np.array_equal(got8, want8, equal_nan=True)
    small = c & 0x7F
    got4 = decode_scale(small, ScaleType.UE4M3)
    assert np.array_equal(got4, np.array([_ref_ue4m3(int(x)) for x in small]), equal_nan=True)
    assert check_ue4m3(small) is None
    if (c & 0x80).any():
        assert check_ue4m3(c) == int(c[np.nonzero(c & 0x80)[0][0]])


@given(st.sampled_from(["e2m1", "e2m3", "e3m2", "e4m3"]), st.lists(st.integers(0, 255), min_size=1, max_size=32),
       st.integers(0, 255))
@settings(max_examples=100, deadline=None)
def test_container8(fmt, codes, junk):
    """mma.sync (.kind::(mx)f8f6f4, 9.7.14.5.14): e2m1 in bits 2-5, fp6 in bits 0-5; padding ignored."""
    width = {"e2m1": 4, "e2m3": 6, "e3m2": 6, "e4m3": 8}[fmt]
    c = np.array(codes) & ((1 << width) - 1)
    packed = to_container8(c, fmt)
    if fmt == "e2m1":
        assert (packed == (c << 2)).all()
        pad = np.uint8(junk) & np.uint8(0b11000011)
    elif fmt == "e4m3":
        assert (packed == c).all()
        pad = np.uint8(0)
    else:
        assert (packed == c).all()
        pad = np.uint8(junk) & np.uint8(0b11000000)
    assert (from_container8(packed | pad, fmt) == c).all()


def _ref_stream(elems: list[int], width: int) -> list[int]:
    """16 elements as one little-endian bit stream, then the 16-byte unit's bytes."""
    v = 0
    for j, e in enumerate(elems):
        v |= (e & ((1 << width) - 1)) << (width * j)
    return [(v >> (8 * i)) & 0xFF for i in range(16)]


@given(st.sampled_from(["e2m1", "e2m3", "e3m2"]), st.lists(st.integers(0, 63), min_size=32, max_size=32),
       st.lists(st.integers(0, 255), min_size=8, max_size=8))
@settings(max_examples=100, deadline=None)
def test_padded16_units(fmt, codes, pad):
    """tcgen05 .kind::mxf8f6f4 shared memory (9.7.16.10.4.4): 16 elements packed, then padding."""
    width = 4 if fmt == "e2m1" else 6
    e = np.array(codes).reshape(2, 16) & ((1 << width) - 1)
    units = to_padded16(e, fmt)
    for u in range(2):
        assert units[u].tolist() == _ref_stream(e[u].tolist(), width)
    data = 8 if width == 4 else 12
    noisy = units.copy()
    noisy[:, data:] = np.array(pad[: 16 - data], np.uint8)  # padding contents are ignored
    assert (from_padded16(noisy, fmt) == e).all()


@given(st.lists(st.integers(0, 15), min_size=2, max_size=64).filter(lambda x: len(x) % 2 == 0))
@settings(max_examples=100, deadline=None)
def test_packed4(nibbles):
    n = np.array(nibbles).reshape(-1, 2)
    b = to_packed4(n)
    assert b.tolist() == [int(lo) | int(hi) << 4 for lo, hi in n]
    assert (from_packed4(b) == n).all()


def test_decode_elements_table_is_decode_bit_for_bit():
    """decode_elements reads byte formats from a 256-entry table; it must give decode's values
    exactly (NaN where decode gives NaN, signed zeros kept), in the input's shape."""
    from semantics.formats import decode, get_format
    for fmt in ("e4m3", "e5m2", "e2m3", "e3m2", "e2m1"):
        bits = np.arange(256, dtype=np.int64).reshape(16, 16)
        got = decode_elements(bits, fmt)
        want = decode(bits.astype(get_format(fmt).dtype), get_format(fmt))
        assert got.shape == (16, 16) and got.dtype == np.float64
        assert np.array_equal(got.view(np.uint64), want.view(np.uint64)), fmt
    assert np.isnan(decode_elements(np.array([0x7F, 0xFF]), "e4m3")).all()
    assert np.signbit(decode_elements(np.array([0x80]), "e4m3"))[0]


def test_decode_scale_table_is_the_decoders_bit_for_bit():
    """decode_scale reads arrays from a 256-entry table; same values as decode_ue8m0/decode_ue4m3
    on every byte (as uint64, the dtype _scale_values hands it, and as int64 in a 2-D shape)."""
    from semantics.formats import decode_ue8m0
    from semantics.mxformats import decode_ue4m3
    for stype, direct in ((ScaleType.UE8M0, decode_ue8m0), (ScaleType.UE4M3, decode_ue4m3)):
        for bits in (np.arange(256, dtype=np.uint64), np.arange(256, dtype=np.int64).reshape(8, 32)):
            got, want = decode_scale(bits, stype), direct(bits)
            assert got.shape == bits.shape and got.dtype == np.float64
            assert np.array_equal(got.view(np.uint64), want.view(np.uint64)), stype
    assert np.isnan(decode_scale(np.array([0xFF]), ScaleType.UE8M0))[0]
