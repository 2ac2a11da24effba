"""symexec.check.races.sorted_unique is np.unique of integer arrays (races._gc's record and node ids)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from symexec.check.races import sorted_unique


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=200), st.integers(1, 50))
def test_sorted_unique_is_np_unique(values: list[int], spread: int) -> None:
    a = np.array(values, np.int64)
    for x in (a, a % spread, np.repeat(a, 3)):
        got, want = sorted_unique(x), np.unique(x)
        assert got.dtype == want.dtype and np.array_equal(got, want)
