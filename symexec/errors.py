"""What the executor reports when it cannot, or must not, go on."""

from __future__ import annotations

from ptx_parser import ast as A
from semantics.errors import ExecError, UndefinedBehavior, Unsupported, where

__all__ = ["ExecError", "Unsupported", "UndefinedBehavior", "MemoryFault", "Deadlock", "TimeLimit", "MemoryLimit",
           "Trap", "where"]


class MemoryFault(ExecError):
    """An access outside every allocation/window (out of bounds) or misaligned."""

    def __init__(self, message: str, ins: A.Instruction | None, lanes: list[int], addresses: list[int],
                 space: str) -> None:
        super().__init__(message, ins)
        self.lanes, self.addresses, self.space = lanes, addresses, space
        self.all_lanes: list[int] = list(lanes)  # every failing lane (lanes: the first few, for witnesses)

    def __str__(self) -> str:
        return f"{self.message} at {where(self.ins)}"


class Deadlock(ExecError):
    """No thread group can make progress while some still wait."""


class TimeLimit(ExecError):
    """The emulation ran past its time limit (symexec.machine.time_limit): nothing decided."""


class MemoryLimit(ExecError):
    """The process's resident memory passed the run_limits() ceiling (symexec.machine): nothing decided."""


class Trap(ExecError):
    """Threads executed `trap` (PTX 9.7.19.4: abort execution and signal the host) or a call that
    traps (`__assertfail`): the launch fails. `lanes` are batch lanes that trapped."""

    def __init__(self, message: str, ins: A.Instruction | None, lanes: list[int]) -> None:
        super().__init__(message, ins)
        self.lanes = lanes
