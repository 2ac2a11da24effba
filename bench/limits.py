"""Run one command under a wall-clock limit and an address-space cap, and measure it.

Used by bench/verify.py for both tools (volta check in a child of ours, SentryWard's CLI), so the
time and memory of each are measured the same way:

- the cap is ``RLIMIT_AS`` set in the child before exec (inherited by its own children); Linux
  does not enforce ``RLIMIT_RSS``, so the address space is what can be capped;
- the child runs in its own process group; past the wall-clock limit the whole group is killed;
- the child is reaped with ``os.wait4``: ``ru_maxrss`` of the child, which Linux raises to the
  largest of its waited-for descendants (getrusage(2)), so a wrapper's native worker counts;
  CPU time is user + system of the same tree;
- stdout/stderr go to temporary files (no pipe can fill up and stall the child);
- the child's ``oom_score_adj`` is 1000: if the machine itself runs out of memory, the kernel's
  OOM killer ends the benchmark child (SIGKILL, not ours) before anyone else's processes.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass


@dataclass
class Measured:
    returncode: int | None  # exit status; None when a signal ended it
    signal: int | None  # the signal that ended it (ours after the limit: SIGKILL)
    timed_out: bool  # we killed it at the wall-clock limit
    wall_seconds: float
    cpu_seconds: float
    peak_rss_mib: float  # ru_maxrss of the child's tree (see the module docstring)
    stdout: str
    stderr: str

    @property
    def signal_name(self) -> str:
        if self.signal is None:
            return ""
        try:
            return signal.Signals(self.signal).name
        except ValueError:
            return f"signal {self.signal}"


def _limit(max_bytes: int | None):
    def apply() -> None:
        if max_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (max_bytes, max_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        try:  # on a shared machine that runs short of memory, the kernel takes the benchmark first
            with open("/proc/self/oom_score_adj", "w") as f:
                f.write("1000")
        except OSError:
            pass
    return apply


def run_limited(cmd: list[str], timeout: float, max_bytes: int | None, *, cwd: str | None = None,
                env: dict[str, str] | None = None, poll: float = 0.05) -> Measured:
    """Run ``cmd`` at most ``timeout`` seconds of wall-clock time with ``RLIMIT_AS = max_bytes``."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=cwd, env=env, start_new_session=True,
                                preexec_fn=_limit(max_bytes))  # noqa: PLW1509 - the parent runs no threads
        deadline = time.monotonic() + timeout
        timed_out = False
        # waitid(WNOWAIT) sees the exit without reaping: the group id stays ours while we kill what
        # the child may have left running in its group, then wait4 reaps it with its rusage
        while os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
            if time.monotonic() > deadline:
                timed_out = True
                break
            time.sleep(poll)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        out.seek(0)
        err.seek(0)
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        return Measured(None if sig is not None else os.WEXITSTATUS(status), sig, timed_out, wall,
                        ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, out.read(), err.read())


def parse_size(text: str) -> int:
    """'16G', '16GiB', '512M', '1.5g', or a plain number of bytes."""
    t = text.strip().lower().removesuffix("ib").removesuffix("b")
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}.get(t[-1:], 1)
    num = t[:-1] if t[-1:] in "kmgt" else t
    return int(float(num) * mult)


def load_average() -> tuple[float, float, float]:
    return os.getloadavg()


def mem_available_mib() -> float:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")
