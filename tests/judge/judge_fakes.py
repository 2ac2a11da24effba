"""Fakes of the GPU side for the harness tests: a Device whose kernels are Python functions over its
memory, and a Clock/Side pair that simulates launch durations. They exercise the harness's own
logic (guard bands, sentinels, hashes, alternation, L2 flushes, roofline, wall clock) without a GPU."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from harness.judge.device import KernelCode, KernelLaunch, LaunchFailure, Ptr


class FakeDevice:
    """Allocations are numpy byte arrays; ``kernel(device, launch)`` is the "GPU code". ``stale``: new
    allocations start with these bytes (memory a previous run left behind)."""

    name = "fake-gpu"

    def __init__(self, kernel: Callable[["FakeDevice", KernelLaunch], None], stale: bytes | None = None) -> None:
        self.kernel, self.stale = kernel, stale
        self.memory: dict[int, np.ndarray] = {}
        self.calls: list[str] = []
        self.launches = 0
        self.lost = False

    def load(self, code: KernelCode) -> Any:
        self.calls.append("load")
        return code

    def alloc(self, nbytes: int) -> int:
        assert not self.lost, "device call after a sticky fault"
        self.calls.append("alloc")
        h = len(self.memory) + 100 * self.launches
        buf = np.zeros(nbytes, np.uint8)
        if self.stale is not None:
            raw = np.frombuffer(self.stale, np.uint8)
            buf[:min(nbytes, raw.size)] = raw[:nbytes]
        self.memory[h] = buf
        return h

    def upload(self, alloc: int, data: np.ndarray) -> None:
        assert not self.lost
        self.calls.append("upload")
        self.memory[alloc][:] = np.frombuffer(np.ascontiguousarray(data).tobytes(), np.uint8)

    def download(self, alloc: int) -> np.ndarray:
        assert not self.lost
        self.calls.append("download")
        return self.memory[alloc].copy()

    def launch(self, kernel: Any, launch: KernelLaunch) -> None:
        assert not self.lost
        self.calls.append("launch")
        self.launches += 1
        try:
            self.kernel(self, launch)
        except LaunchFailure as e:
            self.lost = e.sticky
            raise

    def free_all(self) -> None:
        assert not self.lost
        self.memory.clear()

    # helpers for fake kernels
    def view(self, p: Ptr, dtype: Any, count: int) -> np.ndarray:
        raw = self.memory[p.alloc]
        return raw[p.offset:p.offset + count * np.dtype(dtype).itemsize].view(dtype)


def relu_kernel(dev: FakeDevice, launch: KernelLaunch, *, skip: int | None = None, overrun: int = 0,
                write_input: bool = False) -> None:
    """ReLU over params (x, y, n) with optional misbehaviour."""
    x_ptr, y_ptr, n = launch.params[0], launch.params[1], int(launch.params[2])
    x = dev.view(x_ptr, np.float32, n).copy()
    y = dev.view(y_ptr, np.float32, n + overrun) if overrun else dev.view(y_ptr, np.float32, n)
    out = np.where(x < 0, np.float32(0), x)
    if overrun:
        y[:n] = out
        y[n:] = 1.0
    elif skip is not None:
        keep = np.ones(n, bool)
        keep[skip] = False
        y[keep] = out[keep]
    else:
        y[:] = out
    if write_input:
        dev.view(x_ptr, np.float32, n)[:] = out


def rowsum_kernel(dev: FakeDevice, launch: KernelLaunch) -> None:
    """Row sums over params (x, y, N), one row per program, summed in an order that alternates
    between launches (a reduction order that depends on the schedule)."""
    x_ptr, y_ptr, n = launch.params[0], launch.params[1], int(launch.params[2])
    m = launch.grid[0]
    x = dev.view(x_ptr, np.float32, m * n).reshape(m, n)
    order = slice(None) if dev.launches % 2 else slice(None, None, -1)
    acc = np.zeros(m, np.float32)
    for col in x.T[order]:
        acc = (acc + col).astype(np.float32)
    dev.view(y_ptr, np.float32, m)[:] = acc


@dataclass
class FakeSide:
    """A kernel of ``ms`` milliseconds (plus ``jitter`` from a seeded generator); ``deferred``: work
    the events do not see but the wall clock does."""

    name: str
    ms: float
    clock: "FakeClock"
    sets: int = 3
    jitter: float = 0.0
    deferred: float = 0.0
    indices: list[int] = field(default_factory=list)

    def launch(self, index: int) -> None:
        self.indices.append(index)
        d = self.ms + (self.clock.rng.normal(0, self.jitter) if self.jitter else 0.0)
        self.clock.log.append(("launch", self.name, index))
        self.clock.pending += max(d, 1e-6)
        self.clock.hidden += self.deferred


class FakeClock:
    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.t = 0.0  # wall seconds
        self.pending = 0.0  # ms launched since start()
        self.hidden = 0.0
        self.log: list[tuple] = []
        self._elapsed = 0.0

    def flush_l2(self) -> None:
        self.log.append(("flush",))

    def start(self) -> None:
        self.pending = self.hidden = 0.0
        self.log.append(("start",))

    def stop(self) -> None:
        self._elapsed = self.pending
        self.log.append(("stop",))

    def sync(self) -> None:
        self.t += (self.pending + self.hidden) / 1e3 + 5e-6
        self.pending = self.hidden = 0.0

    def elapsed_ms(self) -> float:
        return self._elapsed

    def now(self) -> float:
        return self.t


class FakeWorker:
    """A GPU worker without a GPU, for harness.judge.worker.serve in a real child process."""

    def __init__(self) -> None:
        self.calls = 0

    def info(self) -> dict:
        return {"device": "fake", "capability": 90}

    def echo(self, x):
        self.calls += 1
        return (x, self.calls)

    def fail(self):
        raise RuntimeError("harness bug")

    def fault(self):
        from harness.judge.device import LaunchFailure
        from harness.judge.report import Reason

        raise LaunchFailure(Reason.MEMORY_FAULT, "CUDA_ERROR_ILLEGAL_ADDRESS", sticky=True)

    def hang(self):
        import time

        time.sleep(60)

    def numeric(self, request, trials):
        raise RuntimeError("compile failed")
