"""Check-mode overhead, session 40 (bench/results/i10edge-2026-12-06s40): the canonical state of a loop boundary
groups the race detector's kept reads by one packed key per read (loops `_group_ids`) instead of lexsorting a
stacked table of their fields, and packs its record tables row by row (`_packed_rows`) instead of stacking an
int64 table first; a check turns numpy's huge-page advice off once (symexec.check.alloc).

Against independent oracles: `_group_ids` gives two elements the same number exactly where their tuples of
fields are equal (Python tuples), the order `lexsort((last, ids))` gives is the one `lexsort` of the stacked
fields gives up to the order of whole groups (what the selections of _kept_records and _dominated_agent_reads
read: each group's latest element), and `_packed_rows` is `_packed` of the stacked int64 table."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from symexec.check import alloc
from symexec.check.loops import _group_ids, _packed, _packed_rows

_DTYPES = [np.int8, np.int32, np.int64, np.bool_]
#: small spans (packed as digits), spans past 2^31 (renumbered) and extremes (the key renumbered before overflow)
_VALUES = st.one_of(st.integers(-3, 3), st.integers(0, 300), st.sampled_from([-(1 << 62), 1 << 40, (1 << 63) - 1]))


@st.composite
def _fields(draw) -> list[np.ndarray]:
    n = draw(st.integers(0, 40))
    k = draw(st.integers(1, 14))
    out = []
    for _ in range(k):
        dt = np.dtype(draw(st.sampled_from(_DTYPES)))
        if dt == np.bool_:
            vals = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        else:
            info = np.iinfo(dt)
            vals = [min(max(v, info.min), info.max) for v in draw(st.lists(_VALUES, min_size=n, max_size=n))]
        out.append(np.array(vals, dt).reshape(n))
    return out


@settings(max_examples=200, deadline=None)
@given(_fields())
def test_group_ids_are_equal_exactly_where_every_field_is(fields: list[np.ndarray]) -> None:
    ids = _group_ids(fields)
    n = fields[0].size
    assert ids.shape == (n,) and ids.dtype == np.int64 and (ids >= 0).all()
    tuples = [tuple(int(f[i]) for f in fields) for i in range(n)]
    for i in range(n):
        for j in range(n):
            assert (ids[i] == ids[j]) == (tuples[i] == tuples[j])


@settings(max_examples=300, deadline=None)
@given(_fields(), st.data())
def test_grouped_order_picks_the_same_latest_element_as_a_lexsort_of_the_fields(fields, data) -> None:
    """_kept_records keeps, per group of equal fields, the element last by (epoch, position); so does the
    stacked lexsort it replaced."""
    n = fields[0].size
    epoch = np.array(data.draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)), np.int64).reshape(n)
    ids = _group_ids(fields)
    o = np.lexsort((epoch, ids))
    so = ids[o]
    new = o[np.r_[so[1:] != so[:-1], True]] if n else o
    stacked = np.stack([f.astype(np.int64) for f in fields])
    o2 = np.lexsort(np.vstack([epoch[None, :], stacked]))
    s2 = stacked[:, o2]
    old = o2[np.r_[(s2[:, 1:] != s2[:, :-1]).any(axis=0), True]] if n else o2
    assert sorted(new.tolist()) == sorted(old.tolist())
    latest = {}
    for i in range(n):  # the oracle: per tuple, the last index of the greatest epoch
        key = tuple(int(f[i]) for f in fields)
        if key not in latest or epoch[i] >= epoch[latest[key]]:
            latest[key] = i
    assert sorted(new.tolist()) == sorted(latest.values())


@settings(max_examples=300, deadline=None)
@given(_fields())
def test_packed_rows_is_packed_of_the_stacked_table(fields: list[np.ndarray]) -> None:
    assert _packed_rows(fields) == _packed(np.stack([f.astype(np.int64) for f in fields]))


def test_a_check_turns_numpy_huge_pages_off_once() -> None:
    got = alloc.no_huge_pages()
    assert alloc.no_huge_pages() is got  # once per process
    assert got is ("NUMPY_MADVISE_HUGEPAGE" not in alloc.os.environ)
    if got:
        from numpy._core.multiarray import _set_madvise_hugepage
        assert _set_madvise_hugepage(False) is False  # numpy's huge-page advice is off
