"""Lion optimizer step (Chen et al., "Symbolic Discovery of Optimization Algorithms", 2023).

Elementwise over a flat parameter buffer, with decoupled weight decay:

    c = beta1 * m + (1 - beta1) * g
    p = p * (1 - lr * wd) - lr * sign(c)          (sign(0) = 0)
    m = beta2 * m + (1 - beta2) * g

``p`` and ``m`` are fp32 and updated in place; ``g`` is the bf16 gradient.  The new momentum uses
the *old* ``m`` (the interpolation ``c`` is formed first).  ``c`` is formed in fp32 as
``fma(beta1, m, fl((1 - beta1) * g))`` and the reference reproduces that rounding for the sign
(see :func:`update_sign`): a sign that flips under rounding moves ``p`` by ``2 lr``.
"""
from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from harness.contract import Contract, Scalar, Tensor, cdiv

LR, BETA1, BETA2, WD = 1e-4, 0.9, 0.99, 0.1


@triton.jit
def lion_kernel(p, g, m, n, lr, beta1, beta2, wd, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    pv = tl.load(p + offs, mask=mask, other=0.0)
    # Widen bf16 -> fp32 by moving the 16 bits up (exact, as cvt.f32.bf16 is).  A plain .to()
    # is equivalent on the GPU, but Triton 3.9's interpreter mis-converts bf16 subnormals.
    gbits = tl.load(g + offs, mask=mask, other=0.0).to(tl.uint16, bitcast=True)
    gv = (gbits.to(tl.uint32) << 16).to(tl.float32, bitcast=True)
    mv = tl.load(m + offs, mask=mask, other=0.0)
    # One explicit fma, so the sign decision has the same rounding under every compiler
    # (Triton would otherwise fuse, or not, at its discretion).
    c = tl.fma(beta1, mv, (1.0 - beta1) * gv)
    upd = tl.where(c > 0.0, 1.0, tl.where(c < 0.0, -1.0, 0.0))
    tl.store(p + offs, pv * (1.0 - lr * wd) - lr * upd, mask=mask)
    tl.store(m + offs, beta2 * mv + (1.0 - beta2) * gv, mask=mask)


def update_sign(g: np.ndarray, m: np.ndarray, beta1: float) -> np.ndarray:
    """sign(c) with c rounded to fp32 exactly as the kernel forms it: c = fma(b1, m, fl(fl(1 - b1) g)).

    Near zero (subnormal m and g) the sign of c depends on that rounding, so the reference
    reproduces it: b1 * m is exact in float64 (two 24-bit significands), the sum is rounded once
    to float64 and once to fp32, which can change the value but not its sign, and flushes to
    zero exactly where the fp32 fma result is zero.
    """
    b1 = np.float32(beta1)
    addend = (np.float32(np.float32(1.0) - b1) * np.asarray(g, dtype=np.float32)).astype(np.float32)
    c = (np.float64(b1) * np.asarray(m, dtype=np.float64) + addend.astype(np.float64)).astype(np.float32)
    return np.sign(c.astype(np.float64))


def reference(p: np.ndarray, g: np.ndarray, m: np.ndarray, lr: float, beta1: float, beta2: float,
              wd: float) -> dict[str, np.ndarray]:
    p64, g64, m64 = (a.astype(np.float64) for a in (p, g, m))
    return {"p": p64 * (1.0 - lr * wd) - lr * update_sign(g, m, beta1),
            "m": beta2 * m64 + (1.0 - beta2) * g64}


CONTRACT = Contract(
    name="lion",
    description="Lion step: p = p(1-lr wd) - lr sign(b1 m + (1-b1) g); m = b2 m + (1-b2) g",
    kernel=lion_kernel,
    args=[
        Tensor("p", "fp32", ("N",), role="inout"),
        Tensor("g", "bf16", ("N",), role="in"),
        Tensor("m", "fp32", ("N",), role="inout"),
        Scalar("n", "i32", value="N"),
        Scalar("lr", "fp32", value=LR),
        Scalar("beta1", "fp32", value=BETA1),
        Scalar("beta2", "fp32", value=BETA2),
        Scalar("wd", "fp32", value=WD),
    ],
    constexprs={"BLOCK": 1024},
    grid=lambda d: (cdiv(d["N"], 1024), 1, 1),
    num_warps=4, num_stages=1,
    reference=reference,
    # verify: n a multiple of 16 like the bench's (the same PTX): 2 programs, the second ragged
    # (480 of 1024).  bench: a 1B-parameter shard (2^28 elements).
    instances={"verify": {"N": 1504}, "bench": {"N": 1 << 28}},
    min_arch=80,
    # A few fp32 roundings per element (the scalars are fp32, e.g. 1 - beta2 and lr * wd are
    # rounded, and the GPU contracts mul+add into fma) -> ~4 ulp relative to the sum of |terms|:
    # beta2 m and (1 - beta2) g can cancel, so errors are measured against the reference on
    # |inputs| (scale_by_abs_reference).  atol covers p and m near zero.  The sign of c is
    # reproduced exactly by the reference (update_sign), so it needs no slack.
    tolerance={"fp32": (4e-6, 1e-9)},
    scale_by_abs_reference=True,
    large_limit=1e30,
)
