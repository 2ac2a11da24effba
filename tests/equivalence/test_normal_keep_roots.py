"""The roots' normal forms a normalizer keeps for later comparisons in its store (Normalizer(keep_roots=True),
tests/test_equivalence_suite.py: one reference compared with several candidates). A kept normal form must stand
for the same real function as one made afresh: random DAGs of +, -, *, fma over input elements (shared
subterms, roots asked twice, in overlapping batches, with terms added to the store in between) are normalised
by a keeping normalizer and by a fresh one in a fresh store built the same way, and both forms are evaluated
at random rational inputs against the terms' values computed directly with Fractions."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proofs.normal import AtomKind, Inf, Normalizer, Rat
from proofs.prove import prove
from semantics.terms import Mods, Op, TermStore, float_sort, mods_id

F32 = float_sort("f32")
RN = mods_id(Mods(rnd="rn"))
N_INPUTS = 4
OPS = [Op.FADD, Op.FSUB, Op.FMUL, Op.FFMA]


def _build(T: TermStore, program: list[tuple[int, int, int, int]]) -> tuple[list[int], dict[int, int]]:
    """The program's nodes (op index, operand picks) over x[0..N_INPUTS); node ids and leaf id -> input index."""
    x = T.input("x", np.arange(N_INPUTS), F32).tolist()
    nodes = list(x)
    for op_i, a, b, c in program:
        op = OPS[op_i]
        kids = [nodes[a % len(nodes)], nodes[b % len(nodes)]] + ([nodes[c % len(nodes)]] if op is Op.FFMA else [])
        nodes.append(int(T.make(op, F32, RN, [np.array([k]) for k in kids])[0]))
    return nodes, {leaf: i for i, leaf in enumerate(x)}


def _value(T: TermStore, t: int, leaves: dict[int, int], xs: list[Fraction], memo: dict[int, Fraction]) -> Fraction:
    """The term's real value, from the store's nodes (the oracle: no normal form)."""
    if t in memo:
        return memo[t]
    if t in leaves:
        return xs[leaves[t]]
    op = Op(int(T.op[t]))
    k = [_value(T, int(c), leaves, xs, memo) for c in T.kids(t)]
    v = {Op.FADD: lambda: k[0] + k[1], Op.FSUB: lambda: k[0] - k[1], Op.FMUL: lambda: k[0] * k[1],
         Op.FFMA: lambda: k[0] * k[1] + k[2]}[op]()
    memo[t] = v
    return v


def _eval_nf(N: Normalizer, x, leaves: dict[int, int], xs: list[Fraction]) -> Fraction:
    assert isinstance(x, Rat)

    def poly(p: dict) -> Fraction:
        total = Fraction(0)
        for m, c in p.items():
            v = Fraction(c)
            for i in range(0, len(m), 2):
                v *= atom(m[i]) ** m[i + 1]
            total += v
        return total

    def atom(a: int) -> Fraction:
        kind, payload = N.atoms[a]
        if kind is AtomKind.LEAF:
            return xs[leaves[payload[0]]]
        assert kind is AtomKind.LET, kind
        return _eval_nf(N, N.key_nf[payload[0]], leaves, xs)

    return poly(x.num) / (poly(N.polys[x.den]) if x.den is not None else 1)


_program = st.lists(st.tuples(st.integers(0, len(OPS) - 1), st.integers(0, 63), st.integers(0, 63),
                              st.integers(0, 63)), min_size=3, max_size=40)


@settings(max_examples=120, deadline=None)
@given(first=_program, second=_program, picks=st.lists(st.integers(0, 200), min_size=1, max_size=12),
       seed=st.integers(0, 2**16))
def test_kept_root_forms_are_the_terms_real_values(first, second, picks, seed) -> None:
    T = TermStore()
    nodes, leaves = _build(T, first)
    N = Normalizer(T, keep_roots=True)
    roots_a = sorted({nodes[p % len(nodes)] for p in picks})
    forms_a = N.of(np.array(roots_a))
    for f in forms_a:  # a caller may change what it was given: the kept forms are not those objects
        if isinstance(f, Rat):
            f.num.clear()
    more, _ = _build(T, first + second)  # the store grows between the comparisons (a second candidate's run)
    roots_b = sorted({more[p % len(more)] for p in picks[::-1] + [len(more) - 1 - p for p in picks]})
    hits0, memo0 = N.root_hits, set(N.memo)
    forms_b = N.of(np.array(roots_b))
    assert N.root_hits - hits0 == len((set(roots_a) & set(roots_b)) - memo0)  # each kept root is reused
    fresh_T = TermStore()  # the same terms in a fresh store, a fresh normalizer (nothing kept)
    fresh_nodes, fresh_leaves = _build(fresh_T, first + second)
    fresh_of = dict(zip(more, fresh_nodes))
    fresh_N = Normalizer(fresh_T)
    fresh = fresh_N.of(np.array([fresh_of[r] for r in roots_b]))
    rng = np.random.default_rng(seed)
    for _ in range(2):
        xs = [Fraction(int(rng.integers(-9, 10)), int(rng.integers(1, 5))) for _ in range(N_INPUTS)]
        memo: dict[int, Fraction] = {}
        for r, kept, new in zip(roots_b, forms_b, fresh):
            want = _value(T, r, leaves, xs, memo)
            assert not isinstance(kept, Inf) and _eval_nf(N, kept, leaves, xs) == want
            assert _eval_nf(fresh_N, new, fresh_leaves, xs) == want
    for f in forms_b:  # what the hits handed out is changed too; asked again, the forms are still the values
        if isinstance(f, Rat):
            f.num.clear()
    memo = {}
    for r, again in zip(roots_b, N.of(np.array(roots_b))):
        assert _eval_nf(N, again, leaves, xs) == _value(T, r, leaves, xs, memo)


def test_a_normalizer_of_another_store_is_refused() -> None:
    with pytest.raises(ValueError, match="another store"):
        prove(None, None, TermStore(), normalizer=Normalizer(TermStore()))  # type: ignore[arg-type]
