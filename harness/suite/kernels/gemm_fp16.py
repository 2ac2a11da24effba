"""GEMM: ``C = A @ B`` with ``A [M, K]``, ``B [K, N]``, ``C [M, N]`` fp16, row-major, fp32
accumulation on the tensor cores (``tl.dot``).

Program ``(pid_m, pid_n)`` computes a ``BLOCK_M x BLOCK_N`` tile of C, walking K in ``BLOCK_K``
steps; out-of-range rows, columns and the K tail are masked to zero (zeros add nothing to the
dot).  Errors are judged against ``|A| @ |B|`` as well, since dot products may cancel.
"""
from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from harness.contract import Contract, Scalar, Tensor, cdiv


def tiles(d: dict) -> tuple[int, int, int]:
    """(BLOCK_M, BLOCK_N, BLOCK_K), the same for every instance: the verify instance compiles to
    the PTX that the bench instance times (wgmma on sm_90a, tcgen05 on sm_100a)."""
    return 128, 128, 64


def tile_constexprs(tiles_of) -> dict:
    """The BLOCK_M/N/K constexprs of a contract whose tiles come from `tiles_of(dims)`."""
    return {"BLOCK_M": lambda d: tiles_of(d)[0], "BLOCK_N": lambda d: tiles_of(d)[1],
            "BLOCK_K": lambda d: tiles_of(d)[2]}


def tile_grid(tiles_of):
    """One program per (BLOCK_M, BLOCK_N) tile of C."""
    return lambda d: (cdiv(d["M"], tiles_of(d)[0]), cdiv(d["N"], tiles_of(d)[1]), 1)


@triton.jit
def matmul_tile(a, b, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """This program's fp32 tile of A[M,K] @ B[K,N] (row-major), with its row and column indices."""
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        at = tl.load(a + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        bt = tl.load(b + kk[:, None] * N + rn[None, :], mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(at, bt, acc)
    return acc, rm, rn


@triton.jit
def gemm_kernel(a, b, c, M, N, K,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    acc, rm, rn = matmul_tile(a, b, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K)
    cmask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=cmask)


def reference(a: np.ndarray, b: np.ndarray, M: int, N: int, K: int) -> dict[str, np.ndarray]:
    return {"c": a.astype(np.float64) @ b.astype(np.float64)}


CONTRACT = Contract(
    name="gemm_fp16",
    description="C = A @ B, fp16 [M,K] x [K,N] -> fp16 [M,N], fp32 accumulation via tl.dot",
    kernel=gemm_kernel,
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
    # verify: M, N, K multiples of 16 like the bench's (same tt.divisibility, hence the same PTX),
    # none a multiple of the tile: 2 x 1 programs, the second row block ragged (16 of 128 rows), every
    # column block ragged (80 of 128), K = 144 in 3 steps of 64 (the last 16 wide) so the 3-stage
    # pipeline reaches its steady state.
    instances={"verify": {"M": 144, "N": 80, "K": 144}, "bench": {"M": 8192, "N": 8192, "K": 8192}},
    scale_by_abs_reference=True,
)
