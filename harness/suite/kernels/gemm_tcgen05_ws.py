"""Warp-specialised GEMM through tensor descriptors: ``C = A @ B`` with ``A [M, K]``, ``B [K, N]``,
``C [M, N]`` fp16, row-major, fp32 accumulation in tensor memory.

Program ``(pid_m, pid_n)`` computes one ``BLOCK_M x BLOCK_N`` tile of C.  Its K loop is a
``tl.range(..., warp_specialize=True)``: on sm_100a Triton splits the program into partitions, a
producer warp that issues the TMA loads (``cp.async.bulk.tensor`` completing on mbarriers) into a
``num_stages``-deep ring of shared-memory buffers, an MMA warp that issues ``tcgen05.mma`` into a
tensor-memory accumulator (``tcgen05.commit`` releasing each stage back to the producer), and the
default warps that wait for the last MMA, read the accumulator with ``tcgen05.ld`` and store C
with a TMA store.  Out-of-range rows, columns and the K tail are zero-filled by the copies and
clipped by the store.
"""
from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from harness.contract import Contract, Scalar, TensorDesc, cdiv

BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 64


@triton.jit
def gemm_tcgen05_ws_kernel(a, b, c, M, N, K,
                           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for ks in tl.range(0, tl.cdiv(K, BLOCK_K), warp_specialize=True):
        at = a.load([pm * BLOCK_M, ks * BLOCK_K])
        bt = b.load([ks * BLOCK_K, pn * BLOCK_N])
        acc = tl.dot(at, bt, acc)
    c.store([pm * BLOCK_M, pn * BLOCK_N], acc.to(tl.float16))


def reference(a: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
    return {"c": a.astype(np.float64) @ b.astype(np.float64)}


CONTRACT = Contract(
    name="gemm_tcgen05_ws",
    description="C = A @ B, fp16 [M,K] x [K,N] -> fp16 [M,N], warp-specialised TMA + tcgen05 (sm_100a)",
    kernel=gemm_tcgen05_ws_kernel,
    args=[
        TensorDesc("a", "fp16", ("M", "K"), role="in", block=("BLOCK_M", "BLOCK_K")),
        TensorDesc("b", "fp16", ("K", "N"), role="in", block=("BLOCK_K", "BLOCK_N")),
        TensorDesc("c", "fp16", ("M", "N"), role="out", block=("BLOCK_M", "BLOCK_N")),
        Scalar("M", "i32", value="M"),
        Scalar("N", "i32", value="N"),
        Scalar("K", "i32", value="K"),
    ],
    constexprs={"BLOCK_M": BLOCK_M, "BLOCK_N": BLOCK_N, "BLOCK_K": BLOCK_K},
    grid=lambda d: (cdiv(d["M"], BLOCK_M), cdiv(d["N"], BLOCK_N), 1),
    num_warps=4, num_stages=3,
    min_arch=100,
    reference=reference,
    flops=lambda d: 2.0 * d["M"] * d["N"] * d["K"],
    # verify: 2 x 1 tiles (the second row block ragged: 16 of 128 rows; 80 of 128 columns), K = 272 in
    # 5 steps (the last 16 wide) so the 3-stage ring wraps around; M, N, K multiples of 16 like the bench's
    instances={"verify": {"M": 144, "N": 80, "K": 272}, "bench": {"M": 8192, "N": 8192, "K": 8192}},
    scale_by_abs_reference=True,
)
