"""Persistent GEMM through tensor descriptors: ``C = A @ B`` with ``A [M, K]``, ``B [K, N]``,
``C [M, N]`` fp16, row-major, fp32 accumulation on the tensor cores.

``SMS`` programs (the number of multiprocessors, capped by the number of tiles) each walk the
``BLOCK_M x BLOCK_N`` tiles of C with a stride of ``SMS`` (the persistent pattern), in a grouped
order that keeps ``GROUP_M`` row blocks of A hot in L2.  Every operand moves through TMA: A, B
and C are host-side tensor descriptors (``TensorDescriptor``), so on sm_90a Triton loads the tiles
with ``cp.async.bulk.tensor`` into swizzled shared memory (completing on mbarriers), multiplies
them with ``wgmma.mma_async`` and stores C with a bulk-group tensor store.  Out-of-range rows,
columns and the K tail are zero-filled by the copies and clipped by the store.

The verify instance pretends the GPU has 2 multiprocessors, so each of its 2 programs walks 3
tiles; the bench instance uses the H200's 132.
"""
from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from harness.contract import Contract, Scalar, TensorDesc, cdiv

BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M = 128, 128, 64, 8


@triton.jit
def tile_coords(tile, num_m, num_n, GROUP_M: tl.constexpr):
    """(row block, column block) of tile number `tile` in the grouped order."""
    per_group = GROUP_M * num_n
    first_m = (tile // per_group) * GROUP_M
    rows = tl.minimum(num_m - first_m, GROUP_M)
    pm = first_m + (tile % per_group) % rows
    pn = (tile % per_group) // rows
    return pm, pn


@triton.jit
def gemm_tma_persistent_kernel(a, b, c, M, N, K, SMS,
                               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                               GROUP_M: tl.constexpr):
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    k_steps = tl.cdiv(K, BLOCK_K)
    for tile in range(tl.program_id(0), num_m * num_n, SMS):
        pm, pn = tile_coords(tile, num_m, num_n, GROUP_M)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ks in range(k_steps):
            at = a.load([pm * BLOCK_M, ks * BLOCK_K])
            bt = b.load([ks * BLOCK_K, pn * BLOCK_N])
            acc = tl.dot(at, bt, acc)
        c.store([pm * BLOCK_M, pn * BLOCK_N], acc.to(tl.float16))


def programs(d: dict) -> int:
    return min(d["SMS"], cdiv(d["M"], BLOCK_M) * cdiv(d["N"], BLOCK_N))


def reference(a: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
    return {"c": a.astype(np.float64) @ b.astype(np.float64)}


CONTRACT = Contract(
    name="gemm_tma_persistent",
    description="persistent C = A @ B, fp16 [M,K] x [K,N] -> fp16 [M,N] through tensor descriptors (TMA + wgmma)",
    kernel=gemm_tma_persistent_kernel,
    args=[
        TensorDesc("a", "fp16", ("M", "K"), role="in", block=("BLOCK_M", "BLOCK_K")),
        TensorDesc("b", "fp16", ("K", "N"), role="in", block=("BLOCK_K", "BLOCK_N")),
        TensorDesc("c", "fp16", ("M", "N"), role="out", block=("BLOCK_M", "BLOCK_N")),
        Scalar("M", "i32", value="M"),
        Scalar("N", "i32", value="N"),
        Scalar("K", "i32", value="K"),
        Scalar("SMS", "i32", value=programs),
    ],
    constexprs={"BLOCK_M": BLOCK_M, "BLOCK_N": BLOCK_N, "BLOCK_K": BLOCK_K, "GROUP_M": GROUP_M},
    grid=lambda d: (programs(d), 1, 1),
    num_warps=8, num_stages=3,
    min_arch=90,
    reference=reference,
    flops=lambda d: 2.0 * d["M"] * d["N"] * d["K"],
    # verify: 3 x 2 tiles (the last row and column blocks ragged: 16 of 128), K = 144 in 3 steps (the
    # last 16 wide), on 2 programs of 3 tiles each; M, N, K multiples of 16 like the bench's
    instances={"verify": {"M": 272, "N": 144, "K": 144, "SMS": 2},
               "bench": {"M": 8192, "N": 8192, "K": 8192, "SMS": 132}},
    scale_by_abs_reference=True,
)
