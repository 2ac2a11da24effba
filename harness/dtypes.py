"""Element types shared by kernel contracts: names, Triton spellings, numpy storage, rounding.

numpy has no bfloat16 or fp8 types, so tensors of those types are *stored* as float32 arrays
whose values are exactly representable in the narrow type (``quantize`` rounds to nearest-even
onto that grid).  Runners convert such arrays to the real torch dtype before a launch.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class DType:
    """One element type of the contract language."""

    name: str                 # contract spelling, e.g. "fp8e4m3"
    triton: str               # Triton signature spelling, e.g. "fp8e4nv"
    storage: type             # numpy dtype used to hold values on the host
    kind: str                 # "f" (floating) or "i" (integer)
    bits: int
    torch: str                # attribute name in the torch module
    mant_bits: int = 0        # explicit fraction bits (floats only)
    min_exp: int = 0          # exponent of the smallest normal (floats only)
    max_value: float = 0.0    # largest finite magnitude (floats) / largest value (ints)
    min_value: float = 0.0    # smallest value (ints only)
    has_inf: bool = True

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def tiny(self) -> float:
        """Smallest positive normal value (floats only)."""
        return float(2.0 ** self.min_exp)

    @property
    def smallest_subnormal(self) -> float:
        return float(2.0 ** (self.min_exp - self.mant_bits))


_TABLE: dict[str, DType] = {
    "fp64": DType("fp64", "fp64", np.float64, "f", 64, "float64", 52, -1022, float(np.finfo(np.float64).max)),
    "fp32": DType("fp32", "fp32", np.float32, "f", 32, "float32", 23, -126, float(np.finfo(np.float32).max)),
    "fp16": DType("fp16", "fp16", np.float16, "f", 16, "float16", 10, -14, 65504.0),
    "bf16": DType("bf16", "bf16", np.float32, "f", 16, "bfloat16", 7, -126, 3.3895313892515355e38),
    # OCP FP8: E4M3 ("fn": finite only, max 448), E5M2 (IEEE-like, max 57344).
    "fp8e4m3": DType("fp8e4m3", "fp8e4nv", np.float32, "f", 8, "float8_e4m3fn", 3, -6, 448.0, has_inf=False),
    "fp8e5m2": DType("fp8e5m2", "fp8e5", np.float32, "f", 8, "float8_e5m2", 2, -14, 57344.0),
    "i8": DType("i8", "i8", np.int8, "i", 8, "int8", max_value=127, min_value=-128),
    "u8": DType("u8", "u8", np.uint8, "i", 8, "uint8", max_value=255, min_value=0),
    "i32": DType("i32", "i32", np.int32, "i", 32, "int32", max_value=2**31 - 1, min_value=-(2**31)),
    "u32": DType("u32", "u32", np.uint32, "i", 32, "uint32", max_value=2**32 - 1, min_value=0),
    "i64": DType("i64", "i64", np.int64, "i", 64, "int64", max_value=2**63 - 1, min_value=-(2**63)),
}
_ALIASES = {"fp8e4nv": "fp8e4m3", "fp8e5": "fp8e5m2", "f32": "fp32", "f16": "fp16", "f64": "fp64"}

#: Element types a contract tensor may use (fp64 is reserved for references).
TENSOR_DTYPES = tuple(n for n in _TABLE if n != "fp64")
#: Element types a scalar argument may use.
SCALAR_DTYPES = ("i32", "i64", "u32", "fp32")


def canonical(name: str) -> str:
    """The canonical contract spelling of ``name`` (resolving aliases); KeyError if unknown."""
    name = _ALIASES.get(name, name)
    if name not in _TABLE:
        raise KeyError(name)
    return name


def dtype(name: str) -> DType:
    return _TABLE[canonical(name)]


def is_known(name: str) -> bool:
    return _ALIASES.get(name, name) in _TABLE


def quantize(values: np.ndarray, name: str) -> np.ndarray:
    """Round ``values`` to the nearest (ties to even) value of type ``name``; storage dtype out.

    Magnitudes that round above the largest finite value become +-inf, as IEEE round-to-nearest
    conversion does.  Types without inf (E4M3 "fn") saturate to +-max instead, like the
    ``cvt.rn.satfinite.e4m3x2`` conversion Triton emits (PTX ISA, cvt: ``.satfinite`` maps
    out-of-range values, infinities included, to MAX_NORM and keeps NaN) and like torch.
    """
    dt = dtype(name)
    x = np.asarray(values, dtype=np.float64)
    if not dt.is_float:
        raise ValueError(f"quantize: {name} is not a floating type")
    if dt.name in ("fp64", "fp32", "fp16"):
        with np.errstate(over="ignore"):
            return x.astype(dt.storage)
    # Normal range of the target: round the float64 bit pattern to ``mant_bits`` fraction bits,
    # ties to even (add half an ulp minus one, plus the kept lsb, then truncate).
    drop = 52 - dt.mant_bits
    bits = np.ascontiguousarray(x).view(np.int64)
    lsb = (bits >> drop) & 1
    rounded = ((bits + ((1 << (drop - 1)) - 1) + lsb) >> drop) << drop
    out = np.where(np.isfinite(x), rounded.view(np.float64), x)
    # Below the smallest normal the spacing is fixed (subnormals): scale, round half-even, scale back.
    small = np.abs(x) < dt.tiny
    if small.any():
        step = dt.smallest_subnormal
        out[small] = np.round(x[small] / step) * step
    over = ~np.isnan(x) & (np.abs(out) > dt.max_value)
    out[over] = np.sign(out[over]) * (np.inf if dt.has_inf else dt.max_value)
    return out.astype(dt.storage)


def overflow_threshold(name: str) -> float:
    """Smallest magnitude that rounds to infinity in type ``name`` (round to nearest even: the
    largest finite value has an odd significand, so the half-way point already overflows);
    +inf for integer types and for types that saturate instead (E4M3)."""
    dt = dtype(name)
    if not dt.is_float or not dt.has_inf:
        return float("inf")
    emax = int(np.floor(np.log2(dt.max_value)))
    return dt.max_value + 2.0 ** (emax - dt.mant_bits - 1)
