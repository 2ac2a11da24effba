"""`volta eval` and `volta baseline` from the command line (CPU)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from volta.cli import main

HERE = Path(__file__).parents[1] / "integrity"


def _run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_eval_json_and_exit_codes(tmp_path: Path) -> None:
    res = _run("eval", str(HERE / "honest_relu.ptx"), "--contract", "relu", "--json", "--seed", "2", "--unseen", "1")
    assert res.exit_code == 0, res.output
    report = json.loads(res.output)
    assert report["verdict"] == "accepted" and report["seeds"] == [2]
    assert [s["stage"] for s in report["stages"]][:4] == ["static", "assemble", "numeric", "verify"]
    out = tmp_path / "reports"
    res = _run("eval", str(HERE / "honest_relu.ptx"), str(HERE / "globaltimer.ptx"), "--contract", "relu", "--json",
               "--seed", "2", "--unseen", "0", "--out", str(out))
    assert res.exit_code == 1
    both = json.loads(res.output)
    assert [r["verdict"] for r in both] == ["accepted", "rejected"]
    assert both[1]["stages"][0]["problems"][0]["reason"] == "special_register"
    assert sorted(p.name for p in out.iterdir()) == ["globaltimer.json", "honest_relu.json"]
    res = _run("eval", str(HERE / "honest_relu.ptx"), "--contract", "relu", "--out", str(out))
    assert res.exit_code == 2 and "not overwriting" in res.output


def test_eval_terminal_table_and_bad_input(tmp_path: Path) -> None:
    res = _run("eval", str(HERE / "missing_barrier.ptx"), "--contract", "rowsum", "--seed", "1", "--unseen", "0")
    assert res.exit_code == 1 and "REJECTED" in res.output and "verify_finding" in res.output
    assert "[CTA (0, 0, 0)" in res.output  # witnesses are printed, not eaten as markup
    assert _run("eval", str(tmp_path / "nope.ptx"), "--contract", "relu").exit_code == 2
    assert _run("eval", str(HERE / "honest_relu.ptx"), "--contract", "nope").exit_code == 2
    res = _run("eval", str(HERE / "honest_relu.ptx"), "--contract", "relu", "--sanitize", "memchek")
    assert res.exit_code == 2 and "memchek" in res.output
    binary = tmp_path / "bin.ptx"
    binary.write_bytes(b".version 8.0\n\xff\xfe")
    res = _run("eval", str(binary), "--contract", "relu")
    assert res.exit_code == 2 and "not UTF-8" in res.output


def test_baseline_plan_needs_no_gpu() -> None:
    res = _run("baseline", "--contract", "gemm_fp16", "--plan", "--json")
    assert res.exit_code == 0, res.output
    plan = json.loads(res.output)
    assert plan["configs"][0] == "warps=4 stages=3" and len(plan["configs"]) == 6
    assert abs(plan["compute_floor_ms"] - 2 * 8192**3 / 989.5e12 * 1e3) < 1e-9


def test_skip_choices_are_the_stage_table() -> None:
    from harness.judge.pipeline import STAGES
    from volta.eval_cli import eval_cmd

    skip = next(p for p in eval_cmd.params if p.name == "skip")
    assert list(skip.type.choices) == [s.name for s in STAGES]
