"""Symbolic sizes over loops whose trip count is a size (grid.py `_Trips`, grid_shadow `_trip`).

A hand-written reduction: one CTA of 128 threads sums x[0 .. K) in steps of 128 (thread i takes
k0 + i, `for k0 in range(0, K, 128)`), the loads masked, then stores its partial sum to y[i]. The
loop's back edge `k0 < K` decides on the size K, so the number of iterations is a function of K:
- `REDUCE` masks with `k < K`: in bounds for every K. The checked launch (K = 300) runs 3
  iterations, too few to summarise, so the representatives run at K = 4800 (a point of the domain);
  the loop's periods are then followed as functions of t, bounded by the back edge at every K
  (`t < L` with L proved by induction). Over the whole domain the int32 counter k0 may wrap
  (K near 2^31): the proof is for K up to 2^20, and the verdict says so;
- `REDUCE_LE` masks with `k <= K`: out of bounds for every K that is not a multiple of 128 (the
  last iteration's thread K - k0 reads x[K]); the witness is K = 1, run concretely; for multiples
  of 128 the last iteration ends at K - 1 and it is race_free. Checked at K = 1024 (fine itself),
  the smallest failing size K = 1 is the witness, run concretely.
- `EARLY` skips the loop with `@p bra` on K < 1 outside it: proved to go the same way at every K.
- `REDUCE` again over the whole int32 range: the counter wraps only above K = 2^31 - 128, so the proof is
  made over the widest range `_widest` finds where the loop is proved to end (K up to 2^30; `_Trips` bounds
  periods by powers of two), not over K up to 2^20 only. Beside it, `REDUCE_STORE_AT` stores to
  y[tid + 128] once K >= 2^16 (y holds 128 floats): out of bounds there only, the witness run concretely; and
  `REDUCE_STORE_HIGH` does so only from K = 2^24 on, inside the wider range and above 2^20: the wide proof
  fails and the verdict holds for K up to 2^20 only, saying so (its witness would run 2^17 iterations).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import ptx_parser
from symexec import Launch, load_program
from symexec.check import check_kernel
from symexec.check.grid import VALIDATION_ITERATIONS, _tops
from symexec.check.sizes import SizeDomain, SizeVar
from symexec.paged import ZeroBytes

REDUCE = """.version 8.0
.target sm_80
.address_size 64
.visible .entry red(.param .u64 x, .param .u64 y, .param .u32 k)
{
    .reg .pred %p<4>;
    .reg .b32 %r<8>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [x];
    ld.param.u64 %rd2, [y];
    ld.param.u32 %r1, [k];
    mov.u32 %r3, %tid.x;
    mov.f32 %f1, 0f00000000;
    mov.u32 %r4, 0;
    setp.lt.s32 %p1, %r1, 1;
    @%p1 bra DONE;
LOOP:
    add.s32 %r5, %r4, %r3;
    setp.lt.s32 %p2, %r5, %r1;
    mul.wide.s32 %rd3, %r5, 4;
    add.s64 %rd4, %rd1, %rd3;
    mov.f32 %f2, 0f00000000;
    @%p2 ld.global.f32 %f2, [%rd4];
    add.f32 %f1, %f1, %f2;
    add.s32 %r4, %r4, 128;
    setp.lt.s32 %p3, %r4, %r1;
    @%p3 bra LOOP;
DONE:
    mul.wide.u32 %rd5, %r3, 4;
    add.s64 %rd6, %rd2, %rd5;
    st.global.f32 [%rd6], %f1;
    ret;
}
"""
REDUCE_LE = REDUCE.replace("setp.lt.s32 %p2, %r5, %r1;", "setp.le.s32 %p2, %r5, %r1;")


def _launch(k: int) -> Launch:
    return Launch((1, 1, 1), (128, 1, 1), {"x": ZeroBytes(4 * k), "y": ZeroBytes(512)}, ["x", "y", k])


def _domain(k: int, multiple: int = 1) -> SizeDomain:
    top = 2**31 - 1 - (2**31 - 1) % multiple
    return SizeDomain([SizeVar("K", multiple, top, multiple)], {"K": k}, {"k": lambda e: e["K"]},
                      lambda e: (1, 1, 1), {"x": lambda e: e["K"] * 4, "y": lambda e: 512},
                      lambda p: _launch(p["K"]))


def _check(src: str, k: int, multiple: int = 1):
    prog = load_program(ptx_parser.parse(src, "red.ptx"), "red")
    return check_kernel(prog, _launch(k), sizes=_domain(k, multiple))


def test_a_reduction_is_in_bounds_for_every_k_up_to_the_stated_range() -> None:
    r = _check(REDUCE, 300)
    assert r.verdict == "race_free", r.notes
    assert "fallback" not in r.stats["sizes"], r.notes
    assert r.stats["sizes"]["domain"] == "K in [1, 1073741824]"
    assert "is not proved to end within" in r.stats["sizes"]["not_proven_above"]
    assert any("proven for ALL sizes (K in [1, 1073741824])" in a for a in r.assumptions), r.assumptions
    assert any("ran at K = 4800" in a for a in r.assumptions), r.assumptions  # the loop summarised there
    assert any("checked for sizes in K in [1, 1073741824]" in n and "wraps" in n for n in r.notes), r.notes


def test_a_mask_k_le_k_is_out_of_bounds_unless_k_is_a_multiple_of_the_block() -> None:
    bad = _check(REDUCE_LE, 300)  # the checked launch runs off the end itself: found in its own run
    assert bad.verdict == "out_of_bounds", (bad.verdict, bad.notes)
    ok = _check(REDUCE_LE, 1024, multiple=128)
    assert ok.verdict == "race_free", ok.notes
    assert "fallback" not in ok.stats["sizes"], ok.notes
    assert any("a multiple of 128" in a and "proven for ALL sizes" in a for a in ok.assumptions), ok.assumptions


def test_the_checked_launch_itself_may_be_fine() -> None:
    bad = _check(REDUCE_LE, 1024)  # K = 1024 is a multiple of 128: only other sizes fail
    assert bad.verdict == "out_of_bounds", (bad.verdict, bad.notes)
    assert bad.stats["witness_sizes"] == {"K": 1}, bad.stats.get("witness_sizes")
    assert any("leaves x from K = 1" in n for n in bad.notes), bad.notes


# The loop counts its iterations in %r6 in a block laid out after the kernel's `ret` (the loop jumps there and
# back); after the loop the store goes to y[tid + 128 * (the count is neither 3 nor 38)]: in bounds at K = 300
# (3 iterations, the checked launch) and K = 4800 (38, where the representatives run), out of bounds at every
# other K. The loop's registers must be unknown after it in every block of its body (Program.loop_body), not only
# in those between its head and back edge: before, the count kept its representative value and the kernel was
# "proven for ALL sizes".
SCATTERED = REDUCE.replace("    add.s32 %r4, %r4, 128;\n", "    bra.uni SIDE;\nBACK:\n    add.s32 %r4, %r4, 128;\n") \
    .replace("    mov.u32 %r4, 0;\n", "    mov.u32 %r4, 0;\n    mov.u32 %r6, 0;\n") \
    .replace("DONE:\n    mul.wide.u32 %rd5, %r3, 4;",
             "DONE:\n    setp.ne.u32 %p1, %r6, 3;\n    setp.ne.and.u32 %p1, %r6, 38, %p1;\n    selp.b32 %r7, 128, 0, %p1;\n"
             "    add.u32 %r7, %r7, %r3;\n    mul.wide.u32 %rd5, %r7, 4;") \
    .replace("    ret;\n}", "    ret;\nSIDE:\n    add.u32 %r6, %r6, 1;\n    bra.uni BACK;\n}")


def test_a_loop_body_laid_out_after_the_kernel_end_is_part_of_the_loop() -> None:
    prog = load_program(ptx_parser.parse(SCATTERED, "red.ptx"), "red")
    head, side = prog.labels["LOOP"], prog.labels["SIDE"]
    latch = max(i for i, ins in enumerate(prog.code) if ins.opcode == "bra" and ins.guard is not None
                and ins.operands[0].name == "LOOP")
    body = prog.loop_body(head, latch)
    assert side in body and side > latch  # the out-of-line block and its jump back
    assert prog.labels["DONE"] not in body and head == body[0]
    r = _check(SCATTERED, 300)
    assert r.verdict != "race_free" or "fallback" in r.stats["sizes"], (r.verdict, r.notes)
    assert not any("proven for ALL sizes" in a for a in r.assumptions), r.assumptions
    at_129 = check_kernel(load_program(ptx_parser.parse(SCATTERED, "red.ptx"), "red"), _launch(129))
    assert at_129.verdict == "out_of_bounds", at_129.verdict  # what the claim would have hidden


def _store_from(bit: int) -> str:
    """REDUCE with its final store moved to y[tid + 128] (past y's 128 floats) once K >= 2^bit."""
    return REDUCE.replace(
        "DONE:\n    mul.wide.u32 %rd5, %r3, 4;",
        f"DONE:\n    shr.u32 %r7, %r1, {bit};\n    min.u32 %r7, %r7, 1;\n    shl.b32 %r7, %r7, 7;\n"
        "    add.u32 %r7, %r7, %r3;\n    mul.wide.u32 %rd5, %r7, 4;")


REDUCE_STORE_AT = _store_from(16)
REDUCE_STORE_HIGH = _store_from(24)


def test_a_store_out_of_bounds_only_from_k_2_16_is_found_with_a_concrete_witness() -> None:
    r = _check(REDUCE_STORE_AT, 300)  # the checked launch (K = 300) stores in bounds
    assert r.verdict == "out_of_bounds", (r.verdict, r.notes)
    k = r.stats["witness_sizes"]["K"]
    assert 2**16 <= k and k <= 128 * VALIDATION_ITERATIONS, k  # a size the witness ran at (its loop short enough)
    concrete = check_kernel(load_program(ptx_parser.parse(REDUCE_STORE_AT, "red.ptx"), "red"), _launch(k))
    assert concrete.verdict == "out_of_bounds", concrete.verdict  # the witness size, checked as a plain launch


def test_a_store_out_of_bounds_only_above_2_24_keeps_the_proof_below_2_20() -> None:
    r = _check(REDUCE_STORE_HIGH, 300)
    assert not any("K in [1, 1073741824]" in a and "proven for ALL sizes" in a for a in r.assumptions), r.assumptions
    assert r.verdict == "race_free", (r.verdict, r.notes)  # proved only where it holds, saying where it was not
    assert r.stats["sizes"]["domain"] == "K in [1, 1048576]", r.stats["sizes"]
    assert any("over K in [1, 1073741824] not proven" in n for n in r.notes), r.notes


@given(st.integers(min_value=1, max_value=2**31 - 1), st.integers(min_value=0, max_value=2**31 - 1),
       st.sampled_from([1, 2, 16, 128]))
def test_tops_are_multiples_in_range_greatest_first(hi: int, floor: int, multiple: int) -> None:
    v = SizeVar("K", multiple, max(multiple, hi - hi % multiple), multiple)
    got = _tops(v, floor)
    assert got == sorted(set(got), reverse=True)
    assert all(t % multiple == 0 and max(floor, v.lo) <= t < v.hi for t in got)
    # the greatest size a counter stepping by 2^j from 0 stays below 2^31 at, when in range
    for j in range(4, 13):
        t = 2**31 - 2**j
        if v.hi > t >= max(floor, v.lo) and t % multiple == 0 and v.hi <= 2**31:
            assert t in got
