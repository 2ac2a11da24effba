"""2-D convolution as an implicit GEMM (NHWC activations, RSCF filters, fp16, fp32 accumulate).

``y[n, p, q, f] = sum_{r, s, c} x[n, p*S - P + r, q*S - P + s, c] * w[r, s, c, f]`` with stride
``S``, zero padding ``P``, output size ``OH = (H + 2P - KH) // S + 1`` (likewise ``OW``).

As a GEMM: rows ``m = (n, p, q)`` (``N*OH*OW`` of them), columns ``f`` (``F``), reduction
``k = (r, s, c)`` (``KH*KW*C``).  The filter is already the ``[K, F]`` matrix; the activation
tile is gathered on the fly, with out-of-image taps (padding) and the row/K tails masked to 0.
"""
from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from harness.contract import Contract, Scalar, Tensor, cdiv


def tiles(d: dict) -> tuple[int, int, int]:
    """(BLOCK_M, BLOCK_N, BLOCK_K), the same for every instance (the verify build is the timed one)."""
    return 128, 64, 32


def out_size(d: dict, axis: str) -> int:
    k = d["KH"] if axis == "H" else d["KW"]
    return (d[axis] + 2 * d["PAD"] - k) // d["STRIDE"] + 1


@triton.jit
def conv2d_kernel(x, w, y, NB, H, W, C, F, OH, OW,
                  KH: tl.constexpr, KW: tl.constexpr, STRIDE: tl.constexpr, PAD: tl.constexpr,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rf = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    M = NB * OH * OW
    KTOT = KH * KW * C
    n = rm // (OH * OW)
    p = (rm // OW) % OH
    q = rm % OW
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, KTOT, BLOCK_K):
        kk = k0 + rk
        r = kk // (KW * C)
        s = (kk // C) % KW
        c = kk % C
        ih = p[:, None] * STRIDE - PAD + r[None, :]
        iw = q[:, None] * STRIDE - PAD + s[None, :]
        ok = (rm[:, None] < M) & (kk[None, :] < KTOT) & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        xt = tl.load(x + ((n[:, None] * H + ih) * W + iw) * C + c[None, :], mask=ok, other=0.0)
        wt = tl.load(w + kk[:, None] * F + rf[None, :], mask=(kk[:, None] < KTOT) & (rf[None, :] < F), other=0.0)
        acc = tl.dot(xt, wt, acc)
    ymask = (rm[:, None] < M) & (rf[None, :] < F)
    tl.store(y + rm[:, None] * F + rf[None, :], acc.to(tl.float16), mask=ymask)


def reference(x: np.ndarray, w: np.ndarray, OH: int, OW: int, KH: int, KW: int,
              STRIDE: int, PAD: int) -> dict[str, np.ndarray]:
    x64 = np.pad(x.astype(np.float64), ((0, 0), (PAD, PAD), (PAD, PAD), (0, 0)))
    w64 = w.astype(np.float64)
    nb, f = x.shape[0], w.shape[-1]
    y = np.zeros((nb, OH, OW, f))
    for r in range(KH):
        for s in range(KW):
            win = x64[:, r:r + STRIDE * (OH - 1) + 1:STRIDE, s:s + STRIDE * (OW - 1) + 1:STRIDE, :]
            y += win @ w64[r, s]                     # [N, OH, OW, C] @ [C, F]
    return {"y": y}


def _dims(n: int, h: int, w: int, c: int, f: int, k: int, stride: int, pad: int) -> dict[str, int]:
    d = {"N": n, "H": h, "W": w, "C": c, "F": f, "KH": k, "KW": k, "STRIDE": stride, "PAD": pad}
    d["OH"], d["OW"] = out_size(d, "H"), out_size(d, "W")
    return d


CONTRACT = Contract(
    name="conv2d",
    description="2-D convolution, NHWC fp16 x RSCF fp16 -> NHWC fp16, implicit GEMM with tl.dot",
    kernel=conv2d_kernel,
    args=[
        Tensor("x", "fp16", ("N", "H", "W", "C"), role="in"),
        Tensor("w", "fp16", ("KH", "KW", "C", "F"), role="in"),
        Tensor("y", "fp16", ("N", "OH", "OW", "F"), role="out"),
        Scalar("NB", "i32", value="N"),
        Scalar("H", "i32", value="H"),
        Scalar("W", "i32", value="W"),
        Scalar("C", "i32", value="C"),
        Scalar("F", "i32", value="F"),
        Scalar("OH", "i32", value="OH"),
        Scalar("OW", "i32", value="OW"),
    ],
    constexprs={"KH": "KH", "KW": "KW", "STRIDE": "STRIDE", "PAD": "PAD",
                "BLOCK_M": lambda d: tiles(d)[0], "BLOCK_N": lambda d: tiles(d)[1],
                "BLOCK_K": lambda d: tiles(d)[2]},
    grid=lambda d: (cdiv(d["N"] * d["OH"] * d["OW"], tiles(d)[0]), cdiv(d["F"], tiles(d)[1]), 1),
    num_warps=4, num_stages=2,
    reference=reference,
    flops=lambda d: 2.0 * d["N"] * d["OH"] * d["OW"] * d["F"] * d["C"] * d["KH"] * d["KW"],
    # verify: the bench's NB, C and F are multiples of 16 and H, W, OH, OW (56) are not; the verify
    # scalars keep that (the same tt.divisibility, hence the same PTX): NB = 16 images of 3 x 4
    # with C = 16, F = 16.  GEMM rows 16*3*4 = 192: 2 programs, the second ragged (64 of 128);
    # columns 16 of 64; K = 9*16 = 144 in 5 steps of 32 (the last 16 wide); taps past the image
    # border read the zero padding.
    instances={"verify": _dims(16, 3, 4, 16, 16, 3, 1, 1),
               "bench": _dims(32, 56, 56, 64, 64, 3, 1, 1)},
    scale_by_abs_reference=True,
)
