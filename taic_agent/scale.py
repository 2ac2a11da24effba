"""Where evaluations run: in this process, or spread over cores, GPUs and hosts through Ray.

- :class:`LocalExecutor`: one candidate after another in this process (a GPU session, when given,
  batches every candidate through one GPU worker process: harness.judge.worker.GpuSession).
- :class:`RayExecutor`: a local Ray instance by default (every core of this machine), or the
  cluster at ``address``. The CPU-bound ``volta check`` runs as CPU tasks (``num_cpus=1``); with
  GPUs, one actor per GPU (``num_gpus=1``) holds a GPU session and runs the GPU-bound stages
  (numerics, compute-sanitizer, timing, profile) of the same candidate while its check runs on a
  CPU; the two reports become one (:func:`merge_verify`). Without GPUs every stage runs in the CPU
  task. ``map`` runs any picklable function over items (the bench's suite-wide checks).

Ray is optional (the ``scale`` extra) and imported only here.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class EvalRequest:
    contract: str
    arch: str
    name: str
    ptx: str
    options: Any  # harness.judge.pipeline.EvalOptions (frozen, picklable)


class Executor(Protocol):
    description: str

    def evaluate(self, requests: list[EvalRequest]) -> list[Any]: ...

    def map(self, fn: Callable[[T], R], items: list[T], gpu: bool = False) -> list[R]: ...

    def close(self) -> None: ...


def evaluate_on_cpu(req: EvalRequest, skip: frozenset[str] = frozenset()) -> Any:
    """One candidate through the harness on this machine's CPU (emulator numerics, volta check)."""
    from harness import evaluate

    options = dataclasses.replace(req.options, skip=req.options.skip | skip) if skip else req.options
    return evaluate(req.contract, req.ptx, name=req.name, arch=req.arch, options=options)


def merge_verify(gpu_report: Any, cpu_report: Any) -> Any:
    """The GPU run's report with the CPU task's verify stage in place of its skipped one."""
    cpu_verify = cpu_report.stage("verify")
    stages = [cpu_verify if s.stage == "verify" and cpu_verify is not None else s for s in gpu_report.stages]
    return dataclasses.replace(gpu_report, stages=stages)


class LocalExecutor:
    def __init__(self, gpu: Any = None) -> None:
        self.gpu = gpu
        self.description = "in process" + (f", GPU {getattr(gpu, 'device_name', '')}" if gpu is not None else ", CPU")

    def evaluate(self, requests: list[EvalRequest]) -> list[Any]:
        from harness import evaluate

        return [evaluate(r.contract, r.ptx, name=r.name, arch=r.arch, options=r.options, gpu=self.gpu)
                for r in requests]

    def map(self, fn: Callable[[T], R], items: list[T], gpu: bool = False) -> list[R]:
        return [fn(x) for x in items]

    def close(self) -> None:
        pass


class _GpuEvaluator:
    """A Ray actor owning one GPU session (created with ``num_gpus=1``)."""

    def __init__(self) -> None:
        from harness.judge.worker import GpuSession

        self.session = GpuSession().start()

    def evaluate(self, req: EvalRequest) -> Any:
        from harness import evaluate

        options = dataclasses.replace(req.options, skip=req.options.skip | {"verify"})
        return evaluate(req.contract, req.ptx, name=req.name, arch=req.arch, options=options, gpu=self.session)


def _run_chunk(fn: Callable[[T], R], items: list[T]) -> list[R]:
    return [fn(x) for x in items]


def _repo_root() -> str:
    return str(Path(__file__).resolve().parent.parent)


class RayExecutor:
    def __init__(self, address: str | None = None, num_cpus: int | None = None, gpus: int | None = None) -> None:
        try:
            import ray
        except ImportError:
            raise RuntimeError("Ray is not installed: pip install 'volta[scale]'") from None
        self._ray = ray
        if not ray.is_initialized():
            # workers import this checkout's packages (a cluster's nodes must have Volta installed)
            paths = [_repo_root()] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
            env = {"PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}
            kwargs: dict[str, Any] = {"runtime_env": {"env_vars": env}, "log_to_driver": False,
                                      "include_dashboard": False}
            if address:
                ray.init(address=address, **kwargs)
            else:
                ray.init(num_cpus=num_cpus, **kwargs)
        res = ray.cluster_resources()
        self.cpus = int(res.get("CPU", 1))
        self.gpus = int(res.get("GPU", 0)) if gpus is None else gpus
        self._cpu_task = ray.remote(num_cpus=1)(evaluate_on_cpu)
        self._actors = [ray.remote(num_gpus=1)(_GpuEvaluator).remote() for _ in range(self.gpus)]
        where = f"cluster {address}" if address else "local Ray instance"
        self.description = f"Ray ({where}: {self.cpus} CPUs, {self.gpus} GPUs)"

    def evaluate(self, requests: list[EvalRequest]) -> list[Any]:
        ray = self._ray
        if not self._actors:
            return ray.get([self._cpu_task.remote(r) for r in requests])
        checks = [self._cpu_task.remote(r, frozenset({"numeric"})) for r in requests]
        runs = [self._actors[i % len(self._actors)].evaluate.remote(r) for i, r in enumerate(requests)]
        return [merge_verify(g, c) for g, c in zip(ray.get(runs), ray.get(checks))]

    def map(self, fn: Callable[[T], R], items: list[T], gpu: bool = False, chunks_per_cpu: int = 4) -> list[R]:
        """``fn`` over ``items`` as Ray tasks, in order; small items travel in chunks (a few per
        CPU) so that a task's scheduling cost is paid per chunk, not per item."""
        task = self._ray.remote(num_cpus=1, num_gpus=1 if gpu else 0)(_run_chunk)
        size = max(1, -(-len(items) // max(1, self.cpus * chunks_per_cpu)))
        parts = [items[i:i + size] for i in range(0, len(items), size)]
        return [r for part in self._ray.get([task.remote(fn, p) for p in parts]) for r in part]

    def close(self) -> None:
        self._ray.shutdown()
