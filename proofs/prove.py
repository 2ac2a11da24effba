"""Run two kernels over the same symbolic inputs and prove their outputs equal (the entry point).

Each kernel first gets `volta check`'s safety report (races, bounds, ...; the symbolic grid's two CTAs
where it applies), both before any terms are made; then both run every CTA in check mode with the
equivalence shadow (symexec/check/termshadow.py) and no race records, sharing one term store, so
identical computations get identical term ids. The outputs are compared by proofs.equivalence; the precision
check (proofs.precision) looks for narrower rounding in the candidate; suspects are confirmed or
dismissed by a witness search (proofs.witness) when the caller gives input patterns.
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass, field

from semantics.terms import TermStore
from symexec.check.findings import Report, Verdict
from symexec.check.run import run_checked
from symexec.check.termshadow import GlobalInfo, equivalence_run
from symexec.launch import Launch
from symexec.machine import FindingKind
from symexec.program import Program

from .equivalence import EquivalenceResult, Outcome, Side, compare_outputs
from .normal import Normalizer

__all__ = ["KernelUnderTest", "EquivalenceReport", "run_side", "prove"]


@dataclass
class KernelUnderTest:
    """A kernel, its launch, and how each global buffer is seen (element sort, input or not)."""

    label: str
    prog: Program
    launch: Launch
    buffers: dict[str, GlobalInfo]


@dataclass
class EquivalenceReport:
    result: EquivalenceResult
    checks: dict[str, Report]  # label -> safety report of that run
    store: TermStore
    sides: dict[str, Side]
    normalizer: Normalizer
    precision: list = field(default_factory=list)  # proofs.precision.PrecisionFinding
    witness: object | None = None  # proofs.witness.Witness
    seconds: dict[str, float] = field(default_factory=dict)
    forms: dict | None = None  # (buffer, index) -> both normal forms, kept for a certificate


def run_side(k: KernelUnderTest, store: TermStore, safety: Report | None = None) -> tuple[Report, Side]:
    """One kernel's safety report and its output terms. The safety report is `volta check`'s
    (symexec.check.kernel.check_kernel: the symbolic grid's two CTAs where it applies; `safety` if the
    caller made it already); the terms come from a run of every CTA without race records. A finding
    of that run (bounds, barriers, an unsupported instruction) that the check did not report is taken
    as the report."""
    report = safety if safety is not None else safety_report(k)
    # a racy kernel's term run keeps race records: whether its races are only replicated stores is
    # decided from them (a run without records would find nothing and call every race replicated)
    racy = report.outcome is Verdict.RACE
    run, shadow = equivalence_run(k.prog, k.launch, store, k.buffers, races=racy)
    terms_report = run_checked(run, k.prog, k.launch)
    if report.outcome is Verdict.RACE_FREE and terms_report.outcome is not Verdict.RACE_FREE:
        report = terms_report
    inputs = {n for n, g in k.buffers.items() if g.symbolic}
    replicated = racy and report.outcome is Verdict.RACE and all(f.kind is FindingKind.RACE for f in report.findings) \
        and bool(run.state.detector.races()) and run.state.detector.replicated_stores_only()
    return report, Side(k.label, shadow.outputs(), shadow.gaps, shadow.opaque_why, inputs, replicated,
                        list(shadow.assumptions))


def safety_report(k: KernelUnderTest) -> Report:
    """`volta check`'s report of the kernel at its launch."""
    from symexec.check.kernel import check_kernel

    return check_kernel(k.prog, k.launch)


def prove(candidate: KernelUnderTest, reference: KernelUnderTest, store: TermStore | None = None,
          keep_forms: bool = False, safety: dict[str, Report] | None = None,
          normalizer: Normalizer | None = None,
          runs: dict[str, tuple[Report, Side]] | None = None) -> EquivalenceReport:
    """Run both kernels and discharge every output element's obligation (no witness search here:
    proofs.witness confirms suspects); `keep_forms`: keep the normal forms a certificate writes;
    `safety`: the kernels' safety reports by label where the caller made them already; `normalizer`:
    one of `store`'s made for several proofs in it (Normalizer(store, keep_roots=True): one reference
    against several candidates reuses the normal forms of the reference's terms; its assumptions and
    lemmas are then those of every proof it served, a superset of this one's); `runs`: a kernel's report and
    output terms by label (`run_side`'s) where an earlier proof in `store` made them (the reference of several
    candidates: its terms are its outputs' in this store whenever they were made, the store only grows)."""
    T = store if store is not None else TermStore()  # not `store or`: an empty store is falsy (len 0)
    if normalizer is not None and normalizer.T is not T:
        raise ValueError("the normalizer is another store's: its term ids would mean other terms")
    seconds: dict[str, float] = {}
    checks: dict[str, Report] = {}
    sides: dict[str, Side] = {}
    safety = dict(safety or {})
    runs = runs or {}
    for k in (candidate, reference):  # both checks first: neither holds memory beside the other's terms
        if k.label in safety or k.label in runs:
            continue
        t0 = time.perf_counter()
        safety[k.label] = safety_report(k)
        seconds[f"check {k.label}"] = round(time.perf_counter() - t0, 3)
    for k in (candidate, reference):
        if k.label in runs:
            checks[k.label], sides[k.label] = runs[k.label]
            continue
        t0 = time.perf_counter()
        checks[k.label], sides[k.label] = run_side(k, T, safety[k.label])
        # the run's machine, observers and shadows hold one another (reference cycles): collected now, not
        # at the collector's next pass, which may come in the middle of the next run and add this one's
        # memory to its peak (FlashAttention vs naive at S = 512: 3211 -> 3053 MiB peak)
        gc.collect()
        seconds[f"run {k.label}"] = round(time.perf_counter() - t0, 3)
    t0 = time.perf_counter()
    N = normalizer if normalizer is not None else Normalizer(T)
    forms: dict | None = {} if keep_forms else None
    if any(r.outcome is Verdict.UNSUPPORTED for r in checks.values()):
        bad = next(k for k, r in checks.items() if r.outcome is Verdict.UNSUPPORTED)
        res = EquivalenceResult(Outcome.UNSUPPORTED, f"{checks[bad].reason} ({bad})")
    else:
        # the comparison makes millions of small objects (normal forms, atoms, Fractions) and no reference
        # cycles: the collector's full passes over them found nothing (cross_entropy_zloss: 0 unreachable
        # objects after each pair's comparison) and cost 12-15 s CPU of its 240; its garbage is freed by
        # reference counts. Collection resumes after it.
        was = gc.isenabled()
        gc.disable()
        try:
            res = compare_outputs(T, sides[candidate.label], sides[reference.label], normalizer=N, forms=forms)
        finally:
            if was:
                gc.enable()
    seconds["compare"] = round(time.perf_counter() - t0, 3)
    return EquivalenceReport(res, checks, T, sides, N, seconds=seconds, forms=forms)
