"""Deliberately imprecise: Mamba-2 chunk scan with the intra-chunk weights truncated to bf16
precision (8 significand bits) before the fp16 dot: 8x the per-term rounding the contract's
error bound allows."""
import dataclasses

import triton
import triton.language as tl

from harness.suite.kernels.mamba2_chunk_scan import CONTRACT as _GOOD


@triton.jit
def mamba2_scan_bf16_kernel(x, cmat, bmat, dt, dA_cs, prev, Dskip, y, L, H, G, P, N, Q, Cn,
                             BLOCK_M: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_N: tl.constexpr,
                             BLOCK_K: tl.constexpr):
    pid0 = tl.program_id(0)
    pid_bc = tl.program_id(1)
    h = tl.program_id(2)
    num_p = tl.cdiv(P, BLOCK_P)
    pid_m = pid0 // num_p
    pid_p = pid0 % num_p
    b = pid_bc // Cn
    c = pid_bc % Cn
    g = h // (H // G)
    t_start = c * Q
    length = tl.minimum(Q, L - t_start)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)          # positions within the chunk
    rp = pid_p * BLOCK_P + tl.arange(0, BLOCK_P)
    rn = tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    m_ok = rm < length
    p_ok = rp < P
    n_ok = rn < N
    row_bh = (b * H + h).to(tl.int64) * L
    ti = (t_start + rm).to(tl.int64)
    cs_i = tl.load(dA_cs + row_bh + ti, mask=m_ok, other=0.0)
    ct = tl.load(cmat + ((b * L + ti[:, None]) * G + g) * N + rn[None, :],
                 mask=m_ok[:, None] & n_ok[None, :], other=0.0)                       # [BM, BN]
    # State term: C_i . prev[:, p] scaled by exp(cs_i).  prev^T tile [BN, BP], rounded to fp16.
    pv = tl.load(prev + ((((b * Cn + c) * H + h).to(tl.int64) * P + rp[None, :]) * N + rn[:, None]),
                 mask=n_ok[:, None] & p_ok[None, :], other=0.0)
    acc = tl.dot(ct, pv.to(tl.float16)) * tl.exp(cs_i)[:, None]
    # Intra-chunk causal term.
    hi = tl.minimum((pid_m + 1) * BLOCK_M, length)
    for k0 in range(0, hi, BLOCK_K):
        rj = k0 + rk
        j_ok = rj < length
        tj = (t_start + rj).to(tl.int64)
        bt = tl.load(bmat + ((b * L + tj[None, :]) * G + g) * N + rn[:, None],
                     mask=n_ok[:, None] & j_ok[None, :], other=0.0)                  # B^T [BN, BK]
        cb = tl.dot(ct, bt)                                                         # [BM, BK]
        cs_j = tl.load(dA_cs + row_bh + tj, mask=j_ok, other=0.0)
        dt_j = tl.load(dt + row_bh + tj, mask=j_ok, other=0.0)
        keep = (rm[:, None] >= rj[None, :]) & j_ok[None, :]
        decay = tl.exp(tl.where(keep, cs_i[:, None] - cs_j[None, :], float("-inf")))
        w32 = (cb * decay * dt_j[None, :]).to(tl.int32, bitcast=True) & -65536   # the bug: weights cut
        w = w32.to(tl.float32, bitcast=True).to(tl.float16)                     # to bf16 precision
        xj = tl.load(x + ((b * L + tj[:, None]) * H + h) * P + rp[None, :],
                     mask=j_ok[:, None] & p_ok[None, :], other=0.0)                  # [BK, BP]
        acc = tl.dot(w, xj, acc)
    xi = tl.load(x + ((b * L + ti[:, None]) * H + h) * P + rp[None, :],
                 mask=m_ok[:, None] & p_ok[None, :], other=0.0)
    acc += tl.load(Dskip + h) * xi.to(tl.float32)
    tl.store(y + ((b * L + ti[:, None]) * H + h) * P + rp[None, :], acc.to(y.dtype.element_ty),
             mask=m_ok[:, None] & p_ok[None, :])



# A small state dim (24, as the suite's verify instance had before it took the bench tiles): with
# N >= 80 (what BLOCK_N = 128 needs) the 2^-11 bound, relative to the reference on |inputs|, also
# covers the N-term state product C . prev, which dwarfs a row's few intra-chunk terms; the bf16
# weights then stay within it on "normal" inputs (worst 0.6x on the emulator) and only "cancel"
# catches them (1.7x).  Here: 1.6x ("normal") and 2.5x ("cancel").
_SMALL_STATE = {"B": 1, "L": 75, "H": 4, "G": 2, "P": 24, "N": 24, "Q": 32, "C": 3}
CONTRACT = dataclasses.replace(_GOOD, name="broken_mamba2_scan_bf16", kernel=mamba2_scan_bf16_kernel,
                               instances={"verify": _SMALL_STATE, "bench": _SMALL_STATE})
