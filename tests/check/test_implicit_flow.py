"""Tracker.taint_lanes: registers a data-dependent choice may or may not write (a false guard, a
branch around a register-only region). On the chosen lanes they take the choice's taint and numbers
that are a function of what the choice reads; other lanes keep theirs. Equal numbers must keep
meaning equal values for every input: lanes whose inputs to the choice are equal get one number
(a replicated reduction stays one value), lanes whose inputs differ get different numbers, and
nothing gets the number it had before the choice."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from symexec.check.shadow import DATA, Choice, Tracker

N = 8


@given(st.lists(st.integers(0, 2), min_size=N, max_size=N), st.lists(st.booleans(), min_size=N, max_size=N),
       st.booleans())
def test_numbers_follow_the_choices_inputs(a_vals: list[int], chosen: list[bool], special: bool) -> None:
    tr = Tracker(N)
    regs = {"%a": np.array(a_vals, np.uint64), "%r": np.zeros(N, np.uint64)}
    before = tr.number_of("%r", regs).copy()
    lanes = np.array(chosen)
    tr.taint_lanes(["%r"], int(DATA), lanes, regs, Choice(7, frozenset({"%a", "%r"}), special))
    h, t = tr.reg_hash["%r"], tr.reg_taint["%r"]
    assert (t[lanes] == DATA).all() and (t[~lanes] == 0).all()
    assert (h[~lanes] == before[~lanes]).all()
    assert not (h[lanes] == before[lanes]).any()
    for i in np.nonzero(lanes)[0]:
        for j in np.nonzero(lanes)[0]:
            same_inputs = a_vals[i] == a_vals[j] and (i == j or not special)
            assert (h[i] == h[j]) == same_inputs, (i, j)


def test_other_choices_and_registers_number_apart() -> None:
    tr = Tracker(N)
    regs = {"%a": np.zeros(N, np.uint64), "%r": np.zeros(N, np.uint64), "%s": np.zeros(N, np.uint64)}
    every = np.ones(N, bool)
    tr.taint_lanes(["%r", "%s"], int(DATA), every, regs, Choice(3, frozenset({"%a"}), False))
    first_r, first_s = tr.reg_hash["%r"].copy(), tr.reg_hash["%s"]
    assert len(set(first_r.tolist())) == 1 and (first_r != first_s).all()
    tr2 = Tracker(N)
    tr2.taint_lanes(["%r"], int(DATA), every, regs, Choice(4, frozenset({"%a"}), False))
    assert (tr2.reg_hash["%r"] != first_r).all()
