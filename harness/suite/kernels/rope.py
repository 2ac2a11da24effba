"""Rotary position embedding (RoPE, half-split "NeoX" layout) on ``x[T, H, D]`` fp16.

For token ``t``, head ``h`` and pair index ``i < D/2``, with ``x1 = x[t, h, i]`` and
``x2 = x[t, h, i + D/2]``::

    y[t, h, i]       = x1 * cos[t, i] - x2 * sin[t, i]
    y[t, h, i + D/2] = x1 * sin[t, i] + x2 * cos[t, i]

``cos``/``sin`` are fp32 tables ``[T, D/2]`` (inputs in [-1, 1]).  One program rotates
``BLOCK_H`` heads of one token; the last head block is masked when ``H`` is not a multiple.
"""
from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from harness.contract import Contract, Scalar, Tensor, cdiv

BLOCK_H = 4


@triton.jit
def rope_kernel(x, cos, sin, y, H, HALF: tl.constexpr, BLOCK_H: tl.constexpr):
    t = tl.program_id(0)
    heads = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    i = tl.arange(0, HALF)
    hmask = (heads < H)[:, None]
    base = t * H * (2 * HALF) + heads[:, None] * (2 * HALF) + i[None, :]
    x1 = tl.load(x + base, mask=hmask, other=0.0).to(tl.float32)
    x2 = tl.load(x + base + HALF, mask=hmask, other=0.0).to(tl.float32)
    c = tl.load(cos + t * HALF + i)[None, :]
    s = tl.load(sin + t * HALF + i)[None, :]
    tl.store(y + base, (x1 * c - x2 * s).to(tl.float16), mask=hmask)
    tl.store(y + base + HALF, (x1 * s + x2 * c).to(tl.float16), mask=hmask)


def reference(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, H: int) -> dict[str, np.ndarray]:
    x64 = x.astype(np.float64)
    half = x64.shape[-1] // 2
    x1, x2 = x64[..., :half], x64[..., half:]
    c, s = cos.astype(np.float64)[:, None, :], sin.astype(np.float64)[:, None, :]
    return {"y": np.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], axis=-1)}


CONTRACT = Contract(
    name="rope",
    description="rotary position embedding (half-split) on x[T, H, D] fp16 with fp32 cos/sin tables",
    kernel=rope_kernel,
    args=[
        Tensor("x", "fp16", ("T", "H", "D"), role="in"),
        Tensor("cos", "fp32", ("T", "HALF"), role="in"),
        Tensor("sin", "fp32", ("T", "HALF"), role="in"),
        Tensor("y", "fp16", ("T", "H", "D"), role="out"),
        Scalar("H", "i32", value="H"),
    ],
    constexprs={"HALF": lambda d: d["D"] // 2, "BLOCK_H": BLOCK_H},
    grid=lambda d: (d["T"], cdiv(d["H"], BLOCK_H), 1),
    num_warps=4, num_stages=1,
    reference=reference,
    # verify: H is a multiple of 16 at the bench, so here too (the same PTX), hence of BLOCK_H: no
    # ragged head block.  2 tokens x 16 heads of the bench's head dim 128.
    instances={"verify": {"T": 2, "H": 16, "D": 128, "HALF": 64},
               "bench": {"T": 16384, "H": 32, "D": 128, "HALF": 64}},
    input_domain={"cos": (-1.0, 1.0), "sin": (-1.0, 1.0)},
)
