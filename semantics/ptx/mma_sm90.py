"""A measured model of floating-point mma.sync accumulation on an H200 (sm_90), bit for bit.

The manual leaves the accumulation order, intermediate precision and rounding of .f16/.bf16/
.tf32/.e4m3/.e5m2 mma unspecified (9.7.14.5.14), so the emulator's default (semantics/ptx/mma.py)
is a documented float64 model. This module is the alternative fitted to an H200 with
tests/emulator/mma_conformance.py (32 warps x 3 operand distributions per form: typical values,
every finite bit pattern, and specials); it reproduces every element of every float form
(f16/bf16/tf32 with .f32 or .f16 accumulators, e4m3/e5m2) of that run and of a second run
with fresh operands (13 forms, 319,488 elements in all). It is selected with `semantics.ptx.mma.ACCUMULATION = "sm90"`. It describes
the H200 only: other GPUs (sm_80, sm_89, sm_100, sm_120) may differ and are unverified.

One tensor-core step (HMMA) computes, for every output element, c + sum of its K products:
  * every product is exact; its alignment exponent is ea + eb, where ea and eb are the operands'
    exponents (floor(log2|x|), taken as the format's emin for subnormals);
  * all addends (c included, with its own exponent) are truncated toward zero to multiples of
    2**(emax - 25), emax the largest alignment exponent, and summed exactly;
  * the sum is rounded toward zero to f32; magnitudes >= 2**128 become infinities; a zero
    result (cancellation or underflow) of addends that are not all zero is +0; NaN and
    infinities follow IEEE arithmetic on the exact products (a NaN result is the canonical NaN);
  * with .f16 accumulators the truncated sum is instead rounded once, to nearest even, to f16.
On sm_90, ptxas lowers mma.sync with .e4m3/.e5m2 operands (seen in its SASS) to conversions to
f16 and two f16 HMMAs, the first over the k with k % 4 in {0, 1} starting from +0, the second over
k % 4 in {2, 3} accumulating the first, then one add of c rounded to nearest (FADD or HADD2).
"""

from __future__ import annotations

import numpy as np

from semantics.formats import F16, F32, FloatFormat, decode, round_f64

_EMIN = {"f16": -14, "bf16": -126, "tf32": -126, "f32": -126}
_NONE = -(10**6)  # alignment exponent of a zero addend
_ALIGN_BITS = 25


def _exponent(x: np.ndarray, emin: int) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        _, e = np.frexp(x)
    return np.where((x != 0) & np.isfinite(x), np.maximum(e - 1, emin), _NONE)


def hmma(A: np.ndarray, B: np.ndarray, C: np.ndarray, in_ty: str, out: FloatFormat) -> np.ndarray:
    """One HMMA step on values: A (W, M, K), B (W, K, N), C (W, M, N) float64; raw bits of `out`."""
    K = A.shape[2]
    ea, eb = _exponent(A, _EMIN[in_ty]), _exponent(B, _EMIN[in_ty])
    with np.errstate(invalid="ignore", over="ignore"):
        terms = np.stack([C] + [A[:, :, q, None] * B[:, None, q, :] for q in range(K)])
        naive = terms.sum(axis=0)
    nonzero = (A[:, :, :, None] != 0) & (B[:, None, :, :] != 0)  # (W, M, K, N)
    exps = np.stack([_exponent(C, _EMIN["f32" if out is F32 else "f16"])] +
                    [np.where(nonzero[:, :, q, :], ea[:, :, q, None] + eb[:, None, q, :], _NONE)
                     for q in range(K)])
    emax = exps.max(axis=0)
    scale = np.ldexp(1.0, np.clip(emax - _ALIGN_BITS, -1074, 900).astype(np.int32))
    finite = np.where(np.isfinite(terms), terms, 0.0)
    s = np.trunc(finite / scale).sum(axis=0) * scale  # exact: < 2**31 units of `scale`
    nonzero_addend = (finite != 0).any(axis=0)
    s = np.where(s == 0, np.where(nonzero_addend, 0.0, naive), s)  # all-zero addends: IEEE signed zero
    bits = round_f64(s.reshape(-1), F32, "rz").reshape(s.shape).astype(np.uint32)
    bits = np.where(nonzero_addend & ((bits & np.uint32(0x7FFFFFFF)) == 0), np.uint32(0), bits)
    bits = np.where(np.abs(s) >= 2.0**128, np.where(s > 0, np.uint32(0x7F800000), np.uint32(0xFF800000)), bits)
    special = ~np.isfinite(naive)
    bits = np.where(special, round_f64(np.where(special, naive, 0).reshape(-1), F32, "rn").reshape(s.shape), bits)
    if out is F16:  # the aligned, truncated sum rounded once to nearest even (no f32 step)
        half = round_f64(s.reshape(-1), F16, "rn").reshape(s.shape)
        half = np.where(nonzero_addend & ((half & np.uint16(0x7FFF)) == 0), np.uint16(0), half)
        nan16 = round_f64(np.where(special, naive, 0).reshape(-1), F16, "rn").reshape(s.shape)
        return np.where(special, nan16, half).astype(np.uint16)
    return bits.astype(np.uint32)


def mma_sm90(A: np.ndarray, B: np.ndarray, C: np.ndarray, a_ty: str, out: FloatFormat) -> np.ndarray:
    """D bits for one mma.sync on float operands, as an H200 computes it (module docstring)."""
    if a_ty not in ("e4m3", "e5m2"):
        return hmma(A, B, C, a_ty, out)
    k = np.arange(A.shape[2])
    first, second = k[k % 4 < 2], k[k % 4 >= 2]
    p = hmma(A[:, :, first], B[:, first, :], np.zeros(C.shape), "f16", out)
    p = hmma(A[:, :, second], B[:, second, :], decode(p, out), "f16", out)
    with np.errstate(invalid="ignore", over="ignore"):
        total = C + decode(p, out)
    return round_f64(total.reshape(-1), out, "rn").reshape(C.shape)
