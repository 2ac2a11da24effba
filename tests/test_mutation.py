"""Seeded-mutation test: the checker must find a bug in every mutant that is a real bug.

Each mutant of a suite kernel's sm_90a / sm_100a PTX deletes or weakens ONE synchronisation step
(tests/mutation/engine.py has the catalogue). A mutant the checker does not catch must be
explained in the reviewed table tests/mutation/verdicts.toml, as ``benign`` (with the reason,
judged from the PTX manual) or as a ``known_miss`` (a real bug the checker misses: the kernel's
test is reported xfail, naming it). So a new mutant that is not caught fails until a person looks
at it, and a benign mutant that becomes "caught" is a false alarm and fails too.

CI sample (runner.suite_sample): per target, ``SAMPLE`` site(s) of every synchronisation
instruction the suite's PTX uses, drawn by ``VOLTA_MUTATION_SEED`` (default 0) from all kernels
that have one (cheaper kernels more likely), with every mutation kind applied to each sampled site.
``python bench/mutation.py`` runs every site of every kernel and prints the whole table.

Baselines: the unmutated kernel's findings are a set of signatures (kind, PTX lines of the sites,
and for a race whether only a proxy fence is missing; runner.signature), empty for a race_free
kernel. A mutant is caught by a finding whose signature is not in that set (a new bug); a report
with only the baseline's findings is not caught. A baseline with findings is allowed only for the
kernels listed in ``TRITON_FINDINGS`` of tests/test_check_suite.py (reviewed findings in Triton's
own output, asserted exactly there: today the four TMA-fed tcgen05 kernels on sm_100a with the
tcgen05.alloc slot reused by a TMA load without fence.proxy.async); any other kernel whose
unmutated verdict has findings fails. A kernel whose unmutated verdict is unsupported or
inconclusive cannot be classified: it is **skipped**, the reason giving the verdict. Set
``VOLTA_MUTATION_REQUIRE_CHECKABLE=1`` to turn those skips into failures;
``test_unmutated_kernel_is_checkable`` is the separate assertion (every target, not only the
sampled ones).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

import ptx_parser
from tests.mutation.engine import KINDS, mutations, sample_sites, sites
from tests.mutation.runner import Status, run_kernel, signature, suite_sample, suite_targets, table
from tests.test_check_suite import TRITON_FINDINGS

SAMPLE = 1
SEED = int(os.environ.get("VOLTA_MUTATION_SEED", "0"))
REQUIRE_CHECKABLE = os.environ.get("VOLTA_MUTATION_REQUIRE_CHECKABLE", "") not in ("", "0")
ARCHES = ("sm_90a", "sm_100a")
TARGETS = suite_targets(ARCHES)

# ----------------------------------------------------------------------------- the engine itself

HERE = Path(__file__).parent / "mutation"
HANDWRITTEN = {"sm_90a": HERE / "k90.ptx", "sm_100a": HERE / "k100.ptx"}


@pytest.mark.parametrize("arch", sorted(HANDWRITTEN))
def test_engine_mutates_every_site_exactly(arch: str) -> None:
    """Every mutant of the hand-written kernels parses, differs from the original only where the
    mutation says (the engine checks this itself by reparsing), keeps every line number, and
    assembles with ptxas when it is installed."""
    ptx = HANDWRITTEN[arch].read_text()
    ms = mutations(ptx, HANDWRITTEN[arch].stem)
    assert ms and {m.kind for m in ms} <= set(KINDS)
    keys = [m.key for m in ms]
    assert len(keys) == len(set(keys))
    n = len(ptx.splitlines())
    for m in ms:
        assert len(m.ptx.splitlines()) == n, m.key
        changed = [i for i, (a, b) in enumerate(zip(ptx.splitlines(), m.ptx.splitlines())) if a != b]
        assert m.site.line - 1 in changed and len(changed) <= 2, (m.key, changed)
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        pytest.skip("ptxas not on PATH: mutants parsed but not assembled")
    with tempfile.TemporaryDirectory() as d:
        for m in ms:
            f = Path(d) / "mutant.ptx"
            f.write_text(m.ptx)
            r = subprocess.run([ptxas, f"-arch={arch}", "-o", os.devnull, str(f)], capture_output=True, text=True)
            assert r.returncode == 0, f"{m.key}: {r.stderr}"


def test_engine_catalogue_is_covered() -> None:
    """The hand-written kernels exercise every mutation kind of the catalogue."""
    kinds = {m.kind for p in HANDWRITTEN.values() for m in mutations(p.read_text(), p.stem)}
    assert kinds == set(KINDS)


def test_wait_loop_deletion_removes_the_back_branch() -> None:
    ptx = HANDWRITTEN["sm_90a"].read_text()
    (m,) = [m for m in mutations(ptx, "k90") if m.key == "mbarrier.try_wait.parity.shared::cta.b64#0:delete_loop"]
    fn = ptx_parser.parse(m.ptx).kernels[0]
    names = [i.name for i in fn.instructions()]
    assert not any(n.startswith("mbarrier.try_wait") for n in names)
    assert "bra" not in names


def test_sample_is_deterministic() -> None:
    ptx = HANDWRITTEN["sm_90a"].read_text()
    ss = [s for s, _ in sites(ptx)]
    a = sample_sites(ss, 1, 7)
    assert a == sample_sites(list(reversed(ss)), 1, 7)
    assert len({s.name for s in a}) == len(a) == len({s.name for s in ss})


def test_signature_counts_every_pair_a_grouped_race_stands_for() -> None:
    """A race grouped with the baseline's on overlapping bytes (findings.group_findings lists its other
    pairs in details["also"]) has a signature of its own: its extra pairs' lines are in it."""
    from symexec.check.findings import Finding, FindingKind, Site as FSite

    def race(also: list[str]) -> Finding:
        sites = [FSite((0, 0, 0), (0, 0, 0), "k.ptx:81:7", "tcgen05.alloc"),
                 FSite((0, 0, 0), (31, 0, 0), "k.ptx:121:7", "cp.async.bulk.tensor.4d")]
        return Finding(FindingKind.RACE, "data race on shared global_smem[0]: ordered ...", sites,
                       {"also": also})

    base = signature(race(["ld.shared.b32 at k.ptx:85:2 / cp.async.bulk.tensor.4d at k.ptx:121:7"]))
    assert base[1] == (81, 85, 121)
    grown = signature(race(["ld.shared.b32 at k.ptx:85:2 / cp.async.bulk.tensor.4d at k.ptx:121:7",
                            "st.shared.v4.b32 at k.ptx:2142:2 / cp.async.bulk.tensor.4d.global at k.ptx:2170:8"]))
    assert grown[1] == (81, 85, 121, 2142, 2170) and grown != base
    assert signature(race([]))[1] == (81, 121)


def test_table_is_well_formed() -> None:
    for (kernel, arch, mutation), e in table().items():
        assert arch in ("sm_90a", "sm_100a") and e.reason.strip(), (kernel, arch, mutation)
        assert mutation.rsplit(":", 1)[-1] in KINDS, mutation


# ------------------------------------------------------------------------- the suite's mutants


@pytest.mark.slow
@pytest.mark.parametrize("name,arch", TARGETS, ids=[f"{n}-{a}" for n, a in TARGETS])
def test_unmutated_kernel_is_checkable(name: str, arch: str) -> None:
    """The separate assertion behind the skips below: on by VOLTA_MUTATION_REQUIRE_CHECKABLE=1."""
    if not REQUIRE_CHECKABLE:
        pytest.skip("VOLTA_MUTATION_REQUIRE_CHECKABLE is not set")
    run = run_kernel(name, arch, per_name=0)
    assert not run.unlisted, f"{name} {arch}: {run.why_not_checkable}"
    assert run.checkable, f"{name} {arch}: {run.why_not_checkable}"
    assert bool(run.baseline_findings) == bool(TRITON_FINDINGS.get((name, arch))), \
        f"{name} {arch}: listed in TRITON_FINDINGS, but the unmutated verdict is {run.baseline}"


@pytest.mark.slow
@pytest.mark.parametrize("name,arch", TARGETS, ids=[f"{n}-{a}" for n, a in TARGETS])
def test_every_real_bug_is_caught(name: str, arch: str) -> None:
    chosen = suite_sample(ARCHES, SAMPLE, SEED).get((name, arch))
    if not chosen:
        pytest.skip(f"no site of this kernel in the sample (seed {SEED})")
    run = run_kernel(name, arch, only=list(chosen))
    if run.unlisted:
        pytest.fail(f"{name} {arch}: {run.why_not_checkable}: a finding on the unmutated kernel is a false "
                    "positive to fix, or a reviewed finding in Triton's output to list there")
    if not run.checkable:
        msg = f"not checkable yet: {run.why_not_checkable}"
        if REQUIRE_CHECKABLE:
            pytest.fail(msg)
        pytest.skip(msg)
    if not run.outcomes:
        pytest.skip("no synchronisation to mutate")
    bad = [o for o in run.outcomes if o.status in (Status.UNEXPLAINED, Status.FALSE_ALARM, Status.FIXED_MISS)]
    lines = []
    for o in bad:
        what = {Status.UNEXPLAINED: "not caught and not in tests/mutation/verdicts.toml",
                Status.FALSE_ALARM: "caught, but the table says it is benign (a false alarm, or a wrong entry)",
                Status.FIXED_MISS: "caught now: remove its known_miss entry"}[o.status]
        lines.append(f"{name} {arch} {o.mutant.key} (PTX line {o.mutant.site.line}: {o.mutant.site.text}): "
                     f"{o.shown_verdict} -- {what}; {o.finding}")
    assert not bad, "\n".join(lines)
    misses = [o for o in run.outcomes if o.status is Status.KNOWN_MISS]
    if misses:
        pytest.xfail("known checker misses: " + "; ".join(f"{o.mutant.key}: {o.reason}" for o in misses))
