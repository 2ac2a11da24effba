"""The Hopper asynchronous-operation cases of tests/regression/ (cp.async, cp.async.bulk on mbarriers
and bulk async-groups, cp.reduce.async.bulk, wgmma.mma_async) are valid PTX, come in twins, and
their race witnesses can be read.

Their verdicts are checked by tests/test_regression.py with every other case. Here:
* ptxas accepts every case whose `.target` is Hopper or newer (skipped without ptxas): a
  regression kernel that the real assembler refuses would test nothing;
* every `// twin:` header names an existing case, and of the two exactly one is expected race_free;
* every race reported for a Hopper case names, for both sides, the CTA and thread, the instruction,
  its file:line:col, read/write and the address; a race about a missing proxy fence says so.
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


HOPPER = [p for p in CASES if _generation(_target(p)) >= 90]
TWINNED = [p for p in CASES if "twin" in header(p)]


def test_there_are_hopper_cases() -> None:
    assert len(HOPPER) >= 40
    assert len(TWINNED) >= 40


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
    verdicts = {header(path)["expect"], header(twin)["expect"]}
    assert "race_free" in verdicts and len(verdicts) == 2, (
        f"{path.name} and its twin {twin.name} should be one broken and one race_free kernel: {verdicts}")


RACES = [p for p in HOPPER if header(p)["expect"] == "race" and p.stem not in KNOWN_GAPS]
_PROXY_CASES = {"no_proxy_fence", "writer_fence_after_barrier"}


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
