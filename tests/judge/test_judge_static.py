"""The static gate against the contract's Triton PTX: Triton's own PTX always passes it, and each
rule (target, globals, special registers, calls, tensor-core precision) decides as documented."""

from __future__ import annotations

import pytest

import ptx_parser
from harness import suite
from harness.compile import compile_contract
from harness.judge import static as S
from harness.judge.report import Reason, Severity


@pytest.mark.parametrize("name,arch", [("relu", "sm_90a"), ("cross_entropy_zloss", "sm_90a"), ("gemm_fp16", "sm_80"),
                                       ("gemm_fp8", "sm_90a"), ("attention_tma", "sm_100a")])
def test_triton_ptx_passes_its_own_gate(name: str, arch: str) -> None:
    c = suite.get(name)
    ref = compile_contract(c, arch, "verify")
    m = ptx_parser.parse(ref.ptx, "ref.ptx")
    problems, kernel = S.gate(c, m, ref, m, (ref.threads_per_block, 1, 1))
    assert kernel is not None and problems == []


def test_format_dominance() -> None:
    for f in S.FORMAT_BITS:
        assert S._dominates(f, f)
    assert S._dominates("tf32", "f16") and S._dominates("f32", "tf32")
    assert not S._dominates("f16", "bf16") and not S._dominates("bf16", "f16")  # range vs precision
    assert not S._dominates("e5m2", "e4m3") and not S._dominates("f16", "f32")


def _facts(*uses: S.MmaUse, conversions: dict | None = None) -> S.PtxFacts:
    f = S.PtxFacts("sm_90a", "k")
    f.mma.extend(uses)
    f.float_conversions.update(conversions or {})
    return f


def test_precision_rules() -> None:
    fp8, fp16, rowsum = suite.get("gemm_fp8"), suite.get("gemm_fp16"), suite.get("rowsum")
    e4m3 = _facts(S.MmaUse(("e4m3",), "f32", "r:1"))
    assert S._precision(fp8, _facts(S.MmaUse(("e4m3",), "f32", "c:1")), e4m3) == []
    assert [p.reason for p in S._precision(fp8, _facts(S.MmaUse(("e5m2",), "f32", "c:1")), e4m3)] == \
        [Reason.PRECISION_DOWNGRADE]
    f16 = _facts(S.MmaUse(("f16",), "f32", "r:1"))
    assert S._precision(fp16, _facts(S.MmaUse(("tf32",), "f32", "c:1")), f16) == []  # more precision is fine
    half_acc = S._precision(fp16, _facts(S.MmaUse(("f16",), "f16", "c:1")), f16)
    assert [p.reason for p in half_acc] == [Reason.PRECISION_DOWNGRADE] and "accumulates" in half_acc[0].message
    # no tensor cores in the reference: the contract's fp32 inputs are the bar
    assert [p.reason for p in S._precision(rowsum, _facts(S.MmaUse(("tf32",), "f32", "c:1")), _facts())] == \
        [Reason.PRECISION_DOWNGRADE]
    flag = S._precision(rowsum, _facts(conversions={".f16": "c:9"}), _facts())
    assert [(p.reason, p.severity) for p in flag] == [(Reason.NARROWING_CONVERSION, Severity.FLAG)]


def test_target_rule() -> None:
    assert S._target("sm_90a", "sm_90a") == [] and S._target("sm_90", "sm_90a") == []
    assert S._target("sm_80", "sm_90a") == []
    assert S._target("sm_100a", "sm_90a")[0].reason is Reason.TARGET
    assert S._target("sm_90a", "sm_100a")[0].reason is Reason.TARGET  # arch-specific code is not portable
    assert S._target(None, "sm_90a")[0].reason is Reason.TARGET


def test_special_registers_calls_and_globals() -> None:
    ref = _facts()
    ref.specials["%clock"] = "r:1"
    cand = _facts()
    cand.specials.update({"%clock": "c:3", "%smid": "c:4"})
    assert [p.message for p in S._specials(cand, ref)] == ["reads %smid, which the reference does not"]
    cand.callees["vprintf"] = "c:5"
    cand.indirect_calls.append("c:6")
    assert [p.reason for p in S._calls(cand, ref)] == [Reason.FOREIGN_CALL] * 2
    m = ptx_parser.parse(".version 8.0\n.target sm_90\n.address_size 64\n.global .u32 g;\n"
                         ".visible .entry k(){ ret; }\n", "c.ptx")
    facts = S.facts(m, "k")
    assert [p.reason for p in S._global_data(facts, ref)] == [Reason.GLOBAL_DATA]
    assert S._global_data(facts, facts) == []  # declared identically by the reference: allowed
    assert "%pm3" in S.FORBIDDEN_SPECIAL and "%globaltimer_lo" in S.FORBIDDEN_SPECIAL


def test_block_directives_must_fit_the_launch() -> None:
    k = ptx_parser.parse(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() .reqntid 256 .maxntid 256\n"
                         "{ ret; }\n", "c.ptx").kernels[0]
    assert S._block_directives(k, (256, 1, 1)) == []
    assert [p.reason for p in S._block_directives(k, (128, 1, 1))] == [Reason.LAUNCH_CONFIG]
    assert [p.reason for p in S._block_directives(k, (512, 1, 1))] == [Reason.LAUNCH_CONFIG] * 2
