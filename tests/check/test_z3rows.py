"""rows_formula (symexec/check/z3rows.py) builds the same Z3 term as z3py's operators would."""

from __future__ import annotations

import numpy as np
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from symexec.check.z3rows import rows_formula


def _by_operators(cols, rows):
    return z3.Or([z3.And([v == int(r[k]) for k, v in enumerate(cols)]) for r in rows])


@st.composite
def tables(draw):
    widths = draw(st.lists(st.sampled_from([1, 8, 16, 32, 64]), min_size=1, max_size=4))
    n = draw(st.integers(0, 12))
    rows = [[draw(st.integers(-(2**63), 2**64 - 1)) for _ in widths] for _ in range(n)]
    return widths, np.array(rows, dtype=object).reshape(n, len(widths))


@settings(max_examples=60, deadline=None)
@given(tables())
def test_the_same_term_as_the_operators(table):
    widths, rows = table
    cols = [z3.BitVec(f"r_c{i}", w) for i, w in enumerate(widths)]
    got = rows_formula(cols, rows)
    want = _by_operators(cols, rows)
    assert got.eq(want)
    s = z3.Solver()
    s.add(got != want)
    assert s.check() == z3.unsat


def test_a_row_is_a_model_and_another_point_is_not():
    cols = [z3.BitVec("m_q0", 32), z3.BitVec("m_t", 32), z3.BitVec("m_o", 64)]
    rows = np.array([[5, 0, 16], [5, 1, 20], [-1, 2, 24]], dtype=np.int64)
    f = rows_formula(cols, rows)
    for r in rows:
        s = z3.Solver()
        s.add(f, *[c == int(x) for c, x in zip(cols, r)])
        assert s.check() == z3.sat
    s = z3.Solver()
    s.add(f, cols[0] == 5, cols[1] == 2)  # thread 2 has q0 = 2^32 - 1, not 5
    assert s.check() == z3.unsat
    s = z3.Solver()
    s.add(f, cols[0] == 2**32 - 1)  # -1 taken modulo 2^32
    assert s.check() == z3.sat


def test_repeated_column_names_fall_back_to_the_operators():
    a = z3.BitVec("dup", 8)
    rows = np.array([[1, 2]])
    assert rows_formula([a, a], rows).eq(_by_operators([a, a], rows))
