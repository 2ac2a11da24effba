"""Deliberately imprecise: row sums accumulated in fp16 instead of fp32."""
import numpy as np
import triton
import triton.language as tl

from harness.contract import Contract, Scalar, Tensor


@triton.jit
def rowsum_fp16_kernel(x, y, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_N,), dtype=tl.float16)
    for n0 in range(0, N, BLOCK_N):
        acc += tl.load(x + row * N + n0 + cols, mask=n0 + cols < N, other=0.0).to(tl.float16)
    tl.store(y + row, tl.sum(acc.to(tl.float32), axis=0))


CONTRACT = Contract(
    name="broken_rowsum_fp16_acc", description="row sum with fp16 accumulation", kernel=rowsum_fp16_kernel,
    args=[Tensor("x", "fp32", ("M", "N")), Tensor("y", "fp32", ("M",), role="out"), Scalar("N", "i32", value="N")],
    constexprs={"BLOCK_N": 32}, grid=lambda d: (d["M"],),
    reference=lambda x, N: {"y": x.astype(np.float64).sum(axis=1)},
    instances={"verify": {"M": 3, "N": 333}, "bench": {"M": 3, "N": 333}},
    scale_by_abs_reference=True, distributions=("normal",),
)
