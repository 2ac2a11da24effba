"""RMSNorm: ``y[m, :] = x[m, :] / sqrt(mean(x[m, :]^2) + eps) * w``.

One program normalises one row held entirely in registers (``BLOCK_N`` is the next power of two
of ``N``; lanes past ``N`` are masked to zero so they add nothing to the sum of squares).
Storage fp16, statistics fp32.
"""
from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from harness.contract import Contract, Scalar, Tensor


@triton.jit
def rmsnorm_kernel(x, w, y, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    xv = tl.load(x + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    ms = tl.sum(xv * xv, axis=0) / N
    inv = 1.0 / tl.sqrt(ms + eps)
    wv = tl.load(w + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y + row * N + cols, (xv * inv * wv).to(tl.float16), mask=mask)


def reference(x: np.ndarray, w: np.ndarray, N: int, eps: float) -> dict[str, np.ndarray]:
    x64 = x.astype(np.float64)
    ms = np.mean(x64 * x64, axis=1, keepdims=True)
    return {"y": x64 / np.sqrt(ms + eps) * w.astype(np.float64)}


CONTRACT = Contract(
    name="rmsnorm",
    description="RMSNorm over the last dim of [M, N] fp16 with fp16 weight, fp32 statistics",
    kernel=rmsnorm_kernel,
    args=[
        Tensor("x", "fp16", ("M", "N"), role="in"),
        Tensor("w", "fp16", ("N",), role="in"),
        Tensor("y", "fp16", ("M", "N"), role="out"),
        Scalar("N", "i32", value="N"),
        Scalar("eps", "fp32", value=1e-6),
    ],
    constexprs={"BLOCK_N": lambda d: triton.next_power_of_2(d["N"])},
    grid=lambda d: (d["M"], 1, 1),
    num_warps=8, num_stages=1,
    reference=reference,
    # verify: N = 6000, a multiple of 16 (as the bench's) with the bench's BLOCK_N = 8192, so the
    # same PTX; 2192 masked lanes per row.
    instances={"verify": {"M": 3, "N": 6000}, "bench": {"M": 8192, "N": 8192}},
)
