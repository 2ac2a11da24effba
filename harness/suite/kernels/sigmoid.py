"""Sigmoid: ``y = 1 / (1 + exp(-x))`` elementwise, fp16 in and out, fp32 inside.

For very negative ``x`` the fp32 ``exp(-x)`` overflows to +inf and ``1 / inf`` is 0, which is
also the correctly rounded fp16 result, so no clamping is needed.
"""
from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from harness.contract import Contract, Scalar, Tensor, cdiv

BLOCK = 1024


@triton.jit
def sigmoid_kernel(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x + offs, mask=mask, other=0.0).to(tl.float32)
    s = 1.0 / (1.0 + tl.exp(-x))
    tl.store(y + offs, s.to(tl.float16), mask=mask)


def reference(x: np.ndarray, n: int) -> dict[str, np.ndarray]:
    x64 = x.astype(np.float64)
    with np.errstate(over="ignore"):
        return {"y": 1.0 / (1.0 + np.exp(-x64))}


CONTRACT = Contract(
    name="sigmoid",
    description="y = 1 / (1 + exp(-x)), elementwise, fp16 storage, fp32 math",
    kernel=sigmoid_kernel,
    args=[
        Tensor("x", "fp16", ("N",), role="in"),
        Tensor("y", "fp16", ("N",), role="out"),
        Scalar("n", "i32", value="N"),
    ],
    constexprs={"BLOCK": BLOCK},
    grid=lambda d: (cdiv(d["N"], BLOCK), 1, 1),
    num_warps=4, num_stages=1,
    reference=reference,
    # verify: n a multiple of 16 like the bench's (the same PTX): 3 programs, the last ragged.
    instances={"verify": {"N": 2112}, "bench": {"N": 1 << 26}},
)
