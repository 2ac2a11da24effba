"""The arithmetic of one wgmma.mma_async, D = A*B (+ D): two models (PTX 9.7.15.5.2 leaves the
accumulation order, rounding and subnormal handling unspecified).

"model" (the default; the same name as in semantics.ptx.mma): products are exact, summed in
float64 with the old D, and the sum is rounded once to the accumulator type with
round-to-nearest-even.

"sm90" (the same rule semantics.ptx.mma_sm90 measured for mma.sync): what an H200 was measured to
do (tests/emulator/wgmma_gpu.py; bit-identical on 71 kernels, ~330,000 results, recorded in
tests/data/wgmma_h200.npz). Every term, the products a*b with exponent ea + eb (ea =
floor(log2 |a|), before normalising the product) and the old D with its own exponent, is
aligned to the largest exponent e of the instruction and truncated toward zero to a multiple of
2^(e - F); the truncated terms are summed exactly; then:
  - f16/bf16/tf32 inputs, f32 accumulator: F = 25, the sum rounded toward zero to f32;
  - e4m3/e5m2 inputs, f32 accumulator: F = 13, the sum rounded toward zero to 14 significant
    bits (the "lower than single precision" accumulation of the 9.7.15.5.2 note);
  - f16 inputs, f16 accumulator: F = 25, then round-to-nearest-even to f16;
  - e4m3/e5m2 inputs, f16 accumulator: F = 13, then round-to-nearest-even to f16.
Also measured bit-identical with inputs spread over 2^-16..2^16 (subnormal, zero and infinite
elements, large exponent differences inside one dot product); results with a non-finite term
are the IEEE float64 sum rounded as above. Not measured: NaN inputs, f32 overflow, the sign of
zero results.
"""

from __future__ import annotations

import numpy as np

from semantics.formats import F16, F32, round_f64

MODES = ("model", "sm90")


def _exponents(x: np.ndarray) -> np.ndarray:
    """floor(log2 |x|), exactly (frexp); -inf for zero."""
    _, e = np.frexp(x)
    return np.where(x == 0, -np.inf, e.astype(np.float64) - 1)


def truncated_sum(a: np.ndarray, b: np.ndarray, old: np.ndarray | None, frac_bits: int) -> np.ndarray:
    """sum_k a[m,k] b[n,k] (+ old[m,n]) with every term aligned to the largest term exponent of its
    (m, n) and truncated toward zero to a multiple of 2^(e - frac_bits); exact otherwise."""
    with np.errstate(invalid="ignore", over="ignore"):
        prods = a[:, None, :] * b[None, :, :]
    esum = _exponents(a)[:, None, :] + _exponents(b)[None, :, :]
    e = esum.max(axis=-1)
    if old is not None:
        e = np.maximum(e, _exponents(old))
    e = np.where(np.isfinite(e), e, 0.0)  # all terms zero (or non-finite, handled below)
    q = np.ldexp(1.0, (e - frac_bits).astype(np.int64))
    with np.errstate(invalid="ignore", over="ignore"):
        s = (np.trunc(prods / q[..., None]) * q[..., None]).sum(axis=-1)  # exact: < 2^34 units of q
        if old is not None:
            s = s + np.trunc(old / q) * q
        exact = prods.sum(axis=-1) + (old if old is not None else 0.0)
    bad = ~np.isfinite(prods).all(axis=-1)
    if old is not None:
        bad |= ~np.isfinite(old)
    return np.where(bad, exact, s)


def _rz_significant(x: np.ndarray, bits: int) -> np.ndarray:
    """Round toward zero to `bits` significant bits."""
    m, e = np.frexp(x)
    return np.where(np.isfinite(x), np.ldexp(np.trunc(np.ldexp(m, bits)), e - bits), x)


def accumulate(a: np.ndarray, b: np.ndarray, old: np.ndarray | None, atype: str, dtype: str,
               mode: str = "model") -> np.ndarray:
    """Bits of D (dtype .f32 or .f16) for A (M x K) and B (N x K) values (signs applied) and the
    old D values (None when scale-d is false)."""
    fmt = F16 if dtype == ".f16" else F32
    fp8 = atype in (".e4m3", ".e5m2")
    if mode == "model":
        s = a @ b.T + (old if old is not None else 0.0)
        return np.asarray(round_f64(s.reshape(-1), fmt, "rn")).reshape(s.shape)
    if mode != "sm90":
        raise ValueError(f"unknown wgmma arithmetic {mode!r}; known: {', '.join(MODES)}")
    s = truncated_sum(a, b, old, 13 if fp8 else 25)  # exact below 2^34 units: float64 holds it
    if dtype == ".f16":
        return np.asarray(round_f64(s.reshape(-1), F16, "rn")).reshape(s.shape)
    if fp8:
        s = _rz_significant(s, 14)
    return np.asarray(round_f64(s.reshape(-1), F32, "rz")).reshape(s.shape)
