"""Block-scaled (mxfp8) GEMM: ``C = (A * 2^(SA - 127)) @ (B * 2^(SB - 127))^T`` with ``A [M, K]``,
``B [N, K]`` fp8 e4m3 through tensor descriptors, one e8m0 scale (a biased power of two in a
``u8``) per 32 consecutive K elements of each row (``SA [M, K/32]``, ``SB [N, K/32]``), fp32
accumulation and output.

``tl.dot_scaled(a, sa, "e4m3", b.T, sb, "e4m3", acc)``: on sm_100a Triton 3.9 emits
``tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32`` (the block-scaled tensor-core MMA)
with A and B in swizzled shared memory, loaded by TMA (``cp.async.bulk.tensor.2d`` completing on
mbarriers), and the scale factors in tensor memory: the scales are read with ordinary loads and
written to tensor memory with ``tcgen05.st.32x32b.x4`` (no ``tcgen05.cp``: that needs the scales in
shared memory, i.e. a TMA descriptor for them); C leaves by TMA store.  The K extent is a multiple
of BLOCK_K in both instances (the scale loads are masked along M and N only).
"""
from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from harness.contract import Contract, Scalar, Tensor, TensorDesc, cdiv

BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 128
GROUP = 32  # K elements per e8m0 scale (the mx formats' block)


@triton.jit
def gemm_block_scaled_kernel(a, b, c, sa, sb, M, N, K,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pn * BLOCK_N + tl.arange(0, BLOCK_N)
    rs = tl.arange(0, BLOCK_K // 32)
    ks_total = K // 32
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for ks in range(tl.cdiv(K, BLOCK_K)):
        at = a.load([pm * BLOCK_M, ks * BLOCK_K])
        bt = b.load([pn * BLOCK_N, ks * BLOCK_K])
        col = ks * (BLOCK_K // 32) + rs[None, :]
        sat = tl.load(sa + rm[:, None] * ks_total + col, mask=rm[:, None] < M, other=127)
        sbt = tl.load(sb + rn[:, None] * ks_total + col, mask=rn[:, None] < N, other=127)
        acc = tl.dot_scaled(at, sat, "e4m3", bt.T, sbt, "e4m3", acc)
    c.store([pm * BLOCK_M, pn * BLOCK_N], acc)


def _scaled(x: np.ndarray, s: np.ndarray) -> np.ndarray:
    return x.astype(np.float64) * np.repeat(np.exp2(s.astype(np.float64) - 127.0), GROUP, axis=1)


def reference(a: np.ndarray, b: np.ndarray, sa: np.ndarray, sb: np.ndarray) -> dict[str, np.ndarray]:
    return {"c": _scaled(a, sa) @ _scaled(b, sb).T}


CONTRACT = Contract(
    name="gemm_block_scaled",
    description="mxfp8 GEMM: e4m3 [M,K] x [N,K]^T, e8m0 scales per 32 K -> fp32, tl.dot_scaled (block-scaled MMA)",
    kernel=gemm_block_scaled_kernel,
    args=[
        TensorDesc("a", "fp8e4m3", ("M", "K"), role="in", block=("BLOCK_M", "BLOCK_K")),
        TensorDesc("b", "fp8e4m3", ("N", "K"), role="in", block=("BLOCK_N", "BLOCK_K")),
        TensorDesc("c", "fp32", ("M", "N"), role="out", block=("BLOCK_M", "BLOCK_N")),
        Tensor("sa", "u8", ("M", "KS"), role="in"),
        Tensor("sb", "u8", ("N", "KS"), role="in"),
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
    # verify: 2 x 1 tiles (the second row block 16 of 128 rows; 80 of 128 columns), K = 384 in 3
    # steps so the 3-stage pipeline fills; KS = K / 32 scales per row
    instances={"verify": {"M": 144, "N": 80, "K": 384, "KS": 12},
               "bench": {"M": 8192, "N": 8192, "K": 8192, "KS": 256}},
    # scales 2^-7 .. 2^7 keep every product and sum finite in fp32
    input_domain={"sa": (120, 134), "sb": (120, 134)},
    large_limit=64.0,
    scale_by_abs_reference=True,
    tolerance={"fp32": (2e-5, 1e-6)},
)
