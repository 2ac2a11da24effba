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

from dataclasses import dataclass
from typing import Any, Callable

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


# ---------------------------------------------------------------- counter-based draws
# Every input element is a pure function of (tensor name, distribution, seed, element index): a
# tensor can be generated whole (the numeric tests) or only where a run touches it (the checker's
# lazy buffers, symexec.paged), and both give the same values. Draw d of element i is a 64-bit
# splitmix of the stream key and 8 i + d (at most 8 draws per element).

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _splitmix(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@dataclass(frozen=True)
class _Stream:
    key: int

    def bits(self, idx: np.ndarray, draw: int) -> np.ndarray:
        with np.errstate(over="ignore"):
            x = np.uint64(self.key) ^ ((idx.astype(np.uint64) * np.uint64(8) + np.uint64(draw)) * _GOLDEN)
        return _splitmix(_splitmix(x))

    def uniform(self, idx: np.ndarray, draw: int) -> np.ndarray:
        """In [0, 1), 53 random bits."""
        return (self.bits(idx, draw) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53

    def normal(self, idx: np.ndarray, draw: int = 0) -> np.ndarray:
        """Standard normal (Box-Muller on draws `draw`, `draw` + 1)."""
        u1 = 1.0 - self.uniform(idx, draw)  # (0, 1]
        u2 = self.uniform(idx, draw + 1)
        return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)

    def sign(self, idx: np.ndarray, draw: int) -> np.ndarray:
        return np.where(self.bits(idx, draw) >> np.uint64(63), -1.0, 1.0)

    def integers(self, idx: np.ndarray, draw: int, lo: int, hi: int) -> np.ndarray:
        """Uniform in [lo, hi], both included."""
        span = float(hi - lo + 1)
        return lo + np.minimum(np.floor(self.uniform(idx, draw) * span), span - 1).astype(np.int64)


def _raw_float(st: _Stream, dist: str, idx: np.ndarray, shape: tuple[int, ...], dt: DType,
               large_limit: float | None) -> np.ndarray:
    if dist == "normal":
        return st.normal(idx)
    if dist == "large":
        top = dt.max_value / 2.0
        if large_limit is not None:
            top = min(top, float(large_limit))
        return top * (0.25 + 0.75 * st.uniform(idx, 0)) * st.sign(idx, 1)
    if dist == "tiny":
        # Mix of subnormals (multiples of the smallest subnormal) and small normals.
        sub = st.integers(idx, 0, 1, (1 << max(dt.mant_bits, 1)) - 1) * dt.smallest_subnormal
        norm = dt.tiny * (1.0 + 7.0 * st.uniform(idx, 1))
        return np.where(st.uniform(idx, 2) < 0.5, sub, norm) * st.sign(idx, 3)
    if dist == "special":
        return np.array([0.0, -0.0, 1.0, -1.0, 0.5, 2.0])[st.integers(idx, 0, 0, 5)]
    if dist == "cancel":  # pairs (x, -x (1 - eps)) along the last axis
        last = shape[-1] if shape and shape[-1] > 0 else 1
        col = idx % last
        partner = (col % 2 == 1) & (col < 2 * (last // 2))
        eps = 2.0 ** -(dt.mant_bits // 2 + 1)
        return np.where(partner, -st.normal(np.maximum(idx - 1, 0)) * (1.0 - eps), st.normal(idx))
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


def elements(name: str, dtype_name: str, shape: tuple[int, ...], dist: str, seed: int,
             domain: Any = None, large_limit: float | None = None) -> Callable[[np.ndarray], np.ndarray]:
    """The generator of tensor ``name``: flat element indices -> values (host storage), the same
    for any subset of indices as for the whole tensor."""
    dt = dtype(dtype_name)
    if dt.is_float:
        if dist == "uniform":
            dist = "normal"
        if dist not in FLOAT_DISTRIBUTIONS:
            raise ValueError(f"unknown floating distribution {dist!r}; known: {FLOAT_DISTRIBUTIONS}")
    st = _Stream(int(_splitmix(np.array([seed & 0xFFFFFFFFFFFFFFFF], np.uint64) ^ np.uint64(
        sum((i + 1) * ord(c) for i, c in enumerate(f"{name}/{dist}"))))[0]))

    def values(idx: np.ndarray) -> np.ndarray:
        idx = np.asarray(idx, dtype=np.int64)
        if dt.is_float:
            raw = _apply_domain(_raw_float(st, dist, idx, shape, dt, large_limit), domain, dt)
            return quantize(raw, dt.name)
        lo, hi = _INT_RANGES[dt.name]
        if isinstance(domain, tuple):
            lo, hi = max(lo, int(np.ceil(domain[0]))), min(hi, int(np.floor(domain[1])))
        raw = _apply_domain(st.integers(idx, 0, lo, hi), domain if not isinstance(domain, tuple) else None, dt)
        return np.asarray(raw).astype(dt.storage)

    return values


def generate(name: str, dtype_name: str, shape: tuple[int, ...], dist: str, seed: int,
             domain: Any = None, large_limit: float | None = None) -> np.ndarray:
    """One input array for tensor ``name``: deterministic in (name, dist, seed, shape)."""
    values = elements(name, dtype_name, shape, dist, seed, domain, large_limit)
    return values(np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.int64)).reshape(shape)


def sentinel(dtype_name: str, shape: tuple[int, ...]) -> np.ndarray:
    """Initial contents of an output tensor: NaN (floats) or a fixed pattern (ints), so an
    element the kernel forgets to write is caught by the comparison."""
    return np.full(shape, _sentinel_value(dtype_name), dtype=dtype(dtype_name).storage)


def _sentinel_value(dtype_name: str):
    return np.nan if dtype(dtype_name).is_float else 0x5A


@dataclass(frozen=True)
class LazyTensor:
    """A host tensor made on demand: `values(flat indices)` gives any of its elements (the same as
    the whole tensor has there); `np.asarray(t)` materialises it. The checker's launch reads only
    the elements a run touches (harness.emulate.DeviceBytes, symexec.paged)."""

    dtype: str
    shape: tuple[int, ...]
    values: Callable[[np.ndarray], np.ndarray]

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def materialize(self) -> np.ndarray:
        return np.asarray(self.values(np.arange(self.size, dtype=np.int64))).reshape(self.shape)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        arr = self.materialize()
        return arr if dtype is None else arr.astype(dtype)


def lazy_input(name: str, dtype_name: str, shape: tuple[int, ...], dist: str, seed: int,
               domain: Any = None, large_limit: float | None = None) -> LazyTensor:
    return LazyTensor(dtype_name, tuple(shape), elements(name, dtype_name, shape, dist, seed, domain, large_limit))


def lazy_sentinel(dtype_name: str, shape: tuple[int, ...]) -> LazyTensor:
    value, storage = _sentinel_value(dtype_name), dtype(dtype_name).storage
    return LazyTensor(dtype_name, tuple(shape), lambda idx: np.full(np.shape(idx), value, dtype=storage))
