"""Seeded input generators for kernel contracts.

Floating inputs come in several distributions, each aimed at a different class of numeric bug:

- ``normal``: symmetric standard normal (the everyday case);
- ``large``: magnitudes near the type's overflow threshold, capped by the contract's
  ``large_limit`` so the reference stays finite where the kernel's own intermediates would
  otherwise overflow (e.g. a sum of squares);
- ``tiny``: tiny normals and subnormals of the type, both signs;
- ``special``: exact zeros, ones, minus ones, halves and twos;
- ``cancel``: pairs ``(x, -x + eps*|x|)`` along the last axis, which make sums cancel.

Integers get uniform ranges.  A per-input ``domain`` narrows every distribution: ``"positive"``,
``"nonnegative"``, ``"nonzero"``, ``"probability"`` (in [0, 1]) or a ``(lo, hi)`` pair.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from harness.dtypes import DType, dtype, quantize

FLOAT_DISTRIBUTIONS = ("normal", "large", "tiny", "special", "cancel")
INT_DISTRIBUTIONS = ("uniform",)
DOMAIN_WORDS = ("positive", "nonnegative", "nonzero", "probability")

# Default integer ranges: wide enough to exercise sign handling, narrow enough that sums of a
# few thousand terms stay exact in the type.
_INT_RANGES = {"i8": (-128, 127), "u8": (0, 255), "i32": (-(1 << 15), 1 << 15),
               "u32": (0, 1 << 16), "i64": (-(1 << 20), 1 << 20)}


def check_domain(domain: Any) -> str | None:
    """Return an error message if ``domain`` is not a valid input constraint, else None."""
    if domain is None or domain in DOMAIN_WORDS:
        return None
    if isinstance(domain, tuple) and len(domain) == 2 and all(isinstance(v, (int, float)) for v in domain):
        if domain[0] < domain[1]:
            return None
        return f"empty range {domain}"
    return f"{domain!r} is not one of {DOMAIN_WORDS}, None or a (lo, hi) pair"


def _raw_float(rng: np.random.Generator, dist: str, shape: tuple[int, ...], dt: DType,
               large_limit: float | None) -> np.ndarray:
    size = int(np.prod(shape, dtype=np.int64))
    if dist == "normal":
        return rng.standard_normal(size)
    if dist == "large":
        top = dt.max_value / 2.0
        if large_limit is not None:
            top = min(top, float(large_limit))
        mags = top * rng.uniform(0.25, 1.0, size)
        return mags * rng.choice([-1.0, 1.0], size)
    if dist == "tiny":
        # Mix of subnormals (multiples of the smallest subnormal) and small normals.
        sub = rng.integers(1, 1 << max(dt.mant_bits, 1), size) * dt.smallest_subnormal
        norm = dt.tiny * rng.uniform(1.0, 8.0, size)
        mags = np.where(rng.random(size) < 0.5, sub, norm)
        return mags * rng.choice([-1.0, 1.0], size)
    if dist == "special":
        return rng.choice(np.array([0.0, -0.0, 1.0, -1.0, 0.5, 2.0]), size)
    if dist == "cancel":
        x = rng.standard_normal(size)
        last = shape[-1] if shape and shape[-1] > 0 else 1
        flat = x.reshape(-1, last)
        eps = 2.0 ** -(dt.mant_bits // 2 + 1)
        pairs = 2 * (flat.shape[1] // 2)
        flat[:, 1:pairs:2] = -flat[:, 0:pairs:2] * (1.0 - eps)
        return flat.reshape(-1)
    raise ValueError(f"unknown floating distribution {dist!r}; known: {FLOAT_DISTRIBUTIONS}")


def _apply_domain(x: np.ndarray, domain: Any, dt: DType) -> np.ndarray:
    if domain is None:
        return x
    if domain in ("positive", "nonnegative"):
        x = np.abs(x)
        if domain == "positive":
            x = np.where(x == 0, 1.0 if dt.is_float else 1, x)
        return x
    if domain == "nonzero":
        return np.where(x == 0, 1.0 if dt.is_float else 1, x)
    if domain == "probability":
        ax = np.abs(x)
        return np.where(ax <= 1.0, ax, 1.0 / np.maximum(ax, 1.0))
    lo, hi = domain
    return np.clip(x, lo, hi)


def generate(name: str, dtype_name: str, shape: tuple[int, ...], dist: str, seed: int,
             domain: Any = None, large_limit: float | None = None) -> np.ndarray:
    """One input array for tensor ``name``: deterministic in (name, dist, seed, shape)."""
    dt = dtype(dtype_name)
    salt = sum((i + 1) * ord(c) for i, c in enumerate(f"{name}/{dist}"))
    rng = np.random.default_rng([seed, salt])
    if dt.is_float:
        if dist == "uniform":
            dist = "normal"
        raw = _raw_float(rng, dist, shape, dt, large_limit)
        raw = _apply_domain(raw, domain, dt)
        return quantize(raw, dt.name).reshape(shape)
    lo, hi = _INT_RANGES[dt.name]
    if isinstance(domain, tuple):
        lo, hi = max(lo, int(np.ceil(domain[0]))), min(hi, int(np.floor(domain[1])))
    raw = rng.integers(lo, hi, size=shape, endpoint=True)
    raw = _apply_domain(raw, domain if not isinstance(domain, tuple) else None, dt)
    return np.asarray(raw).astype(dt.storage)


def sentinel(dtype_name: str, shape: tuple[int, ...]) -> np.ndarray:
    """Initial contents of an output tensor: NaN (floats) or a fixed pattern (ints), so an
    element the kernel forgets to write is caught by the comparison."""
    dt = dtype(dtype_name)
    if dt.is_float:
        return np.full(shape, np.nan, dtype=dt.storage)
    return np.full(shape, 0x5A, dtype=dt.storage)
