"""Batched BitDelta: one 1-bit delta per adapter, applied to that adapter's activation rows.

Multi-tenant serving with BitDelta (Liu et al., 2024) keeps one base model and, per fine-tune
``a``, a sign matrix and per-row scales.  A batch groups ``M`` activation rows per adapter:

    y[a, m, o] = scale[a, o] * sum_k s[a, o, k] * x[a, m, k],   s = +1 if the bit is set else -1

Packing as in :mod:`bitdelta`: sign ``k`` of row ``(a, o)`` is bit ``k % 8`` (LSB first) of byte
``packed[a, o, k // 8]``; padding bits past ``K`` do not contribute.

Each program computes a ``[BLOCK_M, BLOCK_O]`` tile of one adapter on tensor cores: per K step it
expands ``BLOCK_B`` bytes per row into a ``[BLOCK_O, 8 * BLOCK_B]`` tile of fp16 +-1 (exact), and
multiplies with ``tl.dot`` (fp32 accumulation); the row scale is applied once at the end.
"""
from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from harness.contract import Contract, Scalar, Tensor, cdiv
from harness.suite.kernels.bitdelta import unpack_signs


@triton.jit
def bitdelta_batched_kernel(x, packed, scale, y, M, O, K, KB,
                            BLOCK_M: tl.constexpr, BLOCK_O: tl.constexpr, BLOCK_B: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_o = tl.program_id(1)
    a = tl.program_id(2).to(tl.int64)
    BLOCK_K: tl.constexpr = BLOCK_B * 8
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    ro = pid_o * BLOCK_O + tl.arange(0, BLOCK_O)
    rb = tl.arange(0, BLOCK_B)
    rk = tl.arange(0, BLOCK_K)
    bit = tl.arange(0, 8)
    x_base = x + a * M * K
    p_base = packed + a * O * KB
    acc = tl.zeros((BLOCK_M, BLOCK_O), dtype=tl.float32)
    for b0 in range(0, KB, BLOCK_B):
        kk = b0 * 8 + rk
        xt = tl.load(x_base + rm[:, None] * K + kk[None, :],
                     mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)        # [BM, BK]
        bcol = b0 + rb
        words = tl.load(p_base + ro[:, None] * KB + bcol[None, :],
                        mask=(ro[:, None] < O) & (bcol[None, :] < KB), other=0)     # [BO, BB]
        bits = (words.to(tl.int32)[:, :, None] >> bit[None, None, :]) & 1           # [BO, BB, 8]
        sgn = tl.reshape((2 * bits - 1).to(tl.float16), (BLOCK_O, BLOCK_K))        # k = 8*b + j
        acc = tl.dot(xt.to(tl.float16), tl.trans(sgn), acc)
    sc = tl.load(scale + a * O + ro, mask=ro < O, other=0.0).to(tl.float32)
    out = acc * sc[None, :]
    tl.store(y + a * M * O + rm[:, None] * O + ro[None, :], out.to(y.dtype.element_ty),
             mask=(rm[:, None] < M) & (ro[None, :] < O))


def reference(x: np.ndarray, packed: np.ndarray, scale: np.ndarray, K: int) -> dict[str, np.ndarray]:
    signs = unpack_signs(packed, K)                                    # [A, O, K]
    prod = np.einsum("amk,aok->amo", x.astype(np.float64), signs)
    return {"y": prod * scale.astype(np.float64)[:, None, :]}


def _blocks(d: dict[str, int]) -> tuple[int, int, int]:
    """(BLOCK_M, BLOCK_O, BLOCK_B), the same tensor-core tiles for every instance (the verify build
    is the timed one)."""
    return 32, 128, 8


CONTRACT = Contract(
    name="bitdelta_batched",
    description="batched BitDelta: y[a,m,o] = scale[a,o] * sum_k sign[a,o,k] * x[a,m,k] on tensor cores",
    kernel=bitdelta_batched_kernel,
    args=[
        Tensor("x", "fp16", ("A", "M", "K"), role="in"),
        Tensor("packed", "u8", ("A", "O", "KB"), role="in"),
        Tensor("scale", "fp16", ("A", "O"), role="in"),
        Tensor("y", "fp16", ("A", "M", "O"), role="out"),
        Scalar("M", "i32", value="M"),
        Scalar("O", "i32", value="O"),
        Scalar("K", "i32", value="K"),
        Scalar("KB", "i32", value="KB"),
    ],
    constexprs={"BLOCK_M": lambda d: _blocks(d)[0], "BLOCK_O": lambda d: _blocks(d)[1],
                "BLOCK_B": lambda d: _blocks(d)[2]},
    grid=lambda d: (cdiv(d["M"], _blocks(d)[0]), cdiv(d["O"], _blocks(d)[1]), d["A"]),
    num_warps=4, num_stages=1,
    reference=reference,
    # verify: M, O, K, KB are multiples of 16 at the bench, so here too (the same tt.divisibility,
    # hence the same PTX); K is then a multiple of 128 (no padding bits, KB a multiple of BLOCK_B:
    # no ragged K step).  2 adapters, ragged M (16 of 32) and O (144: 2 blocks, the second 16 of
    # 128), 1x2x2 programs with 2 K-steps.  bench: 16 adapters x 32 tokens through a 4096x4096
    # projection.
    instances={"verify": {"A": 2, "M": 16, "O": 144, "K": 128, "KB": 16},
               "bench": {"A": 16, "M": 32, "O": 4096, "K": 4096, "KB": 512}},
    min_arch=80,
    # The +-1 operands are exact in fp16 and products with fp16 x are exact in the fp32 MMA
    # accumulator; error is fp32 summation (K * 2^-24 of sum|x|, relative to the |input| reference)
    # plus rounding y to fp16 (2^-11).
    tolerance={"fp16": (2e-3, 1e-6)},
    scale_by_abs_reference=True,
)
