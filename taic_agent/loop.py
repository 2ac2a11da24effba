"""The lowering loop.

One run:

- round 0: the start (Triton's own PTX for the contract, a PTX file, or a model-written kernel)
  goes through the harness; if it is not accepted, a failure analysis and up to ``repairs``
  repair attempts follow; without an accepted start the run ends (``no_start``);
- round r >= 1: the diagnosis ladder explains why the current best is slow (taic_agent.ladder);
  the planning call names the bottleneck and proposes 1-3 changes, each tied to a metric; ideas
  that failed before are dropped; ``helpers`` helpers implement the plan in parallel; every patch
  goes through the harness (in parallel where the executor allows); a rejected patch gets the
  failure analysis and repairs; an accepted one is measured by the timing source; those faster
  than the current best beyond the noise *survive*, and the fastest seeds the next round. Each
  change's outcome is remembered (failed ideas are not retried; validated ones grow the pattern
  library).

Stops: rounds done, budget spent, no new idea, no accepted start, no timing (candidates passed but
nothing can be called faster without a GPU), or ``patience`` rounds without a survivor.

Every step is recorded in the store under deterministic names (``r0.start``, ``r2.h1``,
``r2.h1.fix1``): a resumed run replays its recorded answers and reports (no call is paid twice,
no candidate judged twice) and carries on where it stopped.
"""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable

from .budget import Budget, BudgetExhausted
from .generators import Generator, Task
from .ladder import LadderInput, diagnose, signature
from .llm import ModelError
from .records import Decision, Judged, Measurement, Plan, Proposal, StopReason, sha256
from .rules import Kernel, RuleError, contract_roles
from .scale import EvalRequest, Executor
from .settings import Settings
from .store import Store
from .timing import TimingSource


@dataclass
class Cand:
    id: int
    name: str
    ptx: str
    sha: str
    judged: Judged
    changes: tuple[str, ...] = ()
    measurement: Measurement | None = None
    decision: Decision = Decision.REJECTED


@dataclass
class RunResult:
    run: str
    best: int | None
    best_name: str
    measurement: Measurement | None
    stop: StopReason
    why: str
    rounds: int
    improved: list[str] = field(default_factory=list)  # names of the candidates that seeded a round


@dataclass(frozen=True)
class Event:
    kind: str  # run, round, plan, candidate, best, stop
    run: str
    round: int
    text: str
    data: dict[str, Any] = field(default_factory=dict)


class _Stop(Exception):
    def __init__(self, reason: StopReason, why: str) -> None:
        super().__init__(why)
        self.reason, self.why = reason, why


class Loop:
    def __init__(self, config: Settings, options: Any, generator: Generator, store: Store, executor: Executor,
                 timing: TimingSource, budget: Budget, session: str,
                 on_event: Callable[[Event], None] | None = None) -> None:
        from harness import suite
        from harness.compile import compile_contract

        self.cfg, self.options, self.gen, self.store, self.executor = config, options, generator, store, executor
        self.timing, self.budget, self.session = timing, budget, session
        self.on_event = on_event or (lambda e: None)
        self.contract = suite.get(config.contract)
        self.reference = compile_contract(self.contract, config.arch, "verify")
        self.roles = contract_roles(self.contract, self.reference)
        self.task = Task.of(self.contract, self.reference, self.roles)

    # -- one run ----------------------------------------------------------------------------------

    def run(self, index: int = 0, seed: int = 0) -> RunResult:
        rid = self.store.open_run(self.session, index, seed)
        self.rid, self.seen, self.round = rid, {}, 0
        self._emit("run", f"run {rid}: {self.cfg.contract} on {self.cfg.arch}, generator {self.gen.name}, "
                   f"timing {self.timing.name}, {self.executor.description}")
        improved: list[str] = []
        best: Cand | None = None
        stale = 0
        try:
            best = self._start()
            improved.append(best.name)
            for r in range(1, self.cfg.rounds + 1):
                self.round = r
                if self.budget.exhausted():
                    raise _Stop(StopReason.BUDGET, f"budget spent before round {r}: {self.budget.describe()}")
                new = self._round(best)
                if new is not None:
                    best, stale = new, 0
                    improved.append(new.name)
                else:
                    stale += 1
                    if stale >= self.cfg.patience:
                        raise _Stop(StopReason.NO_IMPROVEMENT, f"{stale} round(s) without a faster candidate")
            stop, why = StopReason.ROUNDS, f"{self.cfg.rounds} round(s) done"
        except _Stop as s:
            stop, why = s.reason, s.why
        rounds = self.round
        self.store.finish_run(rid, stop.value, why, best.id if best else None, rounds)
        self._emit("stop", f"{stop.value}: {why}", stop=stop.value)
        return RunResult(rid, best.id if best else None, best.name if best else "", best.measurement if best else None,
                         stop, why, rounds, improved)

    def _emit(self, kind: str, text: str, **data: Any) -> None:
        self.on_event(Event(kind, self.rid, self.round, text, data))

    def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """A generator call; a spent budget stops the run, an endpoint failure is returned."""
        try:
            return fn(*args)
        except BudgetExhausted as e:
            raise _Stop(StopReason.BUDGET, str(e)) from None

    # -- round 0 ----------------------------------------------------------------------------------

    def _start(self) -> Cand:
        cfg = self.cfg
        if cfg.start == "file" and cfg.start_ptx:
            prop, origin = Proposal(cfg.start_ptx, note="given"), "file"
        elif cfg.start == "model":
            try:
                prop, origin = self._call(self.gen.start, self.task, "r0.start"), "model"
            except ModelError as e:
                raise _Stop(StopReason.ERROR, f"the endpoint failed writing the start: {e}") from None
        else:
            prop, origin = Proposal(self.reference.ptx, note="Triton's PTX for the contract"), "triton"
        if prop.ptx is None:
            self.store.add_candidate(self.rid, 0, None, "r0.start", origin, None, None, (), None, None, None,
                                     Decision.MALFORMED.value, prop.malformed or prop.note)
            raise _Stop(StopReason.NO_START, f"no start: {prop.malformed or prop.note}")
        [cand] = self._judge([("r0.start", origin, prop, None, None, None)])
        if cand is None or not cand.judged.accepted:
            fixed = self._repair(cand) if cand is not None else None
            if fixed is None:
                raise _Stop(StopReason.NO_START, f"the start was not accepted ({cand.judged.summary() if cand else ''})"
                            f" and {self.cfg.repairs} repair(s) did not fix it")
            cand = fixed
        cand.measurement = self._measure(cand)
        self._decide(cand, Decision.START, "the run's start" + (f": {cand.measurement}" if cand.measurement else
                                                                  " (no timing)"))
        self._emit("best", f"start {cand.name}: {cand.judged.summary()}", name=cand.name,
                   speedup=cand.measurement.speedup if cand.measurement else None)
        return cand

    # -- rounds -----------------------------------------------------------------------------------

    def _round(self, best: Cand) -> Cand | None:
        r = self.round
        self._emit("round", f"round {r}: from {best.name}" + (f" ({best.measurement})" if best.measurement else ""))
        failed = {k: v["why"] for k, v in self.store.ideas(self.cfg.contract, self.cfg.arch, self.rid, r).items()
                  if v["status"] == "failed"}
        kernel = Kernel.parse(best.ptx, self.roles, best.name, self.task.grid)
        climb = diagnose(LadderInput(kernel, best.judged, self.task.ir_paths, set(failed),
                                     self.store.patterns(self.rid, r), best.ptx,
                                     ask=lambda q, ex: self._ask(q, ex, f"r{r}.escalate")))
        try:
            plan = self._call(self.gen.plan, self.task, best.ptx, best.judged, climb, failed, self.cfg.max_changes,
                              f"r{r}.plan")
        except ModelError as e:
            raise _Stop(StopReason.ERROR, f"the planning call failed: {e}") from None
        fresh = tuple(c for c in plan.changes if c.key not in failed)
        dropped = [c.key for c in plan.changes if c.key in failed]
        plan = dataclasses.replace(plan, changes=fresh)
        pid = self.store.add_plan(self.rid, r, int(plan.diagnosis.level), plan.bottleneck,
                                  {**plan.to_json(), "dropped_as_failed_before": dropped})
        self._emit("plan", f"plan ({plan.diagnosis.level.title}): {plan.bottleneck or '-'}; "
                   + (", ".join(c.key for c in fresh) or "no new change") + (f"; dropped {dropped}" if dropped else ""),
                   level=int(plan.diagnosis.level), changes=[c.key for c in fresh])
        if not fresh:
            why = "the plan proposes nothing new" + (f" (dropped as failed before: {', '.join(dropped)})" if dropped
                                                     else "")
            if not plan.changes and any("malformed plan" in e for e in plan.diagnosis.evidence):
                why = next(e for e in plan.diagnosis.evidence if "malformed plan" in e)
            raise _Stop(StopReason.NO_IDEAS, why)

        names = [f"r{r}.h{k}" for k in range(self.cfg.helpers)]
        keys = tuple(c.key for c in fresh)
        budget_stop: list[_Stop] = []

        def implement(k: int) -> Proposal:
            try:
                return self._call(self.gen.implement, self.task, best.ptx, plan, k, names[k])
            except _Stop as s:
                budget_stop.append(s)
                return Proposal(None, keys, note=s.why)
            except ModelError as e:
                return Proposal(None, keys, malformed=f"the endpoint failed: {e}")

        with ThreadPoolExecutor(max_workers=max(1, self.cfg.helpers)) as pool:
            proposals = list(pool.map(implement, range(self.cfg.helpers)))
        items = [(names[k], "rule" if self.gen.name == "rules" else "model", p, best.id, pid, k)
                 for k, p in enumerate(proposals)]
        cands = self._judge(items)
        finals: list[tuple[Cand, tuple[str, ...]]] = []
        for c in cands:
            if c is None:
                continue
            if not c.judged.accepted and c.decision is not Decision.DUPLICATE:
                fixed = self._repair(c)
                if fixed is not None:
                    c = fixed
            finals.append((c, c.changes))
        survivors = []
        for c, _ in finals:
            if not c.judged.accepted or c.decision is Decision.DUPLICATE:
                continue
            c.measurement = self._measure(c)
            if c.measurement is None:
                self._decide(c, Decision.UNTIMED, "passed every gate; no timing here (harness timing needs a GPU)")
            elif c.measurement.beats(best.measurement, self.cfg.min_gain):
                survivors.append(c)
            else:
                self._decide(c, Decision.NOT_FASTER, f"{c.measurement} is not faster than {best.name}'s "
                             f"{best.measurement} beyond the noise (min gain {self.cfg.min_gain:.0%})")
        survivors.sort(key=lambda c: -c.measurement.speedup)
        for i, c in enumerate(survivors):
            self._decide(c, Decision.SURVIVED, f"{c.measurement} beats {best.name}'s {best.measurement}"
                         + ("; seeds the next round" if i == 0 else f"; {survivors[0].name} was faster"))
        self._remember(plan, [c for c, _ in finals], best, survivors)
        if budget_stop:
            raise budget_stop[0]
        if survivors:
            self._emit("best", f"new best {survivors[0].name}: {survivors[0].measurement}", name=survivors[0].name,
                       speedup=survivors[0].measurement.speedup)
            return survivors[0]
        accepted = [c for c, _ in finals if c.judged.accepted and c.decision is not Decision.DUPLICATE]
        if accepted and all(c.decision is Decision.UNTIMED for c in accepted):
            raise _Stop(StopReason.NO_TIMING, f"{len(accepted)} candidate(s) passed every gate, but without timing "
                        "(a GPU) none can be called faster; nothing seeds another round")
        return None

    # -- judging ----------------------------------------------------------------------------------

    def _judge(self, items: list[tuple[str, str, Proposal, int | None, int | None, int | None]]) -> list[Cand | None]:
        """Record each proposal as a candidate; run the new bytes through the harness (in one batch)."""
        out: list[Cand | None] = [None] * len(items)
        todo: list[tuple[int, str]] = []
        known: dict[int, Judged] = {}
        for i, (name, origin, prop, parent, pid, helper) in enumerate(items):
            if prop.ptx is None:
                self.store.add_candidate(self.rid, self.round, parent, name, origin, helper, pid, prop.changes, None,
                                         None, None, Decision.MALFORMED.value, prop.malformed or prop.note)
                self._emit("candidate", f"{name}: no candidate ({prop.malformed or prop.note})", name=name,
                           decision=Decision.MALFORMED.value)
                continue
            sha = sha256(prop.ptx)
            if sha in self.seen:
                self.store.add_candidate(self.rid, self.round, parent, name, origin, helper, pid, prop.changes,
                                         prop.ptx, sha, None, Decision.DUPLICATE.value,
                                         f"the same bytes as {self.seen[sha]}")
                self._emit("candidate", f"{name}: duplicate of {self.seen[sha]}", name=name,
                           decision=Decision.DUPLICATE.value)
                continue
            self.seen[sha] = name
            memo = self.store.judged(self.session, sha)
            if memo is not None:
                known[i] = memo
            else:
                todo.append((i, sha))
        if todo:
            reqs = [EvalRequest(self.cfg.contract, self.cfg.arch, items[i][0] + ".ptx", items[i][2].ptx or "",
                                self.options) for i, _ in todo]
            for (i, _), report in zip(todo, self.executor.evaluate(reqs)):
                known[i] = Judged.from_report(report)
        for i, judged in sorted(known.items()):
            name, origin, prop, parent, pid, helper = items[i]
            decision = Decision.REJECTED if judged.verdict == "rejected" else (
                Decision.UNDECIDED if judged.verdict == "undecided" else Decision.UNTIMED)
            cid = self.store.add_candidate(self.rid, self.round, parent, name, origin, helper, pid, prop.changes,
                                           prop.ptx, judged.sha256, judged, decision.value, judged.summary())
            out[i] = Cand(cid, name, prop.ptx or "", judged.sha256, judged, prop.changes, decision=decision)
            self._emit("candidate", f"{name}: {judged.summary()}", name=name, verdict=judged.verdict,
                       reasons=list(judged.reasons))
        return out

    def _repair(self, cand: Cand) -> Cand | None:
        """Failure analysis and up to ``repairs`` attempts; the accepted repair, or None."""
        current = cand
        for attempt in range(1, self.cfg.repairs + 1):
            name = f"{cand.name}.fix{attempt}"
            try:
                analysis = self._call(self.gen.analyse, self.task, current.ptx, current.judged, name)
                prop = self._call(self.gen.repair, self.task, current.ptx, current.judged, analysis, name)
            except ModelError as e:
                prop = Proposal(None, malformed=f"the endpoint failed: {e}")
            if prop.ptx is None and not prop.malformed:
                return None  # this generator does not repair (taic_agent.generators.RuleGenerator)
            prop = dataclasses.replace(prop, changes=cand.changes)
            [fixed] = self._judge([(name, "repair", prop, current.id, None, None)])
            if fixed is None:
                continue
            if fixed.decision is Decision.DUPLICATE:
                continue
            if fixed.judged.accepted:
                self._decide(cand, Decision.REPAIRED, f"{fixed.name} repaired it")
                return fixed
            current = fixed
        return None

    def _measure(self, c: Cand) -> Measurement | None:
        m = self.timing.measure(c.sha, c.judged)
        if m is not None:
            self.store.set_measurement(c.id, m.speedup, m.low, m.high, m.source)
        return m

    def _decide(self, c: Cand, decision: Decision, why: str) -> None:
        c.decision = decision
        self.store.set_decision(c.id, decision.value, why)
        self._emit("candidate", f"{c.name}: {decision.value}: {why}", name=c.name, decision=decision.value)

    def _ask(self, question: str, excerpts: list[str], name: str) -> str | None:
        try:
            return self._call(self.gen.ask, question, excerpts, name)
        except ModelError:
            return None

    def _remember(self, plan: Plan, finals: list[Cand], parent: Cand, survivors: list[Cand]) -> None:
        """Each change's outcome: validated (a survivor holds it; the library learns it), failed
        (every candidate holding it was rejected or not faster), or nothing (no fair test)."""
        won = {c.id for c in survivors}
        for change in plan.changes:
            holders = [c for c in finals if change.key in c.changes]
            if any(c.id in won for c in holders):
                for c in holders:
                    if c.id in won:
                        self._learn(change, c, parent)
                best_holder = max((c for c in holders if c.id in won), key=lambda c: c.measurement.speedup)
                self.store.remember(self.cfg.contract, self.cfg.arch, change.key, change.title, "validated",
                                    f"{best_holder.name}: {best_holder.measurement}", self.rid, self.round,
                                    best_holder.id)
                continue
            judged = [c for c in holders if c.decision in (Decision.REJECTED, Decision.UNDECIDED, Decision.NOT_FASTER)]
            if judged and len(judged) == len([c for c in holders if c.decision is not Decision.DUPLICATE]):
                why = "; ".join(f"{c.name}: " + (c.judged.summary() if c.decision is not Decision.NOT_FASTER else
                                                 f"not faster ({c.measurement})") for c in judged)
                self.store.remember(self.cfg.contract, self.cfg.arch, change.key, change.title, "failed", why[:1000],
                                    self.rid, self.round, judged[0].id)

    def _learn(self, change: Any, child: Cand, parent: Cand) -> None:
        try:
            sig = signature(Kernel.parse(parent.ptx, self.roles), Kernel.parse(child.ptx, self.roles))
        except RuleError:
            sig = {}
        self.store.learn(change.key, f"{self.rid}/{child.name}", self.rid, self.round, change.title, change.kind.value,
                         change.metric, self.cfg.contract, sig, child.measurement.speedup,
                         f"{child.name} on {self.cfg.contract}: {child.measurement}")
