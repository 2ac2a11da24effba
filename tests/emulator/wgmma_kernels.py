"""Triton kernels that compile to wgmma on sm_90a, compiled once and cached under .cache/wgmma/
(keyed by the kernel source, the compile options and the Triton version)."""

from __future__ import annotations

import hashlib
import inspect
import json
import os
from pathlib import Path

import triton
import triton.language as tl

CACHE = Path(__file__).resolve().parents[2] / ".cache" / "wgmma"


@triton.jit
def gemm(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
         PRECISION: tl.constexpr, OUT: tl.constexpr):
    """C[BM, BN] = A[BM, K] @ B[K, BN], one CTA, row-major operands."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=OUT)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc = tl.dot(a, b, acc, input_precision=PRECISION, out_dtype=OUT)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


@triton.jit
def gemm_bt(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C = A @ B^T with B given as [BN, K] row-major (a K-major B operand)."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        bt = tl.load(b_ptr + rn[:, None] * K + (k + rk)[None, :])
        acc += tl.dot(a, tl.trans(bt))
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


@triton.jit
def attention(q_ptr, k_ptr, v_ptr, o_ptr, L, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    """O = sum over key blocks of (Q K^T) V with P = (Q K^T) cast to f16 (two dots per step; the
    second takes P from registers)."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * D + rd[None, :])
    acc = tl.zeros((BM, D), dtype=tl.float32)
    for s in range(0, L, BN):
        kt = tl.load(k_ptr + (s + rn)[None, :] * D + rd[:, None])
        p = tl.dot(q, kt).to(tl.float16)
        v = tl.load(v_ptr + (s + rn)[:, None] * D + rd[None, :])
        acc = tl.dot(p, v, acc)
    tl.store(o_ptr + rm[:, None] * D + rd[None, :], acc)


@triton.jit
def gemm_pipelined(a_ptr, b_ptr, c_ptr, K, stride_am, stride_bk, BM: tl.constexpr, BN: tl.constexpr,
                   BK: tl.constexpr):
    """The tutorial form (pointers advanced each step): Triton pipelines it with cp.async and keeps
    one wgmma group in flight (wgmma.wait_group 1)."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BK)):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


KERNELS = {"gemm": gemm, "gemm_bt": gemm_bt, "attention": attention, "gemm_pipelined": gemm_pipelined}


def compile_ptx(name: str, signature: dict, constexprs: dict, num_warps: int = 4,
                num_stages: int = 2, aligned: tuple[int, ...] = ()) -> tuple[str, int]:
    """(PTX, dynamic shared bytes) of a kernel for sm_90a, from the cache when possible; the
    arguments at the positions `aligned` are declared divisible by 16 (as Triton's JIT does for
    16-byte aligned pointers and sizes), which lets it pipeline with cp.async."""
    fn = KERNELS[name]
    opts = {"ptx_version": 90, "num_warps": num_warps, "num_stages": num_stages}
    src = inspect.getsource(fn.fn)
    blob = json.dumps([name, src, sorted(signature.items()), sorted((k, str(v)) for k, v in constexprs.items()),
                       sorted(opts.items()), list(aligned), triton.__version__], sort_keys=True)
    key = hashlib.sha256(blob.encode()).hexdigest()[:24]
    path = CACHE / f"{name}-{key}.json"
    if path.exists():
        d = json.loads(path.read_text())
        return d["ptx"], d["shared"]
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    old = os.environ.get("TRITON_PTXAS_PATH")
    os.environ["TRITON_PTXAS_PATH"] = str(Path(triton.__file__).parent / "backends" / "nvidia" / "bin" /
                                          "ptxas-blackwell")
    try:
        k = triton.compile(ASTSource(fn=fn, signature=signature, constexprs=constexprs,
                                     attrs={(i,): [["tt.divisibility", 16]] for i in aligned}),
                           target=GPUTarget("cuda", 90, 32), options=opts)
    finally:
        if old is None:
            os.environ.pop("TRITON_PTXAS_PATH", None)
        else:
            os.environ["TRITON_PTXAS_PATH"] = old
    ptx = k.asm["ptx"]
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"ptx": ptx, "shared": int(k.metadata.shared)}))
    tmp.replace(path)
    return ptx, int(k.metadata.shared)
