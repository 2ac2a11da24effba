"""Symbolic sizes over a loop whose pointer step is a size: a GEMM's K loop (`b_ptrs += BLOCK_K *
stride_bk`), here one row of a K x N float matrix per iteration.

One thread per column (grid cdiv(N, 128), N a multiple of 128, as Triton's `tt.divisibility`),
`for k in range(K): acc += b[k * N + col]`, the pointer advanced by the row pitch `4 * N` bytes.
The loop's back edge decides on K and its step depends on N, so the summarised period (loops.py)
keeps the step as a function of the sizes (`("d", ...)` leaf while the period runs, then the step's
expression), and the accesses of every iteration are `b + 4 col + t * 4N` with t < K:
- `COLSUM`: in bounds and free of races for every K, N of the domain (K * N < 2^31 elements);
- `COLSUM_SKEW`: the step is one element too long (`4 * (N + 1)`): iteration t reads b[t * (N + 1)
  + col], past the end for the last column once K >= 2. Checked at K = 1 (in bounds), the loop is
  too short to summarise there, so the representatives run at 16 K, where the last CTA leaves b:
  the witness is that size, run concretely.
"""

from __future__ import annotations

import ptx_parser
from harness.contract import cdiv
from symexec import Launch, load_program
from symexec.check import check_kernel
from symexec.check.sizes import SizeDomain, SizeVar
from symexec.paged import ZeroBytes

COLSUM = """.version 8.0
.target sm_80
.address_size 64
.visible .entry colsum(.param .u64 b, .param .u64 y, .param .u32 n, .param .u32 k)
{
    .reg .pred %p<4>;
    .reg .b32 %r<10>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<10>;
    ld.param.u64 %rd1, [b];
    ld.param.u64 %rd2, [y];
    ld.param.u32 %r1, [n];
    ld.param.u32 %r2, [k];
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r3, 128, %r4;
    mul.wide.s32 %rd3, %r5, 4;
    add.s64 %rd4, %rd1, %rd3;
    mul.wide.s32 %rd5, %r1, 4;
    mov.f32 %f1, 0f00000000;
    mov.u32 %r6, 0;
    setp.lt.s32 %p1, %r2, 1;
    @%p1 bra DONE;
LOOP:
    ld.global.f32 %f2, [%rd4];
    add.f32 %f1, %f1, %f2;
    add.s64 %rd4, %rd4, %rd5;
    add.s32 %r6, %r6, 1;
    setp.lt.s32 %p2, %r6, %r2;
    @%p2 bra LOOP;
DONE:
    mul.wide.s32 %rd6, %r5, 4;
    add.s64 %rd7, %rd2, %rd6;
    st.global.f32 [%rd7], %f1;
    ret;
}
"""
COLSUM_SKEW = COLSUM.replace("mul.wide.s32 %rd5, %r1, 4;", "add.s32 %r7, %r1, 1;\n    mul.wide.s32 %rd5, %r7, 4;")

TOP = 2**31 - 1


def _launch(k: int, n: int) -> Launch:
    return Launch((cdiv(n, 128), 1, 1), (128, 1, 1), {"b": ZeroBytes(4 * k * n), "y": ZeroBytes(4 * n)},
                  ["b", "y", n, k])


def _domain(k: int, n: int) -> SizeDomain:
    return SizeDomain([SizeVar("K", 1, TOP), SizeVar("N", 128, TOP - TOP % 128, 128)], {"K": k, "N": n},
                      {"n": lambda e: e["N"], "k": lambda e: e["K"]}, lambda e: (cdiv(e["N"], 128), 1, 1),
                      {"b": lambda e: e["K"] * e["N"] * 4, "y": lambda e: e["N"] * 4},
                      lambda p: _launch(p["K"], p["N"]), facts=[lambda e: e["K"] * e["N"] <= TOP])


def _check(src: str, k: int, n: int):
    return check_kernel(load_program(ptx_parser.parse(src, "colsum.ptx"), "colsum"), _launch(k, n),
                        sizes=_domain(k, n))


def test_a_k_loop_whose_pointer_step_is_a_size_is_proved_for_every_size() -> None:
    r = _check(COLSUM, 40, 256)
    assert r.verdict == "race_free", (r.verdict, r.notes)
    assert "fallback" not in r.stats["sizes"], r.notes
    assert any("proven for ALL sizes" in a for a in r.assumptions), r.assumptions
    assert any("the domain is not empty (Z3 model:" in a for a in r.assumptions), r.assumptions
    assert any("iterations (from iteration" in a for a in r.assumptions + r.notes), (r.assumptions, r.notes)


def test_a_step_one_element_too_long_is_out_of_bounds_with_a_replayed_witness() -> None:
    r = _check(COLSUM_SKEW, 1, 256)  # K = 1: one iteration, in bounds at the checked launch
    assert r.verdict == "out_of_bounds", (r.verdict, r.notes)
    w = r.stats["witness_sizes"]
    assert w["K"] >= 2, w
    # the checked launch (K = 1) is fine; the representatives ran at 16 K (loops.py needs a longer loop),
    # where the last column's run leaves b: a concrete finding at a point of the domain
    assert any(n.startswith(f"symbolic sizes: the finding is at K = {w['K']}, N = {w['N']}") for n in r.notes), r.notes
