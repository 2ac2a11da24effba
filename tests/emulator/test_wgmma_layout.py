"""wgmma layout functions (symexec.wgmma_layout) against independent re-derivations: a generic
evaluator of the CuTe-style canonical layouts of PTX 9.7.15.5.1.2.1.3, the manual's worked
examples (Figures 166-170), a bit-level swizzle, and the m16n8 fragment tables written as loops."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symexec.wgmma_layout import (MatrixDescriptor, a_fragment, canonical_offsets, d_fragment, decode_descriptor,
                                  encode_descriptor, matrix_addresses, swizzle)
from wgmma_oracle import _size, a_table, canonical_table, cute_eval, d_table, swizzle_bits


# ---------------------------------------------------------------------------- descriptor


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 0x3FFFF >> 4), st.integers(0, 0x3FFF), st.integers(0, 0x3FFF), st.sampled_from([0, 32, 64, 128]),
       st.integers(0, 7))
def test_descriptor_roundtrip(start16: int, lbo16: int, sbo16: int, width: int, base: int) -> None:
    v = encode_descriptor(start16 * 16, lbo16 * 16, sbo16 * 16, width, base)
    d = decode_descriptor(v)
    assert (d.start, d.lbo, d.sbo, d.swizzle, d.base_offset) == (start16 * 16, lbo16 * 16, sbo16 * 16, width, base)
    # the bit positions of 9.7.15.5.1.2.2
    assert v & 0x3FFF == start16 and (v >> 16) & 0x3FFF == lbo16 and (v >> 32) & 0x3FFF == sbo16
    assert (v >> 49) & 7 == base and (v >> 62) == {0: 0, 128: 1, 64: 2, 32: 3}[width]


def test_descriptor_of_triton_constant() -> None:
    # 0x4000004000000000: SBO field 64 (1024 bytes), 128-byte swizzle, as Triton emits for f16 tiles
    d = decode_descriptor(0x4000004000000000 | (16384 >> 4) | (512 << 16))
    assert d == MatrixDescriptor(start=16384, lbo=8192, sbo=1024, base_offset=0, swizzle=128)


# ---------------------------------------------------------------------------- canonical layouts


@pytest.mark.parametrize("mn_major", [False, True])
@pytest.mark.parametrize("width", [0, 32, 64, 128])
@pytest.mark.parametrize("elem", [1, 2, 4])
def test_canonical_offsets_match_manual_table(mn_major: bool, width: int, elem: int) -> None:
    t = 16 // elem
    lbo_e, sbo_e = 8 * 1024 // elem, 2048 // elem  # arbitrary distinct strides, in elements
    desc = MatrixDescriptor(0, lbo_e * elem, sbo_e * elem, 0, width)
    (s_mn, s_k), (d_mn, d_k) = canonical_table(mn_major, width, t, lbo_e, sbo_e)
    k_elems = 32 // elem  # one instruction's K
    rows = 64 if not mn_major else max(64, 2 * (width // elem if width else t))
    for mn in range(rows):
        for k in range(k_elems):
            want = (cute_eval(s_mn, d_mn, mn) + cute_eval(s_k, d_k, k)) * elem
            assert canonical_offsets(np.array(mn), np.array(k), elem, mn_major, desc) == want, (mn, k)


# the manual's worked examples: (major-ness, swizzle, element bytes, LBO, SBO in elements, exact layout)
_EXAMPLES = [
    (False, 0, 4, 64, 32, ((8, 2), (4, 4)), ((4, 32), (1, 64))),  # Figure 166, tf32
    (False, 32, 4, 1, 64, ((8, 2), (4, 2)), ((8, 64), (1, 4))),  # Figure 167, tf32 (first 32 bytes of K)
    (True, 0, 2, 128, 64, ((8, 1, 2), (8, 2)), ((1, 8, 64), (8, 128))),  # Figure 168, bf16
    (True, 32, 2, 128, 256, ((8, 2, 2), (8, 2)), ((1, 8, 128), (16, 256))),  # Figure 169, bf16
    (True, 64, 2, 256, 512, ((8, 4, 2), (8, 2)), ((1, 8, 256), (32, 512))),  # Figure 170, bf16
]


@pytest.mark.parametrize("mn_major,width,elem,lbo,sbo,shape,stride", _EXAMPLES)
def test_manual_examples(mn_major, width, elem, lbo, sbo, shape, stride) -> None:
    desc = MatrixDescriptor(0, lbo * elem, sbo * elem, 0, width)
    n_mn, n_k = _size(shape[0]), _size(shape[1])
    got = matrix_addresses(desc, n_mn, n_k, elem, mn_major)
    for mn in range(n_mn):
        for k in range(n_k):
            want = swizzle_bits((cute_eval(shape[0], stride[0], mn) + cute_eval(shape[1], stride[1], k)) * elem, width)
            assert got[mn, k] == want, (mn, k)


@pytest.mark.parametrize("width", [32, 64, 128])
def test_swizzle_is_the_bitwise_xor_and_a_permutation(width: int) -> None:
    a = np.arange(0, 16 * 1024, 16)
    got = swizzle(a, width)
    assert got.tolist() == [swizzle_bits(int(x), width) for x in a]
    block = 8 * width  # the pattern repeats every 8 rows (256/512/1024 bytes, 9.7.15.5.1.2.2)
    for b0 in range(0, a[-1], block):
        sel = (a >= b0) & (a < b0 + block)
        assert sorted(got[sel].tolist()) == a[sel].tolist()


def test_nonzero_base_offset_is_refused() -> None:
    from symexec.wgmma_layout import LayoutError

    with pytest.raises(LayoutError):
        matrix_addresses(MatrixDescriptor(0, 0, 1024, 3, 128), 64, 16, 2, False)


# ---------------------------------------------------------------------------- register fragments


@pytest.mark.parametrize("n", [8, 16, 24, 64, 136, 256])
def test_d_fragment(n: int) -> None:
    rows, cols = d_fragment(n)
    table = d_table(n)
    assert len(table) == 64 * n
    for (r, c), (t, e) in table.items():
        assert (rows[t, e], cols[t, e]) == (r, c)


@pytest.mark.parametrize("bits", [8, 16, 32])
def test_a_fragment(bits: int) -> None:
    rows, cols = a_fragment(bits)
    table = a_table(bits)
    assert len(table) == 64 * (256 // bits)  # 64 x K with K = 32 bytes
    for (r, c), (t, e) in table.items():
        assert (rows[t, e], cols[t, e]) == (r, c)
