"""FP8 GEMM: ``C = scale * (A @ W^T)`` with E4M3 activations ``A [M, K]`` and weights
``W [N, K]`` (both K-contiguous, the layout FP8 tensor-core MMAs read directly), fp32
accumulation (``tl.dot``, sm_89+), one fp32 per-tensor scale (the product of the two
quantisation scales), fp16 result.

Tiling and masking as in ``gemm_fp16``; the W tile is loaded as its ``[BLOCK_K, BLOCK_N]``
transpose view.  K tiles are 128 wide (the FP8 MMA K granule is 32).
"""
from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from harness.contract import Contract, Scalar, Tensor
from harness.suite.kernels.gemm_fp16 import tile_constexprs, tile_grid


def tiles(d: dict) -> tuple[int, int, int]:
    """(BLOCK_M, BLOCK_N, BLOCK_K), the same for every instance (the verify build is the timed one)."""
    return 128, 128, 128


@triton.jit
def gemm_fp8_kernel(a, w, c, M, N, K, scale,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        at = tl.load(a + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        bt = tl.load(w + rn[None, :] * K + kk[:, None], mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(at, bt, acc)
    cmask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(c + rm[:, None] * N + rn[None, :], (acc * scale).to(tl.float16), mask=cmask)


def reference(a: np.ndarray, w: np.ndarray, M: int, N: int, K: int, scale: float) -> dict[str, np.ndarray]:
    return {"c": scale * (a.astype(np.float64) @ w.astype(np.float64).T)}


CONTRACT = Contract(
    name="gemm_fp8",
    description="C = scale * (A @ W^T), fp8 e4m3 A [M,K], W [N,K] -> fp16 [M,N], fp32 accumulation",
    kernel=gemm_fp8_kernel,
    args=[
        Tensor("a", "fp8e4m3", ("M", "K"), role="in"),
        Tensor("w", "fp8e4m3", ("N", "K"), role="in"),
        Tensor("c", "fp16", ("M", "N"), role="out"),
        Scalar("M", "i32", value="M"),
        Scalar("N", "i32", value="N"),
        Scalar("K", "i32", value="K"),
        Scalar("scale", "fp32", value=0.25),
    ],
    constexprs=tile_constexprs(tiles),
    grid=tile_grid(tiles),
    num_warps=8, num_stages=4,
    min_arch=89,
    reference=reference,
    flops=lambda d: 2.0 * d["M"] * d["N"] * d["K"],
    # verify: M, N, K multiples of 16 like the bench's, none of the tile: 2 x 1 programs (the second
    # 16 rows of 128), ragged columns (80 of 128), K = 400 in 4 steps of 128 (the last 16 wide), as
    # many steps as the pipeline has stages.
    instances={"verify": {"M": 144, "N": 80, "K": 400}, "bench": {"M": 8192, "N": 8192, "K": 8192}},
    scale_by_abs_reference=True,
)
