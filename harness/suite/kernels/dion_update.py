"""Dion (Ahn et al., 2025, "Dion: distributed orthonormalized updates") power-iteration step.

Dion keeps a rank-``r`` right factor ``Q`` per weight matrix and, each step, runs one power
iteration on the momentum ``M`` (``m x n``, gradient already accumulated) to get the factors of an
orthonormalised low-rank update.  This kernel computes, for each matrix of a batch (one program
per matrix, fp32 throughout with IEEE-precision dots):

    P  = M Q                          (m x r)
    P^ = P / (||P[:, c]|| + eps)      column normalisation (Dion's cheap orthonormalisation of
                                      the left factor; QR is replaced by per-column scaling)
    R  = M^T P^                       (n x r), returned unnormalised for Dion's error feedback
                                      M <- M - (1 - mu) P^ R^T (done by the caller)
    Q' = R / (||R[:, c]|| + eps)      the next right factor

and the update is ``P^ Q'^T`` (scaled by the caller).  Outputs: ``p`` = P^, ``r`` = R, ``q_out`` = Q'.

Passes over ``M`` within the program: (A) ``P`` by row blocks into ``p`` and its column sums of
squares; (B) ``R`` by column blocks, reading ``P^`` back from ``p`` (written by other threads in A,
hence a CTA barrier), accumulating ``R``'s column norms; (C) normalise ``p`` in place and write
``Q'`` from ``r``.  Norms use correctly rounded ``sqrt_rn`` and ``div_rn``.
"""
from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from harness.contract import Contract, Scalar, Tensor

EPS = 1e-8


@triton.jit
def dion_update_kernel(mom, q_in, p, r, q_out, Mr, Nc, eps,
                       RANK: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    mat = tl.program_id(0).to(tl.int64)
    m_base = mom + mat * Mr * Nc
    q_base = q_in + mat * Nc * RANK
    p_base = p + mat * Mr * RANK
    r_base = r + mat * Nc * RANK
    qo_base = q_out + mat * Nc * RANK
    rm = tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rc = tl.arange(0, RANK)

    # (A) P = M Q, raw, by row blocks; column sums of squares.
    sq_p = tl.zeros((RANK,), dtype=tl.float32)
    for m0 in range(0, Mr, BLOCK_M):
        rows = m0 + rm
        acc = tl.zeros((BLOCK_M, RANK), dtype=tl.float32)
        for n0 in range(0, Nc, BLOCK_N):
            cols = n0 + rn
            mt = tl.load(m_base + rows[:, None] * Nc + cols[None, :],
                         mask=(rows[:, None] < Mr) & (cols[None, :] < Nc), other=0.0)
            qt = tl.load(q_base + cols[:, None] * RANK + rc[None, :], mask=cols[:, None] < Nc, other=0.0)
            acc = tl.dot(mt, qt, acc, input_precision="ieee")
        sq_p += tl.sum(acc * acc, axis=0)
        tl.store(p_base + rows[:, None] * RANK + rc[None, :], acc, mask=rows[:, None] < Mr)
    inv_p = tl.math.div_rn(tl.full((RANK,), 1.0, tl.float32), tl.sqrt_rn(sq_p) + eps)
    tl.debug_barrier()                               # p written by all threads before it is read

    # (B) R = M^T P^, by column blocks; column sums of squares of R.
    sq_r = tl.zeros((RANK,), dtype=tl.float32)
    for n0 in range(0, Nc, BLOCK_N):
        cols = n0 + rn
        acc = tl.zeros((BLOCK_N, RANK), dtype=tl.float32)
        for m0 in range(0, Mr, BLOCK_M):
            rows = m0 + rm
            mt = tl.load(m_base + rows[:, None] * Nc + cols[None, :],
                         mask=(rows[:, None] < Mr) & (cols[None, :] < Nc), other=0.0)
            pt = tl.load(p_base + rows[:, None] * RANK + rc[None, :], mask=rows[:, None] < Mr, other=0.0)
            acc = tl.dot(tl.trans(mt), pt * inv_p[None, :], acc, input_precision="ieee")
        sq_r += tl.sum(acc * acc, axis=0)
        tl.store(r_base + cols[:, None] * RANK + rc[None, :], acc, mask=cols[:, None] < Nc)
    inv_r = tl.math.div_rn(tl.full((RANK,), 1.0, tl.float32), tl.sqrt_rn(sq_r) + eps)
    tl.debug_barrier()                               # all reads of raw p and writes of r done

    # (C) normalise P in place; Q' = R / ||R||.
    for m0 in range(0, Mr, BLOCK_M):
        rows = m0 + rm
        ptrs = p_base + rows[:, None] * RANK + rc[None, :]
        pt = tl.load(ptrs, mask=rows[:, None] < Mr, other=0.0)
        tl.store(ptrs, pt * inv_p[None, :], mask=rows[:, None] < Mr)
    for n0 in range(0, Nc, BLOCK_N):
        cols = n0 + rn
        rt = tl.load(r_base + cols[:, None] * RANK + rc[None, :], mask=cols[:, None] < Nc, other=0.0)
        tl.store(qo_base + cols[:, None] * RANK + rc[None, :], rt * inv_r[None, :], mask=cols[:, None] < Nc)


def reference(mom: np.ndarray, q_in: np.ndarray, eps: float) -> dict[str, np.ndarray]:
    m64, q64 = mom.astype(np.float64), q_in.astype(np.float64)
    pr = m64 @ q64                                                     # [L, m, r]
    ph = pr / (np.linalg.norm(pr, axis=1, keepdims=True) + eps)
    rr = np.swapaxes(m64, 1, 2) @ ph                                    # [L, n, r]
    qn = rr / (np.linalg.norm(rr, axis=1, keepdims=True) + eps)
    return {"p": ph, "r": rr, "q_out": qn}


def _blocks(d: dict[str, int]) -> tuple[int, int]:
    """(BLOCK_M, BLOCK_N), the same for every instance (the verify build is the timed one)."""
    return 64, 64


CONTRACT = Contract(
    name="dion_update",
    description="Dion power-iteration step: P^ = colnorm(M Q), R = M^T P^, Q' = colnorm(R), one program per matrix",
    kernel=dion_update_kernel,
    args=[
        Tensor("mom", "fp32", ("L", "M", "N"), role="in"),
        Tensor("q_in", "fp32", ("L", "N", "RK"), role="in"),
        Tensor("p", "fp32", ("L", "M", "RK"), role="out"),
        Tensor("r", "fp32", ("L", "N", "RK"), role="out"),
        Tensor("q_out", "fp32", ("L", "N", "RK"), role="out"),
        Scalar("Mr", "i32", value="M"),
        Scalar("Nc", "i32", value="N"),
        Scalar("eps", "fp32", value=EPS),
    ],
    constexprs={"RANK": lambda d: d["RK"], "BLOCK_M": lambda d: _blocks(d)[0],
                "BLOCK_N": lambda d: _blocks(d)[1]},
    grid=lambda d: (d["L"], 1, 1),
    num_warps=4, num_stages=1,
    reference=reference,
    # verify: 2 matrices of 80 x 112 (multiples of 16 like the bench's, so the same PTX; 2 x 2
    # blocks of 64, the last of each ragged), rank 32 (a constexpr: the bench's).
    # bench: 64 matrices of 1024 x 1024 (e.g. the per-expert weights of an MoE layer), rank 32.
    instances={"verify": {"L": 2, "M": 80, "N": 112, "RK": 32},
               "bench": {"L": 64, "M": 1024, "N": 1024, "RK": 32}},
    min_arch=80,
    # fp32 sums of <= max(m, n) products: error ~ n * 2^-24 relative to the sums of |terms|,
    # i.e. to the reference evaluated on |M|, |Q| (scale_by_abs_reference), through two
    # normalisations.  Normalised entries are O(1/sqrt(m)); rtol 2e-5 / atol 1e-6 leaves > 10x
    # over the observed errors.
    tolerance={"fp32": (2e-5, 1e-6)},
    scale_by_abs_reference=True,
    # |M|, |Q| <= 1e4 keep the squared column norms (<= (1e8 n)^2 m) inside fp32.
    large_limit=1e4,
)
