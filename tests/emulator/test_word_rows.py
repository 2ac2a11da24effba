"""The word-at-a-time row gather/scatter of symexec.paged (gather_rows, scatter_rows_at, PagedArray.rows and
set_rows) against the plain 2-D byte indexing it replaces (flat[first[:, None] + arange(width)]): the same bytes
for aligned rows (the word path) and unaligned or odd-width ones (the fallback), on plain arrays, paged arrays
before and after dense(), with repeated rows (the last one wins) and pages made in the same order."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from symexec.paged import PAGE, PagedArray, from_array, gather_rows, scatter_rows_at, word_rows

WIDTHS = [1, 2, 3, 4, 6, 8, 12, 16, 32]


@st.composite
def accesses(draw):
    size = draw(st.integers(64, 6 * PAGE + 40))
    width = draw(st.sampled_from(WIDTHS))
    aligned = draw(st.booleans())
    k = draw(st.integers(0, 40))
    top = size - width
    if aligned:
        step = 1 << (width.bit_length() - 1) if width & (width - 1) == 0 else 1
        first = [draw(st.integers(0, top // step)) * step for _ in range(k)]
    else:
        first = [draw(st.integers(0, top)) for _ in range(k)]
    if k and draw(st.booleans()):  # repeated rows: the last write wins
        first += first[: draw(st.integers(1, k))]
    seed = draw(st.integers(0, 2**32 - 1))
    return size, width, np.asarray(first, dtype=np.int64), seed


def _plain(first: np.ndarray, width: int) -> np.ndarray:
    return first[:, None] + np.arange(width)


@settings(max_examples=300, deadline=None)
@given(accesses())
def test_plain_array_rows(acc) -> None:
    size, width, first, seed = acc
    rng = np.random.default_rng(seed)
    flat = rng.integers(0, 256, size, dtype=np.uint8)
    assert np.array_equal(gather_rows(flat, first, width), flat[_plain(first, width)])
    vals = rng.integers(0, 256, (first.size, width), dtype=np.uint8)
    a, b = flat.copy(), flat.copy()
    scatter_rows_at(a, first, vals)
    b[_plain(first, width)] = vals
    assert np.array_equal(a, b)


@settings(max_examples=300, deadline=None)
@given(accesses(), st.booleans())
def test_paged_rows(acc, dense) -> None:
    size, width, first, seed = acc
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, size, dtype=np.uint8)
    fast, plain = (PagedArray(size, np.uint8, from_array(raw)) for _ in range(2))
    if dense:
        fast.dense()
        plain.dense()
    assert np.array_equal(fast.rows(first, width), plain[_plain(first, width)])
    vals = rng.integers(0, 256, (first.size, width), dtype=np.uint8)
    fast.set_rows(first, vals)
    plain[_plain(first, width)] = vals
    assert fast.pages_touched == plain.pages_touched
    assert np.array_equal(fast.made_pages(), plain.made_pages())
    assert np.array_equal(fast.materialised(), plain.materialised())  # (slot order too)
    assert np.array_equal(fast.dense(), plain.dense())


def test_word_path_taken() -> None:
    """The cases the word path covers: naturally aligned power-of-two widths of uint8 rows."""
    first = np.array([0, 16, 256, 4096], dtype=np.int64)
    for w in (1, 2, 4, 8, 16):
        assert word_rows(np.dtype(np.uint8), first, w)
    assert not word_rows(np.dtype(np.uint8), first + 2, 4)
    assert not word_rows(np.dtype(np.uint8), first, 12)
    assert not word_rows(np.dtype(np.uint32), first, 4)
