"""The normal form's expansion budget (proofs/normal.py, EXPAND_WORK_BUDGET): two forms that differ as
they stand and hold a let-atom inside a sqrt are compared by expanding it, and the expansion of a
power of a long sum multiplies out to millions of monomials (issue 11: the dion_update twin's
R against R / (||R|| + eps) ran out of memory this way). The budget counts the monomial products of
the nested expansions too; past it the element is a suspect (inconclusive), never verified, and
compare_outputs stops comparing once max_suspects elements are suspects."""

from __future__ import annotations

import resource

import numpy as np
import pytest

from proofs import normal
from proofs.equivalence import Outcome, Side, compare_outputs
from proofs.normal import Normalizer, TooBig
from semantics.terms import Mods, Op, TermStore, float_sort, mods_id
from symexec.check.termshadow import BufferOutput

F32 = float_sort("f32")
RN = mods_id(Mods(rnd="rn"))
N_SUM = 96  # s^4 of a 96-term sum: C(99, 4) = 3.8 M monomials, 14.6 M products for its third factor alone


def _mul(T: TermStore, a: int, b: int) -> int:
    return int(T.make(Op.FMUL, F32, RN, [np.array([a]), np.array([b])])[0])


def _add(T: TermStore, a: int, b: int) -> int:
    return int(T.make(Op.FADD, F32, RN, [np.array([a]), np.array([b])])[0])


def _sqrt_of_fourth_power_plus(T: TermStore, s: int, extra: int) -> int:
    """sqrt(s^4 + extra)."""
    s2 = _mul(T, s, s)
    r = T.make(Op.FSQRT, F32, mods_id(Mods()), [np.array([_add(T, _mul(T, s2, s2), extra)])])
    return int(r[0])


def _pairs(T: TermStore, count: int) -> tuple[np.ndarray, np.ndarray]:
    """`count` elements: sqrt(s^4 + x[k]) against sqrt(s^4 + y[k]) (s the sum of x, a let-atom):
    different functions, whose forms differ as they stand, so each comparison expands s."""
    x = T.input("x", np.arange(N_SUM), F32)
    y = T.input("y", np.arange(count), F32)
    s = int(x[0])
    for xi in x[1:].tolist():
        s = _add(T, s, xi)
    cand = np.array([_sqrt_of_fourth_power_plus(T, s, int(x[k])) for k in range(count)])
    ref = np.array([_sqrt_of_fourth_power_plus(T, s, int(y[k])) for k in range(count)])
    return cand, ref


def _side(label: str, terms: np.ndarray) -> Side:
    n = terms.size
    z = np.zeros(n, np.int64)
    out = BufferOutput("out", F32, np.arange(n), terms, z.copy(), z + 1, z.copy(), z.copy())
    return Side(label, {"out": out}, [], {}, {"x", "y"})


def test_a_comparison_past_the_nested_expansion_budget_is_too_big() -> None:
    T = TermStore()
    (a_term,), (b_term,) = _pairs(T, 1)
    N = Normalizer(T)
    a, b = N.of(np.array([a_term, b_term]))
    assert not N._equal(a, b)
    with pytest.raises(TooBig, match="monomial products"):
        N.equal(a, b)
    assert N.too_big == 1
    assert N._work is None  # the budget is off again outside the comparison


def test_compare_outputs_gives_up_as_suspects_within_a_memory_bound() -> None:
    T = TermStore()
    cand, ref = _pairs(T, 12)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    res = compare_outputs(T, _side("candidate", cand), _side("reference", ref), max_suspects=3)
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert res.outcome is Outcome.INCONCLUSIVE
    assert res.suspect_count == 12  # every element is not proved: 3 suspects, 9 not compared
    assert res.stats["too_big"] == 3 and res.stats["not_compared"] == 9
    assert len(res.suspects) == 3 and all("monomial products" in s.why for s in res.suspects)
    assert any("not compared" in n for n in res.notes)
    assert grown_mib < 1024  # the unbudgeted expansion of s^4 alone holds 3.8 M monomials (several GiB)


def test_the_expanded_cache_is_emptied_past_its_limit(monkeypatch) -> None:
    from tests.equivalence.test_normal_lets import _square_two_ways

    monkeypatch.setattr(normal, "EXPANDED_CACHE_LIMIT", 10)
    T = TermStore()
    pairs = [_square_two_ways(T, n) for n in (3 * normal.LET_LIMIT, 3 * normal.LET_LIMIT + 1)]
    N = Normalizer(T)
    for square, dot in pairs:  # equal only by expansion, each of a let-atom bigger than the cache limit
        a, b = N.of(np.array([square, dot]))
        assert not N._equal(a, b) and N.equal(a, b)
    assert N.cache_resets >= 1
    assert len(N._expanded) == 1  # emptied before the second let-atom's expansion went in


def test_compare_outputs_stops_at_the_time_limit() -> None:
    """The comparison of many elements looks at the run's deadline (--timeout) between chunks, as the
    normal form's expansions, the instance check and the counterexample search do: a run past it stops
    with TimeLimit (the CLI's inconclusive naming it), it does not go on comparing."""
    from symexec import TimeLimit, run_limits

    T = TermStore()
    x = [int(v) for v in T.input("x", np.arange(9), F32)]  # (a + b) + c against a + (b + c): normal forms
    cand = np.array([_add(T, _add(T, x[k], x[k + 1]), x[k + 2]) for k in range(7)])
    ref = np.array([_add(T, x[k], _add(T, x[k + 1], x[k + 2])) for k in range(7)])
    assert compare_outputs(T, _side("candidate", cand), _side("reference", ref)).outcome is Outcome.VERIFIED
    with run_limits(seconds=1e-9):
        with pytest.raises(TimeLimit, match="reached (checking which output elements are renamings|comparing the normal forms of out)"):
            compare_outputs(T, _side("candidate", cand), _side("reference", ref))
