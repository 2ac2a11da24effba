"""Block-scaled ("micro-scaling") number formats and how their elements are stored.

Scale factors (PTX 5.2.3, "ue8m0 data format" / "ue4m3 data format"):

- ue8m0: 8 exponent bits, no mantissa, no sign: value 2**(e - 127); 0xFF is NaN; no infinity and
  no zero (`semantics.formats.decode_ue8m0`).
- ue4m3: "a 7-bit unsigned floating-point format with 4 bits for exponent and 3 bits for mantissa
  ... does not support infinity. NaN value is limited to 0x7f ... declared with .b8 type having MSB
  bit padded with zero": the non-negative half of e4m3 (bias 7, subnormals at exponent 0). A byte
  with bit 7 set is not a ue4m3 value the manual defines: `OutsideFormat` (an `Unsupported`) at the caller
  (`check_ue4m3`). The bias is not stated there; MODEL: e4m3's bias 7 (largest value 448, "the
  non-negative half of E4M3" in NVIDIA's NVFP4 description and Colfax's block-scaling tutorial).

Element containers (how 4- and 6-bit elements e2m1 / e2m3 / e3m2 are held):

- `CONTAINER8`: one element per byte. mma.sync `.kind::f8f6f4` / `.kind::mxf8f6f4` (9.7.14.5.14,
  text): ".e2m1 resides in central 4 bits of the 8-bit container with padding in the upper 2 bits
  and lower 2 bits", ".e3m2 or .e2m3 ... resides in the lower 6 bits of the 8-bit container with
  padding in the upper 2 bits". MODEL: padding bits are ignored (the manual does not say what they
  must hold; CUTLASS zeroes them, shifting ldmatrix's low-nibble e2m1 left by 2 bits,
  cute/atom/mma_traits_sm120.hpp `fp4_shift_A`).
- `PADDED16`: tcgen05 `.kind::mxf8f6f4` operands in shared memory (9.7.16.10.4.4: "contiguously
  packed along with padding", drawn in Figures 202/203 only). MODEL (CUDA driver tensor-map types
  CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B / 16U6_ALIGN16B and `cp.async.bulk.tensor` `.b4x16_p64` /
  `.b6x16_p32`, which fill exactly this shared-memory format; Colfax's "Sub-byte GEMM on Blackwell"
  and CUTLASS's `float_e2m1_unpacksmem_t`): each aligned 16-byte unit holds 16 consecutive elements
  packed as a little-endian bit stream (element j in bits [w*j, w*j + w) of the unit, w = 4 or 6)
  in its first 8 (4-bit) or 12 (6-bit) bytes, the rest padding (ignored). In the canonical layouts
  each element therefore takes one byte of address space.
- `PACKED4`: tcgen05 `.kind::mxf4` / `.kind::mxf4nvf4` in shared memory (9.7.16.10.4.6: "pack two
  4-bit elements in a 8-bit container, with no padding") and mma.sync m16n8k64 registers (eight
  e2m1 per .b32, "elements (low to high)", 9.7.14.5.x m16n8k64). MODEL for shared memory: the
  element with the lower K index in the low nibble (the order within a byte is drawn, not stated;
  it is the order of register fragments, of OCP MX / PyTorch float4_e2m1fn_x2 and of CUTLASS's
  sub-byte arrays). For an MMA whose A and B both come from shared memory this choice cannot change
  D: both operands use it, and the two elements of a byte never straddle a scale-factor chunk
  (16 or 32 elements), so swapping them pairs the same products. Likewise the element order inside
  a `PADDED16` unit matters only when A and B have different widths (e2m1 x e3m2, tested).
"""

from __future__ import annotations

from enum import Enum

import numpy as np

from .errors import OutsideFormat
from .formats import E4M3, decode, decode_ue8m0, get_format

SUB_BYTE = {"e2m1": 4, "e2m3": 6, "e3m2": 6}  # element format -> significant bits


class ScaleType(Enum):
    """Element type of the scale-factor matrices (`.stype` of mma.sync; bit 23 of the tcgen05
    block-scaled instruction descriptor, Tables 43/44)."""

    UE8M0 = "ue8m0"
    UE4M3 = "ue4m3"


def check_ue4m3(bits: np.ndarray) -> int | None:
    """The first byte with bit 7 set (not a ue4m3 value, 5.2.3), or None."""
    b = np.asarray(bits).astype(np.int64).reshape(-1)
    bad = np.nonzero(b & 0x80)[0]
    return int(b[bad[0]]) if bad.size else None


def decode_ue4m3(bits: np.ndarray) -> np.ndarray:
    """float64 value of 7-bit ue4m3 codes (bit 7 must be clear: `check_ue4m3`); 0x7F is NaN."""
    return decode(np.asarray(bits).astype(np.uint8) & np.uint8(0x7F), E4M3)


def decode_scale(bits: np.ndarray, stype: ScaleType) -> np.ndarray:
    """float64 value of scale-factor bytes (both decoders read only the low byte: arrays are looked
    up in the table of all 256 bytes, `_scale_byte_values`)."""
    b = np.asarray(bits)
    if b.ndim and b.dtype.kind in "iu":
        return _scale_byte_values(stype)[b.astype(np.int64) & 0xFF]
    return _decode_scale_direct(b, stype)


def _decode_scale_direct(bits: np.ndarray, stype: ScaleType) -> np.ndarray:
    if stype is ScaleType.UE8M0:
        return decode_ue8m0(bits)
    return decode_ue4m3(bits)


_SCALE_BYTE_VALUES: dict[ScaleType, np.ndarray] = {}


def _scale_byte_values(stype: ScaleType) -> np.ndarray:
    """(256,) float64 values of every scale byte (read-only, shared)."""
    got = _SCALE_BYTE_VALUES.get(stype)
    if got is None:
        got = _SCALE_BYTE_VALUES[stype] = _decode_scale_direct(np.arange(256, dtype=np.int64), stype)
        got.flags.writeable = False
    return got


def decode_scale_checked(bits: np.ndarray, stype: ScaleType, what: str, ins=None) -> np.ndarray:
    """`decode_scale` of bytes an instruction read; a ue4m3 byte with bit 7 set is `OutsideFormat`."""
    if stype is ScaleType.UE4M3:
        bad = check_ue4m3(bits)
        if bad is not None:
            raise OutsideFormat(f"{what}: ue4m3 scale byte {bad:#04x} has bit 7 set (ue4m3 is a 7-bit format "
                              "\"having MSB bit padded with zero\", PTX 5.2.3)", ins)
    return decode_scale(bits, stype)


class Container(Enum):
    """How the elements of a 4/6/8-bit operand are stored (module docstring)."""

    BYTE = "byte"  # 8-bit formats: one element per byte
    CONTAINER8 = "container8"  # a 4/6-bit element in an 8-bit container (mma.sync kind::(mx)f8f6f4)
    PADDED16 = "padded16"  # 16 packed 4/6-bit elements per 16-byte unit (tcgen05 mxf8f6f4 smem)
    PACKED4 = "packed4"  # two 4-bit elements per byte, no padding


def from_container8(raw: np.ndarray, fmt: str) -> np.ndarray:
    """Element bits (low-aligned) of 8-bit containers (mma.sync .kind::(mx)f8f6f4, 9.7.14.5.14):
    e2m1 from bits 2-5, e2m3/e3m2 from bits 0-5, 8-bit formats unchanged; padding ignored (MODEL)."""
    r = np.asarray(raw).astype(np.uint64) & np.uint64(0xFF)
    if fmt == "e2m1":
        return (r >> np.uint64(2)) & np.uint64(0xF)
    if fmt in ("e2m3", "e3m2"):
        return r & np.uint64(0x3F)
    return r


def to_container8(bits: np.ndarray, fmt: str) -> np.ndarray:
    """Inverse of `from_container8` with zero padding (tests and tools)."""
    b = np.asarray(bits).astype(np.uint64)
    if fmt == "e2m1":
        return ((b & np.uint64(0xF)) << np.uint64(2)).astype(np.uint8)
    if fmt in ("e2m3", "e3m2"):
        return (b & np.uint64(0x3F)).astype(np.uint8)
    return b.astype(np.uint8)


def from_padded16(units: np.ndarray, fmt: str) -> np.ndarray:
    """(..., 16) bytes of 16-byte units -> (..., 16) element bits: element j is bits [w*j, w*j+w)
    of the unit read as a little-endian bit stream (w = 4 or 6; `PADDED16`, MODEL)."""
    w = SUB_BYTE[fmt]
    u = np.asarray(units).astype(np.uint64)
    j = np.arange(16)
    pos = w * j
    lo, sh = pos // 8, (pos % 8).astype(np.uint64)
    two = u[..., lo] | (u[..., np.minimum(lo + 1, 15)] << np.uint64(8))
    return (two >> sh) & np.uint64((1 << w) - 1)


def to_padded16(elems: np.ndarray, fmt: str) -> np.ndarray:
    """(..., 16) element bits -> (..., 16) bytes of the `PADDED16` unit, padding zero (tests, tools)."""
    w = SUB_BYTE[fmt]
    e = np.asarray(elems).astype(np.uint64) & np.uint64((1 << w) - 1)
    stream = np.zeros(e.shape[:-1], dtype=object)
    for j in range(16):
        stream = stream + (e[..., j].astype(object) << (w * j))
    out = np.zeros(e.shape, dtype=np.uint8)
    for i in range(16):
        out[..., i] = ((stream >> (8 * i)) & 0xFF).astype(np.uint8)
    return out


def from_packed4(raw: np.ndarray) -> np.ndarray:
    """(...) bytes -> (..., 2) nibbles, the low nibble first (`PACKED4`)."""
    r = np.asarray(raw).astype(np.uint64)
    return np.stack([r & np.uint64(0xF), (r >> np.uint64(4)) & np.uint64(0xF)], axis=-1)


def to_packed4(nibbles: np.ndarray) -> np.ndarray:
    """(..., 2) nibbles -> (...) bytes (low nibble first)."""
    n = np.asarray(nibbles).astype(np.uint64) & np.uint64(0xF)
    return (n[..., 0] | (n[..., 1] << np.uint64(4))).astype(np.uint8)


def decode_elements(bits: np.ndarray, fmt: str) -> np.ndarray:
    """float64 values of low-aligned element bits of format `fmt` (e4m3, e5m2, e2m3, e3m2, e2m1).
    Formats held in a byte are read from `byte_values` (decode is elementwise, so the table of all
    256 bytes gives the same values; an MMA decodes its operands once per instruction per warp)."""
    f = get_format(fmt)
    b = np.asarray(bits).astype(f.dtype)
    if f.dtype is np.uint8 and b.ndim:
        return byte_values(f.name)[b]
    return decode(b, f)


_BYTE_VALUES: dict[str, np.ndarray] = {}


def byte_values(fmt: str) -> np.ndarray:
    """(256,) float64 `decode` of every byte, for a format held in a byte (read-only, shared)."""
    got = _BYTE_VALUES.get(fmt)
    if got is None:
        f = get_format(fmt)
        got = _BYTE_VALUES[fmt] = decode(np.arange(256, dtype=np.uint8), f)
        got.flags.writeable = False
    return got
