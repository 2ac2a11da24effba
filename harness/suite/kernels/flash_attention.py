"""FlashAttention forward (causal), fp16 Q/K/V/O ``[B, H, S, D]``, fp32 softmax statistics.

``O[b, h, i, :] = sum_{j <= i} softmax_j(scale * Q[i] . K[j]) V[j]``.  Program ``(m, bh)`` owns
``BLOCK_M`` query rows of one (batch, head) and streams key/value tiles of ``BLOCK_N`` rows,
keeping a running row max ``m_i``, running denominator ``l_i`` and an un-normalised fp32
accumulator (the online softmax): for each tile, ``m_new = max(m_i, rowmax(s))``, the old
state is rescaled by ``exp(m_i - m_new)`` and the tile adds ``exp(s - m_new)``.  Keys past the
causal diagonal or past ``S`` get score ``-inf``; key 0 is always visible, so no row is empty.
Exponentials use base 2 with ``log2(e)`` folded into the scale.

The probabilities are rounded to fp16 before the ``P @ V`` tensor-core product (the usual
FlashAttention trade-off), so the tolerance is relative to the scale of |V| (checked against
the reference on |Q|, |K|, |V|).  The "large" inputs cap |Q|, |K| at 8 so scores stay in a
range where fp32 rounding cannot reorder near-ties of the float64 softmax.
"""
from __future__ import annotations

import math

import numpy as np
import triton
import triton.language as tl

from harness.contract import Contract, Scalar, Tensor, cdiv


def tiles(d: dict) -> tuple[int, int]:
    """(BLOCK_M, BLOCK_N), the same for every instance (the verify build is the timed one)."""
    return 128, 64


@triton.jit
def flash_attention_kernel(q, k, v, o, S, sm_scale,
                           D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    base = tl.program_id(1).to(tl.int64) * S * D           # (b, h) slab of S x D
    rows = start_m + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    dd = tl.arange(0, D)
    qt = tl.load(q + base + rows[:, None] * D + dd[None, :], mask=rows[:, None] < S, other=0.0)
    qk_scale = sm_scale * 1.4426950408889634                 # exp(x) = exp2(x * log2(e))
    m_i = tl.full((BLOCK_M,), -float("inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    hi = tl.minimum(start_m + BLOCK_M, S)                    # causal: no key beyond the last row
    for start_n in range(0, hi, BLOCK_N):
        keys = start_n + cols
        kmask = keys[:, None] < S
        kt = tl.load(k + base + keys[:, None] * D + dd[None, :], mask=kmask, other=0.0)
        vt = tl.load(v + base + keys[:, None] * D + dd[None, :], mask=kmask, other=0.0)
        s = tl.dot(qt, tl.trans(kt)) * qk_scale
        visible = (keys[None, :] <= rows[:, None]) & (keys[None, :] < S)
        s = tl.where(visible, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.math.exp2(m_i - m_new)
        p = tl.math.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), vt)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o + base + rows[:, None] * D + dd[None, :], out.to(tl.float16), mask=rows[:, None] < S)


def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, S: int, sm_scale: float) -> dict[str, np.ndarray]:
    causal = np.tril(np.ones((S, S), dtype=bool))
    out = np.empty(q.shape, dtype=np.float64)
    for b in range(q.shape[0]):                   # one (batch, head) at a time bounds memory
        for h in range(q.shape[1]):
            q64, k64, v64 = (t[b, h].astype(np.float64) for t in (q, k, v))
            s = np.where(causal, (q64 @ k64.T) * sm_scale, -np.inf)
            p = np.exp(s - s.max(axis=-1, keepdims=True))
            out[b, h] = (p / p.sum(axis=-1, keepdims=True)) @ v64
    return {"o": out}


def _dims(b: int, h: int, s: int, d: int) -> dict[str, int]:
    return {"B": b, "H": h, "S": s, "D": d}


CONTRACT = Contract(
    name="flash_attention",
    description="causal FlashAttention forward, fp16 [B,H,S,D], online softmax in fp32, tl.dot",
    kernel=flash_attention_kernel,
    args=[
        Tensor("q", "fp16", ("B", "H", "S", "D"), role="in"),
        Tensor("k", "fp16", ("B", "H", "S", "D"), role="in"),
        Tensor("v", "fp16", ("B", "H", "S", "D"), role="in"),
        Tensor("o", "fp16", ("B", "H", "S", "D"), role="out"),
        Scalar("S", "i32", value="S"),
        Scalar("sm_scale", "fp32", value=lambda d: 1.0 / math.sqrt(d["D"])),
    ],
    constexprs={"D": "D", "BLOCK_M": lambda d: tiles(d)[0], "BLOCK_N": lambda d: tiles(d)[1]},
    grid=lambda d: (cdiv(d["S"], tiles(d)[0]), d["B"] * d["H"], 1),
    num_warps=4, num_stages=2,
    reference=reference,
    flops=lambda d: 2.0 * d["B"] * d["H"] * d["S"] * d["S"] * d["D"],  # QK^T and PV over the causal half
    # verify: 2 heads, S = 144 (a multiple of 16 like the bench's, so the same PTX), head dim 128:
    # 2 query blocks of 128 (the second 16 rows), the first over 2 key blocks of 64, the second over
    # 3 (the last ragged, 16 keys), causal masks on the diagonal blocks.
    instances={"verify": _dims(1, 2, 144, 128), "bench": _dims(4, 32, 4096, 128)},
    large_limit={"q": 8.0, "k": 8.0},
    scale_by_abs_reference=True,
    tolerance={"fp16": (5e-3, 1e-4)},
)
