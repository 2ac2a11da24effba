"""The numeric test: the candidate against the float64 reference, with the harness owning the memory.

Each :class:`Trial` is one size (a known instance or an unseen one, harness.judge.shapes), one input
distribution of the contract and one seed. For a trial, on any :class:`~harness.judge.device.Device`:

1. inputs are generated on the host (harness.inputs, counter-based, seeded) and the reference is
   computed from those host arrays in float64: memory the candidate never sees (integrity class 1);
2. every tensor gets its own allocation with a guard band of random bytes before and after it;
   inputs are uploaded and their device bytes hashed; outputs are filled with a NaN sentinel
   (a fixed pattern for integers);
3. after the launch: every guard band must be intact (class 3), every input's bytes must hash as
   before (class 2), and every output is compared with the reference (harness.contract.
   compare_arrays: dtype tolerances, NaN positions exact, finite reference -> finite candidate;
   classes 4-6);
4. the launch is repeated on fresh copies of the same inputs with *another* sentinel: an element
   that still holds each run's sentinel was never written (class 1), any other difference is
   nondeterminism (class 7; skipped for contracts that declare their op nondeterministic).

Problems name the trial (size, distribution, seed) so that a failure can be replayed.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import dtypes as _dt
from ..compile import compile_contract
from ..contract import Contract, compare_arrays
from ..emulate import GLOBAL_SCRATCH, from_device, param_values, to_device
from .device import Device, KernelCode, KernelLaunch, LaunchFailure, Ptr, alloc_name
from .launch import launch_config
from .report import Problem, Reason
from .shapes import with_instance

GUARD_BYTES = 4096
_ALIGN = 256

#: Two sentinel fills per element type (little-endian element values): quiet NaNs with different
#: payloads for floats, 0x5A / 0xA5 bytes for integers.
_SENTINELS: dict[str, tuple[int, int]] = {
    "fp64": (0x7FF800000000A5A5, 0x7FF8000000005A5A), "fp32": (0x7FC0A5A5, 0x7FE05A5A),
    "fp16": (0x7E5A, 0x7FA5), "bf16": (0x7FC5, 0x7FDA), "fp8e4m3": (0x7F, 0xFF), "fp8e5m2": (0x7E, 0xFF),
}


def sentinel_bytes(dtype_name: str, count: int, variant: int) -> np.ndarray:
    """``count`` elements of sentinel ``variant`` (0 or 1) as bytes."""
    name = _dt.canonical(dtype_name)
    width = _dt.dtype(name).bits // 8
    if name not in _SENTINELS:
        return np.full(count * width, (0x5A, 0xA5)[variant], np.uint8)
    word = _SENTINELS[name][variant].to_bytes(width, "little")
    return np.frombuffer(word * count, np.uint8).copy()


@dataclass(frozen=True)
class Trial:
    label: str  # the instance: "verify", "bench", or an unseen size's name
    dims: dict[str, int]
    distribution: str
    seed: int

    def describe(self) -> str:
        dims = ", ".join(f"{k}={v}" for k, v in self.dims.items())
        return f"{self.label} ({dims}), {self.distribution}, seed {self.seed}"


@dataclass
class OutputCheck:
    name: str
    dtype: str
    ok: bool
    worst: float  # largest error / allowed error
    bad: int
    nan_inf_bad: int
    detail: str = ""


@dataclass
class TrialResult:
    trial: Trial
    ok: bool
    outputs: list[OutputCheck] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    seconds: float = 0.0
    device_lost: bool = False


@dataclass
class NumericDetail:
    device: str
    guard_bytes: int
    rerun: bool
    trials: list[TrialResult] = field(default_factory=list)
    undecided: str = ""  # why the device could not decide (the emulator's limits)
    device_lost: bool = False  # a fault left the device unusable (a GPU context): nothing ran after it


@dataclass
class _Buffer:
    """One guarded allocation: ``guard`` pattern bytes, the data, pattern again (to the next 256)."""

    name: str
    alloc: int
    nbytes: int
    image: np.ndarray  # the whole allocation's initial bytes (data region included)
    guard: int

    @property
    def data(self) -> slice:
        return slice(self.guard, self.guard + self.nbytes)

    def ptr(self) -> Ptr:
        return Ptr(self.alloc, self.guard)


def _padded(n: int) -> int:
    return -(-max(n, 1) // _ALIGN) * _ALIGN


class _Run:
    """The buffers of one trial on one device. ``guard`` 0: allocations of exactly the data's size
    (the sanitizer lane, where memcheck knows every allocation's bounds)."""

    def __init__(self, device: Device, rng: np.random.Generator, guard: int = GUARD_BYTES) -> None:
        self.device, self.rng, self.guard = device, rng, guard
        self.buffers: dict[str, _Buffer] = {}

    def add(self, name: str, data: np.ndarray) -> None:
        data = np.frombuffer(np.ascontiguousarray(data).tobytes(), np.uint8)
        g = self.guard
        total = 2 * g + _padded(data.size) if g else max(data.size, 1)
        image = self.rng.integers(0, 256, total, dtype=np.uint8)
        image[g:g + data.size] = data
        alloc = self.device.alloc(total)
        self.device.upload(alloc, image)
        self.buffers[name] = _Buffer(name, alloc, data.size, image, g)

    def read(self) -> dict[str, np.ndarray]:
        return {n: self.device.download(b.alloc) for n, b in self.buffers.items()}


def _params(values: list[Any], buffers: dict[str, _Buffer], count: int) -> list[Any]:
    """Tensor names -> guarded pointers, tensor maps -> the allocation; padded/cut to the kernel's
    ``count`` parameters (Triton's trailing hidden pointers are optional)."""
    import dataclasses

    from symexec.tensormap import TensorMap

    out: list[Any] = []
    for v in values:
        if isinstance(v, str):
            out.append(buffers[v].ptr())
        elif isinstance(v, TensorMap):
            b = buffers[v.buffer]
            out.append(dataclasses.replace(v, buffer=alloc_name(b.alloc), offset=b.guard + v.offset))
        else:
            out.append(v)
    return (out + [0] * count)[:count]


def _digest(raw: np.ndarray) -> str:
    return hashlib.sha256(raw.tobytes()).hexdigest()


def _compare(contract: Contract, name: str, dtype: str, got: np.ndarray, want: np.ndarray,
             scale: np.ndarray | None) -> OutputCheck:
    rtol, atol = contract.tolerance_for(dtype)
    c = compare_arrays(name, dtype, got, want, rtol, atol, scale)
    a, e = np.asarray(got, np.float64), np.asarray(want, np.float64)
    nan_inf = int(((np.isnan(a) != np.isnan(e)) | (np.isinf(a) & ~np.isinf(e) & ~np.isnan(e))).sum()) \
        if c.ok is False and a.shape == e.shape else 0
    return OutputCheck(name, dtype, c.ok, c.worst, c.bad, nan_inf, c.detail)


def _guard_problems(trial: Trial, buf: _Buffer, raw: np.ndarray) -> list[Problem]:
    g = buf.guard
    bad = np.nonzero(raw != buf.image)[0]
    bad = bad[(bad < g) | (bad >= g + buf.nbytes)]
    if bad.size == 0:
        return []
    first = int(bad[0])
    side = f"{g - first} byte(s) before its start" if first < g else f"at byte {first - g - buf.nbytes} past its end"
    return [Problem(Reason.GUARD_BAND, f"{bad.size} guard byte(s) around '{buf.name}' overwritten, the first "
                    f"{side} ({trial.describe()})")]


def run_trial(device: Device, kernel: Any, code: KernelCode, contract: Contract, arch: str, trial: Trial,
              param_count: int, rerun: bool = True, guard: int = GUARD_BYTES) -> TrialResult:
    """One trial (see the module docstring). Raises LaunchFailure(None, ...) when the device
    cannot decide."""
    t0 = time.perf_counter()
    c = with_instance(contract, trial.label, trial.dims)
    r = c.resolve(trial.label)
    ref_build = compile_contract(c, arch, trial.label)
    arrays = c.make_inputs(trial.label, trial.distribution, trial.seed)
    with np.errstate(all="ignore"):
        want = c.run_reference(arrays, trial.label)
        scale = c.abs_scale(arrays, trial.label)
    values, scratch = param_values(c, ref_build, trial.label)
    config = launch_config(c, ref_build, trial.label, code.ptx)
    rng = np.random.default_rng([trial.seed, 0x6A7D])
    result = TrialResult(trial, True)
    runs: list[dict[str, np.ndarray]] = []
    seen: set[tuple[Reason, str]] = set()  # guard/input problems are reported once per buffer, not per run
    inputs = {t.name: to_device(arrays[t.name], t.dtype) for t in c.tensors if t.is_input}
    hashes = {n: _digest(np.frombuffer(d.tobytes(), np.uint8)) for n, d in inputs.items()}
    for variant in range(2 if rerun else 1):
        device.free_all()
        run = _Run(device, rng, guard)
        for t in c.tensors:
            size = int(np.prod(r.shapes[t.name], dtype=np.int64))
            run.add(t.name, inputs[t.name] if t.is_input else sentinel_bytes(t.dtype, size, variant))
        if scratch:
            run.add(GLOBAL_SCRATCH, np.zeros(scratch, np.uint8))
        launch = KernelLaunch(config.grid, config.block, config.dynamic_shared,
                              _params(values, run.buffers, param_count))
        try:
            device.launch(kernel, launch)
        except LaunchFailure as e:
            if e.reason is None:
                raise
            result.problems.append(Problem(e.reason, f"{e.message} ({trial.describe()})", where=e.where))
            result.ok, result.device_lost = False, e.sticky
            if e.sticky:  # no device call may follow
                result.seconds = time.perf_counter() - t0
                return result
            break
        raws = run.read()
        runs.append(raws)
        for name, buf in run.buffers.items():
            if (Reason.GUARD_BAND, name) not in seen:
                found = _guard_problems(trial, buf, raws[name])
                seen.update((p.reason, name) for p in found)
                result.problems += found
        for t in c.tensors:
            if t.role == "in" and (Reason.INPUT_MUTATED, t.name) not in seen and \
                    _digest(raws[t.name][run.buffers[t.name].data]) != hashes[t.name]:
                seen.add((Reason.INPUT_MUTATED, t.name))
                result.problems.append(Problem(Reason.INPUT_MUTATED, f"input '{t.name}' changed during the run "
                                               f"({trial.describe()})"))
        if variant == 0:
            for t in c.tensors:
                if not t.is_output:
                    continue
                got = from_device(raws[t.name][run.buffers[t.name].data], t.dtype, r.shapes[t.name])
                check = _compare(c, t.name, t.dtype, got, want[t.name], None if scale is None else scale.get(t.name))
                result.outputs.append(check)
                if not check.ok:
                    result.problems.append(_wrong(t.name, check, trial))
        else:
            result.problems += _rerun_problems(c, trial, r.shapes, runs[0], raws, run.buffers)
    result.ok = result.ok and not result.problems
    result.seconds = time.perf_counter() - t0
    device.free_all()
    return result


def _wrong(name: str, check: OutputCheck, trial: Trial) -> Problem:
    if check.nan_inf_bad:
        return Problem(Reason.NAN_INF_MISMATCH, f"output '{name}': {check.nan_inf_bad} element(s) NaN or Inf where "
                       f"the reference is not, or the reverse ({check.bad} wrong in all); {check.detail} "
                       f"({trial.describe()})")
    worst = f"the worst {check.worst:.3g}x it" if np.isfinite(check.worst) else "which is exact"
    return Problem(Reason.WRONG_VALUES, f"output '{name}': {check.bad} element(s) outside the tolerance, {worst}; "
                   f"{check.detail} ({trial.describe()})")


def _rerun_problems(c: Contract, trial: Trial, shapes: dict[str, tuple[int, ...]], first: dict[str, np.ndarray],
                    second: dict[str, np.ndarray], buffers: dict[str, _Buffer]) -> list[Problem]:
    out = []
    for t in c.tensors:
        if not t.is_output:
            continue
        width = _dt.dtype(t.dtype).bits // 8
        n = int(np.prod(shapes[t.name], dtype=np.int64))
        a = first[t.name][buffers[t.name].data].reshape(n, width)
        b = second[t.name][buffers[t.name].data].reshape(n, width)
        differ = (a != b).any(axis=1)
        if not differ.any():
            continue
        s0 = sentinel_bytes(t.dtype, 1, 0)
        s1 = sentinel_bytes(t.dtype, 1, 1)
        unwritten = differ & (a == s0).all(axis=1) & (b == s1).all(axis=1)
        if t.role == "out" and unwritten.any():
            idx = np.unravel_index(int(np.argmax(unwritten)), shapes[t.name])
            out.append(Problem(Reason.UNWRITTEN_OUTPUT, f"output '{t.name}': {int(unwritten.sum())} element(s) never "
                               f"written, the first at {tuple(int(i) for i in idx)} ({trial.describe()})"))
        rest = differ & ~unwritten
        if rest.any() and c.deterministic:
            idx = np.unravel_index(int(np.argmax(rest)), shapes[t.name])
            out.append(Problem(Reason.NONDETERMINISTIC, f"output '{t.name}': {int(rest.sum())} element(s) differ "
                               f"bitwise between two runs on the same inputs, the first at "
                               f"{tuple(int(i) for i in idx)} ({trial.describe()})"))
    return out


def run_numeric(device: Device, code: KernelCode, contract: Contract, arch: str, trials: list[Trial],
                param_count: int, rerun: bool = True, stop_at_first: bool = True) -> tuple[list[Problem], NumericDetail]:
    """Every trial in order (stopping at the first that fails when ``stop_at_first``)."""
    detail = NumericDetail(device.name, GUARD_BYTES, rerun)
    try:
        kernel = device.load(code)
    except LaunchFailure as e:
        if e.reason is None:
            detail.undecided = e.message
            return [], detail
        return [Problem(e.reason, e.message, where=e.where)], detail
    problems: list[Problem] = []
    for trial in trials:
        try:
            res = run_trial(device, kernel, code, contract, arch, trial, param_count, rerun)
        except LaunchFailure as e:
            detail.undecided = f"{e.message} ({trial.describe()})"
            break
        detail.trials.append(res)
        problems += res.problems
        if res.device_lost:
            detail.device_lost = True
            break
        if res.problems and stop_at_first:
            break
    return problems, detail
