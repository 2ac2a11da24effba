"""Loop summaries (symexec.check.loops): iterations proved to repeat are not run.

The evaluator of the shadow's expressions agrees with the Z3 terms grid.py builds from them; the
liveness the proof relies on is right on a small loop; with summaries on and off, hand-written loop
kernels and a suite GEMM get the same verdicts and findings, and the summary is used where it
applies (the race in a late iteration and the out-of-bounds read of a skipped iteration are still
found; the stores of skipped iterations are proved like their loads, and when the run reads one
back the loops run iteration by iteration).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import z3
from hypothesis import example, given, settings
from hypothesis import strategies as st

import ptx_parser
import tcgen05  # noqa: F401  (plugs the tensor-core unit into the machine)
from harness.compile import compile_contract
from harness.emulate import launch_for
from harness.suite import get
from symexec import load_program
from symexec.check import check_kernel
from symexec.check import loops as loopsmod
from symexec.check import run as runmod
from symexec.check.grid import _z3
from symexec.check.grid_expr import adapt, evaluate, simplify, substitute
from symexec.check.loops import live_in
from semantics import bitops
from volta.check_cli import check_file

REGRESSION = Path(__file__).resolve().parents[1] / "regression"

# ------------------------------------------------------------------------------ expressions

_OPS = ["add", "sub", "mul", "and", "or", "xor", "shl", "lshr", "ashr", "udiv", "urem", "sdiv", "srem", "smin", "smax",
        "umin", "umax"]
_CMPS = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]


def _exprs(w: int, depth: int):
    leaf = st.one_of(st.builds(lambda v: ("k", w, v), st.one_of(st.sampled_from([0, 1, 2, w - 1, w, (1 << w) - 1,
                                                                                   1 << (w - 1)]),
                                                              st.integers(0, (1 << w) - 1))),
                     st.just(("t", 64, 0) if w == 64 else ("trunc", w, ("t", 64, 0))))
    if depth == 0:
        return leaf
    sub = _exprs(w, depth - 1)
    ops = [st.tuples(st.sampled_from(_OPS), st.just(w), sub, sub),
           st.tuples(st.just("ite"), st.just(w), st.tuples(st.just("cmp"), st.just(0), st.sampled_from(_CMPS), sub, sub),
                     sub, sub),
           st.tuples(st.just("high"), st.just(w), st.tuples(st.just("mul"), st.just(2 * w),
                                                            st.tuples(st.just("zext"), st.just(2 * w), sub),
                                                            st.tuples(st.just("sext"), st.just(2 * w), sub)))]
    if w == 64:
        ops.append(st.tuples(st.sampled_from(["zext", "sext"]), st.just(64), _exprs(32, depth - 1)))
    else:
        ops.append(st.tuples(st.just("trunc"), st.just(w), _exprs(64, depth - 1)))
    return st.one_of(leaf, *ops)


@settings(max_examples=400, deadline=None)
@given(e=st.one_of(_exprs(32, 3), _exprs(64, 3)), t=st.one_of(st.sampled_from([0, 1, 2**63, 2**64 - 1]),
                                                              st.integers(0, 2**64 - 1)))
def test_evaluate_agrees_with_z3(e, t: int) -> None:
    got = int(evaluate(e, {("t", 0): np.uint64(t)}))
    assert got == z3.simplify(_z3(e, {("t", 0): z3.BitVecVal(t, 64)})).as_long()
    assert int(evaluate(substitute(e, "t", 0, t), {})) == got  # folding on the way keeps the value


def test_evaluate_is_vectorised_over_lanes_and_iterations() -> None:
    e = ("cmp", 0, "slt", ("add", 32, ("trunc", 32, ("t", 64, 0)), ("p", 32, 0)), ("k", 32, 100))
    got = evaluate(e, {("t", 0): np.arange(4, dtype=np.uint64)[:, None], ("p", 0): np.array([95, 97, 99], np.uint64)})
    assert got.tolist() == [[True, True, True], [True, True, False], [True, True, False], [True, False, False]]


def test_simplify_gives_back_the_runs_expression_at_t_0() -> None:
    base, d = ("p", 64, 3), ("p", 64, 4)
    e = ("add", 64, base, ("mul", 64, ("t", 64, 7), d))
    assert substitute(e, "t", 7, 0) == base
    assert simplify(("and", 32, ("k", 32, 6), ("k", 32, 3))) == ("k", 32, 2)


def _coords(tile):
    """Triton's grouped tile_coords (num_n = 4, GROUP_M = 8) of a tile, as grid_expr expressions or Python ints."""
    if isinstance(tile, int):
        return (tile // 32 * 8 + tile % 32 % 8) * 4 + tile % 32 // 8
    group = ("udiv", 32, tile, ("k", 32, 32))
    within = ("urem", 32, tile, ("k", 32, 32))
    pm = ("add", 32, ("shl", 32, group, ("k", 32, 3)), ("urem", 32, within, ("k", 32, 8)))
    return ("add", 32, ("shl", 32, pm, ("k", 32, 2)), ("udiv", 32, within, ("k", 32, 8)))


@settings(max_examples=150, deadline=None)
@given(c=st.integers(0, 300), sms=st.integers(1, 300), k0=st.integers(0, 40), ts=st.lists(st.integers(0, 5000),
                                                                                        min_size=1, max_size=8))
def test_recomputed_start_is_the_previous_period_s_end(c: int, sms: int, k0: int, ts: list[int]) -> None:
    """A register recomputed every period (loops `_recomputed_starts`): period t ends with E(t) = coords(tile of
    period t + 1), tile = c + sms (k0 + t); its start at period t, ite(t == 0, start, E(t - 1)) with the start
    the run's coordinates of period 0's tile, is the coordinates of period t's tile: against the loop run in
    Python, at every t, also with t substituted (folded on the way)."""
    t = ("t", 64, 5)
    tile_at = lambda x: ("add", 32, ("c", 32, 0), ("mul", 32, ("k", 32, sms), ("add", 32, ("k", 32, k0), x)))  # noqa
    end = _coords(tile_at(("add", 32, ("trunc", 32, t), ("k", 32, 1))))  # E(t): the next tile's
    start = _coords(tile_at(("k", 32, 0)))
    s = ("ite", 32, ("cmp", 0, "eq", t, ("k", 64, 0)), start,
         loopsmod.replace_leaf(end, "t", 5, ("sub", 64, t, ("k", 64, 1))))
    for x in [0, *ts]:
        want = _coords((c + sms * (k0 + x)) & 0xFFFFFFFF)
        assert int(evaluate(s, {("t", 5): np.uint64(x), ("c", 0): np.uint64(c)})) == want & 0xFFFFFFFF
        assert int(evaluate(substitute(s, "t", 5, x), {("c", 0): np.uint64(c)})) == want & 0xFFFFFFFF


# ------------------------------------------------------------------------------ liveness

LOOP = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u32 n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  ld.param.u32 %r1, [n];
  mov.u32 %r2, 0;
  mov.u32 %r3, 7;
HEAD:
  mul.lo.u32 %r4, %r2, 3;
  add.u32 %r5, %r4, %r3;
  add.u32 %r2, %r2, 1;
  setp.lt.u32 %p1, %r2, %r1;
  @%p1 bra HEAD;
  mov.u32 %r6, %r5;
  ret;
}
"""


_DTYPES = st.sampled_from([np.int64, np.uint64, np.int32, np.uint8, np.bool_])
_VALUES = st.sampled_from([0, 1, -1, 127, 128, 255, 256, -129, 2**15, 2**31, -2**31 - 1, 2**40, 2**63 - 1, -2**63])


@st.composite
def _tables(draw) -> tuple[np.ndarray, np.ndarray]:
    """Two arrays that are often equal, often differ in one value, sometimes in dtype or shape."""
    dtype = np.dtype(draw(_DTYPES))
    shape = draw(st.sampled_from([(0,), (5,), (3, 4), (2, 3, 2), (70, 2)]))
    n = int(np.prod(shape))
    vals = draw(st.lists(_VALUES, min_size=n, max_size=n))
    a = np.array([v % 2**64 if dtype.kind == "u" else v for v in vals], dtype=object)
    a = (a.astype(np.uint64) if dtype.kind == "u" else a.astype(np.int64)).astype(dtype).reshape(shape)
    b = a.copy()
    change = draw(st.sampled_from(["same", "value", "dtype", "shape"]))
    if change == "value" and n:
        flat = b.reshape(-1)
        i = draw(st.integers(0, n - 1))
        flat[i] = draw(st.sampled_from([v for v in (0, 1, 200) if np.array(v).astype(dtype) != flat[i]] or [0]))
    elif change == "dtype":
        b = b.astype(np.int16 if dtype != np.int16 else np.int32)
    elif change == "shape" and n and len(shape) > 1:
        b = b.reshape(shape[::-1])
    return a, b


@settings(max_examples=300, deadline=None)
@given(_tables())
def test_canon_packing_is_equal_exactly_when_the_arrays_are(ab: tuple[np.ndarray, np.ndarray]) -> None:
    """A canonical state's arrays are kept packed (`_packed`: per row in its narrowest integer type):
    two loop boundaries may compare equal only when the arrays are, dtype and shape included."""
    a, b = ab
    same = a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b)
    assert (loopsmod._packed(a) == loopsmod._packed(b)) == same
    back = loopsmod._unpacked(loopsmod._packed(a))
    assert back.shape == a.shape and back.dtype == a.dtype and np.array_equal(back, a)


def test_canon_packing_narrows_record_tables() -> None:
    small = np.stack([np.arange(1000, dtype=np.int64), np.full(1000, -3, np.int64), np.full(1000, 2**40)])
    packed = loopsmod._packed(small)
    assert sum(len(raw) for _t, raw in packed[2]) == 1000 * (2 + 1 + 8)


def test_live_in_at_a_loop_head() -> None:
    prog = load_program(ptx_parser.parse(LOOP, "loop.ptx"), "k")
    head = prog.labels["HEAD"]
    # the counter, the bound and the constant are read in the body; r4/r5 are written before use
    assert live_in(prog)[head] == {"%r1", "%r2", "%r3"}


# ------------------------------------------------------------------------------ summaries on and off

LOOP_CASES = ["loop_shared_staging_ok", "loop_shared_staging_last_barrier_skipped", "loop_permuted_rows_late_oob",
              "loop_stores_partial_sums_ok", "loop_stores_reads_back_ok", "loop_bulk_pipeline_ok",
              "loop_bulk_pipeline_late_overwrite_race", "loop_tcgen05_pipeline_ok", "loop_tcgen05_pipeline_late_reuse_race",
              "loop_tcgen05_pipeline_early_reuse_race", "loop_mbarrier_reinit_ok",
              "loop_mbarrier_reinit_skipped_wait_race", "loop_mbarrier_over_staged_data_ok",
              "loop_mbarrier_over_staged_data_late_war_race", "loop_tcgen05_fixed_operand_ok",
              "loop_tcgen05_fixed_operand_late_overwrite_race",
              "loop_prmt_byte_extract_ok", "loop_prmt_byte_extract_late_oob", "loop_nested_staging_ok",
              "loop_nested_staging_last_barrier_skipped", "loop_wgmma_tile_reread_ok",
              "loop_wgmma_tile_reread_late_overwrite_race", "loop_wgmma_pipelined_reread_ok",
              "loop_wgmma_pipelined_reread_late_overwrite_race", "loop_live_bound_predicate_ok",
              "loop_live_bound_predicate_late_race", "loop_sext_round_trip_ok", "loop_nested_inner_rows_ok"]


def _both(fn):
    out = {}
    for mode in (True, False):
        saved = runmod.LOOP_SUMMARIES
        runmod.LOOP_SUMMARIES = mode
        try:
            out[mode] = fn()
        finally:
            runmod.LOOP_SUMMARIES = saved
    return out


def _same(a, b) -> None:
    assert a.verdict == b.verdict
    assert [(f.kind, f.message, [s.describe() for s in f.sites]) for f in a.findings] == \
        [(f.kind, f.message, [s.describe() for s in f.sites]) for f in b.findings]


@pytest.mark.parametrize("stem", LOOP_CASES)
def test_loop_summary_agrees_with_running_every_iteration(stem: str) -> None:
    r = _both(lambda: check_file(REGRESSION / f"{stem}.ptx"))
    _same(r[True], r[False])


def test_loop_summary_skips_the_repeating_iterations() -> None:
    r = check_file(REGRESSION / "loop_shared_staging_ok.ptx")
    (s,) = r.stats["loops_summarised"]
    assert s["iterations_skipped"] >= 50 and s["period"] == 1
    assert any("not run: proved to repeat" in a for a in r.assumptions)
    # the racy twin: the summary stops before the iteration whose barrier is skipped, which runs
    r = check_file(REGRESSION / "loop_shared_staging_last_barrier_skipped.ptx")
    assert r.verdict == "race" and r.stats["loops_summarised"][0]["iterations_skipped"] <= 58


def test_mbarrier_initialised_over_staged_data_is_summarised() -> None:
    """An mbarrier object initialised each iteration where an input word was staged before (gemm_block_scaled on
    sm_100a: the scale factors, stmatrix'd where the MMA's mbarrier lives): init makes the 8 bytes an opaque object
    and the model zeroes them (symexec/mbarrier.py `_opaque`), so the staged data does not stay there as bits the
    shadow calls constant, and the state at the loop head repeats. The twin skips the bar.sync between the reads of
    the staged word and the init in iteration 50 only: the summary stops before it, and the race is found."""
    r = check_file(REGRESSION / "loop_mbarrier_over_staged_data_ok.ptx")
    (s,) = r.stats["loops_summarised"]
    assert r.verdict == "race_free" and s["period"] == 1 and s["iterations_skipped"] >= 50
    r = check_file(REGRESSION / "loop_mbarrier_over_staged_data_late_war_race.ptx")
    first = r.stats["loops_summarised"][0]
    assert r.verdict == "race" and first["from_iteration"] + first["iterations_skipped"] <= 50
    assert "mbarrier.init" in {s.instruction.split(".shared")[0] for s in r.findings[0].sites}


def test_operand_read_by_alternating_tcgen05_agents_is_summarised() -> None:
    """An operand loaded once and read by every tcgen05.mma of the loop, the MMAs taking the tensor core's two free
    agents in turn (attention_tma on sm_100a: its Q tile): each agent's earlier reads of a byte are covered by its
    latest one (loops.py `_dominated_agent_reads`), so the canonical state keeps one read per agent and repeats.
    The twin rewrites a word of the operand in iteration 50 while the MMA of iteration 49 may still read it: the
    summary stops before it, and the race is found."""
    r = check_file(REGRESSION / "loop_tcgen05_fixed_operand_ok.ptx")
    (s,) = r.stats["loops_summarised"]
    assert r.verdict == "race_free" and s["period"] == 4 and s["iterations_skipped"] >= 40
    r = check_file(REGRESSION / "loop_tcgen05_fixed_operand_late_overwrite_race.ptx")
    first = r.stats["loops_summarised"][0]
    assert r.verdict == "race" and first["from_iteration"] + first["iterations_skipped"] <= 50
    assert {s.instruction.split(".")[0] for s in r.findings[0].sites} == {"tcgen05", "st"}


def test_pipelined_bulk_copy_loop_is_summarised_with_its_mbarrier_state() -> None:
    # two stages, full/empty mbarriers whose phases alternate: the state repeats every 4 iterations
    # (stage and parities), with a bulk copy in flight on a barrier at each loop head
    r = check_file(REGRESSION / "loop_bulk_pipeline_ok.ptx")
    (s,) = r.stats["loops_summarised"]
    assert r.verdict == "race_free" and s["period"] == 4 and s["iterations_skipped"] >= 40
    # the twin skips the wait on the empty barrier in iteration 60 only: the summary stops before it,
    # and the overwrite of a stage still being read is found
    r = check_file(REGRESSION / "loop_bulk_pipeline_late_overwrite_race.ptx")
    (s,) = r.stats["loops_summarised"]
    assert r.verdict == "race" and s["from_iteration"] + s["iterations_skipped"] <= 60
    assert "cp.async.bulk" in r.findings[0].message and "stage" in r.findings[0].message


def test_pipelined_tcgen05_loop_is_summarised_with_the_tensor_core_state() -> None:
    # tcgen05.mma on two bulk-loaded stages, committed to the stage's empty barrier: the queued MMAs,
    # the commit's pending completion and the accumulator's cells (fresh value numbers each
    # iteration) repeat every 4 iterations
    r = check_file(REGRESSION / "loop_tcgen05_pipeline_ok.ptx")
    (s,) = r.stats["loops_summarised"]
    assert r.verdict == "race_free" and s["period"] == 4 and s["iterations_skipped"] >= 40
    # the twin skips the wait on the empty barrier in iteration 60 only: the bulk copy overwrites the
    # stage the MMA of iteration 59 may still read; the summary stops before it
    r = check_file(REGRESSION / "loop_tcgen05_pipeline_late_reuse_race.ptx")
    (s,) = r.stats["loops_summarised"]
    assert r.verdict == "race" and s["from_iteration"] + s["iterations_skipped"] <= 60
    assert "tcgen05.mma" in r.findings[0].message and "cp.async.bulk" in r.findings[0].message


def test_loop_summary_starts_from_one_period_of_history() -> None:
    """A period P was proved from boundary 3P + 1 at the earliest (registers even over 2P boundaries, then a
    full state compared P later); `_deltas_early` guesses each register's change from the boundary P back (it
    repeats, or moves linearly) for P >= 3. gemm_fp16 on sm_100a (cp.async ring of 3 stages, tcgen05.commit to two
    alternating mbarriers: period 12): from iteration 25, 37 before. The proof itself is unchanged: the pipelined
    loops of period 4 are still summarised, and the racy tcgen05 twin is still found."""
    c = get("gemm_fp16")
    c = dataclasses.replace(c, instances={**c.instances, "verify": {"M": 256, "N": 256, "K": 4096}})
    comp = compile_contract(c, "sm_100a")
    prog = load_program(ptx_parser.parse(comp.ptx, "gemm_fp16.ptx"), comp.entry)
    launch = launch_for(c, comp, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
    r = check_kernel(prog, launch, grid="symbolic")
    (s,) = r.stats["loops_summarised"]
    assert r.verdict == "race_free" and s["period"] == 12 and s["from_iteration"] < 3 * 12 + 1, s
    for stem in ("loop_tcgen05_pipeline_ok", "loop_bulk_pipeline_ok"):
        r = check_file(REGRESSION / f"{stem}.ptx")
        (s,) = r.stats["loops_summarised"]
        assert r.verdict == "race_free" and s["period"] == 4, (stem, s)
    r = check_file(REGRESSION / "loop_tcgen05_pipeline_early_reuse_race.ptx")
    assert r.verdict == "race" and "tcgen05.mma" in r.findings[0].message and "cp.async.bulk" in r.findings[0].message
    assert not r.stats.get("loops_summarised")


def test_speculative_proof_at_the_anchor_holds_or_leaves_no_trace(tmp_path) -> None:
    """A period of 3 guessed from one period of history starts its proof at once, at the anchor (the boundary of
    the first full state, iteration 4), not one period later where the state is first seen to repeat (7): the
    ring of 3 shared stages without its warm-up store. With the warm-up (a store guarded by i < 5, a decision that
    changes one period on) that proof does not hold and leaves no trace: the summary and the notes are as
    without it (main: from 11, no note), and the late missing barrier of the twin is still found."""
    ok = (REGRESSION / "loop_ring3_warmup_ok.ptx").read_text()
    warm = "\tsetp.lt.u32 %p7, %r20, 5;\n\t@%p7 st.shared.u32 [%r11], %r21;\n"
    assert warm in ok
    plain = tmp_path / "ring3.ptx"
    plain.write_text(ok.replace(warm, ""))
    r = check_file(plain)
    (s,) = r.stats["loops_summarised"]
    assert r.verdict == "race_free" and (s["period"], s["from_iteration"], s["iterations_skipped"]) == (3, 4, 39), s
    r = check_file(REGRESSION / "loop_ring3_warmup_ok.ptx")
    (s,) = r.stats["loops_summarised"]
    assert r.verdict == "race_free" and (s["period"], s["from_iteration"]) == (3, 11) and not r.notes, (s, r.notes)
    r = check_file(REGRESSION / "loop_ring3_warmup_late_missing_barrier_race.ptx")
    assert r.verdict == "race" and "not ordered by any barrier" in r.findings[0].message
    assert r.notes == [f"loop at {REGRESSION / 'loop_ring3_warmup_late_missing_barrier_race.ptx'}:39:2 not summarised: "
                       "the loop ended within the period followed"], r.notes


def test_early_period_guess_follows_repeating_and_linear_registers() -> None:
    """`_deltas_early`: a register that repeats after P iterations (a stage index, a parity) changes by 0, one
    that moves the same amount every iteration by P times it; one that does neither gives no guess."""
    prog = load_program(ptx_parser.parse(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n"
                                         ".reg .b32 %r<4>;\nret;\n}\n"), "k")
    alive = np.ones(2, bool)

    class _B:
        pass

    b = _B()
    b.alive, b.prog = alive, prog
    summ = loopsmod.LoopSummariser.__new__(loopsmod.LoopSummariser)
    summ.state = dataclasses.make_dataclass("S", ["tracker"])(dataclasses.make_dataclass("T", ["reg_taint"])({}))
    stage = [0, 1, 2, 0, 1, 2, 0]  # period 3
    ptr = [100 + 8 * i for i in range(7)]
    hist = [loopsmod._Boundary(i, {"%r1": np.array([stage[i]] * 2, np.uint32),
                                   "%r2": np.array([ptr[i]] * 2, np.uint32)}, None, ()) for i in range(7)]
    got = summ._deltas_early(b, hist, 3)
    assert set(got) == {"%r2"} and got["%r2"].tolist() == [24, 24]
    assert summ._deltas_early(b, hist, 2) is None  # the stage index neither repeats nor moves linearly over 2


def test_loop_reinitialising_its_mbarrier_is_summarised() -> None:
    """An mbarrier object initialised and invalidated in every iteration (sage_attention on sm_100a retires two
    per KV iteration): the address's init count and what was released into retired objects (never acquired
    again, 9.7.13.15.10) grew every iteration, and the loop ran in full. Generations are compared relative to
    the latest init and retired objects' releases are left out; the racy twin (no wait in iteration 50) is
    still found, the summary stopping before it."""
    r = check_file(REGRESSION / "loop_mbarrier_reinit_ok.ptx")
    (s,) = r.stats["loops_summarised"]
    assert r.verdict == "race_free" and s["period"] == 1 and s["iterations_skipped"] >= 50, s
    r = check_file(REGRESSION / "loop_mbarrier_reinit_skipped_wait_race.ptx")
    assert r.verdict == "race" and "buf" in r.findings[0].message
    assert r.stats["loops_summarised"][0]["from_iteration"] + r.stats["loops_summarised"][0]["iterations_skipped"] <= 50


def test_tcgen05_ld_destinations_are_not_live_before_the_load() -> None:
    # the load writes them (at wait::ld, or earlier for a register dependency): a loop before the
    # epilogue's tcgen05.ld does not carry them
    src = """.version 8.7
.target sm_100a
.address_size 64
.visible .entry k(.param .u64 out)
{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  mov.u32 %r1, 0;
HEAD:
  add.u32 %r1, %r1, 1;
  setp.lt.u32 %p1, %r1, 8;
  @%p1 bra HEAD;
  tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r5, %r6}, [%r2];
  tcgen05.wait::ld.sync.aligned;
  add.u32 %r7, %r5, %r6;
  ret;
}
"""
    prog = load_program(ptx_parser.parse(src, "ld.ptx"), "k")
    assert live_in(prog)[prog.labels["HEAD"]] == {"%r1", "%r2"}


def _prmt_loop(prmt: str) -> str:
    """A loop whose body is `prmt` on %r2 (a) and %r3 (b), neither written in the kernel."""
    return f""".version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out)
{{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  mov.u32 %r1, 0;
  mov.u32 %r4, 0x7654;
HEAD:
  {prmt}
  add.u32 %r1, %r1, %r5;
  setp.lt.u32 %p1, %r1, 8;
  @%p1 bra HEAD;
  ret;
}}
"""


@pytest.mark.parametrize("prmt, live", [
    ("prmt.b32 %r5, %r2, %r3, 0x0U;", {"%r2"}),  # byte 0 of a, four times: b unread
    ("prmt.b32 %r5, %r2, %r3, 0x3210;", {"%r2"}),  # a itself
    ("prmt.b32 %r5, %r2, %r3, 0x7654;", {"%r3"}),  # b itself: a unread
    ("prmt.b32 %r5, %r2, %r3, 0x4210;", {"%r2", "%r3"}),  # one byte of b (byte 4 of {b, a})
    ("prmt.b32 %r5, %r2, %r3, 0x8880;", {"%r2"}),  # sign replication of byte 0: still a's byte
    ("prmt.b32 %r5, %r2, %r3, 0xC000;", {"%r2", "%r3"}),  # sign of byte 4, b's low byte
    ("prmt.b32 %r5, %r2, %r3, 0x76540000;", {"%r2"}),  # bits 16-31 of the selector are unused
    ("prmt.b32 %r5, %r2, %r2, 0x7654;", {"%r2"}),  # the same register as both sources
    ("prmt.b32 %r5, %r2, %r3, %r4;", {"%r2", "%r3", "%r4"}),  # selector in a register: both read
    ("prmt.b32.f4e %r5, %r2, %r3, 0x0;", {"%r2"}),  # f4e 0: bytes 3 2 1 0
    ("prmt.b32.f4e %r5, %r2, %r3, 0x1;", {"%r2", "%r3"}),  # f4e 1: bytes 4 3 2 1
    ("prmt.b32.b4e %r5, %r2, %r3, 0x3;", {"%r2"}),  # b4e 3: bytes 0 1 2 3
    ("prmt.b32.b4e %r5, %r2, %r3, 0x7;", {"%r2"}),  # only selector[1:0] counts in a mode
    ("prmt.b32.b4e %r5, %r2, %r3, 0x0;", {"%r2", "%r3"}),  # b4e 0: bytes 5 6 7 0
    ("prmt.b32.rc8 %r5, %r2, %r3, 0x2;", {"%r2"}),
    ("prmt.b32.ecl %r5, %r2, %r3, 0x1;", {"%r2"}),
    ("prmt.b32.ecr %r5, %r2, %r3, 0x3;", {"%r2"}),
    ("prmt.b32.rc16 %r5, %r2, %r3, 0x1;", {"%r2"}),
    ("@%p1 prmt.b32 %r5, %r2, %r3, 0x0;", {"%r2", "%r5", "%p1"}),  # guarded: d keeps its old value
])
def test_prmt_reads_only_the_sources_its_selector_picks(prmt: str, live: set[str]) -> None:
    # 9.7.9.7: a literal selector's nibbles (or, in a mode, its two lsbs) name the bytes of {b, a}
    # the result is made of; a source none of whose bytes is named is not live
    prog = load_program(ptx_parser.parse(_prmt_loop(prmt), "prmt.ptx"), "k")
    assert live_in(prog)[prog.labels["HEAD"]] == {"%r1"} | live


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1),
       st.integers(0, 2**32 - 1), st.sampled_from(bitops.PRMT_MODES))
def test_prmt_result_ignores_the_bytes_it_does_not_pick(a: int, b: int, c: int, noise_a: int, noise_b: int,
                                                        mode: str) -> None:
    # the liveness above relies on this: changing any byte outside prmt_source_bytes (of a and of b
    # at once) leaves the result of the emulator's prmt unchanged
    picked = bitops.prmt_source_bytes(c, mode)
    keep = sum(0xFF << (8 * (i % 4)) for i in picked if i < 4), sum(0xFF << (8 * (i % 4)) for i in picked if i >= 4)
    a2 = (a & keep[0]) | (noise_a & ~keep[0] & 0xFFFFFFFF)
    b2 = (b & keep[1]) | (noise_b & ~keep[1] & 0xFFFFFFFF)
    run = lambda x, y: int(bitops.prmt(np.uint32(x), np.uint32(y), np.uint32(c), mode))  # noqa: E731
    assert run(a, b) == run(a2, b2)


def test_prmt_source_bytes_follow_the_manual_table() -> None:
    # 9.7.9.7's table for the modes (d.b3 d.b2 d.b1 d.b0 per selector[1:0]), read as sets of source bytes
    f = bitops.prmt_source_bytes
    assert [f(c, "f4e") for c in range(4)] == [{0, 1, 2, 3}, {1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6}]
    assert [f(c, "b4e") for c in range(4)] == [{5, 6, 7, 0}, {6, 7, 0, 1}, {7, 0, 1, 2}, {0, 1, 2, 3}]
    assert [f(c, "rc8") for c in range(4)] == [{0}, {1}, {2}, {3}]
    assert [f(c, "ecl") for c in range(4)] == [{0, 1, 2, 3}, {1, 2, 3}, {2, 3}, {3}]
    assert [f(c, "ecr") for c in range(4)] == [{0}, {0, 1}, {0, 1, 2}, {0, 1, 2, 3}]
    assert [f(c, "rc16") for c in range(4)] == [{0, 1}, {2, 3}, {0, 1}, {2, 3}]
    assert f(0x5140) == {0, 4, 1, 5} and f(0xFFFF9F99) == {1, 7}  # sign replication; high half unused


def test_inner_loop_is_summarised_in_every_outer_iteration() -> None:
    """A proof that holds does not count against the loop head's MAX_ATTEMPTS: the inner loop of each
    outer iteration run is summarised (dion_update's 16 row blocks ran 12 inner loops in full), also the one
    the outer loop's proof follows as its period (its inner back edge decided alike in every CTA and period: a
    nested summary, loops.py `_nested`; it ran in full inside it before). The outer loop's 6 iterations are
    summarised too since its period-1 guess is taken from its first two boundaries (loops.py `_deltas_first`:
    outer iterations 3 and 4 skipped), with the pointer both loops advance in the form the outer period began
    with (`_restate`). The racy twin's last outer iteration (its decisions differ: the outer summary stops
    before it) stops its inner summary before the skipped barrier."""
    assert loopsmod.MAX_ATTEMPTS < 6
    r = check_file(REGRESSION / "loop_nested_staging_ok.ptx")
    inner = [s["iterations_skipped"] for s in r.stats["loops_summarised"] if s["line"].endswith(":40:2")]
    outer = [s["iterations_skipped"] for s in r.stats["loops_summarised"] if s["line"].endswith(":38:2")]
    assert r.verdict == "race_free" and len(inner) == 4 and min(inner) >= 50 and outer == [2], r.stats
    assert sum("in the checked period of the loop at" in a for a in r.assumptions) == 1, r.assumptions
    r = check_file(REGRESSION / "loop_nested_staging_last_barrier_skipped.ptx")
    inner = [s["iterations_skipped"] for s in r.stats["loops_summarised"] if s["line"].endswith(":40:2")]
    outer = [s["iterations_skipped"] for s in r.stats["loops_summarised"] if s["line"].endswith(":38:2")]
    assert r.verdict == "race" and len(inner) == 4 and inner[-1] < min(inner[:-1]) and outer == [2], r.stats


# ------------------------------------------------------------------------------ skipped global writes read back

#: ok cases whose loops' skipped stores are read (or written) again later, as the summary allows
READ_BACK_OK = ("loop_stores_reads_back_ok", "loop_stores_read_back_neighbour_ok", "loop_stores_update_in_place_ok")
#: their bug twins, each found (the summary void: the loop run in full), and why the summary was void
READ_BACK_BUGS = {
    "loop_stores_read_back_unordered_race": ("race", "not ordered after the thread"),
    "loop_stores_read_back_other_cta_race": ("race", "another CTA would have written them"),
    "loop_stores_overwrite_unordered_race": ("race", "not ordered after the thread"),
    "loop_stores_read_back_as_index_oob": ("out_of_bounds", "as an operand whose bits matter"),
    "loop_stores_read_back_branch_oob": ("out_of_bounds", "as its guard"),
    "loop_stores_read_back_guarded_mov_oob": ("out_of_bounds", "as its guard"),
    "loop_stores_read_back_shared_atomic_oob": ("out_of_bounds", "updates bytes holding a STALE value"),
}


@pytest.mark.parametrize("stem", READ_BACK_OK)
def test_skipped_stores_read_back_keep_the_summary(stem: str) -> None:
    """A read (or rewrite) of bytes a summary's skipped iterations would have written, by a plain ld/st of the
    writer's CTA ordered after the writer, with the STALE value only moved into arithmetic and stores: the
    summary holds (before, any access to them ran the whole check again without summaries)."""
    r = check_file(REGRESSION / f"{stem}.ptx")
    assert r.verdict == "race_free" and r.stats["grid_method"] == "symbolic", r.stats
    assert r.stats["loops_summarised"] and not any("iteration by iteration" in n for n in r.notes), r.notes


@pytest.mark.parametrize("stem", sorted(READ_BACK_BUGS))
def test_skipped_stores_read_back_wrongly_void_the_summary(stem: str) -> None:
    """The bug next to each: an access not ordered after the skipped write, from another CTA, or a STALE value
    used as an address or a guard (of a branch or a register-only mov): the summary is void, the loop runs in
    full and the bug is found."""
    verdict, why = READ_BACK_BUGS[stem]
    r = check_file(REGRESSION / f"{stem}.ptx")
    assert r.verdict.split(":")[0] == verdict, (r.verdict, r.notes)
    assert any("iteration by iteration" in n and why in n for n in r.notes), r.notes


def test_outer_loop_with_an_inner_loop_is_summarised() -> None:
    """The inner loop's back edge (8 trips, in every CTA and outer iteration) no longer abandons the outer proof:
    the outer loop is summarised with the inner one run inside its period; the twin whose rows 7 and 8 meet in
    the skipped iterations is still a race (the symbolic grid's intra-CTA query over the skipped stores)."""
    r = check_file(REGRESSION / "loop_nested_outer_summary_ok.ptx")
    assert r.verdict == "race_free" and r.stats["grid_method"] == "symbolic"
    outer = [s for s in r.stats["loops_summarised"] if s["line"].split(":")[-2] == str(_line_after(
        REGRESSION / "loop_nested_outer_summary_ok.ptx", "OUTER:"))]
    assert outer and outer[0]["iterations_skipped"] >= 8, r.stats["loops_summarised"]
    r = check_file(REGRESSION / "loop_nested_outer_rows_overlap_race.ptx")
    assert r.verdict == "race", r.verdict


def _nested_hole_kernel(rows: int, inner: int, r0: int, j0: int, barrier: bool) -> str:
    """An outer loop of `rows` iterations (r) around an inner one of `inner` (j), 8 CTAs of 32 threads: the inner
    loop sums x[((c * rows + r) * inner + j) * 32 + tid] through shared memory (each thread stores its element,
    a barrier, reads its neighbour's, a barrier), with a hole exactly where r = r0 and j = j0, d = (r ^ r0) |
    (j ^ j0) = 0: the load moved past x's end (by x's size: e = (d - 1) >> 31, bit arithmetic the symbolic grid
    follows, no guard), or (`barrier`) the first barrier branched over (a decision of both loops' iterations),
    so that the neighbour's element is read unordered after its store: a race."""
    xbytes = 8 * rows * inner * 32 * 4
    far = 0 if barrier else xbytes
    return f"""// launch: {{"grid": [8], "block": [32], "buffers": {{"x": {{"dtype": "float32", "shape": [{xbytes // 4}], \
"init": "random"}}, "out": {{"dtype": "float32", "shape": [{8 * rows * 32}]}}}}, "params": ["x", "out"]}}
.version 8.0
.target sm_80
.address_size 64

.visible .entry k(.param .u64 x, .param .u64 out)
{{
	.reg .pred %p<4>;
	.reg .b32 %r<48>;
	.reg .b64 %rd<16>;
	.reg .f32 %f<8>;
	.shared .align 4 .b8 tile[128];
	ld.param.u64 %rd1, [x];
	ld.param.u64 %rd2, [out];
	cvta.to.global.u64 %rd1, %rd1;
	cvta.to.global.u64 %rd2, %rd2;
	mov.u32 %r2, %tid.x;
	mov.u32 %r3, %ctaid.x;
	mov.u32 %r40, tile;
	shl.b32 %r41, %r2, 2;
	add.u32 %r41, %r41, %r40;
	xor.b32 %r42, %r2, 1;
	shl.b32 %r42, %r42, 2;
	add.u32 %r42, %r42, %r40;
	mul.lo.u32 %r20, %r3, {rows};
	mov.u32 %r10, 0;
OUTER:
	add.u32 %r21, %r20, %r10;
	mul.lo.u32 %r22, %r21, {inner};
	shl.b32 %r22, %r22, 5;
	add.u32 %r22, %r22, %r2;
	mul.wide.u32 %rd3, %r22, 4;
	add.s64 %rd3, %rd1, %rd3;
	mov.f32 %f1, 0f00000000;
	mov.u32 %r11, 0;
INNER:
	xor.b32 %r30, %r10, {r0};
	xor.b32 %r31, %r11, {j0};
	or.b32 %r30, %r30, %r31;
	setp.eq.u32 %p3, %r30, {0 if barrier else 1 << 20};
	sub.u32 %r30, %r30, 1;
	shr.u32 %r30, %r30, 31;
	mul.lo.u32 %r30, %r30, {far};
	cvt.u64.u32 %rd6, %r30;
	add.s64 %rd7, %rd3, %rd6;
	ld.global.f32 %f2, [%rd7];
	st.shared.f32 [%r41], %f2;
	@%p3 bra NOBAR;
	bar.sync 0;
NOBAR:
	ld.shared.f32 %f3, [%r42];
	add.f32 %f1, %f1, %f3;
	bar.sync 0;
	add.s64 %rd3, %rd3, 128;
	add.u32 %r11, %r11, 1;
	setp.lt.u32 %p2, %r11, {inner};
	@%p2 bra INNER;
	shl.b32 %r13, %r21, 5;
	add.u32 %r13, %r13, %r2;
	mul.wide.u32 %rd5, %r13, 4;
	add.s64 %rd5, %rd2, %rd5;
	st.global.f32 [%rd5], %f1;
	add.u32 %r10, %r10, 1;
	setp.lt.u32 %p1, %r10, {rows};
	@%p1 bra OUTER;
	ret;
}}
"""


@settings(max_examples=3, deadline=None)
@given(rows=st.integers(5, 9), inner=st.integers(5, 8), r0=st.integers(0, 10), j0=st.integers(0, 9),
       barrier=st.booleans())
@example(rows=8, inner=7, r0=3, j0=4, barrier=True)  # in the outer summary's skipped periods: its scan must stop
@example(rows=5, inner=5, r0=2, j0=2, barrier=False)  # the outer loop's checked period, a nested-skipped inner one
def test_nested_summary_finds_a_hole_at_any_iteration_pair(tmp_path_factory, rows: int, inner: int, r0: int, j0: int,
                                                           barrier: bool) -> None:
    """Oracle: the kernel has its bug (every CTA's load leaves x, or a race on the shared tile) exactly when
    (r0, j0) is an iteration pair the loops run (r0 < rows and j0 < inner), whether that pair is run, skipped by
    the outer summary, by the nested summary inside the outer loop's checked period, or by both (loops.py
    `_nested`: each leaf over its own range in grid.py, the inner decisions at every inner period handed to
    the outer loop's decision scan)."""
    path = tmp_path_factory.mktemp("nested") / "k.ptx"
    path.write_text(_nested_hole_kernel(rows, inner, r0, j0, barrier))
    r = check_file(path)
    bug = "race" if barrier else "out_of_bounds"
    assert r.verdict == (bug if r0 < rows and j0 < inner else "race_free"), (r.verdict, r.notes)
    if r.verdict == "race_free":  # the outer loop summarised, with the inner one inside its checked period
        assert any("in the checked period of the loop at" in a for a in r.assumptions), r.assumptions


def _nested_ring_kernel(rows: int, inner: int, stages: int, r0: int, j0: int, barrier: bool) -> str:
    """`_nested_hole_kernel` with the inner loop over a shared ring of `stages` slots (slot j mod `stages`, its byte
    offset stepped by add/and): each thread stores its element to the slot, one barrier, reads its neighbour's; the
    ring orders each slot's read before its rewrite `stages` iterations later. The inner loop's state repeats with
    a period of `stages` iterations, not 1. The hole (r, j) = (r0, j0): the load past x's end, or (`barrier`) the
    barrier branched over (the neighbour's element read unordered after its store: a race)."""
    xbytes = 8 * rows * inner * 32 * 4
    far = 0 if barrier else xbytes
    return f"""// launch: {{"grid": [8], "block": [32], "buffers": {{"x": {{"dtype": "float32", "shape": [{xbytes // 4}], \
"init": "random"}}, "out": {{"dtype": "float32", "shape": [{8 * rows * 32}]}}}}, "params": ["x", "out"]}}
.version 8.0
.target sm_80
.address_size 64

.visible .entry k(.param .u64 x, .param .u64 out)
{{
	.reg .pred %p<4>;
	.reg .b32 %r<64>;
	.reg .b64 %rd<16>;
	.reg .f32 %f<8>;
	.shared .align 4 .b8 tile[{stages * 128}];
	ld.param.u64 %rd1, [x];
	ld.param.u64 %rd2, [out];
	cvta.to.global.u64 %rd1, %rd1;
	cvta.to.global.u64 %rd2, %rd2;
	mov.u32 %r2, %tid.x;
	mov.u32 %r3, %ctaid.x;
	mov.u32 %r40, tile;
	shl.b32 %r41, %r2, 2;
	xor.b32 %r42, %r2, 1;
	shl.b32 %r42, %r42, 2;
	mul.lo.u32 %r20, %r3, {rows};
	mov.u32 %r10, 0;
OUTER:
	add.u32 %r21, %r20, %r10;
	mul.lo.u32 %r22, %r21, {inner};
	shl.b32 %r22, %r22, 5;
	add.u32 %r22, %r22, %r2;
	mul.wide.u32 %rd3, %r22, 4;
	add.s64 %rd3, %rd1, %rd3;
	mov.f32 %f1, 0f00000000;
	mov.u32 %r11, 0;
	mov.u32 %r50, 0;
INNER:
	xor.b32 %r30, %r10, {r0};
	xor.b32 %r31, %r11, {j0};
	or.b32 %r30, %r30, %r31;
	setp.eq.u32 %p3, %r30, {0 if barrier else 1 << 20};
	sub.u32 %r30, %r30, 1;
	shr.u32 %r30, %r30, 31;
	mul.lo.u32 %r30, %r30, {far};
	cvt.u64.u32 %rd6, %r30;
	add.s64 %rd7, %rd3, %rd6;
	ld.global.f32 %f2, [%rd7];
	add.u32 %r51, %r40, %r50;
	add.u32 %r52, %r51, %r41;
	st.shared.f32 [%r52], %f2;
	@%p3 bra NOBAR;
	bar.sync 0;
NOBAR:
	add.u32 %r53, %r51, %r42;
	ld.shared.f32 %f3, [%r53];
	add.f32 %f1, %f1, %f3;
	add.u32 %r50, %r50, 128;
	and.b32 %r50, %r50, {stages * 128 - 1};
	add.s64 %rd3, %rd3, 128;
	add.u32 %r11, %r11, 1;
	setp.lt.u32 %p2, %r11, {inner};
	@%p2 bra INNER;
	shl.b32 %r13, %r21, 5;
	add.u32 %r13, %r13, %r2;
	mul.wide.u32 %rd5, %r13, 4;
	add.s64 %rd5, %rd2, %rd5;
	st.global.f32 [%rd5], %f1;
	add.u32 %r10, %r10, 1;
	setp.lt.u32 %p1, %r10, {rows};
	@%p1 bra OUTER;
	ret;
}}
"""


@pytest.mark.parametrize("stem,period", [("loop_nested_ring2_ok", 2), ("loop_nested_ring4_ok", 4)])
def test_nested_summary_of_an_inner_loop_of_period_p(stem: str, period: int) -> None:
    """An inner loop whose state repeats with period P > 1 (a P-slot shared ring) is summarised inside the outer
    loop's checked period with period P (loops.py `_nested`, guessed from its summary in outer iteration 0); it
    ran in full there before (the nested summary was period-1 only)."""
    r = check_file(REGRESSION / f"{stem}.ptx")
    assert r.verdict == "race_free" and r.stats["grid_method"] == "symbolic", (r.verdict, r.notes)
    nested = [a for a in r.assumptions if "in the checked period of the loop at" in a]
    assert len(nested) == 1 and f"period {period})" in nested[0], r.assumptions
    skipped = int(nested[0].split(": ")[1].split(" iterations")[0])
    assert skipped >= 2 * period and skipped % period == 0, nested


def test_nested_period_p_summary_keeps_skipped_bugs() -> None:
    """The twins: a load past x's end only in an inner period the nested period-2 summary skips (found by the
    symbolic grid's bounds query over both leaves, not by the run), a barrier branched over at the first
    iteration of inner period u = 5 (the nested period-4 summary stops before it: the race is run), and a load
    past the end in the last inner period skipped (u = 6)."""
    r = check_file(REGRESSION / "loop_nested_ring2_skipped_oob.ptx")
    assert r.verdict == "out_of_bounds" and "bounds witness" in r.stats["grid_method"], r.stats["grid_method"]
    r = check_file(REGRESSION / "loop_nested_ring4_skipped_race.ptx")
    assert r.verdict == "race", r.verdict
    first = [s for s in r.stats["loops_summarised"] if s["from_iteration"] == 32]
    assert first and first[0]["period"] == 4 and first[0]["iterations_skipped"] == 16, r.stats["loops_summarised"]
    r = check_file(REGRESSION / "loop_nested_ring4_last_period_oob.ptx")
    assert r.verdict == "out_of_bounds", r.verdict


@settings(max_examples=4, deadline=None)
@given(rows=st.integers(5, 8), periods=st.integers(3, 8), stages=st.sampled_from([2, 4]), r0=st.integers(0, 9),
       j0=st.integers(0, 33), barrier=st.booleans())
@example(rows=8, periods=4, stages=2, r0=1, j0=5, barrier=True)  # nested-skipped inner period u = 2
@example(rows=8, periods=8, stages=4, r0=3, j0=13, barrier=False)  # outer-skipped and nested-skipped
@example(rows=6, periods=5, stages=4, r0=1, j0=18, barrier=False)  # the last inner period skipped
def test_nested_ring_summary_finds_a_hole_at_any_iteration_pair(tmp_path_factory, rows: int, periods: int,
                                                                stages: int, r0: int, j0: int, barrier: bool) -> None:
    """Oracle: the ring kernel has its bug exactly when (r0, j0) is an iteration pair the loops run, whether it is
    run, skipped by the outer summary, by the nested period-P summary (P = stages) inside the outer loop's
    checked period, or by both."""
    inner = periods * stages
    path = tmp_path_factory.mktemp("nested_ring") / "k.ptx"
    path.write_text(_nested_ring_kernel(rows, inner, stages, r0, j0, barrier))
    r = check_file(path)
    bug = "race" if barrier else "out_of_bounds"
    assert r.verdict == (bug if r0 < rows and j0 < inner else "race_free"), (r.verdict, r.notes)


def _line_after(path: Path, label: str) -> int:
    """The line of the first instruction after `label` (1-based)."""
    lines = path.read_text().splitlines()
    return lines.index(label) + 2


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sets(st.integers(0, 63), max_size=24), st.integers(0, 7)), min_size=1, max_size=5),
       st.sets(st.integers(0, 63), max_size=16), st.lists(st.integers(0, 70), max_size=20))
def test_skipped_writes_per_byte_against_a_dict(summaries, overwritten, probe) -> None:
    """SkippedWrites (state.py) against a dict byte -> writer row: each summary's bytes take its writer, a plain
    store makes bytes the run's again, and `find` gives exactly the live bytes' writers."""
    from symexec.check.state import SkippedWrites

    oracle: dict[int, int] = {}
    rec = None
    for byts, row in summaries:
        offs = np.array(sorted(byts), np.int64)
        rows = np.full(offs.size, row, np.int64)
        rec = SkippedWrites(offs, rows, rows.copy(), np.ones(offs.size, bool)) if rec is None else \
            rec.merged(offs, rows, rows.copy())
        oracle.update({b: row for b in byts})
    at = rec.find(np.array(sorted(overwritten), np.int64))
    rec.live[at[at >= 0]] = False
    for b in overwritten:
        oracle.pop(b, None)
    got = rec.find(np.array(probe, np.int64))
    assert [int(rec.row[i]) if i >= 0 else None for i in got.tolist()] == [oracle.get(b) for b in probe]
    assert np.all(np.diff(rec.offsets) > 0)


def test_stale_audit_allow_list() -> None:
    """moves_value: which operands may carry STALE (exec.py); everything else, guards included, is audited."""
    from ptx_parser import parse
    from symexec import load_program
    from symexec.check.exec import _audited, moves_value

    text = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 a)
{
	.reg .pred %p<3>;
	.reg .b32 %r<9>;
	.reg .b64 %rd<3>;
	.reg .f32 %f<3>;
	ld.param.u64 %rd1, [a];
	add.s32 %r1, %r2, %r3;
	@%p1 mov.u32 %r4, 2048;
	div.s32 %r5, %r1, %r2;
	div.rn.f32 %f1, %f2, %f2;
	st.global.u32 [%rd1], %r1;
	shfl.sync.bfly.b32 %r6|%p2, %r1, %r2, 31, -1;
	atom.global.add.u32 %r7, [%rd1], %r1;
	bar.sync %r1, %r2;
	add.cc.u32 %r8, %r1, %r2;
	ret;
}
"""
    prog = load_program(parse(text), "k")
    got = {ins.name: _audited(ins, prog) for ins in prog.code}
    assert moves_value(prog.code[1]) == (1, 2) and got["add.s32"] == ()
    assert got["mov.u32"] == ("%p1",)  # the guard of a register-only instruction
    assert set(got["div.s32"]) == {"%r1", "%r2"} and got["div.rn.f32"] == ()
    assert got["st.global.u32"] == ("%rd1",)  # the address, not the data
    assert set(got["shfl.sync.bfly.b32"]) == {"%r2"}  # lane operand audited, the moved value not
    assert set(got["atom.global.add.u32"]) >= {"%rd1", "%r1"}
    assert set(got["bar.sync"]) == {"%r1", "%r2"} and set(got["add.cc.u32"]) == {"%r1", "%r2"}

def test_register_carried_through_a_64_bit_copy_is_summarised() -> None:
    """The row index goes to 64 bits (cvt.s64.s32) and back (cvt.u32.u64) every iteration, as sage_attention's
    sm_100a K/V offset does: trunc32(sext64(x)) is x (grid_expr.py `adapt`), so the register is its start plus 32
    per period and the loop is summarised (before: "not its start value plus a fixed amount per period", every
    iteration run). The twin's CTAs overlap in rows the summary skips: still a race (not in LOOP_CASES: with
    summaries off the grid of 4 CTAs is enumerated and the first witness is another CTA pair)."""
    r = check_file(REGRESSION / "loop_sext_round_trip_ok.ptx", grid="symbolic")
    (s,) = r.stats["loops_summarised"]
    assert r.verdict == "race_free" and s["iterations_skipped"] >= 50, s
    assert not any("not its start value plus a fixed amount" in n for n in r.notes), r.notes
    r = check_file(REGRESSION / "loop_sext_round_trip_late_race.ptx", grid="symbolic")
    assert r.verdict == "race" and "different CTAs" in r.findings[0].message, r.findings


def test_truncating_an_extension_gives_back_the_value() -> None:
    """adapt: the low w bits of a w-bit value extended (sign or zero) are the value; a narrower or wider
    truncation stays a truncation."""
    x = ("c", 32, 0)
    assert adapt(adapt(x, 64, signed=True), 32) == x
    assert adapt(adapt(x, 64), 32) == x
    assert adapt(adapt(x, 64, signed=True), 16) == ("trunc", 16, ("sext", 64, x))
    for v in (0, 1, 2**31 - 1, 2**31, 2**32 - 1):
        for signed in (False, True):
            e = ("trunc", 32, adapt(("c", 32, 0), 64, signed=signed))
            assert evaluate(e, {("c", 0): np.uint64(v)}) == evaluate(adapt(adapt(("c", 32, 0), 64, signed), 32),
                                                                      {("c", 0): np.uint64(v)}) == v


def test_live_predicate_on_the_iteration_is_held_over_the_summarised_periods(tmp_path: Path) -> None:
    """%p1 ("the next row lies outside the window [lo, lo + 128)") is computed in the latch and read at the top of
    the next iteration: live at the loop head and a function of t. It used to stop every summary ("live at the
    loop head and depends on the iteration"); now the periods skipped end before its value first changes
    (loops.py `_held`), as for a decision."""
    r = check_file(REGRESSION / "loop_live_bound_predicate_ok.ptx")
    (s,) = r.stats["loops_summarised"]
    assert r.verdict == "race_free" and s["iterations_skipped"] >= 50, s
    # the window holds iterations 40 .. 43: the summary ends before 40, they run, and the race in them is found
    r = check_file(REGRESSION / "loop_live_bound_predicate_late_race.ptx")
    (s,) = r.stats["loops_summarised"]
    assert r.verdict == "race" and s["from_iteration"] + s["iterations_skipped"] <= 40, s
    assert "two CTAs write the same bytes" in r.findings[0].message
    # the same predicate with the CTA's offset in the next row: it differs between CTAs, the executed ones'
    # values over t say nothing of the others', so the loop is not summarised
    src = (REGRESSION / "loop_live_bound_predicate_ok.ptx").read_text()
    latch = "\tshl.b32 %r9, %r4, 5;            // the next row's first word: i*32 + tid\n"
    assert latch in src
    varied = tmp_path / "varied.ptx"
    varied.write_text(src.replace(latch, latch + "\tadd.u32 %r9, %r9, %r3;\n"))
    r = check_file(varied, grid="symbolic")  # (auto enumerates 4 CTAs when no loop is summarised)
    assert r.verdict == "race_free" and not r.stats.get("loops_summarised")
    assert any("%p1 is live at the loop head and depends on the iteration (and on %ctaid" in n for n in r.notes), \
        r.notes


def test_prmt_with_an_unused_source_lets_the_loop_be_summarised() -> None:
    # the loop's prmt names a register that is never written, from which it picks no byte: the
    # register is not live at the head, so its absent value does not stop the proof
    r = check_file(REGRESSION / "loop_prmt_byte_extract_ok.ptx")
    (s,) = r.stats["loops_summarised"]
    assert r.verdict == "race_free" and s["iterations_skipped"] >= 50
    # the same loop with a selector picking one byte of that register is not summarised
    src = (REGRESSION / "loop_prmt_byte_extract_ok.ptx").read_text().replace("%r13, 0x0U;", "%r13, 0x4U;")
    assert "%r13, 0x4U;" in src
    prog = load_program(ptx_parser.parse(src, "prmt_b.ptx"), "k")
    assert "%r13" in live_in(prog)[prog.labels["LOOP"]]


def test_loop_writing_global_memory_is_summarised_also_when_read_back() -> None:
    r = check_file(REGRESSION / "loop_stores_partial_sums_ok.ptx")
    assert r.verdict == "race_free" and r.stats["loops_summarised"]  # the stores are classes over t
    # its twin reads back, by the writer itself, a store of an iteration the summary did not run: the skipped
    # stores are kept per byte and the read keeps the summary (before: every iteration run again)
    r = check_file(REGRESSION / "loop_stores_reads_back_ok.ptx")
    assert r.verdict == "race_free" and r.stats["loops_summarised"]
    assert not any("iteration by iteration" in n for n in r.notes), r.notes


@pytest.mark.slow
@pytest.mark.parametrize("arch, dims", [
    ("sm_80", {"M": 1024, "N": 1024, "K": 1024}),  # cp.async stages feeding mma.sync
    # cp.async stages feeding wgmma, one wgmma group left pending at the loop head (wait_group 1)
    ("sm_90a", {"M": 256, "N": 256, "K": 2048}),
    # cp.async stages feeding tcgen05.mma, committed to two alternating mbarriers (period 12); the
    # loop's latch falls through into its header
    ("sm_100a", {"M": 256, "N": 256, "K": 4096}),
])
def test_gemm_k_loop_summary_agrees_with_every_iteration(arch: str, dims: dict) -> None:
    c = get("gemm_fp16")
    c = dataclasses.replace(c, instances={**c.instances, "verify": dims})
    comp = compile_contract(c, arch)
    prog = load_program(ptx_parser.parse(comp.ptx, "gemm_fp16.ptx"), comp.entry)
    launch = launch_for(c, comp, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
    r = _both(lambda: check_kernel(prog, launch, grid="symbolic"))
    _same(r[True], r[False])
    assert r[True].verdict == "race_free" and r[True].stats["loops_summarised"]
    assert r[True].stats["steps"] < r[False].stats["steps"]


def test_in_place_loop_of_two_ctas_is_summarised() -> None:
    """Each CTA rewrites its own chunk in place (read, then write, per iteration). The executed CTAs'
    accesses of one instruction lie rows apart, around the other CTA's skipped stores: only a lane's own
    bytes are compared with the skipped footprint (the bounding box of both CTAs' lanes would cover it)."""
    r = check_file(REGRESSION / "loop_inplace_update_per_cta_ok.ptx")
    assert r.verdict == "race_free" and r.stats["grid_method"] == "symbolic", r.stats
    (s,) = r.stats["loops_summarised"]
    assert s["iterations_skipped"] >= 20
    assert not any("iteration by iteration" in n for n in r.notes), r.notes


# ------------------------------------------------------------------------------ a loop with a finding


def _sites(report) -> list:
    return [(f.kind, [s.describe() for s in f.sites]) for f in report.findings]


def test_loop_with_a_race_is_summarised_and_a_later_deadlock_still_found() -> None:
    """A race in every iteration no longer keeps the loop from being summarised (the detector's found sites are
    part of the canonical state); the summary stops where the decision j == 1000 changes, and the deadlock of that
    iteration is reported with the race, the same findings as running all 1024 iterations (582ee26: a stop at the
    first race hid it)."""
    r = _both(lambda: check_file(REGRESSION / "grid_loop_race_then_late_deadlock.ptx"))
    summarised, full = r[True], r[False]
    assert summarised.verdict == full.verdict == "deadlock"
    assert {f.kind.value for f in summarised.findings} == {"deadlock", "race"}
    assert _sites(summarised) == _sites(full)
    (s,) = summarised.stats["loops_summarised"]
    assert s["period"] == 1 and s["from_iteration"] + s["iterations_skipped"] <= 1000 < s["from_iteration"] + \
        s["iterations_skipped"] + 8  # skipped up to the deadlocking iteration, not past it
    assert any("since the run had a finding" in a for a in summarised.assumptions)
    assert summarised.stats["steps"] * 20 < full.stats["steps"]


def test_loop_with_a_race_and_a_late_out_of_bounds_read_is_run_in_full() -> None:
    """With a finding in the representative CTA the symbolic grid's bounds proof does not run, so the skipped
    periods' global reads are checked by the summary itself: in[j] leaves `in` at j = 1000, the loop is run in
    full and the fault is found, with the race, as without summaries."""
    r = _both(lambda: check_file(REGRESSION / "grid_loop_race_then_late_oob.ptx"))
    summarised, full = r[True], r[False]
    assert summarised.verdict == full.verdict == "out_of_bounds"
    assert {f.kind.value for f in summarised.findings} == {"out_of_bounds", "race"}
    assert _sites(summarised) == _sites(full)
    assert not summarised.stats.get("loops_summarised")
    assert any("leaves buffer in (the run faults there)" in n for n in summarised.notes), summarised.notes


def test_loop_with_a_race_whose_skipped_reads_are_written_later_is_run_again(tmp_path) -> None:
    """A summarised loop (the run has a race) read bytes that a store after the loop writes: a race with the
    skipped reads is the full run's question, so the summary is void (read footprint) and the loop runs again
    iteration by iteration."""
    text = (REGRESSION / "grid_loop_race_then_late_oob.ptx").read_text()
    text = text.replace('"in": {"dtype": "int32", "shape": [1000]}', '"in": {"dtype": "int32", "shape": [2048]}')
    text = text.replace("st.global.u32 [%rd3], %r7;", "st.global.u32 [%rd3], %r7;\n\tst.global.u32 [%rd4+2048], %r7;")
    path = tmp_path / "race_loop_read_then_written.ptx"
    path.write_text(text)
    r = _both(lambda: check_file(path))
    summarised, full = r[True], r[False]
    assert summarised.verdict == full.verdict == "race"
    assert any("iterations the loop summary did not run would have read" in n for n in summarised.notes), \
        summarised.notes
    assert _sites(summarised) == _sites(full)


@pytest.mark.slow
@pytest.mark.parametrize("name, dims, period", [
    # one stage: the K and V tiles land by TMA in the bytes that held the Q tile's mbarrier (invalidated
    # first); the phase parity alternates, so the state repeats every 2 iterations
    ("attention_tma", {"B": 1, "H": 1, "S": 1024, "D": 64}, 2),
    # TMA tiles and scale factors feeding mma block_scale through two stages (period 4)
    ("gemm_block_scaled", {"M": 8192, "N": 8192, "K": 8192, "KS": 256}, 4),
])
def test_tma_k_loop_summary_agrees_with_every_iteration(name: str, dims: dict, period: int) -> None:
    """The K loops of the TMA kernels on sm_120 are summarised (they were not: a tensor copy's landed
    bytes had no data taint, the mbarrier byte reused as a tile kept every later read, and the retired
    mbarrier's release never compared equal), and the summary finds what running every iteration finds."""
    c = get(name)
    c = dataclasses.replace(c, instances={**c.instances, "verify": dims})
    comp = compile_contract(c, "sm_120")
    prog = load_program(ptx_parser.parse(comp.ptx, f"{name}.ptx"), comp.entry)
    launch = launch_for(c, comp, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
    r = _both(lambda: check_kernel(prog, launch, grid="symbolic"))
    _same(r[True], r[False])
    (s,) = r[True].stats["loops_summarised"]
    assert r[True].verdict == "race_free" and s["period"] == period and s["iterations_skipped"] >= 4
    assert r[True].stats["steps"] < r[False].stats["steps"]


# ------------------------------------------------------------------------------ wgmma on sm_90a

_WGMMA_LOOP = """.version 8.6
.target sm_90a
.address_size 64
.visible .entry k(.param .u32 n)
{{
  .reg .pred %p<4>;
  .reg .b32 %r<8>;
  .reg .f32 %f<8>;
  .reg .b64 %rd<8>;
  ld.param.u32 %r1, [n];
  mov.u64 %rd5, 0;
  mov.u64 %rd6, 0;
  mov.f32 %f1, 0f00000000;
  mov.f32 %f2, 0f00000000;
  mov.f32 %f3, 0f00000000;
  mov.f32 %f4, 0f00000000;
  mov.u32 %r2, 0;
HEAD:
{body}
  add.u32 %r2, %r2, 1;
  setp.lt.u32 %p1, %r2, %r1;
  @%p1 bra HEAD;
  ret;
}}
"""
_MMA = "  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd5, %rd6, 1, 1, 1, 0, 0;\n"
_FENCE = "  wgmma.fence.sync.aligned;\n"
_DONE = "  wgmma.commit_group.sync.aligned;\n  wgmma.wait_group.sync.aligned 0;\n"


@pytest.mark.parametrize("body, needed", [
    # a fence before the loop's mma, the accumulators not written in between: the issue passes by the fence's
    # snapshot whatever the flags at the head were (an accumulator rescaled after the wait: attention's O)
    (_FENCE + _MMA + _DONE + "  mul.f32 %f1, %f1, 0f3F000000;\n", set()),
    # an accumulator written between the fence and the mma: the issue compares it with stored values
    (_FENCE + "  mul.f32 %f2, %f2, 0f3F000000;\n" + _MMA + _DONE, {"%f2"}),
    # the mma before the loop's fence: it relies on the registers holding the last mma's result (or the fence's)
    (_MMA + _DONE + _FENCE, {"%f1", "%f2", "%f3", "%f4"}),
    # a fence only on some paths to the mma
    ("  setp.eq.u32 %p2, %r2, 3;\n  @%p2 wgmma.fence.sync.aligned;\n" + _MMA + _DONE, {"%f1", "%f2", "%f3", "%f4"}),
])
def test_wgmma_flags_needed_at_a_loop_head(body: str, needed: set[str]) -> None:
    """The wgmma registers' fence/written flags (Canon._wgmma_same) are left out of a loop head's state only
    where no path from the head consults them (loops.wgmma_flags_needed): a flag that differs between two
    boundaries and decides a later issue (9.7.15.7.1) keeps their states apart."""
    prog = load_program(ptx_parser.parse(_WGMMA_LOOP.format(body=body), "w.ptx"), "k")
    assert set(loopsmod.wgmma_flags_needed(prog)[prog.labels["HEAD"]]) == needed


def test_wgmma_loop_rereading_a_tile_is_summarised_and_a_late_overwrite_found() -> None:
    """A tile loaded once and read by a wgmma every iteration: each iteration's asynchronous read is ordered before
    the next (the issuers observed its completion at wait_group 0), so the older reads decide nothing
    (loops._dominated_agent_reads) and the loop is summarised (it was not: one more read record per iteration, the
    state never repeated). The twin overwrites the tile before the wait in iteration 60: the summary stops before
    it and the race is found, as running every iteration finds it."""
    r = check_file(REGRESSION / "loop_wgmma_tile_reread_ok.ptx")
    (s,) = r.stats["loops_summarised"]
    assert r.verdict == "race_free" and s["period"] == 1 and s["iterations_skipped"] >= 50
    r = check_file(REGRESSION / "loop_wgmma_tile_reread_late_overwrite_race.ptx")
    (s,) = r.stats["loops_summarised"]
    assert r.verdict == "race" and s["from_iteration"] + s["iterations_skipped"] <= 60
    sites = " ".join(s.describe() for s in r.findings[0].sites)
    assert "wgmma.mma_async" in sites and "st.shared.u32" in sites and ":51:" in sites  # the overwrite of iteration 60


def test_wgmma_agents_rotating_through_their_pool_repeat_up_to_their_columns() -> None:
    """wait_group 1 leaves one wgmma in flight at the loop head; each issue reuses a completed agent, and the pool's
    order (so which clock column each agent has) differs from one iteration to the next. Canon renames the agents'
    columns (free ones by their place in the pool, those in flight by their operation): period 1 (it was 2; gemm_fp8
    sm_90a: 12 -> 4). The twin overwrites the tile in iteration 60 while that iteration's wgmma may read it: found."""
    r = check_file(REGRESSION / "loop_wgmma_pipelined_reread_ok.ptx")
    (s,) = r.stats["loops_summarised"]
    assert r.verdict == "race_free" and s["period"] == 1 and s["iterations_skipped"] >= 50
    r = check_file(REGRESSION / "loop_wgmma_pipelined_reread_late_overwrite_race.ptx")
    (s,) = r.stats["loops_summarised"]
    assert r.verdict == "race" and s["from_iteration"] + s["iterations_skipped"] <= 60
    sites = " ".join(s.describe() for s in r.findings[0].sites)
    assert "wgmma.mma_async" in sites and "st.shared.u32" in sites and ":51:" in sites


def test_canon_ranks_each_threads_clock_in_its_own_cta(monkeypatch) -> None:
    """Canon's `thread_clocks` / `thread_clock_values`: each (kind, thread row) maps to the class of its own clock
    vector, ranked in its CTA's columns. Until 2026-12-04 the CTAs were passed as a (U, 1) array, so rank_vec
    broadcast every vector against every CTA ((U, U, W) values, U times the work: 2 s of each boundary's state on
    gemm_fp8 sm_90a) and a row's class followed its CTA only: two states whose threads hold each other's clocks
    compared equal."""
    checked = []
    init = loopsmod.Canon.__init__

    def check(self, *a, **k):
        init(self, *a, **k)
        parts = dict(self.parts)
        values = loopsmod._unpacked(parts["thread_clock_values"])
        classes = loopsmod._unpacked(parts["thread_clocks"])
        c = self.clocks
        assert values.ndim == 2 and values.shape[1] == self.W
        rows = np.arange(c.n_threads)
        for kind in range(c.base.shape[0]):
            want = self.rank_vec(c._table[c.base[kind]].astype(np.int64), rows // c.T)
            assert np.array_equal(values[classes[kind * c.n_threads + rows]], want)
        checked.append(len(np.unique(classes)))

    monkeypatch.setattr(loopsmod.Canon, "__init__", check)
    check_file(REGRESSION / "loop_shared_staging_ok.ptx")
    assert checked


def test_period_one_guessed_from_the_first_two_boundaries(tmp_path) -> None:
    """A period-1 loop's step is guessed from its first two boundaries (loops.py `_deltas_first`, the first one
    the anchor of the canonical state), so its proof follows iteration 2, not 4 (dion_update: 1360 instructions an
    inner iteration), where the loop's code gives no step to guess from at its first boundary (`_deltas_static`:
    here the pointer adds a register the loop writes). The guess is a guess: a pointer whose step grows (linear
    over the first two boundaries, quadratic after) fails the closure and the loop runs in full, its late
    out-of-bounds store found."""
    text = (REGRESSION / "loop_first_two_boundaries_linear_ok.ptx").read_text()
    step = "\tadd.u32 %r5, %r5, 64;\n"
    assert step in text
    path = tmp_path / "linear_step_written_in_the_loop.ptx"
    path.write_text(text.replace(step, "\tmov.u32 %r7, 64;\n\tadd.u32 %r5, %r5, %r7;\n"))
    r = check_file(path)
    (s,) = r.stats["loops_summarised"]
    assert r.verdict == "race_free" and s["period"] == 1 and s["from_iteration"] == 2 and s["iterations_skipped"] == 12, s
    r = check_file(REGRESSION / "loop_first_two_boundaries_linear_ok.ptx")  # a constant step: read from the code
    (s,) = r.stats["loops_summarised"]
    assert r.verdict == "race_free" and s["period"] == 1 and s["from_iteration"] == 1 and s["iterations_skipped"] == 13, s
    r = check_file(REGRESSION / "loop_first_two_boundaries_quadratic_late_oob.ptx")
    assert r.verdict == "out_of_bounds" and "out[4224]" in r.findings[0].message
    assert not r.stats.get("loops_summarised") and any("not its start value plus" in n for n in r.notes), r.notes


def test_period_one_step_read_from_the_code_at_the_first_boundary() -> None:
    """A period-1 loop whose live registers each have one write in the loop adding a constant or a register the loop
    does not write: its step D is read from the code (loops.py `_deltas_static`) and its proof follows iteration 1,
    one before the guess from the first two boundaries (dion_update: its outer loops' latch blocks are heads first
    reached after outer iteration 0). A guess like the others: an add that runs in one iteration only (read as a
    step of 1000 every iteration) fails the closure, nothing is skipped on it, and the late out-of-bounds store it
    causes is found."""
    r = check_file(REGRESSION / "loop_static_step_register_ok.ptx")
    (s,) = r.stats["loops_summarised"]
    assert r.verdict == "race_free" and s["period"] == 1 and s["from_iteration"] == 1 and s["iterations_skipped"] == 13, s
    assert r.stats["grid_method"] == "symbolic", r.stats
    r = check_file(REGRESSION / "loop_static_step_wrong_guess_late_oob.ptx")
    assert r.verdict == "out_of_bounds" and "out[4712]" in r.findings[0].message, r.findings


def test_static_steps_read_one_add_of_a_constant_or_an_invariant_register() -> None:
    """`_steps` (the code `_deltas_static` reads): a register's one unguarded add/sub of itself and a literal or
    a register the loop does not write is a step; several writes, a guarded one, a float add or a source written
    in the loop is no step (None); a register only read is absent."""
    body = """	add.s32 %r1, %r1, 64;
	sub.u64 %rd1, %rd1, %rd2;
	add.u32 %r2, %r3, %r2;
	add.u32 %r4, %r4, %r5;
	mov.u32 %r5, 1;
	add.u32 %r6, %r6, 1;
	add.u32 %r6, %r6, 1;
	@%p1 add.u32 %r7, %r7, 1;
	add.f32 %f1, %f1, 0f3F800000;
	add.u32 %r8, %r8, %r9;"""
    src = f""".version 8.0
.target sm_80
.address_size 64
.visible .entry k()
{{
	.reg .pred %p<3>;
	.reg .b32 %r<16>;
	.reg .b64 %rd<4>;
	.reg .f32 %f<4>;
{body}
	ret;
}}
"""
    prog = load_program(ptx_parser.parse(src, "steps.ptx"), "k")
    got = loopsmod._steps(prog, tuple(range(len(body.splitlines()))))
    assert got == {"%r1": (64, False), "%rd1": ("%rd2", True), "%r2": ("%r3", False), "%r4": None, "%r5": None,
                   "%r6": None, "%r7": None, "%f1": None, "%r8": ("%r9", False)}, got


def test_short_loop_before_a_long_one_leaves_its_proof_open_no_longer(tmp_path) -> None:
    """A loop of 3 to 5 iterations before the long one: its proof started (from its first two boundaries, or at
    its fourth on main) and the loop ended within the period followed, so the proof stayed open and the long
    loop's back edges were taken for branches of that period: the long loop was never summarised (the grid
    enumerated). The back edge of a loop outside the open proof's natural loop now ends that proof (run as
    t = 0, nothing skipped) and is recorded as any other."""
    text = (REGRESSION / "loop_first_two_boundaries_linear_ok.ptx").read_text()
    text = text.replace('"shape": [4096]', '"shape": [8192]')
    text = text.replace("cvta.to.global.u64 %rd1, %rd1;", "cvta.to.global.u64 %rd1, %rd1;\n\tmov.f32 %f3, 0f00000000;")
    prologue = """	mov.u32 %r8, 0;
	mad.lo.u32 %r9, %r2, 1024, %r1;
	add.u32 %r9, %r9, 4096;
PRO:
	mul.wide.u32 %rd5, %r9, 4;
	add.s64 %rd6, %rd1, %rd5;
	st.global.f32 [%rd6], %f3;
	add.u32 %r9, %r9, 64;
	add.u32 %r8, %r8, 1;
	setp.lt.u32 %p2, %r8, {n};
	@%p2 bra PRO;
	mov.u32 %r6, 0;"""
    assert "\tmov.u32 %r6, 0;" in text
    for n in (3, 4, 5):
        path = tmp_path / f"prologue_{n}.ptx"
        path.write_text(text.replace("\tmov.u32 %r6, 0;", prologue.format(n=n), 1))
        r = check_file(path)
        long = [s for s in r.stats.get("loops_summarised") or [] if s["iterations_skipped"] == 13]
        assert r.verdict == "race_free" and r.stats["grid_method"] == "symbolic" and len(long) == 1, (n, r.stats)


# ------------------------------------------------------------------------------ bulk operations in the canonical state


@dataclasses.dataclass
class _BulkOp:
    lane: int
    group: int
    epoch: int
    performed: bool = False


@settings(max_examples=400, deadline=None)
@given(ns=st.lists(st.integers(0, 3), min_size=1, max_size=3),
       events=st.lists(st.tuples(st.sampled_from(["issue", "commit", "read", "wait"]), st.integers(0, 1),
                                 st.integers(0, 2)), max_size=40))
def test_bulk_ops_left_out_of_the_canonical_state_never_change_an_observation(ns: list[int], events: list) -> None:
    """`loops.bulk_kept` (Canon's bulk operations) against the full list as an oracle: two threads issue bulk ops,
    commit groups and wait with `.read` (the reads performed, the op kept) or without (the op observed: the
    thread's stream entry moves to the op's epoch, a maximum; async_copy.perform_bulk, hb.stream_observe), every
    wait without .read with an N of `ns`. Pruning after every event never changes what a thread observes, keeps
    every op whose reads are not performed, and every performed op it keeps past the horizon is selected by
    every wait, whatever the commits after it."""
    horizon = max(ns) + 1
    committed = np.zeros(2, np.int64)
    full: list[_BulkOp] = []
    kept: list[_BulkOp] = []
    seen = {"full": np.zeros(2, np.int64), "kept": np.zeros(2, np.int64)}
    epoch = 0
    for kind, lane, which in events:
        if kind == "issue":
            epoch += 1
            full.append(_BulkOp(lane, int(committed[lane]), epoch))
            kept.append(_BulkOp(lane, int(committed[lane]), epoch))
        elif kind == "commit":
            committed[lane] += 1
        else:
            n = ns[which % len(ns)] if kind == "wait" else which
            for name, ops in (("full", full), ("kept", kept)):
                rest = []
                for op in ops:
                    if op.lane != lane or op.group >= committed[lane] - n:
                        rest.append(op)
                    elif kind == "read":
                        op.performed = True
                        rest.append(op)
                    else:
                        seen[name][lane] = max(seen[name][lane], op.epoch)
                ops[:] = rest
        kept[:] = loopsmod.bulk_kept(kept, committed, horizon)
        assert (seen["full"] == seen["kept"]).all()
        assert [o.epoch for o in full if not o.performed] == [o.epoch for o in kept if not o.performed]
        for op in kept:
            if op.performed and op.group - committed[op.lane] <= -horizon:
                assert all(op.group < committed[op.lane] - n for n in ns)


def test_live_in_reads_a_tensor_store_s_coordinates() -> None:
    """A TMA store's coordinate registers (`[tmap, {c0, c1}]`) are read: before, liveness skipped the tensor-address
    operand, so coordinates computed in one period and stored in the next looked dead at the loop head and the loop
    proof never checked them (gemm_tma_persistent's C store: its skipped periods' stores were recorded at period 0's
    box)."""
    module = ptx_parser.parse_file(REGRESSION / "grid_ctaid_persistent_tma_store_summarised_ok.ptx")
    prog = load_program(module, "k")
    store = next(ins for ins in prog.code if ins.opcode == "cp" and ".tensor" in ins.modifiers)
    uses, _ = loopsmod._use_def(store, prog)
    assert {"%rd1", "%r6", "%r8", "%r4", "%p1"} <= uses, uses
