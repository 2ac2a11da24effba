"""What the CLI renders: one result per checked file (a checker `Report`, or the bad input that
stopped it), the exit code of a set of files, bad input as a value, and the optional extras.

Exit codes (the public contract): 0 proved, 1 a bug was found, 2 bad input, 3 unsupported or
inconclusive. A set of files exits with its worst result, in the order SET_ORDER: a bug found
anywhere (1) outranks bad input (2: part of the set was not checked), which outranks an undecided
file (3), which outranks proved (0).
"""

from __future__ import annotations

import importlib.util
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from symexec.check.findings import ExitCode, Report

#: Worst first: the exit code of a set of files is the first of these that any file has.
SET_ORDER = (ExitCode.BUG, ExitCode.BAD_INPUT, ExitCode.UNDECIDED, ExitCode.OK)


def worst(codes) -> ExitCode:
    """The exit code of a set of results (SET_ORDER); an empty set is bad input."""
    codes = {ExitCode(c) for c in codes}
    return next((c for c in SET_ORDER if c in codes), ExitCode.BAD_INPUT)


class BadInput(ValueError):
    """Input Volta cannot check (a parse error, a bad launch spec, an unknown kernel, an option that
    does not fit): exit 2, with a message that names the place (file:line:col or the JSON path)."""

    def __init__(self, message: str, file: str | None = None, line: int | None = None, col: int | None = None,
                 detail: str | None = None) -> None:
        super().__init__(message)
        self.message, self.file, self.line, self.col, self.detail = message, file, line, col, detail

    def __str__(self) -> str:
        return self.detail or self.message

    def text(self) -> str:
        """As printed on stderr: a compiler-style located error as it is, otherwise `error: ...`."""
        return self.detail or f"error: {self.message}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"message": self.message}
        if self.file is not None:
            out["file"] = self.file
        if self.line is not None:
            out.update(line=self.line, col=self.col)
        return out


@dataclass
class CheckResult:
    """One file of `volta check`: its report, or the bad input that stopped it; the wall time."""

    path: Path
    report: Report | None = None
    error: BadInput | None = None
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode.BAD_INPUT if self.report is None else ExitCode(self.report.exit_code)

    @property
    def verdict(self) -> str:
        return "bad_input" if self.report is None else self.report.verdict

    @property
    def kernel(self) -> str:
        return str(self.path) if self.report is None else self.report.kernel

    def to_json(self) -> dict[str, Any]:
        if self.report is None:
            assert self.error is not None
            return {"file": str(self.path), "verdict": "bad_input", "exit_code": int(ExitCode.BAD_INPUT),
                    "error": self.error.to_json(), "seconds": round(self.seconds, 3)}
        return {"file": str(self.path), **self.report.to_json(), "seconds": round(self.seconds, 3)}


def strict_json(value: Any) -> Any:
    """`value` with non-finite floats as the strings "inf", "-inf", "nan" (JSON has no Infinity)
    and other non-JSON values as text."""
    if isinstance(value, float):
        return value if math.isfinite(value) else ("nan" if math.isnan(value) else "inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {str(k): strict_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict_json(v) for v in value]
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if hasattr(value, "item"):  # numpy scalars
        return strict_json(value.item())
    return str(value)


# ---------------------------------------------------------------- optional extras
#: extra -> (the module it brings, what it is for)
EXTRAS = {
    "triton": ("triton", "the kernel suite and --contract (Triton compiles the reference kernels)"),
    "torch": ("torch", "the Triton interpreter oracle (tests and benchmarks)"),
    "gpu": ("cuda", "runs on an NVIDIA GPU (harness.gpu_check)"),
    "agent": ("openai", "the LLM lowering loop"),
}


def require_extra(extra: str, what: str) -> None:
    """Raise BadInput naming the pip extra when `what` needs a package that is not installed."""
    module, _ = EXTRAS[extra]
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise BadInput(f"{what} needs the '{extra}' extra ({module} is not installed): "
                       f"pip install 'volta[{extra}]'")


def writable(path: Path | None, option: str) -> None:
    """Refuse an output path before any work: it must not exist (never overwritten) and its
    folder must exist and be writable."""
    if path is None:
        return
    import os

    if path.exists():
        raise BadInput(f"{option} {path}: the file exists; not overwriting it")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise BadInput(f"{option} {path}: cannot write there: the folder {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise BadInput(f"{option} {path}: cannot write there: the folder {parent} is not writable")


__all__ = ["SET_ORDER", "worst", "BadInput", "CheckResult", "strict_json", "EXTRAS", "require_extra", "writable"]
