"""Reduction: row sums ``y[m] = sum_n x[m, n]`` of an fp32 ``[M, N]`` matrix.

Each program reduces one row in ``BLOCK_N`` chunks: a vector accumulator gathers the chunks
lane-wise and is tree-reduced once at the end.  The "large" inputs are capped at 1e34 so that
no partial sum of up to 8192 terms can overflow fp32 when the float64 total would not.
Errors are judged against ``sum |x|`` (cancellation).
"""
from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from harness.contract import Contract, Scalar, Tensor


def _block_n(d: dict) -> int:
    """The same for every instance (the verify build is the timed one)."""
    return 1024


@triton.jit
def rowsum_kernel(x, y, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for n0 in range(0, N, BLOCK_N):
        nn = n0 + cols
        acc += tl.load(x + row.to(tl.int64) * N + nn, mask=nn < N, other=0.0)
    tl.store(y + row, tl.sum(acc, axis=0))


def reference(x: np.ndarray, N: int) -> dict[str, np.ndarray]:
    return {"y": x.astype(np.float64).sum(axis=1)}


CONTRACT = Contract(
    name="rowsum",
    description="reduction: y[m] = sum_n x[m, n] over fp32 [M, N], fp32 accumulation",
    kernel=rowsum_kernel,
    args=[
        Tensor("x", "fp32", ("M", "N"), role="in"),
        Tensor("y", "fp32", ("M",), role="out"),
        Scalar("N", "i32", value="N"),
    ],
    constexprs={"BLOCK_N": _block_n},
    grid=lambda d: (d["M"], 1, 1),
    num_warps=4, num_stages=2,
    reference=reference,
    # verify: N a multiple of 16 like the bench's (the same PTX), in 3 steps of 1024, the last 16.
    instances={"verify": {"M": 3, "N": 2064}, "bench": {"M": 8192, "N": 8192}},
    large_limit=1e34,
    scale_by_abs_reference=True,
)
