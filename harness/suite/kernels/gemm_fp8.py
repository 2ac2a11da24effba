"""FP8 GEMM: ``C = scale * (A @ B)`` with E4M3 ``A [M, K]`` and ``B [K, N]``, fp32 accumulation
(``tl.dot`` on FP8 tensor cores, sm_89+), one fp32 per-tensor scale (the product of the two
quantisation scales), fp16 result.

Tiling and masking as in ``gemm_fp16``; K tiles are 64 wide (the FP8 MMA K granule is 32).
"""
from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from harness.contract import Contract, Scalar, Tensor, cdiv


def tiles(d: dict) -> tuple[int, int, int]:
    if d["M"] * d["N"] < 1 << 16:
        return 32, 32, 64
    return 128, 128, 128


@triton.jit
def gemm_fp8_kernel(a, b, c, M, N, K, scale,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        at = tl.load(a + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        bt = tl.load(b + kk[:, None] * N + rn[None, :], mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(at, bt, acc)
    cmask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(c + rm[:, None] * N + rn[None, :], (acc * scale).to(tl.float16), mask=cmask)


def reference(a: np.ndarray, b: np.ndarray, M: int, N: int, K: int, scale: float) -> dict[str, np.ndarray]:
    return {"c": scale * (a.astype(np.float64) @ b.astype(np.float64))}


CONTRACT = Contract(
    name="gemm_fp8",
    description="C = scale * (A @ B), fp8 e4m3 [M,K] x [K,N] -> fp16 [M,N], fp32 accumulation",
    kernel=gemm_fp8_kernel,
    args=[
        Tensor("a", "fp8e4m3", ("M", "K"), role="in"),
        Tensor("b", "fp8e4m3", ("K", "N"), role="in"),
        Tensor("c", "fp16", ("M", "N"), role="out"),
        Scalar("M", "i32", value="M"),
        Scalar("N", "i32", value="N"),
        Scalar("K", "i32", value="K"),
        Scalar("scale", "fp32", value=0.25),
    ],
    constexprs={"BLOCK_M": lambda d: tiles(d)[0], "BLOCK_N": lambda d: tiles(d)[1],
                "BLOCK_K": lambda d: tiles(d)[2]},
    grid=lambda d: (cdiv(d["M"], tiles(d)[0]), cdiv(d["N"], tiles(d)[1]), 1),
    num_warps=4, num_stages=3,
    min_arch=89,
    reference=reference,
    instances={"verify": {"M": 40, "N": 48, "K": 100}, "bench": {"M": 8192, "N": 8192, "K": 8192}},
    scale_by_abs_reference=True,
)
