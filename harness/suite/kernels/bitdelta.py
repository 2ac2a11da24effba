"""BitDelta: a fine-tune's weight delta stored as 1-bit signs with one scale per output row.

BitDelta (Liu et al., 2024) approximates ``W_finetuned - W_base`` by ``scale[o] * sign[o, k]``.
At decode time the delta's contribution to one activation vector is a GEMV over packed signs:

    y[o] = scale[o] * sum_k s[o, k] * x[k],    s[o, k] = +1 if bit k of row o is set else -1

Packing: row ``o`` holds ``KB = ceil(K / 8)`` bytes; sign ``k`` is bit ``k % 8`` (least significant
bit first) of byte ``packed[o, k // 8]``.  Bits past ``K`` in the last byte are padding and must
not contribute.  Only the delta product is computed (the base-weight GEMV is an ordinary one).

Each program owns ``BLOCK_O`` output rows and walks ``K`` in tiles of ``BLOCK_B`` bytes
(``8 * BLOCK_B`` activations): the byte tile is expanded to ``[BLOCK_O, BLOCK_B, 8]`` bits that
select ``+x`` or ``-x`` from an activation tile of the same trailing shape, accumulated
elementwise in fp32 and reduced once after the loop.
"""
from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from harness.contract import Contract, Scalar, Tensor, cdiv


@triton.jit
def bitdelta_gemv_kernel(packed, scale, x, y, O, K, KB,
                         BLOCK_O: tl.constexpr, BLOCK_B: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_O + tl.arange(0, BLOCK_O)                     # [BO]
    row_ok = rows < O
    byte = tl.arange(0, BLOCK_B)                                      # [BB]
    bit = tl.arange(0, 8)                                             # [8]
    acc = tl.zeros((BLOCK_O, BLOCK_B, 8), dtype=tl.float32)          # reduced once, at the end
    for b0 in range(0, KB, BLOCK_B):
        bcol = b0 + byte                                              # byte index within a row
        wmask = row_ok[:, None] & (bcol[None, :] < KB)
        words = tl.load(packed + rows[:, None] * KB + bcol[None, :], mask=wmask, other=0)
        words = words.to(tl.int32)
        kidx = bcol[:, None] * 8 + bit[None, :]                       # [BB, 8] activation index
        xv = tl.load(x + kidx, mask=kidx < K, other=0.0).to(tl.float32)
        bits = (words[:, :, None] >> bit[None, None, :]) & 1          # [BO, BB, 8]
        acc += tl.where(bits != 0, xv[None, :, :], -xv[None, :, :])   # +x for a set bit, -x else
    dot = tl.sum(tl.sum(acc, axis=2), axis=1)                         # [BO]
    sc = tl.load(scale + rows, mask=row_ok, other=0.0).to(tl.float32)
    tl.store(y + rows, (sc * dot).to(y.dtype.element_ty), mask=row_ok)


def unpack_signs(packed: np.ndarray, k: int) -> np.ndarray:
    """``[O, ceil(K/8)]`` bytes -> ``[O, K]`` float64 signs in {-1, +1} (LSB-first per byte)."""
    bits = np.unpackbits(np.asarray(packed, dtype=np.uint8), axis=-1, bitorder="little")
    return 2.0 * bits[..., :k].astype(np.float64) - 1.0


def reference(packed: np.ndarray, scale: np.ndarray, x: np.ndarray,
              O: int, K: int, KB: int) -> dict[str, np.ndarray]:
    signs = unpack_signs(packed, K)                                   # [O, K]
    y = scale.astype(np.float64) * (signs @ x.astype(np.float64))
    return {"y": y}


def _blocks(d: dict[str, int]) -> tuple[int, int]:
    """(BLOCK_O, BLOCK_B): 8 rows x 128 bytes, 4 warps (best of a sweep on an H200: 21 us for
    4096 x 11008, against 106 us for 64 x 32), for every instance (the verify build is the timed one)."""
    return 8, 128

CONTRACT = Contract(
    name="bitdelta",
    description="BitDelta GEMV: y[o] = scale[o] * sum_k sign[o,k] * x[k], signs packed 8 per byte",
    kernel=bitdelta_gemv_kernel,
    args=[
        Tensor("packed", "u8", ("O", "KB"), role="in"),
        Tensor("scale", "fp16", ("O",), role="in"),
        Tensor("x", "fp16", ("K",), role="in"),
        Tensor("y", "fp16", ("O",), role="out"),
        Scalar("O", "i32", value="O"),
        Scalar("K", "i32", value="K"),
        Scalar("KB", "i32", value="KB"),
    ],
    constexprs={"BLOCK_O": lambda d: _blocks(d)[0], "BLOCK_B": lambda d: _blocks(d)[1]},
    grid=lambda d: (cdiv(d["O"], _blocks(d)[0]), 1, 1),
    num_warps=4, num_stages=1,
    reference=reference,
    # verify: O, K and KB are multiples of 16 at the bench, so they are here too (the same
    # tt.divisibility, hence the same PTX); that makes K a multiple of 128, so no padding bits in
    # the last byte, and O a multiple of BLOCK_O, so no ragged row block.  2 row blocks; KB = 144
    # bytes in 2 K-steps of 128, the second ragged (16 bytes).
    # bench: a 4096 x 11008 projection (Llama-7B MLP down-projection shape).
    instances={"verify": {"O": 16, "K": 1152, "KB": 144},
               "bench": {"O": 4096, "K": 11008, "KB": 1376}},
    min_arch=80,
    # fp32 accumulation of +-x over K terms: error <= K * 2^-24 * sum|x| relative to
    # scale * sum|x| (the reference on |inputs|, hence scale_by_abs_reference), plus the fp16
    # rounding of y (2^-11 relative); atol covers fp16 subnormal outputs (spacing 6e-8).
    tolerance={"fp16": (2e-3, 1e-6)},
    scale_by_abs_reference=True,
    input_domain={"packed": None, "scale": None, "x": None},
)
