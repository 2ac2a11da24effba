"""`volta agent optimize` / `volta agent show` end to end: the rule-based generator with no endpoint
(CPU: nothing is timed, and the report says so), a model behind the scripted endpoint, bad input."""

from __future__ import annotations

import json

from agent_fakes import plan_answer, ptx_answer, rewritten
from click.testing import CliRunner
from fake_openai import FakeServer, Script

from volta.cli import main


def test_rules_end_to_end_on_the_cpu(tmp_path) -> None:
    store = tmp_path / "agent.sqlite"
    r = CliRunner().invoke(main, ["agent", "optimize", "--contract", "relu", "--store", str(store), "--json"])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.stdout)
    [run] = rep["runs"]
    assert rep["generator"] == "rules" and rep["spent"] == {"usd": 0.0, "tokens": 0, "calls": 0}
    assert run["stop"] == "no_timing" and "without timing" in run["why"]
    plan = run["plans"][0]
    assert plan["diagnosis"]["level_name"] == "pattern triage"
    assert {c["key"] for c in plan["changes"]} == {"rule:nc-loads", "rule:streaming-stores"}
    cands = {c["name"]: c for c in run["candidates"]}
    assert cands["r0.start"]["decision"] == "start" and cands["r0.start"]["origin"] == "triton"
    # helper 0 implements both changes, helpers 1 and 2 one each: all pass every gate, none is timed
    assert [cands[f"r1.h{k}"]["changes"] for k in range(3)] == [
        ["rule:nc-loads", "rule:streaming-stores"], ["rule:nc-loads"], ["rule:streaming-stores"]]
    assert all(cands[f"r1.h{k}"]["decision"] == "untimed" and cands[f"r1.h{k}"]["speedup"] is None for k in range(3))
    assert rep["ideas"] == []  # untimed: no idea failed or validated
    sid = rep["session"]
    shown = CliRunner().invoke(main, ["agent", "show", "--store", str(store)])
    assert sid in shown.output and "relu" in shown.output
    one = CliRunner().invoke(main, ["agent", "show", f"{sid}.1", "--store", str(store), "--candidate", "r1.h1",
                                    "--ptx"])
    assert one.exit_code == 0, one.output
    assert "untimed" in one.output and "verify    passed" in one.output and "ld.global.nc.v4.b32" in one.output
    text = CliRunner().invoke(main, ["agent", "show", sid, "--store", str(store)])
    assert "pattern triage" in text.output and "untimed (no GPU" in text.output


def test_model_through_the_endpoint(tmp_path, monkeypatch) -> None:
    nc = rewritten("relu", "nc-loads")
    s = Script()
    s.add("plan", plan_answer(("read-only loads", "local", "stall_long_scoreboard")))
    s.add("implement", ptx_answer(nc), helper=1)
    monkeypatch.setenv("VOLTA_TEST_KEY", "sk-test")
    store = tmp_path / "agent.sqlite"
    with FakeServer(s) as url:
        r = CliRunner().invoke(main, ["agent", "optimize", "--contract", "relu", "--model", "fake-model", "--base-url",
                                      url, "--api-key-env", "VOLTA_TEST_KEY", "--price", "1,2", "--budget", "1",
                                      "--helpers", "1", "--rounds", "1", "--store", str(store)])
    assert r.exit_code == 0, r.output
    assert "r1.h0" in r.output and "untimed" in r.output and "spent $0.00" in r.output
    assert [x.model for x in s.log] == ["fake-model", "fake-model"]


def test_bad_input(tmp_path) -> None:
    store = str(tmp_path / "a.sqlite")
    r = CliRunner().invoke(main, ["agent", "optimize", "--contract", "nope", "--store", store])
    assert r.exit_code == 2 and "nope" in r.output
    r = CliRunner().invoke(main, ["agent", "optimize", "--contract", "relu", "--model", "unknown-model", "--budget", "1",
                                  "--base-url", "http://127.0.0.1:9/v1", "--store", store])
    assert r.exit_code == 2 and "--price" in r.output
    r = CliRunner().invoke(main, ["agent", "optimize", "--contract", "relu", "--price", "cheap", "--store", store])
    assert r.exit_code == 2 and "IN,OUT" in r.output
    r = CliRunner().invoke(main, ["agent", "show", "missing", "--store", store])
    assert r.exit_code == 2
