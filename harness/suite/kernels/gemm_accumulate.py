"""GEMM accumulating into an fp32 output: ``C += A @ B`` with ``A [M, K]``, ``B [K, N]`` fp16 and
``C [M, N]`` fp32 (read and written), fp32 accumulation on the tensor cores.

This is the weight-gradient update of training (``dW += X^T dY`` over a batch of tokens, cuBLAS's
``beta = 1``): the output tile is small next to the reduction, so a kernel may split K over several
programs that add their partial products into C with atomics. ``gemm_fp16`` cannot host such a
kernel: its fp16 output is written once (the harness fills it with NaN sentinels first), so a
split-K kernel would have to reduce partials in fp16 or through a scratch buffer the contract does
not have. Here C is an input too, so adding into it is the contract.

Triton's kernel is the plain tiled one (``gemm_fp16``'s tiles): each program reads its C tile once,
adds its full-K product and writes it back. Errors are judged against ``|C| + |A| @ |B|``.
"""
from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from harness.contract import Contract, Scalar, Tensor
from harness.suite.kernels.gemm_fp16 import matmul_tile, tile_constexprs, tile_grid, tiles


@triton.jit
def gemm_accumulate_kernel(a, b, c, M, N, K,
                           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    acc, rm, rn = matmul_tile(a, b, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K)
    cmask = (rm[:, None] < M) & (rn[None, :] < N)
    ptrs = c + rm[:, None] * N + rn[None, :]
    tl.store(ptrs, tl.load(ptrs, mask=cmask, other=0.0) + acc, mask=cmask)


def reference(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> dict[str, np.ndarray]:
    return {"c": c.astype(np.float64) + a.astype(np.float64) @ b.astype(np.float64)}


CONTRACT = Contract(
    name="gemm_accumulate",
    description="C += A @ B, fp16 [M,K] x [K,N] added into fp32 [M,N] (weight-gradient accumulation), via tl.dot",
    kernel=gemm_accumulate_kernel,
    args=[
        Tensor("a", "fp16", ("M", "K"), role="in"),
        Tensor("b", "fp16", ("K", "N"), role="in"),
        Tensor("c", "fp32", ("M", "N"), role="inout"),
        Scalar("M", "i32", value="M"),
        Scalar("N", "i32", value="N"),
        Scalar("K", "i32", value="K"),
    ],
    constexprs=tile_constexprs(tiles),
    grid=tile_grid(tiles),
    num_warps=4, num_stages=3,
    reference=reference,
    # verify: M, N, K multiples of 16 like the bench's (the same PTX): 2 x 1 programs, ragged rows
    # (16 of 128) and columns (80 of 128); K = 528 in 9 steps of 64, the last 16 wide (long enough
    # for a split-K candidate to cut it in several parts).
    # bench: a 1024 x 1024 weight gradient over 32768 tokens: 64 output tiles of 128 x 128 for 132
    # SMs, the shape where splitting K pays.
    instances={"verify": {"M": 144, "N": 80, "K": 528}, "bench": {"M": 1024, "N": 1024, "K": 32768}},
    # fp32 accumulation of K products: error ~ K * 2^-24 of |C| + |A| @ |B| at worst; the default
    # fp32 tolerance against that scale covers it at the bench's K.
    scale_by_abs_reference=True,
    # C's "large" values stay far below fp32 overflow so that adding A @ B cannot overflow where
    # the float64 reference does not.
    large_limit={"c": 1e30},
)
