"""How check mode treats guards and branches that depend on input data (a machine Policy).

A verdict must hold for every input of the launch, so whether a lane executes an instruction with
memory or synchronisation effects must not depend on tensor data; where it does, the verdict is
limited to the input explored (a note, then `inconclusive`) unless the machine can cover both
outcomes:
- a data-dependent choice between register-only paths (Program.region_pure): values written
  until the reconvergence point depend on data through control flow (implicit flow);
- memory effects on a data-dependent forward path that reconverges and does not exit: both paths
  are explored with every lane (a superset of what any input does), and the registers they write
  are data-dependent after they merge;
- anything else (a loop exit condition, a path that leaves the kernel): noted, inconclusive.
"""

from __future__ import annotations

import numpy as np

from ptx_parser import ast as A

from ..machine import Batch, BranchDecision, Group, Policy
from .shadow import DATA
from .state import CheckState


class DataDependencePolicy(Policy):
    def __init__(self, state: CheckState) -> None:
        self.state = state

    def _taint(self, b: Batch, pred: str) -> np.ndarray:
        return np.broadcast_to(self.state.tracker.reg_taint.get(pred, np.zeros((), np.uint8)), (b.n,))

    def on_guard(self, b: Batch, g: Group, ins: A.Instruction) -> None:
        self.state.ins = ins
        self.state.note_dependence(f"guard of {ins.name}", self._taint(b, ins.guard.pred), g.mask)

    def on_indirect(self, b: Batch, g: Group, ins: A.Instruction, index: A.Operand) -> None:
        """A data-dependent jump-table index: the path taken depends on the input (noted; the
        targets are not explored both ways)."""
        self.state.ins = ins
        self.state.note_dependence(f"target index of {ins.name}", self.state.tracker.in_taint, g.mask)

    def on_branch(self, b: Batch, g: Group, ins: A.Instruction, dest: int) -> BranchDecision:
        taint = self._taint(b, ins.guard.pred)
        if not ((taint & DATA) != 0)[g.mask].any():
            return BranchDecision.FOLLOW
        prog = b.prog
        r = prog.reconverge.get(g.pc)
        if prog.region_pure.get(g.pc):
            return BranchDecision.REGISTER_REGION
        if r is not None and dest > g.pc and not prog.region_exits.get(g.pc):
            self.state.both_paths += 1
            return BranchDecision.BOTH_PATHS
        self.state.ins = ins
        why = "loop exit condition" if dest <= g.pc else "branch condition"
        self.state.note_dependence(f"{why} of {ins.name}", taint, g.mask)
        return BranchDecision.FOLLOW
