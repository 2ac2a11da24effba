"""Deliberately wrong: ReLU whose mask skips the last element (it keeps the NaN sentinel)."""
import numpy as np
import triton
import triton.language as tl

from harness.contract import Contract, Scalar, Tensor, cdiv


@triton.jit
def relu_tail_kernel(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n - 1
    v = tl.load(x + offs, mask=mask, other=0.0)
    tl.store(y + offs, tl.where(v < 0.0, 0.0, v), mask=mask)


CONTRACT = Contract(
    name="broken_relu_drops_tail", description="relu missing its last element", kernel=relu_tail_kernel,
    args=[Tensor("x", "fp32", ("N",)), Tensor("y", "fp32", ("N",), role="out"), Scalar("n", "i32", value="N")],
    constexprs={"BLOCK": 128}, grid=lambda d: (cdiv(d["N"], 128),),
    reference=lambda x, n: {"y": np.maximum(x.astype(np.float64), 0.0)},
    instances={"verify": {"N": 300}, "bench": {"N": 300}},
)
