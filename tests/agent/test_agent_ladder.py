"""The diagnosis ladder level by level, the IR attribution, the compiler-source escalation, and the
store and budget the loop relies on."""

from __future__ import annotations

import threading

import pytest

from harness import suite
from harness.compile import compile_contract
from taic_agent import escalate, irmap
from taic_agent.budget import Budget, BudgetExhausted, Price, PriceError, parse_price
from taic_agent.ladder import Bottleneck, LadderInput, diagnose, profile_bottleneck
from taic_agent.records import Judged, Level, StageView
from taic_agent.rules import Kernel, contract_roles
from taic_agent.store import Store


def setup(contract: str):
    c = suite.get(contract)
    ref = compile_contract(c, "sm_90a", "verify")
    return Kernel.parse(ref.ptx, contract_roles(c, ref)), ref


def judged(metrics: dict[str, float] | None = None) -> Judged:
    return Judged("accepted", "0" * 64, "gpu", (StageView("profile", "passed", ""),), (),
                  profile_metrics=metrics or {})


def test_level_1_pattern_triage_and_failed_ideas() -> None:
    k, ref = setup("rowsum")
    c = diagnose(LadderInput(k, judged(), ref.paths))
    assert c.diagnosis.level is Level.PATTERN
    assert set(c.diagnosis.matches) == {"rule:nc-loads", "rule:streaming-stores", "rule:l2-prefetch", "rule:unroll-2"}
    # what failed before is not offered again; learned patterns come first
    learned = [{"key": "rule:unroll-2", "validated": 2, "best_speedup": 1.1, "signature": {}, "title": "", "metric": "",
                "kind": "local"}]
    c = diagnose(LadderInput(k, judged(), ref.paths, failed={"rule:nc-loads"}, learned=learned))
    assert "rule:nc-loads" not in c.diagnosis.matches and c.diagnosis.matches[0] == "rule:unroll-2"


def test_a_learned_pattern_is_recognised_by_what_it_removed() -> None:
    k, ref = setup("relu")
    sig = {"removed": ["st.global.v4.b32"], "added": ["st.global.cs.v4.b32"]}
    learned = [{"key": "model:stream-the-output", "validated": 1, "best_speedup": 1.2, "signature": sig,
                "title": "stream the output", "metric": "dram_pct", "kind": "local"}]
    c = diagnose(LadderInput(k, judged(), ref.paths, failed={"rule:nc-loads", "rule:streaming-stores"},
                             learned=learned))
    assert c.diagnosis.level is Level.PATTERN and c.diagnosis.matches == ("model:stream-the-output",)


def test_level_2_profile_names_the_bottleneck() -> None:
    k, ref = setup("relu")
    failed = {"rule:nc-loads", "rule:streaming-stores"}
    m = {"dram_pct": 35.0, "sm_pct": 20.0, "stall_barrier": 3.1, "stall_long_scoreboard": 1.0,
         "achieved_occupancy": 60.0, "theoretical_occupancy": 100.0}
    c = diagnose(LadderInput(k, judged(m), ref.paths, failed=failed))
    assert c.diagnosis.level is Level.PROFILE and c.diagnosis.bottleneck == "barrier"
    assert any("top stalls barrier 3.10" in e for e in c.diagnosis.evidence)
    assert "pattern triage: no library pattern applies" in c.diagnosis.climbed[0]
    # with a profile, a pattern must address its bottleneck: nc-loads does not address a barrier
    c = diagnose(LadderInput(k, judged(m), ref.paths))
    assert c.diagnosis.level is Level.PROFILE
    m2 = {**m, "stall_barrier": 0.1, "stall_long_scoreboard": 4.0}
    c = diagnose(LadderInput(k, judged(m2), ref.paths))
    assert c.diagnosis.level is Level.PATTERN and "rule:nc-loads" in c.diagnosis.matches


@pytest.mark.parametrize("metrics,want", [
    ({"dram_pct": 85.0}, Bottleneck.MEMORY_BANDWIDTH),
    ({"dram_pct": 30.0, "stall_long_scoreboard": 5.0, "stall_wait": 1.0}, Bottleneck.MEMORY_LATENCY),
    ({"dram_pct": 30.0, "stall_barrier": 5.0}, Bottleneck.BARRIER),
    ({"shared_loads": 100.0, "bank_conflicts_ld": 400.0, "stall_mio_throttle": 2.0}, Bottleneck.BANK_CONFLICTS),
    ({"achieved_occupancy": 20.0, "theoretical_occupancy": 100.0, "stall_wait": 1.0}, Bottleneck.OCCUPANCY),
    ({"sm_pct": 90.0, "dram_pct": 10.0}, Bottleneck.COMPUTE),
    ({"stall_branch_resolving": 2.0, "dram_pct": 10.0, "sm_pct": 10.0}, Bottleneck.ISSUE),
])
def test_profile_bottlenecks(metrics, want) -> None:
    got = profile_bottleneck(metrics)
    assert got is not None and got[0] is want


def test_no_clear_bottleneck_and_no_profile() -> None:
    assert profile_bottleneck({}) is None
    assert profile_bottleneck({"dram_pct": 40.0, "sm_pct": 40.0}) is None


def test_level_3_ir_attribution_rowsum() -> None:
    k, ref = setup("rowsum")
    failed = {f"rule:{r}" for r in ("nc-loads", "streaming-stores", "l2-prefetch", "unroll-2")}
    c = diagnose(LadderInput(k, judged(), ref.paths, failed=failed))
    d = c.diagnosis
    assert d.level is Level.IR and "tt.reduce" in d.bottleneck  # tl.sum: shuffles, shared memory, a barrier
    assert "no profile" in d.climbed[1]
    row = c.attribution.rows[30]
    assert row.counts["ttir"] < row.counts["llir"] and row.counts["ptx"] > 20
    assert row.growth()[:2] == ("ttgir", "llir")
    assert "tl.sum" in row.source


def test_level_4_escalates_to_triton_sources() -> None:
    """relu's hottest line (tl.where) has no known cost: the narrow question goes to the compiler's
    sources (and to the model when there is one)."""
    k, ref = setup("relu")
    asked = []

    def ask(q, ex):
        asked.append((q, ex))
        return "tritongpu-coalesce sets the vector width; nothing in the select"

    c = diagnose(LadderInput(k, judged(), ref.paths, failed={"rule:nc-loads", "rule:streaming-stores"}, ask=ask))
    d = c.diagnosis
    assert d.level is Level.COMPILER and "Which Triton pass" in d.question
    assert d.answer.startswith("tritongpu-coalesce")
    [(q, ex)] = asked
    assert any("backends/nvidia/compiler.py:" in e and "passes." in e for e in ex)
    assert any(escalate.NOT_INSTALLED in e for e in d.evidence)


def test_escalation_reads_pass_declarations() -> None:
    e = escalate.escalate("tt.reduce", 30, "tl.sum(acc)", "ttgir", "llir", 16)
    decl = [x for x in e.excerpts if x.file.endswith("Passes.td")]
    assert decl and any("thread-locality" in x.text or "shared" in x.text.lower() for x in decl)
    assert any(x.file == "triton/backends/nvidia/compiler.py" for x in e.excerpts)
    assert "libtriton.so" in e.notes[-1]
    e2 = escalate.escalate("tt.load", 21, "tl.load(x)", "llir", "ptx", 5)
    assert any("NVPTX" in n for n in e2.notes)


def test_ir_attribution_lines_up_the_candidate() -> None:
    _, ref = setup("softmax")
    a = irmap.attribute(ref.paths)
    hot = a.hottest()
    assert set(hot.counts) == set(irmap.STAGES) and hot.counts["ptx"] == max(r.counts.get("ptx", 0)
                                                                            for r in a.rows.values())
    assert a.totals["ptx"] >= sum(r.counts.get("ptx", 0) for r in a.rows.values())
    assert "line" in a.table() and a.layouts


def test_budget_reserves_worst_case_and_is_thread_safe() -> None:
    b = Budget(Price(1.0, 2.0), usd=0.01)
    r = b.reserve(2000, 1000)  # $0.004
    with pytest.raises(BudgetExhausted):
        b.reserve(2000, 2500)  # $0.007 more would pass $0.01 while the first is held
    b.charge(r, 1500, 200)
    assert b.spent.usd == pytest.approx(0.0019) and b.spent.tokens == 1700
    held = []
    lock = threading.Lock()

    def grab() -> None:
        try:
            x = b.reserve(1000, 1000)
        except BudgetExhausted:
            return
        with lock:
            held.append(x)

    ts = [threading.Thread(target=grab) for _ in range(8)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    assert len(held) == 2  # (0.01 - 0.0019) / 0.003 -> two fit
    with pytest.raises(PriceError):
        Budget(None, usd=1.0)
    assert parse_price("2.5, 10").output_per_mtok == 10
    with pytest.raises(PriceError):
        parse_price("-1,2")


def test_store_replays_and_scopes_ideas(tmp_path) -> None:
    s = Store(tmp_path / "s.sqlite")
    sid = s.new_session("relu", "sm_90a", "rules", {"a": 1})
    rid = s.open_run(sid, 0, 0)
    a = s.add_candidate(rid, 0, None, "r0.start", "triton", None, None, (), "x", "ab", None, "start", "why")
    assert s.add_candidate(rid, 0, None, "r0.start", "triton", None, None, (), "y", "cd", None, "x", "") == a
    s.remember("relu", "sm_90a", "rule:x", "x", "failed", "r1", rid, 1, a)
    s.remember("relu", "sm_90a", "rule:y", "y", "validated", "ok", rid, 2, a)
    s.remember("relu", "sm_90a", "rule:y", "y", "failed", "later", rid, 3, a)
    assert s.ideas("relu", "sm_90a")["rule:y"]["status"] == "validated"  # stays validated
    assert set(s.ideas("relu", "sm_90a", rid, 2)) == {"rule:x"}  # what round 2 saw the first time
    assert set(s.ideas("relu", "sm_90a", "other-run", 0)) == {"rule:x", "rule:y"}
    s.learn("rule:y", f"{rid}/r2.h0", rid, 2, "y", "local", "dram_pct", "relu", {}, 1.2, "e")
    s.learn("rule:y", f"{rid}/r2.h0", rid, 2, "y", "local", "dram_pct", "relu", {}, 1.2, "e")  # replayed: once
    s.learn("rule:y", "other/r1.h1", "other", 1, "y", "local", "dram_pct", "relu", {}, 1.3, "e")
    [p] = s.patterns()
    assert p["validated"] == 2 and p["best_speedup"] == 1.3
    assert s.patterns(rid, 2)[0]["validated"] == 1
