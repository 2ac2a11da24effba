"""Fused GEMM + SiLU: ``C = silu(A @ B)`` with ``silu(z) = z / (1 + exp(-z))``.

The fp32 accumulator tile goes through SiLU in registers before the single fp16 store, so the
pre-activation never reaches memory.  Tiling and masking as in ``gemm_fp16``.  SiLU is
1.1-Lipschitz, so the accumulation error bound against ``|A| @ |B|`` still applies (the check
also scales by ``silu(|A| @ |B|)``, which is at least half of ``|A| @ |B|``).
"""
from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from harness.contract import Contract, Scalar, Tensor
from harness.suite.kernels.gemm_fp16 import matmul_tile, tile_constexprs, tile_grid, tiles


@triton.jit
def gemm_silu_kernel(a, b, c, M, N, K,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    acc, rm, rn = matmul_tile(a, b, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K)
    act = acc / (1.0 + tl.exp(-acc))
    cmask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(c + rm[:, None] * N + rn[None, :], act.to(tl.float16), mask=cmask)


def reference(a: np.ndarray, b: np.ndarray, M: int, N: int, K: int) -> dict[str, np.ndarray]:
    z = a.astype(np.float64) @ b.astype(np.float64)
    with np.errstate(over="ignore"):
        return {"c": z / (1.0 + np.exp(-z))}


CONTRACT = Contract(
    name="gemm_silu",
    description="C = silu(A @ B), fp16 [M,K] x [K,N] -> fp16, fp32 accumulation, fused epilogue",
    kernel=gemm_silu_kernel,
    args=[
        Tensor("a", "fp16", ("M", "K"), role="in"),
        Tensor("b", "fp16", ("K", "N"), role="in"),
        Tensor("c", "fp16", ("M", "N"), role="out"),
        Scalar("M", "i32", value="M"),
        Scalar("N", "i32", value="N"),
        Scalar("K", "i32", value="K"),
    ],
    constexprs=tile_constexprs(tiles),
    grid=tile_grid(tiles),
    num_warps=4, num_stages=3,
    reference=reference,
    flops=lambda d: 2.0 * d["M"] * d["N"] * d["K"],
    # verify: as gemm_fp16's (M, N, K multiples of 16 but not of the tile), transposed: 1 x 2
    # programs, ragged rows (80 of 128) and a ragged second column block (16 of 128), K in 3 steps.
    instances={"verify": {"M": 80, "N": 144, "K": 144}, "bench": {"M": 8192, "N": 14336, "K": 4096}},
    scale_by_abs_reference=True,
)
