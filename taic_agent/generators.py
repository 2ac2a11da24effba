"""Who writes candidates: a :class:`Generator` answers the loop's five questions (write a start,
analyse a failure, repair, plan, implement a plan) and the ladder's narrow compiler question.

- :class:`RuleGenerator` needs no model: plans are the library's applicable rewrites
  (taic_agent.rules), helper ``k`` implements the k-th subset of the plan's changes, and it has no
  repairs (a rejected rewrite is a failed idea). It is the baseline a model's proposals must beat.
- :class:`ModelGenerator` asks an OpenAI-compatible endpoint (taic_agent.llm.Caller) with
  prompts that carry the contract, the PTX, the harness report and the diagnosis; answers are
  parsed strictly (a ```ptx block; a JSON plan of 1-3 changes, each with the metric it should
  move) and a malformed answer is recorded as such, never guessed at.
"""

from __future__ import annotations

import inspect
import itertools
from dataclasses import dataclass, field
from typing import Any, Protocol

from .ladder import Climb
from .llm import Caller, Malformed, extract_json, extract_ptx, need_str
from .records import Analysis, Change, ChangeKind, Diagnosis, Judged, Plan, Proposal, idea_key
from .rules import RULES, apply_all


@dataclass(frozen=True)
class Task:
    """What every call knows about the contract."""

    contract: str
    description: str
    arch: str
    entry: str
    params: tuple[str, ...]  # "name: type (role)" of each PTX parameter
    roles: tuple[str, ...]
    launch: str
    triton_source: str
    reference_ptx: str
    ir_paths: dict[str, str] = field(default_factory=dict)
    grid: str | None = None  # the contract's grid as `// volta-launch:` text (rules that change the launch)

    @staticmethod
    def of(contract: Any, reference: Any, roles: list[str]) -> "Task":
        from harness.candidate import contract_grid_text

        try:
            src = inspect.getsource(getattr(contract.kernel, "fn", contract.kernel))
        except (OSError, TypeError):
            src = ""
        params = tuple(f"{p.name}: {p.ptx_type} ({r}{', ' + p.arg if p.arg else ''})"
                       for p, r in zip(reference.params, roles))
        r = contract.resolve("verify")
        launch = (f"grid {tuple(r.grid)} x block ({reference.threads_per_block}, 1, 1), dynamic shared "
                  f"{reference.shared} B at the verify instance {dict(contract.instances['verify'])}; the bench "
                  f"instance {dict(contract.instances.get('bench', {}))} is timed")
        return Task(contract.name, contract.description, reference.target, reference.entry, params, tuple(roles),
                    launch, src, reference.ptx, dict(reference.paths), contract_grid_text(contract))


class Generator(Protocol):
    name: str

    def start(self, task: Task, name: str) -> Proposal: ...

    def analyse(self, task: Task, ptx: str, judged: Judged, name: str) -> Analysis: ...

    def repair(self, task: Task, ptx: str, judged: Judged, analysis: Analysis, name: str) -> Proposal: ...

    def plan(self, task: Task, ptx: str, judged: Judged, climb: Climb, failed: dict[str, str], max_changes: int,
             name: str) -> Plan: ...

    def implement(self, task: Task, ptx: str, plan: Plan, helper: int, name: str) -> Proposal: ...

    def ask(self, question: str, excerpts: list[str], name: str) -> str | None: ...


# ------------------------------------------------------------------------------------------ rules

def subsets(n: int) -> list[tuple[int, ...]]:
    """Helper k's subset of a plan's n changes: all of them, then each alone, then the pairs."""
    out: list[tuple[int, ...]] = [tuple(range(n))]
    for size in range(1, n):
        out += list(itertools.combinations(range(n), size))
    return list(dict.fromkeys(out))


class RuleGenerator:
    """The model-free generator."""

    name = "rules"

    def start(self, task: Task, name: str) -> Proposal:
        return Proposal(None, note="the rule-based generator starts from Triton's PTX")

    def analyse(self, task: Task, ptx: str, judged: Judged, name: str) -> Analysis:
        first = next((p for p in judged.problems if p.severity == "reject"), None)
        return Analysis(str(first) if first else judged.summary(), "no rule repairs a rejected rewrite: the idea "
                        "is remembered as failed")

    def repair(self, task: Task, ptx: str, judged: Judged, analysis: Analysis, name: str) -> Proposal:
        return Proposal(None, note="no rule repairs a rejected rewrite")

    def plan(self, task: Task, ptx: str, judged: Judged, climb: Climb, failed: dict[str, str], max_changes: int,
             name: str) -> Plan:
        d = climb.diagnosis
        changes = []
        for m in climb.matches:
            if m.rule is None or m.key in failed:
                continue
            rule = RULES[m.rule]
            changes.append(Change(m.key, rule.title, rule.kind, rule.metric, rule.expected, d.level,
                                  (m.evidence(), f"PTX ISA {rule.manual}"), m.rule))
            if len(changes) == max_changes:
                break
        return Plan(d.bottleneck, tuple(changes), d)

    def implement(self, task: Task, ptx: str, plan: Plan, helper: int, name: str) -> Proposal:
        subs = subsets(len(plan.changes))
        if helper >= len(subs):
            return Proposal(None, note=f"helper {helper}: no further combination of {len(plan.changes)} change(s)")
        chosen = [plan.changes[i] for i in subs[helper]]
        text, done = apply_all(ptx, list(task.roles), [c.rule for c in chosen if c.rule], grid=task.grid)
        if not done:
            return Proposal(None, note="no rule applied")
        keys = tuple(c.key for c in chosen if c.rule in done)
        return Proposal(text, keys, note="rules " + ", ".join(done))

    def ask(self, question: str, excerpts: list[str], name: str) -> str | None:
        return None


# ------------------------------------------------------------------------------------------ model

SYSTEM = """volta-agent role: {role}
You write PTX for NVIDIA GPUs by hand. Every kernel you write is judged by a harness that assembles it
with ptxas, runs it on fresh inputs (sentinel-filled outputs, guard bands, unseen shapes), proves it
free of races, deadlocks and out-of-bounds accesses with a formal checker, and times it against
Triton's autotuned kernel. Only correct, verified and faster kernels survive. Keep the kernel's
.entry name and parameter list exactly; do not read timers or placement registers, do not declare
.global data, do not lower the precision of the arithmetic."""


def _task_text(task: Task) -> str:
    return (f"Contract {task.contract}: {task.description}\nTarget {task.arch}; entry {task.entry}\n"
            f"Parameters (in order): " + "; ".join(task.params) + f"\nLaunch: {task.launch}\n"
            f"Triton source:\n```python\n{task.triton_source.strip()}\n```")


def _report_text(j: Judged) -> str:
    lines = [f"verdict: {j.verdict}"] + [f"  {s.name}: {s.status}: {s.summary[:300]}" for s in j.stages
                                         if s.status != "skipped"]
    lines += [f"  problem {p}" for p in j.problems[:8]]
    if j.speedup:
        lines.append(f"  speedup over Triton: {j.speedup}")
    if j.profile_text:
        lines.append("  profile:\n    " + j.profile_text.replace("\n", "\n    "))
    return "\n".join(lines)


def _diagnosis_text(d: Diagnosis) -> str:
    out = [f"diagnosis ({d.level.title}): {d.bottleneck}"] + [f"  - {e}" for e in d.evidence[:12]]
    out += [f"  (climbed past {c})" for c in d.climbed]
    if d.question:
        out += [f"  question: {d.question}", f"  answer: {d.answer[:1200]}"]
    return "\n".join(out)


class ModelGenerator:
    def __init__(self, caller: Caller | None = None) -> None:
        self.caller = caller  # set by the loop for each run

    @property
    def name(self) -> str:
        return f"model:{self.caller.model}" if self.caller else "model"

    def _ask(self, role: str, name: str, user: str) -> str:
        assert self.caller is not None, "the loop binds a Caller before asking"
        return self.caller(role, name, [{"role": "system", "content": SYSTEM.format(role=role)},
                                        {"role": "user", "content": user}])

    def _ptx(self, role: str, name: str, user: str) -> Proposal:
        text = self._ask(role, name, user)
        try:
            return Proposal(extract_ptx(text))
        except Malformed as e:
            return Proposal(None, malformed=str(e))

    def start(self, task: Task, name: str) -> Proposal:
        return self._ptx("write", name, _task_text(task) + "\n\nWrite the complete PTX module for this contract "
                         "(.version, .target, .address_size, the .entry). Answer with one ```ptx block.")

    def analyse(self, task: Task, ptx: str, judged: Judged, name: str) -> Analysis:
        text = self._ask("analyse", name, _task_text(task) + f"\n\nThis candidate was not accepted:\n```ptx\n{ptx}```\n"
                         f"Harness report:\n{_report_text(judged)}\n\nWhat is the cause, and what is the fix? Answer "
                         'with a JSON object {"cause": "...", "fix": "..."}.')
        try:
            d = extract_json(text)
            return Analysis(need_str(d, "cause", "analysis"), str(d.get("fix", "")))
        except Malformed as e:
            return Analysis("", malformed=str(e))

    def repair(self, task: Task, ptx: str, judged: Judged, analysis: Analysis, name: str) -> Proposal:
        why = f"Analysis: {analysis.cause}\nFix: {analysis.fix}" if not analysis.malformed else ""
        return self._ptx("repair", name, _task_text(task) + f"\n\nThis candidate was not accepted:\n```ptx\n{ptx}```\n"
                         f"Harness report:\n{_report_text(judged)}\n{why}\n\nRepair it. Answer with the whole "
                         "module in one ```ptx block.")

    def plan(self, task: Task, ptx: str, judged: Judged, climb: Climb, failed: dict[str, str], max_changes: int,
             name: str) -> Plan:
        d = climb.diagnosis
        tried = "\n".join(f"  - {k}: {why}" for k, why in failed.items()) or "  (none)"
        known = "\n".join(f"  - {m.key}: {m.title} (moves {m.metric})" for m in climb.matches) or "  (none)"
        text = self._ask("plan", name, _task_text(task) + f"\n\nThe current best kernel passes every gate:\n```ptx\n"
                         f"{ptx}```\nHarness report:\n{_report_text(judged)}\n{_diagnosis_text(d)}\n"
                         f"Known fixes that apply:\n{known}\nIdeas that already failed (do not propose them "
                         f"again):\n{tried}\n\nName the bottleneck and propose 1 to {max_changes} changes (local "
                         "instruction edits, or global changes to thread mapping, data movement, synchronisation), "
                         "each tied to the measured metric it should move. Answer with a JSON object "
                         '{"bottleneck": "...", "changes": [{"title": "...", "kind": "local|global", "metric": "...", '
                         '"expected": "..."}]}.')
        try:
            obj = extract_json(text)
            bottleneck = need_str(obj, "bottleneck", "plan")
            raw = obj.get("changes")
            if not isinstance(raw, list) or not 1 <= len(raw) <= max_changes:
                raise Malformed(f"plan: 'changes' must be a list of 1 to {max_changes} changes")
            changes = []
            for c in raw:
                if not isinstance(c, dict):
                    raise Malformed("plan: every change must be an object")
                title = need_str(c, "title", "change")
                kind = c.get("kind", "local")
                if kind not in ("local", "global"):
                    raise Malformed(f"change {title!r}: kind must be 'local' or 'global'")
                rule = next((m.rule for m in climb.matches if m.rule and (m.key == title or m.rule == title)), None)
                key = f"rule:{rule}" if rule else idea_key(title)
                changes.append(Change(key, title, ChangeKind(kind), need_str(c, "metric", f"change {title!r}"),
                                      str(c.get("expected", "")), d.level, d.evidence[:4], rule))
            return Plan(bottleneck, tuple(changes), d)
        except Malformed as e:
            return Plan("", (), Diagnosis(d.level, d.bottleneck, d.evidence + (f"malformed plan: {e}",), d.matches,
                                          d.climbed, d.question, d.answer))

    def implement(self, task: Task, ptx: str, plan: Plan, helper: int, name: str) -> Proposal:
        changes = "\n".join(f"  {i + 1}. [{c.kind.value}] {c.title} (moves {c.metric}: {c.expected})"
                            for i, c in enumerate(plan.changes))
        p = self._ptx("implement", name, _task_text(task) + f"\n\nCurrent kernel:\n```ptx\n{ptx}```\nBottleneck: "
                      f"{plan.bottleneck}\nPlan:\n{changes}\n\nYou are helper {helper + 1}: implement the plan your "
                      "own way. Answer with the whole module in one ```ptx block.")
        return Proposal(p.ptx, tuple(c.key for c in plan.changes), p.note, p.malformed)

    def ask(self, question: str, excerpts: list[str], name: str) -> str | None:
        if self.caller is None:
            return None
        text = self._ask("escalate", name, f"A narrow question about Triton's compiler:\n"
                         f"{question}\n\nEvidence from Triton's installed sources (file:line):\n" + "\n".join(excerpts)
                         + '\n\nAnswer from this evidence only, with a JSON object {"answer": "..."}.')
        try:
            return need_str(extract_json(text), "answer", "escalation")
        except Malformed:
            return None
