"""proofs.normal._shared_children (which nodes the normalizer keeps as shared subterms) against a direct count:
an id is shared iff it occurs more than once in the child column, whatever the chunk size splits."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import proofs.normal as normal


@given(st.integers(1, 200), st.lists(st.integers(0, 10 ** 6), max_size=600), st.integers(1, 64))
def test_shared_children_is_more_than_one_occurrence(n: int, raw: list[int], chunk: int) -> None:
    kids = np.array([x % n for x in raw], np.int32)
    got = normal._shared_children(kids, n, chunk)
    assert got.dtype == np.bool_ and got.shape == (n,)
    assert (got == (np.bincount(kids, minlength=n) > 1)).all()
