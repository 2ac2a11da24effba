"""Arrays that cost what is touched.

A `PagedArray` is a flat array of `size` elements of one dtype, stored as fixed-size pages that are
created on first touch: reading or writing elements allocates (and fills) only their pages. A page's
first contents come from the array's `Fill`, a function of the page numbers, so a buffer of random
inputs, a shadow numbered by byte position or a constant never exists as a whole: a symbolic grid
that runs two CTAs of a 2^26-element kernel pays for the bytes those two CTAs touch.

Indexing is by integer arrays of element indices (any shape), as numpy fancy indexing: `a[idx]`
returns an array of idx's shape, `a[idx] = values` broadcasts values to it (the last of repeated
indices wins). `dense()` materialises every page once and returns a contiguous view; after it the
array is backed by that view, so writes through either are seen by both.

A `BufferSource` is what a launch gives for the initial bytes of a global buffer when it is not a
numpy array: its size and a `Fill` of byte pages (harness.inputs builds them for generated inputs
and sentinel-filled outputs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol, runtime_checkable

import numpy as np

PAGE_SHIFT = 8
PAGE = 1 << PAGE_SHIFT  # elements per page: small, so a strided tile touches little beyond itself
_MASK = PAGE - 1

#: First contents of pages: page numbers (n,) -> values (n, PAGE).
Fill = Callable[[np.ndarray], np.ndarray]


def constant(value, dtype) -> Fill:
    def fill(pages: np.ndarray) -> np.ndarray:
        return np.full((pages.size, PAGE), value, dtype=dtype)

    return fill


def element_indices(pages: np.ndarray) -> np.ndarray:
    """(n, PAGE) element indices of pages."""
    return (pages.astype(np.int64)[:, None] << PAGE_SHIFT) + np.arange(PAGE, dtype=np.int64)


def from_array(raw: np.ndarray) -> Fill:
    """Pages of a flat array (not copied: pages are copied from it on first touch); zeros past its end."""
    flat = np.ascontiguousarray(raw).reshape(-1)

    def fill(pages: np.ndarray) -> np.ndarray:
        idx = element_indices(pages)
        inside = idx < flat.size
        out = np.zeros(idx.shape, dtype=flat.dtype)
        out[inside] = flat[idx[inside]]
        return out

    return fill


CHUNK_SHIFT = 12  # pages per chunk of the page table


class _PageTable:
    """Page number -> slot in the pool (-1: not made), in chunks of 2^CHUNK_SHIFT pages made on
    first touch: a 2 GiB buffer of which two CTAs touch a few pages costs a few chunks, not a
    table of a million entries."""

    def __init__(self, npages: int) -> None:
        self.npages = npages
        self.chunks: dict[int, np.ndarray] = {}

    def __getitem__(self, pages: np.ndarray) -> np.ndarray:
        pages = np.asarray(pages, dtype=np.int64)
        hi = pages >> CHUNK_SHIFT
        if hi.size and (hi == hi.reshape(-1)[0]).all():  # one chunk: the common case
            ch = self.chunks.get(int(hi.reshape(-1)[0]))
            return np.full(pages.shape, -1, np.int32) if ch is None else ch[pages & ((1 << CHUNK_SHIFT) - 1)]
        out = np.full(pages.shape, -1, np.int32)
        for c in np.unique(hi).tolist():
            ch = self.chunks.get(c)
            if ch is not None:
                sel = hi == c
                out[sel] = ch[pages[sel] & ((1 << CHUNK_SHIFT) - 1)]
        return out

    def __setitem__(self, pages: np.ndarray, slots: np.ndarray) -> None:
        pages = np.asarray(pages, dtype=np.int64)
        slots = np.broadcast_to(np.asarray(slots, np.int32), pages.shape)
        hi = pages >> CHUNK_SHIFT
        for c in np.unique(hi).tolist():
            ch = self.chunks.get(c)
            if ch is None:
                ch = self.chunks[c] = np.full(1 << CHUNK_SHIFT, -1, np.int32)
            sel = hi == c
            ch[pages[sel] & ((1 << CHUNK_SHIFT) - 1)] = slots[sel]

    def made(self) -> np.ndarray:
        """The pages made, ascending."""
        out = [c * (1 << CHUNK_SHIFT) + np.nonzero(ch >= 0)[0] for c, ch in sorted(self.chunks.items())]
        return np.concatenate(out).astype(np.int64) if out else np.zeros(0, np.int64)


class PagedArray:
    def __init__(self, size: int, dtype, fill: Fill) -> None:
        self.size = int(size)
        self.dtype = np.dtype(dtype)
        self._fill = fill
        self._npages = -(-self.size // PAGE)
        self._slot = _PageTable(self._npages)
        self._pool = np.empty((0, PAGE), dtype=self.dtype)
        self._used = 0
        self._dense: np.ndarray | None = None

    @property
    def pages_touched(self) -> int:
        return self._used

    @property
    def nbytes_touched(self) -> int:
        return self._used * PAGE * self.dtype.itemsize

    def _slots(self, pages: np.ndarray) -> np.ndarray:
        slots = self._slot[pages]
        if (slots >= 0).all():
            return slots
        new = pages[slots < 0]
        if new.size > 1:
            new = new[np.r_[True, new[1:] != new[:-1]]]  # an access's pages come in runs: drop repeats first
            new = np.unique(new)
        need = self._used + new.size
        if need > self._pool.shape[0]:
            grown = np.empty((max(need, 2 * self._pool.shape[0], 16), PAGE), dtype=self.dtype)
            grown[: self._used] = self._pool[: self._used]
            self._pool = grown
        ids = np.arange(self._used, need, dtype=np.int32)
        self._pool[self._used:need] = self._fill(new)
        self._slot[new] = ids
        self._used = need
        return self._slot[pages]

    def __getitem__(self, idx) -> np.ndarray:
        if self._dense is not None:
            return self._dense[idx]
        idx = np.asarray(idx, dtype=np.int64)
        slots = self._slots(idx >> PAGE_SHIFT)  # first: it may grow the pool
        return self._pool[slots, idx & _MASK]

    def __setitem__(self, idx, values) -> None:
        if self._dense is not None:
            self._dense[idx] = values
            return
        idx = np.asarray(idx, dtype=np.int64)
        slots = self._slots(idx >> PAGE_SHIFT)
        self._pool[slots, idx & _MASK] = values

    def made_pages(self) -> np.ndarray:
        """Page numbers of the pages made so far, ascending."""
        if self._dense is not None:
            return np.arange(self._npages, dtype=np.int64)
        return self._slot.made()

    def materialised(self) -> np.ndarray:
        """The values of every element made so far (touched pages), flat, in no particular order."""
        if self._dense is not None:
            return self._dense
        return self._pool[:self._used].reshape(-1)

    def transform(self, fn: Callable[[np.ndarray], np.ndarray]) -> None:
        """Replace every made element x by fn(x) (elements not made yet keep their fill)."""
        if self._dense is not None:
            self._dense[:] = fn(self._dense)
        else:
            self._pool[:self._used] = fn(self._pool[:self._used])

    def dense(self) -> np.ndarray:
        """Every element, as one contiguous array that backs this one from now on."""
        if self._dense is None:
            pool = np.empty((self._npages, PAGE), dtype=self.dtype)
            have = self._slot.made()
            pool[have] = self._pool[self._slot[have]]
            rest = np.setdiff1d(np.arange(self._npages), have)
            if rest.size:
                pool[rest] = self._fill(rest)
            self._pool = pool
            self._slot = _PageTable(self._npages)
            self._slot[np.arange(self._npages)] = np.arange(self._npages, dtype=np.int32)
            self._used = self._npages
            self._dense = pool.reshape(-1)[: self.size]
        return self._dense


@runtime_checkable
class BufferSource(Protocol):
    """Initial bytes of a global buffer, made on demand (a launch's alternative to a numpy array)."""

    @property
    def nbytes(self) -> int: ...

    def fill(self, pages: np.ndarray) -> np.ndarray:
        """(n, PAGE) uint8: the bytes of byte pages `pages`."""
        ...


@dataclass(frozen=True)
class ZeroBytes:
    nbytes: int

    def fill(self, pages: np.ndarray) -> np.ndarray:
        return np.zeros((pages.size, PAGE), dtype=np.uint8)


def byte_fill(source) -> Fill:
    """The Fill of a buffer's bytes from a numpy array or a BufferSource."""
    if isinstance(source, np.ndarray):
        return from_array(np.ascontiguousarray(source).view(np.uint8).reshape(-1))
    return source.fill


__all__ = ["PagedArray", "PAGE", "PAGE_SHIFT", "Fill", "BufferSource", "ZeroBytes", "constant", "from_array",
           "element_indices", "byte_fill"]
