"""races.lexsort3 (one argsort of a combined key) against np.lexsort on random columns, ties included."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from symexec.check.races import lexsort3

_col = st.sampled_from([0, 3, 1000, 1 << 20, 1 << 40])


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 400), _col, _col, _col, st.integers(0, 2**32 - 1),
       st.sampled_from([np.int64, np.int32, np.uint64]))
def test_lexsort3_equals_lexsort(n: int, ra: int, rb: int, rc: int, seed: int, dtype) -> None:
    rng = np.random.default_rng(seed)
    lo = 0 if dtype is np.uint64 else -5
    a, b, c = (rng.integers(lo, max(lo + 1, r), n).astype(dtype) for r in (ra, rb, rc))
    assert np.array_equal(lexsort3(c, b, a), np.lexsort((c, b, a)))


def test_lexsort3_wide_keys_fall_back() -> None:
    a = np.array([1 << 62, 0, 1 << 61], np.int64)
    b = np.array([1 << 40, 1 << 40, 0], np.int64)
    c = np.array([2, 1, 0], np.int64)
    assert np.array_equal(lexsort3(c, b, a), np.lexsort((c, b, a)))
