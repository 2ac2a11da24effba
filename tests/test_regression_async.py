"""The asynchronous-operation cases of tests/regression/ -- Hopper (cp.async, cp.async.bulk on mbarriers
and bulk async-groups, cp.reduce.async.bulk, tensor copies through tensor maps, wgmma.mma_async) and
Blackwell (tcgen05: tensor memory, tcgen05.mma/ld/st and their ordering, TMA feeding tcgen05.mma) -- are
valid PTX, come in twins, and their witnesses can be read.

Their verdicts are checked by tests/test_regression.py with every other case. Here:
* ptxas accepts every case whose `.target` is Hopper or newer, with `-arch=` that target (sm_90a,
  sm_100a; skipped without ptxas): a regression kernel that the real assembler refuses would test
  nothing;
* every `// twin:` header names an existing case, and of the two exactly one is expected race_free for
  every input (the other is broken, or race_free for the launch's input only);
* every race reported for one of these cases names, for both sides, the CTA and thread, the
  instruction, its file:line:col, read/write and the address; a race about a missing proxy fence says
  so;
* every undefined behaviour reported for one of them cites the manual and names the instruction's
  file:line:col.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.corpus.common import run_ptxas
from tests.test_regression import CASES, HERE, KNOWN_GAPS
from volta.check_cli import check_file, header

HAVE_PTXAS = shutil.which("ptxas") is not None
_TARGET = re.compile(r"^\s*\.target\s+(sm_\d+[a-z]?)", re.M)


def _target(path: Path) -> str:
    m = _TARGET.search(path.read_text())
    assert m, f"{path.name}: no .target"
    return m.group(1)


def _generation(arch: str) -> int:
    return int(re.match(r"sm_(\d+)", arch).group(1))


HOPPER = [p for p in CASES if _generation(_target(p)) >= 90]  # Hopper and newer (Blackwell included)
BLACKWELL = [p for p in CASES if _generation(_target(p)) >= 100]
TWINNED = [p for p in CASES if "twin" in header(p)]


def test_there_are_hopper_cases() -> None:
    assert len(HOPPER) >= 40
    assert len(TWINNED) >= 40


def test_there_are_blackwell_cases() -> None:
    """The tcgen05 cases target sm_100a (ptxas refuses tcgen05 below it), so the ptxas test assembles
    them for Blackwell; the TMA cases that feed tcgen05.mma are among them."""
    assert len(BLACKWELL) >= 30
    for p in CASES:
        if "tcgen05." in p.read_text():
            assert p in BLACKWELL, f"{p.name}: tcgen05 needs .target sm_100a or newer, not {_target(p)}"
    assert any("cp.async.bulk.tensor" in p.read_text() for p in BLACKWELL)


@pytest.mark.skipif(not HAVE_PTXAS, reason="ptxas not on PATH")
@pytest.mark.parametrize("path", HOPPER, ids=lambda p: p.stem)
def test_ptxas_accepts_case(path: Path) -> None:
    result = run_ptxas(path.read_text(), _target(path))
    assert result.accepted, f"{path.name} rejected by ptxas -arch={_target(path)}:\n{result.stderr}"


@pytest.mark.parametrize("path", TWINNED, ids=lambda p: p.stem)
def test_twin_exists_and_differs(path: Path) -> None:
    twin = HERE / header(path)["twin"]
    assert twin.is_file(), f"{path.name}: twin {twin.name} does not exist"
    assert twin != path
    verdicts = {_full_verdict(path), _full_verdict(twin)}
    assert "race_free" in verdicts and len(verdicts) == 2, (
        f"{path.name} and its twin {twin.name} should be one race_free kernel (for every input) and one"
        f" broken or verified for the launch's input only: {verdicts}")


def _full_verdict(path: Path) -> str:
    """The `// verdict:` header where a case has one (it tells `race_free` for every input from
    `race_free: for the launch's input only`), else the verdict kind of `// expect:`."""
    h = header(path)
    return h.get("verdict", h["expect"])


RACES = [p for p in HOPPER if header(p)["expect"] == "race" and p.stem not in KNOWN_GAPS]
_PROXY_CASES = {"no_proxy_fence", "writer_fence_after_barrier"}
UNDEFINED = [p for p in HOPPER if header(p)["expect"] == "undefined_behavior" and p.stem not in KNOWN_GAPS]


@pytest.mark.parametrize("path", RACES, ids=lambda p: p.stem)
def test_race_witness_is_readable(path: Path) -> None:
    report = check_file(path)
    races = [f for f in report.findings if f.kind.value == "race"]
    assert races, f"{path.name}: no race reported ({report.verdict})"
    for f in races:
        assert len(f.sites) == 2, f.message
        for s in f.sites:
            assert re.fullmatch(rf".*{re.escape(path.name)}:\d+:\d+", s.ptx), s.ptx
            assert s.instruction and s.access in ("read", "write", "atomic"), s
            assert s.address and s.space, s
            assert len(s.cta) == 3 and len(s.thread) == 3, s
    if any(k in path.stem for k in _PROXY_CASES):
        assert all("fence.proxy.async" in f.message for f in races), races[0].message


@pytest.mark.parametrize("path", UNDEFINED, ids=lambda p: p.stem)
def test_undefined_behavior_is_located(path: Path) -> None:
    report = check_file(path)
    found = [f for f in report.findings if f.kind.value == "undefined_behavior"]
    assert found, f"{path.name}: no undefined behaviour reported ({report.verdict})"
    for f in found:
        assert re.search(r"PTX \d+(\.\d+)+", f.message), f"{path.name}: cites no section: {f.message}"
        assert f.sites and re.fullmatch(rf".*{re.escape(path.name)}:\d+:\d+", f.sites[0].ptx), f.sites
        assert f.sites[0].instruction, f.sites[0]


def test_lane_ownership_witness_names_the_offending_warp() -> None:
    report = check_file(HERE / "tcgen05_ld_lane_outside_warp_quarter.ptx")
    (f,) = [f for f in report.findings if f.kind.value == "undefined_behavior"]
    assert "warp 1" in f.message
    assert 32 <= f.sites[0].thread[0] < 64, f.sites[0]


def test_tensormap_race_names_the_tensormap_fence() -> None:
    report = check_file(HERE / "tma_map_replace_no_tensormap_fence.ptx")
    races = [f for f in report.findings if f.kind.value == "race"]
    assert races
    for f in races:
        assert "tensormap" in f.message and "fence.proxy.async " not in f.message, f.message
