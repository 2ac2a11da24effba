"""Pure layout functions of `wgmma.mma_async` (PTX 9.7.15.5.1): the 64-bit shared-memory matrix
descriptor, the canonical shared-memory layouts with their swizzles, and the register fragments
of D (and of A when it comes from registers) for the m64nNkK shapes.

Conventions: a multiplicand is seen as an (MN x K) matrix: A is M x K (M = 64) and B is N x K
(column j of the K x N matrix B is row j here). `K-major` (imm-trans = 0) means K is the
contiguous dimension in shared memory, `MN-major` (imm-trans = 1) means M (for A) or N (for B)
is (9.7.15.5.1.2). Every instruction covers 32 bytes of K (k16 for 16-bit types, k8 for tf32,
k32 for 8-bit types).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

K_BYTES = 32  # bytes of K one wgmma.mma_async consumes, for every type (9.7.15.2 shapes)
_SWIZZLE_BYTES = {0: 0, 1: 128, 2: 64, 3: 32}  # descriptor bits 62-63 (9.7.15.5.1.2.2)


class LayoutError(ValueError):
    """A descriptor or shape this model does not cover (reported as Unsupported by the caller)."""


@dataclass(frozen=True)
class MatrixDescriptor:
    """A decoded matrix descriptor (9.7.15.5.1.2.2); byte quantities, not the encoded fields."""

    start: int  # shared-memory start address (bytes)
    lbo: int  # leading dimension byte offset
    sbo: int  # stride dimension byte offset
    base_offset: int  # bits 49-51
    swizzle: int  # swizzle width in bytes: 0 (none), 32, 64 or 128


def decode_descriptor(value: int) -> MatrixDescriptor:
    """Split a 64-bit descriptor. Each address field holds matrix-descriptor-encode(x) =
    (x & 0x3FFFF) >> 4, so the byte value is the 14-bit field times 16 (9.7.15.5.1.2.2)."""
    v = int(value) & (2**64 - 1)
    field = lambda lo: ((v >> lo) & 0x3FFF) << 4  # noqa: E731
    return MatrixDescriptor(start=field(0), lbo=field(16), sbo=field(32), base_offset=(v >> 49) & 0x7,
                            swizzle=_SWIZZLE_BYTES[(v >> 62) & 0x3])


def encode_descriptor(start: int, lbo: int, sbo: int, swizzle: int = 0, base_offset: int = 0) -> int:
    """The inverse of decode_descriptor (for tests and hand-written kernels)."""
    enc = lambda x: (x & 0x3FFFF) >> 4  # noqa: E731
    mode = {b: m for m, b in _SWIZZLE_BYTES.items()}[swizzle]
    return enc(start) | enc(lbo) << 16 | enc(sbo) << 32 | (base_offset & 7) << 49 | mode << 62


def swizzle(addr: np.ndarray, width: int) -> np.ndarray:
    """The swizzle of `width` bytes on byte addresses (Swizzle<B,4,3> of 9.7.15.5.1.2.1.3 with
    2^B = width/16): the 16-byte chunk index (address bits 4..4+B) is XORed with the row index
    of the repeating pattern (bits 7..7+B), so the pattern repeats every 8*width bytes (the
    boundaries of the base-offset table in 9.7.15.5.1.2.2)."""
    a = np.asarray(addr, dtype=np.int64)
    if width == 0:
        return a
    mask = width // 16 - 1
    return a ^ (((a >> 7) & mask) << 4)


def canonical_offsets(mn: np.ndarray, k: np.ndarray, elem_bytes: int, mn_major: bool,
                      desc: MatrixDescriptor) -> np.ndarray:
    """Byte offset from the descriptor's start address of element (mn, k), before swizzling,
    for the canonical layouts of 9.7.15.5.1.2.1.3 (in bytes; T = 16 / element size):

    K-major,  no swizzle:  ((8,m),(T,2k)) : ((16 B, SBO), (1 elem, LBO))
    K-major,  W-byte:      ((8,m),(T,2k)) : ((W B,  SBO), (1 elem, 16 B))
    MN-major, no swizzle:  ((T,1,m),(8,k)) : ((1 elem, -, SBO), (16 B, LBO))
    MN-major, W-byte:      ((T,W/16,m),(8,k)) : ((1 elem, 16 B, LBO), (W B, SBO))
    """
    mn = np.asarray(mn, dtype=np.int64)
    k = np.asarray(k, dtype=np.int64)
    e = elem_bytes
    t = 16 // e  # elements per 16-byte core-matrix row
    w = desc.swizzle
    if not mn_major:
        if w == 0:
            return (mn % 8) * 16 + (mn // 8) * desc.sbo + (k % t) * e + (k // t) * desc.lbo
        return (mn % 8) * w + (mn // 8) * desc.sbo + k * e
    if w == 0:
        return (mn % t) * e + (mn // t) * desc.sbo + (k % 8) * 16 + (k // 8) * desc.lbo
    per_row = w // e  # MN elements in one swizzle-pattern row
    return (mn % per_row) * e + (mn // per_row) * desc.lbo + (k % 8) * w + (k // 8) * desc.sbo


def matrix_addresses(desc: MatrixDescriptor, rows: int, k_elems: int, elem_bytes: int, mn_major: bool) -> np.ndarray:
    """(rows, k_elems) shared-memory byte addresses of an MN x K operand described by `desc`:
    the canonical offset added to the start address, then the swizzle applied to the address
    (the swizzle acts on address bits, which is why the base offset exists)."""
    if desc.swizzle and desc.base_offset:
        raise LayoutError(f"matrix descriptor base offset {desc.base_offset} (a swizzle pattern that does not "
                          "start on its natural boundary) is not modelled")
    mn, k = np.meshgrid(np.arange(rows), np.arange(k_elems), indexing="ij")
    return swizzle(desc.start + canonical_offsets(mn, k, elem_bytes, mn_major, desc), desc.swizzle)


# ---------------------------------------------------------------------------- register fragments


def d_fragment(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols), each (128, n/2): where element i of thread t of the warpgroup lies in the
    64 x n accumulator (9.7.15.5.1.1, Figures 149/151/153). Warp w holds rows 16w..16w+15; within
    it, each 8-column block repeats the m16n8 accumulator layout: lane l holds row l/4 (elements
    i%4 in 0,1) or l/4 + 8 (i%4 in 2,3), columns 8*(i/4) + 2*(l%4) + i%2."""
    t = np.arange(128)[:, None]
    i = np.arange(n // 2)[None, :]
    lane, warp = t % 32, t // 32
    rows = 16 * warp + lane // 4 + 8 * ((i // 2) % 2)
    cols = 8 * (i // 4) + 2 * (lane % 4) + i % 2
    return np.broadcast_to(rows, (128, n // 2)), np.broadcast_to(cols, (128, n // 2))


def a_fragment(elem_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols), each (128, elements per thread), of the A fragment in registers for 16-bit
    (k16: 8 elements), 32-bit tf32 (k8: 4 elements) and 8-bit (k32: 16 elements) types
    (9.7.15.5.1.1.1-3, Figures 148/150/152). Each thread holds 4 registers of 32 bits; register r
    covers row l/4 + 8*(r%2) and the column block r/2 of K/2 columns, in which the thread holds
    the 32/elem_bits consecutive columns starting at (l%4)*(32/elem_bits)."""
    per_reg = 32 // elem_bits
    t = np.arange(128)[:, None]
    j = np.arange(4 * per_reg)[None, :]  # element index, low to high
    lane, warp = t % 32, t // 32
    r, within = j // per_reg, j % per_reg
    half_k = 4 * per_reg  # K / 2
    rows = 16 * warp + lane // 4 + 8 * (r % 2)
    cols = (r // 2) * half_k + (lane % 4) * per_reg + within
    shape = (128, 4 * per_reg)
    return np.broadcast_to(rows, shape), np.broadcast_to(cols, shape)
