"""Builder.concat of constant parts: folded into one CONST where the result fits its 64-bit aux
column, kept as a CONCAT node of the constants beyond (a 128-bit concatenation of two 64-bit
constants raised OverflowError when it was folded)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from semantics.symbolic import Builder
from semantics.terms import Op, TermStore, bits_sort

WIDTHS = st.sampled_from([8, 16, 32, 64])


@given(WIDTHS, WIDTHS, st.data())
def test_constant_parts_fold_exactly_where_they_fit(w1: int, w2: int, data) -> None:
    hi = data.draw(st.integers(0, (1 << w1) - 1))
    lo = data.draw(st.integers(0, (1 << w2) - 1))
    T = TermStore()
    a, b = T.const(bits_sort(w1), np.uint64(hi)), T.const(bits_sort(w2), np.uint64(lo))
    r = int(Builder(T, 1).concat([a, b])[0])
    assert T.sort_of(r).width == w1 + w2
    if w1 + w2 <= 64:
        assert int(T.op[r]) == Op.CONST
        assert int(T.aux[r]) & ((1 << (w1 + w2)) - 1) == (hi << w2) | lo
    else:  # the parts, high first, under one CONCAT
        assert int(T.op[r]) == Op.CONCAT
        assert [int(T.aux[k]) & ((1 << w) - 1) for k, w in zip(T.kids(r), (w1, w2))] == [hi, lo]
