"""Which findings of an explored run some input reaches.

A check run explores a data-dependent branch with memory effects both ways, every lane down both
paths (policy.py): a superset of what any input does, so a clean record proves the kernel for every
input. Its findings are only candidates: a path may be one no input takes for that thread (the
degree guard of a CSR traversal that the last vertex never passes), or the combination of two
threads' paths may be impossible (two branches on one value). So:

1. the launch's own input is replayed concretely (check mode that follows every branch as the
   input decides, `ConcretePolicy`): what it finds is reached, a bug with the launch as witness;
2. every other candidate is judged over the conditions of its explored paths (symexec.check.paths:
   the branch predicates as Z3 terms of the input bytes): unsatisfiable for every input -> pruned;
   satisfiable -> possible for another input (the model is replayed to confirm it); undecided ->
   unknown;
3. the verdict: the replay's findings if any; `race_free` for every input when the explored run has
   no other data dependence and every candidate is pruned; otherwise `race_free` for the launch's
   input only, with every candidate it leaves open named in the notes.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ..launch import Launch
from ..program import Program
from .findings import Finding, Report, Verdict
from .run import INPUT_ONLY, CheckRun, conclude, new_run, record_report


class Outcome(Enum):
    PRUNED = "pruned"  # no input takes the paths together
    POSSIBLE = "possible"  # some input does (a model), not the launch's
    UNKNOWN = "unknown"  # undecided


@dataclass
class Judgement:
    finding: Finding
    outcome: Outcome
    why: str
    witness: Report | None = None  # POSSIBLE: the concrete replay of the input that reaches it
    input: str = ""  # that input, in the launch's terms
    launch: Launch | None = None  # ... and the launch that carries it

    def note(self) -> str:
        site = self.finding.sites[0].describe() if self.finding.sites else "?"
        what = f"{self.finding.kind.value} ({self.finding.message}; {site})"
        if self.outcome is Outcome.PRUNED:
            return f"pruned {what}: it lies on explored paths no input takes together ({self.why})"
        if self.outcome is Outcome.POSSIBLE:
            return f"possible {what} for another input, not the launch's: {self.why}"
        return f"undecided {what} on a path explored for a data-dependent branch, not taken by the launch's input: {self.why}"


def confirm(explored: Report, run: CheckRun, prog: Program, launch: Launch) -> Report:
    """The verdict of an explored run `explored` (see the module docstring)."""
    c_run = new_run(prog, launch, run.ctas, concrete=True)
    replay = conclude(record_report(c_run, prog, launch), c_run.state)
    seen = {f.key for f in replay.findings}
    pending = [f for f in explored.findings if f.key not in seen]
    judged = judge(pending, run, prog, launch) if pending else []
    stats = {"explored_branches": run.state.both_paths, "confirmed_by_replay": len(replay.findings),
             **{o.value: sum(j.outcome is o for j in judged) for o in Outcome}}
    notes = [j.note() for j in judged]
    if replay.findings:  # the launch's own input reaches them
        for f in replay.findings:
            f.details["input"] = "the launch's (replayed concretely)"
        return _with(replay, stats, notes)
    # the explored run covers every input when it finished and nothing else depended on data
    universal = explored.outcome not in (Verdict.UNSUPPORTED, Verdict.INCONCLUSIVE) and not run.state.data_dependent
    if universal:
        reached = next((j for j in judged if j.outcome is Outcome.POSSIBLE), None)
        if reached is not None:  # a bug for an input the branch conditions give, replayed
            witness = reached.witness
            witness.witness_launch = reached.launch
            for f in witness.findings:
                f.details["input"] = reached.input
            witness.notes.insert(0, f"the launch's own input does not reach this; an input with {reached.input} does "
                                    "(found by Z3 over the conditions of the explored branches, replayed concretely)")
            return _with(witness, stats, [j.note() for j in judged if j is not reached])
        if all(j.outcome is Outcome.PRUNED for j in judged):
            replay.decide(Verdict.RACE_FREE)
            replay.assumptions = [a for a in replay.assumptions if not a.startswith("the launch's input data")]
            replay.notes = [n for n in replay.notes if not n.endswith(("depends on input data", "depends on the schedule"))]
            replay.assumptions.append(
                f"{run.state.both_paths} data-dependent branch(es) explored both ways with every thread whose choice "
                "depends on data (a superset of what any input does)"
                + (f"; {len(judged)} finding(s) of those paths pruned: no input takes them (Z3 over the branch "
                   "conditions)" if judged else "") + ": the verdict holds for every input of this launch")
            return _with(replay, stats, notes)
    if replay.outcome in (Verdict.UNSUPPORTED, Verdict.INCONCLUSIVE):
        return _with(replay, stats, notes)
    if replay.reason != INPUT_ONLY:
        replay.decide(Verdict.RACE_FREE, INPUT_ONLY)
        replay.assumptions.append("the launch's input data: data-dependent branches were explored both ways and "
                                  "what they found is not reached by this input (see the notes), so the verdict "
                                  "holds for this input only")
    if explored.outcome in (Verdict.UNSUPPORTED, Verdict.INCONCLUSIVE):
        notes.append(f"the run exploring data-dependent branches both ways stopped early ({explored.verdict}): it "
                     "proves nothing for other inputs")
    return _with(replay, stats, notes)


def _with(report: Report, stats: dict, notes: list[str]) -> Report:
    report.stats["reach"] = stats
    report.notes += notes
    return report


def replays(prog: Program, launch: Launch, report: Report) -> tuple[bool, str]:
    """Does the report's first finding show again when its witness input runs concretely? An
    out-of-bounds access or a trap must stop the plain emulator (no checker attached) at the same
    instruction; anything else must be found again by a check-mode run that follows the input's
    own branches (ConcretePolicy), with the same kind and instructions. (ok, what happened)"""
    from ..errors import ExecError, MemoryFault, Trap
    from ..machine import FindingKind, run_kernel

    if not report.findings:
        return False, "no finding"
    f = report.findings[0]
    given = report.witness_launch or launch
    if f.kind in (FindingKind.OUT_OF_BOUNDS, FindingKind.TRAP):
        try:
            run_kernel(prog, given)
        except (MemoryFault, Trap) as e:
            where = str(e.ins.span) if e.ins is not None and e.ins.span is not None else "?"
            same = any(s.ptx == where for s in f.sites)
            return same, f"the emulator stops with '{e.message}' at {where}"
        except ExecError as e:
            return False, f"the emulator stops otherwise: {e}"
        return False, "the emulator runs the witness input to the end"
    r = new_run(prog, given, concrete=True)
    again = record_report(r, prog, given)
    ok = any(g.key == f.key for g in again.findings)
    return ok, ("found again" if ok else "not found by the concrete replay: "
                + "; ".join(g.message[:80] for g in again.findings[:3]))


def judge(findings: list[Finding], run: CheckRun, prog: Program, launch: Launch) -> list[Judgement]:
    """Decide, for findings of the explored run that the launch's input does not reach, whether
    any input does."""
    from .paths import judge_findings

    return judge_findings(findings, run, prog, launch)


__all__ = ["confirm", "judge", "replays", "Outcome", "Judgement"]
