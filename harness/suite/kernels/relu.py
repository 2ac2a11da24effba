"""ReLU: ``y[i] = max(x[i], 0)`` over a flat fp32 vector.

One program handles ``BLOCK`` consecutive elements; the tail block is masked.  NaN inputs must
propagate (``max(NaN, 0)`` is NaN in the reference), so the kernel selects on ``x < 0`` instead
of calling a max that might drop NaNs.
"""
from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from harness.contract import Contract, Scalar, Tensor, cdiv

BLOCK = 1024


@triton.jit
def relu_kernel(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x + offs, mask=mask, other=0.0)
    r = tl.where(x < 0.0, 0.0, x)
    tl.store(y + offs, r, mask=mask)


def reference(x: np.ndarray, n: int) -> dict[str, np.ndarray]:
    x64 = x.astype(np.float64)
    return {"y": np.where(x64 < 0.0, 0.0, x64)}


CONTRACT = Contract(
    name="relu",
    description="y = max(x, 0), elementwise over a flat fp32 vector",
    kernel=relu_kernel,
    args=[
        Tensor("x", "fp32", ("N",), role="in"),
        Tensor("y", "fp32", ("N",), role="out"),
        Scalar("n", "i32", value="N"),
    ],
    constexprs={"BLOCK": BLOCK},
    grid=lambda d: (cdiv(d["N"], BLOCK), 1, 1),
    num_warps=4, num_stages=1,
    reference=reference,
    # verify: n a multiple of 16 like the bench's (the same PTX): 3 programs, the last ragged.
    instances={"verify": {"N": 2512}, "bench": {"N": 1 << 26}},
    tolerance={"fp32": (0.0, 0.0)},   # exact: no arithmetic
)
