"""The progress line of long runs, and the memory ceiling.

On a terminal (stderr), `volta check` and `volta run` show for the file being checked: CTAs done of
the machine's total, instructions per second (per thread: a warp's instruction counts 32), the
process's resident memory, and the time left at that rate. In a pipe or with `--quiet` nothing is
shown. The machine reports through `symexec.run_limits(progress=...)`.

`--max-memory` is a ceiling on the process: the machine samples its resident memory (as it does its
clock) and stops with `inconclusive: memory limit ...`; an allocation that would pass the ceiling
at once (a launch's buffers, the race search's tables) fails against an address-space limit set
just above it and ends the same way.
"""

from __future__ import annotations

import re
import resource
import time
from contextlib import contextmanager

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from symexec.machine import Progress as MachineProgress


def _mib(n: float) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"


def _rate(x: float) -> str:
    for unit, scale in (("M", 1e6), ("k", 1e3)):
        if x >= scale:
            return f"{x / scale:.1f}{unit}"
    return f"{x:.0f}"


class RunProgress:
    """One rich progress bar on stderr, re-used for each file; disabled off a terminal."""

    def __init__(self, console: Console, enabled: bool) -> None:
        self.enabled = enabled and console.is_terminal
        self.bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TextColumn("CTAs  {task.fields[rate]} instr/s  {task.fields[mem]}"),
                            TimeRemainingColumn(), console=console, transient=True, disable=not self.enabled,
                            refresh_per_second=4)
        self.task = None

    def __enter__(self) -> "RunProgress":
        self.bar.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.bar.__exit__(*exc)

    def start(self, label: str):
        """The callback for the machines of one file (None when nothing is shown)."""
        if not self.enabled:
            return None
        if self.task is not None:
            self.bar.remove_task(self.task)
        self.task = self.bar.add_task(label, total=None, rate="-", mem="-")
        last = {"t": time.monotonic(), "done": 0, "rate": 0.0}

        def update(p: MachineProgress) -> None:
            now = time.monotonic()
            done = p.thread_instructions
            if done < last["done"]:  # a new machine (the symbolic grid's CTAs, then a fallback)
                last.update(t=now, done=0)
            dt = now - last["t"]
            if dt > 0.2:
                last.update(rate=(done - last["done"]) / dt, t=now, done=done)
            self.bar.update(self.task, completed=p.ctas_done, total=p.ctas_total, rate=_rate(last["rate"]),
                            mem=_mib(p.rss))

        return update


# ---------------------------------------------------------------- memory
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.I)


class MemorySize(click.ParamType):
    """A byte count: 8G, 500M, 1.5GiB, 123456 (bytes)."""

    name = "size"

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value
        m = _SIZE.match(str(value))
        if m is None:
            self.fail(f"{value!r} is not a size (e.g. 8G, 500M, 123456)", param, ctx)
        n = float(m.group(1)) * 1024 ** " kmgt".index(m.group(2).lower() or " ")
        if n < 64 * 2**20:
            self.fail(f"{value!r}: at least 64M (the interpreter alone takes about 100M)", param, ctx)
        return int(n)


def _vm_bytes() -> int:
    try:
        with open("/proc/self/statm", "rb") as f:
            import os

            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


@contextmanager
def address_space_ceiling(max_rss: int | None):
    """While inside, allocations fail with MemoryError once the process's address space grows by
    more than `max_rss` bytes beyond what it has now (a backstop to the machine's RSS samples for
    allocations made at once). Restored on exit. Linux only; elsewhere nothing is set."""
    vm = _vm_bytes()
    if max_rss is None or not vm:
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    want = vm + max_rss
    if hard != resource.RLIM_INFINITY:
        want = min(want, hard)
    if soft != resource.RLIM_INFINITY and soft <= want:
        yield
        return
    resource.setrlimit(resource.RLIMIT_AS, (want, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


__all__ = ["RunProgress", "MemorySize", "address_space_ceiling"]
