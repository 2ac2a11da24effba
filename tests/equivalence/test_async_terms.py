"""An asynchronous unit reads memory the registers do not show (wgmma.mma_async's A and B through
shared-memory descriptors, PTX ISA 9.7.15.5.2; tcgen05.ld's tensor-memory cells, 9.7.16.8): the
registers it writes must never be taken as concrete when those bytes hold tensor data. Before this
rule, Triton's wgmma (sm_90a) and tcgen05 (sm_100a) builds of gemm_fp16 had every output element
concrete, so comparing two such kernels compared the bits of one input and called it a proof.

Since 2026-12-07 (branch i11wg) a wgmma.mma_async with .f16/.bf16 multiplicands has a term meaning
(symexec/check/termshadow.py `_mma_results`): each D element is one MMA node, (scale-d ? D : 0) +
sum_k A[m, k] * B[n, k], over the terms of the shared-memory bytes its descriptors address (read in
the emulator's own order, symexec/wgmma_layout.py) or of its A registers, made when the
wgmma.wait_group covering it performs it. Triton's sm_90a gemm_fp16 is proved equal to its sm_80
(mma.sync) build, and seeded bugs in the wgmma operands are found. Since branch i11wg2 the integer
kinds (.s8/.u8 multiplicands, .s32 accumulators) are mma.sync's integer MMA node (wrapped, or clamped
with .satfinite) and imm-scale-a/b -1 negates that operand's element terms. Since branch i11fp8 fp8
multiplicands (.e4m3/.e5m2, A and B may differ; .f16/.f32 accumulators) are MMA nodes over float elements of
those formats, as mma.sync's; an fp8 wgmma with .f32 accumulators adds an assumption the verdict prints (its
accumulation precision, PTX 9.7.15.5.2's note, is not modelled). .tf32 multiplicands are their f32 words read
as tf32 (the low 13 bits dropped): the same real for the normal form, a tf32 rounding for the precision check.
Since branch i11tc05 tcgen05.mma .kind::f16/.kind::tf32 with f32 accumulators has the same MMA node
(tests/equivalence/test_tcgen05_terms.py); its other kinds stay opaque with a gap naming them."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("triton")

import ptx_parser  # noqa: E402
from harness.compile import compile_contract  # noqa: E402
from harness.equivalence import contract_kernel, triton_kernel  # noqa: E402
from harness.suite import all_contracts  # noqa: E402
from proofs.equivalence import Outcome  # noqa: E402
from proofs.prove import prove, run_side  # noqa: E402
from semantics.terms import CONCRETE, Op, TermStore  # noqa: E402

CONTRACTS = {c.name: c for c in all_contracts()}
GEMM = CONTRACTS["gemm_fp16"]
#: a wgmma.mma_async's descriptor operands: ... }, a-desc, b-desc, scale-d, imm-scale-a, ...
_DESCS = re.compile(r"\}, (%rd\d+), (%rd\d+), (%p\d+|[01]),")


@pytest.mark.parametrize("name,arch,unit,why", [("gemm_block_scaled", "sm_100a", "tcgen05", "have a term meaning")])
def test_async_unit_results_are_opaque_not_concrete(name: str, arch: str, unit: str, why: str) -> None:
    """A tcgen05.mma kind without a term meaning (block-scaled .kind::mxf8f6f4; .kind::f16/.tf32 and .kind::f8f6f4
    with e4m3/e5m2 elements have one since branch i11tc05, tests/equivalence/test_tcgen05_terms.py) is opaque, with a
    named gap, never concrete. (This build's safety check reports a proxy race, as on main ca391ae: not asserted.)"""
    report, side = run_side(triton_kernel(CONTRACTS[name], arch), TermStore())
    (out,) = side.outputs.values()
    assert out.terms.size > 0 and not (np.asarray(out.terms) == CONCRETE).any()
    assert any(g.ins is not None and g.ins.opcode.startswith(unit) and why in g.why for g in side.gaps), \
        [g.describe() for g in side.gaps]


def test_two_tcgen05_builds_are_verified_by_their_terms_not_their_bits() -> None:
    """Two sm_100a builds of gemm_fp16 (tcgen05.mma .kind::f16): proved by identical MMA-node terms; before
    branch i11tc05 their outputs were opaque (unsupported), before that concrete bits of one input."""
    T = TermStore()
    rep = prove(triton_kernel(GEMM, "sm_100a", label="candidate"), triton_kernel(GEMM, "sm_100a"), T)
    assert rep.result.outcome is Outcome.VERIFIED, rep.result.verdict
    (out,) = rep.sides["candidate"].outputs.values()
    assert (np.asarray(out.terms) != CONCRETE).all()
    assert Op.MMA in {Op(int(T.op[i])) for i in _below(T, out.terms[:1])}


def _gemm_proved_against_sm80(arch: str):
    """(report, the candidate's output) of gemm_fp16's `arch` build against its sm_80 build (mma.sync), asserted:
    every element proved, no gap, both safety checks race-free, the outputs built from MMA nodes."""
    T = TermStore()
    rep = prove(triton_kernel(GEMM, arch, label="candidate"), triton_kernel(GEMM, "sm_80"), T)
    assert rep.result.outcome is Outcome.VERIFIED, rep.result.verdict
    assert sum(p.elements for p in rep.result.proofs) == GEMM_ELEMENTS
    cand = rep.sides["candidate"]
    assert not cand.gaps, [g.describe() for g in cand.gaps]
    assert all(r.verdict == "race_free" for r in rep.checks.values())
    (out,) = cand.outputs.values()
    assert Op.MMA in {Op(int(T.op[i])) for i in _below(T, out.terms[:1])}
    return rep, out


def test_tcgen05_build_is_proved_equivalent_to_the_mma_sync_build() -> None:
    """Triton's sm_100a gemm_fp16 (tcgen05.mma .kind::f16, f32 accumulators in tensor memory, tcgen05.ld)
    against its sm_80 build (mma.sync): every element proved, no gap, the tcgen05.mma assumption printed
    (7.9 s CPU / 316 MiB, bench/results/i11tc05-2026-12-07s45)."""
    rep, _ = _gemm_proved_against_sm80("sm_100a")
    assert any("tcgen05.mma with .f32 accumulators is read as the exact sum" in a for a in rep.result.assumptions)


def test_wgmma_build_is_proved_equivalent_to_the_mma_sync_build() -> None:
    """Triton's sm_90a gemm_fp16 (eight m64n128k16 wgmma per K step, B MN-major with a 128-byte swizzle,
    one group in flight) against its sm_80 build (mma.sync): every element proved, no gap."""
    _, out = _gemm_proved_against_sm80("sm_90a")
    assert (np.asarray(out.terms) != CONCRETE).all()  # not opaque leaves, not concrete bits


GEMM_ELEMENTS = 11520  # gemm_fp16's output at its verify instance (C: 144 x 80)


def _below(T: TermStore, roots: np.ndarray, limit: int = 5000) -> set[int]:
    seen: set[int] = set()
    todo = [int(r) for r in roots]
    while todo and len(seen) < limit:
        i = todo.pop()
        if i in seen:
            continue
        seen.add(i)
        todo.extend(int(x) for x in T.kids(i))
    return seen


def _seeded(mutate) -> str:
    """gemm_fp16's sm_90a PTX with the first two wgmma.mma_async of its first group changed by `mutate`
    (their descriptor operands (a, b) -> the new ones)."""
    ptx = compile_contract(GEMM, "sm_90a").ptx
    lines = ptx.splitlines()
    at = [i for i, ln in enumerate(lines) if "wgmma.mma_async" in ln][:2]
    descs = [_DESCS.search(lines[i]) for i in at]
    assert all(descs), [lines[i][-80:] for i in at]
    new = mutate([(d.group(1), d.group(2)) for d in descs])
    for i, d, (a, b) in zip(at, descs, new):
        lines[i] = lines[i][:d.start()] + f"}}, {a}, {b}, {d.group(3)}," + lines[i][d.end():]
    out = "\n".join(lines) + "\n"
    assert out != ptx + "\n" and out.count("wgmma.mma_async") == ptx.count("wgmma.mma_async")
    return out


#: the second wgmma reads the first's B (a wrong B descriptor offset: K slice 0 twice, slice 1 never)
WRONG_B = ("wrong_b_descriptor", lambda d: [d[0], (d[1][0], d[0][1])])
#: the first two wgmma swap their A descriptors (A's K slices 0 and 1 against B's slices 1 and 0)
SWAPPED_A = ("swapped_a_descriptors", lambda d: [(d[1][0], d[0][1]), (d[0][0], d[1][1])])


@pytest.mark.parametrize("what,mutate", [WRONG_B, SWAPPED_A], ids=lambda v: v if isinstance(v, str) else "")
def test_seeded_wgmma_operand_bug_is_found_by_the_terms(what: str, mutate) -> None:
    """The terms themselves tell the bug apart (no concrete run decides it here): the elements differ
    in their real-arithmetic normal forms, none is proved equal by accident."""
    module = ptx_parser.parse(_seeded(mutate), f"gemm_fp16.sm_90a.{what}.ptx")
    rep = prove(contract_kernel(GEMM, module, "sm_90a"), triton_kernel(GEMM, "sm_80"), TermStore())
    r = rep.result
    # the elements the first four wgmma of each K step feed (rows 0-63 of each 128-row tile: 6400 of
    # 11520, 2026-12-07) differ; those of the other four are still proved
    assert r.outcome is Outcome.INCONCLUSIVE and 0 < r.suspect_count < sum(p.elements for p in r.proofs), r.verdict
    assert not rep.sides["candidate"].gaps, [g.describe() for g in rep.sides["candidate"].gaps]
    assert r.suspects[0].why == "different real-arithmetic normal forms", r.suspects[0]


def test_seeded_wgmma_bug_is_not_equivalent_with_a_replayed_witness(tmp_path: Path) -> None:
    """`volta check BUG.ptx --contract gemm_fp16 --equivalence` against the sm_80 build: not_equivalent,
    with an input on which the emulator shows the outputs differ beyond the contract's tolerance."""
    from volta.equiv_cli import run_equivalence

    path = tmp_path / "gemm_fp16.wrong_b_descriptor.sm_90a.ptx"
    path.write_text(_seeded(WRONG_B[1]))
    report = run_equivalence(path, contract="gemm_fp16", reference_arch="sm_80", timeout=600)
    assert report.verdict == "not_equivalent", (report.verdict, report.notes[:3])
    (f,) = report.findings
    w = f.details["witness"]
    assert w["replayed"] and abs(w["candidate"] - w["reference"]) > w["allowed"]


CASES = Path(__file__).parent / "cases"
_MMA = "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd5, %rd6, 0, 1, 1, 0, 0;"
_ZERO_D = "".join(f"\tmov.f32 %f{i}, 0f00000000;\n" for i in range(1, 5))
_DATA_D = "\tsetp.ne.u32 %p3, %r1, 1000;\n" + "".join(f"\tmov.b32 %f{i}, %r{9 + i};\n" for i in range(1, 5))
#: variants of the wgmma_kmajor case (tests/equivalence/cases): (name, {old text: new text})
VARIANTS = [
    ("descriptors_scale_d_0", {}),
    ("bf16", {".f32.f16.f16": ".f32.bf16.bf16"}),
    # A from four registers (9.7.15.5.1.1, the fragment of symexec.wgmma_layout.a_fragment), scale-d a
    # predicate register, D's old values data
    ("a_registers_scale_d", {_ZERO_D: _DATA_D, _MMA: _MMA.replace("%rd5, %rd6, 0, 1, 1, 0, 0",
                                                                   "{%r10, %r11, %r12, %r13}, %rd6, %p3, 1, 1, 0")}),
    # f16 accumulators: two elements per register, element 2r in the low half
    ("f16_accumulators", {_ZERO_D: _DATA_D.replace("%f1, %r10", "%r14, %r10").replace("%f2, %r11", "%r15, %r11"),
                          _MMA: "wgmma.mma_async.sync.aligned.m64n8k16.f16.f16.f16 {%r14, %r15}, %rd5, %rd6, %p3, "
                                "1, 1, 0, 0;",
                          "st.global.v4.f32 [%rd8], {%f1, %f2, %f3, %f4};": "st.global.v2.b32 [%rd8], {%r14, %r15};"}),
]


VARIANTS += [
    # imm-scale-a / imm-scale-b -1: A's or B's elements negated before the products (9.7.15.5.2)
    # (scale-d 0: with data D far below the products, the emulator's float64 sum (A*B, then + D) and
    # termeval._mma's (D first) can round differently by an ulp, whatever the signs; see the i11wg2 README)
    ("negated_a", {_MMA: _MMA.replace("%rd5, %rd6, 0, 1, 1, 0, 0", "%rd5, %rd6, 0, -1, 1, 0, 0")}),
    ("negated_b_bf16", {_MMA: _MMA.replace(".f16.f16", ".bf16.bf16").replace("%rd5, %rd6, 0, 1, 1, 0, 0",
                                                                             "%rd5, %rd6, 0, 1, -1, 0, 0")}),
    ("negated_a_registers", {_ZERO_D: _DATA_D, _MMA: _MMA.replace(
        "%rd5, %rd6, 0, 1, 1, 0, 0", "{%r10, %r11, %r12, %r13}, %rd6, %p3, -1, 1, 0")}),
]
#: the integer form (.s8/.u8 multiplicands, .s32 accumulators, k32; PTX 9.7.15.5.2): the same 32-byte K rows,
#: so the same descriptors; int8 input bytes, b32 accumulator registers, an int32 output
_INT = {'"dtype": "float16", "shape": [1152]': '"dtype": "int8", "shape": [2304]',
        '"out": {"dtype": "float32"': '"out": {"dtype": "int32"',
        "st.global.v4.f32 [%rd8], {%f1, %f2, %f3, %f4};": "st.global.v4.b32 [%rd8], {%r2, %r3, %r4, %r5};"}
_INT_MMA = "wgmma.mma_async.sync.aligned.m64n8k32.s32.{a}.{b}{sat} {{%r2, %r3, %r4, %r5}}, {src}, %rd6, {scale_d};"
_INT_ZERO_D = {_ZERO_D: "".join(f"\tmov.b32 %r{i}, 0;\n" for i in range(2, 6))}
#: D's old values: data bytes with bits 12-30 set (near INT32_MAX or just below 0): the sum wraps or,
#: with .satfinite, clamps for many elements
_INT_DATA_D = {_ZERO_D: "\tsetp.ne.u32 %p3, %r1, 1000;\n"
               + "".join(f"\tor.b32 %r{i}, %r{8 + i}, 0x7FFFF000;\n" for i in range(2, 6))}
VARIANTS += [
    ("s8_descriptors_scale_d_0", {**_INT, **_INT_ZERO_D,
                                  _MMA: _INT_MMA.format(a="s8", b="s8", sat="", src="%rd5", scale_d="0")}),
    ("u8_s8_scale_d_zero_register", {**_INT, **_INT_ZERO_D,
                                     _MMA: _INT_MMA.format(a="u8", b="s8", sat="", src="%rd5", scale_d="1")}),
    ("s8_u8_satfinite", {**_INT, **_INT_ZERO_D,
                         _MMA: _INT_MMA.format(a="s8", b="u8", sat=".satfinite", src="%rd5", scale_d="1")}),
    # two chained: the second's old D is the first's MMA node (bound 2 * 32 * 128 * 128, inside int32)
    ("s8_chained", {**_INT, **_INT_ZERO_D,
                    _MMA: _INT_MMA.format(a="s8", b="s8", sat="", src="%rd5", scale_d="0")
                    + "\n\twgmma.commit_group.sync.aligned;\n\twgmma.wait_group.sync.aligned 0;\n\twgmma.fence.sync.aligned;\n\t"
                    + _INT_MMA.format(a="s8", b="s8", sat="", src="%rd5", scale_d="1")}),
    # A from four registers, four s8 elements each (9.7.15.5.1.1.3)
    ("s8_a_registers", {**_INT, **_INT_ZERO_D,
                        _MMA: _INT_MMA.format(a="s8", b="s8", sat="", src="{%r10, %r11, %r12, %r13}",
                                              scale_d="%p3")}),
]


#: the fp8 form (.e4m3/.e5m2 multiplicands, A and B may differ; .f16/.f32 accumulators; k32; PTX 9.7.15.5.2):
#: 32-byte K rows as the integer form, so the same descriptors; fp8 input bytes
#: (the launch draws fp8 bytes uniformly: 0x7F is e4m3's NaN, 0x7C..0x7F e5m2's inf and NaNs, in most e5m2 dot
#: products; bit 6 of every loaded byte is cleared, so elements and data D stay finite, below 2 in magnitude;
#: `specials` keeps the bytes as drawn)
_STORES = ("\tst.shared.v4.u32 [%r8], {%r10, %r11, %r12, %r13};\n",
           "\t@%p2 st.shared.v4.u32 [%r8+2048], {%r10, %r11, %r12, %r13};\n")


def _fp8_input(fmt: str, specials: bool = False) -> dict[str, str]:
    edits = {'"dtype": "float16", "shape": [1152]': f'"dtype": "float8_{fmt}", "shape": [2304]'}
    if not specials:
        for st in _STORES:
            guard = st[1:st.index(" ") + 1] if "@" in st else ""
            edits[st] = "".join(f"\t{guard}and.b32 %r{r}, %r{r}, 0xBFBFBFBF;\n" for r in range(10, 14)) + st
    return edits


_FP8_MMA = "wgmma.mma_async.sync.aligned.m64n8k32.f32.{a}.{b} {{%f1, %f2, %f3, %f4}}, {src}, %rd6, {scale_d}, {sa}, {sb};"
VARIANTS += [
    ("e4m3_descriptors", {**_fp8_input("e4m3"),
                          _MMA: _FP8_MMA.format(a="e4m3", b="e4m3", src="%rd5", scale_d="0", sa=1, sb=1)}),
    ("e5m2_descriptors", {**_fp8_input("e5m2"),
                          _MMA: _FP8_MMA.format(a="e5m2", b="e5m2", src="%rd5", scale_d="0", sa=1, sb=1)}),
    # inf and NaN elements as drawn (NaN results are the canonical NaN in both)
    ("e5m2_specials", {**_fp8_input("e5m2", specials=True),
                       _MMA: _FP8_MMA.format(a="e5m2", b="e5m2", src="%rd5", scale_d="0", sa=1, sb=1)}),
    # mixed multiplicands (.e4m3 x .e5m2: the bytes read in each one's format), B negated (imm-scale-b -1)
    ("e4m3_e5m2_negated_b", {**_fp8_input("e4m3"),
                             _MMA: _FP8_MMA.format(a="e4m3", b="e5m2", src="%rd5", scale_d="0", sa=1, sb=-1)}),
    # A from four registers, four 8-bit elements each (9.7.15.5.1.1.3, as .s8), scale-d a predicate, data D
    ("e4m3_a_registers", {**_fp8_input("e4m3"), _ZERO_D: _DATA_D,
                          _MMA: _FP8_MMA.format(a="e4m3", b="e4m3", src="{%r10, %r11, %r12, %r13}", scale_d="%p3",
                                                sa=1, sb=1)}),
    # .f16 accumulators (two elements a register), .e5m2 x .e4m3, A negated, data D
    ("e5m2_e4m3_f16_accumulators", {
        **_fp8_input("e5m2"),
        _ZERO_D: _DATA_D.replace("%f1, %r10", "%r14, %r10").replace("%f2, %r11", "%r15, %r11"),
        _MMA: "wgmma.mma_async.sync.aligned.m64n8k32.f16.e5m2.e4m3 {%r14, %r15}, %rd5, %rd6, %p3, -1, 1;",
        "st.global.v4.f32 [%rd8], {%f1, %f2, %f3, %f4};": "st.global.v2.b32 [%rd8], {%r14, %r15};"}),
]


#: the tf32 form (.tf32 A and B, .f32 accumulators, k8: the same 32-byte K rows, so the same descriptors;
#: f32 input words, whose low 13 bits the wgmma drops, 9.7.15.5.2)
_TF32_INPUT = {'"dtype": "float16", "shape": [1152]': '"dtype": "float32", "shape": [576]'}
_TF32_MMA = "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {{%f1, %f2, %f3, %f4}}, {src}, %rd6, {scale_d}, {sa}, 1;"
VARIANTS += [
    ("tf32_descriptors", {**_TF32_INPUT, _MMA: _TF32_MMA.format(src="%rd5", scale_d="0", sa=1)}),
    # A from four registers, one tf32 element each (9.7.15.5.1.1.2), A negated, scale-d a predicate, data D
    ("tf32_a_registers_negated", {**_TF32_INPUT, _ZERO_D: _DATA_D,
                                  _MMA: _TF32_MMA.format(src="{%r10, %r11, %r12, %r13}", scale_d="%p3", sa=-1)}),
]


@pytest.mark.parametrize("name,edits", VARIANTS, ids=[v[0] for v in VARIANTS])
def test_wgmma_terms_evaluate_to_the_emulators_bits(name: str, edits: dict[str, str], tmp_path: Path) -> None:
    """Each register term written when the wgmma is performed, evaluated on the run's input, is the
    emulator's bits (the shadow's self-check), and so is every output element's term; no gap."""
    from semantics.termeval import Incremental, evaluate
    from symexec.check.run import run_checked
    from symexec.check.termshadow import equivalence_run
    from tests.equivalence.test_shadow import _leaf
    from volta.equiv_cli import spec_kernel

    text = (CASES / "wgmma_kmajor.ptx").read_text()
    for old, new in edits.items():
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path = tmp_path / f"wgmma_{name}.ptx"
    path.write_text(text)
    k, _, _ = spec_kernel(path, "candidate")
    T = TermStore()
    run, shadow = equivalence_run(k.prog, k.launch, T, k.buffers)
    leaf = _leaf(k.launch)
    shadow.self_check = Incremental(T, leaf)
    assert run_checked(run, k.prog, k.launch).verdict == "race_free"
    assert not shadow.gaps, [g.describe() for g in shadow.gaps]
    assert not shadow.mismatches and shadow.checked > 0 and shadow.unchecked == 0, shadow.mismatches[:2]
    (out,) = shadow.outputs().values()
    assert (out.terms != CONCRETE).all()
    assert (evaluate(T, out.terms, leaf) == out.bits.astype(np.uint64)).all()
    assert Op.MMA in {Op(int(T.op[i])) for i in _below(T, out.terms[:1])}


@pytest.mark.parametrize("sat", ["", ".satfinite"])
def test_integer_wgmma_over_data_accumulators_is_refused(sat: str, tmp_path: Path) -> None:
    """An integer wgmma whose old D is data of unknown range (here near INT32_MAX: the sum wraps, or clamps
    with .satfinite, on many elements) gets no term: proofs/normal.py reads an s32 MMA as its exact sum, so
    a wrapping and a clamping build would be "proved" equal (they were, before this guard)."""
    from symexec.check.run import run_checked
    from symexec.check.termshadow import equivalence_run
    from volta.equiv_cli import spec_kernel

    text = (CASES / "wgmma_kmajor.ptx").read_text()
    for old, new in {**_INT, **_INT_DATA_D,
                     _MMA: _INT_MMA.format(a="s8", b="s8", sat=sat, src="%rd5", scale_d="%p3")}.items():
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path = tmp_path / "wgmma_s8_data_d.ptx"
    path.write_text(text)
    k, _, _ = spec_kernel(path, "candidate")
    run, shadow = equivalence_run(k.prog, k.launch, TermStore(), k.buffers)
    assert run_checked(run, k.prog, k.launch).verdict == "race_free"
    assert any("integer accumulators of unbounded range" in g.why for g in shadow.gaps), \
        [g.describe() for g in shadow.gaps]
    (out,) = shadow.outputs().values()
    assert not (out.terms == CONCRETE).any()


def test_fp8_a_fragment_bug_is_found_by_the_terms() -> None:
    """The fp8 regression pair at the terms alone (no concrete differential run): A from registers in the
    8-bit A fragment layout (9.7.15.5.1.1.3) is proved equal to A through a descriptor, with the fp8
    accumulation assumption printed; with two of the four A registers loaded from each other's addresses,
    the elements differ in their normal forms."""
    from volta.equiv_cli import spec_kernel

    ref, _, _ = spec_kernel(CASES / "wgmma_e4m3.ptx", "reference")
    for case, verified in (("wgmma_e4m3_a_registers.ptx", True), ("wgmma_e4m3_a_registers_swapped.ptx", False)):
        cand, _, _ = spec_kernel(CASES / case, "candidate")
        r = prove(cand, ref, TermStore()).result
        if verified:
            assert r.outcome is Outcome.VERIFIED and r.suspect_count == 0, r.verdict
            assert any("wgmma.mma_async" in a and "accumulation precision is not modelled" in a
                       for a in r.assumptions), r.assumptions
        else:
            assert r.outcome is Outcome.INCONCLUSIVE and r.suspect_count > 0, r.verdict
            assert r.suspects[0].why == "different real-arithmetic normal forms", r.suspects[0]



def test_tf32_wgmma_rounding_is_seen_by_the_precision_check() -> None:
    """A .tf32 wgmma reads each f32 word's top 19 bits (9.7.15.5.2): as real arithmetic that is the word itself
    (the same reading as any float rounding), and the precision check counts it as a tf32 rounding. Against a
    naive fp32 dot of the words rounded by cvt.rz.tf32.f32 it is proved with no precision finding; against the
    unrounded fp32 dot the reals agree but the check reports the candidate's tf32 (11-bit) rounding."""
    from proofs.precision import precision_findings
    from volta.equiv_cli import spec_kernel

    cand, _, _ = spec_kernel(CASES / "wgmma_tf32.ptx", "candidate")
    for ref_case, narrower in (("wgmma_tf32_ref.ptx", False), ("wgmma_f32_dot_ref.ptx", True)):
        ref, _, _ = spec_kernel(CASES / ref_case, "reference")
        rep = prove(cand, ref, TermStore())
        assert rep.result.outcome is Outcome.VERIFIED, (ref_case, rep.result.verdict)
        found = precision_findings(rep)
        if narrower:
            (f,) = found
            assert (f.candidate_format, f.reference_format) == ("tf32", "f32") and f.elements.size == 512, f.describe()
        else:
            assert not found, [f.describe() for f in found]
