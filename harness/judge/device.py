"""Where a candidate runs: the :class:`Device` interface the numeric test is written against.

The harness owns every allocation and every launch: a device hands out numbered allocations of
bytes, copies whole allocations in and out, and launches one kernel with a :class:`KernelLaunch`
whose pointer parameters are :class:`Ptr` (an allocation and a byte offset into it) and whose
tensor maps name an allocation (:func:`alloc_name`). Two devices implement it: the CPU emulator
(:class:`EmulatorDevice`, here) and a CUDA GPU through cuda-python (harness.judge.cuda); tests
add fakes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from .report import Reason


@dataclass(frozen=True)
class Ptr:
    """A device address: byte ``offset`` into allocation ``alloc``."""

    alloc: int
    offset: int = 0


def alloc_name(alloc: int) -> str:
    """The buffer name a tensor map (symexec.tensormap.TensorMap.buffer) uses for an allocation."""
    return f"a{alloc}"


def alloc_of(name: str) -> int:
    return int(name[1:])


@dataclass
class KernelLaunch:
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    dynamic_shared: int
    #: one value per .param of the kernel: int, {"float": x}, Ptr, or a TensorMap naming an allocation
    params: list[Any] = field(default_factory=list)


@dataclass(frozen=True)
class KernelCode:
    """A candidate as a device loads it: the PTX (the emulator runs it), the cubin ptxas made of it
    (a GPU runs that) and the entry."""

    ptx: str
    cubin: bytes
    entry: str
    name: str = "candidate.ptx"


class LaunchFailure(Exception):
    """The launch did not complete: ``reason`` MEMORY_FAULT or LAUNCH_FAILED (the candidate's fault),
    or None when the device could not decide (an instruction the emulator does not model, a time
    limit). ``sticky``: the device is unusable afterwards (a GPU context after a fault)."""

    def __init__(self, reason: Reason | None, message: str, where: str | None = None, sticky: bool = False) -> None:
        super().__init__(message)
        self.reason, self.message, self.where, self.sticky = reason, message, where, sticky


class Device(Protocol):
    name: str

    def load(self, code: KernelCode) -> Any: ...

    def alloc(self, nbytes: int) -> int: ...

    def upload(self, alloc: int, data: np.ndarray) -> None: ...

    def download(self, alloc: int) -> np.ndarray: ...

    def launch(self, kernel: Any, launch: KernelLaunch) -> None: ...

    def free_all(self) -> None: ...


class EmulatorDevice:
    """The CPU emulator (symexec) as a device: allocations are host byte arrays, each a buffer of
    the launch (symexec faults on any access outside them)."""

    name = "cpu-emulator"

    def __init__(self, time_limit: float = 300.0) -> None:
        self.time_limit = time_limit
        self.memory: dict[int, np.ndarray] = {}

    def load(self, code: KernelCode) -> Any:
        import ptx_parser
        import tcgen05  # noqa: F401  (plugs the tensor-core unit into the machine)
        from symexec import Unsupported, load_program

        try:
            return load_program(ptx_parser.parse(code.ptx, code.name), code.entry)
        except Unsupported as e:
            raise LaunchFailure(None, f"the emulator cannot load the kernel: {e}") from None

    def alloc(self, nbytes: int) -> int:
        handle = len(self.memory)
        self.memory[handle] = np.zeros(nbytes, np.uint8)
        return handle

    def upload(self, alloc: int, data: np.ndarray) -> None:
        buf = self.memory[alloc]
        buf[:] = np.frombuffer(np.ascontiguousarray(data).tobytes(), np.uint8)

    def download(self, alloc: int) -> np.ndarray:
        return self.memory[alloc].copy()

    def launch(self, kernel: Any, launch: KernelLaunch) -> None:
        from symexec import (Deadlock, ExecError, Launch, LaunchError, MemoryFault, TimeLimit, Unsupported,
                             run_kernel, time_limit)

        params = [{"buffer": alloc_name(p.alloc), "offset": p.offset} if isinstance(p, Ptr) else p
                  for p in launch.params]
        buffers = {alloc_name(i): arr for i, arr in self.memory.items()}
        try:
            spec = Launch(launch.grid, launch.block, buffers, params, dynamic_shared_bytes=launch.dynamic_shared,
                          kernel=kernel.function.name)
            with time_limit(self.time_limit):
                glob, _, _ = run_kernel(kernel, spec)
        except MemoryFault as e:
            raise LaunchFailure(Reason.MEMORY_FAULT, e.message, _span(e)) from None
        except (Unsupported, TimeLimit) as e:
            raise LaunchFailure(None, str(e), _span(e)) from None
        except Deadlock as e:
            raise LaunchFailure(Reason.LAUNCH_FAILED, f"deadlock: {e.message}", _span(e)) from None
        except (ExecError, LaunchError) as e:
            raise LaunchFailure(Reason.LAUNCH_FAILED, getattr(e, "message", str(e)), _span(e)) from None
        for i in self.memory:
            self.memory[i] = glob.by_name(alloc_name(i)).data.copy()

    def free_all(self) -> None:
        self.memory.clear()


def _span(e: Exception) -> str | None:
    ins = getattr(e, "ins", None)
    return str(ins.span) if ins is not None and ins.span is not None else None
