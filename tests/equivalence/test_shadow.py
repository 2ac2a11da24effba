"""The equivalence shadow follows what the machine computes: every term written to a register,
evaluated on the run's inputs, is the machine's bits (the self-check), and every output element's
final term evaluates to the bits the kernel stored. A differential test of the term semantics
against the emulator on Triton's own kernels (shuffles, ldmatrix/stmatrix, mma, packed halves,
if-then-else merges of data-dependent branches in libdevice's logf)."""

from __future__ import annotations

import numpy as np
import pytest

from harness.equivalence import triton_kernel
from harness.suite import all_contracts
from semantics.termeval import Incremental, evaluate
from semantics.terms import CONCRETE, TermStore, sort_widths
from symexec.check.run import run_checked
from symexec.check.termshadow import equivalence_run
from symexec.paged import PagedArray, byte_fill

CONTRACTS = {c.name: c for c in all_contracts()}

CASES = [("relu", "sm_80"), ("softmax", "sm_80"), ("rowsum", "sm_120"), ("layernorm", "sm_89"),
         ("bitdelta", "sm_80"), ("gemv", "sm_120"), ("lion", "sm_80"), ("rope", "sm_120")]
REPLICATED_STORE = {"bitdelta", "forgetting_attention"}
SLOW = [("cross_entropy_zloss", "sm_80"), ("gemm_fp16", "sm_80"), ("conv2d", "sm_120"), ("swiglu", "sm_89"),
        ("gemm_block_scaled", "sm_120")]  # block-scaled mma.sync (8 s CPU, 2026-12-05)


def _leaf(launch):
    pages: dict[str, PagedArray] = {}

    def leaf(buf: str, elems: np.ndarray, sort: int) -> np.ndarray:
        pa = pages.get(buf)
        if pa is None:
            src = launch.buffers[buf]
            pa = pages[buf] = PagedArray(src.nbytes, np.uint8, byte_fill(src))
        eb = int(sort_widths()[sort]) // 8
        raw = pa[np.asarray(elems)[:, None] * eb + np.arange(eb)]
        return np.ascontiguousarray(raw).view(f"<u{eb}").reshape(-1).astype(np.uint64)

    return leaf


def _check(name: str, arch: str, self_check: bool) -> None:
    k = triton_kernel(CONTRACTS[name], arch)
    T = TermStore()
    run, shadow = equivalence_run(k.prog, k.launch, T, k.buffers)
    leaf = _leaf(k.launch)
    if self_check:
        shadow.self_check = Incremental(T, leaf)
    report = run_checked(run, k.prog, k.launch)
    # Triton's bitdelta stores a reduction replicated across warps to one shared address: a race
    # by PTX 8.7.1 (tests/test_check_suite.py, REPLICATED_STORE); its values are still followed
    assert report.verdict == ("race" if name in REPLICATED_STORE else "race_free"), report.verdict
    assert not [g for g in shadow.gaps if g.fatal], [g.describe() for g in shadow.gaps]
    if self_check:
        assert not shadow.mismatches, [(str(i.span), n) for i, n, *_ in shadow.mismatches[:3]]
        assert shadow.checked > 0 and shadow.unchecked == 0
    outs = shadow.outputs()
    assert outs
    for buf, o in outs.items():
        sym = o.terms != CONCRETE
        assert sym.any(), buf
        got = evaluate(T, o.terms[sym], leaf)
        bad = np.nonzero(got != o.bits[sym].astype(np.uint64))[0]
        assert not bad.size, f"{buf}[{o.elements[sym][bad[0]]}]: term {T.show(o.terms[sym][bad[0]])}"


@pytest.mark.parametrize("name,arch", CASES, ids=lambda v: v)
def test_terms_are_the_machines_values(name: str, arch: str) -> None:
    _check(name, arch, self_check=name in ("relu", "softmax", "bitdelta", "gemv"))


def test_wgmma_terms_are_the_machines_values() -> None:
    """Triton's sm_90a gemm_fp16: the MMA terms given to wgmma.mma_async's accumulators when its
    wgmma.wait_group performs it (termshadow._mma_results) evaluate to the emulator's bits, chained
    through scale-d over eight wgmma per K step (6 s CPU, 2026-12-07)."""
    _check("gemm_fp16", "sm_90a", self_check=True)


@pytest.mark.slow
@pytest.mark.parametrize("name,arch", SLOW, ids=lambda v: v)
def test_terms_are_the_machines_values_large(name: str, arch: str) -> None:
    _check(name, arch, self_check=False)


def test_row_reductions_match_numpys():
    """shadow.rows_or / rows_any / rows_all (rows read as words) give numpy's axis-1 reductions
    exactly, for every row width a load has, strided and Fortran-ordered inputs included, and for the
    wide rows of bulk and tensor copies (past _LOOP_WORDS words: one numpy reduction), with rows all
    zero and rows with a single nonzero byte among them."""
    from symexec.check.shadow import _LOOP_WORDS, rows_all, rows_any, rows_or
    rng = np.random.default_rng(11)
    for k in (0, 1, 2, 3, 4, 5, 8, 12, 16, 32, 8 * _LOOP_WORDS, 8 * _LOOP_WORDS + 8, 136, 4096):
        for m in (0, 1, 7, 300):
            a = (rng.integers(0, 256, (m, k)) * (rng.random((m, k)) < 0.2)).astype(np.uint8)
            if m > 2 and k:
                a[::3] = 0
                a[1::3] = 0
                one = np.arange(1, m, 3)
                a[one, rng.integers(0, k, len(one))] = rng.integers(1, 256, len(one))
            for x in (a, np.asfortranarray(a), np.concatenate([a, a], axis=1)[:, :k]):
                if k:
                    got = rows_or(x)
                    assert got.dtype == np.uint8 and np.array_equal(got, np.bitwise_or.reduce(x, axis=1))
                for b in (x != 0, x == 0):
                    assert np.array_equal(rows_any(b), b.any(axis=1))
                    assert np.array_equal(rows_all(b), b.all(axis=1))


@pytest.mark.parametrize("name,arch", [("softmax", "sm_80"), ("layernorm", "sm_89")], ids=lambda v: v)
def test_runs_without_race_records_keep_no_clocks_and_the_same_terms(name: str, arch: str) -> None:
    """A term run without race records (proofs/prove.py's, for a race-free kernel) keeps no happens-before
    clocks or synchronisation log (only race records read them), and its equivalence shadow shares the
    check state's page layouts: its output terms are those of a run with race records, id for id (one store)."""
    k = triton_kernel(CONTRACTS[name], arch)
    T = TermStore()
    outs = {}
    for races in (True, False):
        run, shadow = equivalence_run(k.prog, k.launch, T, k.buffers, races=races)
        assert run.state.clocked is races and (run.sync in run.machine.observers) is races
        assert run_checked(run, k.prog, k.launch).outcome.value == "race_free"
        for buf, m in shadow.mem.items():
            layout = run.state.layout_of(buf, m.term.size)
            assert layout is not None and m.term._layout is layout, buf
        outs[races] = shadow.outputs()
    assert outs[True].keys() == outs[False].keys()
    for buf, o in outs[True].items():
        p = outs[False][buf]
        assert np.array_equal(o.elements, p.elements) and np.array_equal(o.terms, p.terms), buf
        assert np.array_equal(o.bits, p.bits), buf
