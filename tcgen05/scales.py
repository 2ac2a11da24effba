"""Scale-factor matrices of block-scaled `tcgen05.mma` in tensor memory (PTX 9.7.16.10.7).

Documented (text of 9.7.16.10.7 to 9.7.16.10.7.3 and the tcgen05.mma description):

- the operation is `(A * scale_A) * (B * scale_B) + D`; scale_A is M x SFA_N: "each row of matrix A
  is divided into SFA_N number of chunks and each chunk of a row is multiplied with the
  corresponding element in the SF_A of the same row", and scale_B the same for the columns of B
  (the rows of the N x K operand). SFA_N is the scale vector size 1, 2 or 4 (`ScaleVec`), so a
  chunk is K / vec consecutive K elements (32, 32 and 16 for the three kinds' K = 32, 64, 64);
- "Scale factors for A and B matrices need to be duplicated to all 32 lane partitions of tensor
  memory";
- the scale factor ID of the instruction descriptor selects sub-columns: scale_vec::1X "one scale
  factor per row ... provided in 1-byte aligned sub-column of the Tensor Memory. SFA_ID specifies
  the byte offset in the Tensor Memory word"; 2X: "2-byte aligned sub-column ... the half word
  offset"; 4X: "4-byte aligned sub-column ... The SFA_ID value must be 0" (the same for B);
- `[scale-A-tmem]` / `[scale-B-tmem]` "specify the base address" of the two matrices.

MODEL (which lanes and columns hold which rows is drawn in Figures 231-242 only). The layout
implemented is CUTLASS's documented layout of the same matrices in tensor memory, which agrees
with every other source found:

- CUTLASS's CuTe layout of the tensor-memory scale factors (printed in Colfax Research, "CUTLASS
  Tutorial: Hardware-supported Block Scaling with NVIDIA Blackwell GPUs"), in CuTe's byte units
  of tensor memory (lane stride 4 * 65536, column stride 4): tCtSFA =
  `((((32,4),4),(32,1)),1,4) : ((((262144,4),8388608),(0,0)),0,1)` for mxf8 with M = 128: row
  `r = r0 + 32 r1` in lane r0 and column r1, a broadcast mode of 4 at a stride of 32 lanes (the four
  duplicates), consecutive MMAs' scales (the IDs 0..3) in consecutive bytes of the same word; the
  same for B with N / 32 columns;
- the copy CUTLASS and ThunderKittens use to place them, `tcgen05.cp.32x128b.warpx4` (32 rows of
  16 bytes, each row replicated to lane r of all four 32-lane quarters) from a shared-memory tile
  in which row r's word is at byte `(r % 32) * 16 + (r / 32) * 4` (ThunderKittens' mxfp8 kernels,
  citing the manual's Figure 231).

So: the scale of row r (r < M for A, r < N for B) and chunk c (c < vec) is byte `ID + c` of the
cell at lane `L + 32 q + r % 32`, for every quarter q = 0..3, and column `C + r // 32`, (L, C)
the lane and column of the scale address; the chunks of one row occupy consecutive bytes from
the ID (CUTLASS's K stride of one byte within the word, 2X / 4X).

Not documented, and how the model handles it:
- which duplicate the tensor core reads: the model reads all four and requires them to agree
  (`UndefinedBehavior` otherwise: the manual requires the duplication); observers are told of
  reads of every duplicate's selected bytes;
- a scale address whose lane is not 0 (the figures start at lane 0; four quarters of duplicates
  fill all 128 lanes): `Unsupported`;
- a ue4m3 byte with bit 7 set (5.2.3 defines a 7-bit format "having MSB bit padded with zero"):
  `Unsupported`.

The suite contract `gemm_block_scaled` (Triton 3.9's `tl.dot_scaled`, which writes the scales
with `tcgen05.st.32x32b.x4` from all four warps and selects them with IDs 0..3) checks this
interpretation against a numpy reference that knows nothing of it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ptx_parser import ast as A
from semantics.errors import UndefinedBehavior, Unsupported
from semantics.mxformats import ScaleType, decode_scale_checked

from .descriptors import ScaleVec
from .tmem import TensorMemory

QUARTERS = 4  # 32-lane partitions of tensor memory, each holding a duplicate
QUARTER_LANES = 32


@dataclass(frozen=True)
class ScaleMatrix:
    """One scale-factor operand of a block-scaled MMA: its tensor-memory base address, the rows it
    scales (M for A, N for B), the scale vector size, the data ID and the element type."""

    taddr: int
    rows: int
    vec: ScaleVec
    sf_id: int
    stype: ScaleType

    @property
    def lane0(self) -> int:
        return self.taddr >> 16

    @property
    def col0(self) -> int:
        return self.taddr & 0xFFFF

    @property
    def columns(self) -> int:
        return -(-self.rows // QUARTER_LANES)

    @property
    def first_byte(self) -> int:
        return self.sf_id

    @property
    def nbytes(self) -> int:
        return self.vec.value

    def cells(self) -> tuple[np.ndarray, np.ndarray]:
        """(4, rows) lanes and columns of row r's cell in duplicate q (module docstring, MODEL)."""
        r = np.arange(self.rows)[None, :]
        q = np.arange(QUARTERS)[:, None]
        lanes = self.lane0 + QUARTER_LANES * q + r % QUARTER_LANES
        cols = np.broadcast_to(self.col0 + r // QUARTER_LANES, lanes.shape)
        return lanes, cols


def check_address(taddr: int, what: str, ins: A.Instruction | None) -> None:
    """The lane of a scale address must be 0 (module docstring)."""
    if taddr >> 16:
        raise Unsupported(f"tcgen05.mma {what} at tensor memory lane {taddr >> 16}: the scale factor layouts of "
                          "PTX 9.7.16.10.7 are drawn from lane 0 (their four duplicates fill all 128 lanes)", ins)


def scale_bytes(tm: TensorMemory, cta: int, sm: ScaleMatrix, what: str, ins: A.Instruction | None) -> np.ndarray:
    """(rows, vec) scale-factor bytes, the four duplicates checked equal."""
    lanes, cols = sm.cells()
    tm.check_access(np.asarray(cta), lanes, cols, f"tcgen05.mma {what}", ins)
    words = tm.cells[cta][lanes, cols].astype(np.uint64)  # (4, rows)
    shifts = np.uint64(8) * (np.uint64(sm.first_byte) + np.arange(sm.nbytes, dtype=np.uint64))
    b = ((words[..., None] >> shifts) & np.uint64(0xFF)).astype(np.uint8)  # (4, rows, vec)
    differ = (b != b[:1]).any(axis=2)
    if differ.any():
        q, r = (int(x) for x in np.argwhere(differ)[0])
        raise UndefinedBehavior(f"tcgen05.mma {what}: the scale factor of row {r} in the tensor memory lanes "
                                f"{32 * q}..{32 * q + 31} (lane {int(lanes[q, r])}, column {int(cols[q, r])}) differs "
                                f"from lanes 0..31 (lane {int(lanes[0, r])}): \"Scale factors ... need to be duplicated "
                                "to all 32 lane partitions of tensor memory\" (PTX 9.7.16.10.7)", ins)
    return b[0]


def read_scales(tm: TensorMemory, cta: int, sm: ScaleMatrix, what: str, ins: A.Instruction | None) -> np.ndarray:
    """(rows, vec) float64 scale factors of one matrix (module docstring)."""
    return decode_scale_checked(scale_bytes(tm, cta, sm, what, ins), sm.stype, f"tcgen05.mma {what}", ins)


def scale_columns(values: np.ndarray, k: int) -> np.ndarray:
    """(rows, vec) scale factors -> (rows, k): chunk c covers K elements c*K/vec .. (c+1)*K/vec - 1."""
    return np.repeat(values, k // values.shape[1], axis=1)
