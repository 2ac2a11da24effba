"""SwiGLU gate: ``y = silu(g) * u`` with ``silu(g) = g * sigmoid(g) = g / (1 + exp(-g))``.

``g`` and ``u`` are the two halves of an MLP up-projection, both ``[M, N]`` fp16, contiguous;
the kernel treats them as flat vectors (the op is elementwise).  Math is fp32.
"""
from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from harness.contract import Contract, Scalar, Tensor, cdiv

BLOCK = 1024


@triton.jit
def swiglu_kernel(g, u, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    g = tl.load(g + offs, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(u + offs, mask=mask, other=0.0).to(tl.float32)
    silu = g / (1.0 + tl.exp(-g))
    tl.store(y + offs, (silu * u).to(tl.float16), mask=mask)


def reference(g: np.ndarray, u: np.ndarray, n: int) -> dict[str, np.ndarray]:
    g64, u64 = g.astype(np.float64), u.astype(np.float64)
    with np.errstate(over="ignore"):
        return {"y": g64 / (1.0 + np.exp(-g64)) * u64}


CONTRACT = Contract(
    name="swiglu",
    description="y = silu(g) * u elementwise over [M, N] fp16 (SiLU gated linear unit)",
    kernel=swiglu_kernel,
    args=[
        Tensor("g", "fp16", ("M", "N"), role="in"),
        Tensor("u", "fp16", ("M", "N"), role="in"),
        Tensor("y", "fp16", ("M", "N"), role="out"),
        Scalar("n", "i32", value=lambda d: d["M"] * d["N"]),
    ],
    constexprs={"BLOCK": BLOCK},
    grid=lambda d: (cdiv(d["M"] * d["N"], BLOCK), 1, 1),
    num_warps=4, num_stages=1,
    reference=reference,
    # verify: n = M * N = 2128, a multiple of 16 like the bench's (the same PTX): 3 programs, the
    # last ragged.
    instances={"verify": {"M": 7, "N": 304}, "bench": {"M": 8192, "N": 14336}},
)
