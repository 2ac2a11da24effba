"""LayerNorm: ``y = (x - mean) / sqrt(var + eps) * w + b`` per row of an fp32 ``[M, N]`` matrix.

One program per row; the row lives in registers, the variance is the two-pass
``mean((x - mean)^2)`` (not ``E[x^2] - mean^2``, which cancels).  Masked lanes are excluded from
both passes.  The "large" inputs are capped at 1e17 so that ``(x - mean)^2`` summed over a row
stays finite in fp32 (the float64 reference would not overflow there); weight and bias stay
O(1) there, since ``xhat * w + b`` with both terms near 1e38 cancels by design, not by bug.
"""
from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from harness.contract import Contract, Scalar, Tensor


@triton.jit
def layernorm_kernel(x, w, b, y, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    xv = tl.load(x + row * N + cols, mask=mask, other=0.0)
    mean = tl.sum(xv, axis=0) / N
    d = tl.where(mask, xv - mean, 0.0)
    var = tl.sum(d * d, axis=0) / N
    rstd = 1.0 / tl.sqrt(var + eps)
    wv = tl.load(w + cols, mask=mask, other=0.0)
    bv = tl.load(b + cols, mask=mask, other=0.0)
    tl.store(y + row * N + cols, d * rstd * wv + bv, mask=mask)


def reference(x: np.ndarray, w: np.ndarray, b: np.ndarray, N: int, eps: float) -> dict[str, np.ndarray]:
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=1, keepdims=True)
    var = ((x64 - mean) ** 2).mean(axis=1, keepdims=True)
    return {"y": (x64 - mean) / np.sqrt(var + eps) * w.astype(np.float64) + b.astype(np.float64)}


CONTRACT = Contract(
    name="layernorm",
    description="LayerNorm over the last dim of [M, N] fp32 with weight and bias",
    kernel=layernorm_kernel,
    args=[
        Tensor("x", "fp32", ("M", "N"), role="in"),
        Tensor("w", "fp32", ("N",), role="in"),
        Tensor("b", "fp32", ("N",), role="in"),
        Tensor("y", "fp32", ("M", "N"), role="out"),
        Scalar("N", "i32", value="N"),
        Scalar("eps", "fp32", value=1e-5),
    ],
    constexprs={"BLOCK_N": lambda d: triton.next_power_of_2(d["N"])},
    grid=lambda d: (d["M"], 1, 1),
    num_warps=8, num_stages=1,
    reference=reference,
    # verify: N = 3008, a multiple of 16 (as the bench's) with the bench's BLOCK_N = 4096, so the
    # same PTX; 1088 masked lanes per row.
    instances={"verify": {"M": 3, "N": 3008}, "bench": {"M": 8192, "N": 4096}},
    large_limit={"x": 1e17, "w": 4.0, "b": 4.0},
    tolerance={"fp32": (2e-5, 2e-6)},
)
