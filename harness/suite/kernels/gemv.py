"""GEMV: ``y[m] = sum_k A[m, k] * x[k]``, fp16 storage, fp32 accumulation, fp16 result.

Each program owns ``BLOCK_M`` rows and walks ``K`` in ``BLOCK_K`` tiles, accumulating a
``[BLOCK_M, BLOCK_K]`` fp32 partial product that is reduced once at the end.  Rows and the
last K tile are masked.  Errors are judged against the reference on ``|A|, |x|`` as well
(sums may cancel; fp32 accumulation is only accurate relative to ``sum |A||x|``).
"""
from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from harness.contract import Contract, Scalar, Tensor, cdiv


def _block_m(d: dict) -> int:
    """Rows per program, the same for every instance (the verify build is the timed one)."""
    return 64


def _block_k(d: dict) -> int:
    return 128


@triton.jit
def gemv_kernel(a, x, y, M, K, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rmask = rows < M
    cols = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_K), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + cols
        kmask = kk < K
        av = tl.load(a + rows[:, None] * K + kk[None, :], mask=rmask[:, None] & kmask[None, :], other=0.0)
        xv = tl.load(x + kk, mask=kmask, other=0.0)
        acc += av.to(tl.float32) * xv.to(tl.float32)[None, :]
    tl.store(y + rows, tl.sum(acc, axis=1).to(tl.float16), mask=rmask)


def reference(a: np.ndarray, x: np.ndarray, M: int, K: int) -> dict[str, np.ndarray]:
    return {"y": a.astype(np.float64) @ x.astype(np.float64)}


CONTRACT = Contract(
    name="gemv",
    description="y = A @ x, A [M, K] fp16, x [K] fp16, fp32 accumulation, y fp16",
    kernel=gemv_kernel,
    args=[
        Tensor("a", "fp16", ("M", "K"), role="in"),
        Tensor("x", "fp16", ("K",), role="in"),
        Tensor("y", "fp16", ("M",), role="out"),
        Scalar("M", "i32", value="M"),
        Scalar("K", "i32", value="K"),
    ],
    constexprs={"BLOCK_M": _block_m, "BLOCK_K": _block_k},
    grid=lambda d: (cdiv(d["M"], _block_m(d)), 1, 1),
    num_warps=4, num_stages=2,
    reference=reference,
    # verify: M, K multiples of 16 like the bench's (the same PTX): 2 programs, the second ragged
    # (16 of 64 rows); K in 3 steps of 128, the last 16 wide.
    instances={"verify": {"M": 80, "K": 272}, "bench": {"M": 16384, "K": 8192}},
    scale_by_abs_reference=True,
)
