"""How check mode treats guards and branches that depend on input data (a machine Policy).

A verdict must hold for every input of the launch, so whether a lane executes an instruction with
memory or synchronisation effects must not depend on tensor data; where it does, the verdict is
limited to the input explored (a note) unless the machine can cover both outcomes:
- a data-dependent choice between register-only paths (Program.region_pure): values written
  until the reconvergence point depend on data through control flow (implicit flow);
- memory effects on a data-dependent forward path that reconverges, does not exit and holds no
  barrier or warp collective (opcodes.CONVERGENT: an input may split the threads at it, which no single
  path shows): both paths
  are explored with every lane (a superset of what any input does), and the registers they write
  are data-dependent after they merge. Each such exploration is recorded (CheckState.decisions)
  with the predicate's term numbers, so that what an explored path finds can be decided for real
  inputs afterwards (symexec.check.reach); an error on an explored path (out of bounds, trap,
  undefined behaviour) is recorded as a candidate and the path goes on without the failing lanes;
- a spin-wait (a loop that only polls memory that other threads or CTAs update, e.g. the grid
  barrier of cooperative groups): its exit depends on the schedule, not on what the kernel does
  after it; followed, and named in the assumptions;
- anything else (a loop exit condition, a path that leaves the kernel): noted, and the verdict
  holds for the launch's input only (or is inconclusive when the schedule decides).

`ConcretePolicy` follows every branch as the launch's input decides (no exploration): the replay
that confirms a finding for the input, and the run behind a verdict for that input alone.
"""

from __future__ import annotations

import numpy as np

from ptx_parser import ast as A

from ..errors import ExecError
from ..machine import Batch, BranchDecision, Group, Policy, failing_lanes
from ..opcodes import Scope, register_only, strength
from ..program import written_registers
from .shadow import DATA, DEP, Choice
from .state import CheckState

#: Opcodes a spin-wait's body may hold besides register arithmetic: strong polls and back-off hints.
_SPIN_OPS = frozenset({"ld", "ldu", "nanosleep", "bra"})


class DataDependencePolicy(Policy):
    explores = True  # data-dependent forward branches with memory effects: both ways

    def __init__(self, state: CheckState) -> None:
        self.state = state
        self.loops = None  # a loops.LoopSummariser, in the symbolic grid's run
        self._choices: dict[int, tuple[frozenset[str], Choice]] = {}  # per pc: see _choice

    @property
    def watches_back_edges(self) -> bool:
        return self.loops is not None

    def on_back_edge(self, b: Batch, g: Group, ins: A.Instruction, pc: int) -> None:
        self.loops.on_back_edge(b, g, ins, pc)

    def _taint(self, b: Batch, pred: str) -> np.ndarray:
        t = self.state.tracker.reg_taint.get(pred)
        return np.broadcast_to(np.zeros((), np.uint8) if t is None else t, (b.n,))

    def on_guard(self, b: Batch, g: Group, ins: A.Instruction) -> None:
        self.state.ins = ins
        self.state.note_dependence(f"guard of {ins.name}", self._taint(b, ins.guard.pred), g.mask)

    def on_value_guard(self, b: Batch, g: Group, ins: A.Instruction, mask: np.ndarray) -> None:
        """`@p mov r, 2048` with p computed from data: on the lanes whose guard is false r keeps its
        bits, but which value it holds depends on data (an implicit flow; with the launch's input
        perhaps no lane writes). Those lanes take the guard's taint (Tracker.taint_lanes); the lanes
        that write take it through Tracker.control (CheckedExec.begin)."""
        tr = self.state.tracker
        bits = tr.guard_taint(ins.guard.pred, g.mask)
        skipped = g.mask & ~mask
        if bits and skipped.any():
            writes, choice = self._choice(b.prog, g.pc, False)
            tr.taint_lanes(writes, bits, skipped, b.regs, choice)

    def _choice(self, prog, pc: int, region: bool) -> tuple[frozenset[str], Choice]:
        """What the data-dependent choice at `pc` writes and reads: a guarded register-only
        instruction, or (region) a branch around a register-only region."""
        got = self._choices.get(pc)
        if got is None:
            pcs = sorted(prog.region_pcs(pc)) if region else [pc]
            writes = frozenset().union(*(written_registers(prog.code[n]) for n in pcs))
            seen = [prog.mentioned(prog.code[n]) for n in pcs + ([pc] if region else [])]
            reads = frozenset().union(*(r for r, _ in seen))
            got = self._choices[pc] = (writes, Choice(pc, reads, any(s for _, s in seen)))
        return got

    def on_indirect(self, b: Batch, g: Group, ins: A.Instruction, index: A.Operand) -> None:
        """A data-dependent jump-table index: the path taken depends on the input (noted; the
        targets are not explored both ways)."""
        self.state.ins = ins
        self.state.note_dependence(f"target index of {ins.name}", self.state.tracker.in_taint, g.mask)

    def on_branch(self, b: Batch, g: Group, ins: A.Instruction, dest: int) -> BranchDecision:
        taint = self._taint(b, ins.guard.pred)
        bits = int(np.bitwise_or.reduce(taint[g.mask])) if g.mask.any() else 0
        if not bits & int(DEP):
            return BranchDecision.FOLLOW
        prog = b.prog
        r = prog.reconverge.get(g.pc)
        if dest <= g.pc and not bits & int(DATA) and _spin_wait(prog, dest, g.pc):
            self.state.spin_waits.add(g.pc)
            return BranchDecision.FOLLOW
        if prog.region_pure.get(g.pc):
            g.dep |= bits
            # what the region writes depends on the choice on every lane of the group, also on lanes
            # that skip the writes (with the launch's input perhaps all of them): those keep their
            # bits, not their numbers; the lanes that write take the region's taint (Tracker.control)
            writes, choice = self._choice(prog, g.pc, True)
            self.state.tracker.taint_lanes(writes, bits & int(DEP), g.mask, b.regs, choice)
            return BranchDecision.REGISTER_REGION
        # explore both ways while that can still prove the kernel for every input (nothing else
        # depends on data so far); the launch's input decides the rest. Not around a barrier: both
        # ways with every lane covers each lane's choice, not an input that splits the threads between
        # the two paths, whose barrier then misses arrivals (divergence of an .aligned bar.sync,
        # 9.7.13.1; a barrier or mbarrier phase that never completes) or whose warp collective runs
        # with part of its membermask (shfl.sync 9.7.8.6, vote/match/redux.sync 9.7.13.10-13)
        if self.explores and r is not None and dest > g.pc and not prog.region_exits.get(g.pc) \
                and not prog.region_convergent.get(g.pc) and not self.state.data_dependent:
            self.state.both_paths += 1
            g.dep |= bits
            return BranchDecision.BOTH_PATHS
        self.state.ins = ins
        why = "loop exit condition" if dest <= g.pc else "branch condition"
        self.state.note_dependence(f"{why} of {ins.name}", taint, g.mask)
        if g.explore > 0:
            # on an explored path the registers hold the launch's values, which need not fit the
            # path: a loop there may run for ever, and the run can no longer prove every input
            raise ExplorationStopped(f"{why} of {ins.name} depends on input data on a path explored for "
                                     "another data-dependent branch", ins)
        return BranchDecision.FOLLOW

    def explored(self, b: Batch, g: Group, ins: A.Instruction) -> tuple[int, np.ndarray]:
        pred = b.regs.get(ins.guard.pred, np.zeros((), bool))
        both = (self._taint(b, ins.guard.pred) & DEP) != 0  # the others cannot choose otherwise
        return self.state.record_decision(ins, g.pc, g.mask, pred), both

    def on_error(self, b: Batch, g: Group | None, err: Exception) -> bool:
        if g is None or g.explore <= 0:
            return False
        lanes = np.nonzero(failing_lanes(err, b.n) & g.mask)[0]
        self.state.record_candidate(err, lanes, g.path)
        return True


class ExplorationStopped(ExecError):
    """A run that explores data-dependent branches met something it cannot explore (see on_branch)."""


class ConcretePolicy(DataDependencePolicy):
    """Follow every branch as the launch's input decides; note what depends on it."""

    explores = False


def _spin_wait(prog, head: int, tail: int) -> bool:
    """Is the loop closed by tail -> head (its whole body, wherever laid out) a spin-wait: register
    arithmetic, strong loads (polls another thread's or CTA's store may change, PTX 8.4) and back-off
    hints, nothing else?"""
    polls = 0
    for ins in (prog.code[i] for i in prog.loop_body(head, tail)):
        if register_only(ins.opcode):
            continue
        if ins.opcode not in _SPIN_OPS:
            return False
        if ins.opcode in ("ld", "ldu"):
            if strength(ins) is Scope.NONE:
                return False
            polls += 1
    return polls > 0


__all__ = ["DataDependencePolicy", "ConcretePolicy", "ExplorationStopped"]
