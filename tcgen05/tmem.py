"""Tensor memory and its column allocator (PTX 9.7.16.1, 9.7.16.7.1).

Per CTA the tensor memory is 128 lanes x 512 columns of 32-bit cells; an address is
`lane << 16 | column` (9.7.16.1.1). Allocation is by whole columns (all 128 lanes), in a
power-of-two number of columns between 32 and 512 (9.7.16.1.2). The allocator keeps, per CTA
slot of a batch, which columns are allocated and the lifecycle facts the manual and
docs/ptx-facts.md state as rules:

- no `tcgen05.alloc` after `tcgen05.relinquish_alloc_permit` in the CTA;
- the size of an allocation must not increase from one allocation to the next in a CTA;
- `tcgen05.dealloc` frees allocated columns only (a second free is undefined);
- everything allocated must be freed before the kernel exits (reported by `leaks()`).

Violations raise `UndefinedBehavior` at the instruction (the leak check runs when the unit is
finished, see `tcgen05.unit.Tcgen05Unit.finish`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ptx_parser import ast as A
from semantics.errors import UndefinedBehavior

LANES = 128
COLUMNS = 512
MIN_COLS = 32


def split_address(taddr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lane, column) of 32-bit tensor-memory addresses (9.7.16.1.1)."""
    t = np.asarray(taddr).astype(np.uint64) & np.uint64(0xFFFFFFFF)
    return (t >> np.uint64(16)).astype(np.int64), (t & np.uint64(0xFFFF)).astype(np.int64)


def valid_ncols(n: int) -> bool:
    return MIN_COLS <= n <= COLUMNS and n & (n - 1) == 0


@dataclass
class CtaAllocator:
    """Column allocation state of one CTA."""

    owned: np.ndarray = field(default_factory=lambda: np.zeros(COLUMNS, dtype=bool))
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
        self.alloc = [CtaAllocator() for _ in range(n_ctas)]

    # ------------------------------------------------------------------ allocation
    def check_alloc(self, cta: int, ncols: int, ins: A.Instruction) -> None:
        a = self.alloc[cta]
        if not valid_ncols(ncols):
            raise UndefinedBehavior(f"tcgen05.alloc of {ncols} columns: must be a power of two in "
                                    f"[{MIN_COLS}, {COLUMNS}] (PTX 9.7.16.1.2)", ins)
        if a.relinquished:
            raise UndefinedBehavior("tcgen05.alloc after tcgen05.relinquish_alloc_permit in the same CTA "
                                    "(PTX 9.7.16.7.1)", ins)
        if a.last_size is not None and ncols > a.last_size:
            raise UndefinedBehavior(f"tcgen05.alloc of {ncols} columns after an allocation of {a.last_size}: "
                                    "the allocation size must not increase within a CTA", ins)

    def try_alloc(self, cta: int, ncols: int, ins: A.Instruction) -> int | None:
        """Allocate; the base address, or None when the columns are not free yet (alloc blocks)."""
        self.check_alloc(cta, ncols, ins)
        a = self.alloc[cta]
        start = a.find(ncols)
        if start is None:
            return None
        a.owned[start:start + ncols] = True
        a.blocks[start] = ncols
        a.last_size = ncols
        a.alloc_sites[start] = ins
        return start  # lane 0, column `start`

    def dealloc(self, cta: int, taddr: int, ncols: int, ins: A.Instruction) -> None:
        a = self.alloc[cta]
        lane, col = taddr >> 16, taddr & 0xFFFF
        if not valid_ncols(ncols):
            raise UndefinedBehavior(f"tcgen05.dealloc of {ncols} columns: must be a power of two in "
                                    f"[{MIN_COLS}, {COLUMNS}]", ins)
        if lane != 0 or col + ncols > COLUMNS:
            raise UndefinedBehavior(f"tcgen05.dealloc of address {taddr:#x} ({ncols} columns): not the start "
                                    "of an allocation", ins)
        span = a.owned[col:col + ncols]
        if not span.all():
            what = "double free" if not span.any() else "frees columns that are not allocated"
            raise UndefinedBehavior(f"tcgen05.dealloc of columns {col}..{col + ncols - 1}: {what} "
                                    "(PTX 9.7.16.7.1)", ins)
        a.owned[col:col + ncols] = False
        for start in [s for s, n in a.blocks.items() if s < col + ncols and col < s + n]:
            n = a.blocks.pop(start)
            a.alloc_sites.pop(start, None)
            # a partial free leaves the remaining columns of the block allocated
            if start < col:
                a.blocks[start] = col - start
            if start + n > col + ncols:
                a.blocks[col + ncols] = start + n - (col + ncols)

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
                     ins: A.Instruction) -> None:
        """Every (cta, lane, column) must be inside tensor memory and in allocated columns."""
        cta = np.broadcast_to(cta, np.broadcast(lanes, cols).shape)
        bad = (lanes < 0) | (lanes >= LANES) | (cols < 0) | (cols >= COLUMNS)
        if bad.any():
            i = np.argwhere(bad)[0]
            raise UndefinedBehavior(f"{what}: tensor memory lane {int(lanes[tuple(i)])} column "
                                    f"{int(cols[tuple(i)])} is outside 128 lanes x 512 columns", ins)
        owned = np.stack([a.owned for a in self.alloc])  # (ctas, 512)
        ok = owned[cta, cols]
        if not ok.all():
            i = tuple(np.argwhere(~ok)[0])
            raise UndefinedBehavior(f"{what}: column {int(cols[i])} of tensor memory is not allocated "
                                    f"(CTA slot {int(cta[i])})", ins)
