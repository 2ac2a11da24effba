"""Run a contract's PTX on the CPU emulator (symexec) and compare with the reference.

Host arrays follow harness.dtypes (bf16/fp8 held as float32 on the exact grid); they are encoded
to the device's bit layout before the launch and decoded after it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import ptx_parser
from semantics.formats import BF16, E4M3, E5M2, decode, round_f64
from symexec import Launch, load_program, run_kernel

from . import dtypes as _dt
from .compile import CompiledPTX, compile_contract
from .contract import Comparison, Contract

_NARROW = {"bf16": (BF16, np.uint16), "fp8e4m3": (E4M3, np.uint8), "fp8e5m2": (E5M2, np.uint8)}


def to_device(arr: np.ndarray, dtype_name: str) -> np.ndarray:
    """Host storage -> the array whose bytes the kernel sees."""
    name = _dt.canonical(dtype_name)
    if name in _NARROW:
        fmt, store = _NARROW[name]
        bits = round_f64(np.asarray(arr, dtype=np.float64).reshape(-1), fmt, "rn",
                         satfinite=name == "fp8e4m3")
        return bits.astype(store).reshape(np.shape(arr))
    return np.ascontiguousarray(arr, dtype=_dt.dtype(name).storage)


def from_device(raw: np.ndarray, dtype_name: str, shape: tuple[int, ...]) -> np.ndarray:
    """Bytes of a device buffer -> host storage of `dtype_name` with `shape`."""
    name = _dt.canonical(dtype_name)
    count = int(np.prod(shape))
    if name in _NARROW:
        fmt, store = _NARROW[name]
        bits = raw.view(store)[:count]
        return decode(bits, fmt).astype(np.float32).reshape(shape)
    return raw.view(_dt.dtype(name).storage)[:count].reshape(shape).copy()


@dataclass
class Emulation:
    contract: str
    target: str
    outputs: dict[str, np.ndarray]
    seconds: float
    steps: int
    comparisons: list[Comparison] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.comparisons)


def launch_for(contract: Contract, compiled: CompiledPTX, arrays: dict[str, np.ndarray],
               instance: str) -> Launch:
    r = contract.resolve(instance)
    buffers = {t.name: to_device(arrays[t.name], t.dtype) for t in contract.tensors}
    params: list[Any] = []
    for p in compiled.params:
        if p.arg is None:  # Triton's hidden scratch pointers: null unless the kernel uses scratch
            params.append(0)
        elif p.arg in buffers:
            params.append(p.arg)
        else:
            v = r.scalars[p.arg]
            params.append({"float": v} if isinstance(v, float) else int(v))
    return Launch(r.grid, (compiled.threads_per_block, 1, 1), buffers, params,
                  dynamic_shared_bytes=compiled.shared, kernel=compiled.entry)


def emulate(contract: Contract, arch: str = "sm_90a", instance: str = "verify", *,
            arrays: dict[str, np.ndarray] | None = None, distribution: str = "normal", seed: int = 0,
            compare: bool = True) -> Emulation:
    compiled = compile_contract(contract, arch, instance)
    module = ptx_parser.parse(compiled.ptx, f"{contract.name}.{compiled.target}.ptx")
    prog = load_program(module, compiled.entry)
    if arrays is None:
        arrays = contract.make_inputs(instance, distribution, seed)
    launch = launch_for(contract, compiled, arrays, instance)
    t0 = time.perf_counter()
    glob, _, stats = run_kernel(prog, launch)
    dt = time.perf_counter() - t0
    r = contract.resolve(instance)
    outputs = {t.name: from_device(glob.by_name(t.name).data, t.dtype, r.shapes[t.name])
               for t in contract.tensors if t.is_output}
    result = Emulation(contract.name, compiled.target, outputs, dt, stats.steps)
    if compare:
        expected = contract.run_reference(arrays, instance)
        result.comparisons = contract.compare(outputs, expected, contract.abs_scale(arrays, instance))
    return result
