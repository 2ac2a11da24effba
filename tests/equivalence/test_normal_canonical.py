"""proofs.normal: the rules behind ce_zloss_smem_row's faster proof (bench/results/i11ce2-2026-12-06s36).

- Normalizer._equal_canonical (tried first by Normalizer.equal): every atom renamed by _canon (an exp2 atom's
  polynomial renamed atom by atom, any other atom holding let-atoms by its expansion's key).
  Checked against the terms' values at random points (semantics.termeval, bit-exact f32, an oracle that knows
  nothing of normal forms): renamed forms are equal exactly when the two terms agree everywhere (up to f32
  rounding), and never where the previous procedures (_equal_atoms_expanded, the whole expansion) say not equal.
- A select with a zero else-branch, ite(c, x, 0), is x [c] directly: the same form (items, order, denominator)
  as 0 + (x - 0) [c], the general formula, and a new one (not x's own polynomial).
- mul_poly of a polynomial and one indicator (Normalizer._times_indicator) gives what the general product loop
  gives, items, order and coefficient types, for monomials each rule of _merge_exp2 reads and for those none does.
- _linear_eq is kept per (a, b): the same answer as solving again, solved once.
- [x == a] [x == b] = 0 for a != b (mod 2^w) by _indicator_algebra's word sets (the removed
  _disjoint_equalities' rule), [x == a]^2 = [x == a], another term's equality is kept.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from proofs.normal import EXPAND_BUDGET, EXPAND_WORK_BUDGET, LET_LIMIT, AtomKind, Normalizer, Rat, _mono_mul
from semantics.termeval import evaluate
from semantics.terms import PRED, Mods, Op, TermStore, bits_sort, float_sort, mods_id

F32 = float_sort("f32")
W = bits_sort(32)
RN = mods_id(Mods(rnd="rn"))
APPROX = mods_id(Mods(approx="approx"))
N_ELEMS = 4 * (LET_LIMIT + 1)
OFFSETS = [-2.25, -1.75, -1.25, -0.75, -0.25, 0.25, 0.75, 1.25]


def _bin(T: TermStore, op: Op, a: int, b: int) -> int:
    return int(T.make(op, F32, RN, [np.array([a]), np.array([b])])[0])


def _un(T: TermStore, op: Op, a: int) -> int:
    return int(T.make(op, F32, APPROX, [np.array([a])])[0])


def _tree(T: TermStore, leaves: list[int], cuts: list[int], tag: int) -> int:
    """The sum of `leaves` by a binary tree split where `cuts` says; a partial sum of more than LET_LIMIT
    elements gets a second user (a let-atom)."""
    if len(leaves) == 1:
        return leaves[0]
    k = 1 + cuts[len(leaves) % len(cuts)] % (len(leaves) - 1)
    s = _bin(T, Op.FADD, _tree(T, leaves[:k], cuts, tag), _tree(T, leaves[k:], cuts, tag))
    if len(leaves) > LET_LIMIT:
        _bin(T, Op.FMUL, s, tag)
    return s


def _element(T: TermStore, kind: str, s: int, z: int, c: int, d: int, w: int) -> int:
    """A value of the row sum s: exp2(z - lg2 s) c + lg2(s) d (the gradient's shape: an exp2 atom whose
    polynomial holds log2 of a let-atom), or s > w ? z c : d (an indicator whose polynomial holds one)."""
    if kind == "exp2":
        lg = _un(T, Op.FLG2, s)
        e = _un(T, Op.FEX2, _bin(T, Op.FSUB, z, lg))
        return _bin(T, Op.FADD, _bin(T, Op.FMUL, e, c), _bin(T, Op.FMUL, lg, d))
    p = int(T.make(Op.CMP, PRED, mods_id(Mods(cmp="gt")), [np.array([s]), np.array([w])])[0])
    return int(T.make(Op.ITE, F32, 0, [np.array([p]), np.array([_bin(T, Op.FMUL, z, c)]), np.array([d])])[0])


def _agree(T: TermStore, a: int, b: int, seed: int) -> bool:
    """Do terms a and b give the same f32 values (relative 1e-4) at random inputs? x in {1, 1.5, 2} (its sums
    are exact in f32 in any order), z in [0.5, 1], c and d in [2, 3], and w the sum of x plus each of OFFSETS
    twice (halfway between sums: no tie, and a sum one element away, 1 to 4 off, is on w's other side)."""
    rng = np.random.default_rng(seed)
    for off in OFFSETS + OFFSETS:
        x = rng.choice(np.array([1.0, 1.5, 2.0], np.float32), N_ELEMS)
        wv = np.array([rng.uniform(0.5, 1), rng.uniform(2, 3), rng.uniform(2, 3), float(x.sum()) + off], np.float32)
        bufs = {"x": x, "w": wv}

        def leaf(buf: str, elems: np.ndarray, sort: int) -> np.ndarray:
            return bufs[buf][np.asarray(elems)].view(np.uint32).astype(np.uint64)

        va, vb = evaluate(T, np.array([a, b]), leaf).astype(np.uint32).view(np.float32).astype(np.float64)
        if abs(va - vb) > 1e-4 * max(abs(va), abs(vb)):
            return False
    return True


def _canonical(N: Normalizer, a, b) -> bool:
    N._budget, N._work = EXPAND_BUDGET, EXPAND_WORK_BUDGET
    try:
        return N._equal_canonical(a, b)
    finally:
        N._work = None


def _previous(N: Normalizer, a, b) -> bool:
    """The procedures equal() used before the canonical renaming: _equal_atoms_expanded, then the expansion."""
    N._budget, N._work = EXPAND_BUDGET, EXPAND_WORK_BUDGET
    try:
        if N._equal_atoms_expanded(a, b):
            return True
        N._budget, N._work = EXPAND_BUDGET, EXPAND_WORK_BUDGET
        return N._equal(N.expand(a), N.expand(b))
    finally:
        N._work = None


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_renamed_lets_are_equal_iff_the_terms_agree(data) -> None:
    T = TermStore()
    x = T.input("x", np.arange(N_ELEMS), F32).tolist()
    z, c, d, w = T.input("w", np.arange(4), F32).tolist()
    kind = data.draw(st.sampled_from(["exp2", "select"]))
    other = [x[i] for i in data.draw(st.permutations(range(N_ELEMS)))]
    change = data.draw(st.sampled_from(["same", "same", "drop", "twice", "scaled", "swapped"]))
    if change == "drop":
        other = other[1:]
    elif change == "twice":
        other = other + other[:1]
    elif change == "scaled":
        other = other[:-1] + [_bin(T, Op.FMUL, other[-1], c)]
    cuts = data.draw(st.lists(st.integers(0, 1000), min_size=3, max_size=8))
    s1 = _tree(T, x, [5, 11, 3], z)
    s2 = _tree(T, other, cuts, d)
    one = _element(T, kind, s1, z, c, d, w)
    two = _element(T, kind, s2, d, c, z, w) if change == "swapped" else _element(T, kind, s2, z, c, d, w)
    N = Normalizer(T)
    a, b = N.of(np.array([one, two]))
    renamed = _canonical(N, a, b)
    assert renamed == _agree(T, one, two, data.draw(st.integers(0, 2**32 - 1)))
    assert renamed == (change == "same")  # complete for equal sums by different trees
    assert not renamed or _previous(N, a, b)  # never equal where the previous procedures say not
    assert N.equal(a, b) == (change == "same")


def test_equal_proves_the_gradient_shape_without_expanding_its_exp2_atoms(monkeypatch) -> None:
    """equal() decides the ce_zloss gradient's shape by the renaming alone: neither _equal_atoms_expanded
    nor expand() runs, and the elements' exp2 atoms are not expanded (only the log2 of the row sum)."""
    T = TermStore()
    x = T.input("x", np.arange(N_ELEMS), F32).tolist()
    z, c, d, w = T.input("w", np.arange(4), F32).tolist()
    s1 = _tree(T, x, [5, 11, 3], z)
    s2 = _tree(T, x[::-1], [2, 7], d)
    N = Normalizer(T)
    a, b = N.of(np.array([_element(T, "exp2", s1, z, c, d, w), _element(T, "exp2", s2, z, c, d, w)]))
    assert not N._equal(a, b)

    def refuse(*_):
        raise AssertionError("not reached")

    whole = []
    real = N.expand
    monkeypatch.setattr(N, "_equal_atoms_expanded", refuse)
    monkeypatch.setattr(N, "expand", lambda f: whole.append(f is a or f is b) or real(f))
    assert N.equal(a, b)
    assert whole and not any(whole)  # the row sums' let-atoms expanded, never the two forms whole
    assert not any(N.atoms[k][0] is AtomKind.EXP2 for k in N._expanded)


def test_a_let_atom_and_its_flat_sum_inside_a_log_fall_back_to_the_expansion() -> None:
    """log2 of a let-atom against log2 of a partly flattened sum: the renaming names both by their
    expansions (one key), so the canonical comparison still proves it; a different sum stays not equal."""
    T = TermStore()
    x = T.input("x", np.arange(N_ELEMS), F32).tolist()
    z, c, d, w = T.input("w", np.arange(4), F32).tolist()
    s1 = _tree(T, x, [5, 11, 3], z)
    s2 = _tree(T, x[::-1], [1, 1, 1], d)  # a chain: the let-atoms stay nested
    s3 = _tree(T, x[1:], [1, 1, 1], d)
    N = Normalizer(T)
    a, b, e = N.of(np.array([_element(T, "exp2", s, z, c, d, w) for s in (s1, s2, s3)]))
    assert _canonical(N, a, b) and N.equal(a, b)
    assert not _canonical(N, a, e) and not N.equal(a, e)


# ---------------------------------------------------------------- selects with a zero else-branch

def _labels(T: TermStore) -> tuple[np.ndarray, np.ndarray]:
    return T.input("labels", np.arange(2), W), T.input("z", np.arange(6), F32)


def _c(T: TermStore, v: int) -> np.ndarray:
    return T.const(W, np.uint64(v % (1 << 32)))


def _cmp(T: TermStore, a: np.ndarray, b: np.ndarray, cmp: str, signed: bool = True) -> np.ndarray:
    return T.make(Op.CMP, PRED, mods_id(Mods(cmp=cmp, signed=signed)), [a, b])


def _general_ite(N: Normalizer, cond: tuple, then, other):
    """Normalizer.ite's general formula: other + (then - other) [cond]."""
    return N.add(other, N.mul(N.sub(then, other), N.indicator(cond)), own_x=False)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_a_select_of_zero_is_the_general_formula(data) -> None:
    T = TermStore()
    y, z = _labels(T)
    zs = [z[j:j + 1] for j in range(6)]
    # then: a sum of products of inputs, some under column indicators and exp2 (specials), some divided
    terms = []
    for _ in range(data.draw(st.integers(1, 4))):
        t = zs[data.draw(st.integers(0, 5))]
        for _ in range(data.draw(st.integers(0, 2))):
            t = T.make(Op.FMUL, F32, 0, [t, zs[data.draw(st.integers(0, 5))]])
        shape = data.draw(st.sampled_from(["plain", "exp2", "column", "divided"]))
        if shape == "exp2":
            t = T.make(Op.FMUL, F32, 0, [t, T.make(Op.FEX2, F32, 0, [zs[data.draw(st.integers(0, 5))]])])
        elif shape == "column":
            col = data.draw(st.integers(-2, 8))
            t = T.make(Op.ITE, F32, 0, [_cmp(T, y[0:1], _c(T, col), "eq"), t, T.const(F32, 0)])
        elif shape == "divided":
            t = T.make(Op.FDIV, F32, 0, [t, T.make(Op.FADD, F32, 0, [zs[0], zs[1]])])
        terms.append(t)
    then = terms[0]
    for t in terms[1:]:
        then = T.make(Op.FADD, F32, 0, [then, t])
    # cond: an ordered or equality comparison of a label with a constant, of two floats, or a conjunction
    conds = [_cmp(T, y[0:1], _c(T, data.draw(st.integers(-3, 8))), data.draw(st.sampled_from(["eq", "lt", "ge"]))),
             _cmp(T, y[1:2], _c(T, data.draw(st.integers(-3, 8))), "gt"),
             T.make(Op.CMP, PRED, mods_id(Mods(cmp="gt")), [zs[2], zs[3]])]
    p = conds[data.draw(st.integers(0, 2))]
    if data.draw(st.booleans()):
        p = T.make(Op.PAND, PRED, 0, [p, conds[data.draw(st.integers(0, 2))]])
    if data.draw(st.booleans()):
        p = T.make(Op.PNOT, PRED, 0, [p])
    N = Normalizer(T)
    got, (x,), (c,) = N.of(T.make(Op.ITE, F32, 0, [p, then, T.const(F32, 0)])), N.of(then), N.of(p)
    (got,) = got

    def general(cond, th, ot):
        kind = cond[0]
        if kind == "not":
            return general(cond[1], ot, th)
        if kind == "and":
            return general(cond[1], general(cond[2], th, ot), ot)
        if kind == "const":
            return th if cond[1] else ot
        if N._same(th, ot):
            return th
        return _general_ite(N, cond, th, ot)

    want = general(c, x, Rat({}))
    assert got.den == want.den and list(got.num.items()) == list(want.num.items())
    assert got.num is not x.num


def test_a_select_of_zero_under_a_constant_true_indicator_is_a_copy() -> None:
    """where(p, x, 0) with p's table constant 1: x's form, as a new polynomial (the caller may extend it)."""
    T = TermStore()
    _, z = _labels(T)
    N = Normalizer(T)
    x = N.add(Rat({(N.atom(AtomKind.LEAF, (int(z[0]),)), 1): 1}), N.const(3))
    got = N.ite(("atom", ("table", (), np.ones(1, np.uint64).tobytes())), x, Rat({}))
    assert got.num == x.num and got.num is not x.num


# ---------------------------------------------------------------- products by one indicator

@settings(max_examples=80, deadline=None)
@given(st.data())
def test_times_indicator_is_the_general_product(data) -> None:
    T = TermStore()
    y, z = _labels(T)
    N = Normalizer(T)
    leaves = [N.atom(AtomKind.LEAF, (int(z[j]),)) for j in range(6)]
    exps = [N.exp2_atom({((leaves[j], 1)): 1})[0] for j in range(3)]
    lab = int(y[0])
    ind = [N.indicator(("atom", ("cmp", "eq", False, lab, ("value", v))))
           for v in (0, 1, 5)]  # [y == 0], [y == 1], [y == 5]: word sets
    ind += [N.indicator(("atom", ("cmp", cmp, True, lab, int(_c(T, v)[0])))) for cmp, v in (("lt", 4), ("gt", -1))]
    ind += [N.indicator(("gt", {((leaves[0], 1)): 1, (): -2}))]  # [z0 - 2 > 0]: no word set
    inds = [next(iter(i.num))[0] for i in ind]
    ite = N.app("ite", ind[0], Rat({(leaves[1], 1): 1}), N.const(0))  # registered: a rule atom
    pool = leaves + exps + inds + [next(iter(ite.num))[0]]
    a: dict = {}
    for _ in range(data.draw(st.integers(1, 6))):
        picked = data.draw(st.lists(st.sampled_from(pool), max_size=4))
        powers = data.draw(st.lists(st.integers(-1, 3), min_size=len(picked), max_size=len(picked)))
        if data.draw(st.booleans()):  # a monomial as products make it
            m, k = (), 1
            for atom, e in zip(picked, powers):
                m, k2 = _mono_mul(m, (atom, max(e, 1)), N._merge_exp2, N._special)
                k *= k2
        else:  # or as it is drawn (unsorted, powers 0 and -1, repeated atoms): the fallback's business
            m, k = tuple(v for atom, e in zip(picked, powers) for v in (atom, e)), 1
            if len(set(picked)) != len(picked):
                continue
        coef = data.draw(st.sampled_from([1, -1, 2, 3]))
        if k:
            a[m] = a.get(m, 0) + coef
    a = {m: v for m, v in a.items() if v}
    c = data.draw(st.sampled_from(inds))
    got = N._times_indicator(a, (c, 1))
    want: dict = {}
    for ma, ca in a.items():  # mul_poly's general loop
        m, k = _mono_mul(ma, (c, 1), N._merge_exp2, N._special)
        p = ca * 1 if k == 1 else ca * 1 * k
        v = p if want.get(m) is None else want[m] + p
        if v:
            want[m] = v
        else:
            want.pop(m, None)
    assert list(got.items()) == list(want.items())
    assert [type(v) for v in got.values()] == [type(v) for v in want.values()]
    assert N.mul_poly(a, {(c, 1): 1}) == want


# ---------------------------------------------------------------- integer equalities

@settings(max_examples=40, deadline=None)
@given(st.integers(-2**33, 2**33), st.integers(-2**33, 2**33), st.sampled_from(["add", "sub", "neg", "plain"]))
def test_linear_eq_is_kept_per_pair(k: int, d: int, form: str) -> None:
    T = TermStore()
    y = T.input("labels", np.arange(1), W)
    lhs = {"add": lambda: T.make(Op.IADD, W, 0, [y, _c(T, k)]), "sub": lambda: T.make(Op.ISUB, W, 0, [_c(T, k), y]),
           "neg": lambda: T.make(Op.INEG, W, 0, [y]), "plain": lambda: y}[form]()
    a, b = int(lhs[0]), int(_c(T, d)[0])
    N = Normalizer(T)
    solved = []
    real = N._solve_linear_eq
    N._solve_linear_eq = lambda p, q: solved.append((p, q)) or real(p, q)
    first = N._linear_eq(a, b)
    assert N._linear_eq(a, b) == first == real(a, b) and solved == [(a, b)]
    x, v = first
    assert x == int(y[0])
    # the solved value satisfies the equality on 32-bit words
    lhs_v = {"add": v + k, "sub": k - v, "neg": -v, "plain": v}[form]
    assert (lhs_v - d) % (1 << 32) == 0


@settings(max_examples=60, deadline=None)
@given(st.integers(-2**32, 2**33), st.integers(-2**32, 2**33))
def test_two_equalities_of_one_label_multiply_by_their_words(u: int, v: int) -> None:
    T = TermStore()
    y = T.input("labels", np.arange(2), W)
    N = Normalizer(T)

    def eq(lab: int, val: int) -> int:
        x, w = N._linear_eq(lab, int(_c(T, val)[0]))
        return next(iter(N.indicator(("atom", ("cmp", "eq", False, x, ("value", w)))).num))[0]

    leaf = N.atom(AtomKind.LEAF, (int(y[1]),))
    a, b, other = eq(int(y[0]), u), eq(int(y[0]), v), eq(int(y[1]), v)
    got = N._merge_exp2({a: 1, b: 1, leaf: 1})
    if (u - v) % (1 << 32):
        assert a != b and got == ((), 0)
    else:  # the same word: the same indicator, and [c]^2 = [c]
        assert a == b
        assert N._merge_exp2({a: 2, leaf: 1}) == (tuple(v for t in sorted([(a, 1), (leaf, 1)]) for v in t), 1)
    m, k = N._merge_exp2({a: 1, other: 1})  # another label's equality: kept
    assert k == 1 and set(m[0::2]) == {a, other}
