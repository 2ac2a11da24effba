"""SageAttention-style attention (Zhang et al., ICLR 2025): smoothed K, int8 Q K^T, fp16 P V.

Definition (per batch-head, non-causal, ``N`` tokens, head dim ``D``):

1. Smooth K: ``Ks = K - kmean`` with ``kmean`` the per-channel mean of K over tokens (an input,
   computed by the preceding reduction).  Softmax is invariant to it: ``q . kmean`` is constant
   along a row.
2. Quantise per block: for each block of ``BLOCK_M`` query rows (``BLOCK_N`` key rows),
   ``s = amax / 127`` over the block (``1`` if the block is all zero) and
   ``x8 = clamp(floor(x / s + 1/2), -127, 127)``.  All of this is fp32 arithmetic with
   correctly rounded division (``div_rn``), so the int8 codes are fully determined by the
   inputs; the reference reproduces them bit for bit in numpy float32.
3. ``S = (q8 @ k8^T) * s_q * s_k * sm_scale``: int8 ``tl.dot`` with int32 accumulation (exact),
   then dequantised in fp32.
4. ``o = softmax(S) @ V`` with online softmax, ``P`` rounded to fp16 for the tensor-core product.

Blocks past ``N`` are masked to zero before the block maximum, so ragged tails quantise only
real tokens.
"""
from __future__ import annotations

import math

import numpy as np
import triton
import triton.language as tl

from harness.contract import Contract, Scalar, Tensor, cdiv


@triton.jit
def _quantize_block(x, valid):
    """Per-block symmetric int8 quantisation; returns (codes as int8, fp32 scale)."""
    x = tl.where(valid, x, 0.0)
    amax = tl.max(tl.max(tl.abs(x), axis=1), axis=0)
    scale = tl.where(amax > 0.0, tl.math.div_rn(amax, 127.0), 1.0)
    t = tl.floor(tl.math.div_rn(x, scale) + 0.5)
    t = tl.minimum(tl.maximum(t, -127.0), 127.0)
    return t.to(tl.int8), scale


@triton.jit
def sage_attn_kernel(q, k, kmean, v, o, N, sm_scale,
                     D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rd = tl.arange(0, D)
    base = bh * N * D
    row_ok = rm < N
    qf = tl.load(q + base + rm[:, None] * D + rd[None, :], mask=row_ok[:, None], other=0.0).to(tl.float32)
    q8, q_scale = _quantize_block(qf, row_ok[:, None])
    km = tl.load(kmean + bh * D + rd)                                   # [D] fp32
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    for n0 in range(0, N, BLOCK_N):
        cols = n0 + rn
        col_ok = cols < N
        kf = tl.load(k + base + cols[:, None] * D + rd[None, :], mask=col_ok[:, None], other=0.0)
        k8, k_scale = _quantize_block(kf.to(tl.float32) - km[None, :], col_ok[:, None])
        s_int = tl.dot(q8, tl.trans(k8), out_dtype=tl.int32)            # exact int32 accumulation
        s = s_int.to(tl.float32) * (q_scale * k_scale * sm_scale)
        s = tl.where(col_ok[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        vt = tl.load(v + base + cols[:, None] * D + rd[None, :], mask=col_ok[:, None], other=0.0)
        acc = tl.dot(p.to(tl.float16), vt, acc * alpha[:, None])
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o + base + rm[:, None] * D + rd[None, :], out.to(o.dtype.element_ty), mask=row_ok[:, None])


def quantize_blocks(x: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray]:
    """float32 ``[BH, N, D]`` -> (int codes as float64, per-row float64 scale) with the kernel's
    exact fp32 arithmetic over blocks of ``block`` rows."""
    bh, n, _ = x.shape
    codes = np.zeros(x.shape, dtype=np.float64)
    scales = np.zeros((bh, n), dtype=np.float64)
    for b in range(bh):
        for r0 in range(0, n, block):
            blk = x[b, r0:r0 + block].astype(np.float32)
            amax = np.float32(np.abs(blk).max())
            s = np.float32(amax / np.float32(127.0)) if amax > 0 else np.float32(1.0)
            t = np.floor((blk / s).astype(np.float32) + np.float32(0.5))
            codes[b, r0:r0 + block] = np.clip(t, -127.0, 127.0)
            scales[b, r0:r0 + block] = s
    return codes, scales


def reference(q: np.ndarray, k: np.ndarray, kmean: np.ndarray, v: np.ndarray, sm_scale: float,
              BLOCK_M: int, BLOCK_N: int) -> dict[str, np.ndarray]:
    ks = (k.astype(np.float32) - kmean.astype(np.float32)[:, None, :]).astype(np.float32)
    q8, sq = quantize_blocks(q.astype(np.float32), BLOCK_M)
    k8, sk = quantize_blocks(ks, BLOCK_N)
    out = np.empty(q.shape, dtype=np.float64)
    for b in range(q.shape[0]):                   # one slice at a time bounds memory; BLAS matmul
        scale32 = (sq[b][:, None] * sk[b][None, :]).astype(np.float32)   # fp32 product of scales
        s = (q8[b] @ k8[b].T) * scale32.astype(np.float64) * sm_scale
        p = np.exp(s - s.max(axis=-1, keepdims=True))
        out[b] = (p / p.sum(axis=-1, keepdims=True)) @ v[b].astype(np.float64)
    return {"o": out}


def _blocks(d: dict[str, int]) -> tuple[int, int]:
    """(BLOCK_M, BLOCK_N), the same for every instance (the verify build is the timed one)."""
    return 64, 64


CONTRACT = Contract(
    name="sage_attention",
    description="SageAttention: K smoothing, per-block int8 Q/K with int32 QK^T, fp16 PV",
    kernel=sage_attn_kernel,
    args=[
        Tensor("q", "fp16", ("BH", "N", "D"), role="in"),
        Tensor("k", "fp16", ("BH", "N", "D"), role="in"),
        Tensor("kmean", "fp32", ("BH", "D"), role="in"),
        Tensor("v", "fp16", ("BH", "N", "D"), role="in"),
        Tensor("o", "fp16", ("BH", "N", "D"), role="out"),
        Scalar("N", "i32", value="N"),
        Scalar("sm_scale", "fp32", value=lambda d: 1.0 / math.sqrt(d["D"])),
    ],
    constexprs={"D": lambda d: d["D"], "BLOCK_M": lambda d: _blocks(d)[0],
                "BLOCK_N": lambda d: _blocks(d)[1]},
    grid=lambda d: (cdiv(d["N"], _blocks(d)[0]), d["BH"], 1),
    num_warps=4, num_stages=1,
    reference=reference,
    # verify: 2 heads, N=80 (a multiple of 16 like the bench's, so the same PTX: 2 query blocks of
    # 64 and 2 key blocks of 64, the second of each ragged, 16 rows), D=128.
    # bench: 64 (batch x head) slices, 4096 tokens, D=128.
    instances={"verify": {"BH": 2, "N": 80, "D": 128},
               "bench": {"BH": 64, "N": 4096, "D": 128}},
    min_arch=80,
    # The int8 codes and the int32 dot are exact (the reference reproduces the quantiser), so
    # what remains is fp32 dequantisation (~1e-7 relative on logits), P rounded to fp16
    # (<= 2^-11 * max|v| absolute, |v| <= 4) and o rounded to fp16.
    tolerance={"fp16": (5e-3, 5e-3)},
    large_limit={"q": 4.0, "k": 4.0, "kmean": 4.0, "v": 4.0},
)
