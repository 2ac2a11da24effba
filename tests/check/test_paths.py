"""The Z3 terms of data-dependent values (symexec/check/terms.py, paths.py) against the emulator.

Pruning a finding is sound only if a term means what the instruction computed. Differential test:
random straight-line PTX over two input words per thread (integer and f32 chains, comparisons,
selp) runs in check mode with the term log; the term of each thread's result, with the input bytes
the run read substituted by the launch's, must simplify to exactly the value the emulator stored.
Then whole-kernel cases: infeasible path combinations are pruned, feasible ones are not.
"""

from __future__ import annotations

import numpy as np
import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from ptx_parser import parse
from symexec import Launch, load_program
from symexec.check import check_kernel
from symexec.check.paths import Terms
from symexec.check.run import new_run, record_report

INT_OPS = {  # opcode text -> number of register operands
    "add.s32": 2, "sub.s32": 2, "mul.lo.s32": 2, "mul.hi.s32": 2, "mul.hi.u32": 2, "mad.lo.s32": 3,
    "and.b32": 2, "or.b32": 2, "xor.b32": 2, "shl.b32": 2, "shr.s32": 2, "shr.u32": 2, "min.s32": 2,
    "max.u32": 2, "min.u32": 2, "max.s32": 2, "neg.s32": 1, "abs.s32": 1, "not.b32": 1, "mov.b32": 1,
    "cvt.s32.s8": 1, "cvt.u32.u16": 1, "cvt.s32.s16": 1, "mul.wide.s16": 2,
}
CMPS = ["eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"]
FLOAT_OPS = {"add.rn.f32": 2, "sub.rz.f32": 2, "mul.rn.f32": 2, "fma.rn.f32": 3, "neg.f32": 1, "abs.f32": 1}
FCMPS = ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"]


def _kernel(lines: list[str], nregs: int, float_chain: bool) -> str:
    body = "\n\t".join(lines)
    ty = ".f32" if float_chain else ".b32"
    return f""".version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 x, .param .u64 y, .param .u64 out, .param .u64 flag)
{{
	.reg .pred %p<4>;
	.reg {ty} %v<{nregs + 4}>;
	.reg .b32 %s<4>;
	.reg .b64 %rd<12>;
	ld.param.u64 %rd1, [x];
	ld.param.u64 %rd2, [y];
	ld.param.u64 %rd3, [out];
	ld.param.u64 %rd4, [flag];
	cvta.to.global.u64 %rd1, %rd1;
	cvta.to.global.u64 %rd2, %rd2;
	cvta.to.global.u64 %rd3, %rd3;
	cvta.to.global.u64 %rd4, %rd4;
	mov.u32 %s1, %tid.x;
	mul.wide.u32 %rd5, %s1, 4;
	add.s64 %rd6, %rd1, %rd5;
	add.s64 %rd7, %rd2, %rd5;
	ld.global{ty} %v0, [%rd6];
	ld.global{ty} %v1, [%rd7];
	{body}
	add.s64 %rd8, %rd3, %rd5;
	st.global{ty} [%rd8], %v{nregs - 1};
	selp.b32 %s2, 1, 0, %p1;
	add.s64 %rd9, %rd4, %rd5;
	st.global.b32 [%rd9], %s2;
	ret;
}}
"""


@st.composite
def chains(draw, float_chain: bool):
    ops = FLOAT_OPS if float_chain else INT_OPS
    n = draw(st.integers(1, 8))
    lines, nregs = [], 2
    for _ in range(n):
        op = draw(st.sampled_from(sorted(ops)))
        srcs = [f"%v{draw(st.integers(0, nregs - 1))}" for _ in range(ops[op])]
        lines.append(f"{op} %v{nregs}, {', '.join(srcs)};")
        nregs += 1
    cmp = draw(st.sampled_from(FCMPS if float_chain else CMPS))
    ty = "f32" if float_chain else ("u32" if cmp in ("lo", "ls", "hi", "hs") else "s32")
    a, b = draw(st.integers(0, nregs - 1)), draw(st.integers(0, nregs - 1))
    lines.append(f"setp.{cmp}.{ty} %p1, %v{a}, %v{b};")
    return lines, nregs


def _inputs(draw_seed: int, float_chain: bool) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(draw_seed)
    if float_chain:
        pool = np.array([0.0, -0.0, 1.0, -1.5, 3.25, 1e30, -1e-30, np.inf, np.nan, 2.0 ** -130], np.float32)
        pick = lambda: np.where(rng.random(32) < 0.4, pool[rng.integers(0, pool.size, 32)],  # noqa: E731
                                rng.standard_normal(32).astype(np.float32))
        return pick().astype(np.float32), pick().astype(np.float32)
    pool = np.array([0, 1, 31, 32, 33, -1, -2**31, 2**31 - 1, 65535], np.int64).astype(np.uint32)
    pick = lambda: np.where(rng.random(32) < 0.4, pool[rng.integers(0, pool.size, 32)],  # noqa: E731
                            rng.integers(0, 2**32, 32, dtype=np.uint64).astype(np.uint32))
    return pick().astype(np.uint32), pick().astype(np.uint32)


def _check_terms(lines: list[str], nregs: int, float_chain: bool, seed: int) -> None:
    prog = load_program(parse(_kernel(lines, nregs, float_chain)))
    x, y = _inputs(seed, float_chain)
    launch = Launch((1,), (32,), {"x": x, "y": y, "out": np.zeros(32, np.uint32), "flag": np.zeros(32, np.uint32)},
                    ["x", "y", "out", "flag"])
    run = new_run(prog, launch, terms=True)
    rep = record_report(run, prog, launch)
    assert not rep.findings, rep.findings
    st_ = run.state
    names = {b: run.machine.glob.allocations[b.index].name for b in st_.mem if getattr(b, "index", None) is not None
             and b.space.value == "global"}
    terms = Terms(st_.terms, prog, names)
    tr = st_.tracker
    glob = run.machine.glob
    want_v = glob.by_name("out").data.view(np.uint32)
    want_p = glob.by_name("flag").data.view(np.uint32)
    raw = {"x": x.view(np.uint8), "y": y.view(np.uint8)}
    compared = 0
    for lane in range(32):
        for reg, width, want in ((f"%v{nregs - 1}", 32, int(want_v[lane])), ("%p1", 1, int(want_p[lane]))):
            taint = int(np.broadcast_to(tr.reg_taint.get(reg, np.zeros((), np.uint8)), (32,))[lane])
            if taint == 0:
                continue  # a fixed value: no term needed
            h = int(np.broadcast_to(tr.reg_hash[reg], (32,))[lane])
            t = terms.of(h, width)
            subs = [(var, z3.BitVecVal(int(raw[names[buf]][off]), 8)) for (buf, off), var in terms.inputs.items()]
            got = z3.simplify(z3.substitute(t, *subs) if subs else t)
            if not isinstance(got, z3.BitVecNumRef):
                continue  # an unknown (fresh) part: a weaker condition, never a wrong one
            if width == 32 and float_chain and np.isnan(np.uint32(want).view(np.float32)):
                assert np.isnan(np.uint32(got.as_long()).view(np.float32)), (lines, lane)
                compared += 1
                continue
            assert got.as_long() == want, (lines, lane, reg, hex(got.as_long()), hex(want))
            compared += 1
    assert compared or float_chain, lines  # every integer opcode here has a term


@settings(max_examples=40, deadline=None)
@given(chains(False), st.integers(0, 2**16))
def test_integer_terms_match_the_emulator(chain, seed) -> None:
    _check_terms(*chain, False, seed)


@settings(max_examples=30, deadline=None)
@given(chains(True), st.integers(0, 2**16))
def test_float_terms_match_the_emulator(chain, seed) -> None:
    _check_terms(*chain, True, seed)


PAIR = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 cfg, .param .u64 out)
{{
	.reg .pred %p<6>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<4>;
	.shared .align 4 .b32 slot[1];
	ld.param.u64 %rd1, [cfg];
	ld.param.u64 %rd2, [out];
	cvta.to.global.u64 %rd1, %rd1;
	cvta.to.global.u64 %rd2, %rd2;
	ld.global.u32 %r1, [%rd1];
	ld.global.u32 %r4, [%rd1+4];
	mov.u32 %r2, %tid.x;
	setp.eq.u32 %p1, %r2, 0;
	{first}
	and.pred %p3, %p1, %p2;
	@!%p3 bra SKIP;
	st.shared.u32 [slot], %r1;
SKIP:
	setp.eq.u32 %p1, %r2, 32;
	{second}
	and.pred %p5, %p1, %p4;
	@!%p5 bra DONE;
	ld.shared.u32 %r3, [slot];
	st.global.u32 [%rd2], %r3;
DONE:
	ret;
}}
"""


@pytest.mark.parametrize("first,second,verdict", [
    # contradictory tests of the input (the launch, cfg = [7, 9], takes the store's path only)
    ("setp.gt.s32 %p2, %r1, 5;", "setp.lt.s32 %p4, %r1, 3;", "race_free"),
    ("add.s32 %r5, %r1, 1;\n\tsetp.eq.s32 %p2, %r5, 8;", "setp.ne.s32 %p4, %r1, 7;", "race_free"),
    ("setp.ne.s32 %p2, %r1, %r4;", "xor.b32 %r6, %r1, %r4;\n\tsetp.eq.s32 %p4, %r6, 0;", "race_free"),
    # satisfiable together but not by the launch (cfg = [7, 9]): a race for another input, replayed
    ("setp.gt.s32 %p2, %r1, 5;", "setp.gt.s32 %p4, %r4, 100;", "race"),
    ("mul.lo.s32 %r5, %r1, %r4;\n\tsetp.eq.s32 %p2, %r5, 12;", "setp.lt.u32 %p4, %r4, 3;", "race"),
])
def test_infeasible_combinations_are_pruned_and_feasible_ones_are_not(first, second, verdict) -> None:
    prog = load_program(parse(PAIR.format(first=first, second=second)))
    launch = Launch((1,), (64,), {"cfg": np.array([7, 9], np.int32), "out": np.zeros(64, np.int32)}, ["cfg", "out"])
    r = check_kernel(prog, launch)
    assert r.verdict == verdict, (r.verdict, r.notes)
    if verdict == "race":  # the witness input is named and the launch's own input does not reach it
        assert any("does not reach this" in n for n in r.notes), r.notes
        assert r.witness_launch is not None
    else:
        assert any("every input" in a for a in r.assumptions), r.assumptions
        assert r.stats["reach"]["pruned"] >= 1
