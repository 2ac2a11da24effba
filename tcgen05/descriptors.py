"""Shared-memory matrix descriptors and instruction descriptors of tcgen05.mma (PTX 9.7.16.4).

Shared-memory descriptor (64-bit, 9.7.16.4.1, Table 40; not the wgmma encoding):
  bits 0-13 start address, 14-15 reserved, 16-29 leading-dimension byte offset (LBO), 30-31
  reserved, 32-45 stride-dimension byte offset (SBO), each `(x & 0x3FFFF) >> 4` (so the three
  are 16-byte aligned by construction, as the manual requires); 46-48 the constant 0b001; 49-51
  base offset; 52 LBO mode (0 relative, 1 absolute, sm_103a only); 53-60 zero; 61-63 swizzle
  (0 none, 1 128B with 32B atomicity, 2 128B, 4 64B, 6 32B; 3, 5, 7 invalid).

What is checked (`check_smem_desc`, and the unit's warnings):
  - bits 46-48 != 0b001, bits 53-60 != 0, swizzle codes 3/5/7: `UndefinedBehavior`;
  - reserved bits 14-15 / 30-31 set: a warning (`SmemDescriptor.notes`), not a rejection (the
    manual calls them reserved without saying they must be zero);
  - swizzle 1 (128B with 32B atomicity), absolute LBO mode (bit 52) and a non-zero base offset:
    `Unsupported`. With base offset 0 the manual requires the repeating swizzle pattern to start on
    its natural boundary (Table 41: 1024/512/256 bytes for 128B/64B/32B); the model applies the
    swizzle to absolute shared-memory address bits, which is exactly that assumption;
  - operand elements outside the CTA's shared memory: `UndefinedBehavior` (tcgen05.ops).

Instruction descriptor (32-bit, 9.7.16.4.2, Table 42 for kinds f16/tf32/f8f6f4/i8):
  0-1 sparsity selector, 2 sparse, 3 saturate, 4-5 D type, 6 reserved, 7-9 A type, 10-12 B type,
  13/14 negate A/B, 15/16 transpose A/B, 17-22 N >> 3, 23 reserved, 24-28 M >> 4, 29 reserved,
  30-31 maximum shift (.ws only).

What is checked (`decode_instr_desc`): D type code, A/B type codes per kind (Table 42), the D type
allowed per kind and an f16 D only with f16 A and B (Table 39), negate bits 0 for .kind::i8, M in
{64, 128} and N per kind for dense cta_group::1 (Table 39; K is fixed by the kind), all
`UndefinedBehavior`. Reserved bits 6/23/29, the saturate bit outside .kind::i8 and sparsity
selector bits with the dense bit clear are warnings (Triton sets bit 29 for K = 64 tiles), never
rejections (newer editions of the manual write "Reserved - Must be 0"; the warning is kept because
Triton sets them). The sparse bit is `Unsupported` (tcgen05.ops).

Block-scaled kinds (.kind::mxf8f6f4, Table 43; .kind::mxf4 / .kind::mxf4nvf4, Table 44) have their
own layout: scale factor B ID in bits 4-5, scale type in bit 23, M >> 7 in bits 27-28, scale
factor A ID in bits 29-30, and for mxf4/mxf4nvf4 E2M1 = 1 with B's type in bits 10-11 and bit 31
selecting K = 96 (`decode_scaled_instr_desc`, which lists what is checked; `check_scale_ids` checks
the IDs against the scale vector size of the instruction's `.scale_vectorsize`, `scale_vec_of`).

Operand element addresses follow the canonical layouts of 9.7.16.3.3 (K-major and MN-major, with
and without swizzling); the swizzle is the XOR of address bits [7, 7+b) into bits [4, 4+b)
(Swizzle<b,4,3>) applied to the shared-memory address, which requires the repeating pattern to
start on its natural boundary (base offset 0, Table 41).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np

from ptx_parser import ast as A
from semantics.errors import UndefinedBehavior, Unsupported
from semantics.mxformats import ScaleType

# swizzle field value -> (swizzle width in bytes, XOR bit count)
_SWIZZLE = {0: (0, 0), 2: (128, 3), 4: (64, 2), 6: (32, 1)}


@dataclass(frozen=True)
class SmemDescriptor:
    raw: int
    start: int  # bytes
    lbo: int  # bytes
    sbo: int  # bytes
    fixed: int  # bits 46-48
    base_offset: int
    lbo_mode: int
    high_fixed: int  # bits 53-60
    swizzle: int  # field value
    reserved: int = 0  # bits 14-15 and 30-31 as found (2 + 2 bits, packed 30-31 << 2 | 14-15)

    @property
    def notes(self) -> tuple[str, ...]:
        """Reserved bits that are set (warned, not rejected)."""
        if not self.reserved:
            return ()
        return (f"shared memory descriptor {self.raw:#018x}: reserved bits 14-15/30-31 are set "
                "(PTX 9.7.16.4.1, Table 40)",)

    @property
    def swizzle_bytes(self) -> int:
        return _SWIZZLE.get(self.swizzle, (0, 0))[0]


def decode_smem_desc(raw: int) -> SmemDescriptor:
    raw &= (1 << 64) - 1

    def f(lo: int, n: int) -> int:
        return (raw >> lo) & ((1 << n) - 1)

    return SmemDescriptor(raw, f(0, 14) << 4, f(16, 14) << 4, f(32, 14) << 4, f(46, 3), f(49, 3), f(52, 1),
                          f(53, 8), f(61, 3), f(30, 2) << 2 | f(14, 2))


def encode_smem_desc(start: int, lbo: int, sbo: int, swizzle: int = 0, base_offset: int = 0,
                     lbo_mode: int = 0) -> int:
    """The descriptor for byte values (tests and tools); fields are `(x & 0x3FFFF) >> 4`."""

    def enc(x: int) -> int:
        return (x & 0x3FFFF) >> 4

    return (enc(start) | enc(lbo) << 16 | enc(sbo) << 32 | 0b001 << 46 | (base_offset & 7) << 49
            | (lbo_mode & 1) << 52 | (swizzle & 7) << 61)


def check_smem_desc(d: SmemDescriptor, ins: A.Instruction | None) -> None:
    """Refuse what the manual forbids (undefined) or what is not modelled (unsupported)."""
    if d.fixed != 0b001:
        raise UndefinedBehavior(f"shared memory descriptor {d.raw:#018x}: bits 46-48 are {d.fixed:#05b}, "
                                "must be 0b001 (PTX 9.7.16.4.1, Table 40)", ins)
    if d.high_fixed != 0:
        raise UndefinedBehavior(f"shared memory descriptor {d.raw:#018x}: bits 53-60 must be zero "
                                "(PTX 9.7.16.4.1, Table 40)", ins)
    if d.swizzle in (3, 5, 7):
        raise UndefinedBehavior(f"shared memory descriptor {d.raw:#018x}: swizzle mode {d.swizzle} is invalid "
                                "(PTX 9.7.16.4.1, Table 40)", ins)
    if d.swizzle == 1:
        raise Unsupported("shared memory descriptor swizzle mode 1 (128B with 32B atomicity)", ins)
    if d.lbo_mode:
        raise Unsupported("shared memory descriptor with absolute leading-dimension address mode (bit 52)", ins)
    if d.base_offset:
        raise Unsupported(f"shared memory descriptor with matrix base offset {d.base_offset}", ins)


def swizzle(addr: np.ndarray, swizzle_field: int) -> np.ndarray:
    """Apply Swizzle<b,4,3> to shared-memory byte addresses."""
    _, b = _SWIZZLE[swizzle_field]
    if b == 0:
        return addr
    mask = (1 << b) - 1
    return addr ^ (((addr >> 7) & mask) << 4)


def operand_addresses(d: SmemDescriptor, rows: int, k: int, elem_bytes: int, k_major: bool) -> np.ndarray:
    """(rows, k) shared-memory byte address of each element of an M x K (or N x K) operand.

    Canonical layouts of PTX 9.7.16.3.3 with T = 16 / elem_bytes elements per 16-byte unit:
      K-major, no swizzle : ((8,m),(T,2k)):((1T,SBO),(1,LBO))   -- 8x16B core matrices
      K-major, S-byte swz : ((8,m),(T,2k)):((S/16*T,SBO),(1,T)) -- rows of S bytes, LBO unused
      MN-major, no swizzle: ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))
      MN-major, S-byte swz: ((T,S/16,m),(8,k)):((1,T,LBO),(S/16*T,SBO))
    """
    r = np.arange(rows, dtype=np.int64)[:, None]
    kk = np.arange(k, dtype=np.int64)[None, :]
    s = d.swizzle_bytes
    if k_major:
        kb = kk * elem_bytes
        if s == 0:
            off = (r % 8) * 16 + (r // 8) * d.sbo + kb % 16 + (kb // 16) * d.lbo
        else:
            off = (r % 8) * s + (r // 8) * d.sbo + kb % s + (kb // s) * 0
    else:
        ib = r * elem_bytes
        if s == 0:
            off = ib % 16 + (ib // 16) * d.sbo + (kk % 8) * 16 + (kk // 8) * d.lbo
        else:
            off = ib % s + (ib // s) * d.lbo + (kk % 8) * s + (kk // 8) * d.sbo
    return swizzle(d.start + off, d.swizzle)


# ---------------------------------------------------------------------- instruction descriptor

# kind -> {A/B type code: element format name}
_AB_TYPES = {
    "f16": {0: "f16", 1: "bf16"},
    "tf32": {2: "tf32"},
    "f8f6f4": {0: "e4m3", 1: "e5m2", 3: "e2m3", 4: "e3m2", 5: "e2m1"},
    "i8": {0: "u8", 1: "s8"},
}
_D_TYPES = {0: "f16", 1: "f32", 2: "s32"}
_ALLOWED_D = {"f16": {"f16", "f32"}, "tf32": {"f32"}, "f8f6f4": {"f32"}, "i8": {"s32"}}
K_OF_KIND = {"f16": 16, "tf32": 8, "f8f6f4": 32, "i8": 32,  # dense K, cta_group::1 (Table 39)
             "mxf8f6f4": 32, "mxf4": 64, "mxf4nvf4": 64}


@dataclass(frozen=True)
class InstrDescriptor:
    raw: int
    kind: str
    sparse: bool
    saturate: bool
    dtype: str
    atype: str
    btype: str
    negate_a: bool
    negate_b: bool
    transpose_a: bool
    transpose_b: bool
    n: int
    m: int
    max_shift: int
    notes: tuple[str, ...] = ()  # undocumented bits that are set (warned, not rejected)
    scale_type: ScaleType | None = None  # block-scaled kinds only (Tables 43/44)
    sfa_id: int = 0  # scale factor A / B data IDs (block-scaled kinds, 9.7.16.10.7.2-3)
    sfb_id: int = 0

    @property
    def k(self) -> int:
        return K_OF_KIND[self.kind]

    @property
    def block_scaled(self) -> bool:
        return self.kind in BLOCK_SCALED_KINDS


def decode_instr_desc(raw: int, kind: str, ins: A.Instruction | None = None) -> InstrDescriptor:
    """Decode and validate against Table 42 and the shapes of Table 39 (dense, cta_group::1)."""
    raw &= 0xFFFFFFFF
    if kind in BLOCK_SCALED_KINDS:
        return decode_scaled_instr_desc(raw, kind, ins)
    if kind not in _AB_TYPES:
        raise Unsupported(f"tcgen05.mma .kind::{kind}", ins)

    def f(lo: int, n: int) -> int:
        return (raw >> lo) & ((1 << n) - 1)

    notes = []
    for bit in (6, 23, 29):
        if f(bit, 1):
            notes.append(f"instruction descriptor {raw:#010x}: reserved bit {bit} is set")
    dcode, acode, bcode = f(4, 2), f(7, 3), f(10, 3)
    if dcode not in _D_TYPES:
        raise UndefinedBehavior(f"instruction descriptor {raw:#010x}: D type code {dcode} is invalid", ins)
    dtype = _D_TYPES[dcode]
    types = _AB_TYPES[kind]
    if acode not in types or bcode not in types:
        raise UndefinedBehavior(f"instruction descriptor {raw:#010x}: A/B type codes {acode}/{bcode} are "
                                f"invalid for .kind::{kind} (PTX 9.7.16.4.2)", ins)
    if dtype not in _ALLOWED_D[kind]:
        raise UndefinedBehavior(f"instruction descriptor {raw:#010x}: D type {dtype} is invalid for .kind::{kind}", ins)
    if kind == "f16" and dtype == "f16" and (acode, bcode) != (0, 0):
        raise UndefinedBehavior(f"instruction descriptor {raw:#010x}: an f16 D needs f16 A and B", ins)
    if kind == "i8" and (f(13, 1) or f(14, 1)):
        raise UndefinedBehavior(f"instruction descriptor {raw:#010x}: negate bits must be 0 for .kind::i8", ins)
    if not f(2, 1) and f(0, 2):
        notes.append(f"instruction descriptor {raw:#010x}: sparsity selector bits 0-1 set for a dense MMA")
    if kind != "i8" and f(3, 1):
        notes.append(f"instruction descriptor {raw:#010x}: saturate bit 3 set for .kind::{kind} (only meaningful "
                     "for .kind::i8)")
    m, n = f(24, 5) << 4, f(17, 6) << 3
    if m not in (64, 128):
        raise UndefinedBehavior(f"instruction descriptor {raw:#010x}: M = {m} is not a cta_group::1 shape "
                                "(64 or 128, Table 39)", ins)
    n_ok = 8 <= n <= 256 and n % 8 == 0 and (kind != "i8" or n <= 32 or n % 16 == 0)
    if not n_ok:
        raise UndefinedBehavior(f"instruction descriptor {raw:#010x}: N = {n} is not a valid shape for "
                                f".kind::{kind} (Table 39)", ins)
    return InstrDescriptor(raw, kind, bool(f(2, 1)), bool(f(3, 1)) and kind == "i8", dtype, types[acode],
                           types[bcode], bool(f(13, 1)), bool(f(14, 1)), bool(f(15, 1)), bool(f(16, 1)), n, m,
                           f(30, 2), tuple(notes))


def encode_instr_desc(kind: str, m: int, n: int, atype: str, btype: str, dtype: str = "f32",
                      transpose_a: bool = False, transpose_b: bool = False, negate_a: bool = False,
                      negate_b: bool = False, saturate: bool = False) -> int:
    """Table 42 encoding (tests and tools)."""
    rev = {v: c for c, v in _AB_TYPES[kind].items()}
    drev = {v: c for c, v in _D_TYPES.items()}
    return (int(saturate) << 3 | drev[dtype] << 4 | rev[atype] << 7 | rev[btype] << 10 | int(negate_a) << 13
            | int(negate_b) << 14 | int(transpose_a) << 15 | int(transpose_b) << 16 | (n >> 3) << 17
            | (m >> 4) << 24)


# ---------------------------------------------------------------------- block-scaled kinds

BLOCK_SCALED_KINDS = ("mxf8f6f4", "mxf4", "mxf4nvf4")


class ScaleVec(Enum):
    """Scale factors per row of A (and per column of B) in one MMA, `.scale_vec::NX` (9.7.16.10.7.1,
    Table 54): K / N consecutive K elements share one scale factor."""

    X1 = 1
    X2 = 2
    X4 = 4


SCALE_VEC_QUALIFIERS = (".scale_vec::1X", ".scale_vec::2X", ".scale_vec::4X", ".block16", ".block32")

# (kind, qualifier or None) -> ScaleVec: Table 55 and the aliases below it (".block32 is alias for
# .scale_vec::1X or .scale_vec::2X based on .kind", ".block16 is alias for .scale_vec::4X"). Without a
# qualifier: ".kind::mxf4 ... defaults to .block32"; ".kind::mxf4nvf4 ... must be explicitly
# specified"; for .kind::mxf8f6f4 the tcgen05 text is silent, but 1X is the only size Table 55 allows
# for it (and mma.sync's text states that default, 9.7.14.5.14).
_SCALE_VEC = {
    ("mxf8f6f4", ".scale_vec::1X"): ScaleVec.X1, ("mxf8f6f4", ".block32"): ScaleVec.X1, ("mxf8f6f4", None): ScaleVec.X1,
    ("mxf4", ".scale_vec::2X"): ScaleVec.X2, ("mxf4", ".block32"): ScaleVec.X2, ("mxf4", None): ScaleVec.X2,
    ("mxf4nvf4", ".scale_vec::2X"): ScaleVec.X2, ("mxf4nvf4", ".block32"): ScaleVec.X2,
    ("mxf4nvf4", ".scale_vec::4X"): ScaleVec.X4, ("mxf4nvf4", ".block16"): ScaleVec.X4,
}


def scale_vec_of(kind: str, qualifiers: list[str], ins: A.Instruction | None = None) -> ScaleVec:
    """The scale vector size of a `tcgen05.mma ... .block_scale{.scale_vectorsize}` (Table 55)."""
    if len(qualifiers) > 1:
        raise UndefinedBehavior(f"tcgen05.mma: more than one scale vector size ({' '.join(qualifiers)})", ins)
    q = qualifiers[0] if qualifiers else None
    vec = _SCALE_VEC.get((kind, q))
    if vec is None:
        what = q if q is not None else "no .scale_vectorsize (\"for .kind::mxf4nvf4 ... must be explicitly specified\")"
        raise UndefinedBehavior(f"tcgen05.mma .kind::{kind}.block_scale with {what} is not a valid combination "
                                "(PTX 9.7.16.10.7.1, Table 55)", ins)
    return vec


# kind -> {A/B type code: element format}; mxf4/mxf4nvf4 code B in bits 10-11 only (Tables 43/44)
_SCALED_TYPES = {
    "mxf8f6f4": {0: "e4m3", 1: "e5m2", 3: "e2m3", 4: "e3m2", 5: "e2m1"},
    "mxf4": {1: "e2m1"},
    "mxf4nvf4": {1: "e2m1"},
}
_SCALED_RESERVED = {"mxf8f6f4": (0, 1, 3, 6, 24, 25, 26, 31), "mxf4": (0, 1, 3, 6, 12, 24, 25, 26),
                    "mxf4nvf4": (0, 1, 3, 6, 12, 24, 25, 26)}
SUB_BYTE_TYPES = ("e2m1", "e2m3", "e3m2")


def decode_scaled_instr_desc(raw: int, kind: str, ins: A.Instruction | None = None) -> InstrDescriptor:
    """Decode and validate a block-scaled instruction descriptor (9.7.16.4.2, Table 43 for
    .kind::mxf8f6f4, Table 44 for .kind::mxf4 / .kind::mxf4nvf4) against the cta_group::1 shapes of
    Table 39 (M = 128; N = 8..256 step 8; K = 32 for mxf8f6f4, 64 for mxf4/mxf4nvf4):

      0-1 reserved, 2 sparse, 3 reserved, 4-5 scale factor B ID, 6 reserved, 7-9 A type,
      10-12 B type (10-11 for mxf4/mxf4nvf4, 12 reserved), 13/14 negate A/B, 15/16 transpose A/B,
      17-22 N >> 3, 23 scale type (UE4M3 = 0, UE8M0 = 1), 24-26 reserved, 27-28 M >> 7,
      29-30 scale factor A ID, 31 reserved (mxf8f6f4) / K = 96 (mxf4, mxf4nvf4).

    `UndefinedBehavior`: type codes outside the table; a scale type the kind does not allow (UE8M0
    only for mxf8f6f4 and mxf4); M != 128 (M >> 7 = 2 is the cta_group::2 shape 256); N outside
    8..256; bit 31 (K = 96, a cta_group::2 shape only) for mxf4/mxf4nvf4; transpose bits for
    mxf4/mxf4nvf4 ("No Transpose = 0", Table 44 and Table 49) and for 4/6-bit element types
    (Table 52: 4- and 6-bit A only row-major, B only column-major); for an 8-bit transposed B,
    N not a multiple of 16 (Table 50: "16 <= N <= 256, step 16" for cta_group::1); scale factor IDs
    other than 0 or 2 for mxf4/mxf4nvf4. Reserved bits that are set are notes (warned, not
    rejected), as for the other kinds. The IDs' dependence on the scale vector size is
    `check_scale_ids`."""
    raw &= 0xFFFFFFFF

    def f(lo: int, n: int) -> int:
        return (raw >> lo) & ((1 << n) - 1)

    where = f"instruction descriptor {raw:#010x} (.kind::{kind})"
    notes = [f"{where}: reserved bit {bit} is set" for bit in _SCALED_RESERVED[kind] if f(bit, 1)]
    types = _SCALED_TYPES[kind]
    acode, bcode = f(7, 3), f(10, 3 if kind == "mxf8f6f4" else 2)
    if acode not in types or bcode not in types:
        raise UndefinedBehavior(f"{where}: A/B type codes {acode}/{bcode} are invalid (PTX 9.7.16.4.2, "
                                f"Table {43 if kind == 'mxf8f6f4' else 44})", ins)
    atype, btype = types[acode], types[bcode]
    if f(23, 1):
        stype = ScaleType.UE8M0
    elif kind == "mxf4nvf4":
        stype = ScaleType.UE4M3
    else:
        raise UndefinedBehavior(f"{where}: scale type bit 23 is 0 (UE4M3), but .kind::{kind} scales are UE8M0 "
                                "(Tables 43/44)", ins)
    m, n = f(27, 2) << 7, f(17, 6) << 3
    if m != 128:
        raise UndefinedBehavior(f"{where}: M = {m} is not a cta_group::1 shape of .kind::{kind} (128, Table 39)", ins)
    if not 8 <= n <= 256:
        raise UndefinedBehavior(f"{where}: N = {n} is not a valid shape (8..256 in steps of 8, Table 39)", ins)
    tra, trb = bool(f(15, 1)), bool(f(16, 1))
    if kind != "mxf8f6f4":
        if f(31, 1):
            raise UndefinedBehavior(f"{where}: bit 31 selects K = 96, a .cta_group::2 shape only (Table 39)", ins)
        if tra or trb:
            raise UndefinedBehavior(f"{where}: transpose bits must be 0 for .kind::{kind} (Tables 44, 49)", ins)
        if f(29, 2) not in (0, 2) or f(4, 2) not in (0, 2):
            raise UndefinedBehavior(f"{where}: scale factor IDs {f(29, 2)}/{f(4, 2)} must be 0 or 2 (Table 44)", ins)
    for ty, tr, what in ((atype, tra, "A"), (btype, trb, "B")):
        if tr and ty in SUB_BYTE_TYPES:
            raise UndefinedBehavior(f"{where}: transposed {what} with {ty} elements: 4- and 6-bit matrices are only "
                                    "K-major (PTX 9.7.16.10.3, Table 52)", ins)
    if trb and btype not in SUB_BYTE_TYPES and (n % 16 or n < 16):
        raise UndefinedBehavior(f"{where}: N = {n} with an 8-bit transposed B (cta_group::1 needs 16 <= N <= 256 in "
                                "steps of 16, PTX 9.7.16.10.1, Table 50)", ins)
    return InstrDescriptor(raw, kind, bool(f(2, 1)), False, "f32", atype, btype, bool(f(13, 1)), bool(f(14, 1)), tra,
                           trb, n, m, 0, tuple(notes), stype, f(29, 2), f(4, 2))


def check_scale_ids(d: InstrDescriptor, vec: ScaleVec, ins: A.Instruction | None = None) -> None:
    """Scale factor IDs per scale vector size (9.7.16.10.7.2-3): 1X any byte 0-3; 2X a half word, 0 or
    2; 4X "The SFA_ID value must be 0" (and SFB_ID); UE4M3 scales only with 4X (Table 55)."""
    ok = {ScaleVec.X1: (0, 1, 2, 3), ScaleVec.X2: (0, 2), ScaleVec.X4: (0,)}[vec]
    for sid, what in ((d.sfa_id, "A"), (d.sfb_id, "B")):
        if sid not in ok:
            raise UndefinedBehavior(f"instruction descriptor {d.raw:#010x}: scale factor {what} ID {sid} is invalid with "
                                    f".scale_vec::{vec.value}X (PTX 9.7.16.10.7.2-3)", ins)
    if d.scale_type is ScaleType.UE4M3 and vec is not ScaleVec.X4:
        raise UndefinedBehavior(f"instruction descriptor {d.raw:#010x}: UE4M3 scale factors need .scale_vec::4X / "
                                ".block16 (Table 55)", ins)


def encode_scaled_instr_desc(kind: str, n: int, atype: str, btype: str, sfa_id: int = 0, sfb_id: int = 0,
                             scale_type: ScaleType = ScaleType.UE8M0, m: int = 128, transpose_a: bool = False,
                             transpose_b: bool = False, negate_a: bool = False, negate_b: bool = False) -> int:
    """Table 43/44 encoding (tests and tools)."""
    rev = {v: c for c, v in _SCALED_TYPES[kind].items()}
    return (sfb_id << 4 | rev[atype] << 7 | rev[btype] << 10 | int(negate_a) << 13 | int(negate_b) << 14
            | int(transpose_a) << 15 | int(transpose_b) << 16 | (n >> 3) << 17
            | int(scale_type is ScaleType.UE8M0) << 23 | (m >> 7) << 27 | sfa_id << 29)
