"""Value semantics of tcgen05 data movement and MMA (PTX 9.7.16.2-9.7.16.4, 9.7.16.8-9.7.16.10).

Pure functions over numpy arrays: the per-thread fragment maps of `tcgen05.ld/st`, the computation
of one `tcgen05.mma` given the CTA's tensor memory and shared memory, `tcgen05.cp` (shared memory to
tensor memory, with its lane layouts) and `tcgen05.shift`, and the footprints (exact bytes and
cells) the unit reports to observers. The unit (`tcgen05.unit`) decides *when* they run.

MMA arithmetic is a MODEL: the manual does not specify the order or the precision of the
accumulation inside the tensor core. Each `tcgen05.mma` computes D = A x B (+ D) exactly in
float64 (products of the supported input formats are exact in float64; the sum of K <= 32 of them
plus D is computed by one float64 matrix product) and rounds once to f32 with round-to-nearest-even.
Integer MMAs are exact (wrapping modulo 2^32, or saturating with the saturate bit). tf32 inputs are
read as the top 19 bits of each 32-bit element (the low 13 bits are ignored). These choices will
be compared against hardware when a Blackwell GPU is available.

Block-scaled kinds (.kind::mxf8f6f4 / mxf4 / mxf4nvf4, 9.7.16.10.7): D = (A * scale_A) x
(B * scale_B) (+ D). The manual says nothing about the precision of this form beyond the
formula. MODEL, the same as above: each element is multiplied by its scale factor first (exact in
float64: at most 4 significant bits times a power of two (ue8m0) or 4 more bits (ue4m3), with
exponents far inside float64's range), the scaled products (at most 16 significant bits, exact)
are summed with D by one float64 matrix product and rounded once to f32. A NaN element or scale
factor (e4m3 0x7F, e5m2 NaNs, ue8m0 0xFF, ue4m3 0x7F) makes the sums it enters NaN. Where the
scale factors (tcgen05.scales) and the sub-byte element packings (semantics.mxformats) are
documented only by figures, the interpretation is labelled MODEL there.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np

from ptx_parser import ast as A
from semantics.errors import UndefinedBehavior, Unsupported
from semantics.formats import decode, get_format
from semantics.mxformats import Container, decode_elements, from_packed4, from_padded16

from . import scales
from .descriptors import (SUB_BYTE_TYPES, InstrDescriptor, ScaleVec, SmemDescriptor, check_scale_ids, check_smem_desc,
                          decode_smem_desc, operand_addresses)
from .scales import ScaleMatrix
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
        raise Unsupported(f"tcgen05.mma operand type {ty} (sub-byte f6/f4 elements are modelled for the block-scaled "
                          "kinds only)", ins)
    return _ELEM_BYTES[ty]


element_bytes = _element_type  # bytes of one byte-container element (for the unit's observers)


def operand_container(kind: str, ty: str) -> Container:
    """How a shared-memory operand's elements are stored (semantics.mxformats): 4/6-bit elements of
    .kind::mxf8f6f4 in 16-byte units with padding (9.7.16.10.4.4), e2m1 of .kind::mxf4 /
    .kind::mxf4nvf4 two per byte (9.7.16.10.4.6), everything else whole bytes."""
    if ty in SUB_BYTE_TYPES:
        if kind == "mxf8f6f4":
            return Container.PADDED16
        if kind in ("mxf4", "mxf4nvf4"):
            return Container.PACKED4
    return Container.BYTE


@dataclass(frozen=True)
class AOperand:
    """Operand A of tcgen05.mma: a tensor-memory address (`[a-tmem]`) or a shared-memory descriptor."""

    in_tmem: bool
    value: int


def _operand_bytes(d: SmemDescriptor, rows: int, k: int, ty: str, k_major: bool, container: Container,
                   ins: A.Instruction | None) -> np.ndarray:
    """(rows, units, unit_bytes) CTA-relative addresses of the bytes holding a (rows, k) operand.
    BYTE: one unit per element; PADDED16: one 16-byte unit per 16 K elements (K-major, each element
    takes one byte of address space in the canonical layouts, so the 16 bytes of a unit are consecutive
    addresses); PACKED4: one byte per two K elements (K-major, 4-bit elements, T = 32)."""
    if container is Container.BYTE:
        eb = _element_type(ty, ins)
        addr = operand_addresses(d, rows, k, eb, k_major)
        if (addr % eb).any():
            raise UndefinedBehavior(f"tcgen05.mma operand elements are not aligned (descriptor {d.raw:#018x})", ins)
        return addr[..., None] + np.arange(eb)
    if not k_major:  # the descriptor decoder refuses these first (Table 52); kept for direct callers
        raise UndefinedBehavior(f"tcgen05.mma: {ty} operands are only K-major (PTX 9.7.16.10.3, Table 52)", ins)
    if container is Container.PACKED4:
        return operand_addresses(d, rows, k // 2, 1, True)[..., None]
    units = operand_addresses(d, rows, k, 1, True).reshape(rows, k // 16, 16)
    if (units[..., 0] % 16).any() or (units != units[..., :1] + np.arange(16)).any():
        raise UndefinedBehavior(f"tcgen05.mma: {ty} operand (descriptor {d.raw:#018x}) does not start on a 16-byte "
                                "unit of 16 packed elements (PTX 9.7.16.10.4.4)", ins)
    return units


def operand_addresses_checked(smem_size: int, d: SmemDescriptor, rows: int, k: int, ty: str, k_major: bool,
                              ins: A.Instruction | None, container: Container = Container.BYTE) -> np.ndarray:
    """(rows, units, unit_bytes) CTA-relative shared-memory byte addresses of a descriptor operand,
    checked: descriptor fields, element alignment, inside the CTA's `smem_size` bytes."""
    check_smem_desc(d, ins)
    addr = _operand_bytes(d, rows, k, ty, k_major, container, ins)
    last = int(addr.max()) + 1
    if int(addr.min()) < 0 or last > smem_size:
        raise UndefinedBehavior(f"tcgen05.mma operand (descriptor {d.raw:#018x}) reaches shared memory byte "
                                f"{last - 1}, beyond the {smem_size} bytes of the CTA", ins)
    return addr


def smem_operand(smem: np.ndarray, d: SmemDescriptor, rows: int, k: int, ty: str, k_major: bool,
                 ins: A.Instruction | None, container: Container = Container.BYTE) -> np.ndarray:
    """(rows, k) values of a matrix operand read from one CTA's shared memory through a descriptor."""
    raw = smem[operand_addresses_checked(smem.size, d, rows, k, ty, k_major, ins, container)]
    if container is Container.BYTE:
        return _values(raw, ty)
    if container is Container.PACKED4:
        bits = from_packed4(raw[..., 0]).reshape(rows, k)
    else:
        bits = from_padded16(raw, ty).reshape(rows, k)
    return decode_elements(bits, ty)


def _datapath_rows(m: int) -> np.ndarray:
    """Lane offset of each of the M rows in the cta_group::1 data-path layouts (9.7.16.10.5):
    Layout D (M = 128) row i in lane i; Layout F (M = 64) rows 16q..16q+15 in 16 lanes of quarter q."""
    i = np.arange(m)
    return i if m == 128 else 32 * (i // 16) + i % 16


def _tmem_a_cells(lane0: int, col0: int, rows: int, k: int, ty: str,
                  ins: A.Instruction | None) -> tuple[np.ndarray, np.ndarray]:
    """(rows, 1) lanes and (1, ncols) columns of operand A held in tensor memory. MODEL: row i is in
    the lane the data-path layout gives D's row i (Layout F "must use the same Tensor Memory lane
    alignment across matrices A, D", 9.7.16.10.5), its K elements packed little-endian into
    consecutive 32-bit columns from col0 (for .kind::mxf8f6f4 8-bit elements "contiguously packed in
    a 32-bit Tensor Memory word", 9.7.16.10.4.3)."""
    eb = _element_type(ty, ins)
    ncols = -(-k * eb // 4)
    return (lane0 + _datapath_rows(rows))[:, None], (col0 + np.arange(ncols))[None, :]


def tmem_operand(tm: TensorMemory, cta: int, lane0: int, col0: int, rows: int, k: int, ty: str,
                 ins: A.Instruction | None) -> np.ndarray:
    """(rows, k) values of operand A held in tensor memory (MODEL layout: `_tmem_a_cells`)."""
    eb = _element_type(ty, ins)
    lanes, cols = _tmem_a_cells(lane0, col0, rows, k, ty, ins)
    tm.check_access(np.asarray(cta), lanes, cols, "tcgen05.mma A operand", ins)
    words = tm.cells[cta][lanes, cols]  # (rows, ncols) uint32
    raw = words.astype("<u4").view(np.uint8).reshape(rows, cols.shape[1] * 4)[:, : k * eb]
    return _values(raw.reshape(rows, k, eb), ty)


def d_region(d: InstrDescriptor, lane0: int, col0: int) -> tuple[np.ndarray, np.ndarray]:
    """(M, N) lane and column indices of the accumulator D for cta_group::1 (data-path layouts of
    9.7.16.10.5: M = 128, Layout D, row i in lane i; M = 64, Layout F, rows 16q..16q+15 in 16 lanes
    of the q-th 32-lane quarter, lane lane0 + 32q + i%16 with lane0 the alignment 0 or 16). Column j
    of D is column col0 + j (32-bit D types)."""
    lanes = lane0 + _datapath_rows(d.m)[:, None]
    cols = col0 + np.arange(d.n)[None, :]
    return np.broadcast_to(lanes, (d.m, d.n)), np.broadcast_to(cols, (d.m, d.n))


@dataclass(frozen=True)
class ScaleOperands:
    """`[scale-A-tmem]`, `[scale-B-tmem]` of a block-scaled MMA (tcgen05.scales)."""

    a: ScaleMatrix
    b: ScaleMatrix


def scale_operands(idesc: InstrDescriptor, vec: ScaleVec, sfa_addr: int, sfb_addr: int,
                   ins: A.Instruction | None) -> ScaleOperands:
    """The two scale matrices of a block-scaled MMA, validated (IDs per vector size, lane 0)."""
    check_scale_ids(idesc, vec, ins)
    assert idesc.scale_type is not None
    scales.check_address(sfa_addr, "scale-A-tmem", ins)
    scales.check_address(sfb_addr, "scale-B-tmem", ins)
    return ScaleOperands(ScaleMatrix(sfa_addr, idesc.m, vec, idesc.sfa_id, idesc.scale_type),
                         ScaleMatrix(sfb_addr, idesc.n, vec, idesc.sfb_id, idesc.scale_type))


def check_modelled(idesc: InstrDescriptor, a_in_tmem: bool, ins: A.Instruction | None,
                   scaled: ScaleOperands | None = None) -> None:
    """Unsupported for the MMA forms this model does not cover (checked when the MMA is issued)."""
    if idesc.block_scaled != (scaled is not None):
        raise UndefinedBehavior(f"tcgen05.mma .kind::{idesc.kind}: .kind::mxf8f6f4/mxf4/mxf4nvf4 go with .block_scale "
                                "and its scale operands, and only they (PTX 9.7.16.10.9.1 syntax)", ins)
    if idesc.sparse:
        raise Unsupported("tcgen05.mma with the sparsity bit set in the instruction descriptor", ins)
    if idesc.dtype == "f16":
        raise Unsupported("tcgen05.mma with an f16 accumulator (D layout in tensor memory not modelled)", ins)
    for ty in (idesc.atype, idesc.btype):
        if operand_container(idesc.kind, ty) is Container.BYTE:
            _element_type(ty, ins)
    if a_in_tmem and operand_container(idesc.kind, idesc.atype) is not Container.BYTE:
        raise Unsupported(f"tcgen05.mma with a {idesc.atype} A operand in tensor memory (the sub-byte packing of "
                          "9.7.16.10.4.3/9.7.16.10.4.5 is given by figures only)", ins)
    if a_in_tmem and idesc.transpose_a:
        raise UndefinedBehavior("tcgen05.mma with A in tensor memory and the transpose-A bit set", ins)


def _d_origin(idesc: InstrDescriptor, d_addr: int, ins: A.Instruction | None) -> tuple[int, int]:
    """(lane, column) of D; the lane must be a data-path lane alignment of 9.7.16.10.5 for
    cta_group::1 without .ws: 0 for M = 128 (Layout D), 0 or 16 for M = 64 (Layout F, "1/2 datapath
    utilized": with alignment 16 the rows use the other 16 lanes of each 32-lane quarter)."""
    d_lane, d_col = d_addr >> 16, d_addr & 0xFFFF
    if d_lane != 0 and not (d_lane == 16 and idesc.m == 64):
        raise UndefinedBehavior(f"tcgen05.mma D address {d_addr:#x}: lane {d_lane} is not a data-path lane "
                                f"alignment for M = {idesc.m}, cta_group::1 (PTX 9.7.16.10.5)", ins)
    return d_lane, d_col


def _check_a_lane(idesc: InstrDescriptor, a: AOperand, d_lane: int, ins: A.Instruction | None) -> None:
    """A in tensor memory uses D's lane alignment (9.7.16.10.5)."""
    if a.in_tmem and (a.value >> 16) != d_lane:
        raise UndefinedBehavior(f"tcgen05.mma A in tensor memory at lane {a.value >> 16} but D at lane {d_lane}: "
                                "A and D must use the same tensor memory lane alignment (PTX 9.7.16.10.5)", ins)


@dataclass(frozen=True)
class ScaleCells:
    """The bytes of one scale matrix an MMA reads: bytes first..first+nbytes-1 of cells (lanes, cols)."""

    lanes: np.ndarray  # (4, rows)
    cols: np.ndarray
    first: int
    nbytes: int


@dataclass(frozen=True)
class MmaFootprint:
    """What one tcgen05.mma touches: CTA-relative shared-memory bytes of A and B (async proxy, exact
    bytes through the descriptors and swizzle) and tensor-memory cells of A, D and the scale factors."""

    a_smem: np.ndarray | None  # (bytes,) or None when A is in tensor memory
    b_smem: np.ndarray  # (bytes,)
    a_tmem: tuple[np.ndarray, np.ndarray] | None  # (lanes, cols) broadcastable
    d: tuple[np.ndarray, np.ndarray]  # (M, N) lanes, cols
    reads_d: bool  # enable-input-d: D is read before it is written
    scales: tuple[ScaleCells, ...] = ()  # scale_A, scale_B (block-scaled kinds)


#: `mma_footprint`'s shared-memory bytes of an operand, by everything they are a function of (the CTA's shared-memory
#: size, the descriptor's 64 bits, rows, K, type, major-ness, container): a K loop's MMAs cycle through a few stages'
#: descriptors, and listing the bytes (the descriptor's layout and swizzle, then np.unique) was about 0.6 s of the
#: sm_100a GEMMs' checks at the bench instance (704 operands, a dozen distinct). Read-only arrays.
_SMEM_BYTES: dict[tuple, np.ndarray] = {}
SMEM_BYTES_KEPT = 1024  # entries kept before the cache starts again


def mma_footprint(idesc: InstrDescriptor, d_addr: int, a: AOperand, b_desc: int, enable_input_d: bool,
                  smem_size: int, ins: A.Instruction | None, scaled: ScaleOperands | None = None) -> MmaFootprint:
    """The footprint of one dense cta_group::1 tcgen05.mma, every operand validated (descriptor
    fields, shared-memory bounds, D lane alignment); tensor-memory allocation is checked by the caller.
    Sub-byte operands of .kind::mxf8f6f4 report their whole 16-byte units (data and padding: the
    unit the canonical layout addresses)."""
    check_modelled(idesc, a.in_tmem, ins, scaled)
    m, n, k = idesc.m, idesc.n, idesc.k
    d_lane, d_col = _d_origin(idesc, d_addr, ins)

    def smem_bytes(raw: int, rows: int, ty: str, k_major: bool) -> np.ndarray:
        container = operand_container(idesc.kind, ty)
        key = (smem_size, raw & ((1 << 64) - 1), rows, k, ty, k_major, container)
        got = _SMEM_BYTES.get(key)
        if got is None:  # a refused operand raises here on every call (nothing is kept for it)
            addr = operand_addresses_checked(smem_size, decode_smem_desc(raw), rows, k, ty, k_major, ins, container)
            got = np.unique(addr.reshape(-1))
            got.flags.writeable = False
            if len(_SMEM_BYTES) >= SMEM_BYTES_KEPT:
                _SMEM_BYTES.clear()
            _SMEM_BYTES[key] = got
        return got

    _check_a_lane(idesc, a, d_lane, ins)
    a_smem = None if a.in_tmem else smem_bytes(a.value, m, idesc.atype, not idesc.transpose_a)
    a_tmem = _tmem_a_cells(a.value >> 16, a.value & 0xFFFF, m, k, idesc.atype, ins) if a.in_tmem else None
    b_smem = smem_bytes(b_desc, n, idesc.btype, not idesc.transpose_b)
    cells: tuple[ScaleCells, ...] = ()
    if scaled is not None:
        cells = tuple(ScaleCells(*s.cells(), s.first_byte, s.nbytes) for s in (scaled.a, scaled.b))
    return MmaFootprint(a_smem, b_smem, a_tmem, d_region(idesc, d_lane, d_col), enable_input_d, cells)


def matmul_t(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b.T in float64, the one matrix product of the model (module docstring), by numpy's own einsum loop
    rather than BLAS: OpenBLAS runs such a product (128 x 32 x 128) on worker threads that then spin, and on the
    loaded 2-core machine that cost 7-15 ms of process CPU per MMA (gemm_block_scaled sm_100a: 4-10 s of its
    check), where einsum takes about 0.2 ms on one thread. The model fixes no order of the sum."""
    return np.einsum("ik,jk->ij", a, b)


def mma(tm: TensorMemory, cta: int, smem: np.ndarray, d_addr: int, a: AOperand, b_desc: int,
        idesc: InstrDescriptor, enable_input_d: bool, ins: A.Instruction | None,
        scaled: ScaleOperands | None = None) -> None:
    """Perform one dense cta_group::1 `tcgen05.mma` (9.7.16.10.9): D = A x B (+ D), or for the
    block-scaled kinds D = (A * scale_A) x (B * scale_B) (+ D) (9.7.16.10.7; arithmetic: the module
    docstring's model, the scaled elements being exact in float64)."""
    check_modelled(idesc, a.in_tmem, ins, scaled)
    m, n, k = idesc.m, idesc.n, idesc.k
    d_lane, d_col = _d_origin(idesc, d_addr, ins)
    _check_a_lane(idesc, a, d_lane, ins)
    lanes, cols = d_region(idesc, d_lane, d_col)
    tm.check_access(np.asarray(cta), lanes, cols, "tcgen05.mma D", ins)
    if not a.in_tmem:
        av = smem_operand(smem, decode_smem_desc(a.value), m, k, idesc.atype, not idesc.transpose_a, ins,
                          operand_container(idesc.kind, idesc.atype))
    else:
        av = tmem_operand(tm, cta, a.value >> 16, a.value & 0xFFFF, m, k, idesc.atype, ins)
    bv = smem_operand(smem, decode_smem_desc(b_desc), n, k, idesc.btype, not idesc.transpose_b, ins,
                      operand_container(idesc.kind, idesc.btype))
    cells = tm.cells[cta]
    if idesc.kind == "i8":
        acc = av.astype(np.int64) @ bv.astype(np.int64).T
        if enable_input_d:
            acc = acc + cells[lanes, cols].view(np.int32).astype(np.int64)
        if idesc.saturate:
            acc = np.clip(acc, -(2**31), 2**31 - 1)
        cells[lanes, cols] = (acc & 0xFFFFFFFF).astype(np.uint32)
        return
    if scaled is not None:
        with np.errstate(invalid="ignore", over="ignore"):
            av = av * scales.scale_columns(scales.read_scales(tm, cta, scaled.a, "scale-A-tmem", ins), k)
            bv = bv * scales.scale_columns(scales.read_scales(tm, cta, scaled.b, "scale-B-tmem", ins), k)
    if idesc.negate_a:
        av = -av
    if idesc.negate_b:
        bv = -bv
    with np.errstate(invalid="ignore", over="ignore"):
        acc = matmul_t(av, bv)
        if enable_input_d:
            acc = acc + cells[lanes, cols].view(np.float32).astype(np.float64)
        cells[lanes, cols] = acc.astype(np.float32).view(np.uint32)


# ---------------------------------------------------------------------- tcgen05.cp (9.7.16.9.2)


class CpShape(Enum):
    """`.shape` of tcgen05.cp (9.7.16.2.3: lanes x bits per lane)."""

    S128x256b = "128x256b"
    S4x256b = "4x256b"
    S128x128b = "128x128b"
    S64x128b = "64x128b"
    S32x128b = "32x128b"

    @property
    def rows(self) -> int:
        return int(self.value.split("x")[0])

    @property
    def row_bytes(self) -> int:
        return int(self.value.split("x")[1][:-1]) // 8


class CpMulticast(Enum):
    """`.multicast` of tcgen05.cp: replication of the copied rows into the lanes of other warps."""

    NONE = ""
    WARPX2_02_13 = ".warpx2::02_13"
    WARPX2_01_23 = ".warpx2::01_23"
    WARPX4 = ".warpx4"


# the shape/multicast pairs the manual lists (9.7.16.9.2: ".64x128b requires .warpx2::02_13 or
# .warpx2::01_23", ".32x128b requires .warpx4"; the multicast qualifiers go with those shapes only)
_CP_FORMS = {(CpShape.S128x256b, CpMulticast.NONE), (CpShape.S4x256b, CpMulticast.NONE),
             (CpShape.S128x128b, CpMulticast.NONE), (CpShape.S64x128b, CpMulticast.WARPX2_02_13),
             (CpShape.S64x128b, CpMulticast.WARPX2_01_23), (CpShape.S32x128b, CpMulticast.WARPX4)}


@dataclass(frozen=True)
class CpLayout:
    """Which tensor-memory lanes receive the source rows of one tcgen05.cp.

    MODEL (the manual's text gives the shapes and the warp pairs; the lane of each row is drawn in
    its figures only; this follows CUTLASS's SM100_UTCCP copy traits, which agree with TVM's
    documentation of the same instruction): source row r (r < rows) of `row_bytes` bytes goes to
    lane `taddr.lane + lanes[r, j]` for every replica j, columns taddr.col .. +row_bytes/4-1:
      128x256b, 128x128b: lane r;  4x256b: lane 32 r (one row per warp quarter);
      64x128b.warpx2::02_13: lanes r and r + 64 (warps 0/2 get rows 0-31, warps 1/3 rows 32-63);
      64x128b.warpx2::01_23: lanes 64 (r // 32) + r % 32 and that + 32 (warps 0/1 rows 0-31, 2/3 32-63);
      32x128b.warpx4: lanes r + 32 j, j = 0..3 (every warp quarter gets all 32 rows).
    """

    shape: CpShape
    multicast: CpMulticast

    @property
    def rows(self) -> int:
        return self.shape.rows

    @property
    def row_bytes(self) -> int:
        return self.shape.row_bytes

    @property
    def columns(self) -> int:
        return self.row_bytes // 4

    def lanes(self) -> np.ndarray:
        """(rows, replicas) lane offsets from the destination address's lane."""
        r = np.arange(self.rows)[:, None]
        if self.multicast is CpMulticast.WARPX2_02_13:
            return r + np.array([0, 64])[None, :]
        if self.multicast is CpMulticast.WARPX2_01_23:
            return 64 * (r // 32) + r % 32 + np.array([0, 32])[None, :]
        if self.multicast is CpMulticast.WARPX4:
            return r + np.array([0, 32, 64, 96])[None, :]
        if self.shape is CpShape.S4x256b:
            return 32 * r
        return r


def cp_layout(shape: str, multicast: str, ins: A.Instruction | None) -> CpLayout:
    layout = CpLayout(CpShape(shape), CpMulticast(multicast))
    if (layout.shape, layout.multicast) not in _CP_FORMS:
        raise UndefinedBehavior(f"tcgen05.cp .{shape}{multicast or ' without .multicast'} is not a form the "
                                "manual lists (.64x128b requires .warpx2::02_13 or ::01_23, .32x128b requires "
                                ".warpx4, PTX 9.7.16.9.2)", ins)
    return layout


def cp_source_addresses(smem_size: int, d: SmemDescriptor, layout: CpLayout,
                        ins: A.Instruction | None) -> np.ndarray:
    """(rows, row_bytes) CTA-relative shared-memory byte addresses of the source matrix of a
    tcgen05.cp. MODEL: the descriptor describes the rows x row_bytes matrix in the canonical K-major
    layout of 9.7.16.3.3 with the element normalised to 128 bits (T = 1: 8-row x 16-byte core
    matrices, SBO between groups of 8 rows, LBO between the 16-byte chunks of a row without
    swizzling), as CUTLASS's UTCCP traits number it ([core_matrix_strided, core_matrix_leading])."""
    check_smem_desc(d, ins)
    chunks = operand_addresses(d, layout.rows, layout.row_bytes // 16, 16, k_major=True)  # (rows, chunks)
    addr = (chunks[..., None] + np.arange(16)).reshape(layout.rows, layout.row_bytes)
    last = int(addr.max()) + 1
    if int(addr.min()) < 0 or last > smem_size:
        raise UndefinedBehavior(f"tcgen05.cp source (descriptor {d.raw:#018x}) reaches shared memory byte "
                                f"{last - 1}, beyond the {smem_size} bytes of the CTA", ins)
    return addr


def cp_dest_cells(layout: CpLayout, taddr: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows, replicas, columns) lanes and columns written by a tcgen05.cp to `taddr`."""
    lane0, col0 = taddr >> 16, taddr & 0xFFFF
    lanes = (lane0 + layout.lanes())[:, :, None]
    cols = (col0 + np.arange(layout.columns))[None, None, :]
    return np.broadcast_to(lanes, lanes.shape[:2] + (layout.columns,)), \
        np.broadcast_to(cols, lanes.shape[:2] + (layout.columns,))


def cp(tm: TensorMemory, cta: int, smem: np.ndarray, taddr: int, d: SmemDescriptor, layout: CpLayout,
       ins: A.Instruction | None) -> None:
    """Perform one tcgen05.cp.cta_group::1 (no decompression): the source rows land in their lanes."""
    addr = cp_source_addresses(smem.size, d, layout, ins)
    lanes, cols = cp_dest_cells(layout, taddr)
    tm.check_access(np.asarray(cta), lanes, cols, "tcgen05.cp destination", ins)
    words = np.ascontiguousarray(smem[addr]).view("<u4").astype(np.uint32)  # (rows, columns)
    tm.cells[cta][lanes, cols] = np.broadcast_to(words[:, None, :], lanes.shape)


# ---------------------------------------------------------------------- tcgen05.shift (9.7.16.9.3)

SHIFT_ROWS = 32  # the matrix of one warp: 32 lanes, the lane of taddr aligned to 32
SHIFT_COLUMNS = 8  # 32-byte elements per row (.31x256b: 31 rows of 256 bits move)


def shift_cells(taddr: int) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """((lanes, cols) read, (lanes, cols) written), each (31, 8), of tcgen05.shift.down at `taddr`."""
    lane0, col0 = taddr >> 16, taddr & 0xFFFF
    src = (lane0 + np.arange(SHIFT_ROWS - 1))[:, None]
    cols = np.broadcast_to((col0 + np.arange(SHIFT_COLUMNS))[None, :], (SHIFT_ROWS - 1, SHIFT_COLUMNS))
    return (np.broadcast_to(src, cols.shape), cols), (np.broadcast_to(src + 1, cols.shape), cols)


def shift(tm: TensorMemory, cta: int, taddr: int, ins: A.Instruction | None) -> None:
    """Perform tcgen05.shift.cta_group::1.down: the 32-byte element of each row i < 31 moves to row
    i + 1 (9.7.16.9.3: "shifting of 32-byte elements downwards across all the rows, except the last,
    by one row"). MODEL: row 0, which no row moves into, keeps its contents (the shape .31x256b
    moves 31 rows; the manual says nothing more about the first row)."""
    (rl, rc), (wl, wc) = shift_cells(taddr)
    tm.check_access(np.asarray(cta), rl, rc, "tcgen05.shift", ins)
    tm.check_access(np.asarray(cta), wl, wc, "tcgen05.shift", ins)
    cells = tm.cells[cta]
    cells[wl, wc] = cells[rl, rc].copy()
