"""Value semantics of tcgen05 data movement and MMA (PTX 9.7.16.2-9.7.16.4, 9.7.16.8-9.7.16.9).

Pure functions over numpy arrays: the per-thread fragment maps of `tcgen05.ld/st`, and the
computation of one `tcgen05.mma` given the CTA's tensor memory and shared memory. The unit
(`tcgen05.unit`) decides *when* they run.

MMA arithmetic is a MODEL: the manual does not specify the order or the precision of the
accumulation inside the tensor core. Each `tcgen05.mma` computes D = A x B (+ D) exactly in
float64 (products of the supported input formats are exact in float64; the sum of K <= 32 of them
plus D is computed by one float64 matrix product) and rounds once to f32 with round-to-nearest-even.
Integer MMAs are exact (wrapping modulo 2^32, or saturating with the saturate bit). tf32 inputs are
read as the top 19 bits of each 32-bit element (the low 13 bits are ignored). These choices will
be compared against hardware when a Blackwell GPU is available.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ptx_parser import ast as A
from semantics.errors import UndefinedBehavior, Unsupported
from semantics.formats import decode, get_format

from .descriptors import InstrDescriptor, SmemDescriptor, check_smem_desc, decode_smem_desc, operand_addresses
from .tmem import TensorMemory

# ---------------------------------------------------------------------- tcgen05.ld / st fragments

# shape -> registers per repetition (Table 49 of the manual: .32x32b/.16x64b/.16x32bx2 one, .16x128b
# two, .16x256b four registers per .x1) and the largest .num
SHAPES = {"32x32b": (1, 128), "16x64b": (1, 128), "16x128b": (2, 64), "16x256b": (4, 32), "16x32bx2": (1, 128)}


@dataclass(frozen=True)
class Fragment:
    """Per thread t of a warp and register j: tensor-memory lane and column offsets (32, R)."""

    lane: np.ndarray
    col: np.ndarray
    lanes_touched: int  # 32 or 16

    @property
    def regs(self) -> int:
        return self.lane.shape[1]


def fragment(shape: str, num: int, split_off: int = 0, pack: bool = False) -> Fragment:
    """The matrix-fragment layouts of 9.7.16.2.3.1 (Figures 183-187).

    Repetition r of `.xN` moves to the next (32 x per-rep bits) columns. With `.pack::16b` /
    `.unpack::16b` each register holds two 16-bit elements of two adjacent columns, so the columns
    double: register j covers columns 2c and 2c+1 (low and high half) for its unpacked column c.
    """
    per_rep, _ = SHAPES[shape]
    t = np.arange(32)[:, None]
    reps = np.arange(num)[None, :]
    if shape == "32x32b":
        lane, col = np.broadcast_to(t, (32, num)), np.broadcast_to(reps, (32, num))
    elif shape == "16x64b":
        lane = np.broadcast_to(8 * (t % 2) + t // 4, (32, num))
        col = 2 * reps + (t // 2) % 2
    elif shape == "16x32bx2":
        lane = np.broadcast_to(t % 16, (32, num))
        col = reps + (t // 16) * split_off
    elif shape == "16x128b":
        j = np.arange(2)[None, None, :]
        lane = (t[:, :, None] // 4 + 8 * j) + 0 * reps[:, :, None]
        col = (4 * reps[:, :, None] + t[:, :, None] % 4) + 0 * j
        lane, col = lane.reshape(32, -1), col.reshape(32, -1)
    elif shape == "16x256b":
        j = np.arange(4)[None, None, :]
        lane = (t[:, :, None] // 4 + 8 * (j // 2)) + 0 * reps[:, :, None]
        col = (8 * reps[:, :, None] + 2 * (t[:, :, None] % 4) + j % 2)
        lane, col = lane.reshape(32, -1), col.reshape(32, -1)
    else:  # pragma: no cover - callers validate the shape
        raise KeyError(shape)
    lane = np.ascontiguousarray(lane, dtype=np.int64)
    col = np.ascontiguousarray(col, dtype=np.int64)
    assert lane.shape == (32, num * per_rep)
    if pack:
        col = 2 * col
    return Fragment(lane, col, 32 if shape == "32x32b" else 16)


def gather_cells(tm: TensorMemory, cta: np.ndarray, lanes: np.ndarray, cols: np.ndarray, pack: bool) -> np.ndarray:
    """(k, R) register values of a `tcgen05.ld` (packing two 16-bit halves with .pack::16b)."""
    c = tm.cells
    if not pack:
        return c[cta[:, None], lanes, cols]
    lo = c[cta[:, None], lanes, cols] & np.uint32(0xFFFF)
    hi = c[cta[:, None], lanes, cols + 1] & np.uint32(0xFFFF)
    return (lo | (hi << np.uint32(16))).astype(np.uint32)


def scatter_cells(tm: TensorMemory, cta: np.ndarray, lanes: np.ndarray, cols: np.ndarray, values: np.ndarray,
                  unpack: bool) -> None:
    """Write (k, R) register values of a `tcgen05.st` (two 16-bit halves with .unpack::16b; MODEL:
    the upper 16 bits of each cell written by .unpack::16b become zero)."""
    c = tm.cells
    v = values.astype(np.uint32)
    if not unpack:
        c[cta[:, None], lanes, cols] = v
        return
    c[cta[:, None], lanes, cols] = v & np.uint32(0xFFFF)
    c[cta[:, None], lanes, cols + 1] = v >> np.uint32(16)


# ---------------------------------------------------------------------- tcgen05.mma

_ELEM_BYTES = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1, "e5m2": 1, "u8": 1, "s8": 1}
_INT_DT = {"u8": np.uint8, "s8": np.int8}


def _values(raw: np.ndarray, ty: str) -> np.ndarray:
    """Raw little-endian element bytes (..., elem_bytes) -> float64 (or int64) values."""
    nb = _ELEM_BYTES[ty]
    u = np.zeros(raw.shape[:-1], dtype=np.uint64)
    for i in range(nb):
        u |= raw[..., i].astype(np.uint64) << np.uint64(8 * i)
    if ty in _INT_DT:
        return u.astype(_INT_DT[ty]).astype(np.int64)
    return decode(u, get_format(ty))


def _element_type(ty: str, ins: A.Instruction | None) -> int:
    if ty not in _ELEM_BYTES:
        raise Unsupported(f"tcgen05.mma operand type {ty} (sub-byte f6/f4 elements are not modelled)", ins)
    return _ELEM_BYTES[ty]


def smem_operand(smem: np.ndarray, d: SmemDescriptor, rows: int, k: int, ty: str, k_major: bool,
                 ins: A.Instruction | None) -> np.ndarray:
    """(rows, k) values of a matrix operand read from one CTA's shared memory through a descriptor."""
    check_smem_desc(d, ins)
    eb = _element_type(ty, ins)
    addr = operand_addresses(d, rows, k, eb, k_major)
    if (addr % eb).any():
        raise UndefinedBehavior(f"tcgen05.mma operand elements are not aligned (descriptor {d.raw:#018x})", ins)
    last = int(addr.max()) + eb
    if int(addr.min()) < 0 or last > smem.size:
        raise UndefinedBehavior(f"tcgen05.mma operand (descriptor {d.raw:#018x}) reaches shared memory byte "
                                f"{last - 1}, beyond the {smem.size} bytes of the CTA", ins)
    raw = smem[addr[..., None] + np.arange(eb)]
    return _values(raw, ty)


def tmem_operand(tm: TensorMemory, cta: int, lane0: int, col0: int, rows: int, k: int, ty: str,
                 ins: A.Instruction | None) -> np.ndarray:
    """(rows, k) values of operand A held in tensor memory: row i in lane lane0+i, elements packed
    little-endian into consecutive 32-bit columns (MODEL of the A-in-TMEM layout for M = 128)."""
    eb = _element_type(ty, ins)
    ncols = -(-k * eb // 4)
    lanes = lane0 + np.arange(rows)
    cols = col0 + np.arange(ncols)
    tm.check_access(np.asarray(cta), lanes[:, None], cols[None, :], "tcgen05.mma A operand", ins)
    words = tm.cells[cta][lanes[:, None], cols[None, :]]  # (rows, ncols) uint32
    raw = words.astype("<u4").view(np.uint8).reshape(rows, ncols * 4)[:, : k * eb]
    return _values(raw.reshape(rows, k, eb), ty)


def d_region(d: InstrDescriptor, lane0: int, col0: int) -> tuple[np.ndarray, np.ndarray]:
    """(M, N) lane and column indices of the accumulator D for cta_group::1 (data-path layouts of
    9.7.16.10.9): M = 128, row i in lane i; M = 64, rows 16q..16q+15 in the first 16 lanes of the
    q-th 32-lane quarter (lane 32q + i%16). Column j of D is column col0 + j (32-bit D types)."""
    i = np.arange(d.m)
    lanes = lane0 + (i if d.m == 128 else 32 * (i // 16) + i % 16)[:, None]
    cols = col0 + np.arange(d.n)[None, :]
    return np.broadcast_to(lanes, (d.m, d.n)), np.broadcast_to(cols, (d.m, d.n))


def check_modelled(idesc: InstrDescriptor, a_in_tmem: bool, ins: A.Instruction | None) -> None:
    """Unsupported for the MMA forms this model does not cover (checked when the MMA is issued)."""
    if idesc.sparse:
        raise Unsupported("tcgen05.mma with the sparsity bit set in the instruction descriptor", ins)
    if idesc.dtype == "f16":
        raise Unsupported("tcgen05.mma with an f16 accumulator (D layout in tensor memory not modelled)", ins)
    for ty in (idesc.atype, idesc.btype):
        _element_type(ty, ins)
    if a_in_tmem and idesc.transpose_a:
        raise UndefinedBehavior("tcgen05.mma with A in tensor memory and the transpose-A bit set", ins)
    if a_in_tmem and idesc.m != 128:
        raise Unsupported(f"tcgen05.mma with A in tensor memory and M = {idesc.m} (only M = 128 is modelled)", ins)


def mma(tm: TensorMemory, cta: int, smem: np.ndarray, d_addr: int, a: tuple[str, int], b_desc: int,
        idesc: InstrDescriptor, enable_input_d: bool, ins: A.Instruction | None) -> None:
    """Perform one dense cta_group::1 `tcgen05.mma` (9.7.16.10.9): D = A x B (+ D)."""
    check_modelled(idesc, a[0] == "tmem", ins)
    m, n, k = idesc.m, idesc.n, idesc.k
    d_lane, d_col = d_addr >> 16, d_addr & 0xFFFF
    if d_lane != 0:
        raise UndefinedBehavior(f"tcgen05.mma D address {d_addr:#x}: the lane field must be 0 (cta_group::1)", ins)
    lanes, cols = d_region(idesc, d_lane, d_col)
    tm.check_access(np.asarray(cta), lanes, cols, "tcgen05.mma D", ins)
    if a[0] == "desc":
        av = smem_operand(smem, decode_smem_desc(a[1]), m, k, idesc.atype, not idesc.transpose_a, ins)
    else:
        av = tmem_operand(tm, cta, a[1] >> 16, a[1] & 0xFFFF, m, k, idesc.atype, ins)
    bv = smem_operand(smem, decode_smem_desc(b_desc), n, k, idesc.btype, not idesc.transpose_b, ins)
    cells = tm.cells[cta]
    if idesc.kind == "i8":
        acc = av.astype(np.int64) @ bv.astype(np.int64).T
        if enable_input_d:
            acc = acc + cells[lanes, cols].view(np.int32).astype(np.int64)
        if idesc.saturate:
            acc = np.clip(acc, -(2**31), 2**31 - 1)
        cells[lanes, cols] = (acc & 0xFFFFFFFF).astype(np.uint32)
        return
    if idesc.negate_a:
        av = -av
    if idesc.negate_b:
        bv = -bv
    with np.errstate(invalid="ignore", over="ignore"):
        acc = av @ bv.T
        if enable_input_d:
            acc = acc + cells[lanes, cols].view(np.float32).astype(np.float64)
        cells[lanes, cols] = acc.astype(np.float32).view(np.uint32)
