"""The meaning of PTX instructions, written once against the `Exec` interface (see core.py).

Handlers are registered per opcode in `HANDLERS` by the family modules imported below; each one
validates the modifiers it is given and raises `Unsupported` for anything it does not model.
Control flow and synchronisation (bra, exit, bar, mbarrier, async copies) belong to the machine
(symexec), which calls these handlers for everything else.
"""

from .core import HANDLERS, Exec, Unsupported, handler  # noqa: F401
from . import arith, conversion, logic, memory, mma, predicates, warp  # noqa: F401  (register handlers)

__all__ = ["HANDLERS", "Exec", "Unsupported", "handler"]
