"""The baseline: Triton's own kernel for the contract, autotuned over a declared config space.

The space (:func:`config_space`) keeps the contract's constexprs (the problem the candidate solves
is fixed) and varies what Triton's autotuner usually varies for a fixed tile: warps per program
(the contract's, half, double; at most 16) and software-pipelining stages (the contract's, one
less, one more; 1 to 5). Each config is launched through Triton's JIT exactly as a user would
(``kernel[grid](*args, **constexprs, num_warps=, num_stages=)``), timed briefly under the same L2
flush and input rotation as the candidate, and the fastest becomes the baseline; configs that fail
to compile (shared memory, registers) are recorded and skipped. Compilation can be done ahead in
parallel processes (:func:`precompile`): they fill Triton's on-disk cache, which the timing
process then hits.

GPU inputs for timing are generated on the device (torch, seeded) from each input's dtype and
the contract's input domain: the values do not matter for speed, but never time on zeros.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import dtypes as _dt
from .. import inputs as _inputs
from ..contract import Contract


@dataclass(frozen=True)
class Config:
    num_warps: int
    num_stages: int

    def __str__(self) -> str:
        return f"warps={self.num_warps} stages={self.num_stages}"


def config_space(contract: Contract, limit: int = 9) -> list[Config]:
    """The declared space, the contract's own config first, at most ``limit`` configs."""
    w, s = contract.num_warps, contract.num_stages
    warps = [w] + [x for x in (w // 2, w * 2) if 1 <= x <= 16 and x != w]
    stages = [s] + [x for x in (s - 1, s + 1) if 1 <= x <= 5]
    space = [Config(a, b) for a in warps for b in stages]
    space.sort(key=lambda c: (c.num_warps != w) + (c.num_stages != s))  # the contract's, then one change
    return space[:limit]


def describe_space(space: list[Config]) -> str:
    warps = sorted({c.num_warps for c in space})
    stages = sorted({c.num_stages for c in space})
    return f"num_warps in {warps} x num_stages in {stages} ({len(space)} configs)"


@dataclass
class ConfigTime:
    config: Config
    median_ms: float | None
    error: str = ""


@dataclass
class Baseline:
    contract: str
    instance: str
    space: str
    best: Config | None
    tried: list[ConfigTime] = field(default_factory=list)


def _torch_domain(x: Any, domain: Any) -> Any:
    """harness.inputs' input domains on a torch tensor of normals."""
    import torch

    if domain is None:
        return x
    if domain in ("positive", "nonnegative"):
        x = x.abs()
        return torch.where(x == 0, torch.ones_like(x), x) if domain == "positive" else x
    if domain == "nonzero":
        return torch.where(x == 0, torch.ones_like(x), x)
    if domain == "probability":
        ax = x.abs()
        return torch.where(ax <= 1, ax, 1 / ax.clamp(min=1))
    lo, hi = domain
    return x.clamp(lo, hi)


def device_inputs(contract: Contract, instance: str, sets: int, seed: int) -> list[dict[str, Any]]:
    """``sets`` input sets of torch tensors on the GPU (outputs allocated, not filled)."""
    import torch

    r = contract.resolve(instance)
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    out = []
    for _ in range(sets):
        tensors = {}
        for t in contract.tensors:
            dt = _dt.dtype(t.dtype)
            tdtype = getattr(torch, dt.torch)
            shape = r.shapes[t.name]
            domain = contract.input_domain.get(t.name)
            if not t.is_input:
                tensors[t.name] = torch.empty(shape, dtype=tdtype, device="cuda")
            elif dt.is_float:
                x = _torch_domain(torch.randn(shape, generator=g, device="cuda", dtype=torch.float32), domain)
                tensors[t.name] = x.to(tdtype)
            else:
                lo, hi = _inputs._INT_RANGES[dt.name]
                if isinstance(domain, tuple):
                    lo, hi = max(lo, int(domain[0])), min(hi, int(domain[1]))
                tensors[t.name] = torch.randint(lo, hi + 1, shape, generator=g, device="cuda",
                                                dtype=torch.int64).to(tdtype)
        out.append(tensors)
    return out


def input_sets(contract: Contract, instance: str, l2_bytes: int, cap_bytes: int = 24 << 30) -> int:
    """Enough input sets that rotating through them leaves nothing in the L2 (at least 2, at most 4),
    within ``cap_bytes`` of device memory."""
    from .roofline import min_bytes

    per = max(min_bytes(contract, instance), 1)
    want = max(2, min(4, -(-4 * l2_bytes // per)))
    return max(1, min(want, cap_bytes // per))


class TritonSide:
    """Triton's kernel at one config as a timing Side (launched through its JIT)."""

    def __init__(self, contract: Contract, instance: str, config: Config, sets: list[dict[str, Any]]) -> None:
        r = contract.resolve(instance)
        self.name, self.sets_data, self.config = "baseline", sets, config
        self.sets = len(sets)
        self._grid, self._consts = r.grid, r.constexprs
        self._args = [contract.kernel_args(s, instance) for s in sets]
        self._kernel, self._options = contract.kernel, dict(contract.options)

    def launch(self, index: int) -> None:
        self._kernel[self._grid](*self._args[index], **self._consts, num_warps=self.config.num_warps,
                                 num_stages=self.config.num_stages, **self._options)


def autotune(contract: Contract, instance: str, clock: Any, sets: list[dict[str, Any]], space: list[Config],
             reps: int = 5) -> Baseline:
    """Time every config of ``space`` briefly; the fastest is the baseline."""
    from .timing import TimingPlan, sample_sides

    import numpy as np

    plan = TimingPlan(warmup=2, min_reps=reps, max_reps=reps)
    result = Baseline(contract.name, instance, describe_space(space), None)
    for cfg in space:
        side = TritonSide(contract, instance, cfg, sets)
        try:
            ms = float(np.median(sample_sides([side], clock, plan)[side.name]))
            result.tried.append(ConfigTime(cfg, ms))
        except Exception as e:  # out of resources, a compile error: not a candidate config
            result.tried.append(ConfigTime(cfg, None, f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"))
    timed = [t for t in result.tried if t.median_ms is not None]
    result.best = min(timed, key=lambda t: t.median_ms).config if timed else None
    return result


def _warm(job: tuple[str, str, int, int]) -> str:
    """Compile one config through Triton's JIT without launching it (fills the on-disk cache)."""
    name, instance, warps, stages = job
    try:
        import torch

        from .. import suite

        c = suite.get(name)
        r = c.resolve(instance)
        tensors = {t.name: torch.empty(r.shapes[t.name], dtype=getattr(torch, _dt.dtype(t.dtype).torch),
                                       device="cuda") for t in c.tensors}
        c.kernel.warmup(*c.kernel_args(tensors, instance), grid=r.grid, **r.constexprs, num_warps=warps,
                        num_stages=stages, **c.options)
        del tensors
        return ""
    except Exception as e:
        return f"{name} {warps}/{stages}: {type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"


def precompile(jobs: list[tuple[str, str, Config]], workers: int) -> list[str]:
    """Compile every (contract, instance, config) in ``workers`` processes; the errors."""
    import concurrent.futures
    import multiprocessing

    if workers <= 1 or not jobs:
        return [e for e in map(_warm, [(n, i, c.num_warps, c.num_stages) for n, i, c in jobs]) if e]
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=ctx) as pool:
        errors = list(pool.map(_warm, [(n, i, c.num_warps, c.num_stages) for n, i, c in jobs]))
    return [e for e in errors if e]

