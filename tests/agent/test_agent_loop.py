"""The lowering loop against a scripted OpenAI-compatible endpoint on 127.0.0.1 (tests/agent/
fake_openai.py): its decisions (what survived and why, what was rejected for which reason, what
was remembered, what was spent) are asserted, not just that it runs. Timing comes from a fake timer
keyed by the candidate's hash (no GPU in CI); every candidate still goes through the real harness
(static gate, ptxas, emulator numerics, volta check)."""

from __future__ import annotations

import pytest
from agent_fakes import (FakeTimer, analysis_answer, integrity_ptx, plan_answer, ptx_answer, rewritten,
                         triton_ptx)
from fake_openai import FakeServer, Fault, Script

from harness.judge import integrity
from taic_agent.budget import Price
from taic_agent.llm import ChatClient
from taic_agent.records import StopReason
from taic_agent.session import Settings, optimize, resume
from taic_agent.store import Store

PRICE = Price(1.0, 2.0)  # USD per million tokens


def settings(url: str, contract: str = "relu", **kw) -> Settings:
    base = dict(contract=contract, model="fake-model", base_url=url, price=PRICE, eval_seed=1, unseen=1, repairs=1,
                max_tokens=2000, max_retries=0)
    return Settings(**{**base, **kw})


def client(url: str) -> ChatClient:
    return ChatClient("fake-model", url, max_retries=0)


def by_name(store: Store, session: str) -> dict[str, dict]:
    return {c["name"]: c for c in store.candidates(session=session)}


@pytest.fixture(scope="module")
def relu_variants() -> dict[str, str]:
    return {"nc": rewritten("relu", "nc-loads"), "nccs": rewritten("relu", "nc-loads", "streaming-stores")}


def test_a_run_improves_over_rounds(tmp_path, relu_variants) -> None:
    nc, nccs = relu_variants["nc"], relu_variants["nccs"]
    honest = integrity_ptx("honest_relu")
    timer = FakeTimer()
    timer.set(nc, 1.10)
    timer.set(nccs, 1.25)
    timer.set(honest, 1.20)
    timer.set(integrity_ptx("identity"), 5.0)  # a cheat that would win if timing counted before the gates
    s = Script()
    s.add("plan", plan_answer(("read-only loads through ld.global.nc", "local", "stall_long_scoreboard")),
          plan_answer(("streaming stores", "local", "dram_pct")),
          plan_answer(("unroll the element loop", "local", "stall_branch_resolving")))
    s.add("implement", ptx_answer(nc), ptx_answer(nccs), ptx_answer(honest), helper=1)
    s.add("implement", "I could not write it.", ptx_answer(nc), ptx_answer(nccs), helper=2)
    s.add("implement", ptx_answer(integrity_ptx("identity")), ptx_answer(integrity_ptx("oob_write")), Fault(500),
          helper=3)
    s.add("analyse", analysis_answer("y = x for negative x", "select 0 where x < 0"),
          analysis_answer("writes past the end", "mask the tail"))
    s.add("repair", ptx_answer(honest), "```ptx\nthis is not ptx\n```")
    store = Store(tmp_path / "agent.sqlite")
    events = []
    with FakeServer(s) as url:
        res = optimize(settings(url), store, timing=timer, client=client(url), on_event=events.append)
    run = res.runs[0]
    assert run.stop is StopReason.ROUNDS and run.rounds == 3
    assert run.improved == ["r0.start", "r1.h2.fix1", "r2.h0"]
    assert res.best_run == run.run and run.best_name == "r2.h0" and run.measurement.speedup == pytest.approx(1.25)
    c = by_name(store, res.session)
    assert c["r0.start"]["origin"] == "triton" and c["r0.start"]["decision"] == "start"
    # round 1: the honest repair of a cheat is fastest and seeds round 2; the nc variant also survived
    assert c["r1.h0"]["decision"] == "survived" and "r1.h2.fix1 was faster" in c["r1.h0"]["why"]
    assert c["r1.h1"]["decision"] == "malformed" and "no ```ptx block" in c["r1.h1"]["why"]
    assert c["r1.h2"]["decision"] == "repaired" and c["r1.h2"]["reasons"] == "wrong_values"
    assert c["r1.h2"]["rejected_at"] == "numeric" and c["r1.h2"]["speedup"] is None  # never timed
    assert c["r1.h2.fix1"]["parent"] == c["r1.h2"]["id"] and c["r1.h2.fix1"]["decision"] == "survived"
    assert c["r1.h2.fix1"]["timing_source"] == "fake timer (tests)"
    # round 2: a duplicate is not judged again; the out-of-bounds cheat and its unparsable repair are rejected
    assert c["r2.h0"]["parent"] == c["r1.h2.fix1"]["id"] and c["r2.h0"]["decision"] == "survived"
    assert c["r2.h1"]["decision"] == "duplicate" and "r1.h0" in c["r2.h1"]["why"]
    assert c["r2.h2"]["decision"] == "rejected" and "guard_band" in c["r2.h2"]["reasons"]
    assert c["r2.h2.fix1"]["reasons"] == "bad_ptx"
    # round 3: nothing beats 1.25x; an endpoint failure is a malformed helper, not a crash
    assert c["r3.h0"]["decision"] == "duplicate"  # the repair's bytes again
    assert c["r3.h1"]["decision"] == "duplicate"
    assert c["r3.h2"]["decision"] == "malformed" and "endpoint failed" in c["r3.h2"]["why"]
    assert sha_of(integrity_ptx("identity")) not in [c["sha256"] for c in c.values() if c["decision"] == "survived"]
    # what was remembered and learned
    ideas = store.ideas("relu", "sm_90a")
    assert ideas["model:read-only-loads-through-ld-global-nc"]["status"] == "validated"
    assert ideas["model:streaming-stores"]["status"] == "validated"
    assert "model:unroll-the-element-loop" not in ideas  # no candidate gave it a fair test
    learned = {p["key"]: p for p in store.patterns()}
    assert learned["model:streaming-stores"]["best_speedup"] == pytest.approx(1.25)
    assert "st.global.cs.v4.b32" in learned["model:streaming-stores"]["signature"]["added"]  # vs. its parent
    # what was spent: every answered call at the table price, nothing for failed calls
    calls = store.calls(res.session)
    answered = [x for x in calls if x["error"] is None or x["error"].startswith("usage")]
    assert len(answered) == 3 + 8 + 2 + 2  # plans, implements with text, analyses, repairs
    spent = store.spent(res.session)
    assert spent.usd == pytest.approx(sum(PRICE.cost(x["prompt_tokens"], x["completion_tokens"]) for x in answered))
    assert spent.calls == len(answered)
    # rounds 1-2: rules apply to the best (pattern triage); round 3's best has no rule left, no profile
    # (no GPU), and its hottest line (tl.where) has no known cost: the ladder escalates to the compiler
    assert [e.data["level"] for e in events if e.kind == "plan"] == [1, 1, 4]
    [esc] = s.calls("escalate")
    assert "Which Triton pass" in esc.user and "triton/backends/nvidia/compiler.py:" in esc.user
    plan3 = store.plans(run.run)[2]["plan"]["diagnosis"]
    assert plan3["level_name"] == "compiler-source escalation" and "not installed" in " ".join(plan3["evidence"])


def sha_of(text: str) -> str:
    from taic_agent.records import sha256

    return sha256(text)


def test_malformed_answers_repairs_and_a_race_only_the_checker_sees(tmp_path) -> None:
    """A model-written start that does not parse; a malformed analysis; a repair with a race that the
    emulator's numerics pass and only volta check rejects; a second repair that is accepted; then a
    plan that is not JSON ends the run with the reason."""
    s = Script()
    s.add("write", ptx_answer(".version 8.0\n.target sm_90\n.visible .entry rowsum_kernel( {"))
    s.add("analyse", "I think the kernel is fine.", analysis_answer("race on the partial sums", "bar.sync"))
    s.add("repair", ptx_answer(integrity_ptx("missing_barrier")), ptx_answer(integrity_ptx("honest_rowsum")))
    s.add("plan", "Let me think... the bottleneck is probably memory.")
    store = Store(tmp_path / "agent.sqlite")
    with FakeServer(s) as url:
        res = optimize(settings(url, "rowsum", start="model", repairs=2), store, timing=FakeTimer(),
                       client=client(url))
    run = res.runs[0]
    c = by_name(store, res.session)
    assert c["r0.start"]["origin"] == "model" and c["r0.start"]["reasons"] == "bad_ptx"
    assert c["r0.start"]["decision"] == "repaired"
    race = c["r0.start.fix1"]
    assert race["reasons"] == "verify_finding" and race["rejected_at"] == "verify"
    stages = {st["stage"]: st["status"] for st in __import__("json").loads(race["report"])["stages"]}
    assert stages["numeric"] == "passed" and stages["verify"] == "rejected"  # only the checker caught it
    assert c["r0.start.fix2"]["decision"] == "start" and run.best_name == "r0.start.fix2"
    # the malformed analysis still led to a repair call (without an analysis in its prompt)
    repairs = s.calls("repair")
    assert len(repairs) == 2 and "Analysis:" not in repairs[0].user and "race on the partial sums" in repairs[1].user
    assert run.stop is StopReason.NO_IDEAS and "malformed plan" in run.why
    assert "'bottleneck'" in run.why or "JSON" in run.why


def test_a_failed_idea_is_not_retried(tmp_path) -> None:
    s = Script()
    s.add("plan", plan_answer(("Drop the mask on the tail", "local", "instructions")),
          plan_answer(("drop the mask on the tail!", "local", "instructions")))
    s.add("implement", ptx_answer(integrity_ptx("oob_read")))
    store = Store(tmp_path / "agent.sqlite")
    with FakeServer(s) as url:
        res = optimize(settings(url, helpers=1, repairs=0), store, timing=FakeTimer(default=3.0), client=client(url))
    run = res.runs[0]
    idea = store.ideas("relu", "sm_90a")["model:drop-the-mask-on-the-tail"]
    assert idea["status"] == "failed" and "r1.h0: rejected" in idea["why"]
    plans = s.calls("plan")
    assert "model:drop-the-mask-on-the-tail: r1.h0: rejected" in plans[1].user  # the planner is told
    assert run.stop is StopReason.NO_IDEAS and "dropped as failed before: model:drop-the-mask-on-the-tail" in run.why
    assert len(s.calls("implement")) == 1  # round 2 asked no helper
    stored = store.plans(run.run)
    assert stored[1]["plan"]["dropped_as_failed_before"] == ["model:drop-the-mask-on-the-tail"]


@pytest.mark.parametrize("limit", ["usd", "tokens"])
def test_budget_exhaustion_stops_before_overspending(tmp_path, limit, relu_variants) -> None:
    s = Script()
    s.add("plan", *[plan_answer(("read-only loads", "local", "stall_long_scoreboard"))] * 3)
    s.add("implement", *[ptx_answer(relu_variants["nc"])] * 9)
    store = Store(tmp_path / "agent.sqlite")
    # the plan prompt is ~2.5k tokens (reserved ~3.5k + 2000 for the answer): one plan fits, three helpers do not
    kw = {"budget_usd": 0.008} if limit == "usd" else {"budget_tokens": 9000}
    with FakeServer(s) as url:
        res = optimize(settings(url, **kw), store, timing=FakeTimer(), client=client(url))
    run = res.runs[0]
    assert run.stop is StopReason.BUDGET, run.why
    spent = store.spent(res.session)
    if limit == "usd":
        assert 0 < spent.usd <= 0.008
    else:
        assert 0 < spent.tokens <= 9000
    assert len(s.log) == spent.calls >= 1  # no request was sent past the budget
    c = by_name(store, res.session)
    assert all(c[f"r1.h{k}"]["decision"] == "malformed" for k in range(3) if f"r1.h{k}" in c) or len(s.calls(
        "implement")) < 3


def test_resume_after_interruption_replays_without_paying_twice(tmp_path, relu_variants) -> None:
    nc, nccs = relu_variants["nc"], relu_variants["nccs"]

    def script() -> Script:
        s = Script()
        s.add("plan", plan_answer(("read-only loads", "local", "stall_long_scoreboard")),
              plan_answer(("streaming stores", "local", "dram_pct")))
        s.add("implement", ptx_answer(nc), ptx_answer(nccs), helper=1)
        s.add("implement", ptx_answer(integrity_ptx("identity")), ptx_answer(nc), helper=2)
        s.add("analyse", analysis_answer("identity", "relu"))
        s.add("repair", ptx_answer(integrity_ptx("honest_relu")))
        return s

    timer = FakeTimer()
    timer.set(nc, 1.1)
    timer.set(nccs, 1.3)
    kw = dict(helpers=2, rounds=2)
    control, cs = Store(tmp_path / "control.sqlite"), script()
    with FakeServer(cs) as url:
        want = optimize(settings(url, **kw), control, timing=timer, client=client(url))

    class Interrupt(Exception):
        pass

    def stop_in_round_1(e) -> None:  # after round 1's helpers answered, before the repair and round 2
        if e.kind == "candidate" and e.text.startswith("r1.h0: accepted"):
            raise Interrupt

    store, s = Store(tmp_path / "agent.sqlite"), script()
    with FakeServer(s) as url:
        with pytest.raises(Interrupt):
            optimize(settings(url, **kw), store, timing=timer, client=client(url), on_event=stop_in_round_1)
        [sid] = [x["id"] for x in store.sessions()]
        assert store.session(sid)["status"] == "running"
        paid_before = store.spent(sid)
        got = resume(store, sid, timing=timer, client=client(url))
    assert [r.best_name for r in got.runs] == [r.best_name for r in want.runs] == ["r2.h0"]
    assert got.runs[0].measurement.speedup == pytest.approx(1.3)
    assert store.session(sid)["status"] == "done"
    # every request was sent once: the resumed run replayed the recorded answers
    asked = [(r.role, r.helper, r.user) for r in s.log]
    assert len(asked) == len(set(asked)) == len(cs.log)
    assert store.spent(sid).usd == pytest.approx(control.spent(want.session).usd)
    assert store.spent(sid).calls > paid_before.calls
    names = lambda st, ses: sorted((c["name"], c["decision"]) for c in st.candidates(session=ses))  # noqa: E731
    assert names(store, sid) == names(control, want.session)


@pytest.mark.slow
def test_cheating_candidates_are_rejected_for_their_exploit_class(tmp_path) -> None:
    """Every malicious relu case of tests/integrity (exploit classes 1-9, 13, 14 and entry/target/
    parameter tricks) proposed by helpers, each timed by the fake as 50x: none survives, each is
    rejected for a reason its header names, and the idea is remembered as failed."""
    cases = [c for c in integrity.cases(integrity_ptx.__globals__["INTEGRITY"])
             if c.contract == "relu" and not c.accepted]
    assert len(cases) >= 12
    s = Script()
    s.add("plan", plan_answer(("skip work", "global", "time")))
    for k, case in enumerate(cases):
        s.add("implement", ptx_answer(case.path.read_text()), helper=k + 1)
    timer = FakeTimer(default=50.0)
    timer.set(triton_ptx("relu"), 1.0)
    store = Store(tmp_path / "agent.sqlite")
    with FakeServer(s) as url:
        res = optimize(settings(url, helpers=len(cases), repairs=0, rounds=1, unseen=2), store, timing=timer,
                       client=client(url))
    run = res.runs[0]
    c = by_name(store, res.session)
    assert run.best_name == "r0.start"
    for k, case in enumerate(cases):
        row = c[f"r1.h{k}"]
        got = set((row["reasons"] or "").split())
        assert row["decision"] in ("rejected", "undecided"), (case.name, row["decision"], row["why"])
        # the loop stops at the first gate that rejects (no keep_going): one of the header's reasons
        assert got & (case.expect | case.expect_any), (case.name, got)
        assert row["speedup"] is None  # a rejected candidate is never timed
    assert store.ideas("relu", "sm_90a")["model:skip-work"]["status"] == "failed"
    assert timer.asked == [sha_of(triton_ptx("relu"))]
