"""The rule-based rewrites: each applies where its precondition holds and nowhere else, its result
parses and ptxas assembles it, and the known-alignment analysis behind vectorisation is sound
(property test against concrete evaluation)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ptx_parser
from harness import suite
from harness.candidate import contract_grid_text
from harness.compile import compile_contract
from harness.judge import ptxas
from taic_agent import rules as R

CONTRACTS = ["relu", "rowsum", "softmax", "layernorm", "swiglu", "gemm_fp16"]


def kernel(contract: str) -> tuple[R.Kernel, object]:
    c = suite.get(contract)
    ref = compile_contract(c, "sm_90a", "verify")
    return R.Kernel.parse(ref.ptx, R.contract_roles(c, ref), grid=contract_grid_text(c)), ref


@pytest.mark.parametrize("contract", CONTRACTS)
def test_every_applicable_rule_gives_ptx_that_parses_and_assembles(contract: str) -> None:
    k, ref = kernel(contract)
    found = R.applicable(k)
    assert found, f"no rule applies to {contract}"
    for key in found:
        out = R.RULES[key].apply(k)
        assert out is not None
        ptx_parser.parse(out, f"{contract}.{key}.ptx")
        a = ptxas.assemble(out, ref.target, ref.entry)
        assert a.ok, f"{contract} {key}: {a.log[-400:]}"
        again = R.Kernel.parse(out, list(k.roles.values()), grid=k.grid)
        assert key not in R.applicable(again) or key in ("unroll-2",), f"{key} applies twice to {contract}"


def test_which_rules_apply_where() -> None:
    assert set(R.applicable(kernel("relu")[0])) == {"nc-loads", "streaming-stores"}
    assert set(R.applicable(kernel("rowsum")[0])) == {"nc-loads", "streaming-stores", "l2-prefetch", "unroll-2",
                                                      "one-row-per-warp"}
    gemm = R.applicable(kernel("gemm_fp16")[0])
    assert "nc-loads" not in gemm  # its inputs are read by cp.async into shared memory, not by ld.global


HEAD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 k_param_0, .param .u64 k_param_1, .param .u32 k_param_2)
.reqntid 128
{
\t.reg .pred %p<3>;
\t.reg .b32 %r<12>;
\t.reg .f32 %f<12>;
\t.reg .b64 %rd<12>;
\tld.param.u64 %rd1, [k_param_0];
\tld.param.u64 %rd2, [k_param_1];
\tcvta.to.global.u64 %rd1, %rd1;
\tcvta.to.global.u64 %rd2, %rd2;
\tmov.u32 %r1, %tid.x;
\tmul.wide.u32 %rd3, %r1, 16;
\tadd.s64 %rd4, %rd1, %rd3;
\tadd.s64 %rd5, %rd2, %rd3;
"""
ROLES = ["in", "out", "scalar"]


def body(text: str) -> R.Kernel:
    return R.Kernel.parse(HEAD + text + "\tret;\n}\n", ROLES)


def test_vectorize_needs_proved_alignment() -> None:
    four = "".join(f"\tld.global.f32 %f{i + 1}, [%rd4+{4 * i}];\n" for i in range(4))
    four += "".join(f"\tst.global.f32 [%rd5+{4 * i}], %f{i + 1};\n" for i in range(4))
    k = body(four)
    sites = R.RULES["vectorize"].find(k)
    assert [s.what.split()[0] for s in sites] == ["4", "4"]
    out = R.RULES["vectorize"].apply(k)
    assert "ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd4+0];" in out
    assert "st.global.v4.f32 [%rd5+0], {%f1, %f2, %f3, %f4};" in out
    # offset 4: [rd4+4 .. +16] is only 4-byte aligned -> v2 at +8 is the most that is proved
    shifted = "".join(f"\tld.global.f32 %f{i + 1}, [%rd4+{4 + 4 * i}];\n" for i in range(4))
    assert [s.what.split()[0] for s in R.RULES["vectorize"].find(body(shifted))] == ["2"]
    assert "ld.global.v2.f32 {%f2, %f3}, [%rd4+8];" in R.RULES["vectorize"].apply(body(shifted))
    # a base loaded from memory has no known alignment
    loaded = "\tld.global.u64 %rd6, [%rd4];\n" + "".join(f"\tld.global.f32 %f{i + 1}, [%rd6+{4 * i}];\n"
                                                         for i in range(4))
    assert R.RULES["vectorize"].find(body(loaded)) == []
    # a stride of 4 bytes per thread: the base is only 4-byte aligned
    narrow = HEAD.replace("mul.wide.u32 %rd3, %r1, 16", "mul.wide.u32 %rd3, %r1, 4")
    k2 = R.Kernel.parse(narrow + "".join(f"\tld.global.f32 %f{i + 1}, [%rd4+{4 * i}];\n" for i in range(4))
                        + "\tret;\n}\n", ROLES)
    assert R.RULES["vectorize"].find(k2) == []


def test_nc_loads_only_for_buffers_the_kernel_never_writes() -> None:
    ok = body("\tld.global.f32 %f1, [%rd4];\n\tst.global.f32 [%rd5], %f1;\n")
    assert len(R.RULES["nc-loads"].find(ok)) == 1
    # the same load, but the kernel also stores into the input buffer
    bad = body("\tld.global.f32 %f1, [%rd4];\n\tst.global.f32 [%rd4+4], %f1;\n")
    assert R.RULES["nc-loads"].find(bad) == []
    # a store through a pointer read from memory may alias anything
    alias = body("\tld.global.u64 %rd7, [%rd5];\n\tld.global.f32 %f1, [%rd4];\n\tst.global.f32 [%rd7], %f1;\n")
    assert R.RULES["nc-loads"].find(alias) == []
    # an output is never read through .nc
    out = body("\tld.global.f32 %f1, [%rd5];\n\tst.global.f32 [%rd5], %f1;\n")
    assert R.RULES["nc-loads"].find(out) == []
    assert R.RULES["streaming-stores"].find(out) == []  # the output is read: not written once


def test_unroll_keeps_the_iteration_sequence() -> None:
    loop = ("\tmov.u32 %r2, 0;\n\tmov.f32 %f1, 0f00000000;\n$LOOP:\n\tld.global.f32 %f2, [%rd4];\n"
            "\tadd.f32 %f1, %f1, %f2;\n\tadd.s64 %rd4, %rd4, 2048;\n\tadd.u32 %r2, %r2, 1;\n"
            "\tsetp.lt.u32 %p1, %r2, 5;\n\t@%p1 bra $LOOP;\n\tst.global.f32 [%rd5], %f1;\n")
    k = body(loop)
    out = R.RULES["unroll-2"].apply(k)
    lines = [x.strip() for x in out.splitlines()]
    assert lines.count("ld.global.f32 %f2, [%rd4];") == 2
    assert "@!%p1 bra $LOOP_u0;" in lines and "@%p1 bra $LOOP;" in lines and "$LOOP_u0:" in lines
    assert lines.index("@!%p1 bra $LOOP_u0;") < lines.index("@%p1 bra $LOOP;") < lines.index("$LOOP_u0:")
    # a loop with an inner branch is not straight-line: not unrolled
    inner = loop.replace("\tadd.f32 %f1, %f1, %f2;\n", "\t@%p2 bra $SKIP;\n\tadd.f32 %f1, %f1, %f2;\n$SKIP:\n")
    assert R.RULES["unroll-2"].find(body(inner)) == []


def test_unrolled_rowsum_computes_the_same(tmp_path) -> None:
    """The harness accepts the unrolled rowsum (odd and even trip counts at the unseen sizes)."""
    from harness import evaluate
    from harness.judge.pipeline import EvalOptions

    k, _ = kernel("rowsum")
    out = R.RULES["unroll-2"].apply(k)
    rep = evaluate("rowsum", out, options=EvalOptions(seed=3, unseen=2))
    assert rep.accepted, [(s.stage, s.summary) for s in rep.stages]


OPS = st.sampled_from(["add", "shl", "mul", "and", "or", "mov"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(OPS, st.integers(0, 9), st.integers(0, 9), st.integers(0, 64)), min_size=1, max_size=12),
       st.lists(st.integers(0, 2**20), min_size=3, max_size=3))
def test_known_alignment_is_sound(prog, inputs) -> None:
    """Random integer programs over a 16-byte aligned pointer, %tid.x and a scalar: every register's
    concrete value is a multiple of the alignment the analysis claims."""
    lines = ["\tld.param.u64 %rd1, [k_param_0];", "\tmov.u32 %r1, %tid.x;", "\tld.param.u32 %r2, [k_param_2];",
             "\tcvt.u64.u32 %rd2, %r1;", "\tcvt.u64.u32 %rd3, %r2;"]
    env = {"%rd1": inputs[0] * 16, "%rd2": inputs[1], "%rd3": inputs[2]}
    regs = ["%rd1", "%rd2", "%rd3"]
    mask = (1 << 64) - 1
    for n, (op, a, b, imm) in enumerate(prog):
        x, y, d = regs[a % len(regs)], regs[b % len(regs)], f"%rd{4 + n}"
        if op == "shl":
            lines.append(f"\tshl.b64 {d}, {x}, {imm % 8};")
            env[d] = (env[x] << (imm % 8)) & mask
        elif op == "mov":
            lines.append(f"\tmov.u64 {d}, {imm};")
            env[d] = imm
        elif op == "mul":
            lines.append(f"\tmul.lo.u64 {d}, {x}, {imm};")
            env[d] = (env[x] * imm) & mask
        else:
            lines.append(f"\t{op}.{'b64' if op != 'add' else 'u64'} {d}, {x}, {y};")
            env[d] = {"add": env[x] + env[y], "and": env[x] & env[y], "or": env[x] | env[y]}[op] & mask
        regs.append(d)
    text = (".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 k_param_0, "
            ".param .u64 k_param_1, .param .u32 k_param_2)\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<40>;\n"
            + "\n".join(lines) + "\n\tret;\n}\n")
    k = R.Kernel.parse(text, ROLES)
    al = R.known_alignment(k.fn, k)
    for reg, val in env.items():
        assert val % al.get(reg, 1) == 0, (reg, val, al.get(reg), text)
