"""Tensor maps (PTX 5.5 "Tensors", 5.5.8 "Tensor-map") described the way the host builds them.

A CUtensorMap is a 128-byte object whose binary layout is not documented (5.5.8: "opaque"). Volta
does not decode those bytes. A tensor map is instead the record of what `cuTensorMapEncodeTiled`
(CUDA driver API, "Tensor Map Object Management") is given: the global address (here a launch
buffer and a byte offset into it, or an absolute device address), the element type, the rank,
the global dimensions and byte strides, the box, the traversal (element) strides, the interleave
layout, the shared-memory swizzle, the L2 promotion hint and the out-of-bounds fill. Every field
is validated against the driver's documented requirements when a `TensorMap` is built; an invalid
one cannot exist.

Where a tensor map lives in memory (a kernel parameter, a global or shared buffer), its 128 bytes
hold an opaque *tag* (`tag_bytes`) naming the object, never a guessed encoding: a plain copy of
all 128 bytes copies the object, anything else breaks the tag and makes the bytes unknown.

The address mapping of a tile-mode copy (5.5.3): the box starts at the instruction's tensor
coordinates (which may be negative or beyond the dimensions); along dimension i it traverses
ceil(boxDim[i] / elementStrides[i]) elements, elementStrides[i] apart (the stride of dimension 0
is ignored without interleave, driver docs); elements outside the tensor are filled on loads
(zero, or OOB-NaN, 5.5.3.3) and skipped on stores. In shared memory the box is linear (5.5: "treat
the data in the shared memory as linear data"), innermost dimension fastest, then its 16-byte cells
are permuted by the swizzle pattern of the shared address (5.5.7), the same Swizzle<B,4,3> as the
wgmma/tcgen05 canonical layouts (`symexec.wgmma_layout.swizzle`); the 128B swizzle with 32-byte
or 64-byte atomicity moves 32-byte or 64-byte units instead (5.5.7's tables). With a swizzle each
box row starts on its own swizzle span, also when it is narrower (`row_pitch`: observed on an
H200, not stated by the manual); the transaction count is the box's bytes, not the spans'. Not
modelled, named where they are used: interleaved layouts and the 32B-atomicity-with-8B-flip
sub-mode (5.5.6, 5.5.7: given by figures only), the 96B swizzle, the packed sub-byte types
(5.5.1.1), the bit pattern of OOB-NaN, the tf32 and .ftz element conversions, and im2col mode
(5.5.4).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field, replace
from enum import Enum
from functools import lru_cache
from typing import Any, Mapping

import numpy as np

from .wgmma_layout import swizzle as _swizzle16

TENSOR_MAP_BYTES = 128  # 5.5.8
TENSOR_MAP_ALIGN = 64  # the driver: the tensorMap address must be 64-byte aligned
MAX_RANK = 5
MAX_BOX = 256
MAX_ELEMENT_STRIDE = 8
MAX_GLOBAL_DIM = 1 << 32
MAX_GLOBAL_STRIDE = 1 << 40


class TensorMapError(ValueError):
    """A tensor-map field violates the driver's documented requirements; names the field."""

    def __init__(self, fieldname: str, message: str) -> None:
        self.field = fieldname
        super().__init__(f"tensor_map.{fieldname}: {message}")


class UnsetField(TensorMapError):
    """A device-built object is used with a field never set since its bytes were zero-filled."""


@dataclass(frozen=True)
class _TypeInfo:
    cuda: int  # CUtensorMapDataType
    ptx: int  # tensormap.replace .elemtype encoding (9.7.9.26, Table 33); they differ (Table 33's note)
    bits: int
    kind: str  # "u", "s", "f", "packed"
    ptx_type: str  # the PTX type of one element (reductions)


class ElementType(Enum):
    """The element types of a tensor map (CUtensorMapDataType; PTX 5.5.1)."""

    UINT8 = "uint8"
    UINT16 = "uint16"
    UINT32 = "uint32"
    INT32 = "int32"
    UINT64 = "uint64"
    INT64 = "int64"
    FLOAT16 = "float16"
    FLOAT32 = "float32"
    FLOAT64 = "float64"
    BFLOAT16 = "bfloat16"
    FLOAT32_FTZ = "float32_ftz"
    TFLOAT32 = "tfloat32"
    TFLOAT32_FTZ = "tfloat32_ftz"
    U4X16_ALIGN8B = "16u4_align8b"
    U4X16_ALIGN16B = "16u4_align16b"
    U6X16_ALIGN16B = "16u6_align16b"

    @property
    def info(self) -> _TypeInfo:
        return _TYPES[self]

    @property
    def bytes(self) -> int:
        return max(1, self.info.bits // 8)

    @property
    def is_float(self) -> bool:
        return self.info.kind == "f"

    @property
    def packed(self) -> bool:
        return self.info.kind == "packed"

    @classmethod
    def from_ptx(cls, code: int) -> "ElementType | None":
        return _BY_PTX.get(code)

    @classmethod
    def from_cuda(cls, code: int) -> "ElementType | None":
        return _BY_CUDA.get(code)


_T = ElementType
_TYPES: dict[ElementType, _TypeInfo] = {
    _T.UINT8: _TypeInfo(0, 0, 8, "u", ".u8"), _T.UINT16: _TypeInfo(1, 1, 16, "u", ".u16"),
    _T.UINT32: _TypeInfo(2, 2, 32, "u", ".u32"), _T.INT32: _TypeInfo(3, 3, 32, "s", ".s32"),
    _T.UINT64: _TypeInfo(4, 4, 64, "u", ".u64"), _T.INT64: _TypeInfo(5, 5, 64, "s", ".s64"),
    _T.FLOAT16: _TypeInfo(6, 6, 16, "f", ".f16"), _T.FLOAT32: _TypeInfo(7, 7, 32, "f", ".f32"),
    _T.FLOAT64: _TypeInfo(8, 9, 64, "f", ".f64"), _T.BFLOAT16: _TypeInfo(9, 10, 16, "f", ".bf16"),
    _T.FLOAT32_FTZ: _TypeInfo(10, 8, 32, "f", ".f32"), _T.TFLOAT32: _TypeInfo(11, 11, 32, "f", ".f32"),
    _T.TFLOAT32_FTZ: _TypeInfo(12, 12, 32, "f", ".f32"),
    _T.U4X16_ALIGN8B: _TypeInfo(13, 13, 4, "packed", ".b8"), _T.U4X16_ALIGN16B: _TypeInfo(14, 14, 4, "packed", ".b8"),
    _T.U6X16_ALIGN16B: _TypeInfo(15, 15, 6, "packed", ".b8"),
}
_BY_PTX = {i.ptx: t for t, i in _TYPES.items()}
_BY_CUDA = {i.cuda: t for t, i in _TYPES.items()}


class Interleave(Enum):
    """CUtensorMapInterleave; the same numbers as tensormap.replace .interleave_layout (Table 33)."""

    NONE = 0
    B16 = 1
    B32 = 2


class Swizzle(Enum):
    """CUtensorMapSwizzle (the numbers are the driver's); PTX splits it into .swizzle_mode and
    .swizzle_atomicity (Table 33, 5.5.7 Table 14). B96 exists only as a PTX swizzle_mode (sm_103a)."""

    NONE = 0
    B32 = 1
    B64 = 2
    B128 = 3
    B128_ATOM_32B = 4
    B128_ATOM_32B_FLIP_8B = 5
    B128_ATOM_64B = 6
    B96 = 96

    @property
    def span(self) -> int:
        """Bytes of the swizzle span: the most the box's inner dimension may hold."""
        return {Swizzle.NONE: 0, Swizzle.B32: 32, Swizzle.B64: 64, Swizzle.B96: 96}.get(self, 128)

    @property
    def ptx(self) -> tuple[int, int]:
        """(.swizzle_mode, .swizzle_atomicity) encodings of tensormap.replace (Table 33)."""
        return _SWIZZLE_PTX[self]

    @classmethod
    def from_ptx(cls, mode: int, atomicity: int) -> "Swizzle | None":
        return _SWIZZLE_BY_PTX.get((mode, atomicity))


_SWIZZLE_PTX = {Swizzle.NONE: (0, 0), Swizzle.B32: (1, 0), Swizzle.B64: (2, 0), Swizzle.B128: (3, 0),
                Swizzle.B128_ATOM_32B: (3, 1), Swizzle.B128_ATOM_32B_FLIP_8B: (3, 2), Swizzle.B128_ATOM_64B: (3, 3),
                Swizzle.B96: (4, 0)}
_SWIZZLE_BY_PTX = {v: k for k, v in _SWIZZLE_PTX.items()}  # Table 14: the only valid combinations


class L2Promotion(Enum):
    """CUtensorMapL2promotion: a fetch-size hint, no effect on values."""

    NONE = 0
    L2_64B = 1
    L2_128B = 2
    L2_256B = 3


class OobFill(Enum):
    """CUtensorMapFloatOOBfill; the same numbers as tensormap.replace .fill_mode (5.5.3.3)."""

    ZERO = 0  # CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE: out-of-bounds elements are zero
    NAN_REQUEST_ZERO_FMA = 1  # OOB-NaN fill


_SPEC_NAMES: dict[type, dict[str, Enum]] = {
    Interleave: {"none": Interleave.NONE, "16B": Interleave.B16, "32B": Interleave.B32},
    Swizzle: {"none": Swizzle.NONE, "32B": Swizzle.B32, "64B": Swizzle.B64, "128B": Swizzle.B128,
              "128B_atom_32B": Swizzle.B128_ATOM_32B, "128B_atom_32B_flip_8B": Swizzle.B128_ATOM_32B_FLIP_8B,
              "128B_atom_64B": Swizzle.B128_ATOM_64B},
    L2Promotion: {"none": L2Promotion.NONE, "64B": L2Promotion.L2_64B, "128B": L2Promotion.L2_128B,
                  "256B": L2Promotion.L2_256B},
    OobFill: {"zero": OobFill.ZERO, "nan_request_zero_fma": OobFill.NAN_REQUEST_ZERO_FMA},
}


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


@dataclass(frozen=True)
class TensorMap:
    """What `cuTensorMapEncodeTiled` is given (tile mode). Sequences are innermost dimension first,
    as the driver takes them; `global_strides` has rank-1 entries in bytes (the stride of
    dimensions 1..rank-1). `buffer`: the launch buffer the map points into, `offset` bytes in; with
    `buffer` None, `offset` is the absolute global address (a map built on the device)."""

    dtype: ElementType
    global_dims: tuple[int, ...]
    global_strides: tuple[int, ...]
    box_dims: tuple[int, ...]
    element_strides: tuple[int, ...] = ()
    interleave: Interleave = Interleave.NONE
    swizzle: Swizzle = Swizzle.NONE
    l2_promotion: L2Promotion = L2Promotion.NONE
    oob_fill: OobFill = OobFill.ZERO
    buffer: str | None = None
    offset: int = 0

    def __post_init__(self) -> None:
        for name in ("global_dims", "global_strides", "box_dims", "element_strides"):
            v = getattr(self, name)
            if isinstance(v, (list, np.ndarray)):
                object.__setattr__(self, name, tuple(int(x) if _is_int(x) else x for x in v))
        if not self.element_strides and isinstance(self.global_dims, tuple):
            object.__setattr__(self, "element_strides", (1,) * len(self.global_dims))
        _validate(self)

    @property
    def rank(self) -> int:
        return len(self.global_dims)

    @property
    def elem_bytes(self) -> int:
        return self.dtype.bytes

    def box_counts(self) -> tuple[int, ...]:
        """Elements traversed along each dimension: ceil(boxDim[i] / elementStrides[i]); dimension 0
        takes step 1 without interleave (the driver ignores its element stride)."""
        return tuple(self.box_dims[i] if i == 0 and self.interleave is Interleave.NONE
                     else -(-self.box_dims[i] // self.element_strides[i]) for i in range(self.rank))

    def box_bytes(self) -> int:
        """Bytes one tile-mode copy writes to (or reads from) shared memory: the whole box, its
        out-of-bounds elements included (they are written as fill)."""
        return math.prod(self.box_counts()) * self.elem_bytes

    def steps(self) -> tuple[int, ...]:
        return tuple(1 if i == 0 and self.interleave is Interleave.NONE else self.element_strides[i]
                     for i in range(self.rank))

    def byte_strides(self) -> tuple[int, ...]:
        """Bytes between neighbours along each dimension (dimension 0: the element size)."""
        return (self.elem_bytes,) + self.global_strides

    def extent_bytes(self) -> int:
        """Bytes from the global address to the end of the last element of the tensor."""
        return self.elem_bytes + sum((d - 1) * s for d, s in zip(self.global_dims, self.byte_strides()))

    def address(self, buffers: Mapping[str, int] | None = None) -> int:
        """The global address, given the launch buffers' addresses."""
        if self.buffer is None:
            return self.offset
        if buffers is None or self.buffer not in buffers:
            raise TensorMapError("buffer", f"no buffer named {self.buffer!r}")
        return buffers[self.buffer] + self.offset

    # ------------------------------------------------------------------ the launch spec
    @classmethod
    def from_spec(cls, spec: Any) -> "TensorMap":
        """From the launch spec's `{"tensor_map": {...}}` object (symexec.launch); errors name the field."""
        if not isinstance(spec, dict):
            raise TensorMapError("", f"must be an object, got {spec!r}")
        known = {"buffer", "offset", "dtype", "global_dims", "global_strides", "box_dims", "element_strides",
                 "interleave", "swizzle", "l2_promotion", "oob_fill", "mode", "comment"}
        unknown = set(spec) - known
        if unknown:
            raise TensorMapError(sorted(unknown)[0], f"unknown field (known: {', '.join(sorted(known))})")
        mode = spec.get("mode", "tile")
        if mode != "tile":
            raise TensorMapError("mode", f"{mode!r}: only tile mode (cuTensorMapEncodeTiled) is modelled; im2col "
                                         "maps (cuTensorMapEncodeIm2col, PTX 5.5.4) are not")
        for key in ("buffer", "dtype", "global_dims", "box_dims"):
            if key not in spec:
                raise TensorMapError(key, "missing")
        dtype = spec["dtype"]
        try:
            et = ElementType(dtype)
        except ValueError:
            raise TensorMapError("dtype", f"unknown element type {dtype!r} (known: "
                                          f"{', '.join(t.value for t in ElementType)})") from None
        kw: dict[str, Any] = {}
        for key, enum in (("interleave", Interleave), ("swizzle", Swizzle), ("l2_promotion", L2Promotion),
                          ("oob_fill", OobFill)):
            if key in spec:
                names = _SPEC_NAMES[enum]
                if spec[key] not in names:
                    raise TensorMapError(key, f"{spec[key]!r}: expected one of {', '.join(names)}")
                kw[key] = names[spec[key]]
        for key in ("global_dims", "global_strides", "box_dims", "element_strides"):
            if key in spec:
                v = spec[key]
                if not isinstance(v, list) or not all(_is_int(x) for x in v):
                    raise TensorMapError(key, f"expected a list of integers, got {v!r}")
                kw[key] = tuple(v)
        if not isinstance(spec["buffer"], str):
            raise TensorMapError("buffer", f"expected a buffer name, got {spec['buffer']!r}")
        offset = spec.get("offset", 0)
        if not _is_int(offset):
            raise TensorMapError("offset", f"expected an integer, got {offset!r}")
        kw.setdefault("global_strides", ())
        return cls(et, buffer=spec["buffer"], offset=int(offset), **kw)

    def to_spec(self) -> dict[str, Any]:
        """The launch-spec object of this map (a map with a buffer)."""
        rev = {e: n for names in _SPEC_NAMES.values() for n, e in names.items()}
        return {"buffer": self.buffer, "offset": self.offset, "dtype": self.dtype.value,
                "global_dims": list(self.global_dims), "global_strides": list(self.global_strides),
                "box_dims": list(self.box_dims), "element_strides": list(self.element_strides),
                "interleave": rev[self.interleave], "swizzle": rev[self.swizzle],
                "l2_promotion": rev[self.l2_promotion], "oob_fill": rev[self.oob_fill]}


def _validate(tm: TensorMap) -> None:
    """The requirements of cuTensorMapEncodeTiled (CUDA driver API) on each field."""
    if not isinstance(tm.dtype, ElementType):
        raise TensorMapError("dtype", f"expected an ElementType, got {tm.dtype!r}")
    if tm.dtype.packed:
        raise TensorMapError("dtype", f"{tm.dtype.value}: packed sub-byte element types (PTX 5.5.1.1) are not "
                                      "modelled")
    for name in ("global_dims", "global_strides", "box_dims", "element_strides"):
        v = getattr(tm, name)
        if not isinstance(v, tuple) or not all(_is_int(x) for x in v):
            raise TensorMapError(name, f"expected integers, got {v!r}")
    r = len(tm.global_dims)
    if not 1 <= r <= MAX_RANK:
        raise TensorMapError("global_dims", f"rank {r}: must be 1 to {MAX_RANK} dimensions")
    for name, want in (("global_strides", r - 1), ("box_dims", r), ("element_strides", r)):
        if len(getattr(tm, name)) != want:
            raise TensorMapError(name, f"{len(getattr(tm, name))} entries; rank {r} needs {want}")
    for enum_field, enum in (("interleave", Interleave), ("swizzle", Swizzle), ("l2_promotion", L2Promotion),
                             ("oob_fill", OobFill)):
        if not isinstance(getattr(tm, enum_field), enum):
            raise TensorMapError(enum_field, f"expected a {enum.__name__}, got {getattr(tm, enum_field)!r}")
    if tm.interleave is not Interleave.NONE and r < 3:
        raise TensorMapError("interleave", f"{tm.interleave.name}: interleaved layouts need rank >= 3 (rank {r})")
    for i, d in enumerate(tm.global_dims):
        if not 1 <= d <= MAX_GLOBAL_DIM:
            raise TensorMapError(f"global_dims[{i}]", f"{d}: must be 1 to 2^32")
    stride_align = 32 if tm.interleave is Interleave.B32 else 16
    for i, s in enumerate(tm.global_strides):
        if not 0 < s < MAX_GLOBAL_STRIDE or s % stride_align:
            raise TensorMapError(f"global_strides[{i}]", f"{s} bytes: must be a positive multiple of {stride_align} "
                                                         "below 2^40")
    eb = tm.dtype.bytes
    for i, b in enumerate(tm.box_dims):
        if not 1 <= b <= MAX_BOX:
            raise TensorMapError(f"box_dims[{i}]", f"{b}: must be 1 to {MAX_BOX}")
    if tm.interleave is Interleave.NONE and (tm.box_dims[0] * eb) % 16:
        raise TensorMapError("box_dims[0]", f"{tm.box_dims[0]} x {eb} bytes = {tm.box_dims[0] * eb}: the box's inner "
                                            "dimension must be a multiple of 16 bytes without interleave")
    for i, e in enumerate(tm.element_strides):
        if not 1 <= e <= MAX_ELEMENT_STRIDE:
            raise TensorMapError(f"element_strides[{i}]", f"{e}: must be 1 to {MAX_ELEMENT_STRIDE}")
    if tm.swizzle is Swizzle.B96:
        raise TensorMapError("swizzle", "the 96B swizzle is not a tiled-mode CUtensorMapSwizzle")
    if tm.interleave is Interleave.B32 and tm.swizzle is not Swizzle.B32:
        raise TensorMapError("swizzle", f"{tm.swizzle.name}: 32B interleave requires the 32B swizzle")
    if tm.interleave is Interleave.NONE and tm.swizzle is not Swizzle.NONE and tm.box_dims[0] * eb > tm.swizzle.span:
        raise TensorMapError("box_dims[0]", f"{tm.box_dims[0]} x {eb} bytes = {tm.box_dims[0] * eb}: the box's inner "
                                            f"dimension must fit the {tm.swizzle.span}-byte swizzle span")
    if tm.oob_fill is OobFill.NAN_REQUEST_ZERO_FMA and not tm.dtype.is_float:
        raise TensorMapError("oob_fill", f"NaN fill needs a floating-point element type, not {tm.dtype.value}")
    if tm.buffer is not None and (not isinstance(tm.buffer, str) or not tm.buffer):
        raise TensorMapError("buffer", f"expected a buffer name, got {tm.buffer!r}")
    if not _is_int(tm.offset) or tm.offset < 0:
        raise TensorMapError("offset", f"{tm.offset!r}: must be a non-negative integer")
    align = 32 if tm.interleave is Interleave.B32 else 16
    if tm.offset % align:
        what = "offset" if tm.buffer is not None else "global address"
        raise TensorMapError("offset", f"{what} {tm.offset:#x}: the global address must be {align}-byte aligned")


# ---------------------------------------------------------------------- the tile of one copy


@dataclass(frozen=True)
class Tile:
    """The elements of one box, in shared-memory order (innermost dimension fastest)."""

    offsets: np.ndarray  # (n,) int64 byte offsets from the tensor's global address (meaningless outside)
    inside: np.ndarray  # (n,) bool: the element lies inside the tensor
    elem_bytes: int

    @property
    def n(self) -> int:
        return int(self.offsets.size)


def tile(tm: TensorMap, coords: tuple[int, ...] | np.ndarray) -> Tile:
    """The box of a tile-mode copy at tensor coordinates `coords` (innermost first, s32, 5.5.3)."""
    c = [int(x) for x in coords]
    if len(c) != tm.rank:
        raise TensorMapError("global_dims", f"{len(c)} coordinates for a rank-{tm.rank} tensor map")
    counts, steps, strides = tm.box_counts(), tm.steps(), tm.byte_strides()
    offsets = np.zeros(1, dtype=np.int64)
    inside = np.ones(1, dtype=bool)
    for i in reversed(range(tm.rank)):  # outermost first, so that dimension 0 varies fastest
        pos = c[i] + steps[i] * np.arange(counts[i], dtype=np.int64)
        offsets = (offsets[:, None] + pos[None, :] * strides[i]).reshape(-1)
        inside = (inside[:, None] & ((pos >= 0) & (pos < tm.global_dims[i]))[None, :]).reshape(-1)
    return Tile(offsets, inside, tm.elem_bytes)


def row_pitch(tm: TensorMap) -> int:
    """Bytes between the starts of consecutive box rows in shared memory: the row itself without a
    swizzle; the swizzle span with one, even for a narrower row (observed on an H200, whose TMA
    leaves the rest of each span untouched: tests/emulator/tma_gpu.py; the manual's swizzle tables
    of 5.5.7 show rows that fill the span)."""
    row = tm.box_counts()[0] * tm.elem_bytes
    return row if tm.swizzle is Swizzle.NONE else max(row, tm.swizzle.span)


def shared_addresses(tm: TensorMap, start: int, n: int) -> np.ndarray:
    """(n,) shared-memory byte addresses of the box's elements (in Tile order) for a copy whose
    shared side starts at `start`: rows `row_pitch` apart, then swizzled on the address (5.5.7)."""
    idx = np.arange(n, dtype=np.int64)
    per_row = tm.box_counts()[0]
    linear = start + (idx // per_row) * row_pitch(tm) + (idx % per_row) * tm.elem_bytes
    return swizzle(linear, tm.swizzle)


def swizzle(addr: np.ndarray, mode: Swizzle) -> np.ndarray:
    """A swizzle pattern of 5.5.7 applied to shared-memory byte addresses.

    16-byte atomicity (32B/64B/128B): the 16-byte cell index (bits 4..) XOR the 128-byte line index
    (bits 7..), Swizzle<B,4,3>, the same pattern as the wgmma/tcgen05 shared layouts. 128B with 32-byte
    atomicity: 32-byte units (bits 5-6) XOR lines (bits 7-8), repeating every 4 lines; with 64-byte
    atomicity: bit 6 XOR bit 7, repeating every 2 lines (the tables of 5.5.7)."""
    a = np.asarray(addr, dtype=np.int64)
    if mode is Swizzle.NONE:
        return a
    if mode in (Swizzle.B32, Swizzle.B64, Swizzle.B128):
        return _swizzle16(a, mode.span)
    if mode is Swizzle.B128_ATOM_32B:
        return a ^ (((a >> 7) & 0x3) << 5)
    if mode is Swizzle.B128_ATOM_64B:
        return a ^ (((a >> 7) & 0x1) << 6)
    raise TensorMapError("swizzle", f"{mode.name}: not modelled (PTX 5.5.7 gives this pattern by figure only)")


def unmodelled(tm: TensorMap) -> str | None:
    """Why a copy through `tm` cannot be emulated (None: it can)."""
    if tm.interleave is not Interleave.NONE:
        return f"interleaved tensor maps ({tm.interleave.name}; PTX 5.5.6 describes the layout by figure only)"
    if tm.swizzle in (Swizzle.B128_ATOM_32B_FLIP_8B, Swizzle.B96):
        return f"the {tm.swizzle.name} swizzle (PTX 5.5.7 gives its pattern by figure only)"
    if tm.dtype in (ElementType.TFLOAT32, ElementType.TFLOAT32_FTZ, ElementType.FLOAT32_FTZ):
        return f"element type {tm.dtype.value} (the conversion a copy applies is not specified)"
    return None


# ---------------------------------------------------------------------- objects in memory


_MAGIC = b"VoltaTM\x00"


@lru_cache(maxsize=4096)
def tag_bytes(ident: int) -> bytes:
    """The 128 bytes Volta stores where tensor-map object `ident` lives: a magic word, the id, and
    a pattern derived from both (so that a partial overwrite never still reads as a tag)."""
    head = _MAGIC + int(ident).to_bytes(8, "little")
    body = b""
    k = 0
    while len(body) < TENSOR_MAP_BYTES - len(head):
        body += hashlib.sha256(head + k.to_bytes(4, "little")).digest()
        k += 1
    return head + body[:TENSOR_MAP_BYTES - len(head)]


def tag_ident(raw: bytes | np.ndarray) -> int | None:
    """The object id a 128-byte image holds, or None when it is not exactly one of our tags."""
    b = bytes(np.asarray(raw, dtype=np.uint8).reshape(-1)) if not isinstance(raw, bytes) else raw
    if len(b) != TENSOR_MAP_BYTES or not b.startswith(_MAGIC):
        return None
    ident = int.from_bytes(b[8:16], "little")
    return ident if tag_bytes(ident) == b else None


class MapField(Enum):
    """The fields tensormap.replace edits (PTX 9.7.9.26)."""

    GLOBAL_ADDRESS = ".global_address"
    RANK = ".rank"
    BOX_DIM = ".box_dim"
    GLOBAL_DIM = ".global_dim"
    GLOBAL_STRIDE = ".global_stride"
    ELEMENT_STRIDE = ".element_stride"
    ELEMTYPE = ".elemtype"
    INTERLEAVE_LAYOUT = ".interleave_layout"
    SWIZZLE_MODE = ".swizzle_mode"
    SWIZZLE_ATOMICITY = ".swizzle_atomicity"
    FILL_MODE = ".fill_mode"

    @property
    def per_dimension(self) -> bool:
        return self in (MapField.BOX_DIM, MapField.GLOBAL_DIM, MapField.GLOBAL_STRIDE, MapField.ELEMENT_STRIDE)

    @property
    def wide(self) -> bool:
        """Takes a .b64 value (the rest take .b32)."""
        return self in (MapField.GLOBAL_ADDRESS, MapField.GLOBAL_STRIDE)


#: Fields Triton 3.9 never sets on the 128 zero bytes it starts a device-side map from: an object
#: built that way is taken to hold encoding 0 in them (Table 33's first row: no interleave, 16B
#: atomicity, zero fill), the only reading under which such kernels are correct. Every other field
#: must have been set.
ZERO_DEFAULTED = frozenset({MapField.INTERLEAVE_LAYOUT, MapField.SWIZZLE_ATOMICITY, MapField.FILL_MODE})


@dataclass(frozen=True)
class MapFields:
    """A tensor-map object as tensormap.replace sees it: each field's encoded value (Table 33's
    encodings; `.rank` holds rank - 1), None where it was never set since the bytes were
    zero-filled. Per-dimension fields are 5-tuples indexed by the ordinal."""

    scalars: tuple[tuple[MapField, int], ...] = ()
    dims: tuple[tuple[MapField, tuple[int | None, ...]], ...] = ()
    l2_promotion: L2Promotion = L2Promotion.NONE

    def get(self, f: MapField, ordinal: int = 0) -> int | None:
        if f.per_dimension:
            return dict(self.dims).get(f, (None,) * MAX_RANK)[ordinal]
        return dict(self.scalars).get(f)

    def set(self, f: MapField, value: int, ordinal: int = 0) -> "MapFields":
        if f.per_dimension:
            d = dict(self.dims)
            row = list(d.get(f, (None,) * MAX_RANK))
            row[ordinal] = int(value)
            d[f] = tuple(row)
            return replace(self, dims=tuple(sorted(d.items(), key=lambda kv: kv[0].value)))
        s = dict(self.scalars)
        s[f] = int(value)
        return replace(self, scalars=tuple(sorted(s.items(), key=lambda kv: kv[0].value)))

    @classmethod
    def of(cls, tm: TensorMap, address: int) -> "MapFields":
        """The fields of a host-built map at global address `address`."""
        m = cls(l2_promotion=tm.l2_promotion)
        mode, atom = tm.swizzle.ptx
        for f, v in ((MapField.GLOBAL_ADDRESS, address), (MapField.RANK, tm.rank - 1),
                     (MapField.ELEMTYPE, tm.dtype.info.ptx), (MapField.INTERLEAVE_LAYOUT, tm.interleave.value),
                     (MapField.SWIZZLE_MODE, mode), (MapField.SWIZZLE_ATOMICITY, atom),
                     (MapField.FILL_MODE, tm.oob_fill.value)):
            m = m.set(f, v)
        for i in range(tm.rank):
            m = m.set(MapField.BOX_DIM, tm.box_dims[i], i).set(MapField.GLOBAL_DIM, tm.global_dims[i], i)
            m = m.set(MapField.ELEMENT_STRIDE, tm.element_strides[i], i)
            if i < tm.rank - 1:
                m = m.set(MapField.GLOBAL_STRIDE, tm.global_strides[i], i)
        return m

    def tensor_map(self) -> TensorMap:
        """The tensor map these fields describe; TensorMapError names a field that was never set or
        holds an invalid value."""
        def need(f: MapField, ordinal: int | None = None) -> int:
            v = self.get(f, ordinal or 0)
            if v is None:
                if f in ZERO_DEFAULTED:
                    return 0
                where = f"{f.value}[{ordinal}]" if ordinal is not None else f.value
                raise UnsetField(where.lstrip("."), "never set since the object's bytes were zero-filled "
                                                    "(what zero bytes encode is not documented)")
            return v

        rank = need(MapField.RANK) + 1
        if not 1 <= rank <= MAX_RANK:
            raise TensorMapError("rank", f"{rank - 1}: .rank holds the rank minus one, 0 to 4")
        et = ElementType.from_ptx(need(MapField.ELEMTYPE))
        if et is None:
            raise TensorMapError("elemtype", f"{self.get(MapField.ELEMTYPE)} is not an .elemtype encoding (Table 33)")
        inter = need(MapField.INTERLEAVE_LAYOUT)
        if inter not in (0, 1, 2):
            raise TensorMapError("interleave_layout", f"{inter} is not an encoding (Table 33)")
        sw = Swizzle.from_ptx(need(MapField.SWIZZLE_MODE), need(MapField.SWIZZLE_ATOMICITY))
        if sw is None:
            raise TensorMapError("swizzle_atomicity", f"swizzle mode {self.get(MapField.SWIZZLE_MODE)} with atomicity "
                                                      f"{need(MapField.SWIZZLE_ATOMICITY)} is not a valid combination "
                                                      "(PTX 5.5.7 Table 14)")
        fill = need(MapField.FILL_MODE)
        if fill not in (0, 1):
            raise TensorMapError("fill_mode", f"{fill} is not an encoding (Table 33)")
        return TensorMap(et, tuple(need(MapField.GLOBAL_DIM, i) for i in range(rank)),
                         tuple(need(MapField.GLOBAL_STRIDE, i) for i in range(rank - 1)),
                         tuple(need(MapField.BOX_DIM, i) for i in range(rank)),
                         tuple(need(MapField.ELEMENT_STRIDE, i) for i in range(rank)),
                         Interleave(inter), sw, self.l2_promotion, OobFill(fill), None,
                         need(MapField.GLOBAL_ADDRESS))


@dataclass
class Registry:
    """The tensor-map objects of one run: device-built ones by id (launch maps are ids 1..P, the
    kernel parameter's position plus one, resolved from the launch)."""

    objects: dict[int, MapFields] = field(default_factory=dict)
    next_id: int = 1 << 20

    def add(self, fields: MapFields) -> int:
        ident = self.next_id
        self.next_id += 1
        self.objects[ident] = fields
        return ident


def param_ident(position: int) -> int:
    """The id of the tensor map passed as kernel parameter number `position` (0-based)."""
    return position + 1


def is_param_ident(ident: int) -> bool:
    return 1 <= ident < (1 << 20)
