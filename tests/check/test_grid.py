"""Symbolic grid mode of `check_kernel`: cross-CTA global races and bounds by Z3 for a symbolic pair
of CTAs, agreeing with enumeration on suite kernels and finding a one-element overlap between CTAs."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
import triton
import triton.language as tl

import ptx_parser
from harness.compile import compile_contract
from harness.contract import Contract, Scalar, Tensor, cdiv
from harness.emulate import launch_for
from harness.suite import get
from symexec import load_program
from symexec.check import check_kernel
from symexec.check import loops
from symexec.launch import Launch
from volta.check_cli import check_file

STRIDED = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry strided(.param .u64 out, .param .u32 stride, .param .u32 n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [stride];
  ld.param.u32 %r5, [n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.s32 %r4, %r2, %r1, %r3;
  setp.lt.u32 %p1, %r4, %r5;
  mul.wide.u32 %rd2, %r4, 4;
  add.s64 %rd3, %rd1, %rd2;
  @%p1 st.global.u32 [%rd3], %r3;
  ret;
}
"""


def _strided(stride: int, ctas: int = 8, n: int | None = None):
    prog = load_program(ptx_parser.parse(STRIDED, "strided.ptx"))
    n = ctas * 32 if n is None else n
    launch = Launch((ctas,), (32,), {"out": np.zeros(ctas * 32, np.uint32)}, ["out", stride, n])
    return prog, launch


def test_disjoint_ctas_proven_symbolically() -> None:
    prog, launch = _strided(32)
    r = check_kernel(prog, launch, grid="symbolic")
    assert r.verdict == "race_free", r.findings
    assert r.stats["grid_method"] == "symbolic"
    # not vacuous: the bounds shown on intervals (grid_numbers.in_bounds), the rest of the proof by Z3
    assert r.stats["bounds_by_numbers"] >= 1 and r.stats["z3_queries"] >= 1, r.stats
    assert any("proven for ALL CTAs" in a and "no intra-CTA race on global memory" in a for a in r.assumptions)


def test_intra_cta_pairs_by_translation_of_cta_0() -> None:
    """out[32c + tid]: the address moves by 128 c bytes in every thread (Z3), and no two threads meet in
    CTA 0 (every row evaluated): no search over rows of threads is needed. When threads t and t + 16
    store the CTA id to one element (equal values: no race in CTA 0), that is left to the row search."""
    prog, launch = _strided(32)
    r = check_kernel(prog, launch, grid="symbolic")
    assert r.stats["intra_cta_by_translation"] == 1, r.stats
    assert any("no two threads of one CTA touch overlapping global bytes in any CTA" in a for a in r.assumptions)
    prog = load_program(ptx_parser.parse(STRIDED.replace("mad.lo.s32 %r4, %r2, %r1, %r3;",
                                                         "mad.lo.s32 %r4, %r2, %r1, %r3;\n  and.b32 %r4, %r4, -17;")
                                         .replace("[%rd3], %r3;", "[%rd3], %r2;"), "strided.ptx"))
    r = check_kernel(prog, launch, grid="symbolic")
    assert r.verdict == "race_free" and "intra_cta_by_translation" not in r.stats, (r.verdict, r.stats)
    assert any("checked on the executed CTAs only: intra-CTA races on global memory" in a for a in r.assumptions)


def test_one_element_overlap_between_ctas_has_two_cta_witness() -> None:
    prog, launch = _strided(31)
    r = check_kernel(prog, launch, grid="symbolic")
    assert r.verdict == "race", (r.verdict, r.stats)
    assert r.stats["grid_method"] == "symbolic (Z3 overlap validated on two concrete CTAs)"
    assert r.stats["validation_runs"] == 1  # the representatives (CTAs 0 and 7) do not overlap
    f = next(f for f in r.findings if f.kind == "race")
    a, b = f.sites[:2]
    assert a.cta != b.cta
    # CTA c's last thread and CTA c+1's first thread write element 31*(c+1)
    (ca, ta), (cb, tb) = sorted([(a.cta[0], a.thread[0]), (b.cta[0], b.thread[0])])
    assert cb == ca + 1 and ta == 31 and tb == 0
    e = check_kernel(prog, launch, grid="enumerate")
    assert e.verdict == "race"


def test_masked_tail_is_in_bounds_for_every_cta() -> None:
    prog, launch = _strided(32, ctas=8, n=8 * 32 - 5)  # guard depends on %ctaid: exact per lane
    r = check_kernel(prog, launch, grid="symbolic")
    assert r.verdict == "race_free" and r.stats["grid_method"] == "symbolic"
    prog, launch = _strided(33, ctas=8, n=10_000)  # the last CTAs write past the buffer
    r = check_kernel(prog, launch, grid="symbolic")
    assert r.verdict == "out_of_bounds"


def _suite(name: str, arch: str = "sm_80", **dims):
    c = get(name)
    if dims:
        c = dataclasses.replace(c, instances={**c.instances, "verify": {**c.instances["verify"], **dims}})
    comp = compile_contract(c, arch)
    prog = load_program(ptx_parser.parse(comp.ptx, f"{name}.ptx"), comp.entry)
    return prog, launch_for(c, comp, c.make_inputs("verify", "normal", 0), "verify")


@pytest.mark.parametrize("name,dims", [("relu", {"N": 2500}), ("softmax", {"M": 6}), ("gemm_fp16", {}),
                                        ("sigmoid", {})])
def test_suite_kernels_agree_with_enumeration(name: str, dims: dict) -> None:
    prog, launch = _suite(name, **dims)
    assert launch.num_ctas > 1
    r = check_kernel(prog, launch, grid="symbolic")
    assert r.stats["grid_method"] == "symbolic", r.stats["grid_method"]
    assert r.verdict == "race_free"
    assert check_kernel(prog, launch, grid="enumerate").verdict == "race_free"
    assert check_kernel(prog, launch).stats["grid_method"].startswith("enumerate")  # auto, small grid


def test_auto_uses_symbolic_on_large_grids() -> None:
    prog, launch = _suite("relu", N=1024 * 70 - 3)
    assert launch.num_ctas == 70
    r = check_kernel(prog, launch)
    assert r.verdict == "race_free" and r.stats["grid_method"] == "symbolic"


@triton.jit
def grouped_gemm_kernel(a, b, c, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                        BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, BUG: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    if BUG:  # two programs of a group get the same tile (and store different values)
        pid_n = (pid % num_pid_in_group) // (2 * group_size_m)
    else:
        pid_n = (pid % num_pid_in_group) // group_size_m
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        at = tl.load(a + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        bt = tl.load(b + kk[:, None] * N + rn[None, :], mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(at, bt, acc)
    if BUG:
        acc += pid
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


def _grouped(bad_group: bool = False) -> Contract:
    return Contract(
        name="grouped_gemm_test", description="grouped-ordering GEMM (test only)", kernel=grouped_gemm_kernel,
        args=[Tensor("a", "fp16", ("M", "K"), role="in"), Tensor("b", "fp16", ("K", "N"), role="in"),
              Tensor("c", "fp16", ("M", "N"), role="out"), Scalar("M", "i32", value="M"),
              Scalar("N", "i32", value="N"), Scalar("K", "i32", value="K")],
        constexprs={"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 32, "GROUP_M": 2, "BUG": int(bad_group)},
        # one warp holds the 16x16 tile alone: with 4 the accumulator is replicated across warps and each
        # stores it to shared memory in the epilogue (a PTX 8.7.1 race of equal values, see REPLICATED_STORE
        # in tests/test_check_suite.py), which is not what this test is about
        grid=lambda d: (cdiv(d["M"], 16) * cdiv(d["N"], 16), 1, 1), num_warps=1, num_stages=1,
        reference=lambda a, b, M, N, K: {"c": a.astype(np.float64) @ b.astype(np.float64)},
        instances={"verify": {"M": 80, "N": 48, "K": 40}, "bench": {"M": 80, "N": 48, "K": 40}},
        scale_by_abs_reference=True)


@pytest.mark.parametrize("bug", [False, True])
def test_grouped_ordering_matmul(bug: bool) -> None:
    c = _grouped(bug)
    comp = compile_contract(c, "sm_80", cache=False)
    prog = load_program(ptx_parser.parse(comp.ptx, "grouped.ptx"), comp.entry)
    launch = launch_for(c, comp, c.make_inputs("verify", "normal", 0), "verify")
    assert launch.num_ctas == 15
    r = check_kernel(prog, launch, grid="symbolic")
    assert r.stats["grid_method"].startswith("symbolic"), r.stats["grid_method"]
    if not bug:
        assert r.verdict == "race_free", (r.verdict, r.findings)
        assert r.stats["grid_method"] == "symbolic"
        return
    assert r.verdict == "race", r.verdict
    f = next(f for f in r.findings if f.kind == "race")
    assert f.sites[0].cta != f.sites[1].cta
    assert check_kernel(prog, launch, grid="enumerate").verdict == "race"


def test_enumerate_and_bad_option() -> None:
    prog, launch = _strided(32)
    assert check_kernel(prog, launch, grid="enumerate").stats["grid_method"] == "enumerate"
    with pytest.raises(ValueError):
        check_kernel(prog, launch, grid="everything")


SAME_ADDRESS = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry same(.param .u64 out)
{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %tid.x;
  setp.eq.u32 %p1, %r2, 0;
  @%p1 st.global.u32 [%rd1+8], %r1;
  ret;
}
"""

BRANCH_ON_CTAID = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry branchy(.param .u64 out)
{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra DONE;
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r2;
DONE:
  ret;
}
"""


def test_every_cta_writing_one_address_is_a_race() -> None:
    prog = load_program(ptx_parser.parse(SAME_ADDRESS, "same.ptx"))
    launch = Launch((5,), (32,), {"out": np.zeros(8, np.uint32)}, ["out"])
    r = check_kernel(prog, launch, grid="symbolic")
    assert r.verdict == "race" and r.stats["grid_method"].startswith("symbolic")
    f = next(f for f in r.findings if f.kind == "race")
    assert f.sites[0].cta != f.sites[1].cta and f.sites[0].thread == f.sites[1].thread == (0, 0, 0)


def test_branch_on_ctaid_over_straight_code_is_a_guard() -> None:
    """CUDA's `if (blockIdx.x == 0) {...}` as a forward branch: its code is proved as guarded by the
    branch's condition for every CTA (CTA 0, executed, ran it with every thread)."""
    prog = load_program(ptx_parser.parse(BRANCH_ON_CTAID, "branchy.ptx"))
    launch = Launch((4,), (32,), {"out": np.zeros(32, np.uint32)}, ["out"])
    r = check_kernel(prog, launch, grid="symbolic")
    assert r.verdict == "race_free" and r.stats["grid_method"] == "symbolic", r.stats
    assert any("except bra at branchy.ptx:14:" in a for a in r.assumptions), r.assumptions


def test_branch_on_ctaid_no_executed_cta_takes_falls_back_to_enumeration() -> None:
    """Only CTA 1 runs the guarded code; the executed CTAs (0 and 3) skip it: nothing was recorded
    for its accesses, so the grid is enumerated."""
    text = BRANCH_ON_CTAID.replace("setp.ne.u32 %p1, %r1, 0;", "setp.ne.u32 %p1, %r1, 1;")
    prog = load_program(ptx_parser.parse(text, "branchy.ptx"))
    launch = Launch((4,), (32,), {"out": np.zeros(32, np.uint32)}, ["out"])
    r = check_kernel(prog, launch, grid="symbolic")
    assert r.verdict == "race_free"
    assert r.stats["grid_method"].startswith("enumerate (symbolic not applicable: the code after bra"), r.stats
    assert "was not run by thread(s)" in r.stats["grid_method"]
    assert r.notes[0].startswith("symbolic grid not applicable") and "all 4 CTAs were executed" in r.notes[0]


def test_branch_on_ctaid_around_a_barrier_falls_back_to_enumeration() -> None:
    text = BRANCH_ON_CTAID.replace("  st.global.u32 [%rd3], %r2;", "  bar.sync 0;\n  st.global.u32 [%rd3], %r2;")
    prog = load_program(ptx_parser.parse(text, "branchy.ptx"))
    launch = Launch((4,), (32,), {"out": np.zeros(32, np.uint32)}, ["out"])
    r = check_kernel(prog, launch, grid="symbolic")
    assert r.stats["grid_method"].startswith("enumerate (symbolic not applicable: the guard of bra")
    assert "depends on %ctaid" in r.stats["grid_method"]



REGRESSION = Path(__file__).resolve().parents[1] / "regression"


@pytest.mark.parametrize("case, verdict, method", [
    ("grid_shared_flag_two_warps_race", "race", "symbolic (finding in a representative CTA before the shadow stopped)"),
    ("grid_shared_flag_one_warp", "race_free", "enumerate (symbolic not applicable: the guard of bra"),
])
def test_finding_before_the_shadow_stops_is_reported_without_enumerating(case: str, verdict: str, method: str) -> None:
    """The shadow stops at a branch on a flag loaded from shared memory. The shared race before it (two
    warps store the flag) is in the representative CTAs' concrete run: reported as it is, the 128 CTAs
    not enumerated. Without a race there (one warp stores it) nothing is decided: the grid is enumerated."""
    r = check_file(REGRESSION / f"{case}.ptx")
    assert r.verdict == verdict and r.stats["grid_method"].startswith(method), (r.verdict, r.stats["grid_method"])
    if verdict == "race":
        f = r.findings[0]
        assert f.kind == "race" and "two warps write the same value" in f.message
        assert {s.cta for s in f.sites} <= {(0, 0, 0), (127, 0, 0)}  # one of the representative CTAs
        assert r.notes[0].startswith("the representative CTAs ran concretely up to where the symbolic grid stopped")
    else:
        assert "all 128 CTAs were executed" in r.notes[0]



def test_a_small_grid_enumerates_past_the_shadow_s_stop_for_a_complete_report() -> None:
    """grid_shared_flag_two_warps_race on a grid of 4 CTAs, with a loop first and its store one element on: the symbolic pair is tried (kernel.py, small grid of loops), and its
    shadow stops at the branch on the shared flag after the flag's race (as in the 128-CTA case above).
    A small grid is enumerated then, so the out-of-bounds store after the branch (index + 1: the last
    thread of the last CTA writes one element past `out`) is reported with the race, not cut off."""
    src = (REGRESSION / "grid_shared_flag_two_warps_race.ptx").read_text()
    src = src.replace("\tmov.u32 %r1, %tid.x;\n", "\tmov.u32 %r1, %tid.x;\n\tmov.u32 %r5, 0;\nLOOP:\n\tadd.u32 %r5, %r5, 1;\n"
                      "\tsetp.lt.u32 %p2, %r5, 8;\n\t@%p2 bra LOOP;\n")  # a loop: the small grid is tried symbolically
    src = src.replace("\tadd.s32 %r4, %r3, %r1;\n", "\tadd.s32 %r4, %r3, %r1;\n\tadd.s32 %r4, %r4, 1;\n")  # one past
    prog = load_program(ptx_parser.parse(src, "two_bugs.ptx"))
    launch = Launch((4,), (64,), {"out": np.zeros(256, np.int32)}, ["out"])
    r = check_kernel(prog, launch)
    kinds = sorted({f.kind.value for f in r.findings})
    assert kinds == ["out_of_bounds", "race"], [f.message for f in r.findings]
    assert r.stats["grid_method"].startswith("enumerate"), r.stats["grid_method"]
    assert not any("the rest of the launch was not checked" in n for n in r.notes)


PACKED = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry packed(.param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %tid.x;
  shl.b32 %r3, %r1, 5;
  mov.b64 %rd2, {%r3, %r2};
  mov.b64 {%r4, %r5}, %rd2;
  add.s32 %r6, %r4, %r5;
  mul.wide.u32 %rd3, %r6, 4;
  add.s64 %rd4, %rd1, %rd3;
  st.global.u32 [%rd4], %r5;
  ret;
}
"""


@pytest.mark.parametrize("ctas,n,verdict", [(6, 6 * 32, "race_free"), (6, 6 * 32 - 1, "out_of_bounds")])
def test_pack_unpack_keeps_ctaid(ctas: int, n: int, verdict: str) -> None:
    prog = load_program(ptx_parser.parse(PACKED, "packed.ptx"))
    launch = Launch((ctas,), (32,), {"out": np.zeros(n, np.uint32)}, ["out"])
    r = check_kernel(prog, launch, grid="symbolic")
    assert r.verdict == verdict and r.stats["grid_method"].startswith("symbolic"), (r.verdict, r.stats)


PERMUTED = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry permuted(.param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %tid.x;
  mul.lo.u32 %r3, %r1, 5;
  rem.u32 %r4, %r3, 8;
  shl.b32 %r5, %r4, 5;
  add.s32 %r6, %r5, %r2;
  mul.wide.u32 %rd3, %r6, 4;
  add.s64 %rd4, %rd1, %rd3;
  st.global.u32 [%rd4], %r2;
  ret;
}
"""


def test_out_of_bounds_in_a_middle_cta_found_by_z3() -> None:
    prog = load_program(ptx_parser.parse(PERMUTED, "permuted.ptx"))
    # CTA c writes slot 5c mod 8: CTAs 0..6 use slots 0,5,2,7,4,1,6; slot 7 (CTA 3) is past 7 slots
    launch = Launch((7,), (32,), {"out": np.zeros(7 * 32, np.uint32)}, ["out"])
    r = check_kernel(prog, launch, grid="symbolic")
    assert r.verdict == "out_of_bounds", (r.verdict, r.stats)
    assert r.stats["grid_method"] == "symbolic (bounds witness validated concretely)"
    assert r.findings[0].sites[0].cta == (3, 0, 0)
    launch = Launch((7,), (32,), {"out": np.zeros(8 * 32, np.uint32)}, ["out"])
    r = check_kernel(prog, launch, grid="symbolic")
    assert r.verdict == "race_free" and r.stats["grid_method"] == "symbolic"


def _model_offsets(shadow, glob, c: tuple[int, int, int]) -> set[tuple[int, int]]:
    """(pc, first byte offset) of every global access the shadow's model gives CTA `c` (guards true)."""
    import z3

    from symexec.check.grid import _n_q, _z3

    out = set()
    env = {("c", i): z3.BitVecVal(c[i], 32) for i in range(3)}
    for a in shadow.accesses:
        qs = {**_n_q(a.addr), **(_n_q(a.guard) if a.guard is not None else {})}
        base = glob.allocations[a.buffer].base
        for row in a.rows:
            e = dict(env)
            for i, w in qs.items():
                e[("q", i)] = z3.BitVecVal(int(row[i]), w)
            if a.guard is not None and not z3.is_true(z3.simplify(_z3(a.guard, e))):
                continue
            addr = z3.simplify(_z3(a.addr, e) + int(row[-1])).as_long()
            out.add((a.pc, addr - base))
    return out


@pytest.mark.parametrize("name,dims", [("relu", {"N": 5000}), ("softmax", {"M": 7}), ("gemm_fp16", {"M": 400, "N": 208})])
def test_shadow_model_covers_concrete_accesses_of_other_ctas(name: str, dims: dict) -> None:
    """Soundness of the shadow: for CTAs that were not executed with it, every global access the
    concrete run makes is predicted (same pc, same bytes) by the expressions at that CTA id."""
    from symexec.check import new_run, run_checked
    from symexec.check.grid_shadow import Shadow
    from symexec.events import MemSpace

    prog, launch = _suite(name, **dims)
    last = tuple(g - 1 for g in launch.grid)
    sh = Shadow(prog)
    run = new_run(prog, launch, [(0, 0, 0), last], (sh,))
    assert run_checked(run, prog, launch).verdict == "race_free" and sh.failed is None
    ctas = [(x, y, 0) for x in range(launch.grid[0]) for y in range(launch.grid[1])]
    for c in ctas[1:4] + ctas[-2:-1]:
        conc = new_run(prog, launch, [c])
        conc.state.log = []
        run_checked(conc, prog, launch)
        seen = {(e.pc, int(s)) for e in conc.state.log if e.buffer.space is MemSpace.GLOBAL for s in e.flat[:, 0]}
        predicted = _model_offsets(sh, run.machine.glob, c)
        assert seen and seen <= predicted, (c, sorted(seen - predicted)[:5])


INTRA_IN_ONE_CTA = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry intra(.param .u64 out)
{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %tid.x;
  setp.eq.u32 %p1, %r1, 3;
  selp.b32 %r3, 30, 31, %p1;
  and.b32 %r4, %r2, %r3;
  shl.b32 %r5, %r1, 5;
  add.s32 %r6, %r5, %r4;
  mul.wide.u32 %rd2, %r6, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r2;
  ret;
}
"""


def test_intra_cta_race_in_one_middle_cta() -> None:
    """Only CTA 3 (not a representative) has two threads storing to one element."""
    prog = load_program(ptx_parser.parse(INTRA_IN_ONE_CTA, "intra.ptx"))
    launch = Launch((7,), (32,), {"out": np.zeros(7 * 32, np.uint32)}, ["out"])
    r = check_kernel(prog, launch, grid="symbolic")
    assert r.verdict == "race", (r.verdict, r.stats)
    assert r.stats["grid_method"] == "symbolic (Z3 intra-CTA overlap validated concretely)"
    f = next(f for f in r.findings if f.kind == "race")
    assert f.sites[0].cta == f.sites[1].cta == (3, 0, 0)
    assert check_kernel(prog, launch, grid="enumerate").verdict == "race"


PURE_REGION = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry pure(.param .u64 out)
{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %tid.x;
  shl.b32 %r4, %r1, 5;
  add.s32 %r5, %r4, %r2;
  mov.u32 %r3, 5;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 bra SKIP;
  add.u32 %r3, %r3, 1;
  ADDRESS_EDIT
SKIP:
  mul.wide.u32 %rd2, %r5, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r3;
  ret;
}
"""


@pytest.mark.parametrize("edit,method", [("", "symbolic"), ("add.u32 %r5, %r5, 1;", "enumerate")])
def test_register_only_region_chosen_by_ctaid(edit: str, method: str) -> None:
    """A %ctaid-dependent choice between register-only paths keeps the symbolic mode; registers the
    region writes are unknown afterwards, so an address computed there falls back to enumeration."""
    prog = load_program(ptx_parser.parse(PURE_REGION.replace("ADDRESS_EDIT", edit), "pure.ptx"))
    launch = Launch((6,), (32,), {"out": np.zeros(6 * 32 + 1, np.uint32)}, ["out"])
    r = check_kernel(prog, launch, grid="symbolic")
    assert r.verdict == "race_free" and r.stats["grid_method"].split(" ")[0] == method, r.stats["grid_method"]


TRIP = Path(__file__).resolve().parents[1] / "regression" / "grid_ctaid_trip_count_uniform_ok.ptx"


def test_ctaid_dependent_trip_count_the_same_in_every_cta_is_symbolic() -> None:
    """len = min(1024, L - 1024 c): the loop's entry and back-edge guards depend on %ctaid; Z3 proves
    every CTA decides them as CTAs 0 and 99 did (the back edge per summarised iteration t)."""
    r = check_file(TRIP)
    assert r.verdict == "race_free" and r.stats["grid_method"] == "symbolic", r.stats
    assert r.stats["loops_summarised"] and r.stats["uniform_guards"] >= 2
    assert any("proven (Z3) to be decided in every CTA" in a and "uniform_ok.ptx:37:" in a for a in r.assumptions)


@pytest.mark.parametrize("length, cta", [("992", 37), ("1024", 0)])
def test_ctaid_dependent_trip_count_differing_in_one_cta_falls_back(tmp_path, length: str, cta: int) -> None:
    """CTA 37 alone runs 31 iterations (its back edge differs inside the summarised iterations): every CTA
    is enumerated. Or the trip count is 0 in executed CTA 0 only, whose entry guard then skips the loop:
    CTA 99, which enters, runs alone and the entry guard is a reach condition (grid_shadow `_ctaid_entry`)."""
    p = _edited(tmp_path, TRIP, "trip.ptx",
                ("\tmov.u32 %r11, 1024;", f"\tsetp.eq.u32 %p4, %r2, {cta};\n\tselp.s32 %r11, {length}, 1024, %p4;"),
                *([(f"selp.s32 %r11, {length}, 1024", "selp.s32 %r11, 0, 1024")] if cta == 0 else []))
    r = check_file(p)
    assert r.verdict == "race_free"
    method = r.stats["grid_method"]
    if cta:
        assert method.startswith("enumerate (symbolic not applicable: the guard of bra"), r.stats
        assert "some CTA decides it otherwise than the executed ones" in method, r.stats
    else:  # CTA 0's entry guard skips the loop: covered by running CTA 99, which enters, alone
        assert method == "symbolic", r.stats
        assert "CTAs [(99, 0, 0)] executed" in r.assumptions[0], r.assumptions
        assert any("and the entry guards passed before it" in a for a in r.assumptions), r.assumptions


CAUSAL = Path(__file__).resolve().parents[1] / "regression"


def _summaries_made(monkeypatch) -> list[list]:
    """Per run of the checker (LoopSummariser.finish), the loop summaries it made, in run order."""
    made: list[list] = []
    finish = loops.LoopSummariser.finish
    monkeypatch.setattr(loops.LoopSummariser, "finish", lambda self: (finish(self), made.append(self.summaries)))
    return made


def _edited(tmp_path: Path, source: Path, name: str, *edits: tuple[str, str]) -> Path:
    """`source` (a regression case) with each (old, new) edit applied, written to tmp_path / name. Each `old`
    must occur: an edit the case no longer matches fails here instead of checking the unedited kernel."""
    text = source.read_text()
    for old, new in edits:
        assert old in text, f"{source.name}: edit target not found: {old!r}"
        text = text.replace(old, new)
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("case", ["grid_ctaid_causal_loop_ok", "grid_ctaid_causal_loop_next_row_race",
                                  "grid_ctaid_causal_loop_last_cta_oob", "grid_ctaid_long_ctas_race",
                                  "grid_ctaid_few_trip_counts_ok", "grid_ctaid_middle_cta_oob"])
def test_ctaid_dependent_trip_count_runs_the_longest_cta_alone(case: str) -> None:
    """A loop runs %ctaid + 1 iterations (or (c >> 6) + 1; the race twin %ctaid + 2): CTA 0 leaves it first
    while the last CTA goes on. The last CTA runs alone (grid_loops.py): each access is proved under the
    back edges taken before it, the summarised period's under the previous period's, and no CTA goes on
    where it leaves; the kernel keeps no CTA-local state. Races and out-of-bounds accesses of CTAs that leave
    earlier (CTA 37 only, or only CTAs 50 .. 65) are found by Z3 and shown by running those CTAs."""
    r = check_file(CAUSAL / f"{case}.ptx")
    assert r.verdict.split(":")[0] == {"ok": "race_free", "race": "race", "oob": "out_of_bounds"}[case.rsplit("_", 1)[1]]
    method = r.stats["grid_method"]
    assert method.startswith("symbolic"), method
    if case.endswith("_ok"):
        assert "CTAs [(65, 0, 0)] executed" in r.assumptions[0] or "CTAs [(255, 0, 0)] executed" in r.assumptions[0]
        assert any("ran alone; every CTA runs a prefix of its iterations" in a for a in r.assumptions), r.assumptions
    if case == "grid_ctaid_causal_loop_ok":
        assert r.stats["loops_summarised"], r.stats  # the reach conditions of a summarised period are used
    if case == "grid_ctaid_middle_cta_oob":
        assert {s.cta for s in r.findings[0].sites} == {(37, 0, 0)}, r.findings[0].sites
    if case == "grid_ctaid_long_ctas_race":
        assert all(s.cta[0] >= 50 for s in r.findings[0].sites), r.findings[0].sites


def test_ctaid_dependent_trip_count_longer_in_a_middle_cta_falls_back(tmp_path) -> None:
    """CTA 37 runs 100 iterations, longer than the last CTA (66), which runs alone: the obligation at its
    exit (every CTA that reached that back edge leaves there too) fails, the grid is enumerated, and the
    race and out-of-bounds reads of CTA 37's extra iterations are found there."""
    p = _edited(tmp_path, CAUSAL / "grid_ctaid_causal_loop_ok.ptx", "longer37.ptx",
                ("\tmov.u32 %r13, %r2;              // the last key block: c",
                 "\tsetp.eq.u32 %p2, %r2, 37;\n\tselp.b32 %r13, 99, %r2, %p2;"))
    r = check_file(p)
    assert r.verdict.split(":")[0] in ("race", "out_of_bounds"), r.verdict
    method = r.stats["grid_method"]
    assert method.startswith("enumerate (symbolic not applicable: the guard of bra at "), method
    assert "longer37.ptx:46:7" in method and "some CTA decides it otherwise" in method, method
    assert any(s.cta == (37, 0, 0) for s in r.findings[0].sites), r.findings[0].sites


@pytest.mark.parametrize("after", [False, True])
def test_ctaid_dependent_loop_left_inside_a_followed_period(tmp_path, after: bool) -> None:
    """160 CTAs, trip count (c >> 5) + 1: CTA 159 runs 5 iterations and leaves the loop inside the period
    the loop summariser follows (not summarised). The exit is an obligation at once and the loop's
    registers are unknown from there: symbolic and race_free, unless an access after the loop uses one
    (the last address, `after`), which then falls back to enumeration, naming that access."""
    p = _edited(tmp_path, CAUSAL / "grid_ctaid_few_trip_counts_ok.ptx", "five.ptx",
                ('"grid": [256]', '"grid": [160]'), ('"shape": [128]', '"shape": [256]'),
                ('"shape": [32768]', '"shape": [40960]'), ("shr.u32 %r13, %r2, 6;", "shr.u32 %r13, %r2, 5;"),
                ("shl.b32 %r5, %r2, 2;", "shl.b32 %r5, %r2, 3;"),  # an eight-block slot per CTA
                *([("\t@%p1 bra LOOP;\n\tret;", "\t@%p1 bra LOOP;\n\tst.global.u32 [%rd6], %r6;\n\tret;")]
                  if after else []))
    r = check_file(p)
    assert r.verdict == "race_free", r.verdict
    method = r.stats["grid_method"]
    if after:
        assert method.startswith("enumerate (symbolic not applicable: the loop at "), method
        assert "with CTA (159, 0, 0) run alone: the address of st.global.u32 at" in method, method
    else:
        assert method == "symbolic", method
        assert any("the loop ended within the period followed" in n for n in r.notes), r.notes


def test_ctaid_dependent_break_inside_the_loop_falls_back() -> None:
    """A break on %ctaid inside the loop (CTAs 40 .. 49 leave at j = 40): not a trip of the back edge;
    the executed CTA 65 does not take it, Z3 finds CTAs that do, and the grid is enumerated (race_free)."""
    r = check_file(CAUSAL / "grid_ctaid_loop_break_ok.ptx")
    assert r.verdict == "race_free", r.verdict
    method = r.stats["grid_method"]
    assert method.startswith("enumerate (symbolic not applicable: the guard of bra at "), method
    assert "grid_ctaid_loop_break_ok.ptx:48:7" in method and "some CTA decides it otherwise" in method, method


@pytest.mark.parametrize("case", ["grid_ctaid_trip_pattern_shared_ok", "grid_ctaid_trip_pattern_shared_race"])
def test_ctaid_dependent_trip_count_with_shared_memory_runs_each_pattern(case: str) -> None:
    """Shared memory and barriers: the last CTA (three iterations) runs alone for the proofs, and one CTA of
    each other trip pattern (one and two iterations) runs concretely; the race is only in the two-iteration
    CTAs (64 .. 127), and is found there."""
    r = check_file(CAUSAL / f"{case}.ptx")
    method = r.stats["grid_method"]
    if case.endswith("_ok"):
        assert r.verdict == "race_free" and method == "symbolic", (r.verdict, method)
        assert r.stats["trip_patterns"] == 3, r.stats
        assert any("3 distinct patterns of back edges taken" in a and "CTAs [(0, 0, 0), (64, 0, 0), (191, 0, 0)] "
                   "executed concretely" in a for a in r.assumptions), r.assumptions
    else:
        assert r.verdict == "race", r.verdict
        assert method == "symbolic (finding in a CTA run for its trip count)", method
        assert {s.cta for s in r.findings[0].sites} == {(64, 0, 0)}, r.findings[0].sites


def test_ctaid_dependent_trip_count_with_shared_memory_shares_the_longest_run(tmp_path) -> None:
    """With CTA-local state (a barrier here) 66 CTAs each leave the loop at another iteration. The executed CTA 65's
    loop is summarised (period 1 from iteration 4) and its last period differs only in leaving, so CTAs 4 .. 64,
    which leave at an earlier period, share its run (grid.py _shares_run); CTAs 0 .. 3 leave before the summary
    (their warm-up back edges differ) and run concretely, one each: 5 CTAs run instead of enumerating 66
    patterns (as before)."""
    p = _edited(tmp_path, CAUSAL / "grid_ctaid_causal_loop_ok.ptx", "bar.ptx",
                ("\tadd.u32 %r6, %r6, 1;\n", "\tbar.sync 0;\n\tadd.u32 %r6, %r6, 1;\n"))
    r = check_file(p)
    assert r.verdict == "race_free", r.verdict
    assert r.stats["grid_method"] == "symbolic", r.stats["grid_method"]
    assert r.stats["trip_patterns"] == 5 and r.stats["early_leavers"] == 61, r.stats
    assert any("CTAs [(0, 0, 0), (1, 0, 0), (2, 0, 0), (3, 0, 0), (65, 0, 0)] executed concretely" in a
               and "61 CTAs whose pattern differs from CTA (65, 0, 0)'s only in leaving a summarised loop" in a
               for a in r.assumptions), r.assumptions


@pytest.mark.parametrize("case", ["grid_ctaid_trip_pattern_shared_guard_ok",
                                  "grid_ctaid_trip_pattern_shared_guard_race"])
def test_shared_access_guarded_on_ctaid_is_an_obligation_under_trip_patterns(case: str) -> None:
    """After a loop on %ctaid (three trip patterns, shared memory: one CTA of each runs), a shared store whose guard
    depends on %ctaid (the writer is thread (c == N)) at an address the same in every CTA: the guard becomes an
    obligation that every CTA decides it per thread as the executed CTA 191 did (grid_shadow
    `_shared_guard_uniform`) instead of ending the symbolic grid. N = 1000 (no such CTA): proved, symbolic
    race_free (before: enumerated). N = 100: Z3 refutes the obligation (CTA 100's writer is thread 1), the grid is
    enumerated and CTA 100's race, which none of the pattern CTAs 0, 64, 191 has, is found."""
    r = check_file(CAUSAL / f"{case}.ptx")
    method = r.stats["grid_method"]
    if case.endswith("_ok"):
        assert r.verdict == "race_free" and method == "symbolic", (r.verdict, method)
        assert r.stats["trip_patterns"] == 3 and r.stats["uniform_guards"] >= 1, r.stats
    else:
        assert r.verdict == "race", r.verdict
        assert method.startswith("enumerate (symbolic not applicable: the guard of st.shared.u32 at "), method
        assert "some CTA decides it otherwise than the executed ones" in method, method
        assert {s.cta for f in r.findings for s in f.sites} == {(100, 0, 0)}, [f.sites for f in r.findings]


@pytest.mark.parametrize("case", ["grid_ctaid_trip_pattern_body_register_ok",
                                  "grid_ctaid_trip_pattern_body_register_global_race"])
def test_register_written_in_a_loop_on_ctaid_is_known_within_a_trip_pattern(case: str) -> None:
    """After a loop on %ctaid (three trip patterns, shared memory), %r5 = smem + 4 * (j & 1), computed in the body
    from %ctaid-free values only, addresses a shared read: it differs between the patterns but not within one, so
    the run of one CTA per pattern covers the read (grid_shadow `_pattern_unknown`): symbolic race_free (before:
    enumerated). The twin also stores to a global word picked by j & 1: for a global address the register is
    still unknown (CTAs of other patterns hold other values; taking the last CTA's would hide the race of CTAs
    64 + k and 128 + k), the grid is enumerated and the race found."""
    r = check_file(CAUSAL / f"{case}.ptx")
    method = r.stats["grid_method"]
    if case.endswith("_ok"):
        assert r.verdict == "race_free" and method == "symbolic", (r.verdict, method)
        assert r.stats["trip_patterns"] == 3, r.stats
    else:
        assert r.verdict == "race", r.verdict
        assert method.startswith("enumerate (symbolic not applicable: the loop at "), method
        assert "with CTA (191, 0, 0) run alone: the address of st.global.u32 at " in method, method
        assert {s.cta[0] >> 6 for f in r.findings for s in f.sites} == {1, 2}, [f.sites for f in r.findings]


@pytest.mark.parametrize("case", ["grid_ctaid_causal_loop_ok", "grid_ctaid_causal_loop_next_row_race"])
def test_forward_branch_on_ctaid_inside_the_loop_runs_the_last_cta_alone(tmp_path, case: str) -> None:
    """The causal loop (trip count %ctaid + 1; the twin %ctaid + 2) with a block that the last iteration skips, a
    barrier in it (as flash_attention skips the next tile's MMA issue): the representatives (CTAs 0 and 65) part
    inside the loop at that forward branch, not at its back edge (CTA 0's first iteration is its last). The last
    CTA now runs alone (grid_shadow `_inside_loop`; before, the grid was enumerated at once). The barrier is
    CTA-local state and every CTA leaves at another iteration, 66 trip patterns, more than 8 (and the branch's
    obligation would fail: CTA c decides it otherwise in its last iteration c, the obstacle left,
    bench/results/i10fa100-2026-12-07s42), so the grid is enumerated, and the twin's race is found there."""
    p = _edited(tmp_path, CAUSAL / f"{case}.ptx", "skip.ptx",
                ("\tadd.u32 %r6, %r6, 1;\n", "\tsetp.ge.u32 %p3, %r6, %r13;\n\t@%p3 bra SKIP;\n\tbar.sync 0;\nSKIP:\n"
                 "\tadd.u32 %r6, %r6, 1;\n"))
    r = check_file(p)
    method = r.stats["grid_method"]
    assert method.startswith("enumerate (symbolic not applicable: the guard of bra at "), method
    assert "the executed CTAs decide it differently" in method, method
    assert "with CTA (65, 0, 0) run alone: 66 distinct trip patterns over the grid, more than 8" in method, method
    assert r.verdict == ("race_free" if case.endswith("_ok") else "race"), r.verdict


@pytest.mark.parametrize("case", ["grid_ctaid_early_leavers_share_run_ok", "grid_ctaid_early_leavers_share_run_race"])
def test_ctas_leaving_a_summarised_loop_earlier_share_the_run(case: str) -> None:
    """32 trip counts, each at least 6 (past the 4 warm-up iterations): every CTA shares the run of CTA 255, one
    pattern; the race after the loop (the twin) is every CTA's and found in that run."""
    r = check_file(CAUSAL / f"{case}.ptx")
    if case.endswith("_ok"):
        assert r.verdict == "race_free" and r.stats["grid_method"] == "symbolic", (r.verdict, r.stats["grid_method"])
        assert r.stats["trip_patterns"] == 1 and r.stats["early_leavers"] == 248, r.stats
    else:
        assert r.verdict == "race", r.verdict
        assert r.stats["grid_method"] == "symbolic (finding in a representative CTA)", r.stats["grid_method"]
        assert {s.cta for s in r.findings[0].sites} == {(255, 0, 0)}, r.findings[0].sites


def test_loop_of_period_two_still_counts_one_pattern_per_trip_count() -> None:
    """A loop whose work alternates between iterations (period 2): what a CTA leaves in shared memory depends on
    the parity of its trip count, so CTAs that leave earlier do not share the executed CTA's run (its last
    iteration is odd and race-free); 32 patterns, more than 8: enumerated, and the race of the CTAs whose last
    iteration is even is found."""
    r = check_file(CAUSAL / "grid_ctaid_early_leavers_parity_race.ptx")
    assert r.verdict == "race", r.verdict
    method = r.stats["grid_method"]
    assert method.startswith("enumerate (symbolic not applicable: the loop at "), method
    assert "32 distinct trip patterns over the grid, more than 8" in method, method
    assert all((s.cta[0] >> 3) % 2 == 0 for f in r.findings for s in f.sites), [f.sites for f in r.findings]


@pytest.mark.parametrize("case", ["grid_ctaid_early_leavers_period2_share_run_ok",
                                  "grid_ctaid_early_leavers_period2_other_back_edge_race"])
def test_ctas_leaving_a_period_two_loop_at_the_same_back_edge_share_the_run(case: str) -> None:
    """A loop of period 2 (thread 0 writes in its even iterations): CTAs with an even trip count leave it at the
    same back edge of a period as the longest CTA, from the same state, and share its run (loops.py
    _leaves_after with P = 2, grid.py _shares_run); CTAs 0 .. 7 leave before the summary (their own pattern).
    In the twin CTAs 40 .. 47 run one iteration more and leave at the other back edge of a period: not shared,
    one of them runs for its trip pattern and its race (last iteration even) is found there."""
    r = check_file(CAUSAL / f"{case}.ptx")
    if case.endswith("_ok"):
        assert r.verdict == "race_free" and r.stats["grid_method"] == "symbolic", (r.verdict, r.stats["grid_method"])
        assert r.stats["trip_patterns"] == 2 and r.stats["early_leavers"] == 240, r.stats
        assert [s["period"] for s in r.stats["loops_summarised"]] == [2], r.stats["loops_summarised"]
    else:
        assert r.verdict == "race", r.verdict
        assert r.stats["grid_method"] == "symbolic (finding in a CTA run for its trip count)", r.stats["grid_method"]
        assert {s.cta for f in r.findings for s in f.sites} == {(40, 0, 0)}, [f.sites for f in r.findings]


@pytest.mark.parametrize("case", ["grid_ctaid_wgmma_a_regs_ok", "grid_ctaid_wgmma_a_regs_written_after_fence_ub"])
def test_wgmma_a_registers_on_ctaid_share_a_trip_pattern_unless_written_after_the_fence(case: str) -> None:
    """wgmma A registers whose values depend on %ctaid, in a loop whose trip count does too: written before the
    wgmma.fence only, they are data and CTAs of one trip pattern share a run (grid_wgmma.py); written after the
    fence (the value the run's CTA writes is the one it held, the other CTAs of its pattern write another), the
    check's comparison with the fence's snapshot may differ between them: enumerated, the write found."""
    r = check_file(CAUSAL / f"{case}.ptx")
    method = r.stats["grid_method"]
    if case.endswith("_ok"):
        assert r.verdict == "race_free" and method == "symbolic", (r.verdict, method)
        assert r.stats["trip_patterns"] == 2, r.stats
    else:
        assert r.verdict.startswith("undefined_behavior"), r.verdict
        assert method.startswith("enumerate (symbolic not applicable: "), method
        assert "(register %r21, whose value depends on %ctaid, written after the last wgmma.fence" in method, method


def test_last_period_that_differs_in_more_than_leaving_keeps_the_patterns_apart() -> None:
    """The longest CTAs' last iteration (j = 36) ends with an extra barrier, which orders its reads before the write
    after the loop: their run is race-free, every shorter CTA races. Their last period differs from period 0 in that
    branch, not only in leaving (loops.py _leaves_after), so the shorter CTAs do not share the run: enumerated, the
    race found in a shorter CTA. (With only the back edge compared at t = n the verdict was race_free.)"""
    r = check_file(CAUSAL / "grid_ctaid_early_leavers_last_period_differs_race.ptx")
    assert r.verdict == "race", r.verdict
    method = r.stats["grid_method"]
    assert method.startswith("enumerate (symbolic not applicable: the loop at "), method
    assert "32 distinct trip patterns over the grid, more than 8" in method, method
    assert all(s.cta[0] < 248 for f in r.findings for s in f.sites), [f.sites for f in r.findings]


@pytest.mark.parametrize("sig, want", [
    # executed CTA last: takes every back edge of the block (columns 1 .. 4), column 0 a warm-up back edge
    ([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]], [True, True, True]),  # earlier leavers share
    ([[1, 1, 0, 1, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]], [False, True, True]),  # taken again after leaving
    ([[0, 1, 1, 0, 0], [1, 1, 1, 1, 1], [0, 0, 0, 0, 0]], [False, True, False]),  # a warm-up back edge differs
])
def test_shares_run_accepts_only_a_prefix_of_the_summarised_periods(sig, want) -> None:
    from symexec.check.grid import _shares_run
    a = np.array(sig, bool)
    assert _shares_run(a, [(slice(1, 5), 1, 0)], 1).tolist() == want
    assert _shares_run(a, [], 1).tolist() == [False, True, False]  # no such loop: the executed CTA's pattern only


def test_time_limit_passing_during_the_z3_proof_falls_back(monkeypatch) -> None:
    """Z3 is not interrupted by the run's time limit: each query is bounded by what is left of it,
    and once it has passed the proof stops and the verdict reports the limit (no enumeration after it)."""
    import time

    from symexec import time_limit
    from symexec.check import grid as grid_mod

    prog = load_program(ptx_parser.parse(TRIP.read_text(), "trip.ptx"))
    prove = grid_mod._prove

    def late(*a, **k):
        time.sleep(1.5)
        return prove(*a, **k)

    monkeypatch.setattr(grid_mod, "_prove", late)
    with time_limit(1):
        r = check_kernel(prog, Launch((100,), (32,), {"out": np.zeros(102400, np.int32)}, ["out", 102400]))
    assert r.verdict.startswith("inconclusive: time limit of 1 s"), r.verdict
    assert "the time limit passed during the Z3 proof" in r.stats["grid_method"]
    assert r.stats["grid_method"].startswith("none (time limit during the symbolic grid")  # not enumerated after it


@pytest.mark.parametrize("stem", ["loop_shared_staging_ok", "loop_nested_staging_ok"])
def test_time_limit_passing_in_the_representatives_run_does_not_enumerate(stem: str) -> None:
    """The representatives' run stops at the limit (dion_update, gemm_tma_persistent at their bench
    instances): the verdict says so, where it stopped, and that the grid was not enumerated (before,
    the enumeration started past the deadline and its first instruction was named as the stop)."""
    from ptx_parser import parse_file
    from symexec import time_limit
    from volta.inputs import spec_launch

    path = REGRESSION / f"{stem}.ptx"
    module = parse_file(path)
    launch, fn = spec_launch(path, module, None, None)
    with time_limit(1e-6):
        r = check_kernel(load_program(module, fn.name), launch)
    assert r.verdict.startswith("inconclusive: time limit of 1e-06 s reached in the symbolic grid's attempt (after "
                                "0 of 2 CTAs at "), r.verdict
    assert r.verdict.endswith("the 128 CTAs were not enumerated") and f"{stem}.ptx:" in r.verdict
    assert r.stats["grid_method"].startswith("none (time limit during the symbolic grid")


NEIGHBOURS = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry neighbours(.param .u64 in, .param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd1, %rd3;
  add.s64 %rd4, %rd4, 4;
  mov.f32 %f1, 0f00000000;
""" + 5 * """  ld.global.f32 %f2, [%rd4+-4];
  ld.global.f32 %f3, [%rd4+4];
  add.f32 %f1, %f1, %f2;
  add.f32 %f1, %f1, %f3;
  add.s64 %rd4, %rd4, 2048;
""" + """  mad.lo.s32 %r4, %r2, 512, %r1;
  mul.wide.u32 %rd5, %r4, 4;
  add.s64 %rd6, %rd2, %rd5;
  st.global.f32 [%rd6], %f1;
  ret;
}
"""


@pytest.mark.parametrize("extra,verdict", [(2, "race_free"), (1, "out_of_bounds")])
def test_offsets_either_side_of_a_lane_pointer_are_bounded(extra: int, verdict: str) -> None:
    """Every CTA's 512 threads read in[512 j + t] and in[512 j + t + 2] ([%rd+-4], [%rd+4]: one access
    class whose offset column holds -4 and 4) for j < 5: 5120 lane rows, more than are listed
    exactly. Read unsigned, the offset column spans [4, 2^64 - 4], the whole space, and bounds were
    not proven (every CTA enumerated: the naive attention at S = 512 ran out of memory so); read
    signed it is [-4, 4], and the bounds hold for every CTA. One element short, the last thread's
    last read leaves the buffer and enumeration finds it."""
    prog = load_program(ptx_parser.parse(NEIGHBOURS, "neighbours.ptx"))
    ctas = 64
    launch = Launch((ctas,), (512,), {"in": np.zeros(512 * 5 + extra, np.float32),
                                     "out": np.zeros(ctas * 512, np.float32)}, ["in", "out"])
    r = check_kernel(prog, launch, grid="symbolic")
    assert r.verdict == verdict, (r.verdict, r.findings)
    if verdict == "race_free":
        assert r.stats["grid_method"] == "symbolic", r.stats["grid_method"]


def test_classes_moving_by_one_amount_are_proved_once_each_not_per_pair() -> None:
    """_Moves (grid.py): a class whose address moves from CTA 0 to CTA c by the same M(c) as the first
    class asked, whatever its lanes' values, is proved once; two such classes are translates of each
    other. A class moving by another amount (256 c bytes against 128 c) or by an amount that depends on
    its lane's value (c * q) is not common: its pairs go to the pair's own query."""
    from symexec.check.grid import _Class, _Moves
    from symexec.check.grid_shadow import Access
    from symexec.launch import Launch

    def cls(addr):
        rows = np.array([[q, q, 4 * q] for q in range(32)], dtype=np.uint64)  # (q0, thread, offset)
        return _Class(Access(pc=0, kind=1, strong=1, buffer=0, size=4, addr=addr, guard=None, rows=rows))

    c0, q0 = ("c", 32, 0), ("q", 32, 0)
    base = ("k", 64, 1 << 20)
    by = lambda k: ("add", 64, base, ("mul", 64, ("zext", 64, ("add", 32, ("mul", 32, c0, ("k", 32, k)), q0)),
                                                ("k", 64, 4)))  # noqa: E731
    launch = Launch(grid=(64, 1, 1), block=(32, 1, 1), params=[], buffers={})
    stats = {"z3_queries": 0}
    m = _Moves(launch, stats)
    assert m.common(cls(by(32))) and m.common(cls(by(32)))
    assert not m.common(cls(by(64)))
    assert not m.common(cls(("add", 64, base, ("zext", 64, ("mul", 32, c0, q0)))))
    # the second class with the first's address and lane ranges asks the same query: answered by it (`asked`)
    assert stats["z3_queries"] == 3
    other_rows = _Class(Access(pc=0, kind=1, strong=1, buffer=0, size=4, addr=by(32), guard=None,
                               rows=np.array([[q, q, 4 * q] for q in range(64)], dtype=np.uint64)))
    assert m.common(other_rows) and stats["z3_queries"] == 4  # another lane range: a query of its own


def test_divergence_note_names_a_loop_only_when_one_cta_leaves_and_another_goes_on() -> None:
    """grid_loops.divergence: the back edge taken by some thread of every executed CTA (threads of one CTA
    parting) is not a %ctaid-dependent trip count; the note then names the guard alone."""
    from ptx_parser import parse_file
    from symexec.check.grid_loops import divergence

    path = CAUSAL / "grid_ctaid_causal_loop_ok.ptx"
    prog = load_program(parse_file(path), "k")
    back = next(pc for pc, ins in enumerate(prog.code) if ins.opcode == "bra")
    ctas = [(0, 0, 0), (65, 0, 0)]
    assert "CTA (0, 0, 0) leaves it while CTA (65, 0, 0) goes on" in divergence(prog, back, ctas, [False, True])
    for goes in ([True, True], [False, False]):
        note = divergence(prog, back, ctas, goes)
        assert note.startswith("the guard of bra at ") and "the loop at" not in note, note


@pytest.mark.parametrize("case", ["grid_ctaid_entry_guard_ok", "grid_ctaid_entry_guard_entering_race",
                                  "grid_ctaid_entry_guard_skipper_oob"])
def test_loop_skipped_at_its_entry_guard_runs_an_entering_cta_alone(case: str) -> None:
    """CTAs 0 .. 63 skip the loop at its entry guard (a forward branch on %ctaid, trip count 0), the others run
    c >> 6 iterations. The last CTA, which enters, runs alone: the guard not taken is a reach condition of the
    loop's accesses, the code after the loop is every CTA's. A race only between CTAs that enter (CTAs 128 ..
    255) and an out-of-bounds store after the loop in CTA 37 only (one that skips) are found by Z3 and shown
    by running those CTAs; the correct twin is race_free without enumerating."""
    r = check_file(CAUSAL / f"{case}.ptx")
    assert r.verdict.split(":")[0] == {"ok": "race_free", "race": "race", "oob": "out_of_bounds"}[case.rsplit("_", 1)[1]]
    method = r.stats["grid_method"]
    assert method.startswith("symbolic"), method
    if case.endswith("_ok"):
        assert "CTAs [(255, 0, 0)] executed" in r.assumptions[0], r.assumptions
        assert any("and the entry guards passed before it" in a for a in r.assumptions), r.assumptions
    if case.endswith("_race"):
        assert all(128 <= s.cta[0] for s in r.findings[0].sites), r.findings[0].sites
    if case.endswith("_oob"):
        assert {s.cta for s in r.findings[0].sites} == {(37, 0, 0)}, r.findings[0].sites


def test_loop_skipped_at_its_entry_guard_register_used_after_falls_back(tmp_path) -> None:
    """The running sum, set before the entry guard and written in the loop, addresses the store after it: CTAs
    that skip the loop and CTAs that run it hold different values there, so it is unknown at the block's end
    and the proof falls back to enumeration (which finds the race: CTAs 0 .. 63 all store to the same
    block)."""
    p = _edited(tmp_path, CAUSAL / "grid_ctaid_entry_guard_ok.ptx", "sum_after.ptx",
                ("\tadd.u32 %r14, %r5, 3;           // block 4c + 3 of out, in every CTA", "\tand.b32 %r14, %r7, 1023;"))
    r = check_file(p)
    assert r.verdict.split(":")[0] == "race", r.verdict
    assert r.stats["grid_method"].startswith("enumerate (symbolic not applicable"), r.stats["grid_method"]


def test_entry_guard_over_a_block_entered_elsewhere_is_not_a_skipped_loop(tmp_path) -> None:
    """A branch from before the entry guard into the loop's body: the block is not single-entry, so a CTA that
    takes the entry guard may still run part of it; the guard is no reach condition (grid_loops
    `skipped_loop`) and the proof falls back to enumeration, whose verdict stands."""
    p = _edited(tmp_path, CAUSAL / "grid_ctaid_entry_guard_ok.ptx", "entered_elsewhere.ptx",
                ("\tsetp.lt.u32 %p2, %r13, 1;       // the entry guard: no iteration",
                 "\tsetp.eq.u32 %p3, %r2, 7;\n\tmov.u32 %r6, 2;\n\t@%p3 bra LOOP;\n"
                 "\tsetp.lt.u32 %p2, %r13, 1;       // the entry guard: no iteration"))
    r = check_file(p)
    assert r.verdict.split(":")[0] == "race_free", r.verdict
    assert r.stats["grid_method"].startswith("enumerate"), r.stats["grid_method"]


@pytest.mark.parametrize("case", ["grid_ctaid_persistent_tile_divisor_ok",
                                  "grid_ctaid_persistent_tile_divisor_cross_tile_race"])
def test_persistent_tile_loop_divisor_needs_only_reached_tiles(case: str) -> None:
    """A persistent tile loop (tile = c + 96 k while tile < 256) divides by rows = min(64 - first_m, 8), which is
    0 for tiles 256 .. 287: no CTA reaches them (it leaves the loop first), so the divisor must be non-zero only
    where the back edges on %ctaid taken so far hold (grid_shadow `Divisor.reach`). Proved symbolically (it was
    enumerated: "divisor ... may be 0 in some CTA"); the twin whose stride is one short writes tile 95 from CTAs 0
    and 95, a race across tiles that Z3 finds and the two CTAs' run shows."""
    r = check_file(CAUSAL / f"{case}.ptx")
    assert r.verdict.split(":")[0] == ("race_free" if case.endswith("_ok") else "race"), r.verdict
    assert r.stats["grid_method"].startswith("symbolic"), r.stats["grid_method"]
    if case.endswith("_race"):
        assert {s.cta for s in r.findings[0].sites} == {(0, 0, 0), (95, 0, 0)}, r.findings[0].sites


def test_persistent_tile_loop_divisor_zero_in_a_reached_tile_falls_back(tmp_path) -> None:
    """The same loop with rows = min(56 - first_m, 8): 0 for tiles 224 .. 255, which CTAs 32 .. 63 reach in their
    third iteration. The reach condition holds there, so the divisor may be 0 in a CTA that divides by it and the
    symbolic grid falls back to enumeration (a division by 0 gives an unspecified value, PTX 9.7.1.6)."""
    p = _edited(tmp_path, CAUSAL / "grid_ctaid_persistent_tile_divisor_ok.ptx", "zero_reached.ptx",
                ("\tsub.s32 %r7, 64, %r6;", "\tsub.s32 %r7, 56, %r6;"))
    r = check_file(p)
    assert r.stats["grid_method"].startswith("enumerate (symbolic not applicable: divisor at rem.s32"), \
        r.stats["grid_method"]


@pytest.mark.parametrize("case", ["grid_ctaid_persistent_tma_store_ok", "grid_ctaid_persistent_tma_store_stage_race",
                                  "grid_ctaid_persistent_tma_store_cross_cta_race"])
def test_persistent_tma_store_relaxed_queries_keep_the_reach_condition(case: str) -> None:
    """A persistent loop of TMA stores (tile = c + 66 k while tile < 200): each store's box has more rows than
    grid.py lists (MAX_ROWS), so only the relaxed queries decide it. Their side keeps the guard's conjuncts that
    name no lane column (`_conjuncts`: the back edges on %ctaid taken), so a CTA past its last tile makes no
    store there and the bounds hold (they fell back: "32768 distinct lane offsets in one access class"). The
    twin without the wait_group.read races on the stage across tiles (the representative's run finds it); the
    twin whose stride is one short stores tile 65 from CTAs 0 and 65: the relaxed overlap query is sat and the
    exact one, over the box's 256 lanes and its outer index column (`_Class.box_lanes`), finds the pair (the
    grid was enumerated while the exact table had to list the 32768 rows)."""
    r = check_file(CAUSAL / f"{case}.ptx")
    assert r.verdict.split(":")[0] == ("race_free" if case.endswith("_ok") else "race"), r.verdict
    method = r.stats["grid_method"]
    if case.endswith("_ok"):
        assert method == "symbolic", method
    elif case.endswith("_stage_race"):
        assert method.startswith("symbolic (finding in a representative CTA"), method
        assert "shared stage" in r.findings[0].message, r.findings[0].message
    else:
        assert method.startswith("symbolic (Z3 overlap validated"), method
        assert {s.cta for s in r.findings[0].sites} == {(0, 0, 0), (65, 0, 0)}, r.findings[0].sites


@pytest.mark.parametrize("case", ["grid_ctaid_persistent_tma_store_summarised_ok",
                                  "grid_ctaid_persistent_tma_store_summarised_late_race"])
def test_persistent_tma_store_loop_is_summarised(case: str, monkeypatch) -> None:
    """A persistent loop of TMA stores (16 tiles per CTA) is summarised: its canonical state repeats although each
    tile's store stays in flight until the final wait (loops.bulk_kept: a performed store older than a newer one
    every wait selects with it is left out), its skipped periods' stores are SkippedWrites, and the store's box is
    a decision of the period (in the tensor at every t summarised). The twin stores tile 701 at tile 700's rows
    (CTAs 40 and 41 in iteration 10, skipped, neither representative): the access class with t finds the race
    symbolically. Both were run tile by tile ("a tensor store in a summarised loop")."""
    made = _summaries_made(monkeypatch)  # every run's (the race's report is its validation run's, without them)
    r = check_file(CAUSAL / f"{case}.ptx")
    assert r.verdict.split(":")[0] == ("race_free" if case.endswith("_ok") else "race"), r.verdict
    assert [s.skipped for run in made for s in run] == [10], made
    method = r.stats["grid_method"]
    if case.endswith("_ok"):
        assert method == "symbolic", method
    else:
        assert method.startswith("symbolic (Z3 overlap validated"), method
        assert {s.cta for s in r.findings[0].sites} == {(40, 0, 0), (41, 0, 0)}, r.findings[0].sites


@pytest.mark.parametrize("case", ["grid_ctaid_persistent_tile_divisor_summarised_ok",
                                  "grid_ctaid_persistent_tile_divisor_summarised_late_race", "zero"])
def test_persistent_tile_loop_with_a_divisor_per_iteration_is_summarised(case: str, monkeypatch, tmp_path) -> None:
    """tile_coords' divisor rows = min(num_m - first_m, 8) changes from tile to tile: in a summarised period it is
    one obligation per period t (grid_shadow `Divisor.loop`), asked by grid.py for every CTA and every t in
    [0, T) that CTA reaches; the loop was run tile by tile ("the divisor ... changes from iteration to
    iteration") and its abandoned period left t in the divisor (KeyError, enumerated). The twin races in a
    skipped iteration between CTAs 40 and 41; with num_m = 256 rows is 0 in tiles 1024 .. 1055, which CTAs 34 ..
    65 reach in their last iteration: the proof falls back."""
    made = _summaries_made(monkeypatch)
    path = CAUSAL / "grid_ctaid_persistent_tile_divisor_summarised_ok.ptx" if case == "zero" else CAUSAL / f"{case}.ptx"
    if case == "zero":
        path = _edited(tmp_path, path, "zero.ptx", ("sub.s32 %r7, 264, %r6;", "sub.s32 %r7, 256, %r6;"))
    r = check_file(path)
    assert r.verdict.split(":")[0] == ("race" if case.endswith("_race") else "race_free"), r.verdict
    assert [s.skipped for run in made for s in run] == [10], made
    method = r.stats["grid_method"]
    if case.endswith("_ok"):
        assert method == "symbolic", method
    elif case == "zero":
        assert method.startswith("enumerate (symbolic not applicable: divisor at rem.s32"), method
        assert "may be 0 in some CTA" in method, method
    else:
        assert method.startswith("symbolic (Z3 overlap validated"), method
        assert {s.cta for s in r.findings[0].sites} == {(40, 0, 0), (41, 0, 0)}, r.findings[0].sites


@pytest.mark.parametrize("case", ["grid_ctaid_persistent_tma_store_nested_ok",
                                  "grid_ctaid_persistent_tma_store_nested_late_race"])
def test_persistent_loop_run_alone_is_summarised_with_an_inner_loop(case: str, monkeypatch) -> None:
    """1050 tiles over 66 CTAs: CTA 0 stores one tile more than CTA 65, so it is run alone for its trips
    (grid_loops.py), and there the tile loop, with an inner loop of 4 iterations writing the stage, is summarised
    (loops `_inner_differs` no longer refuses inner back edges independent of %ctaid and the sizes while trips on
    %ctaid are counted). The inner loop's period-1 guess, whose stage address depends on its own t only, is no
    longer noted as a %ctaid-dependent shared access (grid_shadow `_shared_differs`; its proof fails as before:
    a st.shared address that moves with t). The twin races in a skipped iteration between CTAs 40 and 41."""
    made = _summaries_made(monkeypatch)
    r = check_file(CAUSAL / f"{case}.ptx")
    assert r.verdict.split(":")[0] == ("race_free" if case.endswith("_ok") else "race"), r.verdict
    assert [[s.skipped for s in run] for run in made] == [[9], [10]], made  # the pair's run, then CTA 0 alone
    method = r.stats["grid_method"]
    if case.endswith("_ok"):
        assert method == "symbolic", method
    else:
        assert method.startswith("symbolic (Z3 overlap validated"), method
        assert {s.cta for s in r.findings[0].sites} == {(40, 0, 0), (41, 0, 0)}, r.findings[0].sites


def test_rotated_loop_whose_exit_falls_through_into_its_header_is_a_back_edge(tmp_path) -> None:
    """The entry-guarded loop in the shape Triton emits for forgetting attention: the body is entered by a
    jump, its exit test (j >= n, on %ctaid) is a conditional branch to the loop's end in a latch block laid out
    before the header, which it falls through into (Program.falls_back). That branch is the loop's back edge
    with the polarity reversed, not taken goes on (grid_shadow `_latch`): the entry guard and the exit are trips
    of the loop and the grid is proved symbolically (it was enumerated while every backward `bra` counted as
    the back edge; the racy twins below are still caught)."""
    p = _edited(tmp_path, CAUSAL / "grid_ctaid_entry_guard_ok.ptx", "rotated.ptx",
                ("\tmov.u32 %r6, 0;                 // j\nLOOP:",
                 "\tmov.u32 %r6, 0;                 // j\n\tbra.uni LOOP;\nLATCH:\n\tadd.u32 %r6, %r6, 1;\n"
                 "\tsetp.ge.u32 %p1, %r6, %r13;\n\t@%p1 bra DONE;\nLOOP:"),
                ("\tadd.u32 %r6, %r6, 1;\n\tsetp.lt.u32 %p1, %r6, %r13;     // go on while j < n\n\t@%p1 bra LOOP;",
                 "\tbra.uni LATCH;"))
    r = check_file(p)
    assert r.verdict.split(":")[0] == "race_free", r.verdict
    assert r.stats["grid_method"] == "symbolic", r.stats["grid_method"]
    # the racy twin (iteration j writes block 4c + 4j: CTA c's j = 1 is CTA c + 1's j = 0), rotated the same way
    p = _edited(tmp_path, p, "rotated_race.ptx",
                ("\tadd.u32 %r11, %r5, %r6;         // block 4c + j of out", "\tshl.b32 %r16, %r6, 2;\n\tadd.u32 %r11, %r5, %r16;"),
                ('"shape": [32768]', '"shape": [33024]'))
    r = check_file(p)
    assert r.verdict.split(":")[0] == "race", r.verdict
    assert all(128 <= s.cta[0] for s in r.findings[0].sites), r.findings[0].sites


@pytest.mark.parametrize("case", ["grid_ctaid_rotated_latch_share_run_ok", "grid_ctaid_rotated_latch_share_run_race",
                                  "grid_ctaid_rotated_latch_last_period_differs_race"])
def test_rotated_latch_on_ctaid_shares_the_run_of_the_longest_cta(case: str) -> None:
    """The early-leavers cases with the loop's exit in a latch block before the header (falling through into it):
    the reversed back edge is a trip of the loop (grid_shadow `_latch`), the longest CTA runs alone and the CTAs
    that leave earlier share its run (loops.py `_leaves_after` finds the latch before the header); the race after
    the loop is still found, and where the last period differs in another branch the shorter CTAs' race too."""
    r = check_file(CAUSAL / f"{case}.ptx")
    if case.endswith("_ok"):
        assert r.verdict == "race_free" and r.stats["grid_method"] == "symbolic", (r.verdict, r.stats["grid_method"])
        assert r.stats["early_leavers"] > 200, r.stats
    else:
        assert r.verdict == "race", r.verdict
    if case.endswith("share_run_race"):
        assert r.stats["grid_method"] == "symbolic (finding in a representative CTA)", r.stats["grid_method"]
    if case.endswith("differs_race"):
        assert any(s.cta[0] < 248 for f in r.findings for s in f.sites), [f.sites for f in r.findings]


def test_tensor_memory_address_allocated_in_a_loop_on_ctaid_stays_unknown(tmp_path) -> None:
    """The allocation, read-back and free in a loop whose trip count depends on %ctaid ((c >> 6) + 1 iterations):
    CTAs run the allocator another number of times, so the shadow no longer takes the allocator's addresses as
    every CTA's (grid_shadow `_alloc_op`, for good): the store indexed by the address read back falls back to
    enumeration, whose verdict stands."""
    p = _edited(tmp_path, CAUSAL / "tcgen05_alloc_address_read_back_grid_ok.ptx", "alloc_in_loop.ptx",
                ("\ttcgen05.alloc.cta_group::1",
                 "\tshr.u32 %r30, %r2, 6;\n\tmov.u32 %r31, 0;\nLOOP:\n\ttcgen05.alloc.cta_group::1"),
                ("\ttcgen05.relinquish_alloc_permit",
                 "\tadd.u32 %r31, %r31, 1;\n\tsetp.le.u32 %p3, %r31, %r30;\n\t@%p3 bra LOOP;\n\ttcgen05.relinquish_alloc_permit"))
    r = check_file(p)
    assert r.verdict == "race_free", r.verdict
    assert r.stats["grid_method"].startswith("enumerate (symbolic not applicable"), r.stats["grid_method"]


@pytest.mark.parametrize("case", ["tcgen05_alloc_address_read_back_grid_ok", "tcgen05_alloc_address_overwritten_grid_race"])
def test_tensor_memory_address_read_back_from_shared_memory(case: str) -> None:
    """A load of the bytes tcgen05.alloc stored its address to is independent of %ctaid (grid_shadow `_alloc_load`):
    the store it indexes is proved symbolically. Bytes a st.shared wrote after it (on %ctaid in the twin) are
    not: the grid is enumerated and the race between CTAs 0 and 1 found."""
    r = check_file(CAUSAL / f"{case}.ptx")
    if case.endswith("_ok"):
        assert r.verdict == "race_free" and r.stats["grid_method"] == "symbolic", (r.verdict, r.stats["grid_method"])
    else:
        assert r.verdict == "race", r.verdict
        assert r.stats["grid_method"].startswith("enumerate"), r.stats["grid_method"]
        assert {s.cta for s in r.findings[0].sites} == {(0, 0, 0), (1, 0, 0)}, r.findings[0].sites


def test_two_entry_guards_to_one_end_keep_the_first_guards_block(tmp_path) -> None:
    """Two entry guards jump to the same end; between them the CTA's last block, 4c + 3, is put in a register
    the loop does not write, which the store after the loop uses. CTAs 0 .. 31 take the first guard and never
    set it (it stays 0: they all store to block 0), so it is unknown at the end from the first guard on, not
    from the second: the proof falls back to enumeration, which finds the race between those CTAs."""
    p = _edited(tmp_path, CAUSAL / "grid_ctaid_entry_guard_ok.ptx", "two_guards.ptx",
                ("\tsetp.lt.u32 %p2, %r13, 1;       // the entry guard: no iteration",
                 "\tmov.u32 %r18, 0;\n\tsetp.lt.u32 %p3, %r2, 32;\n\t@%p3 bra DONE;\n\tadd.u32 %r18, %r5, 3;\n"
                 "\tsetp.lt.u32 %p2, %r13, 1;       // the entry guard: no iteration"),
                ("\tadd.u32 %r14, %r5, 3;           // block 4c + 3 of out, in every CTA", "\tmov.u32 %r14, %r18;"))
    r = check_file(p)
    assert r.verdict.split(":")[0] == "race", r.verdict
    assert r.stats["grid_method"].startswith("enumerate (symbolic not applicable"), r.stats["grid_method"]


def test_wgmma_writes_marks_registers_written_since_the_fence_and_pending() -> None:
    """grid_wgmma.WgmmaWrites: a register written since its lanes' fence counts at an issue only if it depends on
    %ctaid; a write to a register of an operation not yet retired by a wait_group 0 is reported, committed or not;
    a fence clears only its own lanes."""
    from symexec.check.grid_wgmma import WgmmaWrites
    w = WgmmaWrites(frozenset({"a", "d"}), 4)
    lo, hi = np.array([1, 1, 0, 0], bool), np.array([0, 0, 1, 1], bool)
    assert w.wrote(["a", "x"], lo | hi) is None  # nothing pending yet
    w.fence(lo)
    assert w.issue(["d", "a"], lo, lambda r: True) is None  # written before lo's fence
    assert w.issue(["d", "a"], hi, lambda r: r == "d") is None  # a written since (no fence on hi), but not on %ctaid
    assert w.issue(["d", "a"], hi, lambda r: True) == "a"
    assert w.wrote(["d"], lo) == "d"  # uncommitted
    w.commit(lo | hi)
    assert w.wrote(["a"], hi) == "a"  # committed, not retired
    w.wait_all(lo | hi)
    assert w.wrote(["a", "d"], lo | hi) is None


@pytest.mark.parametrize("case", ["grid_ctaid_persistent_recomputed_coords_ok",
                                  "grid_ctaid_persistent_recomputed_coords_late_race", "own_start", "per_thread_ok",
                                  "per_thread_race"])
def test_persistent_loop_with_recomputed_coordinates_is_summarised(case: str, monkeypatch, tmp_path) -> None:
    """The store at the loop head reads the tile coordinates the previous iteration computed (grouped ordering:
    div/rem of the tile, not linear in the iteration). They are recomputed every period (loops `_recomputed`):
    begun as ite(t == 0, start, v), closed with v = their end-of-period value at t - 1 (main: "loop-carried
    register %r11 is not its start value plus a fixed amount per period", run tile by tile). The twin writes tile
    992's block from tile 1000 (CTAs 2 and 10, iteration 15, skipped): found symbolically. A coordinate that also
    reads the other's start value (pm ^= the previous pn) is not recomputed from the tile alone: not summarised,
    the race it makes still found. With the thread's index in the recomputed register (pn * 32 + tid: a per-thread
    placeholder in its value, a lane column of the store for each period t >= 1, grid_shadow `resolve_starts`) the
    same: proved, and tile 1000's element one short (tile 992's last) found."""
    made = _summaries_made(monkeypatch)
    path = CAUSAL / "grid_ctaid_persistent_recomputed_coords_ok.ptx"
    if case == "own_start":
        path = _edited(tmp_path, path, "own_start.ptx",
                       ("\tadd.s32 %r11, %r6, %r10;        // pm\n\tdiv.s32 %r12, %r9, 8;           // pn\n\tsetp",
                        "\tadd.s32 %r11, %r6, %r10;        // pm\n\txor.b32 %r11, %r11, %r12;\n"
                        "\tdiv.s32 %r12, %r9, 8;           // pn\n\tsetp"))
    elif case.startswith("per_thread"):
        path = _edited(tmp_path, path, f"{case}.ptx",
                       *[(f"\tdiv.s32 %r12, %r9, 8;           // pn\n{nxt}",
                          f"\tdiv.s32 %r12, %r9, 8;           // pn\n\tshl.b32 %r12, %r12, 5;\n\tadd.u32 %r12, %r12, %r1;\n{nxt}")
                         for nxt in ("LOOP:", "\tsetp")],
                       ("\tshl.b32 %r13, %r11, 2;\n\tadd.s32 %r13, %r13, %r12;       // pm * 4 + pn: the previous "
                        "iteration's coordinates\n\tshl.b32 %r14, %r13, 5;\n\tadd.u32 %r14, %r14, %r1;",
                        "\tshl.b32 %r14, %r11, 7;\n\tadd.u32 %r14, %r14, %r12;"),
                       *([("setp.eq.s32 %p3, %r4, 5000;", "setp.eq.s32 %p3, %r4, 1000;")] if case.endswith("race") else []))
    else:
        path = CAUSAL / f"{case}.ptx"
    r = check_file(path)
    assert r.verdict.split(":")[0] == ("race_free" if case.endswith("_ok") else "race"), r.verdict
    method = r.stats["grid_method"]
    if case == "own_start":
        assert not any(run for run in made), made
        assert any("%r11 is neither its start value plus a fixed amount per period nor recomputed" in n
                   for n in r.notes), r.notes
        return
    assert [s.skipped for run in made for s in run] == [12], made
    if case.endswith("_ok"):
        assert method == "symbolic", method
    else:
        assert method.startswith("symbolic (Z3 overlap validated"), method
        assert {s.cta for s in r.findings[0].sites} == {(2, 0, 0), (10, 0, 0)}, r.findings[0].sites


@pytest.mark.parametrize("case", ["grid_ctaid_persistent_rotated_divisor_ok", "grid_ctaid_persistent_rotated_divisor_late_race"])
def test_rotated_persistent_loop_divides_only_where_it_goes_on(case: str, monkeypatch) -> None:
    """Triton's persistent layout: the latch block (store, next tile, exit test on %ctaid) before the header, which
    divides the next tile by rows = min(num_m - first_m, 8). CTA 0 runs alone (16 tiles to others' 15) and its
    tile loop is summarised; a CTA that leaves at the exit test of a period never divides in it, so the division's
    reach holds the back edges the period took before it (grid_shadow `divisor`): rows = 0 only in tiles no CTA
    divides (before: "divisor at rem.s32 ... may be 0 in some CTA", enumerated). The twin (num_m one short)
    collides two CTAs' blocks in the skipped 16th period: found symbolically."""
    made = _summaries_made(monkeypatch)
    r = check_file(CAUSAL / f"{case}.ptx")
    assert r.verdict.split(":")[0] == ("race_free" if case.endswith("_ok") else "race"), r.verdict
    assert [[s.skipped for s in run] for run in made] == [[12], [13]], made  # the pair's run, then CTA 0 alone
    method = r.stats["grid_method"]
    if case.endswith("_ok"):
        assert method == "symbolic", method
    else:
        assert method.startswith("symbolic (Z3 overlap validated"), method
        ctas = {s.cta for s in r.findings[0].sites}  # a colliding pair of group 31 (Z3 picks which: 6 and 33, 3 and 30)
        assert len(ctas) == 2 and all(c[0] < 34 for c in ctas), r.findings[0].sites


def _box_set(box: list[tuple[int, int]]) -> set[int]:
    """The byte offsets of a box's rows, in Python: sum i_k * stride_k over 0 <= i_k < count_k."""
    offs = {0}
    for stride, count in box:
        offs = {o + i * stride for o in offs for i in range(count)}
    return offs


@given(box=st.lists(st.tuples(st.integers(1, 1 << 20), st.integers(1, 6)), min_size=1, max_size=3),
       start=st.sampled_from([0, 16, 4096]), probe=st.integers(0, 1 << 22))
@settings(max_examples=60, deadline=None)
def test_box_index_columns_are_exactly_the_box_s_row_offsets(box, start, probe) -> None:
    """grid._box_index_columns: o is one of the box's row offsets (plus `start`, the exact side's lane offset) iff
    the Z3 constraint holds at o: the relaxed side stays a superset of the accesses, and leaves out the bytes
    between the rows (the interval [min, max] held them)."""
    import z3
    from symexec.check.grid import _box_index_columns
    want = {start + o for o in _box_set(box)}
    o = z3.BitVec("o", 64)
    for v in (probe, min(want), max(want), *sorted(want)[:3]):
        s = z3.Solver()
        s.add(_box_index_columns(tuple(box), o, "x", start=z3.BitVecVal(start, 64)) + [o == v])
        assert (s.check() == z3.sat) == (v in want), (box, start, v)


def test_box_lanes_is_the_lane_table_only_for_a_product_of_lanes_and_box() -> None:
    """_Class.box_lanes: a tensor store's rows (each lane's row times the box's offsets, as _tensor_store
    records them) give the exact table of its lanes, offset 0, and `listed` counts those; rows that are not that
    product (one row missing, or an offset outside the box) keep the class's own table, and the relaxed side
    reads the box's index columns only where every offset is the box's (`box_offsets`)."""
    from symexec.check.grid import _Class
    from symexec.check.grid_shadow import Access
    box = ((512, 128),)
    offs = np.array(sorted(_box_set(list(box))), np.uint64)
    lanes = np.array([[0, t, 0] for t in range(256)], np.uint64)  # one placeholder column, thread, offset
    rows = np.repeat(lanes, offs.size, axis=0)
    rows[:, -1] = np.tile(offs, lanes.shape[0])
    addr = ("add", 64, ("k", 64, 4096), ("zext", 64, ("q", 32, 0)))

    def cls(r: np.ndarray, b=box) -> _Class:
        return _Class(Access(pc=0, kind=1, strong=1, buffer=0, size=128, addr=addr, guard=None, rows=r, box=b))

    full = cls(rows)
    assert full.all_rows().shape[0] == 32768
    assert full.listed() == 256
    assert np.array_equal(full.box_lanes(), lanes)
    assert cls(rows[1:]).box_lanes() is None and cls(rows[1:]).listed() == 32767
    moved = rows.copy()
    moved[-1, -1] += np.uint64(1)
    assert cls(moved).box_lanes() is None
    assert cls(moved).box_offsets() is None  # an offset outside the box: the relaxed side keeps the interval
    assert np.array_equal(cls(rows[1:]).box_offsets(), offs)  # a subset of the box: its index columns still hold
    assert cls(rows, ()).box_lanes() is None and cls(rows, ()).listed() == 32768


@pytest.mark.parametrize("case", ["grid_ctaid_persistent_tma_store_row_band_ok",
                                  "grid_ctaid_persistent_tma_store_row_band_overlap_race"])
def test_persistent_tma_store_boxes_adjacent_in_a_row_band(case: str) -> None:
    """Four 64 x 128 boxes side by side in each row band (tile = c + 66 k, (pm, pn) = (tile >> 2, tile & 3)):
    the byte interval of one box's rows holds its neighbours' rows, so the relaxed overlap query over the
    offset interval was sat and the grid enumerated ("too many distinct lane offsets to refute a cross-CTA
    overlap", main 506c877). The box read as its outer index column (Access.box) refutes it, and the exact
    query lists the 256 lanes instead of 32768 rows: proved symbolically. The twin's box starts 8 columns
    into its neighbour's: the exact query finds CTAs 0 and 1 (tiles 0 and 1), validated concretely."""
    r = check_file(CAUSAL / f"{case}.ptx")
    method = r.stats["grid_method"]
    if case.endswith("_ok"):
        assert r.verdict == "race_free", r.verdict
        assert method == "symbolic", method
    else:
        assert r.verdict.split(":")[0] == "race", r.verdict
        assert method.startswith("symbolic (Z3 overlap validated"), method
        assert {s.cta for s in r.findings[0].sites} == {(0, 0, 0), (1, 0, 0)}, r.findings[0].sites
