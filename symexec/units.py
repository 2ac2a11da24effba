"""Asynchronous units of the machine and the one API they register through.

A unit (cp.async and bulk copies, mbarriers, wgmma, the tcgen05 tensor core, ...) owns some
opcodes and per-batch state. It registers with `register_unit(Unit(...))` when its module is
imported; the machine looks handlers up here and never imports a unit. symexec's own units are
registered by the package (symexec/__init__.py); units of higher layers (tcgen05/) register
themselves when their package is imported.

A machine-level handler is called as fn(machine, batch, group, ins, mask), `mask` being the
group's lanes with the guard applied. It returns True when the group goes on (it must then have
advanced group.pc) or False when the group blocked, split or finished. Per-batch state lives in
`batch.unit(name, factory)`; it subclasses `UnitState` to hear of exiting threads and of the end of
the batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import numpy as np

from ptx_parser import ast as A

if TYPE_CHECKING:  # pragma: no cover
    from .machine import Batch, Group, Machine

MachineHandler = Callable[["Machine", "Batch", "Group", A.Instruction, np.ndarray], bool]


class UnitState:
    """Per-batch state of a unit (created by `batch.unit(name, factory)`)."""

    def on_exit(self, batch: "Batch", exiting: np.ndarray) -> None:
        """Threads `exiting` leave the kernel (their pending work may still complete)."""

    def finish(self, batch: "Batch") -> None:
        """The batch has finished: end-of-kernel obligations (deallocation, pending stores)."""

    def loop_state(self, canon) -> object | None:
        """The unit's state in the canonical form loop summaries compare at loop heads
        (symexec.check.loops.Canon, passed as `canon` for its helpers: ranked clocks of operations in
        flight, value numbers of memory), or None when the unit does not give one: a loop with such
        state at its head is never summarised."""
        return None

    def loop_watches(self, batch: "Batch") -> set[str]:
        """Registers of `batch.reg_watch` this unit watches whose pending state `loop_state` covers."""
        return set()


@dataclass(frozen=True)
class Unit:
    name: str
    handlers: dict[str, MachineHandler]  # opcode -> handler
    doc: str = ""


_UNITS: dict[str, Unit] = {}
_HANDLERS: dict[str, MachineHandler] = {}


def register_unit(unit: Unit) -> None:
    """Make `unit`'s opcodes run through its handlers (registering the same unit again is a no-op;
    two units claiming one opcode is an error)."""
    old = _UNITS.get(unit.name)
    if old is not None:
        for op in old.handlers:
            _HANDLERS.pop(op, None)
    for op in unit.handlers:
        owner = next((u.name for u in _UNITS.values() if op in u.handlers and u.name != unit.name), None)
        if owner is not None:
            raise ValueError(f"opcode {op!r} is already handled by unit {owner!r}")
    _UNITS[unit.name] = unit
    _HANDLERS.update(unit.handlers)


def handler(opcode: str) -> MachineHandler | None:
    return _HANDLERS.get(opcode)


def registered() -> dict[str, Unit]:
    return dict(_UNITS)
