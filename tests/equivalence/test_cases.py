"""Hand-written equivalence cases (tests/equivalence/cases/): each candidate names its reference
and states the verdict `volta check --reference` must give. The seeded bugs of issue 11 (wrong
index, wrong constant, dropped term, swapped operands, off-by-one mask, missing rescale in online
softmax, fp16 accumulation, wrong sign-bit trick, missing atomic contribution) are `not_equivalent`
with an input that, replayed in the emulator, shows the outputs differ beyond the tolerance; their
fixed twins are `verified`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from volta.check_cli import header
from volta.cli import main
from volta.equiv_cli import run_equivalence

HERE = Path(__file__).parent / "cases"
_REF = re.compile(r"^\s*//\s*reference\s*:\s*(\S+)", re.M)
CASES = sorted(p for p in HERE.glob("*.ptx") if "expect" in header(p))

SEEDED = {"wrong index": "relu_wrong_index", "wrong constant": "relu_wrong_constant",
          "dropped term": "rowsum_dropped_term", "swapped operands": "sub_swapped",
          "off-by-one mask": "rowsum_off_by_one_mask", "missing rescale": "softmax_missing_rescale",
          "fp16 accumulation": "dot16_fp16_accumulation", "wrong sign-bit trick": "sub_wrong_sign_trick",
          "missing atomic contribution": "gemv_splitk_missing_contribution",
          "wrong scale index": "bsmma_wrong_scale_byte", "swapped scales": "bsmma_swapped_scales",
          "wrong mask bound": "mask_pick_wrong_bound"}


def _reference(path: Path) -> Path:
    m = _REF.search(path.read_text())
    assert m, f"{path.name}: no '// reference:' line"
    return HERE / m.group(1)


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_case(path: Path) -> None:
    expected = header(path)["expect"]
    report = run_equivalence(path, reference=_reference(path), timeout=300)
    assert report.verdict.split(":")[0] == expected, (report.verdict, report.notes[:3],
                                                       [f.message for f in report.findings[:1]])
    if expected == "not_equivalent":
        (f,) = report.findings
        w = f.details["witness"]
        assert w["replayed"] and abs(w["candidate"] - w["reference"]) > w["allowed"]
        assert f.sites and f.sites[0].ptx.startswith(str(path))  # the candidate's store, located
    if expected == "verified":
        assert any("exact real arithmetic" in a for a in report.assumptions)
        eq = report.stats["equivalence"]
        assert eq["suspects"] == 0 and sum(p["elements"] for p in eq["proofs"]) > 0


def test_every_seeded_bug_has_a_case() -> None:
    stems = {p.stem: header(p) for p in CASES}
    for bug, stem in SEEDED.items():
        assert stems[stem]["expect"] == "not_equivalent" and "seeded bug" in stems[stem]["why"], bug


def test_cli_exit_codes_and_json(tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(main, ["check", str(HERE / "softmax_online.ptx"), "--reference",
                              str(HERE / "softmax_ref.ptx"), "--json"])
    assert ok.exit_code == 0, ok.output
    data = json.loads(ok.output)
    assert data["verdict"] == "verified" and data["stats"]["equivalence"]["proofs"]
    bad = runner.invoke(main, ["check", str(HERE / "sub_swapped.ptx"), "--reference", str(HERE / "sub_ref.ptx"),
                               "--sarif", str(tmp_path / "out.sarif")])
    assert bad.exit_code == 1 and "not_equivalent" in bad.output
    sarif = json.loads((tmp_path / "out.sarif").read_text())
    assert sarif["runs"][0]["results"][0]["ruleId"] == "not_equivalent"
    neither = runner.invoke(main, ["check", str(HERE / "sub_swapped.ptx"), "--equivalence"])
    assert neither.exit_code == 2 and "--contract" in neither.output


def test_mismatched_launches_are_bad_input(tmp_path: Path) -> None:
    """Buffers matched by name must agree: a reference reading a buffer the candidate lacks is refused."""
    cand = tmp_path / "c.ptx"
    text = (HERE / "relu_ref.ptx").read_text().replace('"x"', '"z"')
    cand.write_text(text)
    r = CliRunner().invoke(main, ["check", str(cand), "--reference", str(HERE / "relu_ref.ptx")])
    assert r.exit_code == 2 and "buffer 'x'" in r.output
