"""Run the checker on the mutants of a suite kernel and classify each one against the reviewed
table (``verdicts.toml``).

The unmutated kernel's findings are its *baseline*: a set of signatures (``signature``: the
finding's kind, the PTX lines of its sites and, for a race, whether the accesses were ordered and
only a proxy fence is missing). A race_free kernel has an empty baseline. A mutant is *caught* when
its report has a finding (race, deadlock, divergence, out_of_bounds, uninitialized,
undefined_behavior) whose signature is not in the baseline: a new bug. A mutant that is not caught
(race_free, inconclusive, unsupported, or only the baseline's findings again) must be explained by
the table, as ``benign`` (the mutation removes nothing the kernel needs, with the reason from the
PTX manual) or ``known_miss`` (a real bug the checker does not find yet).

A kernel is checkable when its unmutated verdict is race_free, or when it has findings and the
kernel is listed in ``TRITON_FINDINGS`` of tests/test_check_suite.py (a reviewed finding in Triton's
own output, which that test asserts exactly). An unsupported or inconclusive baseline, or findings
that are not listed, make it not checkable: its mutants are not run.
"""

from __future__ import annotations

import re
import time
import tomllib
from dataclasses import dataclass, field
from enum import Enum
from functools import lru_cache
from pathlib import Path

import ptx_parser

from .engine import Mutant, Site, mutations, sample_sites, sites

TABLE = Path(__file__).with_name("verdicts.toml")

#: verdicts that name a bug
CAUGHT = {"race", "deadlock", "divergence", "out_of_bounds", "uninitialized", "undefined_behavior", "trap"}

#: a finding's identity across mutants of one kernel: (kind, PTX lines of its sites, how). The
#: engine keeps every line number, so the baseline's lines name the same instructions in a mutant.
Signature = tuple[str, tuple[int, ...], str]

_PROXY_ONLY = "but the accesses use different proxies"


#: a PTX location "FILE:LINE:COL" inside a race's list of its other pairs of instructions (findings.py
#: group_findings: "the same bytes also race between INSTR at FILE:LINE:COL / INSTR at FILE:LINE:COL")
_AT_LINE = re.compile(r" at \S*?:(\d+):\d+")


def signature(f) -> Signature:
    """The signature of a symexec.check Finding. ``how`` separates a race whose accesses are ordered
    and only miss a proxy fence ("proxy") from one whose accesses are not ordered at all (""), so
    that a mutation removing the synchronisation under a known cross-proxy finding is a new one.
    The lines are those of every pair of instructions the finding stands for: a race grouped with the
    baseline's on overlapping bytes (its pairs in ``details["also"]``) is a new finding, not the
    baseline's again (attention_tma sm_100a without its epilogue's fence.proxy.async: the O tile's
    st.shared / TMA-store pairs joined the alloc slot's reviewed race on global_smem[0..3])."""
    lines = {int(s.ptx.rsplit(":", 2)[-2]) for s in f.sites if s.ptx.count(":") >= 2}
    for pair in f.details.get("also", []):
        lines.update(int(m) for m in _AT_LINE.findall(pair))
    lines = tuple(sorted(lines))
    how = "proxy" if f.kind.value == "race" and _PROXY_ONLY in f.message else ""
    return f.kind.value, lines, how


def describe(sig: Signature) -> str:
    kind, lines, how = sig
    return kind + (" (ordered, no proxy fence)" if how else "") + (f" at PTX line {', '.join(map(str, lines))}"
                                                                  if lines else "")


def known_findings() -> dict[tuple[str, str], str]:
    """{(kernel, arch): why} for the suite kernels whose unmutated PTX has a reviewed finding."""
    from tests.test_check_suite import TRITON_FINDINGS

    return dict(TRITON_FINDINGS)


class Status(str, Enum):
    CAUGHT = "caught"
    BENIGN = "benign"  # not caught, and the table explains why that is right
    KNOWN_MISS = "known_miss"  # not caught, and the table says the checker should have
    UNEXPLAINED = "unexplained"  # not caught, and the table says nothing: a human must look
    FALSE_ALARM = "false_alarm"  # caught, but the table says the mutant is benign
    FIXED_MISS = "fixed_miss"  # caught, and the table still lists it as a known miss


@dataclass(frozen=True)
class Entry:
    kernel: str
    arches: tuple[str, ...]
    mutation: str
    status: Status  # BENIGN or KNOWN_MISS
    reason: str


@lru_cache(maxsize=None)
def table() -> dict[tuple[str, str, str], Entry]:
    """{(kernel, arch, mutation): entry}. A row names one or more kernels and arches (lists allowed:
    kernels that share the same PTX lines, e.g. gemm_silu's main loop is gemm_fp16's) and gives
    its reason either as ``reason`` or as ``why`` (a key of ``[reasons]``) plus a site ``note``."""
    data = tomllib.loads(TABLE.read_text())
    reasons = data.get("reasons", {})
    out: dict[tuple[str, str, str], Entry] = {}
    for section, status in (("benign", Status.BENIGN), ("known_miss", Status.KNOWN_MISS)):
        for row in data.get(section, []):
            arches = row["arch"] if isinstance(row["arch"], list) else [row["arch"]]
            kernels = row["kernel"] if isinstance(row["kernel"], list) else [row["kernel"]]
            if "why" in row:
                if row["why"] not in reasons:
                    raise ValueError(f"{TABLE.name}: {row['mutation']}: unknown reason {row['why']!r}")
                text = reasons[row["why"]] + (" Here: " + row["note"] if row.get("note") else "")
            else:
                text = row["reason"]
            for k in kernels:
                e = Entry(k, tuple(arches), row["mutation"], status, " ".join(text.split()))
                for a in arches:
                    key = (k, a, e.mutation)
                    if key in out:
                        raise ValueError(f"{TABLE.name}: {key} listed twice")
                    out[key] = e
    return out


@dataclass
class Outcome:
    mutant: Mutant
    verdict: str
    finding: str  # the first new finding's kind and message, else the first finding's, or the notes
    seconds: float
    status: Status = Status.CAUGHT
    reason: str = ""
    #: signatures (described) of the findings that are not in the baseline; None: not recorded
    #: (a run saved before baselines existed: every finding counts as new)
    new: tuple[str, ...] | None = None

    @property
    def caught(self) -> bool:
        if self.new is not None:
            return bool(self.new)
        return self.verdict.split(":", 1)[0] in CAUGHT

    @property
    def shown_verdict(self) -> str:
        """The verdict's kind, marked when the report has only the baseline's findings."""
        v = self.verdict.split(":", 1)[0]
        return f"{v} (baseline only)" if v in CAUGHT and not self.caught else v


@dataclass
class KernelRun:
    kernel: str
    arch: str
    baseline: str  # the unmutated verdict
    baseline_seconds: float
    sites: list[Site] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)
    #: the unmutated kernel's finding signatures (empty when race_free)
    baseline_findings: frozenset[Signature] = frozenset()
    #: why the baseline's findings are expected (TRITON_FINDINGS), "" when not listed
    known: str = ""

    @property
    def has_findings(self) -> bool:
        return self.baseline.split(":", 1)[0] in CAUGHT

    @property
    def unlisted(self) -> bool:
        """The unmutated kernel has findings that tests/test_check_suite.py does not list."""
        return self.has_findings and not self.known

    @property
    def checkable(self) -> bool:
        return self.baseline == "race_free" or (self.has_findings and bool(self.known))

    @property
    def why_not_checkable(self) -> str:
        if self.unlisted:
            return (f"unmutated verdict {self.baseline} ({'; '.join(map(describe, sorted(self.baseline_findings)))}) "
                    "and the kernel is not in TRITON_FINDINGS of tests/test_check_suite.py")
        return f"unmutated verdict {self.baseline}"


def compiled(name: str, arch: str):
    from harness.compile import compile_contract
    from harness.suite import get

    c = get(name)
    return c, compile_contract(c, arch)


def _check(contract, comp, ptx: str, filename: str, limit: float,
           baseline: frozenset[Signature] = frozenset()) -> tuple[str, str, float, frozenset[Signature], tuple[str, ...]]:
    """(verdict, detail, seconds, signatures of all findings, descriptions of the new ones)"""
    import tcgen05  # noqa: F401  (plugs the tensor-core unit into the machine)
    from harness.emulate import launch_for
    from symexec import Unsupported, load_program, time_limit
    from symexec.check import check_kernel

    t0 = time.perf_counter()
    try:
        prog = load_program(ptx_parser.parse(ptx, filename), comp.entry)
        launch = launch_for(contract, comp, contract.make_inputs("verify", "normal", 0), "verify")
        with time_limit(limit):
            report = check_kernel(prog, launch)
    except Unsupported as e:
        return (f"unsupported: {str(e).removeprefix('unsupported: ')}", "", time.perf_counter() - t0, frozenset(), ())
    dt = time.perf_counter() - t0
    sigs = [signature(f) for f in report.findings]
    new = [(f, g) for f, g in zip(report.findings, sigs) if g not in baseline]
    if report.findings:
        f = (new or list(zip(report.findings, sigs)))[0][0]
        lines = sorted({s.ptx.rsplit(":", 2)[-2] for s in f.sites if s.ptx.count(":") >= 2}, key=int)
        detail = f"{f.kind.value}: {f.message}" + (f" (PTX line {', '.join(lines)})" if lines else "")
        if not new:
            detail = "only the baseline's findings: " + detail
    else:
        detail = "; ".join(report.notes)[:300]
    return report.verdict, detail, dt, frozenset(sigs), tuple(dict.fromkeys(describe(g) for _, g in new))


def classify(o: Outcome, kernel: str, arch: str) -> Outcome:
    e = table().get((kernel, arch, o.mutant.key))
    if o.caught:
        if e is None:
            o.status = Status.CAUGHT
        else:
            o.status = Status.FALSE_ALARM if e.status is Status.BENIGN else Status.FIXED_MISS
            o.reason = e.reason
    elif e is None:
        o.status = Status.UNEXPLAINED
    else:
        o.status, o.reason = e.status, e.reason
    return o


def all_sites(name: str, arch: str) -> list[Site]:
    _, comp = compiled(name, arch)
    return [s for s, _ in sites(comp.ptx, comp.entry, f"{name}.{comp.target}.ptx")]


def run_kernel(name: str, arch: str, per_name: int | None = None, seed: int = 0, limit: float | None = None,
               progress=None, only: list[Site] | None = None) -> KernelRun:
    """Check the unmutated kernel, then (if it is checkable) every mutant of the chosen sites:
    ``only`` (a list of sites), or all sites (per_name None), or at most ``per_name`` sites of
    each instruction name, by seed. A mutant is caught by findings not in the baseline."""
    contract, comp = compiled(name, arch)
    filename = f"{name}.{comp.target}.ptx"
    base, _, base_s, base_sigs, _ = _check(contract, comp, comp.ptx, filename, limit or 600.0)
    run = KernelRun(name, arch, base, base_s, baseline_findings=base_sigs,
                    known=known_findings().get((name, arch), ""))
    run.sites = [s for s, _ in sites(comp.ptx, comp.entry, filename)]
    if not run.checkable:
        return run
    if only is not None:
        chosen = only
    else:
        chosen = run.sites if per_name is None else sample_sites(run.sites, per_name, seed)
    budget = limit or max(60.0, 5 * base_s + 30)
    for m in mutations(comp.ptx, name, comp.entry, only=chosen):
        verdict, detail, dt, _, new = _check(contract, comp, m.ptx, filename, budget, run.baseline_findings)
        o = classify(Outcome(m, verdict, detail, dt, new=new), name, arch)
        run.outcomes.append(o)
        if progress:
            progress(run, o)
    return run


@lru_cache(maxsize=None)
def suite_sample(arches: tuple[str, ...], per_name: int, seed: int) -> dict[tuple[str, str], tuple[Site, ...]]:
    """The CI sample: for each target and each instruction name, ``per_name`` sites drawn by
    ``seed`` from all the suite's kernels that have one, a kernel's chance inversely proportional
    to its cost (instructions x CTAs of the verify launch), so that the sample covers every kind of
    synchronisation the suite uses without checking the biggest kernels over and over. Every
    mutation kind then applies to every sampled site. Deterministic: it depends on the PTX, the
    seed and per_name only. {(kernel, arch): sites}"""
    import math
    import random

    cands: dict[tuple[str, str], list[tuple[str, Site, float]]] = {}
    for name, arch in suite_targets(arches):
        _, comp = compiled(name, arch)
        ss = [s for s, _ in sites(comp.ptx, comp.entry, f"{name}.{comp.target}.ptx")]
        cost = max(1, len(comp.ptx.splitlines())) * math.prod(comp.grid)
        for s in ss:
            cands.setdefault((arch, s.name), []).append((name, s, 1.0 / cost))
    out: dict[tuple[str, str], list[Site]] = {}
    for (arch, iname), group in sorted(cands.items()):
        group.sort(key=lambda t: (t[0], t[1].ordinal))
        rng = random.Random(f"{seed}:{arch}:{iname}")
        pool = list(group)
        for _ in range(min(per_name, len(pool))):
            i = rng.choices(range(len(pool)), weights=[w for _, _, w in pool])[0]
            name, site, _ = pool.pop(i)
            out.setdefault((name, arch), []).append(site)
    return {k: tuple(sorted(v, key=lambda s: s.index)) for k, v in out.items()}


def suite_targets(arches: tuple[str, ...] = ("sm_90a", "sm_100a")) -> list[tuple[str, str]]:
    """(kernel, arch) for every suite kernel and target it supports."""
    from harness.suite import all_contracts

    out = []
    for c in all_contracts():
        for a in arches:
            if int("".join(ch for ch in a[3:] if ch.isdigit())) >= c.min_arch:
                out.append((c.name, a))
    return out
