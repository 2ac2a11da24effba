"""`volta check` on CUDA compiled by nvcc (tests/corpus/cuda/check, -O3 and -G): expected verdicts.

Each kernel's header states the verdict it owes (tests/corpus/nvcc_check.py): CSR graph traversals
whose bounds guards depend on the graph, gathers and scatters through index arrays, feasible and
infeasible pairs of data-dependent branches, printf/assert/malloc/free, function pointers, the
cooperative-groups grid barrier, warpSize, stores of equal values from several warps, trap, launch
bounds. Every bug verdict's witness must replay concretely (symexec.check.reach.replays): the
emulator stops at the out-of-bounds access or trap, or a concrete check-mode run finds the race
again. Where the checker is known to fall short of the expectation the case is a strict xfail.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

_REPO_ROOT = str(Path(__file__).resolve().parents[1])
if _REPO_ROOT not in sys.path:
    sys.path.insert(0, _REPO_ROOT)

import pytest

import ptx_parser
from symexec import load_program
from symexec.check.findings import Verdict
from symexec.check.reach import replays
from tests.corpus.nvcc_check import CheckCase, generate_check_corpus
from volta.check_cli import check_file
from volta.inputs import spec_launch
from volta.results import BadInput

HAVE_NVCC = shutil.which("nvcc") is not None
CASES: list[CheckCase] = generate_check_corpus() if HAVE_NVCC else []

#: Known shortfalls (test id -> why the expectation is right and the checker is not).
KNOWN_GAPS: dict[str, str] = {
    **{f"bfs_level_atomic.{fl}": "inconclusive: each vertex tests atomicAdd(&level[v], 0) == cur, an atomic's old "
       "value, which depends on the schedule (other threads CAS level[] from -1 to cur + 1 meanwhile); that no "
       "schedule changes the test's outcome needs reasoning about the values the atomics can write"
       for fl in ("O3", "G")},
}


@pytest.mark.skipif(not HAVE_NVCC, reason="nvcc not on PATH")
@pytest.mark.parametrize("case", [pytest.param(c, id=c.test_id, marks=[pytest.mark.xfail(
    strict=True, reason=KNOWN_GAPS[c.test_id])] if c.test_id in KNOWN_GAPS else []) for c in CASES])
def test_nvcc_kernel_verdict(case: CheckCase) -> None:
    try:
        report = check_file(case.path, timeout=120)
    except BadInput as e:
        assert case.expect == "bad_input", f"{case.test_id}: expected {case.expect}, got bad input: {e}"
        return
    got = report.verdict.split(":")[0]
    assert got == case.expect, (f"{case.test_id}: expected {case.expect}, got {report.verdict}: "
                                + (report.findings[0].message if report.findings else "; ".join(report.notes[:2])))
    if report.outcome.exit_code == 1:
        module = ptx_parser.parse_file(case.path)
        launch, fn = spec_launch(case.path, module, None, None)
        ok, what = replays(load_program(module, fn.name), launch, report)
        assert ok, f"{case.test_id}: the witness does not replay: {what}"


@pytest.mark.skipif(not HAVE_NVCC, reason="nvcc not on PATH")
def test_corpus_covers_the_patterns() -> None:
    """Both flavours of every source, a bug/fixed balance, and the features the corpus is for."""
    assert len(CASES) >= 80 and {c.flavour for c in CASES} == {"O3", "G"}
    verdicts = [c.expect for c in CASES]
    assert verdicts.count("race_free") >= 30 and sum(v in {v.value for v in Verdict} - {"race_free"}
                                                     for v in verdicts) >= 25
    text = "\n".join(c.path.read_text() for c in CASES if c.flavour == "G")
    for feature in ("vprintf", "malloc", "__assertfail", "%envreg", "WARP_SZ", "%reserved_smem_offset", "trap;",
                    ".maxntid", "call (retval0)", "atom.add.release.gpu"):
        assert feature in text, feature
