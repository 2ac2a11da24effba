"""The machine: launch a kernel over a grid and run it.

    >>> from symexec import load_program, Launch, run_kernel
    >>> prog = load_program(parse(text))
    >>> glob, addrs, stats = run_kernel(prog, Launch(grid=(4,), block=(128,), buffers=..., params=[...]))

The machine emits typed events (symexec.events) to observers; check mode (symexec.check) is one.
Asynchronous units register their opcodes through symexec.units; the ones of this package are
registered here, tcgen05's when the `tcgen05` package is imported.
"""

from . import async_copy as _async_copy
from . import calls as _calls
from . import mbarrier as _mbarrier
from . import tma as _tma
from . import wgmma as _wgmma
from .errors import Deadlock, ExecError, MemoryFault, MemoryLimit, TimeLimit, Trap, UndefinedBehavior, Unsupported
from .events import Observer
from .launch import Launch, LaunchError, load_launch_spec
from .machine import Machine, Progress, check_time_limit, rss_bytes, run_kernel, run_limits, time_limit
from .program import Program, load_program
from .units import Unit, UnitState, register_unit

for _u in (_mbarrier.UNIT, _async_copy.UNIT, _wgmma.UNIT, _tma.UNIT, _calls.UNIT):
    register_unit(_u)

__all__ = ["Launch", "LaunchError", "load_launch_spec", "Machine", "run_kernel", "time_limit", "run_limits",
           "check_time_limit", "Progress",
           "rss_bytes", "Program", "load_program", "ExecError", "TimeLimit", "MemoryLimit", "Trap", "Unsupported",
           "MemoryFault", "Deadlock", "UndefinedBehavior", "Observer",
           "Unit", "UnitState", "register_unit"]
