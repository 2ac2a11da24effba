"""hb.distinct and timeline._runs (shortcuts for one value / one run of consecutive rows) against the
np.unique forms they replace, on random and on constant / consecutive arrays."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from symexec.check.hb import distinct
from symexec.check.timeline import _runs


def _runs_unique(rows: np.ndarray) -> np.ndarray:
    v = np.unique(np.asarray(rows, dtype=np.int64))
    if v.size == 0:
        return np.zeros((0, 2), np.int64)
    cuts = np.nonzero(np.diff(v) != 1)[0] + 1
    starts = np.concatenate(([0], cuts))
    ends = np.concatenate((cuts - 1, [v.size - 1]))
    return np.stack([v[starts], v[ends]], axis=1)


_arrays = st.one_of(
    st.lists(st.integers(-3, 40), max_size=50).map(lambda v: np.array(v, np.int64)),
    st.tuples(st.integers(-5, 5), st.integers(0, 40)).map(lambda t: np.full(t[1], t[0], np.int64)),
    st.tuples(st.integers(-5, 500), st.integers(0, 300)).map(lambda t: np.arange(t[0], t[0] + t[1])),
    st.tuples(st.integers(0, 500), st.integers(0, 300)).map(lambda t: np.arange(t[0], t[0] + t[1])[::-1].copy()))


@settings(max_examples=400, deadline=None)
@given(_arrays, st.sampled_from([np.int64, np.int32]))
def test_distinct_is_unique(a: np.ndarray, dtype) -> None:
    a = a.astype(dtype)
    got, want = distinct(a), np.unique(a)
    assert got.dtype == want.dtype and np.array_equal(got, want)


@settings(max_examples=400, deadline=None)
@given(_arrays)
def test_runs_are_unique_runs(a: np.ndarray) -> None:
    got, want = _runs(a), _runs_unique(a)
    assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)
