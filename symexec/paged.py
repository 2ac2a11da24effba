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


@dataclass(frozen=True)
class _Constant:
    """The Fill of one value everywhere (PagedArray fills its pages with it in place: no page array made)."""

    value: object
    dtype: object

    def __call__(self, pages: np.ndarray) -> np.ndarray:
        return np.full((pages.size, PAGE), self.value, dtype=self.dtype)


def constant(value, dtype) -> Fill:
    return _Constant(value, dtype)


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


#: bytes -> the unsigned word of that width (a row of 16 or more bytes is read as 8-byte words)
_WORDS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_SHIFT = {1: 0, 2: 1, 4: 2, 8: 3}


def word_rows(dtype: np.dtype, first: np.ndarray, width: int) -> bool:
    """Whether rows of `width` bytes at byte offsets `first` may be moved as words: uint8 elements, a
    power-of-two width of at most a page, every offset a multiple of it (natural alignment: such a row
    lies inside one page and inside one word, or in whole 8-byte words)."""
    return (dtype == np.uint8 and 0 < width <= PAGE and not width & (width - 1)
            and not (first & (width - 1)).any())


def _words(flat: np.ndarray, width: int) -> tuple[np.ndarray, int, int]:
    """flat (1-D uint8) as words of min(width, 8) bytes (its tail past the last whole word left off),
    the shift from byte offsets to word indices and the words per row."""
    w = min(width, 8)
    n = flat.size - flat.size % w
    return flat[:n].view(_WORDS[w]), _SHIFT[w], width // w


def gather_rows(flat: np.ndarray, first: np.ndarray, width: int) -> np.ndarray:
    """(k, width): flat[first[:, None] + arange(width)] for a 1-D contiguous array; naturally aligned
    byte rows (word_rows) are read as words (a quarter to a seventh of the 2-D byte gather's cost);
    the same bytes either way."""
    if not (flat.ndim == 1 and flat.flags.c_contiguous and word_rows(flat.dtype, first, width)):
        return flat[first[:, None] + np.arange(width)]
    words, shift, per = _words(flat, width)
    idx = first >> shift
    if per > 1:
        idx = idx[:, None] + np.arange(per)
    return words[idx].view(np.uint8).reshape(-1, width)


def scatter_rows_at(flat: np.ndarray, first: np.ndarray, values: np.ndarray) -> None:
    """flat[first[:, None] + arange(width)] = values ((k, width)), as words where gather_rows reads
    words. Rows at the same offset: the last one wins either way (aligned rows of one width are the
    same or disjoint)."""
    width = values.shape[1]
    if not (flat.ndim == 1 and flat.flags.c_contiguous and values.dtype == flat.dtype
            and values.shape[0] == first.shape[0] and word_rows(flat.dtype, first, width)):
        flat[first[:, None] + np.arange(width)] = values
        return
    words, shift, per = _words(flat, width)
    src = np.ascontiguousarray(values).view(words.dtype)
    idx = first >> shift
    if per > 1:
        idx = idx[:, None] + np.arange(per)
    else:
        src = src.reshape(-1)
    words[idx] = src


CHUNK_SHIFT = 12  # pages per chunk of the page table
#: Arrays of at most this many pages also keep a direct table, page -> slot << PAGE_SHIFT (8 bytes a page:
#: 512 KiB for 16 M elements): a lookup is one gather and an or (PageLayout.locate).
DIRECT_PAGES = 1 << 16


def _chunks_of(hi: np.ndarray) -> list[int]:
    """The chunk numbers among `hi`, or a superset (a chunk absent from `hi` selects nothing): a few
    neighbouring chunks (a buffer of a few MiB read across a chunk boundary) are listed from the range,
    without np.unique's hashing of every index."""
    if not hi.size:
        return []
    lo, top = int(hi.min()), int(hi.max())
    return list(range(lo, top + 1)) if top - lo < 8 else np.unique(hi).tolist()


class _PageTable:
    """Page number -> slot in the pool (-1: not made), in chunks of 2^CHUNK_SHIFT pages made on
    first touch: a 2 GiB buffer of which two CTAs touch a few pages costs a few chunks, not a
    table of a million entries."""

    def __init__(self, npages: int) -> None:
        self.npages = npages
        self.chunks: dict[int, np.ndarray] = {}

    def __getitem__(self, pages: np.ndarray) -> np.ndarray:
        pages = np.asarray(pages, dtype=np.int64)
        if self.npages <= 1 << CHUNK_SHIFT and pages.size and pages.min() >= 0 and pages.max() < 1 << CHUNK_SHIFT:
            # an array of at most one chunk (a shared buffer, a small tensor), read inside it: no chunk numbers
            ch = self.chunks.get(0)
            return np.full(pages.shape, -1, np.int32) if ch is None else ch[pages]
        hi = pages >> CHUNK_SHIFT
        if hi.size and (hi == hi.reshape(-1)[0]).all():  # one chunk: the common case
            ch = self.chunks.get(int(hi.reshape(-1)[0]))
            return np.full(pages.shape, -1, np.int32) if ch is None else ch[pages & ((1 << CHUNK_SHIFT) - 1)]
        out = np.full(pages.shape, -1, np.int32)
        for c in _chunks_of(hi):
            ch = self.chunks.get(c)
            if ch is not None:
                sel = hi == c
                out[sel] = ch[pages[sel] & ((1 << CHUNK_SHIFT) - 1)]
        return out

    def __setitem__(self, pages: np.ndarray, slots: np.ndarray) -> None:
        pages = np.asarray(pages, dtype=np.int64)
        slots = np.broadcast_to(np.asarray(slots, np.int32), pages.shape)
        hi = pages >> CHUNK_SHIFT
        if not hi.size:
            return
        lo, top = int(hi.min()), int(hi.max())
        for c in ([lo] if lo == top else np.unique(hi).tolist()):
            ch = self.chunks.get(c)
            if ch is None:
                ch = self.chunks[c] = np.full(1 << CHUNK_SHIFT, -1, np.int32)
            sel = hi == c
            ch[pages[sel] & ((1 << CHUNK_SHIFT) - 1)] = slots[sel]

    def made(self) -> np.ndarray:
        """The pages made, ascending."""
        out = [c * (1 << CHUNK_SHIFT) + np.nonzero(ch >= 0)[0] for c, ch in sorted(self.chunks.items())]
        return np.concatenate(out).astype(np.int64) if out else np.zeros(0, np.int64)


class PageLayout:
    """Which pages exist and where (slot order), shared by the arrays that are always indexed together
    (a memory shadow's hash, position, taint and writer): an index array is translated to
    (slot, offset) once for all of them, and a page made for one is made for every one.

    The last translation is kept for the index array it was made from (the same object: accesses
    pass one `flat` array to every column; index arrays are never changed in place)."""

    def __init__(self, size: int) -> None:
        self.npages = -(-int(size) // PAGE)
        self.table = _PageTable(self.npages)
        # page -> slot << PAGE_SHIFT (-1: not made), beside `table` for arrays of few pages
        # (made at the first locate, before any page is: a layout never indexed, such as the race
        # detector's state of a buffer whose reads are all kept aside, costs no table)
        self._direct: np.ndarray | None = None
        self._direct_pages = self.npages <= DIRECT_PAGES
        self.pages = np.empty(0, np.int64)  # page number of each slot
        self.used = 0
        # slots [0, _tabled) are in `table`: pages made through the direct table enter it when the chunked
        # table is next read (_table), not at each _make (its chunk bookkeeping is a few numpy calls a make)
        self._tabled = 0
        self._last: tuple[object, np.ndarray] | None = None

    def _table(self) -> "_PageTable":
        """The chunked page table, with every page made so far."""
        if self._tabled < self.used:
            self.table[self.pages[self._tabled:self.used]] = np.arange(self._tabled, self.used, dtype=np.int32)
            self._tabled = self.used
        return self.table

    def locate(self, idx) -> np.ndarray:
        """Positions of element indices idx (any shape) in a pool of pages in slot order, flattened
        (slot * PAGE + offset), making the pages not made yet. One flat gather costs a quarter of
        numpy's two-array (slot, offset) indexing."""
        last = self._last
        if last is not None and last[0] is idx:
            return last[1]
        flat = np.asarray(idx, dtype=np.int64)
        pages = flat >> PAGE_SHIFT
        direct = self._direct
        if direct is None and self._direct_pages:
            direct = self._direct = np.full(self.npages, -1, np.int64)
        if direct is not None and pages.size and pages.min() >= 0:  # (a negative index: the chunked table's way)
            base = direct[pages]
            if base.size and base.min() < 0:
                self._make(pages, base >> PAGE_SHIFT, want_slots=False)
                base = direct[pages]
            base |= flat & _MASK
            if type(idx) is np.ndarray:
                self._last = (idx, base)
            return base
        slots = self._table()[pages]
        if not (slots >= 0).all():
            slots = self._make(pages, slots)
        out = (slots.astype(np.int64) << PAGE_SHIFT) | (flat & _MASK)
        if type(idx) is np.ndarray:
            self._last = (idx, out)
        return out

    def _make(self, pages: np.ndarray, slots: np.ndarray, want_slots: bool = True) -> np.ndarray | None:
        """Make the pages among `pages` whose slot is -1; their slots (None unless `want_slots`)."""
        new = pages[slots < 0].reshape(-1)
        if new.size > 1:
            keep = np.empty(new.size, bool)  # an access's pages come in runs: drop repeats first
            keep[0] = True
            np.not_equal(new[1:], new[:-1], out=keep[1:])
            new = new[keep]
            if new.size > 1 and not (new[1:] > new[:-1]).all():  # (ascending runs: already np.unique's)
                new = np.unique(new)
        need = self.used + new.size
        if need > self.pages.size:
            grown = np.empty(max(need, 2 * self.pages.size, 16), np.int64)
            grown[:self.used] = self.pages[:self.used]
            self.pages = grown
        self.pages[self.used:need] = new
        if self._direct is not None:  # pages outside [0, npages) live in the chunked table only: a negative page
            # written here would wrap onto the array's last pages and alias them
            inside = (new >= 0) & (new < self._direct.size)
            self._direct[new[inside]] = np.arange(self.used, need, dtype=np.int64)[inside] << PAGE_SHIFT
        self.used = need
        return self._table()[pages] if want_slots else None


class PagedArray:
    def __init__(self, size: int, dtype, fill: Fill, layout: PageLayout | None = None) -> None:
        self.size = int(size)
        self.dtype = np.dtype(dtype)
        self._fill = fill
        self._npages = -(-self.size // PAGE)
        self._layout = PageLayout(self.size) if layout is None else layout
        self._pool = np.empty((0, PAGE), dtype=self.dtype)
        self._filled = 0  # slots of the layout whose pages this array has filled
        self._dense: np.ndarray | None = None

    @property
    def pages_touched(self) -> int:
        return self._layout.used

    @property
    def nbytes_touched(self) -> int:
        return self._layout.used * PAGE * self.dtype.itemsize

    def _sync(self) -> None:
        """Fill the pages the layout made since this array last looked (here or through a sibling)."""
        lay = self._layout
        need = lay.used
        if need > self._pool.shape[0]:
            grown = np.empty((max(need, 2 * self._pool.shape[0], 16), PAGE), dtype=self.dtype)
            grown[: self._filled] = self._pool[: self._filled]
            self._pool = grown
        fill = self._fill
        if type(fill) is _Constant:  # the same elements as fill(pages), written in place
            self._pool[self._filled:need] = np.asarray(fill.value, dtype=fill.dtype)
        else:
            self._pool[self._filled:need] = fill(lay.pages[self._filled:need])
        self._filled = need

    def _locate(self, idx) -> np.ndarray:
        pos = self._layout.locate(idx)
        if self._filled < self._layout.used:
            self._sync()
        return pos

    def __getitem__(self, idx) -> np.ndarray:
        if self._dense is not None:
            return self._dense[idx]
        pos = self._locate(idx)  # first: it may grow the pool
        return self._pool.reshape(-1)[pos]

    def __setitem__(self, idx, values) -> None:
        if self._dense is not None:
            self._dense[idx] = values
            return
        pos = self._locate(idx)
        self._pool.reshape(-1)[pos] = values

    def rows(self, first: np.ndarray, width: int) -> np.ndarray:
        """(k, width) elements first[i] + j for j < width: self[first[:, None] + arange(width)], one
        word per row where `word_rows` can (the same elements either way)."""
        if self._dense is not None:
            return gather_rows(self._dense, first, width)
        if word_rows(self.dtype, first, width):
            pos = self._locate(first)  # a naturally aligned row never crosses a page: its first element's
            return gather_rows(self._pool.reshape(-1), pos, width)  # page makes all of it
        return self[first[:, None] + np.arange(width)]

    def set_rows(self, first: np.ndarray, values: np.ndarray) -> None:
        """self[first[:, None] + arange(width)] = values ((k, width)), one word per row where it can."""
        if self._dense is not None:
            scatter_rows_at(self._dense, first, values)
            return
        width = values.shape[1]
        if word_rows(self.dtype, first, width):
            pos = self._locate(first)
            scatter_rows_at(self._pool.reshape(-1), pos, values)
            return
        self[first[:, None] + np.arange(width)] = values

    def made_pages(self) -> np.ndarray:
        """Page numbers of the pages made so far, ascending."""
        if self._dense is not None:
            return np.arange(self._npages, dtype=np.int64)
        return np.sort(self._layout.pages[:self._layout.used])

    def materialised(self) -> np.ndarray:
        """The values of every element made so far (touched pages), flat, in no particular order."""
        if self._dense is not None:
            return self._dense
        self._sync()
        return self._pool[:self._filled].reshape(-1)

    def transform(self, fn: Callable[[np.ndarray], np.ndarray]) -> None:
        """Replace every made element x by fn(x) (elements not made yet keep their fill)."""
        if self._dense is not None:
            self._dense[:] = fn(self._dense)
        else:
            self._sync()
            self._pool[:self._filled] = fn(self._pool[:self._filled])

    def dense(self, whole_pages: bool = False) -> np.ndarray:
        """Every element, as one contiguous array that backs this one from now on. whole_pages: the
        array reaches to the end of the last page, as a paged array's indices do (the elements past
        `size` exist there too)."""
        if self._dense is None:
            self._sync()
            lay = self._layout
            pool = np.empty((self._npages, PAGE), dtype=self.dtype)
            if not lay.used and self._npages:  # nothing made yet (a small buffer's race detector state):
                pool[:] = self._fill(np.arange(self._npages))  # every page's fill at once
            else:
                have = lay.pages[:lay.used]
                pool[have] = self._pool[:lay.used]
                rest = np.setdiff1d(np.arange(self._npages), have)
                if rest.size:
                    pool[rest] = self._fill(rest)
            self._pool = pool
            self._dense = pool.reshape(-1) if whole_pages else pool.reshape(-1)[: self.size]
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


__all__ = ["PagedArray", "gather_rows", "scatter_rows_at", "word_rows", "PageLayout", "PAGE", "PAGE_SHIFT", "Fill", "BufferSource", "ZeroBytes", "constant", "from_array",
           "element_indices", "byte_fill"]
