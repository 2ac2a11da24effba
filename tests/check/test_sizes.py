"""Symbolic sizes (symexec/check/sizes.py, grid.py): bounds and global races for every N at once.

Three hand-written copies y[i] = x[i] over N floats, one thread per element, grid cdiv(N, 128):
- `UNMASKED` has no `i < n` guard: right when N is a multiple of the block, out of bounds
  otherwise (the witness is the smallest such N, run concretely);
- `OFFSET32` is guarded but computes the byte offset 4 i in 32 bits and sign-extends it: right up
  to N = 2^29, out of bounds from N = 2^29 + 1 (4 i wraps negative), a 2 GiB launch run lazily;
- `SAFE` is guarded with a 64-bit offset: right for every N.
The guards are predicates on the accesses, as Triton emits masks. A forward branch on N over
straight-line code (CUDA's `if (n <= 4096) {...}`) is proved as a guard of that code; a branch on N
around a barrier falls back to the launch's sizes and says so. The suite's elementwise contract (relu)
is proved for every size through `volta check --sizes symbolic`.
"""

from __future__ import annotations

import json

import pytest

from click.testing import CliRunner

import ptx_parser
from harness.contract import cdiv
from symexec import Launch, load_program
from symexec.check import check_kernel
from symexec.check.sizes import SizeDomain, SizeVar
from symexec.paged import ZeroBytes
from volta.cli import main as cli

HEAD = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 x, .param .u64 y, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .f32 %f<2>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [x];
    ld.param.u64 %rd2, [y];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %tid.x;
    mad.lo.s32 %r4, %r2, 128, %r3;
"""
WIDE = """    mul.wide.s32 %rd3, %r4, 4;
"""
COPY = """    add.s64 %rd4, %rd1, %rd3;
    add.s64 %rd5, %rd2, %rd3;
    ld.global.f32 %f1, [%rd4];
    st.global.f32 [%rd5], %f1;
"""
# Triton's form of `if i < n`: the accesses are predicated (a mask), the control flow uniform
MASKED = COPY.replace("    ld.", "    @%p1 ld.").replace("    st.", "    @%p1 st.")
GUARD = """    setp.lt.s32 %p1, %r4, %r1;
"""
UNMASKED = HEAD + WIDE + COPY + "    ret;\n}\n"
SAFE = HEAD + GUARD + WIDE + MASKED + "    ret;\n}\n"
OFFSET32 = HEAD + GUARD + """    mul.lo.s32 %r5, %r4, 4;
    cvt.s64.s32 %rd3, %r5;
""" + MASKED + "    ret;\n}\n"
BRANCH_ON_N = HEAD + """    setp.gt.u32 %p1, %r1, 4096;
    @%p1 bra DONE;
""" + GUARD + WIDE + MASKED + "DONE:\n    ret;\n}\n"
BARRIER_UNDER_N = BRANCH_ON_N.replace("    @%p1 bra DONE;\n", "    @%p1 bra DONE;\n    bar.sync 0;\n")


def _launch(n: int) -> Launch:
    return Launch((cdiv(n, 128), 1, 1), (128, 1, 1), {"x": ZeroBytes(4 * n), "y": ZeroBytes(4 * n)}, ["x", "y", n])


def _domain(n: int, multiple: int = 1) -> SizeDomain:
    top = 2**31 - 1 - (2**31 - 1) % multiple
    return SizeDomain([SizeVar("N", multiple, top, multiple)], {"N": n}, {"n": lambda e: e["N"]},
                      lambda e: (cdiv(e["N"], 128), 1, 1), {"x": lambda e: e["N"] * 4, "y": lambda e: e["N"] * 4},
                      lambda p: _launch(p["N"]))


def _check(src: str, n: int, multiple: int = 1):
    prog = load_program(ptx_parser.parse(src, "k.ptx"), "k")
    return check_kernel(prog, _launch(n), sizes=_domain(n, multiple))


def test_correct_for_multiples_of_the_block_only() -> None:
    ok = _check(UNMASKED, 1024, multiple=128)
    assert ok.verdict == "race_free", ok.notes
    assert any("N in [128, 2147483520], a multiple of 128" in a for a in ok.assumptions)
    assert any("proven for ALL sizes" in a for a in ok.assumptions)
    bad = _check(UNMASKED, 1024)  # the launch itself (N = 1024) is fine; N = 1 is not
    assert bad.verdict == "out_of_bounds", bad.verdict
    assert bad.stats["witness_sizes"] == {"N": 1}
    assert any("leaves x from N = 1" in n or "leaves y from N = 1" in n for n in bad.notes), bad.notes
    site = bad.findings[0].sites[0]
    assert site.cta == (0, 0, 0) and site.thread[0] >= 1


def test_int32_offset_overflows_only_above_a_size() -> None:
    r = _check(OFFSET32, 4096)
    assert r.verdict == "out_of_bounds", (r.verdict, r.notes)
    assert r.stats["witness_sizes"] == {"N": 2**29 + 1}
    assert any("stays in bounds for every N in [1, 536870912]" in n for n in r.notes), r.notes
    assert r.findings[0].sites[0].cta == (2**22, 0, 0)


def test_correct_for_every_size() -> None:
    r = _check(SAFE, 300)
    assert r.verdict == "race_free" and not r.findings
    assert r.stats["sizes"]["domain"] == "N in [1, 2147483647]"
    assert any("proven for ALL sizes (N in [1, 2147483647]) and ALL CTAs" in a for a in r.assumptions)


def test_a_branch_on_a_size_over_straight_code_is_a_guard() -> None:
    r = _check(BRANCH_ON_N, 300)
    assert r.verdict == "race_free" and "fallback" not in r.stats["sizes"], r.notes
    assert any("except bra at" in a and "as a guard" in a for a in r.assumptions), r.assumptions


def test_a_branch_on_a_size_around_a_barrier_falls_back_to_the_launch() -> None:
    r = _check(BARRIER_UNDER_N, 300)
    assert r.verdict == "race_free"
    assert "symbolic sizes not applicable" in r.notes[0] and "holds for the checked launch only (N = 300)" in r.notes[0]
    assert r.stats["sizes"]["fallback"]


def test_a_divisibility_fact_constrains_the_size() -> None:
    """`N % 16 == 0` on symbolic sizes is a Z3 term, not Python's identity test (which made every
    fact False, the domain empty and every proof vacuous)."""
    import z3

    from symexec.check.sizes import SymInt

    n = SymInt(z3.BitVec("n", 64))
    fact = n % 16 == 0
    assert isinstance(fact, z3.BoolRef)
    s = z3.Solver()
    s.add(fact, n == 32)
    assert s.check() == z3.sat
    s = z3.Solver()
    s.add(fact, n == 33)
    assert s.check() == z3.unsat


def test_suite_contracts_for_every_size(tmp_path) -> None:
    """relu (bench instance) and rmsnorm (verify instance: N = 6000, so no lane reads the last column
    block, whose buffer is its pointer parameter's, symexec/check/provenance.py) for every size through
    the CLI (bench/results/sizes-2026-12-04y: softmax, layernorm, rowsum and gemv are proved too, in
    10-190 s; gemm_fp16 falls back)."""
    from harness.compile import compile_contract
    from harness.suite import get

    runner = CliRunner()
    for name, instance in (("relu", "bench"), ("rmsnorm", "verify")):
        path = tmp_path / f"{name}.ptx"
        path.write_text(compile_contract(get(name), "sm_80", instance).ptx)
        res = runner.invoke(cli, ["check", str(path), "--contract", name, "--instance", instance, "--sizes", "symbolic",
                                  "--arch", "sm_80", "--json"])
        rep = json.loads(res.output)
        assert rep["verdict"] == "race_free", (name, rep["notes"])
        assert "domain" in rep["stats"]["sizes"] and "fallback" not in rep["stats"]["sizes"], (name, rep["notes"])
        assert any(a.startswith("launches: every size with") for a in rep["assumptions"]), name
        point = rep["stats"]["sizes"]["domain_point"]  # not vacuous: the domain has this launch
        assert point == get(name).instances[instance], (name, point)


def _check_with_facts(facts: list):
    dom = _domain(300)
    dom.facts = facts
    return check_kernel(load_program(ptx_parser.parse(SAFE, "k.ptx"), "k"), _launch(300), sizes=dom)


def test_a_proof_names_a_point_of_its_domain() -> None:
    r = _check_with_facts([])
    assert r.verdict == "race_free" and "fallback" not in r.stats["sizes"], r.notes
    assert r.stats["sizes"]["domain_point"] == {"N": 300}
    assert any("the domain is not empty (Z3 model: N = 300, the checked launch's sizes)" in a for a in r.assumptions)


def test_an_empty_domain_is_never_proved() -> None:
    """Contradictory facts (N even and odd): no launch is in the domain; the check falls back to the
    launch's sizes and says why instead of 'proven for ALL sizes'."""
    r = _check_with_facts([lambda e: e["N"] % 2 == 0, lambda e: e["N"] % 2 == 1])
    assert r.verdict == "race_free"
    assert "empty" in r.stats["sizes"]["fallback"] and "vacuous" in r.stats["sizes"]["fallback"]
    assert not any("proven for ALL sizes" in a for a in r.assumptions)


#: Row-wise contracts proved under --sizes symbolic at their verify instance (sm_80): the domain each
#: is proved for. rowsum's loop counter may wrap over the whole domain: it is proved for N up to 2^30
#: (grid._widest; the rows M range over every size).
ROWWISE = {
    "softmax": "M in [1, 2147483647], N in [16, 2147483632], a multiple of 16",
    "rowsum": "M in [1, 2147483647], N in [16, 1073741824], a multiple of 16",
}


@pytest.mark.slow  # 7-14 s of CPU each (up to 3 min of wall at load 17)
@pytest.mark.parametrize("name", sorted(ROWWISE))
def test_rowwise_contracts_for_every_size(tmp_path, name: str) -> None:
    """The suite's softmax (normalisation) and rowsum (reduction), x[row * N + col]: bounds and
    cross-CTA races for every size of the stated domain through the CLI. The row offset is refuted
    with the monotonicity lemmas (monotone.py). Not vacuous: the checked sizes are a point of the domain."""
    from harness.compile import compile_contract
    from harness.suite import get

    path = tmp_path / f"{name}.ptx"
    path.write_text(compile_contract(get(name), "sm_80", "verify").ptx)
    res = CliRunner().invoke(cli, ["check", str(path), "--contract", name, "--instance", "verify", "--sizes",
                                   "symbolic", "--arch", "sm_80", "--json"])
    rep = json.loads(res.output)
    assert rep["verdict"] == "race_free", rep["notes"]
    sizes = rep["stats"]["sizes"]
    assert "fallback" not in sizes, rep["notes"]
    assert sizes["domain"] == ROWWISE[name]
    assert sizes["domain_point"] == get(name).instances["verify"]
    assert any(f"proven for ALL sizes ({ROWWISE[name]})" in a for a in rep["assumptions"])


def test_a_dim_the_ptx_cannot_see_is_held_at_its_compiled_value() -> None:
    """sage_attention's head dimension D is a constexpr: no grid dimension, integer argument or descriptor
    carries it, so its verify build (D = 128) is only ever launched with D = 128. The domain holds D there
    and says why; BH (the grid) and N (an argument) still range. Before, D ranged too, and `--sizes symbolic`
    reported q read out of bounds at D = 1, a launch no caller of that PTX can make. A contract whose grid
    needs concrete ints (mamba2_chunk_scan's `bit_length`, gemm_tma_persistent's `min`) holds every dim
    instead of crashing."""
    from harness.compile import compile_contract
    from harness.sizes import size_domain
    from harness.suite import get

    def domain(name: str, arch: str = "sm_80"):
        c = get(name)
        compiled = compile_contract(c, arch, "verify")
        params = [p.name for p in ptx_parser.parse(compiled.ptx, f"{name}.ptx").kernels[0].params]
        return size_domain(c, compiled, "verify", params)

    d = domain("sage_attention")
    ranges = {v.name: (v.lo, v.hi) for v in d.vars}
    assert ranges["D"] == (128, 128), ranges
    assert ranges["BH"][1] > ranges["BH"][0] and ranges["N"][1] > ranges["N"][0], ranges
    assert any("D is held at the checked launch's 128" in a for a in d.assumptions), d.assumptions
    relu = domain("relu")
    assert [(v.name, v.lo < v.hi) for v in relu.vars] == [("N", True)]
    for name, arch in (("mamba2_chunk_scan", "sm_80"), ("gemm_tma_persistent", "sm_90a")):
        held = domain(name, arch)
        assert all(v.lo == v.hi for v in held.vars), (name, held.vars)
        assert any("not a function the prover can take symbolically" in a for a in held.assumptions), name
