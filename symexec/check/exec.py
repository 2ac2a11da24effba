"""The instruction context of check mode: a GroupExec that feeds the value shadows (shadow.py).

Every operand read and register write is shown to the batch's `Tracker`, so each value carries
its taint (does it depend on input data?) and its term numbers beside its bits (the idea of
Alive2's StateValue: a value and what is known about it travel together). Addresses computed from
data are noted as data dependences of the verdict.
"""

from __future__ import annotations

import numpy as np

from ptx_parser import ast as A

from ..execctx import GroupExec
from .shadow import DATA, STALE, some
from .state import CheckState

# ---------------------------------------------------------------------------------- the STALE audit
# A value carrying STALE (shadow.py) was read from memory after a loop summary skipped iterations that write
# global memory (state.py `SkippedWrites`): its bits may not be its value. The run stays sound only while no
# such bits decide anything the checker concludes from: it may flow only where an explicit allow-list says the
# bits are moved or combined lane by lane into other values that are themselves STALE (the tracker unions the
# inputs' taints into every result, shadow.py `_result`), and any other use voids the run's summaries
# (CheckState.void; the run is made again without them, grid.py `_represent`).

#: lane-local arithmetic (9.7.1-9.7.8 integer, floating-point, comparison, logic, data movement and
#: conversion): each lane's results are a function of its own operands, and faults on no value. Integer div
#: and rem (a divisor of 0) are not, nor carry-chain forms (`.cc`, addc/subc/madc: a carry flag the shadows
#: do not follow), nor cvta (its result is an address).
_LANE_ARITHMETIC = frozenset({
    "add", "sub", "mul", "mad", "fma", "mul24", "mad24", "sad", "abs", "neg", "min", "max", "and", "or", "xor",
    "not", "cnot", "lop3", "shl", "shr", "shf", "bfe", "bfi", "brev", "popc", "clz", "bfind", "fns", "prmt",
    "bmsk", "szext", "dp4a", "dp2a", "mov", "cvt", "selp", "slct", "setp", "set", "testp", "copysign", "rcp",
    "sqrt", "rsqrt", "sin", "cos", "lg2", "ex2", "tanh", "div"})
_CARRY = frozenset({"addc", "subc", "madc"})


def moves_value(ins: A.Instruction) -> tuple[int, ...] | None:
    """The operand positions of `ins` that may carry STALE, None when none may (the `moves_value` table):
    every source of lane-local arithmetic (`_LANE_ARITHMETIC`; float div only), the data operand of a plain
    st (9.7.9.10: its bits land in memory, whose shadow carries the taint), the value a shfl.sync moves
    (9.7.9.6: operand a; its lane, clamp and member mask choose). The guard of an instruction is never one
    (a guarded `mov idx, 2048` chooses a value by the predicate's bits), nor is an address, a branch
    condition or index, a barrier id or count, an atomic's operand, an mbarrier's or a copy's operand."""
    op, mods, n = ins.opcode, ins.modifiers, len(ins.operands)
    if op in _LANE_ARITHMETIC and ".cc" not in mods and op not in _CARRY:
        if op == "div" and not any(t.startswith(".f") for t in ins.types):
            return None
        return tuple(range(1, n))
    if op == "st" and n == 2 and not (mods & {".volatile", ".relaxed", ".release", ".mmio", ".async", ".bulk"}):
        return (1,)
    if op == "shfl" and n >= 2:
        return (1,)
    return None


#: instructions whose first operand is a destination only (never read): not audited
_DEST_FIRST = _LANE_ARITHMETIC | frozenset({"ld", "ldu", "shfl"})


def _audited(ins: A.Instruction, prog) -> tuple[str, ...]:
    """The registers `ins` reads whose STALE taint voids the run's summaries (every read register but the
    positions `moves_value` allows; the guard always)."""
    from .loops import _regs_in  # the liveness helpers name every register of an operand

    allowed = moves_value(ins) or ()
    skip_dest = ins.opcode in _DEST_FIRST and ins.operands and not isinstance(ins.operands[0], A.Address)
    names: set[str] = set()
    for i, o in enumerate(ins.operands):
        if i in allowed or (i == 0 and skip_dest):
            continue
        names |= _regs_in(o, prog)
    if ins.guard is not None:
        names.add(ins.guard.pred)
    return tuple(sorted(names))


def stale_use(ins: A.Instruction, prog, tracker, mask: np.ndarray, cache: dict) -> str | None:
    """Why `ins` on lanes `mask` uses a STALE value where its bits matter, or None."""
    names = cache.get(id(ins))
    if names is None or names[0] is not ins:
        names = cache[id(ins)] = (ins, _audited(ins, prog))
    for name in names[1]:
        t = tracker.reg_taint.get(name)
        if t is None:
            continue
        bad = np.asarray(t) & STALE
        if not some(bad):
            continue
        if np.ndim(bad) == 0 or some(np.broadcast_to(bad, mask.shape)[mask]):
            guard = ins.guard is not None and name == ins.guard.pred
            return (f"{ins.name} at {ins.span} uses {name}, a value read after a loop summary skipped global "
                    f"writes (its bits may not be its value), as {'its guard' if guard else 'an operand whose bits matter'}")
    return None


#: no taint (np.uint8(0), immutable: one object for every instruction)
_NO_TAINT = np.uint8(0)


class CheckedExec(GroupExec):
    #: elect.sync elects the highest active lane (the manual leaves the leader open, 9.7.13.14): a
    #: kernel that relies on lane 0 being elected is not proved by the emulator's choice
    elect_highest = True

    def __init__(self, batch, state: CheckState) -> None:
        super().__init__(batch)
        self.state = state
        self._audit: dict = {}  # instruction -> the registers `stale_use` tests

    @property
    def tracker(self):
        return self.state.tracker

    def begin(self, mask: np.ndarray, ins: A.Instruction) -> None:
        super().begin(mask, ins)
        st = self.state
        tr = st.tracker
        g = self.group
        if g is not None:
            if g.ctl or g.explore > 0:
                dep = np.uint8(g.dep or DATA)
                tr.control = dep if g.ctl else _NO_TAINT  # inside a data-dependent register-only region
                tr.explore = dep if g.explore > 0 else _NO_TAINT  # on one of two explored paths
            else:  # (the common case: no numpy scalar made per instruction)
                tr.control = tr.explore = _NO_TAINT
            st.path = g.path
        st.begin(ins, self.pc)
        if g is not None and tr.plan.value_guarded:  # (value_guarded(ins), decided once per instruction)
            # `@p mov r, 2048` with p computed from data: the value written depends on data though
            # the operands do not (an implicit flow); the lanes whose guard is false: policy.on_value_guard
            tr.control = np.uint8(tr.control | tr.guard_taint(ins.guard.pred, g.mask))

    @property
    def audits(self) -> bool:
        """The STALE audit runs once a loop summary skipped global writes, until the run's summaries are void."""
        st = self.state
        return st.stale_reads and st.footprint_hit is None

    def audit(self, g, ins: A.Instruction) -> None:
        """Every instruction, before its guard is read (a guard false on every lane still chose): `stale_use`
        on the group's lanes; a STALE value where its bits matter voids the run's summaries."""
        st = self.state
        why = stale_use(ins, self.b.prog, st.tracker, g.mask, self._audit)
        if why is not None:
            st.void(why)

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
