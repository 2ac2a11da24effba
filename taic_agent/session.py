"""A session: best-of-N independent runs of the loop for one contract, under one budget, recorded in
one store, resumable.

    from taic_agent.session import Settings, optimize
    result = optimize(Settings(contract="softmax", model=None, runs=2), store)   # the rule generator
    result = optimize(Settings(contract="softmax", model="gpt-4.1", base_url="http://127.0.0.1:8000/v1",
                               budget_usd=2.0), store)

``resume(store, session)`` picks an interrupted session up: finished runs are kept, the others
replay their recorded calls and reports and carry on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .budget import Budget, price_for
from .generators import ModelGenerator, RuleGenerator
from .llm import Caller, ChatClient
from .loop import Event, Loop, RunResult
from .records import StopReason
from .scale import Executor, LocalExecutor
from .settings import Settings
from .store import Store
from .timing import HarnessTiming, TimingSource


@dataclass
class SessionResult:
    session: str
    runs: list[RunResult] = field(default_factory=list)
    best_run: str | None = None
    spent: str = ""

    @property
    def best(self) -> RunResult | None:
        return next((r for r in self.runs if r.run == self.best_run), None)


def optimize(settings: Settings, store: Store, *, executor: Executor | None = None,
             timing: TimingSource | None = None, on_event: Callable[[Event], None] | None = None,
             client: ChatClient | None = None, session: str | None = None) -> SessionResult:
    """Run (or, with ``session``, resume) a session. ``timing`` defaults to the harness's own GPU
    timing; tests inject a fake."""
    s = settings
    price = price_for(s.model or "rules", s.price) if s.uses_model else price_for("rules")
    budget = Budget(price, s.budget_usd, s.budget_tokens)  # raises PriceError before anything is recorded
    if session is None:
        gen_name = f"model:{s.model}" if s.uses_model else "rules"
        config = s.to_json()
        config["start_ptx"] = s.start_ptx
        session = store.new_session(s.contract, s.arch, gen_name, config)
    budget.spent = store.spent(session)
    executor = executor or LocalExecutor()
    timing = timing or HarnessTiming()
    if s.uses_model and client is None:
        client = ChatClient(s.model or "", s.base_url, s.api_key_env, s.temperature, max_retries=s.max_retries)
    options = s.eval_options()
    result = SessionResult(session)
    for i in range(s.runs):
        rid = store.run_id(session, i)
        done = store.run(rid)
        if done is not None and done["status"] == "done":
            result.runs.append(_finished(store, done))
            continue
        gen: Any
        if s.uses_model:
            assert client is not None
            gen = ModelGenerator(Caller(client, store, budget, session, rid, s.max_tokens, s.seed + i))
        else:
            gen = RuleGenerator()
        loop = Loop(s, options, gen, store, executor, timing, budget, session, on_event)
        r = loop.run(i, s.seed + i)
        result.runs.append(r)
        if r.stop is StopReason.BUDGET:
            break
    timed = [r for r in result.runs if r.measurement is not None]
    best = max(timed, key=lambda r: r.measurement.speedup) if timed else next(
        (r for r in result.runs if r.best is not None), None)
    result.best_run = best.run if best else None
    result.spent = budget.describe()
    complete = len(result.runs) == s.runs or any(r.stop is StopReason.BUDGET for r in result.runs)
    store.finish_session(session, "done" if complete else "running", result.best_run)
    return result


def resume(store: Store, session: str, **kwargs: Any) -> SessionResult:
    row = store.session(session)
    if row is None:
        raise KeyError(f"no session {session!r} in {store.path}")
    cfg = row["config"]
    return optimize(Settings.from_json(cfg, cfg.get("start_ptx")), store, session=session, **kwargs)


def _finished(store: Store, row: dict[str, Any]) -> RunResult:
    from .records import Measurement

    best = store.candidate(row["best"]) if row["best"] is not None else None
    m = (Measurement(best["speedup"], best["speedup_low"], best["speedup_high"], best["timing_source"] or "")
         if best and best["speedup"] is not None else None)
    return RunResult(row["id"], row["best"], best["name"] if best else "", m, StopReason(row["stop"]), row["why"] or "",
                     row["rounds"] or 0)
