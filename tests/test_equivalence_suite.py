"""Cross-target equivalence of the suite: every contract's sm_80, sm_89 and sm_120 builds (the same
Triton kernel compiled to different instructions and schedules) are proved equivalent to the sm_80
build, or to the first of them that exists (issue 11, item 5). A contract built for one of these
targets only is checked against itself: its terms must be complete (nothing unsupported).

Each proof runs both builds at the contract's verify instance in check mode with the term shadow
(their safety verdicts come with it) and compares every output element; measured on the 2-core
development machine, most contracts take seconds of CPU, the attention and GEMM ones a minute."""

from __future__ import annotations

import os
import re

import pytest

from harness.equivalence import triton_kernel
from harness.suite import all_contracts
from proofs.equivalence import Outcome, Side
from proofs.normal import Normalizer
from proofs.prove import prove
from semantics.terms import TermStore
from symexec.check.findings import Report

ARCHES = ["sm_80", "sm_89", "sm_120"]
CONTRACTS = {c.name: c for c in all_contracts()}

#: Contracts whose builds on these targets the terms do not follow yet, with the reason (not run).
KNOWN_GAPS: dict[str, str] = {}  # none now (2026-12-05: gemm_block_scaled's block-scaled mma.sync has a term meaning)
#: Contracts whose builds the proof follows but does not yet prove equal, with the measurement: a
#: strict expected failure, so that a fix is noticed (run only with VOLTA_EQUIV_ALL=1: over the CI budget too).
NOT_YET_PROVED: dict[str, str] = {}  # none now (2026-12-05: cross_entropy_zloss and dion_update are proved)
#: Contracts whose proofs are over the CI budget (about three minutes of CPU and 3.5 GiB per contract since 2026-12-05s33:
#: CI has 90 minutes on 2 cores, the suite took ~29) on the 2-core
#: machine, with what is known: skipped in CI, run with VOLTA_EQUIV_ALL=1 (issue 11 stays open on them).
#: Measured one at a time with /usr/bin/time -v (bench/results/equiv-suite-2026-12-05/README.md); CPU seconds
#: are the process's, for all pairs of the contract. In CI (measured 2026-12-02, load 13-17): gemm_accumulate
#: 44 s CPU / 646 MiB, mamba2_chunk_state 53 s CPU / 398 MiB, mamba2_chunk_scan 59 s CPU / 644 MiB; dion_update
#: (moved into CI, 2026-12-05, load 2-3) 61 s CPU / 1.1 GiB; flash_attention (moved into CI, 2026-12-05s32, branch
#: i11j, load 8-10) 88.8 s CPU / 1.7 GiB, merge31 97.7 s / 1.8 GiB (bench/results/equiv-over-budget-2026-12-05s32).
#: Moved into CI 2026-12-05 (branch i11s, bench/results/equiv-over-budget-2026-12-05s33; VOLTA_EQUIV_ALL=1 pytest -k NAME
#: under /usr/bin/time -v, niced, load 8-15 from other processes; CPU = user + sys, peak = max RSS): sage_attention
#: 94.0 s CPU / 1228 MiB (base ed41f18: 133.6 s / 1282 MiB), cross_entropy_zloss 113.5 s / 3114 MiB (base 117.9 s /
#: 3049 MiB), forgetting_attention 96.8 s / 2328 MiB (base 113.9 s / 2229 MiB), sinkhorn_attention 60.3 s / 1545 MiB
#: (base 98.8 s / 1530 MiB); a second round side by side at load 3-7: sage 129.8 -> 87.8 s, cross_entropy_zloss
#: 111.0 -> 110.9 s / 3.0 GiB, forgetting 92.2 s, sinkhorn 54.1 s. What made the runs faster:
#: TermStore.make1 (one row in Python ints: prmt's byte slices and their concatenations, ~180 k rows in sage) and
#: the few-lane paths of Builder.extract / concat; the comparison: _mono_mul's one-special-atom products.
_ALL = "set VOLTA_EQUIV_ALL=1 to run it"
OVER_BUDGET: dict[str, str] = {}  # none now (2026-12-05s33: the last four moved into CI, above)
#: Triton builds the checker finds racy (tests/test_check_suite.py, TRITON_FINDINGS: a value stored
#: to one shared address by several warps in one instruction): every race of theirs must be such a
#: replicated store (proofs.equivalence.Side.replicated_stores_only), whose bytes hold the one value
#: whichever store lands; the proof then compares their outputs like any other build's.
REPLICATED_STORES = {"bitdelta", "forgetting_attention", "gemm_tcgen05_ws"}


def _cap(arch: str) -> int:
    return int("".join(ch for ch in arch[3:] if ch.isdigit()))


def _pairs(name: str) -> list[tuple[str, str]]:
    have = [a for a in ARCHES if _cap(a) >= CONTRACTS[name].min_arch]
    return [(a, have[0]) for a in have[1:]] or [(have[0], have[0])]


def _param(name: str):
    if name in KNOWN_GAPS:
        return pytest.param(name, marks=pytest.mark.xfail(run=False, reason=KNOWN_GAPS[name]))
    if name in NOT_YET_PROVED:
        return pytest.param(name, marks=pytest.mark.xfail(strict=True, run=bool(os.environ.get("VOLTA_EQUIV_ALL")),
                                                          reason=NOT_YET_PROVED[name]))
    if name in OVER_BUDGET and not os.environ.get("VOLTA_EQUIV_ALL"):
        return pytest.param(name, marks=pytest.mark.skip(reason=OVER_BUDGET[name]))
    return name


@pytest.mark.slow
@pytest.mark.parametrize("name", [_param(n) for n in sorted(CONTRACTS)], ids=str)
def test_cross_target_equivalent(name: str) -> None:
    c = CONTRACTS[name]
    store = TermStore()  # one store: identical computations share term ids across the builds
    # the reference build's safety report (`volta check`'s), term run and normal forms are made once for all
    # its pairs: its output terms are its outputs' in this store (the store only grows; up to 2026-12-06 prove
    # took the empty store for none, `store or TermStore()`, and each pair ran in a store of its own, so a run
    # reused from the pair before named other terms: softmax's sm_80 run against sm_120's build left 6240
    # elements unproved); one normalizer keeps the normal forms of the reference's roots and shared nodes
    ref_runs: dict[str, tuple[Report, Side]] = {}
    N = Normalizer(store, keep_roots=True)
    for cand_arch, ref_arch in _pairs(name):
        ref = triton_kernel(c, ref_arch)
        rep = prove(triton_kernel(c, cand_arch, label="candidate"), ref, store, normalizer=N,
                    runs={ref.label: ref_runs[ref_arch]} if ref_arch in ref_runs else None)
        ref_runs.setdefault(ref_arch, (rep.checks[ref.label], rep.sides[ref.label]))
        detail = f"{name} {cand_arch} vs {ref_arch}: {rep.result.verdict} " + \
            "; ".join(f"{s.buffer}[{s.element}] {s.why}: {s.candidate} | {s.reference}" for s in rep.result.suspects[:2])
        assert rep.result.outcome is Outcome.VERIFIED, detail
        for label, r in rep.checks.items():
            if name in REPLICATED_STORES:
                assert r.verdict == "race" and rep.sides[label].replicated_stores_only, (label, r.verdict, detail)
            else:
                assert r.verdict == "race_free", (label, r.verdict, detail)
        assert sum(p.elements for p in rep.result.proofs) > 0, detail


#: Contracts whose Triton sm_90a build (wgmma.mma_async, a term meaning since 2026-12-07, branch i11wg) is proved
#: equal to their build for the first of ARCHES they support (sm_80; attention_tma, gemm_tma_persistent: sm_120),
#: with the CPU of the whole proof (both sides' safety checks and term runs and the comparison: the process's user + sys, compile
#: cached, 2-core machine at load 8-10; bench/results/i11wg-2026-12-07s43). gemm_fp16's is in
#: tests/equivalence/test_async_terms.py (10 s); forgetting_attention's (verified, its replicated-store races on both
#: sides, 77.6 s CPU) is not. sage_attention's s8 QK^T, read through cvt.rn.f32.s32, is verified since branch i11s8
#: (proofs/normal.py _exact_int_mma), but its proof takes 83-102 s CPU / 1.3 GiB (bench/results/i11s8-2026-12-07s46):
#: over the CI budget, so its id is in tests/heavy_tier.txt (`make test-all`; the comparison normalises each output's
#: whole DAG, the differing MMA nodes being at its bottom).
#: gemm_fp8 (.e4m3 wgmma against sm_89's mma.sync, since branch i11fp8: bench/results/i11fp8-2026-12-07s44, load 2-4)
#: carries the assumption that its fp8 .f32 accumulation precision is not modelled (FP8_F32_WGMMA).
WGMMA_PROVED = {"attention_tma": "23.5 s CPU / 535 MiB", "conv2d": "6.2 s CPU / 272 MiB",
                "flash_attention": "31.8 s CPU / 675 MiB", "gemm_accumulate": "25.6 s CPU / 421 MiB",
                "gemm_fp8": "22.6-25.9 s CPU / 392-438 MiB",  # .e4m3 x .e4m3, .f32 accumulators, m64n128k32
                "gemm_silu": "12.2 s CPU / 347 MiB", "gemm_tma_persistent": "20.1 s CPU / 484 MiB",
                "mamba2_chunk_scan": "17.6 s CPU / 409 MiB",
                "mamba2_chunk_state": "11.0 s CPU / 299 MiB",  # imm-trans-a and -b 1
                "sage_attention": "83.1 s CPU / 1379 MiB",  # .s32.s8.s8 QK^T (next46, i11s8 + i11cost, load ~2); heavy tier
                "sinkhorn_attention": "15.9 s CPU / 381 MiB"}  # A from registers (P of P @ V)
#: Contracts whose sm_90a build has an fp8 wgmma with .f32 accumulators: the verdict prints the assumption
#: (symexec.check.termshadow.fp8_wgmma_assumption; PTX 9.7.15.5.2's note)
FP8_F32_WGMMA = {"gemm_fp8"}


def _proved_against_first_arch(name: str, arch: str):
    """prove()'s report for the contract's `arch` build against its build for the first of ARCHES it supports,
    asserted verified with elements proved, no gap in the candidate and both safety checks race-free."""
    c = CONTRACTS[name]
    ref_arch = next(a for a in ARCHES if _cap(a) >= c.min_arch)
    rep = prove(triton_kernel(c, arch, label="candidate"), triton_kernel(c, ref_arch), TermStore())
    assert rep.result.outcome is Outcome.VERIFIED, f"{name} {arch} vs {ref_arch}: {rep.result.verdict}"
    assert not rep.sides["candidate"].gaps, [g.describe() for g in rep.sides["candidate"].gaps]
    assert all(r.verdict == "race_free" for r in rep.checks.values())
    assert sum(p.elements for p in rep.result.proofs) > 0
    return rep


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(WGMMA_PROVED), ids=str)
def test_wgmma_build_equivalent(name: str) -> None:
    rep = _proved_against_first_arch(name, "sm_90a")
    fp8 = [a for a in rep.result.assumptions if "accumulation precision is not modelled" in a]
    assert bool(fp8) == (name in FP8_F32_WGMMA), rep.result.assumptions


#: Contracts whose Triton sm_100a build (tcgen05.mma .kind::f16, or .kind::f8f6f4 with e4m3 elements, f32 accumulators
#: in tensor memory, tcgen05.ld; a term meaning since branch i11tc05, symexec/check/termshadow.py `_tensor_mma_cells`)
#: is proved equal to their build for the first of ARCHES they support, with the CPU of the whole proof (user + sys,
#: compile cached, 2-core machine at load ~2, bench/results/i11tc05-2026-12-07s45). gemm_fp16's is in
#: tests/equivalence/test_async_terms.py (7.9 s). Not here: attention_tma and gemm_tma_persistent (verified, 14.3 / 12.7 s, but the sm_100a build's safety
#: check reports a proxy race, as on main ca391ae), gemm_block_scaled (block-scaled .kind::mxf8f6f4: a named gap).
#: sinkhorn_attention's epilogue negates m + log l with `xor.b32 x, 0x80000000`, read as a negation by a Z3-proved
#: lemma since branch i11xor (proofs/lemmas.py; next45: inconclusive, 10400 suspects, 36.3 s / 1041 MiB).
TCGEN05_PROVED = {"conv2d": "4.4 s CPU / 250 MiB", "gemm_accumulate": "18.0 s CPU / 451 MiB",
                  "gemm_silu": "8.2 s CPU / 332 MiB", "mamba2_chunk_scan": "16.4 s CPU / 404 MiB",
                  "mamba2_chunk_state": "7.1 s CPU / 261 MiB",
                  "gemm_fp8": "12.5 s CPU / 359 MiB",  # .kind::f8f6f4 e4m3 x e4m3 vs sm_89: the fp8 assumption printed
                  # P @ V with P written to tensor memory by tcgen05.st and read as [a-tmem]
                  "flash_attention": "38.6 s CPU / 698 MiB",
                  "sinkhorn_attention": "22.5 s CPU / 577 MiB"}  # bench/results/i11xor-2026-12-07s45


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TCGEN05_PROVED), ids=str)
def test_tcgen05_build_equivalent(name: str) -> None:
    import tcgen05  # noqa: F401  (plugs the tensor-core unit into the machine)

    rep = _proved_against_first_arch(name, "sm_100a")
    assert any("tcgen05.mma with .f32 accumulators is read as the exact sum" in a for a in rep.result.assumptions)
    fp8 = [a for a in rep.result.assumptions if "an fp8 (.e4m3/.e5m2) tcgen05.mma" in a]
    assert bool(fp8) == (name == "gemm_fp8"), rep.result.assumptions


@pytest.mark.slow
def test_gemm_block_scaled_with_swapped_scales_is_not_verified() -> None:
    """Triton's sm_120 build of gemm_block_scaled with one block-scaled mma.sync's scale-a and scale-b
    operands swapped (a seeded bug in its own PTX): the elements that mma feeds have different normal
    forms (proofs.normal reads each scaled element as x * exp2(s) * 2^-127), every other is still proved."""
    import ptx_parser

    from harness.compile import compile_contract
    from harness.equivalence import contract_kernel

    c = CONTRACTS["gemm_block_scaled"]
    ptx = compile_contract(c, "sm_120").ptx
    mma = next(line for line in ptx.splitlines() if "mma.sync" in line and ".block_scale" in line)
    # ... {c}, scale-a-data, {byte-id-a, thread-id-a}, scale-b-data, {byte-id-b, thread-id-b};
    ops = re.search(r", (%r\d+), \{ 0, 0 \}, (%r\d+), \{ 0, 0 \};", mma)
    assert ops, mma
    swapped = mma.replace(ops.group(0), f", {ops.group(2)}, {{ 0, 0 }}, {ops.group(1)}, {{ 0, 0 }};")
    module = ptx_parser.parse(ptx.replace(mma, swapped, 1), "gemm_block_scaled.sm_120.swapped.ptx")
    rep = prove(contract_kernel(c, module, "sm_120"), triton_kernel(c, "sm_120"), TermStore())
    r = rep.result
    assert r.outcome is Outcome.INCONCLUSIVE and 0 < r.suspect_count < sum(p.elements for p in r.proofs), r.verdict
    assert r.suspects[0].why == "different real-arithmetic normal forms"


@pytest.mark.slow
def test_gemm_block_scaled_eight_warp_build_is_verified() -> None:
    """A second build of gemm_block_scaled for sm_120: Triton with num_warps=8 (64 block-scaled mma.sync per
    warp where the contract's 4 warps issue 128, other ldmatrix/stmatrix fragments), launched with 256 threads by
    a `// volta-launch:` header, against the contract's build (2026-12-05: identical terms for all 11520
    elements, 11.5 s CPU with the compile)."""
    import dataclasses

    import ptx_parser

    from harness.compile import compile_contract
    from harness.equivalence import contract_kernel

    c = CONTRACTS["gemm_block_scaled"]
    built = compile_contract(dataclasses.replace(c, num_warps=8), "sm_120")
    assert built.ptx.count("mma.sync") != compile_contract(c, "sm_120").ptx.count("mma.sync")
    text = f"// volta-launch: grid=(cdiv(M, 128), cdiv(N, 128), 1) block=(256, 1, 1) shared={built.shared}\n" + built.ptx
    module = ptx_parser.parse(text, "gemm_block_scaled.sm_120.w8.ptx")
    rep = prove(contract_kernel(c, module, "sm_120", source=text), triton_kernel(c, "sm_120"), TermStore())
    assert rep.result.outcome is Outcome.VERIFIED, rep.result.verdict
    assert all(r.verdict == "race_free" for r in rep.checks.values())
    assert sum(p.elements for p in rep.result.proofs) == 144 * 80
