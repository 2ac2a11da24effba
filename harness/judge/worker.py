"""The GPU side of the pipeline: one worker process that owns the CUDA context, shared by many
candidates (:class:`GpuSession`, a :class:`harness.judge.pipeline.GpuRunner`).

The candidate is data: the worker loads the cubin ptxas made of the verified PTX (its sha256
checked) and launches it; no candidate code runs in the pipeline's own process. A fault that
breaks the CUDA context ends the worker after it reports; a launch that does not return within the
session's timeout is killed with its worker. The next request starts a fresh worker (the baseline
configs chosen so far are kept by the session and reused, not re-tuned).

Worker state per (contract, instance): the rotated GPU input sets and the autotuned baseline
(harness.judge.baseline). The sanitizer and profiler lanes run in their own processes under
compute-sanitizer / ncu (harness.judge.gpu_one), started by the session.
"""

from __future__ import annotations

import multiprocessing
import os
import platform
import traceback
from dataclasses import dataclass, field
from typing import Any

from . import baseline as _baseline
from . import profile as _profile
from . import roofline as _roofline
from . import sanitizer as _sanitizer
from . import timed as _timed
from . import timing as _timing
from .device import KernelLaunch, LaunchFailure
from .numeric import NumericDetail, Trial, run_numeric
from .pipeline import GpuRequest
from .report import Problem, Reason, StageResult, Status


@dataclass
class BaselineRow:
    """One contract's line of the baseline table."""

    contract: str
    instance: str
    dims: dict[str, int]
    space: str
    best: str
    stats: _timing.Stats | None
    wall: _timing.WallCheck | None
    floor_ms: float
    tried: list[_baseline.ConfigTime] = field(default_factory=list)
    error: str = ""


class CandidateSide:
    """The candidate's cubin as a timing Side, on the same GPU input sets as the baseline."""

    name = "candidate"

    def __init__(self, loaded: Any, launch: KernelLaunch, packs: list[Any]) -> None:
        self.loaded, self.launch_spec, self.packs = loaded, launch, packs
        self.sets = len(packs)

    def launch(self, index: int) -> None:
        self.loaded.enqueue(self.launch_spec, self.packs[index])


class GpuWorker:
    """Runs in the worker process."""

    def __init__(self) -> None:
        import torch

        from .cuda import Cuda, CudaClock, CudaDevice

        torch.cuda.init()
        torch.zeros(1, device="cuda")  # the primary context exists before cuda-python retains it
        self.cuda = Cuda(torch.cuda.current_device())
        self.device = CudaDevice(self.cuda)
        self.clock = CudaClock(self.cuda)
        self.sets: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self.baselines: dict[tuple[str, str], _baseline.Baseline] = {}

    def info(self) -> dict[str, Any]:
        import torch
        import triton

        from .cuda import driver

        try:
            from importlib.metadata import version
            cuda_python = version("cuda-bindings")
        except Exception:
            cuda_python = "?"
        driver()
        return {"device": self.cuda.name, "capability": self.cuda.capability, "l2_bytes": self.cuda.l2_bytes,
                "torch": torch.__version__, "triton": triton.__version__, "cuda_python": cuda_python,
                "python": platform.python_version(), "torch_cuda": torch.version.cuda}

    # ------------------------------------------------------------------ numeric
    def numeric(self, request: GpuRequest, trials: list[Trial], rerun: bool = True) -> tuple[list[Problem],
                                                                                              NumericDetail]:
        from .. import suite

        return run_numeric(self.device, request.code(), suite.get(request.contract), request.arch, trials,
                           request.param_count, rerun)

    # ------------------------------------------------------------------ timing
    def _inputs(self, contract: Any, instance: str, seed: int) -> list[dict[str, Any]]:
        key = (contract.name, instance)
        if key not in self.sets:
            import torch

            for k in list(self.sets):  # one contract's sets at a time on the device
                del self.sets[k]
            torch.cuda.empty_cache()
            n = _baseline.input_sets(contract, instance, self.cuda.l2_bytes)
            self.sets[key] = _baseline.device_inputs(contract, instance, n, seed)
        return self.sets[key]

    def _tuned(self, contract: Any, instance: str, sets: list[dict[str, Any]], space_limit: int,
               known: _baseline.Config | None = None) -> _baseline.Baseline:
        key = (contract.name, instance)
        if key not in self.baselines:
            space = [known] if known is not None else _baseline.config_space(contract, space_limit)
            self.baselines[key] = _baseline.autotune(contract, instance, self.clock, sets, space)
        return self.baselines[key]

    def candidate_side(self, request: GpuRequest, contract: Any, instance: str, sets: list[dict[str, Any]],
                       twin: bool = False) -> CandidateSide:
        """The candidate (or its line-annotated twin) launched on ``sets``."""
        from symexec.tensormap import TensorMap

        from ..compile import compile_contract
        from ..emulate import GLOBAL_SCRATCH, param_values
        from .cuda import LoadedKernel, PackedParams, encode_tensor_map
        from .launch import launch_config

        import torch

        ref = compile_contract(contract, request.arch, instance)
        config = launch_config(contract, ref, instance, request.ptx)
        launch = KernelLaunch(config.grid, config.block, config.dynamic_shared)
        loaded = LoadedKernel(self.cuda, request.code(twin))
        values, scratch = param_values(contract, ref, instance)
        packs = []
        self._scratch = [torch.zeros(scratch, dtype=torch.uint8, device="cuda") for _ in sets] if scratch else []
        for i, tensors in enumerate(sets):
            vals: list[Any] = []
            for v in values:
                if v == GLOBAL_SCRATCH:
                    vals.append(self._scratch[i].data_ptr())
                elif isinstance(v, str):
                    vals.append(tensors[v].data_ptr())
                elif isinstance(v, TensorMap):
                    vals.append({"bytes": list(encode_tensor_map(self.cuda, v, tensors[v.buffer].data_ptr()
                                                                  + v.offset))})
                else:
                    vals.append(v)
            vals = (vals + [0] * request.param_count)[:request.param_count]
            packs.append(PackedParams(loaded.params, vals))
        loaded.ensure_shared(config.dynamic_shared)
        return CandidateSide(loaded, launch, packs)

    def time(self, request: GpuRequest, known: _baseline.Config | None = None,
             space_limit: int = 6) -> tuple[StageResult, _baseline.Config | None]:
        from .. import suite

        contract = suite.get(request.contract)
        instance = request.timing_instance
        sets = self._inputs(contract, instance, request.seed)
        tuned = self._tuned(contract, instance, sets, space_limit, known)
        if tuned.best is None:
            why = "; ".join(t.error for t in tuned.tried if t.error)[:300]
            return StageResult("timing", Status.UNAVAILABLE, f"no baseline config of Triton's kernel ran ({why})",
                               detail=tuned), None
        cand = self.candidate_side(request, contract, instance, sets)
        base = _baseline.TritonSide(contract, instance, tuned.best, sets)
        peaks = _roofline.peaks_for(self.cuda.name)
        floor = _roofline.floor(contract, instance, peaks) if peaks else None
        problems, detail = _timing.compare(cand, base, self.clock, request.timing, instance, floor, str(tuned.best))
        more, detail.timed_check = self.check_timed(request, contract, instance, sets[0], tuned.best)
        problems += more
        c, b, s = detail.candidate, detail.baseline, detail.speedup
        summary = (f"{s} vs Triton ({tuned.best}; {tuned.space}): {c.median_ms:.4f} ms (IQR {c.spread:.1%}) vs "
                   f"{b.median_ms:.4f} ms (IQR {b.spread:.1%}) at {instance}"
                   + (f"; floor {detail.floor_ms:.4f} ms" if floor else "; no roofline floor for this device")
                   + f"; {_timed.summary(detail.timed_check)}")
        return StageResult.from_problems("timing", problems, summary, detail), tuned.best

    def check_timed(self, request: GpuRequest, contract: Any, instance: str, inputs: dict[str, Any],
                    config: _baseline.Config) -> tuple[list[Problem], _timed.TimedCheck]:
        """The timed launch computes what the contract asks (harness.judge.timed): the candidate and
        Triton's kernel run once on copies of the timed inputs (the candidate's outputs pre-filled
        with NaN, a fixed pattern for integers); both outputs and the inputs are downloaded and judged
        against the float64 reference on the host."""
        import torch

        from ..interpret import from_torch

        def copy(fill: bool) -> dict[str, Any]:
            out = {}
            for t in contract.tensors:
                x = inputs[t.name]
                if t.role == "out":
                    x = torch.full_like(x, float("nan")) if x.is_floating_point() else torch.full_like(x, 0x5A)
                out[t.name] = x.clone() if t.is_input else x if fill else torch.empty_like(x)
            return out

        mine, theirs = copy(True), copy(False)
        self.candidate_side(request, contract, instance, [mine]).launch(0)
        _baseline.TritonSide(contract, instance, config, [theirs]).launch(0)
        self.cuda.sync("correctness check of the timed launch")
        outs = [t.name for t in contract.tensors if t.is_output]
        host = {t.name: from_torch(inputs[t.name]) for t in contract.tensors if t.is_input}
        return _timed.judge_timed(contract, instance, host, {n: from_torch(mine[n]) for n in outs},
                                  {n: from_torch(theirs[n]) for n in outs})

    def baseline(self, name: str, instance: str, plan: _timing.TimingPlan, space_limit: int,
                 seed: int) -> BaselineRow:
        from .. import suite

        contract = suite.get(name)
        r = contract.resolve(instance)
        peaks = _roofline.peaks_for(self.cuda.name)
        floor = _roofline.floor(contract, instance, peaks).ms if peaks else 0.0
        sets = self._inputs(contract, instance, seed)
        tuned = self._tuned(contract, instance, sets, space_limit)
        row = BaselineRow(name, instance, r.dims, tuned.space, str(tuned.best) if tuned.best else "-", None, None,
                          floor, tuned.tried)
        if tuned.best is None:
            row.error = "; ".join(t.error for t in tuned.tried if t.error)[:400]
            return row
        row.stats, row.wall = _timing.time_alone(_baseline.TritonSide(contract, instance, tuned.best, sets),
                                                 self.clock, plan)
        return row

    def release(self) -> None:
        import torch

        self.sets.clear()
        torch.cuda.empty_cache()


WORKER = "harness.judge.worker:GpuWorker"


def serve(conn: Any, factory: str = WORKER) -> None:
    """The worker process's loop: (op, args) in, ("ok", result) | ("error", text) | ("lost", text)
    out. ``factory``: "module:Class" of the worker (tests give a fake)."""
    try:
        import importlib

        module, name = factory.split(":")
        worker = getattr(importlib.import_module(module), name)()
        conn.send(("ok", worker.info()))
    except Exception as e:
        conn.send(("error", f"no GPU worker: {type(e).__name__}: {e}"))
        return
    while True:
        try:
            op, args = conn.recv()
        except EOFError:
            return
        if op == "stop":
            return
        try:
            result = getattr(worker, op)(*args)
        except LaunchFailure as e:
            conn.send(("lost" if e.sticky else "error", f"{e.reason.value if e.reason else 'undecided'}: {e.message}"))
            if e.sticky:
                os._exit(3)
            continue
        except Exception as e:
            conn.send(("error", f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=6)}"))
            continue
        conn.send(("ok", result))
        lost = isinstance(result, tuple) and any(getattr(x, "device_lost", False) for x in result)
        if lost:
            os._exit(3)


class WorkerError(RuntimeError):
    """``kind``: "lost" (a fault took the CUDA context down), "hang" (no answer in time), "died", or
    "error" (the harness itself failed: not the candidate's fault)."""

    def __init__(self, message: str, kind: str = "error") -> None:
        super().__init__(message)
        self.kind = kind

    @property
    def candidate_fault(self) -> bool:
        return self.kind in ("lost", "hang", "died")


def _fault_reason(e: WorkerError) -> Reason:
    text = str(e)
    return Reason.MEMORY_FAULT if "memory_fault" in text or "ILLEGAL_ADDRESS" in text else Reason.LAUNCH_FAILED


class GpuSession:
    """The parent's handle on the GPU worker; implements harness.judge.pipeline.GpuRunner."""

    def __init__(self, timeout: float = 300.0, space_limit: int = 6, factory: str = WORKER) -> None:
        self.timeout, self.space_limit, self.factory = timeout, space_limit, factory
        self._proc: Any = None
        self._conn: Any = None
        self.info: dict[str, Any] = {}
        self.configs: dict[tuple[str, str], _baseline.Config] = {}  # survive worker restarts

    # -------------------------------------------------------------- process
    def start(self) -> "GpuSession":
        if self._proc is not None and self._proc.is_alive():
            return self
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        self._proc = ctx.Process(target=serve, args=(child, self.factory), daemon=True)
        self._proc.start()
        child.close()
        self._conn = parent
        if not parent.poll(self.timeout):
            self._kill()
            raise WorkerError(f"the GPU worker did not start within {self.timeout:.0f} s")
        try:
            status, payload = parent.recv()
        except EOFError:
            self._kill()
            raise WorkerError("the GPU worker died while starting") from None
        if status != "ok":
            self._kill()
            raise WorkerError(payload)
        self.info = payload
        return self

    def _kill(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.join(10)
        self._proc = self._conn = None

    def close(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            try:
                self._conn.send(("stop", ()))
                self._proc.join(30)
            except (OSError, EOFError):
                pass
        self._kill()

    def __enter__(self) -> "GpuSession":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def device_name(self) -> str:
        return self.start().info["device"]

    @property
    def capability(self) -> int:
        return int(self.start().info["capability"])

    def call(self, op: str, *args: Any, timeout: float | None = None) -> Any:
        """Run ``op`` in the worker; WorkerError when it fails, dies or hangs (then it is restarted
        at the next call)."""
        self.start()
        limit = timeout or self.timeout
        try:
            self._conn.send((op, args))
            if not self._conn.poll(limit):
                self._kill()
                raise WorkerError(f"no answer within {limit:.0f} s (a kernel that does not terminate?); the "
                                  "worker was killed", "hang")
            status, payload = self._conn.recv()
        except (EOFError, OSError, BrokenPipeError):
            self._kill()
            raise WorkerError("the GPU worker died (a fault that took the CUDA context down)", "died") from None
        if status == "lost":
            self._kill()
            raise WorkerError(f"the CUDA context was lost: {payload}", "lost")
        if status != "ok":
            raise WorkerError(payload)
        if self._proc is not None:
            self._proc.join(0.5)
            if not self._proc.is_alive():
                self._kill()
        return payload

    # -------------------------------------------------------------- GpuRunner
    def numeric(self, request: GpuRequest, trials: list[Trial]) -> tuple[list[Problem], NumericDetail]:
        try:
            return self.call("numeric", request, trials)
        except WorkerError as e:
            detail = NumericDetail(self.info.get("device", "gpu"), 0, True, device_lost=e.candidate_fault)
            if not e.candidate_fault:
                detail.undecided = f"the harness failed on the GPU: {str(e).splitlines()[0]}"
                return [], detail
            return [Problem(_fault_reason(e), str(e).splitlines()[0])], detail

    def time(self, request: GpuRequest) -> StageResult:
        key = (request.contract, request.timing_instance)
        try:
            result, best = self.call("time", request, self.configs.get(key), self.space_limit)
        except WorkerError as e:
            if not e.candidate_fault:
                return StageResult("timing", Status.UNAVAILABLE, f"the harness failed on the GPU: "
                                   f"{str(e).splitlines()[0]}")
            return StageResult.from_problems("timing", [Problem(_fault_reason(e), str(e).splitlines()[0])], "")
        if best is not None:
            self.configs[key] = best
        return result

    def sanitize(self, request: GpuRequest, tool: str, trial: Trial) -> StageResult:
        return _sanitizer.run(tool, request, trial, timeout=self.timeout)

    def profile(self, request: GpuRequest) -> StageResult:
        return _profile.run(request, timeout=self.timeout)

    def baseline(self, contract: str, instance: str, plan: _timing.TimingPlan, seed: int = 0) -> BaselineRow:
        return self.call("baseline", contract, instance, plan, self.space_limit, seed)

    def release(self) -> None:
        if self._proc is not None:
            self.call("release")
