"""Symbolic sizes: an access that no lane performs in the checked launch belongs to the buffer of the
pointer parameter its address is computed from (symexec/check/provenance.py), not to the buffer this
run's layout happens to place where that address would land.

`TAIL`: one CTA of 128 threads; thread i reads x[i] (masked `i < K`) and x[2048 + i] (masked
`2048 + i < K`, a later column block of a row, as Triton's rmsnorm/layernorm builds read it) and
stores their sum to y[i]. At K = 100 no lane reads the second block: its addresses x + 8192 + 4 i lie
past x's 400 bytes and the 4096-byte gap after them, beyond y (which this run placed 4608 bytes after
x): the allocation at or below them is y. Attributed to y, the access was 3584 + 4 i bytes into y, in
bounds of y's 4 K bytes wherever the mask lets it run. `TAIL_LE` masks with `2048 + i <= K` and reads
x[K] at K = 2048 + i, out of bounds of x for every K in [2048, 2175], yet it was "in bounds of y":
proved for ALL sizes before the fix. Now it is x's access: `TAIL` is proved, `TAIL_LE` has its witness
at the smallest failing size, run concretely.
"""

from __future__ import annotations

import ptx_parser
from symexec import Launch, load_program
from symexec.check import check_kernel
from symexec.check.provenance import PointerOrigins
from symexec.check.sizes import SizeDomain, SizeVar
from symexec.paged import ZeroBytes

TAIL = """.version 8.0
.target sm_80
.address_size 64
.visible .entry tail(.param .u64 x, .param .u64 y, .param .u32 k)
{
    .reg .pred %p<4>;
    .reg .b32 %r<8>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [x];
    ld.param.u64 %rd2, [y];
    ld.param.u32 %r1, [k];
    mov.u32 %r3, %tid.x;
    setp.lt.s32 %p1, %r3, %r1;
    add.s32 %r5, %r3, 2048;
    setp.lt.s32 %p2, %r5, %r1;
    mul.wide.u32 %rd3, %r3, 4;
    add.s64 %rd4, %rd1, %rd3;
    mul.wide.u32 %rd5, %r5, 4;
    add.s64 %rd6, %rd1, %rd5;
    mov.f32 %f1, 0f00000000;
    mov.f32 %f2, 0f00000000;
    @%p1 ld.global.f32 %f1, [%rd4];
    @%p2 ld.global.f32 %f2, [%rd6];
    add.f32 %f3, %f1, %f2;
    add.s64 %rd7, %rd2, %rd3;
    @%p1 st.global.f32 [%rd7], %f3;
    ret;
}
"""
TAIL_LE = TAIL.replace("setp.lt.s32 %p2, %r5, %r1;", "setp.le.s32 %p2, %r5, %r1;")


def _launch(k: int) -> Launch:
    return Launch((1, 1, 1), (128, 1, 1), {"x": ZeroBytes(4 * k), "y": ZeroBytes(4 * k)}, ["x", "y", k])


def _check(src: str, k: int):
    prog = load_program(ptx_parser.parse(src, "tail.ptx"), "tail")
    dom = SizeDomain([SizeVar("K", 1, 1 << 20, 1)], {"K": k}, {"k": lambda e: e["K"]}, lambda e: (1, 1, 1),
                     {"x": lambda e: e["K"] * 4, "y": lambda e: e["K"] * 4}, lambda p: _launch(p["K"]))
    return check_kernel(prog, _launch(k), sizes=dom)


def test_pointer_origins_follow_arithmetic_back_to_parameters() -> None:
    prog = load_program(ptx_parser.parse(TAIL, "tail.ptx"), "tail")
    po = PointerOrigins(prog)
    assert po.params_of("%rd6") == {0} and po.params_of("%rd7") == {1}
    assert po.params_of("%rd5") == frozenset()  # an offset: no parameter
    loaded = TAIL.replace("add.s64 %rd6, %rd1, %rd5;", "ld.global.u64 %rd6, [%rd1];")
    assert PointerOrigins(load_program(ptx_parser.parse(loaded, "t.ptx"), "tail")).params_of("%rd6") is None


def test_an_unexecuted_masked_block_is_proved_in_its_own_buffer() -> None:
    r = _check(TAIL, 100)
    assert r.verdict == "race_free", r.notes
    assert "fallback" not in r.stats["sizes"], r.notes
    assert any("proven for ALL sizes (K in [1, 1048576])" in a for a in r.assumptions), r.assumptions


def test_an_off_by_one_mask_on_the_unexecuted_block_is_out_of_bounds_of_its_buffer() -> None:
    fine_here = check_kernel(load_program(ptx_parser.parse(TAIL_LE, "tail.ptx"), "tail"), _launch(100))
    assert fine_here.verdict == "race_free"  # the checked launch itself reads nothing past x
    bad = _check(TAIL_LE, 100)
    assert bad.verdict == "out_of_bounds", (bad.verdict, bad.notes)
    assert bad.stats["witness_sizes"] == {"K": 2048}, bad.stats.get("witness_sizes")
    assert not any("proven for ALL sizes" in a for a in bad.assumptions), bad.assumptions
