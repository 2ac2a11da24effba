"""Deliberately fragile: softmax without subtracting the row max (overflows on large inputs)."""
import numpy as np
import triton
import triton.language as tl

from harness.contract import Contract, Scalar, Tensor


@triton.jit
def softmax_nomax_kernel(x, y, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    e = tl.exp(tl.load(x + row * N + cols, mask=mask, other=-float("inf")))
    tl.store(y + row * N + cols, e / tl.sum(e, axis=0), mask=mask)


def reference(x, N):
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    return {"y": e / e.sum(axis=1, keepdims=True)}


CONTRACT = Contract(
    name="broken_softmax_no_max", description="softmax without max subtraction", kernel=softmax_nomax_kernel,
    args=[Tensor("x", "fp32", ("M", "N")), Tensor("y", "fp32", ("M", "N"), role="out"), Scalar("N", "i32", value="N")],
    constexprs={"BLOCK_N": 128}, grid=lambda d: (d["M"],), reference=reference,
    instances={"verify": {"M": 3, "N": 100}, "bench": {"M": 3, "N": 100}},
    tolerance={"fp32": (2e-5, 1e-7)},
)
