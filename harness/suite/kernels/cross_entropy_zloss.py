"""Fused cross-entropy with z-loss, forward and backward in one pass pair, gradient in place.

Choice for the tenth paper kernel: the output-layer loss of recent LLM recipes.  The z-loss
(auxiliary ``zc * logsumexp^2`` term, introduced with PaLM, Chowdhery et al. 2022, and used by
OLMo 2, Chameleon and others to keep the softmax normaliser near 1) is fused with cross-entropy,
and the logits buffer is overwritten with the gradient (as memory-frugal LLM trainers do, so
the ``T x V`` logits never exist twice).  Per row ``t`` with label ``y``:

    lse_t  = log sum_v exp(z[t, v])
    loss_t = lse_t - z[t, y] + zc * lse_t^2                          (0 if y is out of [0, V))
    z[t, v] <- gscale * (softmax(z_t)[v] * (1 + 2 zc lse_t) - [v == y])     (0 if ignored)

i.e. the gradient of ``gscale * sum_t loss_t`` (``gscale`` = 1/T for a mean).  Labels outside
``[0, V)`` (e.g. -100) mark ignored rows.  ``lse`` is stored for every row.

One program per row; pass 1 streams vocabulary tiles for an online max/sum-exp and picks
``z[t, y]`` out of the tile that holds it (a masked sum, so no thread reads an element another
thread rewrites later); pass 2 rereads each tile and writes the bf16 gradient over it, each
element by the thread that read it.  bf16 is widened by a 16-bit shift (exact, as on the GPU;
Triton 3.9's interpreter mis-converts bf16 subnormals with ``.to``).
"""
from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from harness.contract import Contract, Scalar, Tensor

ZC = 1e-4


@triton.jit
def _bf16_to_f32(raw):
    return (raw.to(tl.uint16, bitcast=True).to(tl.uint32) << 16).to(tl.float32, bitcast=True)


@triton.jit
def ce_zloss_kernel(logits, labels, loss, lse, V, zc, gscale, BLOCK_V: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = logits + row * V
    cols0 = tl.arange(0, BLOCK_V)
    y = tl.load(labels + row)
    valid = (y >= 0) & (y < V)
    m = tl.full((), float("-inf"), dtype=tl.float32)
    s = tl.zeros((), dtype=tl.float32)
    z_y = tl.zeros((), dtype=tl.float32)
    for v0 in range(0, V, BLOCK_V):
        cols = v0 + cols0
        z = _bf16_to_f32(tl.load(base + cols, mask=cols < V, other=0.0))
        z = tl.where(cols < V, z, float("-inf"))
        m_new = tl.maximum(m, tl.max(z, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(z - m_new), axis=0)
        z_y += tl.sum(tl.where(cols == y, z, 0.0), axis=0)
        m = m_new
    log_s = tl.log(s)
    row_lse = m + log_s
    row_loss = (m - z_y) + log_s + zc * row_lse * row_lse      # lse - z_y without cancelling lse
    tl.store(lse + row, row_lse)
    tl.store(loss + row, tl.where(valid, row_loss, 0.0))
    coef = 1.0 + 2.0 * zc * row_lse
    for v0 in range(0, V, BLOCK_V):
        cols = v0 + cols0
        z = _bf16_to_f32(tl.load(base + cols, mask=cols < V, other=0.0))
        p = tl.exp(z - row_lse)
        grad = (p * coef - tl.where(cols == y, 1.0, 0.0)) * gscale
        grad = tl.where(valid, grad, 0.0)
        tl.store(base + cols, grad.to(tl.bfloat16), mask=cols < V)


def reference(logits: np.ndarray, labels: np.ndarray, zc: float, gscale: float) -> dict[str, np.ndarray]:
    t, v = logits.shape
    grad = np.empty((t, v), dtype=np.float64)
    loss = np.empty(t, dtype=np.float64)
    lse = np.empty(t, dtype=np.float64)
    rows = max(1, (1 << 25) // max(v, 1))         # row blocks of ~32M elements bound the temporaries
    for r0 in range(0, t, rows):
        r1 = min(t, r0 + rows)
        z = logits[r0:r1].astype(np.float64)
        idx = np.arange(r1 - r0)
        mx = z.max(axis=1, keepdims=True)
        blk_lse = mx[:, 0] + np.log(np.exp(z - mx).sum(axis=1))
        y = labels[r0:r1].astype(np.int64)
        valid = (y >= 0) & (y < v)
        z_y = z[idx, np.where(valid, y, 0)]
        loss[r0:r1] = np.where(valid, blk_lse - z_y + zc * blk_lse * blk_lse, 0.0)
        g = np.exp(z - blk_lse[:, None]) * (1.0 + 2.0 * zc * blk_lse)[:, None]
        g[idx[valid], y[valid]] -= 1.0
        g *= gscale
        g[~valid] = 0.0
        grad[r0:r1], lse[r0:r1] = g, blk_lse
    return {"logits": grad, "loss": loss, "lse": lse}


CONTRACT = Contract(
    name="cross_entropy_zloss",
    description="fused cross-entropy + z-loss (zc*lse^2): per-row loss and lse, bf16 gradient written over the logits",
    kernel=ce_zloss_kernel,
    args=[
        Tensor("logits", "bf16", ("T", "V"), role="inout"),
        Tensor("labels", "i32", ("T",), role="in"),
        Tensor("loss", "fp32", ("T",), role="out"),
        Tensor("lse", "fp32", ("T",), role="out"),
        Scalar("V", "i32", value="V"),
        Scalar("zc", "fp32", value=ZC),
        Scalar("gscale", "fp32", value=lambda d: 1.0 / d["T"]),
    ],
    constexprs={"BLOCK_V": 4096},
    grid=lambda d: (d["T"], 1, 1),
    num_warps=4, num_stages=1,
    reference=reference,
    # verify: 8 rows over a vocabulary of 6000 (a multiple of 16 like the bench's, so the same
    # PTX): 2 tiles of 4096, the second ragged (1904 columns); labels drawn from [-800, 5999] so
    # some rows are ignored and some labels fall in the second tile.  bench: 8192 tokens over
    # Llama-3's 128256-entry vocab.
    instances={"verify": {"T": 8, "V": 6000}, "bench": {"T": 8192, "V": 128256}},
    min_arch=80,
    # loss/lse: fp32 online log-sum-exp (exp/log of O(10) values, a few ulp each) -> 2e-5
    # relative; the loss is formed as (max - z_y) + log(sum) so it does not inherit lse's
    # rounding when it is small.  grad: rounded to bf16 after fp32 math: half an ulp (2^-8
    # relative) with cvt.rn on the GPU, up to a full ulp (2^-7) in Triton 3.9's interpreter,
    # which truncates fp32 -> bf16; rtol 1.6e-2 covers both with 2x.  atol covers tails
    # that round to bf16 zero.
    tolerance={"fp32": (2e-5, 2e-6), "bf16": (1.6e-2, 1e-9)},
    input_domain={"labels": (-800, 5999)},
    # |logits| <= 1e4: beyond that lse^2 leaves fp32 range for nothing a model produces.
    large_limit={"logits": 1e4},
)
