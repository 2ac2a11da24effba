"""proofs.normal: Normalizer.congruence_pairs and equal_congruent (an element proved by the pairs of subterms where
its two terms differ, the same float operations above them).

The case is cross_entropy_zloss' gradient across builds: the label test `v == y` of one build is `(y - 96) - 4 == 0`
in the other, below the same fma, product and `valid` select. Checked against the terms' values (semantics.termeval,
bit-exact: an oracle that knows nothing of normal forms): equal_congruent says equal only where the two roots agree
at every input tried (labels around the tested column included), it proves the rewritten label test under random
contexts of float operations, and the seeded bug beside it (`(y - 95) - 4`, an off-by-one column) is never proved,
by it nor by the whole normal forms.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from proofs.normal import Normalizer
from semantics.termeval import evaluate
from semantics.terms import NO_MODS, PRED, Mods, Op, TermStore, bits_sort, float_sort, mods_id

F32 = float_sort("f32")
B32 = bits_sort(32)
RN = mods_id(Mods(rnd="rn"))
APPROX = mods_id(Mods(approx="approx"))
N_IN = 4
COL = 100  # the column whose label test is rewritten


def _mk(T: TermStore, op: Op, sort: int, aux: int, *kids: int) -> int:
    return int(T.make(op, sort, aux, [np.array([k]) for k in kids])[0])


def _f(T: TermStore, v: float) -> int:
    return int(T.const(F32, int(np.array([v], np.float32).view(np.uint32)[0]))[0])


def _i(T: TermStore, v: int) -> int:
    return int(T.const(B32, v & 0xFFFFFFFF)[0])


def _label(T: TermStore, y: int, rewritten: bool, delta: int = 96) -> int:
    """[v == y] as a float: `COL == y`, or `(y - delta) + (-4) == 0` (the other build's; delta 96 is the same test)."""
    if rewritten:
        k = _mk(T, Op.IADD, B32, NO_MODS, _mk(T, Op.ISUB, B32, NO_MODS, y, _i(T, delta)), _i(T, -4))
        p = _mk(T, Op.CMP, PRED, mods_id(Mods(cmp="eq")), k, _i(T, 0))
    else:
        p = _mk(T, Op.CMP, PRED, mods_id(Mods(cmp="eq")), _i(T, COL), y)
    return _mk(T, Op.ITE, F32, 0, p, _f(T, 1.0), _f(T, 0.0))


def _context(T: TermStore, ind: int, x: list[int], valid: int, steps: list[tuple[str, int]]) -> int:
    """ind inside the same float operations on both sides (each with a shared operand), then the `valid` select."""
    t = ind
    for op, j in steps:
        o = x[j % len(x)]
        if op == "fma":
            t = _mk(T, Op.FFMA, F32, RN, o, _mk(T, Op.FEX2, F32, APPROX, x[(j + 1) % len(x)]), _mk(T, Op.FNEG, F32, 0, t))
        elif op == "mul":
            t = _mk(T, Op.FMUL, F32, RN, t, o)
        elif op == "add":
            t = _mk(T, Op.FADD, F32, RN, o, t)
        elif op == "max":
            t = _mk(T, Op.FMAX, F32, 0, t, o)
        elif op == "ite":
            t = _mk(T, Op.ITE, F32, 0, valid, o, t)
    return _mk(T, Op.ITE, F32, 0, valid, t, _f(T, 0.0))


def _store() -> tuple[TermStore, list[int], int, int]:
    T = TermStore()
    x = T.input("x", np.arange(N_IN), F32).tolist()
    y = int(T.input("y", np.arange(1), B32)[0])
    valid = _mk(T, Op.CMP, PRED, mods_id(Mods(cmp="gt")), x[0], x[1])
    return T, x, y, valid


def _agree(T: TermStore, a: int, b: int, seed: int) -> bool:
    """a and b bit for bit equal at random x and at labels around COL (the oracle)."""
    rng = np.random.default_rng(seed)
    for label in (COL - 1, COL, COL + 1, int(rng.integers(-800, 6000))):
        xs = rng.uniform(-1, 1, N_IN).astype(np.float32)

        def leaf(buf: str, elems: np.ndarray, sort: int) -> np.ndarray:
            if buf == "y":
                return np.full(np.asarray(elems).size, label & 0xFFFFFFFF, np.uint64)
            return xs[np.asarray(elems)].view(np.uint32).astype(np.uint64)

        v = evaluate(T, np.array([a, b]), leaf)
        if v[0] != v[1]:
            return False
    return True


def test_the_pair_is_the_label_test_and_the_bug_beside_it_is_not_proved() -> None:
    T, x, y, valid = _store()
    steps = [("fma", 0), ("mul", 2)]
    c = _context(T, _label(T, y, False), x, valid, steps)
    r = _context(T, _label(T, y, True), x, valid, steps)
    bug = _context(T, _label(T, y, True, delta=95), x, valid, steps)
    N = Normalizer(T)
    assert N.congruence_pairs(c, r) == [(_label(T, y, False), _label(T, y, True))]  # the float selects of the tests
    assert N.equal_congruent([c, c], [r, bug]).tolist() == [True, False]
    assert _agree(T, c, r, 1) and not _agree(T, c, bug, 1)
    x_, y_ = N.of(np.array([c, bug]))
    assert not N.equal(x_, y_)  # nor by the whole normal forms


def test_roots_that_differ_at_the_top_are_not_walked() -> None:
    T, x, y, valid = _store()
    a = _mk(T, Op.FADD, F32, RN, x[0], x[1])
    b = _mk(T, Op.FMUL, F32, RN, x[0], x[1])
    N = Normalizer(T)
    assert N.congruence_pairs(a, b) is None  # the roots are the only pair: the whole forms decide
    assert N.equal_congruent([a], [b]).tolist() == [False]
    # a select whose condition differs is a pair itself (a predicate is never walked into)
    other = _mk(T, Op.CMP, PRED, mods_id(Mods(cmp="gt")), x[1], x[0])
    s1 = _mk(T, Op.FNEG, F32, 0, _mk(T, Op.ITE, F32, 0, valid, x[2], x[3]))
    s2 = _mk(T, Op.FNEG, F32, 0, _mk(T, Op.ITE, F32, 0, other, x[2], x[3]))
    assert N.congruence_pairs(s1, s2) == [(int(T.kids(s1)[0]), int(T.kids(s2)[0]))]
    assert not N.equal_congruent([s1], [s2])[0] and not _agree(T, s1, s2, 3)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["fma", "mul", "add", "max", "ite"]), st.integers(0, 10**6)),
                max_size=12), st.sampled_from([96, 96, 95, 97]), st.integers(0, 2**32 - 1))
def test_equal_congruent_proves_only_what_the_values_agree_on(steps, delta, seed) -> None:
    T, x, y, valid = _store()
    c = _context(T, _label(T, y, False), x, valid, steps)
    r = _context(T, _label(T, y, True, delta), x, valid, steps)
    N = Normalizer(T)
    proved = bool(N.equal_congruent([c], [r])[0])
    if proved:
        assert _agree(T, c, r, seed)
    assert proved == (delta == 96)  # the rewritten test is proved in every context; an off-by-one never
