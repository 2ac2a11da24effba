"""The instruction context of check mode: a GroupExec that feeds the value shadows (shadow.py).

Every operand read and register write is shown to the batch's `Tracker`, so each value carries
its taint (does it depend on input data?) and its term numbers beside its bits (the idea of
Alive2's StateValue: a value and what is known about it travel together). Addresses computed from
data are noted as data dependences of the verdict.
"""

from __future__ import annotations

import functools

import numpy as np

from ptx_parser import ast as A

from ..execctx import GroupExec
from ..opcodes import register_only
from .shadow import DATA
from .state import CheckState


class CheckedExec(GroupExec):
    #: elect.sync elects the highest active lane (the manual leaves the leader open, 9.7.13.14): a
    #: kernel that relies on lane 0 being elected is not proved by the emulator's choice
    elect_highest = True

    def __init__(self, batch, state: CheckState) -> None:
        super().__init__(batch)
        self.state = state

    @property
    def tracker(self):
        return self.state.tracker

    def begin(self, mask: np.ndarray, ins: A.Instruction) -> None:
        super().begin(mask, ins)
        tr = self.state.tracker
        g = self.group
        if g is not None:
            dep = np.uint8(g.dep or DATA)
            tr.control = dep if g.ctl else np.uint8(0)  # inside a data-dependent register-only region
            tr.explore = dep if g.explore > 0 else np.uint8(0)  # on one of two explored paths
            self.state.path = g.path
        self.state.begin(ins, self.pc)
        if g is not None and ins.guard is not None and self._value_guard(ins):
            # `@p mov r, 2048` with p computed from data: the value written depends on data though
            # the operands do not (an implicit flow); the lanes whose guard is false: policy.on_value_guard
            tr.control = np.uint8(tr.control | tr.guard_taint(ins.guard.pred, g.mask))

    @staticmethod
    @functools.cache
    def _value_guard(ins: A.Instruction) -> bool:
        """A guarded register-only instruction (its guard chooses a value, not an effect)."""
        return ins.opcode != "bra" and register_only(ins.opcode)

    def _save(self) -> tuple:
        st = self.state
        return super()._save(), (st.ins, st.pc, st.path, st.tracker.save())

    def _restore(self, saved: tuple) -> None:
        mine, (ins, pc, path, tracked) = saved
        super()._restore(mine)
        st = self.state
        st.ins, st.pc, st.path = ins, pc, path
        st.tracker.restore(tracked)

    # ------------------------------------------------------------------ hooks
    def _on_read_reg(self, name: str, value: np.ndarray, width: int) -> None:
        self.state.tracker.on_read_reg(name, value, width)

    def _on_write_reg(self, name: str, value: np.ndarray, width: int) -> None:
        self.state.tracker.on_write_reg(name, value, width, self.mask, self.full,
                                        None if self.full else self.b.regs.get(name))

    def _on_read_const(self, value: np.ndarray, width: int) -> None:
        self.state.tracker.on_read_const(value, width)

    def _on_read_volatile(self, value: np.ndarray, width: int) -> None:
        self.state.tracker.on_read_volatile(value, width)

    def _read_base(self, op: A.Sym) -> np.ndarray:
        tr = self.state.tracker
        tr.address_mode = True
        try:
            base = super()._read_base(op)
        finally:
            tr.address_mode = False
        self.state.note_dependence(f"address of {self.ins.name if self.ins else '?'}", tr.addr_taint, self.mask)
        return base

    def lane_source(self, src: np.ndarray) -> None:
        self.state.tracker.permute = src

    def store_sources(self, lane: np.ndarray, reg: np.ndarray, byte: np.ndarray) -> None:
        self.state.tracker.store_map = (lane, reg, byte)
