"""Tensor memory, its column allocator and its byte addresses for observers (PTX 9.7.16.1, 9.7.16.7).

Per CTA the tensor memory is 128 lanes x 512 columns of 32-bit cells; an address is
`lane << 16 | column` (9.7.16.1.1). Allocation is by whole columns (all 128 lanes), in a
power-of-two number of columns between 32 and 512 (9.7.16.1.2, 9.7.16.7.1).

Observers (symexec.events) see tensor memory as one buffer per CTA batch,
`Buffer(MemSpace.TMEM, batch_id)`, of `n_ctas * CTA_BYTES` bytes: cell (lane, column) of CTA slot
`cta` is the four bytes at `cta * CTA_BYTES + (lane * 512 + column) * 4`, little-endian
(`byte_offsets`). Every access of the unit to tensor memory goes through this one mapping.

The allocator keeps, per CTA slot of a batch, which columns are allocated and checks the
lifecycle rules of 9.7.16.7.1 (PTX ISA 9.1 numbering; the text is that of
tcgen05.alloc/dealloc/relinquish_alloc_permit) as `UndefinedBehavior` at the instruction:

- nCols a power of two in [32, 512];
- no `tcgen05.alloc` after any thread of the CTA executed `tcgen05.relinquish_alloc_permit`
  ("it is illegal for a CTA to perform tcgen05.alloc after any of its constituent threads execute
  tcgen05.relinquish_alloc_permit");
- "the number of columns allocated should not increase between any two allocations in the
  execution order within the CTA";
- `tcgen05.dealloc`: "the operand taddr must point to a previous Tensor Memory allocation" (a
  second free of the same columns is therefore undefined). Freeing fewer or more columns than
  were allocated at `taddr` is `Unsupported`: the manual does not say what that does;
- every access (tcgen05.ld/st/mma/cp/shift) must be inside 128 lanes x 512 columns and in
  allocated columns (after a dealloc the columns are no longer allocated);
- everything allocated must be freed before the kernel exits (9.7.16.1.2; `leaks()`, reported
  when the unit is finished, see `tcgen05.unit.Tcgen05Unit.finish`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ptx_parser import ast as A
from semantics.errors import UndefinedBehavior
from symexec.events import Buffer, MemSpace

LANES = 128
COLUMNS = 512
MIN_COLS = 32
CELL_BYTES = 4
CTA_BYTES = LANES * COLUMNS * CELL_BYTES  # bytes of one CTA's tensor memory in the observers' buffer


def split_address(taddr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lane, column) of 32-bit tensor-memory addresses (9.7.16.1.1)."""
    t = np.asarray(taddr).astype(np.uint64) & np.uint64(0xFFFFFFFF)
    return (t >> np.uint64(16)).astype(np.int64), (t & np.uint64(0xFFFF)).astype(np.int64)


def valid_ncols(n: int) -> bool:
    return MIN_COLS <= n <= COLUMNS and n & (n - 1) == 0


def buffer(batch_id: int) -> Buffer:
    """The observers' buffer of a batch's tensor memory."""
    return Buffer(MemSpace.TMEM, batch_id)


def byte_offsets(cta: np.ndarray, lane: np.ndarray, col: np.ndarray, first: int = 0,
                 nbytes: int = CELL_BYTES) -> np.ndarray:
    """Flat byte offsets (..., nbytes) in the batch's tensor-memory buffer of bytes
    first..first+nbytes-1 of cells (cta, lane, col) (broadcast together)."""
    base = (np.asarray(cta, dtype=np.int64) * CTA_BYTES
            + (np.asarray(lane, dtype=np.int64) * COLUMNS + np.asarray(col, dtype=np.int64)) * CELL_BYTES + first)
    return base[..., None] + np.arange(nbytes, dtype=np.int64)


@dataclass
class CtaAllocator:
    """Column allocation state of one CTA (`owned`/`freed` are rows of TensorMemory's arrays)."""

    owned: np.ndarray  # (512,) bool: allocated now
    freed: np.ndarray  # (512,) bool: freed by a tcgen05.dealloc and not allocated since
    blocks: dict[int, int] = field(default_factory=dict)  # start column -> columns, as allocated
    last_size: int | None = None
    relinquished: bool = False
    alloc_sites: dict[int, A.Instruction | None] = field(default_factory=dict)

    def find(self, ncols: int) -> int | None:
        """First free block of `ncols` columns aligned to `ncols` (model: first fit, aligned)."""
        for start in range(0, COLUMNS, ncols):
            if not self.owned[start:start + ncols].any():
                return start
        return None


class TensorMemory:
    """Cells of every CTA slot of a batch: uint32 array (ctas, 128, 512), and the allocators."""

    def __init__(self, n_ctas: int) -> None:
        self.cells = np.zeros((n_ctas, LANES, COLUMNS), dtype=np.uint32)
        self.owned = np.zeros((n_ctas, COLUMNS), dtype=bool)
        self.freed = np.zeros((n_ctas, COLUMNS), dtype=bool)
        self.alloc = [CtaAllocator(self.owned[c], self.freed[c]) for c in range(n_ctas)]

    # ------------------------------------------------------------------ allocation
    def check_alloc(self, cta: int, ncols: int, ins: A.Instruction) -> None:
        a = self.alloc[cta]
        if not valid_ncols(ncols):
            raise UndefinedBehavior(f"tcgen05.alloc of {ncols} columns: must be a power of two in "
                                    f"[{MIN_COLS}, {COLUMNS}] (PTX 9.7.16.7.1)", ins)
        if a.relinquished:
            raise UndefinedBehavior("tcgen05.alloc after tcgen05.relinquish_alloc_permit in the same CTA "
                                    "(PTX 9.7.16.7.1)", ins)
        if a.last_size is not None and ncols > a.last_size:
            raise UndefinedBehavior(f"tcgen05.alloc of {ncols} columns after an allocation of {a.last_size}: "
                                    "the allocation size must not increase within a CTA (PTX 9.7.16.7.1)", ins)

    def try_alloc(self, cta: int, ncols: int, ins: A.Instruction) -> int | None:
        """Allocate; the base address, or None when the columns are not free yet (alloc blocks)."""
        self.check_alloc(cta, ncols, ins)
        a = self.alloc[cta]
        start = a.find(ncols)
        if start is None:
            return None
        a.owned[start:start + ncols] = True
        a.freed[start:start + ncols] = False
        a.blocks[start] = ncols
        a.last_size = ncols
        a.alloc_sites[start] = ins
        return start  # lane 0, column `start`

    def dealloc(self, cta: int, taddr: int, ncols: int, ins: A.Instruction) -> None:
        a = self.alloc[cta]
        lane, col = taddr >> 16, taddr & 0xFFFF
        if not valid_ncols(ncols):
            raise UndefinedBehavior(f"tcgen05.dealloc of {ncols} columns: must be a power of two in "
                                    f"[{MIN_COLS}, {COLUMNS}] (PTX 9.7.16.7.1)", ins)
        size = a.blocks.get(col) if lane == 0 else None
        if size is None:
            again = lane == 0 and col < COLUMNS and bool(a.freed[col])
            raise UndefinedBehavior(f"tcgen05.dealloc of address {taddr:#x}: it does not point to a live tensor "
                                    f"memory allocation{' (double free)' if again else ''} (PTX 9.7.16.7.1)", ins)
        if ncols != size:
            # a larger free releases columns nobody allocated; a smaller one (the manual defines no
            # partial deallocation) leaves the rest allocated when the kernel exits: undefined either way
            # (9.7.16.7.1: every allocation is freed by tcgen05.dealloc before exit)
            raise UndefinedBehavior(f"tcgen05.dealloc of {ncols} columns at column {col}, which was allocated with "
                                    f"{size} columns: {'columns that were never allocated are freed' if ncols > size else f'the other {size - ncols} columns stay allocated'} (PTX 9.7.16.7.1)", ins)
        a.owned[col:col + ncols] = False
        a.freed[col:col + ncols] = True
        del a.blocks[col]
        a.alloc_sites.pop(col, None)

    def relinquish(self, cta: int) -> None:
        self.alloc[cta].relinquished = True

    def leaks(self) -> list[tuple[int, int, int, A.Instruction | None]]:
        """(cta slot, start column, columns, alloc instruction) still allocated."""
        out = []
        for cta, a in enumerate(self.alloc):
            for start, n in sorted(a.blocks.items()):
                out.append((cta, start, n, a.alloc_sites.get(start)))
        return out

    # ------------------------------------------------------------------ access checks
    def check_access(self, cta: np.ndarray, lanes: np.ndarray, cols: np.ndarray, what: str,
                     ins: A.Instruction | None) -> None:
        """Every (cta, lane, column) must be inside tensor memory and in allocated columns."""
        shape = np.broadcast_shapes(np.shape(cta), np.shape(lanes), np.shape(cols))
        cta, lanes, cols = (np.broadcast_to(np.asarray(x), shape) for x in (cta, lanes, cols))
        bad = (lanes < 0) | (lanes >= LANES) | (cols < 0) | (cols >= COLUMNS)
        if bad.any():
            i = tuple(np.argwhere(bad)[0])
            raise UndefinedBehavior(f"{what}: tensor memory lane {int(lanes[i])} column {int(cols[i])} is outside "
                                    "128 lanes x 512 columns (PTX 9.7.16.1)", ins)
        ok = self.owned[cta, cols]
        if not ok.all():
            i = tuple(np.argwhere(~ok)[0])
            c, k = int(cta[i]), int(cols[i])
            why = "it was freed by tcgen05.dealloc" if self.freed[c, k] else "no tcgen05.alloc covers it"
            raise UndefinedBehavior(f"{what}: column {k} of tensor memory is not allocated (CTA slot {c}; {why}; "
                                    "PTX 9.7.16.1.2)", ins)
