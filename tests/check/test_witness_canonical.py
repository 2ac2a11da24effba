"""Canonical witnesses (canon.py, grid._canonical, paths._least_input): a finding of the symbolic grid names the
lexicographically least CTAs (then sizes) of the query's models, one a path condition allows the least input
bytes, whichever model Z3 happened to give, so the same kernel gives the same report in every run, in one process
or not.

The oracle is enumeration: every point of a small grid (and size range) tested against the same constraint in
Python, the least one in the same order (CTA x, y, z of each CTA in turn, then the sizes)."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from pathlib import Path

import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from symexec.check import grid
from symexec.check.sizes import SizeVar, SymInt
from volta.check_cli import check_file

M32 = (1 << 32) - 1


@dataclass
class _Sizes:  # the part of a SizeDomain `_canonical` reads
    vars: list[SizeVar]


@dataclass
class _Sp:  # the part of a grid._Space `_canonical` reads
    sizes: _Sizes | None
    env: dict[str, SymInt]


# a linear form over a point, wrapping at 32 bits like the bit-vector terms: (coefficients, constant)
_forms = st.tuples(st.lists(st.integers(0, 7), min_size=1, max_size=8), st.integers(0, 40))
_cmps = st.sampled_from(["ule", "uge", "ne", "odd"])


def _lin(coef: list[int], k: int, xs: list) -> object:
    return sum((c * x for c, x in zip(coef, xs)), k)


def _holds(cons, xs: list[int]) -> bool:
    for (coef, k), op, bound in cons:
        v = _lin(coef, k, xs) & M32
        if not {"ule": v <= bound, "uge": v >= bound, "ne": v != bound, "odd": v % 2 == 1}[op]:
            return False
    return True


def _z3_holds(cons, xs: list) -> list:
    out = []
    for (coef, k), op, bound in cons:
        v = _lin(coef, k, xs)
        out.append({"ule": z3.ULE(v, bound), "uge": z3.UGE(v, bound), "ne": v != bound,
                    "odd": z3.URem(v, 2) == 1}[op])
    return out


@settings(max_examples=150, deadline=None)
@given(grid_dims=st.tuples(st.integers(1, 6), st.integers(1, 3), st.integers(1, 2)), two=st.booleans(),
       size_range=st.one_of(st.none(), st.tuples(st.integers(-3, 5), st.integers(0, 9))),
       cons=st.lists(st.tuples(_forms, _cmps, st.integers(0, 30)), max_size=3))
def test_canonical_model_is_the_least_point(grid_dims, two, size_range, cons) -> None:
    ctas = [[z3.BitVec(f"t{j}_c{i}", 32) for i in range(3)] for j in range(2 if two else 1)]
    sizes, env, svars = None, {}, []
    if size_range is not None:
        lo, span = size_range
        sizes = _Sizes([SizeVar("n", lo, lo + span)])
        env = {"n": SymInt(z3.BitVec("t_n", 64))}
        svars = [env["n"].t]
    keys = [c[i] for c in ctas for i in range(3)] + svars
    s = z3.Solver()
    s.add([z3.ULT(c[i], grid_dims[i]) for c in ctas for i in range(3)])
    if sizes is not None:
        s.add(env["n"].t >= sizes.vars[0].lo, env["n"].t <= sizes.vars[0].hi)
    # the constraint reads the CTA ids and the size as unsigned 32-bit values (a size's low bits)
    s.add(_z3_holds(cons, [k if k.size() == 32 else z3.Extract(31, 0, k) for k in keys]))
    ranges = [range(grid_dims[i]) for _ in ctas for i in range(3)]
    if sizes is not None:
        ranges.append(range(sizes.vars[0].lo, sizes.vars[0].hi + 1))
    least = next((p for p in itertools.product(*ranges) if _holds(cons, [v & M32 for v in p])), None)
    if s.check() != z3.sat:
        assert least is None
        return
    mdl = grid._canonical(s, _Sp(sizes, env), ctas)
    got = tuple(mdl.eval(k, model_completion=True).as_long() for k in keys[:3 * len(ctas)])
    if sizes is not None:
        got += (mdl.eval(svars[0], model_completion=True).as_signed_long(),)
    assert got == least
    assert s.check() == z3.sat  # the solver is left as it was: its scope popped, the query itself unchanged
    assert len(s.assertions()) == (3 * len(ctas) + (2 if sizes is not None else 0) + len(cons))


def test_an_undecided_step_keeps_a_model_of_the_query(monkeypatch) -> None:
    """Out of steps (CANON_QUERIES 1): the witness is still a model of the query, not the least one claimed."""
    monkeypatch.setattr(grid, "CANON_QUERIES", 1)
    c = [z3.BitVec(f"u_c{i}", 32) for i in range(3)]
    s = z3.Solver()
    s.add(z3.ULT(c[0], 1000), z3.UGE(c[0], 500), c[1] == 0, c[2] == 0, z3.URem(c[0], 7) == 3)
    assert s.check() == z3.sat
    mdl = grid._canonical(s, _Sp(None, {}), [c])
    x = mdl.eval(c[0], model_completion=True).as_long()
    assert 500 <= x < 1000 and x % 7 == 3


REGRESSION = Path(__file__).parent.parent / "regression"
#: Regression cases whose reports differed between two runs in one process before witnesses were canonical
#: (bench/results/i10wit-2026-12-07s42/README.md): the CTAs (and so the regions and counts) a symbolic-grid witness
#: named, and in tcgen05_st_data_branch_direct_race the input a path condition's model gave (paths.py); stop 41 saw
#: loop_nested_inner_rows_middle_oob differ too (bench/results/i10ovh3-2026-12-07s41/README.md).
TWICE = ["grid_ctaid_entry_guard_entering_race", "grid_ctaid_long_ctas_race", "grid_row_pitch_next_row_load_race",
         "grid_slices_nested_loop_pitch_short_race", "loop_nested_outer_rows_overlap_race",
         "loop_nested_inner_rows_middle_oob", "loop_sext_round_trip_late_race", "tcgen05_st_data_branch_direct_race",
         "tma_store_ctaid_boxes_overlap_race"]


def _report(name: str) -> str:
    r = check_file(REGRESSION / f"{name}.ptx").to_json()
    r.get("stats", {}).pop("seconds", None)
    return json.dumps(r, sort_keys=True, default=str)


@pytest.mark.parametrize("name", TWICE)
def test_two_runs_in_one_process_give_the_same_report(name: str) -> None:
    first = _report(name)
    assert json.loads(first)["findings"]  # a finding, with a witness from Z3
    assert _report(name) == first
