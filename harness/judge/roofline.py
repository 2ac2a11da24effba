"""The fastest a launch could possibly be: bytes over peak bandwidth, flops over peak rate.

One table of device peaks (vendor datasheets; dense, no sparsity). The floor uses the *highest*
rate any legal implementation could use: the tensor-core rate of the contract's narrowest floating
input (the static gate rejects narrower tensor-core operands), so a time below it is impossible,
not merely unlikely (harness-integrity class 13). Bytes count each input read once and each
output written once (an in/out tensor both), with the L2 flushed before every timed launch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import dtypes as _dt
from ..contract import Contract


@dataclass(frozen=True)
class DevicePeaks:
    name: str
    bandwidth: float  # bytes/s of device memory
    rates: dict[str, float]  # operations/s by the narrowest operand format the work can use
    l2_bytes: int


#: NVIDIA H200 SXM datasheet: 4.8 TB/s HBM3e; dense tensor rates FP8 1979, FP16/BF16 989.5,
#: TF32 494.7 TFLOP/s; FP32 67, FP64 34 TFLOP/s (tensor FP64 67); 60 MiB L2 (read by torch on an
#: H200 here: bench/results/h200-2026-11-29).
H200 = DevicePeaks("NVIDIA H200", 4.8e12, {"fp8e4m3": 1979e12, "fp8e5m2": 1979e12, "fp16": 989.5e12,
                                           "bf16": 989.5e12, "fp32": 494.7e12, "fp64": 67e12,
                                           "i8": 1979e12, "u8": 1979e12}, 60 << 20)
PEAKS = {"h200": H200}


def peaks_for(device_name: str) -> DevicePeaks | None:
    """The table row for a device name as CUDA reports it (None when unknown: no floor is applied)."""
    low = device_name.lower()
    return next((p for key, p in PEAKS.items() if key in low), None)


def min_bytes(contract: Contract, instance: str) -> int:
    r = contract.resolve(instance)
    total = 0
    for t in contract.tensors:
        n = int(np.prod(r.shapes[t.name], dtype=np.int64)) * (_dt.dtype(t.dtype).bits // 8)
        total += n * (2 if t.role == "inout" else 1)
    return total


def flops(contract: Contract, instance: str) -> float:
    return float(contract.flops(contract.resolve(instance).dims)) if contract.flops is not None else 0.0


def peak_rate(contract: Contract, peaks: DevicePeaks) -> float:
    names = [_dt.canonical(t.dtype) for t in contract.tensors if t.is_input]
    rates = [peaks.rates[n] for n in names if n in peaks.rates]
    return max(rates) if rates else max(peaks.rates.values())


@dataclass(frozen=True)
class Floor:
    bytes: int
    flops: float
    memory_ms: float
    compute_ms: float

    @property
    def ms(self) -> float:
        return max(self.memory_ms, self.compute_ms)


def floor(contract: Contract, instance: str, peaks: DevicePeaks) -> Floor:
    b, f = min_bytes(contract, instance), flops(contract, instance)
    return Floor(b, f, b / peaks.bandwidth * 1e3, f / peak_rate(contract, peaks) * 1e3 if f else 0.0)
