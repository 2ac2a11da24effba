"""The verify instance of every suite contract compiles to the PTX that its bench instance times.

`volta check` and `volta run` work at the verify instance (small problem sizes); the GPU numbers
come from the bench instance.  Both must be the same code: the same constexprs (tiles), warps
and stages, the same Triton argument specialisation (ints divisible by 16 get
``tt.divisibility``, ints equal to 1 become constants), hence the same instructions, on every
target (on sm_90a / sm_100a the bench tiles use wgmma / tcgen05, small tiles would not).
"""
from __future__ import annotations

from collections import Counter

import pytest

import ptx_parser
from harness.compile import DEFAULT_PTX_VERSION, compile_contract, compile_options, parse_arch
from harness.contract import Contract, ContractError, Scalar, Tensor, cdiv, kernel_parameters
from harness.suite import all_contracts

ARCHES = ["sm_80", "sm_89", "sm_90a", "sm_100a", "sm_120"]
CONTRACTS = {c.name: c for c in all_contracts()}

#: Scalars whose divisibility by 16 differs between verify and bench, on purpose.  The Mamba-2
#: bench has H = 32 heads and C = 16 chunks; verify instances with H, C divisible by 16 would need
#: at least 16 x 16 = 256 programs (`volta check` then enumerates them: 70 s and 8.5 GB on sm_80).
#: Their tt.divisibility changes no instruction (the mix comparison below checks it on every target).
DIVISIBILITY_EXCEPTIONS = {
    "mamba2_chunk_scan": {"H", "Cn"},
    "mamba2_chunk_state": {"H", "C"},
}

CASES = [pytest.param(name, arch, id=f"{name}-{arch}")
         for name, c in CONTRACTS.items() for arch in ARCHES if parse_arch(arch) >= c.min_arch]


def instruction_mix(ptx: str, where: str) -> Counter:
    """Multiset of (opcode, sorted modifiers, types) over every function body of the module."""
    module = ptx_parser.parse(ptx, where)
    return Counter((ins.opcode, tuple(sorted(ins.modifiers)), ins.types)
                   for f in module.functions if f.body is not None for ins in f.instructions())


def _divisible_scalars(c: Contract, instance: str) -> set[str]:
    _, _, attrs = c.triton_signature(instance)
    params = kernel_parameters(c.kernel)
    scalars = {s.name for s in c.scalars}
    return {params[i][0] for (i,) in attrs if params[i][0] in scalars}


def test_every_contract_is_covered():
    assert len(CASES) == sum(1 for c in CONTRACTS.values() for a in ARCHES if parse_arch(a) >= c.min_arch) >= 24 * 4
    assert set(DIVISIBILITY_EXCEPTIONS) <= set(CONTRACTS)


@pytest.mark.parametrize("name", sorted(CONTRACTS))
def test_same_constexprs_and_specialisation(name: str) -> None:
    c = CONTRACTS[name]
    v, b = c.resolve("verify"), c.resolve("bench")
    assert v.constexprs == b.constexprs, f"{name}: verify {v.constexprs} != bench {b.constexprs}"
    sig_v, consts_v, _ = c.triton_signature("verify")
    sig_b, consts_b, _ = c.triton_signature("bench")
    assert sig_v == sig_b and consts_v == consts_b, f"{name}: scalars specialised to constants differ"
    dv, db = _divisible_scalars(c, "verify"), _divisible_scalars(c, "bench")
    allowed = DIVISIBILITY_EXCEPTIONS.get(name, set())
    assert dv ^ db == allowed, (f"{name}: scalars divisible by 16 differ between verify {sorted(dv)} and bench "
                                f"{sorted(db)} (documented exceptions: {sorted(allowed)})")
    # Triton options (num_warps, num_stages, ...) belong to the contract, not to an instance.
    assert compile_options(c, DEFAULT_PTX_VERSION)["num_stages"] == c.num_stages


@pytest.mark.parametrize("name,arch", CASES)
def test_verify_compiles_to_the_bench_instructions(name: str, arch: str) -> None:
    c = CONTRACTS[name]
    verify = compile_contract(c, arch, "verify")
    bench = compile_contract(c, arch, "bench")
    assert verify.num_warps == bench.num_warps, f"{name} on {arch}: {verify.num_warps} != {bench.num_warps} warps"
    # warp specialisation (tl.range(..., warp_specialize=True)) adds worker warps to the contract's
    assert verify.num_warps == c.num_warps or (verify.num_warps > c.num_warps and "setmaxnreg" in verify.ptx)
    assert verify.threads_per_block == bench.threads_per_block
    assert verify.shared == bench.shared, f"{name} on {arch}: shared memory {verify.shared} != {bench.shared}"
    assert verify.target == bench.target and verify.entry == bench.entry
    assert [(p.name, p.ptx_type, p.arg) for p in verify.params] == [(p.name, p.ptx_type, p.arg) for p in bench.params]
    mv = instruction_mix(verify.ptx, f"{name}.verify.{arch}.ptx")
    mb = instruction_mix(bench.ptx, f"{name}.bench.{arch}.ptx")
    only_v, only_b = mv - mb, mb - mv
    assert not only_v and not only_b, (
        f"{name} on {arch}: the verify build's instructions differ from the bench build's; "
        f"verify only: {sorted(only_v.items())[:8]}; bench only: {sorted(only_b.items())[:8]}")


@pytest.mark.parametrize("name,arch", [("gemm_fp16", "sm_90a"), ("gemm_fp16", "sm_100a")])
def test_verify_uses_the_hopper_and_blackwell_tensor_cores(name: str, arch: str) -> None:
    """The point of the exercise: the verified GEMM is the wgmma / tcgen05 one that is timed."""
    mix = instruction_mix(compile_contract(CONTRACTS[name], arch, "verify").ptx, f"{name}.{arch}.ptx")
    opcode = {"sm_90a": "wgmma", "sm_100a": "tcgen05"}[arch]
    assert any(op == opcode for op, _, _ in mix), f"{name} verify build on {arch} has no {opcode}"


def test_contract_refuses_verify_constexprs_that_differ_from_bench():
    import triton
    import triton.language as tl

    @triton.jit
    def copy(x, y, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)

    with pytest.raises(ContractError) as ei:
        Contract(name="copy", description="copy", kernel=copy,
                 args=[Tensor("x", "fp32", ("N",)), Tensor("y", "fp32", ("N",), role="out"),
                       Scalar("n", "i32", value="N")],
                 constexprs={"BLOCK": lambda d: 128 if d["N"] < 1024 else 1024},
                 grid=lambda d: (cdiv(d["N"], 128),), reference=lambda x, n: {"y": x},
                 instances={"verify": {"N": 300}, "bench": {"N": 4096}})
    assert ei.value.field == "constexprs"
    assert "'BLOCK' is 128 at the verify instance but 1024 at bench" in str(ei.value)
