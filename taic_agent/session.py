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

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable

from .budget import Budget, Price, price_for
from .generators import ModelGenerator, RuleGenerator
from .llm import Caller, ChatClient
from .loop import Event, Loop, LoopConfig, RunResult
from .records import StopReason
from .scale import Executor, LocalExecutor
from .store import Store
from .timing import HarnessTiming, TimingSource


@dataclass(frozen=True)
class Settings:
    contract: str
    model: str | None = None  # None or "rules": the rule-based generator
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    price: Price | None = None  # overrides the table
    budget_usd: float | None = None
    budget_tokens: int | None = None
    runs: int = 1
    arch: str = "sm_90a"
    rounds: int = 3
    helpers: int = 3
    repairs: int = 2
    max_changes: int = 3
    min_gain: float = 0.02
    patience: int = 2
    start: str = "triton"
    start_ptx: str | None = None
    temperature: float = 0.7
    max_tokens: int = 8192
    max_retries: int = 2  # the openai client's retries of a failed request
    seed: int = 0
    eval_seed: int | None = None
    verify_timeout: float = 300.0
    unseen: int = 2

    @property
    def uses_model(self) -> bool:
        return self.model not in (None, "", "rules")

    def to_json(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["price"] = dataclasses.asdict(self.price) if self.price else None
        d.pop("start_ptx")
        return d

    @staticmethod
    def from_json(d: dict[str, Any], start_ptx: str | None = None) -> "Settings":
        d = {k: v for k, v in d.items() if k != "start_ptx"}
        d["price"] = Price(**d["price"]) if d.get("price") else None
        return Settings(**{k: v for k, v in d.items() if k in {f.name for f in dataclasses.fields(Settings)}},
                        start_ptx=start_ptx)


@dataclass
class SessionResult:
    session: str
    runs: list[RunResult] = field(default_factory=list)
    best_run: str | None = None
    spent: str = ""

    @property
    def best(self) -> RunResult | None:
        return next((r for r in self.runs if r.run == self.best_run), None)


def _options(s: Settings) -> Any:
    from harness.judge.pipeline import EvalOptions

    return EvalOptions(seed=s.eval_seed, unseen=s.unseen, verify_timeout=s.verify_timeout)


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
    cfg = LoopConfig(s.contract, s.arch, s.rounds, s.helpers, s.repairs, s.max_changes, s.min_gain, s.patience,
                     s.start, s.start_ptx, _options(s))
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
        loop = Loop(cfg, gen, store, executor, timing, budget, session, on_event)
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
