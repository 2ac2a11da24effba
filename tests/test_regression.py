"""Every kernel in tests/regression/ gets the verdict its `// expect:` header states.

Each case is a small hand-written PTX kernel (most come as a broken kernel and its fixed twin);
the header gives the expected verdict (`bad_input`: a launch CUDA refuses), a one-line reason and
the launch; an optional `// verdict:` line gives the whole verdict, its reason included, for a case
about how far a verdict reaches (`race_free` for every input, or `race_free: for the launch's
input only`), which `expect` alone (the verdict's kind) does not tell apart. A bug verdict's witness must replay: the emulator, or a concrete check-mode run, with
the witness's input (symexec.check.reach.replays). The expectations follow
the PTX ISA, not the checker: where the checker is known to disagree the case is marked
xfail(strict=True) with the reason, so that fixing the checker turns it into an XPASS failure and
the mark must then be removed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ptx_parser import parse_file
from symexec import load_program
from symexec.check.reach import replays
from volta.check_cli import check_file
from volta.inputs import header, spec_launch
from volta.results import BadInput

HERE = Path(__file__).parent / "regression"
CASES = sorted(p for p in HERE.glob("*.ptx") if "expect" in header(p))

# Known checker gaps (file stem -> why the expectation is right and the checker is not).
KNOWN_GAPS: dict[str, str] = {
    "bulk_load_wait_wrong_parity": "checker: deadlock; it lands the copy at the first poll, but with the copy in "
                                   "flight parity 1 (preceding phase) returns True at once and the reads race",
    "mbarrier_bulk_loop_parity_stuck": "checker: deadlock; it lands copy 1 at the first poll, but with it in flight "
                                       "the stale parity-0 wait returns True at once and the reads race",
}


@pytest.mark.parametrize("path", [
    pytest.param(p, id=p.stem, marks=[pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[p.stem])]
                 if p.stem in KNOWN_GAPS else [])
    for p in CASES])
def test_regression_case(path: Path) -> None:
    expected = header(path)["expect"]
    try:
        report = check_file(path)
    except BadInput as e:  # a launch CUDA refuses: bad input (volta check exits 2)
        assert expected == "bad_input", f"{path.name}: expected {expected}, got bad input: {e}"
        return
    assert report.verdict.split(":")[0] == expected, (
        f"{path.name}: expected {expected}, got {report.verdict}: "
        + (report.findings[0].message if report.findings else "; ".join(report.notes[:1])))
    exact = header(path).get("verdict")
    if exact is not None:
        assert report.verdict == exact, f"{path.name}: expected the verdict {exact!r}, got {report.verdict!r}"
    if report.outcome.exit_code == 1:  # a bug: its witness must show again when its input runs concretely
        module = parse_file(path)
        launch, fn = spec_launch(path, module, None, None)
        ok, what = replays(load_program(module, fn.name), launch, report)
        assert ok, f"{path.name}: the witness does not replay: {what}"


def test_suite_is_complete() -> None:
    """Every case states a verdict, a reason and a launch, and the known gaps name real files."""
    assert len(CASES) >= 60
    for p in HERE.glob("*.ptx"):
        h = header(p)
        assert {"expect", "why", "launch"} <= set(h), f"{p.name}: header lacks {({'expect', 'why', 'launch'} - set(h))}"
    stems = {p.stem for p in CASES}
    assert set(KNOWN_GAPS) <= stems


_HEADER_KEY = re.compile(r"^\s*//\s*([a-z_]+)\s*:")


def test_every_header_key_is_read() -> None:
    """Every `// key:` line of a case's leading comment block is a key `volta.inputs.header` reads: a key it
    does not know (once, `// verdict:`) would be an expectation that silently checks nothing."""
    for p in HERE.glob("*.ptx"):
        lines = p.read_text().splitlines()
        block = lines[:next((i for i, line in enumerate(lines) if not line.lstrip().startswith("//")), len(lines))]
        keys = {m.group(1) for line in block if (m := _HEADER_KEY.match(line))}
        assert keys <= set(header(p)), f"{p.name}: header keys not read: {sorted(keys - set(header(p)))}"


def test_suite_is_balanced() -> None:
    """The suite is balanced: at least 20 cases are expected race_free and 30 expected to fail."""
    verdicts = [header(p)["expect"] for p in CASES]
    assert verdicts.count("race_free") >= 20
    assert sum(v != "race_free" for v in verdicts) >= 30
