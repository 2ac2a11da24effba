"""A table of rows as a Z3 formula: (c0 = r[0] and c1 = r[1] ...) for some row r.

The symbolic grid's membership constraints (grid.py: a lane's constants form one of the recorded
rows) list up to thousands of rows of a few bit-vector columns. Built through z3py's operators,
each equality costs tens of microseconds of Python (argument coercion, reference counting), which
was most of the symbolic grid's proof time for the mma.sync GEMMs at their bench instances
(gemm_silu sm_80: 7.8 of 12 CPU seconds). The same formula is written as SMT-LIB text and parsed
once by Z3: the term is identical (Z3 hash-conses it; tests/check/test_z3rows.py checks `eq`)."""

from __future__ import annotations

import numpy as np
import z3


def rows_formula(cols: list[z3.BitVecRef], rows: np.ndarray) -> z3.BoolRef:
    """Or over the rows of And over the columns of cols[k] == rows[i, k] (taken modulo 2^width)."""
    names = [c.decl().name() for c in cols]
    if not cols or rows.shape[0] == 0 or len(set(names)) != len(names):
        return z3.Or([z3.And([v == int(r[k]) for k, v in enumerate(cols)]) for r in rows])
    widths = [c.size() for c in cols]
    mods = [1 << w for w in widths]
    terms = []
    for r in rows.tolist():
        eqs = " ".join(f"(= |{n}| (_ bv{int(x) % m} {w}))" for n, w, m, x in zip(names, widths, mods, r))
        terms.append(f"(and {eqs})")
    got = z3.parse_smt2_string(f"(assert (or {' '.join(terms)}))", decls=dict(zip(names, cols)),
                               ctx=cols[0].ctx)
    return got[0]
