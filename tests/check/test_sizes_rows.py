"""Symbolic sizes over 2-D (row-wise) addressing: y[row * N + col] = x[row * N + col] over an M x N
float matrix, one thread per element, grid (cdiv(N, 128), M), the mask `col < N` (Triton's form).

The bounds and cross-CTA queries multiply two sizes or a size by a CTA id (`row * N` against
`M * N`): refuted with the monotonicity lemmas of symexec/check/monotone.py. The domain is what a
real launch allows: M, N >= 1, M * N < 2^31 elements (Triton's int32 indexing), M <= 65535 (the
grid's y limit, CUDA; DIM_LIMITS).
- `WIDE64`: the element offset row * N + col and its byte offset in 64 bits: in bounds and free of
  cross-CTA races for every size of the domain.
- `INDEX32`: the element offset in 32 bits (mad.lo.s32), the byte offset widened (mul.wide.s32):
  also right, because the domain's matrices have fewer than 2^31 elements (an assumption printed).
- `BYTES32`: the byte offset 4 * (row * N + col) in 32 bits, then sign-extended: right while the
  matrix has at most 2^29 elements, out of bounds above (4 e wraps negative). The witness is the
  smallest failing M at the smallest N where one exists, run concretely (2 GiB buffers, lazily).
"""

from __future__ import annotations

from harness.contract import cdiv
import ptx_parser
from symexec import Launch, load_program
from symexec.check import check_kernel
from symexec.check.sizes import SizeDomain, SizeVar
from symexec.paged import ZeroBytes

HEAD = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 x, .param .u64 y, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<10>;
    .reg .f32 %f<2>;
    .reg .b64 %rd<10>;
    ld.param.u64 %rd1, [x];
    ld.param.u64 %rd2, [y];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %tid.x;
    mad.lo.s32 %r4, %r2, 128, %r3;
    mov.u32 %r5, %ctaid.y;
    setp.lt.s32 %p1, %r4, %r1;
"""
TAIL = """    add.s64 %rd4, %rd1, %rd3;
    add.s64 %rd5, %rd2, %rd3;
    @%p1 ld.global.f32 %f1, [%rd4];
    @%p1 st.global.f32 [%rd5], %f1;
    ret;
}
"""
WIDE64 = HEAD + """    mul.wide.u32 %rd6, %r5, %r1;
    cvt.u64.u32 %rd7, %r4;
    add.s64 %rd8, %rd6, %rd7;
    shl.b64 %rd3, %rd8, 2;
""" + TAIL
INDEX32 = HEAD + """    mad.lo.s32 %r6, %r5, %r1, %r4;
    mul.wide.s32 %rd3, %r6, 4;
""" + TAIL
BYTES32 = HEAD + """    mad.lo.s32 %r6, %r5, %r1, %r4;
    mul.lo.s32 %r7, %r6, 4;
    cvt.s64.s32 %rd3, %r7;
""" + TAIL


def _launch(m: int, n: int) -> Launch:
    return Launch((cdiv(n, 128), m, 1), (128, 1, 1), {"x": ZeroBytes(4 * m * n), "y": ZeroBytes(4 * m * n)},
                  ["x", "y", n])


def _domain(m: int, n: int) -> SizeDomain:
    top = 2**31 - 1
    return SizeDomain([SizeVar("M", 1, top), SizeVar("N", 1, top)], {"M": m, "N": n}, {"n": lambda e: e["N"]},
                      lambda e: (cdiv(e["N"], 128), e["M"], 1),
                      {"x": lambda e: e["M"] * e["N"] * 4, "y": lambda e: e["M"] * e["N"] * 4},
                      lambda p: _launch(p["M"], p["N"]), facts=[lambda e: e["M"] * e["N"] <= top])


def _check(src: str, m: int, n: int):
    return check_kernel(load_program(ptx_parser.parse(src, "k.ptx"), "k"), _launch(m, n), sizes=_domain(m, n))


def _proved(r) -> None:
    assert r.verdict == "race_free" and not r.findings, (r.verdict, r.notes)
    assert "fallback" not in r.stats["sizes"], r.stats["sizes"]
    assert r.stats["sizes"]["domain_point"] == {"M": 3, "N": 300}  # the domain is not empty
    assert any("proven for ALL sizes (M in [1, 2147483647], N in [1, 2147483647])" in a for a in r.assumptions)


def test_64_bit_offsets_are_in_bounds_and_race_free_for_every_size() -> None:
    _proved(_check(WIDE64, 3, 300))


def test_32_bit_element_offsets_are_right_below_2_to_the_31_elements() -> None:
    _proved(_check(INDEX32, 3, 300))


def test_32_bit_byte_offsets_overflow_only_above_a_size() -> None:
    r = _check(BYTES32, 3, 300)  # the checked launch itself is fine
    assert r.verdict == "out_of_bounds", (r.verdict, r.notes)
    m, n = r.stats["witness_sizes"]["M"], r.stats["witness_sizes"]["N"]
    assert m * n > 2**29 and m <= 65535, (m, n)  # only a matrix of more than 2^29 elements overflows
    site = r.findings[0].sites[0]
    row, col = site.cta[1], site.cta[0] * 128 + site.thread[0]
    assert 4 * (row * n + col) >= 2**31 and col < n, (site.cta, site.thread)
