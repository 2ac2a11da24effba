"""Forgetting Attention (the Forgetting Transformer, Lin et al., ICLR 2025), forward pass.

Each position ``t`` has a scalar forget gate ``f_t = sigmoid(gate_t)`` per head.  With the
cumulative log-forget ``F_t = sum_{s <= t} log f_s``, causal attention logits get a data-dependent
decay bias:

    s_ij = (q_i . k_j) * sm_scale + (F_i - F_j)        for j <= i, else -inf
    o_i  = sum_j softmax_j(s_ij) v_j

``F_i - F_j = sum_{j < s <= i} log f_s <= 0``: key ``j`` is down-weighted by every gate between it
and the query.  The kernel takes the raw gate logits (fp32, ``[BH, N]``) and forms the prefix sums
itself: a program first sums ``log sigmoid`` over the gates before its query block (one cheap pass
over ``N`` scalars), takes an in-block ``tl.cumsum`` for its queries, and keeps a running carry
while it streams over key blocks, flash-attention style (online softmax, fp32 statistics, ``P``
rounded to fp16 for the ``P @ V`` tensor-core product).
"""
from __future__ import annotations

import math

import numpy as np
import triton
import triton.language as tl

from harness.contract import Contract, Scalar, Tensor, cdiv


@triton.jit
def _log_sigmoid(g):
    # log(sigmoid(g)) = min(g, 0) - log(1 + exp(-|g|)), stable for either sign of g.
    return tl.minimum(g, 0.0) - tl.log(1.0 + tl.exp(-tl.abs(g)))


@triton.jit
def forgetting_attn_kernel(q, k, v, fgate, o, N, sm_scale,
                           D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    start_m = pid_m * BLOCK_M
    rm = start_m + tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rd = tl.arange(0, D)
    base = bh * N * D
    gbase = fgate + bh * N

    # Cumulative log-forget of the query rows: carry over [0, start_m), then an in-block cumsum.
    carry_q = tl.zeros((), dtype=tl.float32)
    for j0 in range(0, start_m, BLOCK_N):
        gj = tl.load(gbase + j0 + rn, mask=j0 + rn < N, other=0.0)
        carry_q += tl.sum(tl.where(j0 + rn < N, _log_sigmoid(gj), 0.0), axis=0)
    gq = tl.load(gbase + rm, mask=rm < N, other=0.0)
    f_q = carry_q + tl.cumsum(tl.where(rm < N, _log_sigmoid(gq), 0.0), axis=0)

    qt = tl.load(q + base + rm[:, None] * D + rd[None, :], mask=rm[:, None] < N, other=0.0)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    carry = tl.zeros((), dtype=tl.float32)
    hi = tl.minimum(start_m + BLOCK_M, N)
    for n0 in range(0, hi, BLOCK_N):
        cols = n0 + rn
        col_ok = cols < N
        gk = tl.load(gbase + cols, mask=col_ok, other=0.0)
        lf = tl.where(col_ok, _log_sigmoid(gk), 0.0)
        f_k = carry + tl.cumsum(lf, axis=0)
        carry += tl.sum(lf, axis=0)
        kt = tl.load(k + base + cols[:, None] * D + rd[None, :], mask=col_ok[:, None], other=0.0)
        s = tl.dot(qt, tl.trans(kt)) * sm_scale + (f_q[:, None] - f_k[None, :])
        keep = (rm[:, None] >= cols[None, :]) & col_ok[None, :]
        s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        vt = tl.load(v + base + cols[:, None] * D + rd[None, :], mask=col_ok[:, None], other=0.0)
        acc = tl.dot(p.to(tl.float16), vt, acc * alpha[:, None])
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o + base + rm[:, None] * D + rd[None, :], out.to(o.dtype.element_ty), mask=rm[:, None] < N)


def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, fgate: np.ndarray,
              sm_scale: float) -> dict[str, np.ndarray]:
    n = q.shape[1]
    causal = np.tril(np.ones((n, n), dtype=bool))
    out = np.empty(q.shape, dtype=np.float64)
    for b in range(q.shape[0]):                   # one slice at a time bounds memory; BLAS matmul
        q64, k64, v64, g = (a[b].astype(np.float64) for a in (q, k, v, fgate))
        log_f = np.minimum(g, 0.0) - np.log1p(np.exp(-np.abs(g)))      # log sigmoid
        F = np.cumsum(log_f)                                            # [N]
        s = np.where(causal, (q64 @ k64.T) * sm_scale + F[:, None] - F[None, :], -np.inf)
        p = np.exp(s - s.max(axis=-1, keepdims=True))
        out[b] = (p / p.sum(axis=-1, keepdims=True)) @ v64
    return {"o": out}


def _blocks(d: dict[str, int]) -> tuple[int, int]:
    """(BLOCK_M, BLOCK_N), the same for every instance (the verify build is the timed one)."""
    return 64, 64


CONTRACT = Contract(
    name="forgetting_attention",
    description="causal softmax attention with cumulative log-sigmoid forget-gate bias F_i - F_j",
    kernel=forgetting_attn_kernel,
    args=[
        Tensor("q", "fp16", ("BH", "N", "D"), role="in"),
        Tensor("k", "fp16", ("BH", "N", "D"), role="in"),
        Tensor("v", "fp16", ("BH", "N", "D"), role="in"),
        Tensor("fgate", "fp32", ("BH", "N"), role="in"),
        Tensor("o", "fp16", ("BH", "N", "D"), role="out"),
        Scalar("N", "i32", value="N"),
        Scalar("sm_scale", "fp32", value=lambda d: 1.0 / math.sqrt(d["D"])),
    ],
    constexprs={"D": lambda d: d["D"], "BLOCK_M": lambda d: _blocks(d)[0],
                "BLOCK_N": lambda d: _blocks(d)[1]},
    grid=lambda d: (cdiv(d["N"], _blocks(d)[0]), d["BH"], 1),
    num_warps=4, num_stages=1,
    reference=reference,
    # verify: 2 heads, N=144 (a multiple of 16 like the bench's, so the same PTX): 3 query blocks,
    # the last ragged (16 rows), with 0, 1 and 2 carry steps and 1, 2 and 3 key blocks; head dim 128.
    # bench: batch 4 x 16 heads, 4096 tokens, head dim 128.
    instances={"verify": {"BH": 2, "N": 144, "D": 128},
               "bench": {"BH": 64, "N": 4096, "D": 128}},
    min_arch=80,
    # P is rounded to fp16 before P @ V (2^-11 relative per weight, so <= 2^-11 * max|v| absolute
    # on the normalised output) and o is rounded to fp16; fp32 prefix sums of log f differ from
    # the float64 ones by ~N * 2^-24 * |F|.  With |v| <= 4 that is <= 2e-3 absolute.
    tolerance={"fp16": (5e-3, 5e-3)},
    # Bounded logits keep softmax well-conditioned so fp32 score rounding stays below tolerance.
    large_limit={"q": 4.0, "k": 4.0, "v": 4.0, "fgate": 8.0},
)
