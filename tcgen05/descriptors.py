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
rejections. The sparse bit and the block-scaled kinds are `Unsupported` (tcgen05.ops).

Operand element addresses follow the canonical layouts of 9.7.16.3.3 (K-major and MN-major, with
and without swizzling); the swizzle is the XOR of address bits [7, 7+b) into bits [4, 4+b)
(Swizzle<b,4,3>) applied to the shared-memory address, which requires the repeating pattern to
start on its natural boundary (base offset 0, Table 41).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ptx_parser import ast as A
from semantics.errors import UndefinedBehavior, Unsupported

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
K_OF_KIND = {"f16": 16, "tf32": 8, "f8f6f4": 32, "i8": 32}  # dense K (Table 39)


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

    @property
    def k(self) -> int:
        return K_OF_KIND[self.kind]


def decode_instr_desc(raw: int, kind: str, ins: A.Instruction | None = None) -> InstrDescriptor:
    """Decode and validate against Table 42 and the shapes of Table 39 (dense, cta_group::1)."""
    raw &= 0xFFFFFFFF
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
