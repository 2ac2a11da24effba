"""The check of the *timed* launch: what the candidate computed on the inputs it was timed on.

The timing stage runs the candidate on device-generated inputs at the bench instance (harness.judge.
baseline.device_inputs), which the numeric stage never saw. A candidate that is right on the tested
sizes and does something cheaper at the timed one (integrity class 14) is caught here: its outputs
from one timed-style launch are compared with the contract's float64 reference evaluated on the
same inputs (downloaded to the host), with the contract's own tolerance and abs-scale, exactly as
the numeric stage compares them. Triton's kernel, run on the same inputs, is judged by the same rule
and its error is reported beside the candidate's; it never decides the candidate's verdict (two
correct fp32 summation orders disagree with each other by up to twice the tolerance where sums
cancel, which is why the comparison is against the reference and not against Triton's output).

Pure functions over host arrays: the GPU worker (harness.judge.worker) does the launches and the
downloads; the tests drive this module with numpy arrays.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from .. import dtypes as _dt
from ..contract import Comparison, Contract, compare_arrays
from .report import Problem, Reason


@dataclass(frozen=True)
class SideError:
    """One kernel's output against the float64 reference at the tolerance."""

    ok: bool
    bad: int  # elements outside the tolerance (NaN/Inf mismatches included)
    worst: float  # the largest error / allowed error (>1: outside)
    max_abs: float
    detail: str = ""

    def describe(self) -> str:
        if self.ok:
            return f"within the tolerance (worst {self.worst:.3g}x it)"
        return f"{self.bad} element(s) outside the tolerance, the worst {self.worst:.3g}x it; {self.detail}"


@dataclass(frozen=True)
class TimedOutput:
    name: str
    dtype: str
    elements: int
    candidate: SideError
    triton: SideError | None  # None: Triton's kernel did not run on these inputs


@dataclass
class TimedCheck:
    instance: str
    reference_s: float  # seconds to evaluate the float64 reference on the host (and its abs-scale)
    outputs: list[TimedOutput] = field(default_factory=list)


#: elements per comparison chunk: bounds the float64 temporaries (a few per chunk) at bench sizes of
#: a billion elements, and lets the chunks run on every core (numpy releases the GIL in them)
CHUNK = 1 << 22


def _side(contract: Contract, name: str, dtype: str, got: np.ndarray, want: np.ndarray,
          scale: np.ndarray | None) -> SideError:
    """compare_arrays over flat chunks, in parallel; the same verdict as one call on the whole."""
    rtol, atol = contract.tolerance_for(dtype)
    g, w = np.asarray(got), np.asarray(want)
    if g.shape != w.shape:
        c = compare_arrays(name, dtype, g, w, rtol, atol)
        return SideError(False, int(c.bad), float(c.worst), float(c.max_abs), c.detail)
    g, w = g.reshape(-1), w.reshape(-1)
    s = None if scale is None else np.broadcast_to(np.asarray(scale), want.shape).reshape(-1)
    starts = range(0, max(w.size, 1), CHUNK)

    def one(i: int) -> Comparison:
        part = slice(i, i + CHUNK)
        return compare_arrays(name, dtype, g[part], w[part], rtol, atol, None if s is None else s[part])

    with ThreadPoolExecutor(max_workers=min(len(starts), os.cpu_count() or 1)) as pool:
        parts = list(pool.map(one, starts))
    bad = sum(int(c.bad) for c in parts)
    detail = ""
    for i, c in zip(starts, parts):
        if c.first_bad is not None:
            at = tuple(int(k) for k in np.unravel_index(i + c.first_bad[0], np.shape(want)))
            detail = f"first bad at {at}: got {float(g[i + c.first_bad[0]])!r}, want {float(w[i + c.first_bad[0]])!r}"
            break
    return SideError(bad == 0, bad, max(float(c.worst) for c in parts), max(float(c.max_abs) for c in parts),
                     detail)


def host_inputs(contract: Contract, arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The input tensors as the reference takes them (each dtype's host storage type)."""
    return {t.name: np.asarray(arrays[t.name]).astype(_dt.dtype(t.dtype).storage, copy=False)
            for t in contract.tensors if t.is_input}


def judge_timed(contract: Contract, instance: str, inputs: Mapping[str, np.ndarray],
                candidate: Mapping[str, np.ndarray], triton: Mapping[str, np.ndarray] | None
                ) -> tuple[list[Problem], TimedCheck]:
    """``inputs``: every input tensor of the timed launch (host copies); ``candidate`` / ``triton``:
    each kernel's output tensors from one launch on them (``triton`` None when it did not run)."""
    arrays = host_inputs(contract, inputs)
    t0 = time.perf_counter()
    with np.errstate(all="ignore"):
        want = contract.run_reference(arrays, instance)
        scale = contract.abs_scale(arrays, instance)
    check = TimedCheck(instance, time.perf_counter() - t0)
    problems = []
    for t in contract.tensors:
        if not t.is_output:
            continue
        s = None if scale is None else scale.get(t.name)
        mine = _side(contract, t.name, t.dtype, candidate[t.name], want[t.name], s)
        theirs = None if triton is None else _side(contract, t.name, t.dtype, triton[t.name], want[t.name], s)
        check.outputs.append(TimedOutput(t.name, t.dtype, int(np.size(want[t.name])), mine, theirs))
        if not mine.ok:
            beside = "" if theirs is None else f" (Triton's kernel on the same inputs: {theirs.describe()})"
            problems.append(Problem(Reason.WRONG_VALUES, f"at the timed instance ({instance}), output '{t.name}' "
                                    f"against the float64 reference: {mine.describe()}{beside}"))
    return problems, check


def summary(check: TimedCheck) -> str:
    """One line: each output's worst error ratio, the candidate's and Triton's."""
    parts = [f"'{o.name}' {o.candidate.worst:.3g}x" + ("" if o.triton is None else f" (Triton {o.triton.worst:.3g}x)")
             for o in check.outputs]
    return (f"timed outputs vs the float64 reference (worst error / tolerance): {', '.join(parts)}; "
            f"reference {check.reference_s:.2f} s")
