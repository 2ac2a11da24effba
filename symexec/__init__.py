"""The machine: launch a kernel over a grid and run it (concrete values today).

    >>> from symexec import load_program, Launch, run_kernel
    >>> prog = load_program(parse(text))
    >>> glob, addrs, stats = run_kernel(prog, Launch(grid=(4,), block=(128,), buffers=..., params=[...]))
"""

from .errors import Deadlock, ExecError, MemoryFault, TimeLimit, UndefinedBehavior, Unsupported
from .launch import Launch, LaunchError, load_launch_spec
from .machine import Machine, run_kernel, time_limit
from .program import Program, load_program

__all__ = ["Launch", "LaunchError", "load_launch_spec", "Machine", "run_kernel", "time_limit", "Program", "load_program",
           "ExecError", "TimeLimit", "Unsupported", "MemoryFault", "Deadlock", "UndefinedBehavior"]
