"""Small Triton kernels compiled ahead of time into the PTX corpus.

These are parser test inputs, not the project's kernel suite: each is small and chosen for the
PTX it makes Triton emit (predicated vector loads, shuffles for reductions, cp.async pipelines on
sm_80, wgmma on sm_90a, tcgen05 + mbarrier + tensor memory on sm_100a, atomics, integer
arithmetic, fp8 conversions).  ``SPECS`` lists how each one is compiled.
"""
from __future__ import annotations

import dataclasses

import triton
import triton.language as tl


@triton.jit
def add_masked(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=1.0)
    tl.store(out_ptr + offs, x * y + x, mask=mask)


@triton.jit
def row_sum(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(x.to(tl.float32), axis=0))


@triton.jit
def softmax(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=mask)


@triton.jit
def layernorm_bf16(x_ptr, w_ptr, out_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    d = tl.where(mask, x - mean, 0.0)
    rstd = tl.rsqrt(tl.sum(d * d, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * n_cols + cols, (d * rstd * w).to(tl.bfloat16), mask=mask)


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        acc += tl.dot(tl.load(a), tl.load(b))
        a += BLOCK_K
        b += BLOCK_K * stride_bk
    c = c_ptr + rm[:, None] * stride_cm + rn[None, :]
    tl.store(c, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def attention_fwd(q_ptr, k_ptr, v_ptr, o_ptr, seq_len, sm_scale,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD: tl.constexpr):
    pid = tl.program_id(0)
    rm = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rd = tl.arange(0, HEAD)
    q = tl.load(q_ptr + rm[:, None] * HEAD + rd[None, :])
    m_i = tl.full((BLOCK_M,), -float("inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD), tl.float32)
    for start in range(0, seq_len, BLOCK_N):
        k = tl.load(k_ptr + (start + rn)[None, :] * HEAD + rd[:, None])
        s = tl.dot(q, k) * sm_scale
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + (start + rn)[:, None] * HEAD + rd[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    tl.store(o_ptr + rm[:, None] * HEAD + rd[None, :], (acc / l_i[:, None]).to(tl.float16))


@triton.jit
def histogram(x_ptr, hist_ptr, n, NBINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.atomic_add(hist_ptr + (x % NBINS), 1, mask=mask)
    tl.atomic_max(hist_ptr + NBINS, tl.max(tl.where(mask, x, 0), axis=0))


@triton.jit
def int_math(x_ptr, out_ptr, n, shift, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    y = tl.where(x > 0, x // 7, (x % 5) << shift)
    y = (y ^ (x >> 3)) & 0xFFFF | (offs.to(tl.int64) * 3).to(tl.int32)
    z = tl.where((x & 1) == 0, tl.minimum(y, x), tl.maximum(y, -x))
    tl.store(out_ptr + offs, z.to(tl.int64) * 2654435761, mask=mask)


@triton.jit
def cumsum_cast(x_ptr, out_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * BLOCK + tl.arange(0, BLOCK)).to(tl.float32)
    tl.store(out_ptr + row * BLOCK + tl.arange(0, BLOCK), tl.cumsum(x, axis=0).to(tl.float16))


@triton.jit
def tma_scale(in_desc, out_desc, BM: tl.constexpr):
    pid = tl.program_id(0)
    x = in_desc.load([pid * BM, 0])
    out_desc.store([pid * BM, 0], (x.to(tl.float32) * 2.0).to(tl.float16))


@triton.jit
def tma_matmul(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK, num_stages=3):
        a = a_desc.load([pid_m * BM, k])
        b = b_desc.load([k, pid_n * BN])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.float16))


@triton.jit
def checked_increment(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.device_assert(x >= 0, "negative input")
    tl.device_print("x", x)
    tl.store(x_ptr + offs, x + 1, mask=offs < n)


@triton.jit
def ws_matmul(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in tl.range(0, K, BK, warp_specialize=True, num_stages=3):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


@dataclasses.dataclass(frozen=True)
class KernelSpec:
    """How to compile one corpus kernel.

    ``divisible`` names the parameters Triton may assume divisible by 16 (the specialisation a
    real launch gives pointers and sizes that are multiples of 16).  ``options`` are extra
    Triton compile options (``debug``, ``num_ctas``).
    """

    name: str
    fn: object
    signature: dict[str, str]
    constexprs: dict[str, object]
    divisible: tuple[str, ...]
    num_warps: int
    num_stages: int
    caps: tuple[int, ...]
    description: str
    options: tuple[tuple[str, object], ...] = ()


ALL_CAPS = (80, 89, 90, 100, 120)
FP8_CAPS = (89, 90, 100, 120)


def _sig(**kw: str) -> dict[str, str]:
    return dict(kw)


SPECS: tuple[KernelSpec, ...] = (
    KernelSpec("add_masked", add_masked,
               _sig(x_ptr="*fp32", y_ptr="*fp32", out_ptr="*fp32", n="i32", BLOCK="constexpr"),
               {"BLOCK": 1024}, ("x_ptr", "y_ptr", "out_ptr"), 4, 3, ALL_CAPS,
               "elementwise fp32 with masks (predicated vector ld/st)"),
    KernelSpec("row_sum", row_sum,
               _sig(x_ptr="*fp16", out_ptr="*fp32", n_cols="i32", stride="i32", BLOCK="constexpr"),
               {"BLOCK": 512}, ("x_ptr", "out_ptr", "stride"), 2, 3, ALL_CAPS,
               "row reduction fp16->fp32 (shfl.sync butterfly, shared scratch)"),
    KernelSpec("softmax", softmax,
               _sig(x_ptr="*fp32", out_ptr="*fp32", n_cols="i32", stride="i32", BLOCK="constexpr"),
               {"BLOCK": 1024}, ("x_ptr", "out_ptr", "stride"), 8, 3, ALL_CAPS,
               "row softmax (max + sum reductions, ex2.approx)"),
    KernelSpec("softmax_tuned", softmax,
               _sig(x_ptr="*fp32", out_ptr="*fp32", n_cols="i32", stride="i32", BLOCK="constexpr"),
               {"BLOCK": 4096}, ("x_ptr", "out_ptr", "stride"), 16, 3, (80, 100),
               "softmax with 16 warps, maxnreg=64 (.maxnreg) and no FMA fusion",
               (("maxnreg", 64), ("enable_fp_fusion", False))),
    KernelSpec("layernorm_bf16", layernorm_bf16,
               _sig(x_ptr="*bf16", w_ptr="*bf16", out_ptr="*bf16", n_cols="i32", eps="fp32",
                    BLOCK="constexpr"),
               {"BLOCK": 256}, ("x_ptr", "w_ptr", "out_ptr"), 1, 3, ALL_CAPS,
               "layer norm on bf16 (rsqrt, cvt.rn.bf16), one warp"),
    KernelSpec("matmul_fp16", matmul,
               _sig(a_ptr="*fp16", b_ptr="*fp16", c_ptr="*fp16", M="i32", N="i32", K="i32",
                    stride_am="i32", stride_bk="i32", stride_cm="i32", BLOCK_M="constexpr",
                    BLOCK_N="constexpr", BLOCK_K="constexpr"),
               {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32},
               ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm"),
               4, 3, ALL_CAPS,
               "fp16 matmul with tl.dot, 3 stages (cp.async/mma.sync, wgmma, tcgen05)"),
    KernelSpec("matmul_bf16_s4", matmul,
               _sig(a_ptr="*bf16", b_ptr="*bf16", c_ptr="*fp32", M="i32", N="i32", K="i32",
                    stride_am="i32", stride_bk="i32", stride_cm="i32", BLOCK_M="constexpr",
                    BLOCK_N="constexpr", BLOCK_K="constexpr"),
               {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64},
               ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm"),
               8, 4, (80, 90, 100),
               "bf16 matmul, 8 warps, 4 stages"),
    KernelSpec("matmul_fp8", matmul,
               _sig(a_ptr="*fp8e4nv", b_ptr="*fp8e4nv", c_ptr="*fp16", M="i32", N="i32", K="i32",
                    stride_am="i32", stride_bk="i32", stride_cm="i32", BLOCK_M="constexpr",
                    BLOCK_N="constexpr", BLOCK_K="constexpr"),
               {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 64},
               ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm"),
               4, 3, FP8_CAPS,
               "fp8 e4m3 matmul (cvt e4m3x2, fp8 mma/wgmma/tcgen05.kind::f8f6f4)"),
    KernelSpec("attention_fwd", attention_fwd,
               _sig(q_ptr="*fp16", k_ptr="*fp16", v_ptr="*fp16", o_ptr="*fp16", seq_len="i32",
                    sm_scale="fp32", BLOCK_M="constexpr", BLOCK_N="constexpr", HEAD="constexpr"),
               {"BLOCK_M": 128, "BLOCK_N": 64, "HEAD": 64},
               ("q_ptr", "k_ptr", "v_ptr", "o_ptr", "seq_len"), 4, 2, ALL_CAPS,
               "attention forward, online softmax, two tl.dot"),
    KernelSpec("histogram", histogram,
               _sig(x_ptr="*i32", hist_ptr="*i32", n="i32", NBINS="constexpr", BLOCK="constexpr"),
               {"NBINS": 16, "BLOCK": 256}, ("x_ptr", "hist_ptr"), 2, 3, ALL_CAPS,
               "tl.atomic_add / tl.atomic_max (atom.global.gpu.acq_rel, red)"),
    KernelSpec("int_math", int_math,
               _sig(x_ptr="*i32", out_ptr="*i64", n="i32", shift="i32", BLOCK="constexpr"),
               {"BLOCK": 128}, ("x_ptr", "out_ptr"), 1, 3, ALL_CAPS,
               "tl.where, integer div/rem/shift/xor, i64 multiply"),
    KernelSpec("cumsum_cast", cumsum_cast,
               _sig(x_ptr="*fp16", out_ptr="*fp16", BLOCK="constexpr"),
               {"BLOCK": 256}, ("x_ptr", "out_ptr"), 2, 3, (80, 90, 100),
               "tl.cumsum scan (shfl.sync.up), fp16 casts"),
    KernelSpec("tma_scale", tma_scale,
               _sig(in_desc="tensordesc<fp16[64, 64]>", out_desc="tensordesc<fp16[64, 64]>",
                    BM="constexpr"),
               {"BM": 64}, (), 4, 3, (90, 100, 120),
               "host tensor descriptors: TMA load/store (cp.async.bulk.tensor, CUtensorMap param)"),
    KernelSpec("tma_matmul", tma_matmul,
               _sig(a_desc="tensordesc<fp16[128, 64]>", b_desc="tensordesc<fp16[64, 128]>",
                    c_desc="tensordesc<fp16[128, 128]>", K="i32", BM="constexpr", BN="constexpr",
                    BK="constexpr"),
               {"BM": 128, "BN": 128, "BK": 64}, ("K",), 4, 3, (90, 100),
               "TMA-fed matmul, 3-stage mbarrier pipeline (wgmma / tcgen05)"),
    KernelSpec("checked_increment", checked_increment,
               _sig(x_ptr="*i32", n="i32", BLOCK="constexpr"),
               {"BLOCK": 128}, ("x_ptr",), 4, 3, (80, 90, 120),
               "device_assert + device_print in debug mode (extern vprintf/__assertfail calls)",
               (("debug", True),)),
    KernelSpec("ws_matmul", ws_matmul,
               _sig(a_ptr="*fp16", b_ptr="*fp16", c_ptr="*fp32", K="i32", BM="constexpr",
                    BN="constexpr", BK="constexpr"),
               {"BM": 128, "BN": 128, "BK": 64}, ("a_ptr", "b_ptr", "c_ptr", "K"), 4, 3, (100,),
               "warp-specialised tcgen05 matmul (producer/consumer partitions)"),
    KernelSpec("cluster_matmul", matmul,
               _sig(a_ptr="*fp16", b_ptr="*fp16", c_ptr="*fp32", M="i32", N="i32", K="i32",
                    stride_am="i32", stride_bk="i32", stride_cm="i32", BLOCK_M="constexpr",
                    BLOCK_N="constexpr", BLOCK_K="constexpr"),
               {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64},
               ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm"),
               4, 3, (90,),
               "2-CTA clusters (num_ctas=2: .explicitcluster, barrier.cluster)",
               (("num_ctas", 2),)),
)
