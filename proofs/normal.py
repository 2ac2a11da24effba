"""A normal form for the real-arithmetic meaning of terms: equal normal forms, equal functions.

Floating-point operations are read as the exact real operations they approximate (add, mul, fma,
div, ex2, ...); conversions between float formats are the identity (what rounding does is the
precision check's business, proofs/precision.py). A value's normal form is a rational function
`num / den` over *atoms*:

- a sum of coefficient x monomial, coefficients exact rationals (a float constant's exact value),
  a monomial a product of atoms with integer exponents (negative for a divided-out monomial);
- atoms: tensor elements (INPUT leaves); `exp2(P)` of a normal polynomial P (at most one per
  monomial: exp2(P) * exp2(Q) = exp2(P + Q), exp2(P)^-1 = exp2(-P), integer constant parts pulled
  out as powers of two); `max`/`min` of a *set* of normal forms (nested ones flattened, -inf/+inf
  dropped, constants folded); the *indicator* [c] of a condition (0 or 1): if c then X else Y is
  Y + (X - Y) [c], so selects meet multiplications by decoded signs; conditions are normalised
  (P > 0 with P's leading coefficient +-1, P = 0 with it 1, a bit-level predicate of few input
  bits by its truth table, each with the polarity that makes the first assignment false: [not c] =
  1 - [c]; [c]^2 = [c]; comparisons of one bit-vector term with constants multiply as the sets of
  words where they hold: [y == 6624] [y <s 6000] = 0, [y == 5] [y <s 6000] = [y == 5]); an if-then-else
  with an infinity is the atom ite([c], a, b), its constant branch under indicators that decide c; an
  if-then-else that is a max or a min is one; and uninterpreted
  applications (sqrt, log2, tanh, abs, bit-level values, float-to-integer conversions...) of
  normal arguments: equal arguments, equal atoms (congruence), nothing more claimed;
- `den` a polynomial made monic (leading coefficient 1, by the order of monomials); a constant or
  single-monomial denominator is divided into the numerator.

So reassociated sums, split/tiled reductions, fma vs mul+add, warp-shuffle trees, and online
softmax (exp2(m_old - m_new) * acc + ..., then / l) meet the naive form's normal form. Two normal
forms with different denominators are compared by cross-multiplication. Nothing here uses a solver,
and each node's normal form is built from its children's once (children are interned first, so
ascending term ids are a topological order); a sum whose only user is another sum is extended in
place rather than copied, so long reductions stay linear.

The real reading assumes inputs are finite and no operation overflows or produces NaN; +-inf
constants (Triton's masked lanes read -inf) are handled as extended reals where the result is
determined (max(x, -inf) = x, exp2(-inf) = 0, -inf + x = -inf). What has no real meaning here
(an opaque value) raises `NoRealMeaning`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from fractions import Fraction
from typing import Callable

import numpy as np

from semantics.formats import bits_to_fraction, get_format
from semantics.ptx.mma import int_mma_bound
from semantics.terms import COMMUTATIVE, SORTS, Kind, Op, TermStore, mods

__all__ = ["Normalizer", "NF", "Rat", "Inf", "AtomKind", "NoRealMeaning", "POS_INF", "NEG_INF"]

Coef = int | Fraction
Mono = tuple  # flat (atom, exponent, atom, exponent, ...) sorted by atom
Poly = dict  # Mono -> Coef (no zero coefficients)


_OPS = {int(o): o for o in Op}
_OPS = [_OPS.get(i, Op.OPAQUE) for i in range(256)]


#: Said with a verdict whose normal forms read a data-dependent ue8m0 block scale factor (_scaled).
UE8M0_ASSUMPTION = ("ue8m0 block scale factors read from data are not 0xFF (NaN, PTX 5.2.3): a block-scaled mma "
                    "is read as c + sum_k (a * 2^(sa - 127)) * (b * 2^(sb - 127))")


UE4M3_ASSUMPTION = ("ue4m3 block scale factors read from data are numbers (bit 7 clear, not 0x7F: PTX 5.2.3): a "
                    "block-scaled mma is read as c + sum_k (a * ue4m3(sa)) * (b * ue4m3(sb)), ue4m3 uninterpreted")


class NoRealMeaning(Exception):
    """A term whose real value the normal form cannot express (an opaque leaf, a NaN)."""


class Undefined(NoRealMeaning):
    """Extended-real arithmetic with no determined result (inf - inf, inf times an unknown sign)."""


class TooBig(Exception):
    """Expanding let-atoms for a comparison went past the budget."""


#: A subterm used by several nodes whose normal form has more monomials than this becomes a
#: let-atom standing for it (a row's mean in layernorm, a score q.k in attention): the forms of its
#: users stay small; a comparison that fails with let-atoms is retried with them expanded.
LET_LIMIT = 16
EXPAND_BUDGET = 2_000_000  # monomials an expansion may produce before the comparison gives up
#: Monomial products (len(a) x len(b) per polynomial product) one comparison's expansion may do, nested
#: expansions (inside sqrt, division, exp2, max/min and indicator atoms) and the final cross-multiplication
#: included; charged before each product is made, so it bounds the monomials created (time and memory) per
#: element. Past it the comparison raises TooBig: the element is a suspect, never proved.
EXPAND_WORK_BUDGET = 8_000_000
#: The expansion budgets of a comparison with shared subterms as atoms (Normalizer.equal_sharing), a first try
#: before the whole normal forms: FlashAttention's rows need less; softmax_warp_row's candidate, whose shuffle
#: partial sums are shared with nothing the reference sums, spent its 600 s expanding with the full budgets.
SHARING_BUDGET = 1 << 17
#: equal_sharing normalises only where the nodes above the shared atoms are at most 1/SHARING_REGION of the two
#: DAGs (FlashAttention cross-target: ~1600 of 37 400; softmax_warp_row's candidate shares its inputs only)
SHARING_REGION = 8
SHARING_WORK = 1 << 17
#: Node pairs Normalizer.congruence_pairs walks down from one element's two roots before it gives up (cross_entropy_zloss'
#: gradient: sm_89's and sm_80's builds differ in 8 and 12 nodes of an element's 57 000, its label test `v == y` against
#: `(y - 96) - 4 == 0`, below the row's `valid` select; the walk stops at the bf16 conversion, a node with two users);
#: past it the element is compared as a whole.
CONGRUENCE_NODES = 64
#: Monomials the cache of expanded atoms (Normalizer._expanded, shared by the elements of one comparison
#: run) may hold; past it the cache is emptied (a cache: only speed is lost), so it cannot grow without bound.
EXPANDED_CACHE_LIMIT = 1_000_000
#: Monomials the cache of roots' normal forms (Normalizer(keep_roots=True): one normalizer for several comparisons
#: in one store, a reference compared with several candidates) may hold; past it the cache is emptied.
ROOT_CACHE_LIMIT = 4_000_000
#: A let-atom's polynomial has the let-atoms it holds alone in a monomial (c x L: a partial sum of a
#: reduction tree, shared by the lanes of a shuffle butterfly) replaced by theirs, so that the same
#: sum reduced by two different trees gets one let-atom (equal flat polynomials, equal keys); not
#: when the flat polynomial would have more monomials than this (the let-atom stays nested).
FLATTEN_LIMIT = 1 << 17
#: Monomials of an integer MMA's exact sum read through an .s32 conversion as one atom (Normalizer._exact_int_mma);
#: past it the read keeps its atom by term id (sage_attention: 128 products per score).
MMA_SUM_LIMIT = 1 << 14
FLATTEN_BUDGET = 1 << 24  # monomials all flattenings of one normalizer may copy (then let-atoms stay nested)
#: A product of polynomials with more monomial pairs than this looks at the run's deadline (--timeout)
#: after each monomial of the shorter one: an expansion of let-atoms may multiply sums of thousands.
BIG_PRODUCT = 1 << 16
#: Predicates one packed comparison may read back (_packed_cmp), and how deep a bit is followed.
PACKED_PREDICATES = 4
PACKED_DEPTH = 24
TABLE_BITS = 16  # bit-level terms of at most this many input bits are identified by their function


#: Bit-vector operations whose result is their first operand when the second is zero.
_ZERO_RIGHT = frozenset(int(o) for o in (Op.IADD, Op.ISUB, Op.OR, Op.XOR, Op.SHL, Op.SHR))
#: A comparison with its operands swapped (a < b is b > a); unsigned ones (lo, hi, ls, hs) too.
_SWAPPED_CMP = {"eq": "eq", "ne": "ne", "lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "lo": "hi", "hi": "lo",
                "ls": "hs", "hs": "ls"}


class AtomKind(IntEnum):
    LEAF = 0  # an input element read as a float: (term id,)
    INT = 1  # the integer value of a bit-vector term: (term id, signed)
    EXP2 = 2  # exp2 of a polynomial: (poly key,)
    MAX = 3  # (frozenset of normal-form keys)
    MIN = 4
    IND = 5  # the indicator (0 or 1) of a normalised condition: (("gt"|"eq", poly id) | ("table", leaves, bytes)
    #           | ("term", predicate term id or a canonical comparison of bit-vectors),)
    APP = 6  # (function name, argument keys...)
    LET = 7  # a shared subterm's (big) normal form, by its key: equal keys, equal values
    TERM = 8  # a term's value, uninterpreted (extended-real arithmetic without a real result): (term id,)


@dataclass(frozen=True)
class Inf:
    """+inf or -inf (extended reals)."""

    sign: int


POS_INF, NEG_INF = Inf(1), Inf(-1)


@dataclass
class Rat:
    """num / den; den is an interned monic polynomial id, or None for 1."""

    num: Poly
    den: int | None = None


NF = Rat | Inf


class _PolyKey:
    """A polynomial as a dict key: hashed by its monomials only (a Fraction's hash is a modular inverse), equal
    when the polynomials are (the same monomials with equal coefficients: what frozenset(p.items()) compared)."""

    __slots__ = ("p", "h")

    def __init__(self, p: Poly) -> None:
        self.p = p
        self.h = hash(frozenset(p))

    def __hash__(self) -> int:
        return self.h

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _PolyKey) and self.h == other.h and self.p == other.p


def _mono_mul(a: Mono, b: Mono, exp2_merge: Callable, special: set | None = None) -> tuple[Mono, Coef]:
    """Product of two monomials (exponents added; two exp2 atoms merged): (monomial, coefficient).
    `special`: atoms that need exp2_merge (exp2 atoms, indicators, ite atoms); two single plain atoms are
    merged directly."""
    if not a:
        return b, 1
    if not b:
        return a, 1
    if special is not None and len(a) == 2 and len(b) == 2:
        sa, sb = a[0] in special, b[0] in special
        if not sa and not sb:
            if a[0] < b[0]:
                return (a[0], a[1], b[0], b[1]), 1
            if b[0] < a[0]:
                return (b[0], b[1], a[0], a[1]), 1
            e = a[1] + b[1]
            return ((a[0], e) if e else ()), 1
        # one special atom to the first power times another, plain atom (p_j v_jd, exp2 x leaf): exp2_merge
        # would find no second exp2 atom to merge, no power of an indicator and no second indicator
        # (_indicator_algebra reads two atoms or more): the two atoms side by side, as it returns them
        if not (sa and sb) and (a[1] if sa else b[1]) == 1:
            return ((a[0], a[1], b[0], b[1]) if a[0] < b[0] else (b[0], b[1], a[0], a[1])), 1
    d: dict[int, int] = {}
    for i in range(0, len(a), 2):
        d[a[i]] = a[i + 1]
    for i in range(0, len(b), 2):
        d[b[i]] = d.get(b[i], 0) + b[i + 1]
    if special is not None:
        # at most one special atom, to the first power (q_code * k_code * scale * exp2(m): one exp2 atom among
        # plain ones): exp2_merge merges no two exp2 atoms, lowers no indicator power and finds no second
        # indicator for _indicator_algebra; it returns the sorted atoms (tests/equivalence/
        # test_normal_exp2_products.py: test_products_with_one_special_atom_as_merge_gives_them)
        sp = [x for x in d if x in special]
        if not sp or (len(sp) == 1 and d[sp[0]] == 1):
            out: list[int] = []
            for x in sorted(d):
                e = d[x]
                if e:
                    out.append(x)
                    out.append(e)
            return tuple(out), 1
    return exp2_merge(d)


class Normalizer:
    """Normal forms of the terms of one store (tables of atoms and polynomials shared by all)."""

    def __init__(self, T: TermStore, float_leaf: Callable[[int], None] | None = None, keep_roots: bool = False) -> None:
        self.T = T
        #: `of`'s roots -> their normal forms, kept for later calls when `keep_roots` (a term id of one store is one
        #: term, and every normal form of it made by one normalizer is in its tables: any of them may stand for it)
        self._root_nfs: dict[int, NF] | None = {} if keep_roots else None
        self._root_size = 0  # monomials held by _root_nfs (emptied past ROOT_CACHE_LIMIT)
        self.root_hits = 0  # roots whose normal form came from _root_nfs (statistics)
        self.atoms: list[tuple] = []  # atom id -> (kind, payload)
        self._atom_ids: dict[tuple, int] = {}
        self._exp2: set[int] = set()  # atom ids of exp2 atoms
        self._ind: set[int] = set()  # atom ids of indicators
        self._special: set[int] = set()  # both, and ite atoms (products of them need _merge_exp2)
        #: indicator atom of a canonical integer equality [x == v] (_bits_cmp's ("cmp", "eq", signed, x,
        #: ("value", v))) -> ((x, signed), v): _indicator_algebra keeps it where a product's words are its one word
        self._eq_value: dict[int, tuple[tuple[int, bool], int]] = {}
        #: indicator atom of a comparison of one bit-vector term x with a constant (an equality, `ne`, or an
        #: ordered comparison, signed or not) -> (x, the w-bit words where it is 1 as sorted disjoint inclusive
        #: ranges of unsigned values): _indicator_algebra's facts
        self._word_sets: dict[int, tuple[int, tuple[tuple[int, int], ...]]] = {}
        #: ite atom (app("ite", [c], then, other): an infinity under a condition) -> (indicator atom c, whether
        #: the ite's condition is [c] (else 1 - [c]), then's and other's constant values or None)
        self._ite_atoms: dict[int, tuple[int, bool, Coef | None, Coef | None]] = {}
        self._rule_atoms: set[int] = set()  # the atoms of both and the ite atoms' conditions
        self.lemmas: list = []  # proofs.lemmas.Lemma used (for certificates)
        self.assumptions: list[str] = []  # what some lemma relied on
        self.polys: list[Poly] = []  # interned polynomials (dens, exp2 arguments, keys)
        self._poly_ids: dict[_PolyKey, int] = {}
        self._keys: dict[tuple, int] = {}  # normal-form key -> id (for atom arguments)
        self.key_nf: list[NF] = []
        self.memo: dict[int, NF] = {}  # persistent normal forms of shared subterms
        self.conds: dict[tuple, int] = {}
        self._lets: dict[int, bool] = {}  # atom -> whether a let-atom occurs in it
        self._expanded: dict[int, NF] = {}  # atom -> its expansion
        self._expanded_keys: dict[int, int] = {}  # atom -> key of its expansion (_expanded_key)
        self._canon_names: dict[int, int] = {}  # atom -> its name for _equal_canonical (_canon)
        self._canon_ids: dict[tuple, int] = {}  # renamed structures (_canon) -> ids
        self._expanded_size = 0  # monomials held by _expanded (emptied past EXPANDED_CACHE_LIMIT)
        self._budget = EXPAND_BUDGET
        self._work: int | None = None  # products left to this comparison's expansion (None: not expanding)
        self.too_big = 0  # comparisons given up past a budget (statistics)
        self.cache_resets = 0  # times _expanded was emptied (statistics)
        self._flatten_budget = FLATTEN_BUDGET  # monomials _flatten_lets may still copy
        self._tables: dict[int, tuple | None] = {}  # bit-level term -> its function table key
        self._big: set[int] = set()  # terms whose subgraphs have more than small_subgraph's limit of nodes
        self._mma_bounds: dict[int, int | None] = {}  # integer MMA node -> _int_mma_bound
        self._leaves: dict[int, frozenset | None] = {}  # term -> its input leaves (_leaves_of), None: more than 16
        # _merge_exp2: ((exp2 atom, exponent), ...) -> exp2 of the sum, as exp2_atom gives it
        self._exp2_products: dict[tuple, tuple[int | None, Coef]] = {}
        self._shapes: dict[tuple, bytes] = {}  # a term's shape (leaves as positions) -> its table
        self._shape_ids: dict[int, int] = {}
        self._shape_keys: dict[tuple, int] = {}
        self._selections: dict[tuple, tuple] = {}  # (table bytes, width, signed) -> values
        self._selected: dict[tuple, tuple] = {}  # values -> (distinct values, selection table)
        self._sign_shapes: dict[tuple, tuple | None] = {}  # shape -> (smt2, leaf positions read, flips) or None
        self._support_shapes: dict[tuple, tuple | None] = {}  # shape -> (smt2, leaf positions read, table) or None
        self._recips: dict[int, NF] = {}  # term id of a shared divisor -> its reciprocal
        self.steps = 0  # nodes normalised (for statistics)
        self._bit_memo: dict[tuple[int, int], int | tuple[int, bool] | None] = {}  # (term, bit) -> _bit
        #: term -> (op, sort, kids, aux) as _bit_of reads them: _packed_cmp asks every bit of a word, so each term
        #: of a packed mask is read once per bit (cross_entropy_zloss: 1.6 M reads of about 50 k terms); a term
        #: of the hash-consed store never changes, so the copy is its row
        self._bit_rows: dict[int, tuple[int, object, tuple[int, ...], int]] = {}
        self._operands: dict[tuple[int, bool], NF] = {}  # (term, signed) -> an integer MMA operand's value (_operand)
        self._wide_eqs: dict[int, bool] = {}  # term -> _wide_equality (a function of the term; asked by _pred, then table)
        #: (a, b) -> _linear_eq(a, b): a function of the two (immutable, hash-consed) terms, asked by _wide_equality
        #: and again by _bits_cmp for each comparison, and again for each chunk whose subgraph holds it
        self._linear_eqs: dict[tuple[int, int], tuple[int, int] | None] = {}
        self._congruent: dict[tuple[int, int], bool] = {}

    # ------------------------------------------------------------------ tables
    def atom(self, kind: AtomKind, payload: tuple) -> int:
        key = (int(kind), payload)
        got = self._atom_ids.get(key)
        if got is None:
            got = self._atom_ids[key] = len(self.atoms)
            self.atoms.append((kind, payload))
            if kind is AtomKind.EXP2:
                self._exp2.add(got)
                self._special.add(got)
            if kind is AtomKind.IND:
                self._ind.add(got)
                self._special.add(got)
                eq = _equality_with_value(payload[0])
                if eq is not None:
                    self._eq_value[got] = eq
                words = self._word_set(payload[0])
                if words is not None:
                    self._word_sets[got] = words
                    self._rule_atoms.add(got)
            if kind is AtomKind.APP and payload[0] == "ite" and len(payload) == 4:
                self._register_ite(got, payload)
        return got

    def _word_set(self, key: tuple) -> tuple[int, tuple[tuple[int, int], ...]] | None:
        """The condition key of an indicator as (x, ranges): x == v, x != v (_linear_eq's canonical keys) or
        an ordered comparison of term x with a constant term of its width (_bits_cmp's), signed or unsigned
        as setp compares (PTX ISA 9.7.3.x); the ranges are the w-bit words of x where it holds, read as
        unsigned. None for any other condition."""
        if len(key) != 2 or key[0] != "term" or not isinstance(key[1], tuple) or len(key[1]) != 5:
            return None
        tag, cmp, signed, a, b = key[1]
        T = self.T
        if tag != "cmp" or not isinstance(a, (int, np.integer)) or not 0 <= int(a) < len(T):
            return None
        if not isinstance(b, tuple) and not 0 <= int(b) < len(T):
            return None
        w = SORTS[int(T.sort[a])].width
        if w > 64:
            return None
        top = (1 << w) - 1
        if isinstance(b, tuple):  # ("value", v): _linear_eq's x == v / x != v, v taken modulo 2^w
            if len(b) != 2 or b[0] != "value" or cmp not in ("eq", "ne"):
                return None
            v = int(b[1]) & top
            if cmp == "eq":
                return int(a), ((v, v),)
            return int(a), tuple(r for r in ((0, v - 1), (v + 1, top)) if r[0] <= r[1])
        x, c = int(a), int(b)
        if int(T.op[c]) != Op.CONST:
            if int(T.op[x]) != Op.CONST:
                return None
            x, c, cmp = c, x, _SWAPPED_CMP.get(cmp)  # c < x is x > c
        if int(T.op[x]) == Op.CONST or SORTS[int(T.sort[c])].width != w or SORTS[int(T.sort[x])].kind is Kind.FLOAT:
            return None
        cv = int(T.aux[c]) & top
        unsigned = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}
        if cmp in unsigned:
            cmp, signed = unsigned[cmp], False
        if cmp not in ("lt", "le", "gt", "ge"):
            return None
        lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, top)
        if signed and cv > hi:
            cv -= 1 << w
        lo, hi = {"lt": (lo, cv - 1), "le": (lo, cv), "gt": (cv + 1, hi), "ge": (cv, hi)}[cmp]
        if lo > hi:
            return x, ()
        if lo >= 0 or hi < 0:  # one run of words (negative values are the words 2^w + v)
            return x, ((lo & top, hi & top),)
        return x, ((0, hi), (lo & top, top))

    def _register_ite(self, a: int, payload: tuple) -> None:
        """An ite atom whose condition is one indicator [c] (or 1 - [c]) and whose branches are constants or
        +-inf: its condition and constant branches, for _indicator_algebra."""
        cond = self.key_nf[payload[1]]
        if not isinstance(cond, Rat) or cond.den is not None:
            return
        c = None
        positive = True
        if len(cond.num) == 1:
            (m, k), = cond.num.items()
            if k == 1 and len(m) == 2 and m[1] == 1:
                c = m[0]
        elif len(cond.num) == 2 and cond.num.get(()) == 1:
            m = next(mm for mm in cond.num if mm != ())
            if cond.num[m] == -1 and len(m) == 2 and m[1] == 1:
                c, positive = m[0], False
        if c is None or c not in self._ind:
            return
        branches = [self.key_nf[k] for k in payload[2:]]
        values = [_constant(x) if isinstance(x, Rat) else None for x in branches]
        self._ite_atoms[a] = (c, positive, values[0], values[1])
        self._special.add(a)
        self._rule_atoms.update((a, c))

    def poly_id(self, p: Poly) -> int:
        got = self._poly_ids.get(_PolyKey(p))
        if got is None:
            q = dict(p)  # the caller may change p later: the key holds the copy
            got = self._poly_ids[_PolyKey(q)] = len(self.polys)
            self.polys.append(q)
        return got

    def key(self, x: NF) -> int:
        """An interned id of a normal form (equal normal forms, equal keys)."""
        if isinstance(x, Inf):
            k: tuple = ("inf", x.sign)
        else:
            k = (self.poly_id(x.num), x.den)
        got = self._keys.get(k)
        if got is None:
            got = self._keys[k] = len(self.key_nf)
            self.key_nf.append(x if isinstance(x, Inf) else Rat(dict(x.num), x.den))
        return got

    # ------------------------------------------------------------------ polynomial arithmetic
    def _merge_exp2(self, d: dict[int, int]) -> tuple[Mono, Coef]:
        """A product of atoms (atom -> exponent) as (monomial, coefficient): exp2 atoms merged, [c]^k = [c],
        and the rules of _indicator_algebra on comparisons of one term with constants and ite atoms under them
        ([x == a] [x == b] = 0, coefficient 0, for distinct constants a, b compared with one term x: their word
        sets do not meet)."""
        scale: Coef = 1
        if self._rule_atoms:
            scale = self._indicator_algebra(d)
            if not scale:
                return (), 0
        coef: Coef = 1
        exp2 = self._exp2
        if not any(a in exp2 for a in d):  # indicators only: [c]^k = [c]
            ind = self._ind
            return tuple(x for a in sorted(d) if d[a] for x in (a, 1 if d[a] > 1 and a in ind else d[a])), scale
        for a, e in d.items():  # [c]^k = [c]
            if e > 1 and a in self._ind:
                d[a] = 1
        exps = [a for a, e in d.items() if a in self._exp2 and e]
        if len(exps) > 1 or any(d[a] != 1 for a in exps):
            # exp2(p1)^e1 ... exp2(pk)^ek = exp2(e1 p1 + ... + ek pk): a function of the atoms and exponents
            # alone (an atom's polynomial never changes), kept per product (FlashAttention-style rescaling
            # multiplies each of a row's D accumulators by the same exp2(m_old - m_new): one sum for all)
            key = tuple(sorted((a, d[a]) for a in exps))
            got = self._exp2_products.get(key)
            if got is None:
                total: Poly = {}
                for a in exps:
                    _add_into(total, self.polys[self.atoms[a][1][0]], d[a])
                got = self._exp2_products[key] = self.exp2_atom(total)
            for a in exps:
                del d[a]
            a, c = got
            coef = c
            if a is not None:
                d[a] = d.get(a, 0) + 1
        mono = tuple(x for a in sorted(d) if d[a] for x in (a, d[a]))
        return mono, coef if scale == 1 else coef * scale

    def _indicator_algebra(self, d: dict[int, int]) -> Coef:
        """Exact rules on the indicators of comparisons of one bit-vector term x with constants (their word
        sets, _word_set), applied to the product d in place; returns the coefficient it takes (0: the product
        is 0 at every input):
        - the indicators of x hold at once only on the intersection of their word sets: empty, the product
          is 0 ([y == 6624] [y <s 6000] = 0); one word v (an equality [x == v] among them), the others hold
          wherever [x == v] does and are dropped ([y == 5] [y <s 6000] = [y == 5]);
        - an ite atom ite([c], t, o) (an infinity under a condition: proofs/normal.py `ite`) times indicators
          under which c is false (true) everywhere is that product times o (t) where o (t) is a finite
          constant: [y >s -1] [y <s 6000] ite([y == 6624], -inf, 0) = 0, Triton's masked column picked by
          `where(cols == y, ., 0)` under `where(valid, ., 0)`. The product of an indicator and a value is a
          select of it (ite(d, X, 0) = X [d]), so where d is 0 the value X is not read: the real reading's
          assumption that no operation makes a NaN (0 * inf) is what makes the indicator's 0 a select's."""
        rule_atoms = self._rule_atoms
        hits = [a for a in d if a in rule_atoms]
        if len(hits) < 2:  # no two indicators of one term, no ite atom and an indicator: nothing to do
            return 1
        word_sets = self._word_sets
        by_term: dict[int, list[int]] = {}
        for a in hits:
            if d[a] > 0 and a in word_sets:
                by_term.setdefault(word_sets[a][0], []).append(a)
        ites = [a for a in hits if a in self._ite_atoms and d[a]]
        if not ites and all(len(v) < 2 for v in by_term.values()):
            return 1
        held: dict[int, tuple[tuple[int, int], ...]] = {}  # x -> the words of x where the product can be non-0
        for x, atoms in by_term.items():
            words = word_sets[atoms[0]][1]
            for a in atoms[1:]:
                words = _intersect_ranges(words, word_sets[a][1])
            if not words:
                return 0
            held[x] = words
            if len(atoms) > 1 and len(words) == 1 and words[0][0] == words[0][1]:
                # [x == v] times conditions that hold at v: [x == v] (the equality kept, whatever else has
                # the same word set: [y == 0] [y <u 1] is [y == 0], as [y == 0] alone is)
                keep = next((a for a in atoms if a in self._eq_value and word_sets[a][1] == words), None)
                if keep is not None:
                    for a in atoms:
                        if a != keep:
                            del d[a]
        scale: Coef = 1
        for a in ites:
            c, positive, then, other = self._ite_atoms[a]
            if c in d and d[c] > 0:
                c_value: bool | None = True
            else:
                c_value = None
                got = word_sets.get(c)
                if got is not None and got[0] in held:
                    x_words = held[got[0]]
                    if not _intersect_ranges(x_words, got[1]):
                        c_value = False
                    elif _intersect_ranges(x_words, got[1]) == x_words:
                        c_value = True
            if c_value is None:
                continue
            v = then if c_value == positive else other
            e = d[a]
            if v is None or (v == 0 and e < 0):
                continue
            del d[a]
            scale = _tidy(scale * (Fraction(v) ** e if e < 0 else v ** e))
            if not scale:
                return 0
        return scale

    def exp2_atom(self, p: Poly) -> tuple[int | None, Coef]:
        """exp2(p) as (atom or None, coefficient): the integer part of p's constant term pulled out."""
        c = p.get((), 0)
        whole = int(np.floor(c)) if not isinstance(c, Fraction) else c.numerator // c.denominator
        rest = dict(p)
        if whole:
            rest[()] = c - whole
            if not rest[()]:
                del rest[()]
        coef: Coef = 2 ** whole if whole >= 0 else Fraction(1, 2 ** -whole)
        if not rest:
            return None, coef
        return self.atom(AtomKind.EXP2, (self.poly_id(rest),)), coef

    def mul_poly(self, a: Poly, b: Poly) -> Poly:
        if len(a) < len(b):
            a, b = b, a
        if self._work is not None:  # inside a comparison's expansion: charge the product before making it
            self._work -= len(a) * len(b)
            if self._work < 0:
                raise TooBig(f"expanding let-atoms exceeded {EXPAND_WORK_BUDGET} monomial products")
        out: Poly = {}
        special = self._special
        big = len(a) * len(b) > BIG_PRODUCT
        if len(b) == 1:
            (mb, cb), = b.items()
            if len(mb) == 2 and mb[1] == 1 and cb.__class__ is int and cb == 1 and mb[0] in self._ind:
                if big:
                    _check_time("multiplying polynomials")
                return self._times_indicator(a, mb)
        for mb, cb in b.items():
            if big:
                _check_time("multiplying polynomials")
            for ma, ca in a.items():
                m, c = _mono_mul(ma, mb, self._merge_exp2, special)
                p = ca * cb if c == 1 else ca * cb * c
                old = out.get(m)
                v = p if old is None else old + p
                if v:
                    out[m] = v
                else:
                    out.pop(m, None)
        return out

    def _times_indicator(self, a: Poly, mb: Mono) -> Poly:
        """mul_poly(a, {mb: 1}) for mb = ([c], 1), an indicator (a select of a: where(mask, x, 0)). A monomial
        of a that is sorted, holds neither c nor an atom to the power 0, at most one exp2 atom, to the first
        power, no indicator to a power above 1, and with c at most one atom of _indicator_algebra's rules
        (which change no product of fewer than two) is what _mono_mul would make of it: _merge_exp2 merges
        nothing, lowers nothing and returns the atoms sorted, coefficient 1; so (c, 1) goes in its place and
        its coefficient stays (times 1). Any other monomial goes through _mono_mul."""
        c = mb[0]
        special, exp2, ind, rule = self._special, self._exp2, self._ind, self._rule_atoms
        c_rule = c in rule
        out: Poly = {}
        for ma, ca in a.items():
            k = None  # the coefficient _mono_mul gives (None: ask it)
            rules = c_rule
            seen_exp2 = False
            prev = -1
            at = len(ma)  # where (c, 1) goes
            for i in range(0, len(ma), 2):
                x, e = ma[i], ma[i + 1]
                if x <= prev or x == c or not e:
                    break
                if prev < c < x:
                    at = i
                prev = x
                if x in special:
                    if x in exp2:
                        if seen_exp2 or e != 1:
                            break
                        seen_exp2 = True
                    elif e > 1 and x in ind:
                        break
                    if x in rule:
                        if rules:
                            break
                        rules = True
            else:
                m, k = ma[:at] + mb + ma[at:], 1
            if k is None:
                m, k = _mono_mul(ma, mb, self._merge_exp2, special)
            p = ca if k == 1 else ca * k
            old = out.get(m)
            v = p if old is None else old + p
            if v:
                out[m] = v
            else:
                out.pop(m, None)
        return out

    def inv_mono(self, m: Mono) -> tuple[Mono, Coef]:
        d = {m[i]: -m[i + 1] for i in range(0, len(m), 2)}
        coef: Coef = 1
        for a in [a for a in d if a in self._exp2]:  # exp2(P)^-1 = exp2(-P)
            arg = self.polys[self.atoms[a][1][0]]
            e = d.pop(a)
            na, c = self.exp2_atom({k: -v * -e for k, v in arg.items()} if e < 0 else {k: v * e for k, v in arg.items()})
            coef *= c
            if na is not None:
                d[na] = d.get(na, 0) + 1
        return tuple(x for a in sorted(d) if d[a] for x in (a, d[a])), coef

    # ------------------------------------------------------------------ rational functions
    def const(self, v: Coef) -> Rat:
        return Rat({(): v} if v else {})

    def add(self, x: NF, y: NF, own_x: bool = False) -> NF:
        if isinstance(x, Inf) or isinstance(y, Inf):
            return _inf_add(x, y)
        if x.den == y.den:
            num = x.num if own_x else dict(x.num)
            _add_into(num, y.num, 1)
            return Rat(num, x.den)
        if y.den is None:
            num = x.num if own_x else dict(x.num)
            _add_into(num, self.mul_poly(y.num, self.polys[x.den]), 1)
            return Rat(num, x.den)
        if x.den is None:
            num = self.mul_poly(x.num, self.polys[y.den])
            _add_into(num, y.num, 1)
            return Rat(num, y.den)
        dx, dy = self.polys[x.den], self.polys[y.den]
        num = self.mul_poly(x.num, dy)
        _add_into(num, self.mul_poly(y.num, dx), 1)
        return self._normal(num, self.mul_poly(dx, dy))

    def scale(self, x: NF, c: Coef) -> NF:
        if isinstance(x, Inf):
            if c == 0:
                raise Undefined("0 * inf")
            return Inf(x.sign if c > 0 else -x.sign)
        if c == 1:
            return x
        if c == 0:
            return Rat({})
        return Rat({m: v * c for m, v in x.num.items()}, x.den)

    def mul(self, x: NF, y: NF) -> NF:
        if isinstance(x, Inf) or isinstance(y, Inf):
            other = y if isinstance(x, Inf) else x
            inf = x if isinstance(x, Inf) else y
            if isinstance(other, Inf):
                return Inf(inf.sign * other.sign)
            c = _constant(other)
            if c is None or c == 0:
                raise Undefined("inf times a value of unknown sign")
            return Inf(inf.sign if c > 0 else -inf.sign)
        cx, cy = _constant(x), _constant(y)
        if cx is not None:
            return self.scale(y, cx)
        if cy is not None:
            return self.scale(x, cy)
        num = self.mul_poly(x.num, y.num)
        if x.den is None and y.den is None:
            return Rat(num)
        if x.den is not None and y.den is not None:
            return self._normal(num, self.mul_poly(self.polys[x.den], self.polys[y.den]))
        return Rat(num, x.den if x.den is not None else y.den)

    def recip(self, x: NF) -> NF:
        if isinstance(x, Inf):
            return Rat({})
        if not x.num:
            raise NoRealMeaning("division by zero")
        den = self.polys[x.den] if x.den is not None else {(): 1}
        if len(x.num) == 1:  # a monomial: divide it out
            (m, c), = x.num.items()
            im, ic = self.inv_mono(m)
            inv_c = Fraction(1) / c * ic
            out: Poly = {}
            for dm, dc in den.items():
                mm, mc = _mono_mul(dm, im, self._merge_exp2)
                v = out.get(mm, 0) + dc * inv_c * mc
                if v:
                    out[mm] = _tidy(v)
                else:
                    out.pop(mm, None)
            return Rat(out)
        return self._normal(dict(den), dict(x.num))

    def div(self, x: NF, y: NF) -> NF:
        if isinstance(y, Inf):
            if isinstance(x, Inf):
                raise Undefined("inf / inf")
            return Rat({})
        return self.mul(x, self.recip(y))

    def _normal(self, num: Poly, den: Poly) -> NF:
        """num / den with den monic (or divided in when it is a monomial)."""
        if not den:
            raise NoRealMeaning("division by zero")
        if len(den) == 1:
            return self.mul(Rat(num), self.recip(Rat(den)))
        lead = den[max(den)]
        if lead != 1:
            inv = Fraction(1) / lead
            num = {m: _tidy(v * inv) for m, v in num.items()}
            den = {m: _tidy(v * inv) for m, v in den.items()}
        return Rat(num, self.poly_id(den))

    def neg(self, x: NF) -> NF:
        return Inf(-x.sign) if isinstance(x, Inf) else self.scale(x, -1)

    def sub(self, x: NF, y: NF) -> NF:
        return self.add(x, self.neg(y))

    def equal(self, x: NF, y: NF, budget: int = EXPAND_BUDGET, work: int = EXPAND_WORK_BUDGET) -> bool:
        """Whether two normal forms are equal functions; with let-atoms expanded when they are not
        equal as they stand (raises TooBig past the expansion budgets, `budget` monomials and `work` products)."""
        if self._equal(x, y):
            return True
        if not (self._has_let(x) or self._has_let(y)):
            return False
        self._budget = budget
        self._work = work
        try:
            if self._equal_canonical(x, y):
                return True
            self._budget = budget  # the next tries with the budgets they had before this one
            self._work = work
            if self._equal_atoms_expanded(x, y):
                return True
            self._budget = budget  # the whole expansion, with the budgets it had before
            self._work = work
            return self._equal(self.expand(x), self.expand(y))
        except TooBig:
            self.too_big += 1
            raise
        finally:
            self._work = None

    def _equal_canonical(self, x: NF, y: NF) -> bool:
        """A sufficient condition for equal(x, y) that expands no exp2 atom: with every atom
        renamed by _canon, x's and y's numerators and denominators are the same polynomials.
        cross_entropy_zloss's gradient elements each hold their own exp2(z_j - m - log2(S)), S a row sum the
        two kernels reduce differently: log2(S)'s expansion is made once per row, and each element's exp2
        atom is renamed by its polynomial's atoms, where _equal_atoms_expanded built its expansion (an exp2
        of an expanded polynomial, interned) per element. False when the renamed forms differ, or an
        expansion goes past a budget or has no real meaning: the caller then tries _equal_atoms_expanded
        and the whole expansion as before."""
        if isinstance(x, Inf) or isinstance(y, Inf) or (x.den is None) != (y.den is None) or len(x.num) != len(y.num):
            return False
        try:
            if _renamed_poly(x.num, self._canon) != _renamed_poly(y.num, self._canon):
                return False
            return x.den == y.den or _renamed_poly(self.polys[x.den], self._canon) == \
                _renamed_poly(self.polys[y.den], self._canon)
        except (TooBig, NoRealMeaning):
            return False

    def _canon(self, a: int) -> int:
        """A name of atom a such that equal names are equal functions: a itself (>= 0) when it holds no
        let-atom; else -1 - an interned id of an exp2 atom's polynomial with its atoms renamed by _canon
        (equal exponents, equal values), or of the key of any other atom's expansion (a let-atom, max, min,
        indicator or application: _expanded_key, equal keys, equal functions; these hold the sums that two
        kernels reduce differently, log2(S), [S > w], expanded once each). Kept per atom."""
        got = self._canon_names.get(a)
        if got is not None:
            return got
        if not self._atom_has_let(a):
            got = a
        else:
            kind, payload = self.atoms[a]
            if kind is AtomKind.EXP2:
                struct: tuple = (kind, self._canon_poly(self.polys[payload[0]]))
            else:
                struct = ("expanded", self._expanded_key(a))
            got = -1 - self._canon_id(struct)
        self._canon_names[a] = got
        return got

    def _canon_id(self, struct: tuple) -> int:
        got = self._canon_ids.get(struct)
        if got is None:
            got = self._canon_ids[struct] = len(self._canon_ids)
        return got

    def _canon_poly(self, p: Poly) -> int:
        """An id of polynomial p with its atoms renamed by _canon (equal ids, equal functions)."""
        return self._canon_id(("poly", frozenset(_renamed_poly(p, self._canon).items())))

    def _equal_atoms_expanded(self, x: NF, y: NF) -> bool:
        """A sufficient condition for equal(x, y), cheaper than expanding x and y: with each atom
        that is not in both forms replaced by the key of its expansion (_expand_atom: equal keys, equal
        functions), x's and y's numerators and denominators are the same polynomials (monomials kept as
        the products they are, their factors sorted; coefficients of equal renamed monomials added). Both forms of
        cross_entropy_zloss's gradient element hold one log2 of a differently nested sum (its
        let-atoms): the expansion multiplied every monomial out again (merging exp2 atoms) per element.
        False when they are not, or when an atom's expansion goes past a budget or has no real
        meaning: the caller then expands x and y as before."""
        if isinstance(x, Inf) or isinstance(y, Inf):  # one side's expansion decides (expand keeps +-inf)
            return False
        if x.den is None and y.den is None:
            pairs = [(x.num, y.num)]
        elif x.den is not None and y.den is not None:
            pairs = [(x.num, y.num), (self.polys[x.den], self.polys[y.den])]
        else:
            return False
        if any(len(a) != len(b) for a, b in pairs):
            return False
        # an atom of both forms stands for itself (id >= 0), any other for its expansion (-1 - key): the
        # same function either way, so equal renamed polynomials are equal functions
        atoms = [{m[i] for p in side for m in p for i in range(0, len(m), 2)} for side in zip(*pairs)]
        common = atoms[0] & atoms[1]

        def name(a: int) -> int:
            return a if a in common else -1 - self._expanded_key(a)

        try:
            return all(_renamed_poly(a, name) == _renamed_poly(b, name) for a, b in pairs)
        except (TooBig, NoRealMeaning):
            return False

    def _expanded_key(self, a: int) -> int:
        """The key of atom a's expansion (of the atom itself when it holds no let-atom), kept."""
        got = self._expanded_keys.get(a)
        if got is None:
            got = self._expanded_keys[a] = self.key(self._expand_atom(a) if self._atom_has_let(a) else Rat({(a, 1): 1}))
        return got

    def _equal(self, x: NF, y: NF) -> bool:
        if isinstance(x, Inf) or isinstance(y, Inf):
            return x == y
        if x.den == y.den:
            return _poly_eq(x.num, y.num)
        dx = self.polys[x.den] if x.den is not None else {(): 1}
        dy = self.polys[y.den] if y.den is not None else {(): 1}
        return _poly_eq(self.mul_poly(x.num, dy), self.mul_poly(y.num, dx))

    # ------------------------------------------------------------------ let-atoms
    def let(self, x: NF) -> NF:
        """x itself, or a let-atom standing for it when its normal form is big."""
        if not isinstance(x, Rat):  # +-inf, or a predicate's condition
            return x
        if x.den is None:  # flat first: a sum of four let-atoms is small, what it stands for is not
            x = self._flatten_lets(x)
        size = len(x.num) + (len(self.polys[x.den]) if x.den is not None else 0)
        if size <= LET_LIMIT:
            return x
        return Rat({(self.atom(AtomKind.LET, (self.key(x),)), 1): 1})

    def _flatten_lets(self, x: Rat) -> Rat:
        """x with each let-atom that is a whole monomial (c x L, L a polynomial) replaced by L's
        polynomial (an identity: L stands for it), within FLATTEN_LIMIT monomials. Let-atoms made
        here are flat already, so one level suffices."""
        alone = []
        grown = len(x.num)
        biggest = 0
        for m in x.num:
            if len(m) == 2 and m[1] == 1 and self.atoms[m[0]][0] is AtomKind.LET:
                inner = self.key_nf[self.atoms[m[0]][1][0]]
                if isinstance(inner, Rat) and inner.den is None:
                    alone.append((m, inner.num))
                    grown += len(inner.num) - 1
                    biggest = max(biggest, len(inner.num))
        # only a balanced merge (no let-atom more than half of the whole: two halves of a tree, a
        # butterfly's two partners), so each monomial is copied O(log n) times; a chain (a long prefix
        # plus a few elements) keeps its prefix nested, as it would be copied at every step
        if not alone or grown > FLATTEN_LIMIT or 2 * biggest > grown or self._flatten_budget < grown:
            return x
        self._flatten_budget -= grown
        num = dict(x.num)
        for m, inner in alone:  # c L -> c P: another let's polynomial may have cancelled c L in num already
            c = x.num[m]
            _add_into(num, {m: 1}, -c)
            _add_into(num, inner, c)
        return Rat(num)

    def _has_let(self, x: NF) -> bool:
        if isinstance(x, Inf):
            return False
        polys = [x.num] + ([self.polys[x.den]] if x.den is not None else [])
        return any(self._atom_has_let(m[i]) for p in polys for m in p for i in range(0, len(m), 2))

    def _atom_has_let(self, a: int) -> bool:
        got = self._lets.get(a)
        if got is None:
            kind, payload = self.atoms[a]
            if kind is AtomKind.LET:
                got = True
            elif kind is AtomKind.EXP2:
                got = any(self._atom_has_let(m[i]) for m in self.polys[payload[0]] for i in range(0, len(m), 2))
            elif kind in (AtomKind.MAX, AtomKind.MIN):
                got = any(self._has_let(self.key_nf[k]) for k in payload[0])
            elif kind is AtomKind.IND:
                c = payload[0]
                got = c[0] in ("gt", "eq") and any(self._atom_has_let(m[i]) for m in self.polys[c[1]]
                                                   for i in range(0, len(m), 2))
            elif kind is AtomKind.APP:
                got = any(self._has_let(self.key_nf[k]) for k in payload[1:])
            else:
                got = False
            self._lets[a] = got
        return got

    def expand(self, x: NF) -> NF:
        """x with every let-atom replaced by what it stands for, inside other atoms too."""
        if isinstance(x, Inf):
            return x
        num = self._expand_poly(x.num)
        if x.den is None:
            return num
        return self.div(num, self._expand_poly(self.polys[x.den]))

    def _expand_poly(self, p: Poly) -> NF:
        total: NF = Rat({})
        for m, c in p.items():
            term: NF = self.const(c)
            for i in range(0, len(m), 2):
                a, e = m[i], m[i + 1]
                f = self._expand_atom(a)
                for _ in range(abs(e)):
                    term = self.mul(term, f if e > 0 else self.recip(f))
            in_place = isinstance(total, Rat) and isinstance(term, Rat) and term.den == total.den
            total = self.add(total, term, own_x=True)
            # charge the monomials produced: the term's when it was added in place, else the sum's
            self._budget -= (len(term.num) if in_place else len(total.num)) if isinstance(total, Rat) else 1
            if self._budget < 0:
                raise TooBig("expanding let-atoms exceeded the budget")
            _check_time("expanding let-atoms to compare normal forms")
        return total

    def _expand_atom(self, a: int) -> NF:
        got = self._expanded.get(a)
        if got is not None:
            return got
        kind, payload = self.atoms[a]
        if not self._atom_has_let(a):
            r: NF = Rat({(a, 1): 1})
        elif kind is AtomKind.LET:
            r = self.expand(self.key_nf[payload[0]])
        elif kind is AtomKind.EXP2:
            r = self.exp2(self._expand_poly(self.polys[payload[0]]))
        elif kind in (AtomKind.MAX, AtomKind.MIN):
            r = self.extremum(kind is AtomKind.MAX, [self.expand(self.key_nf[k]) for k in payload[0]])
        elif kind is AtomKind.IND:
            c = payload[0]
            r = self.indicator((c[0], self._poly_of(self._expand_poly(self.polys[c[1]]))))
        else:
            fn, *args = payload
            r = self.app(fn, *[self.expand(self.key_nf[k]) for k in args])
        size = len(r.num) + (len(self.polys[r.den]) if r.den is not None else 0) if isinstance(r, Rat) else 1
        if self._expanded_size + size > EXPANDED_CACHE_LIMIT:
            self._expanded.clear()
            self._expanded_size = 0
            self.cache_resets += 1
        self._expanded[a] = r
        self._expanded_size += size
        return r

    def _poly_of(self, x: NF) -> Poly:
        if isinstance(x, Inf) or x.den is not None:
            raise TooBig("a condition with a denominator after expansion")
        return x.num

    # ------------------------------------------------------------------ atoms with structure
    def exp2(self, x: NF) -> NF:
        if isinstance(x, Inf):
            return Rat({}) if x.sign < 0 else POS_INF
        if x.den is not None:
            return self.app("exp2", x)
        a, c = self.exp2_atom(x.num)
        return self.const(c) if a is None else Rat({(a, 1): c})

    def app(self, fn: str, *args: NF) -> NF:
        # arguments with let-atoms flattened as a let-atom's own polynomial is (one sum reduced by two
        # trees, then sqrt of it: one atom)
        args = tuple(self._flatten_lets(a) if isinstance(a, Rat) and a.den is None else a for a in args)
        return Rat({(self.atom(AtomKind.APP, (fn, *(self.key(a) for a in args))), 1): 1})

    def extremum(self, is_max: bool, args: list[NF]) -> NF:
        kind = AtomKind.MAX if is_max else AtomKind.MIN
        members: set[int] = set()
        consts: list[Coef] = []
        for a in args:
            if isinstance(a, Inf):
                if (a.sign > 0) == is_max:
                    return a  # max(x, +inf) = +inf
                continue  # max(x, -inf) = x
            c = _constant(a)
            if c is not None:
                consts.append(c)
                continue
            inner = self._single_atom(a)
            if inner is not None and self.atoms[inner][0] is kind:
                members.update(self.atoms[inner][1][0])
            else:
                members.add(self.key(a))
        if consts:
            members.add(self.key(self.const(max(consts) if is_max else min(consts))))
        if not members:
            return NEG_INF if is_max else POS_INF
        if len(members) == 1:
            (k,), = [tuple(members)]
            return self._copy(self.key_nf[k])
        return Rat({(self.atom(kind, (frozenset(members),)), 1): 1})

    def _single_atom(self, a: Rat) -> int | None:
        if a.den is None and len(a.num) == 1:
            (m, c), = a.num.items()
            if c == 1 and len(m) == 2 and m[1] == 1:
                return m[0]
        return None

    @staticmethod
    def _copy(x: NF) -> NF:
        return Rat(dict(x.num), x.den) if isinstance(x, Rat) else x  # +-inf, a predicate's condition: as they are

    def ite(self, cond: tuple, then: NF, other: NF) -> NF:
        """if cond then `then` else `other`; cond is ("gt", P) (P > 0), ("eq", P) or ("atom", key):
        a max/min where it is one, else other + (then - other) * [cond]."""
        if self._same(then, other):
            return then
        kind, p = cond
        if kind == "gt" and not isinstance(then, Inf) and not isinstance(other, Inf):
            diff = self.sub(then, other)
            if isinstance(diff, Rat) and diff.den is None:
                if _proportional(diff.num, p, positive=True):  # then - other > 0 ? then : other
                    return self.extremum(True, [then, other])
                if _proportional(diff.num, {m: -v for m, v in p.items()}, positive=True):
                    return self.extremum(False, [then, other])
        if kind in ("gt", "eq"):
            if not p:  # 0 > 0 is false, 0 == 0 is true
                return then if kind == "eq" else other
            if self._positive(p):  # a sum of exponentials is > 0, never 0 (an online softmax's `s == 0 ? ...`)
                return then if kind == "gt" else other
            if all(m == () for m in p):
                c = p[()]
                return then if ((c > 0) if kind == "gt" else False) else other
        ind = self.indicator(cond)
        if isinstance(then, Inf) or isinstance(other, Inf):
            # an infinity under a data-dependent condition has no real normal form: the value is the
            # uninterpreted application ite([cond], then, other), a function of its arguments' normal
            # forms (equal indicators and branches, equal values; a masked lane's `where(col == y, -inf,
            # 0)` is one value however each build spelled `col == y`)
            return self.app("ite", ind, then, other)
        if other.den is None and not other.num:
            # a select of a value or 0 (Triton's where(mask, x, 0)): then [cond] directly, the form that
            # 0 + (then - 0) [cond] comes to (each step copies then's polynomial), as a new one
            r = self.mul(then, ind)
            return self._copy(r) if r is then else r
        return self.add(other, self.mul(self.sub(then, other), ind), own_x=False)

    def _positive(self, p: Poly, depth: int = 4) -> bool:
        """Is polynomial p > 0 for every real value of its atoms: positive coefficients, and every
        monomial a product of exp2 atoms (exp2 of a real is > 0) and of let-atoms that are such sums?"""
        for m, c in p.items():
            if c <= 0:
                return False
            for j in range(0, len(m), 2):
                kind, payload = self.atoms[m[j]]
                if kind is AtomKind.EXP2:
                    continue
                if kind is AtomKind.LET and depth:
                    x = self.key_nf[payload[0]]
                    if isinstance(x, Rat) and x.den is None and x.num and self._positive(x.num, depth - 1):
                        continue
                return False
        return bool(p)

    def indicator(self, cond: tuple) -> NF:
        """[cond] as a normal form: an IND atom, or 1 minus one (the normalised polarity)."""
        kind, p = cond
        negate = False
        if kind == "gt":  # scale by |leading coefficient|: the sign is kept
            lead = p[max(p)]
            key: tuple = ("gt", self.poly_id({m: _tidy(v / abs(lead)) for m, v in p.items()}) if abs(lead) != 1
                          else self.poly_id(p))
        elif kind == "eq":
            lead = p[max(p)]
            key = ("eq", self.poly_id({m: _tidy(v / lead) for m, v in p.items()}) if lead != 1 else self.poly_id(p))
        elif isinstance(p, tuple) and p and p[0] == "table":
            _, leaves, table = p
            leaves, bits = self._read_leaves(leaves, np.frombuffer(table, np.uint64))
            if not leaves:  # reads none of its inputs
                return self.const(int(bits[0] != 0))
            if bits[0] != 0:  # polarity: false on the first assignment
                negate = True
                table = (bits == 0).astype(np.uint64).tobytes()
            else:
                table = (bits != 0).astype(np.uint64).tobytes()
            key = ("table", leaves, table)
        else:
            key = ("term", p)
        a = self.atom(AtomKind.IND, (key,))
        ind = Rat({(a, 1): 1})
        return self.sub(self.const(1), ind) if negate else ind

    def _read_leaves(self, leaves: tuple, bits: np.ndarray) -> tuple[tuple, np.ndarray]:
        """A table over input leaves restricted to the leaves it depends on (the same function of the
        same inputs, the same key however many other leaves the term looked at)."""
        widths = [SORTS[int(self.T.sort[leaf])].width for leaf in leaves]
        a = bits.reshape([1 << w for w in reversed(widths)])  # the first leaf is the last (fastest) axis
        keep = []
        for j, leaf in enumerate(leaves):
            ax = len(leaves) - 1 - j
            first = np.take(a, [0], axis=ax)
            if (a == first).all():
                a = first
            else:
                keep.append(leaf)
        if len(keep) == len(leaves):
            return leaves, bits
        return tuple(keep), np.ascontiguousarray(a).reshape(-1)

    def _same(self, a: NF, b: NF) -> bool:
        if isinstance(a, Inf) or isinstance(b, Inf):
            return a == b
        return a.den == b.den and _poly_eq(a.num, b.num)

    # ------------------------------------------------------------------ shared subterms as atoms
    def equal_sharing(self, c: int, r: int) -> bool:
        """A sufficient condition for the terms c and r being equal functions, cheaper than their normal forms
        when the two share most of their DAGs (two builds of one kernel: FlashAttention's scores q.k, the same
        hash-consed nodes on both sides, are 97 % of each output's 18 700 nodes): every node below both roots
        whose value is a finite real for every input (`_finite_node`) stands for itself, an uninterpreted atom
        (AtomKind.TERM, by term id; the same atom on both sides), and only the nodes above these are normalised.
        Equal normal forms are then equal as polynomials in those atoms, so equal for every value of them, in
        particular for the values the shared nodes take (a substitution of reals for atoms; why the atoms must be
        finite: x - x + y is y for every real x, not for x = -inf). False when the forms differ (an identity that
        needs what is inside a shared node: the caller normalises the whole terms as before), or on a budget or a
        term without a real meaning. The forms made here are kept nowhere (memo, kept roots and reciprocals are
        this call's own), so they never stand for a term elsewhere."""
        from semantics.termeval import child_ids, subgraph

        T = self.T
        sc, sr = subgraph(T, np.array([c], np.int64)), subgraph(T, np.array([r], np.int64))
        common = np.intersect1d(sc, sr, assume_unique=True)
        if not common.size:
            return False
        fin = self._finite_nodes(common)
        atoms = common[fin & (T.op[common] != Op.CONST) & (T.op[common] != Op.INPUT)
                       & _float_sorts()[T.sort[common]] & (common != c) & (common != r)]  # a root is normalised
        if not atoms.size:
            return False
        region = subgraph(T, np.array([c, r], np.int64), stop=atoms.tolist())
        if SHARING_REGION * region.size > sc.size + sr.size:  # little is shared: the whole forms (their memo
            return False  # keeps a row's sums for every element of it; this call's forms are its own)
        front = np.intersect1d(child_ids(T, region), atoms)
        saved = self.memo, self._root_nfs, self._recips
        self.memo = {t: Rat({(self.atom(AtomKind.TERM, (t,)), 1): 1}) for t in front.tolist()}
        self._root_nfs, self._recips = None, {}
        try:
            x, y = self._of(np.array([c, r], np.int64), region)
            # a small expansion only: where the atoms hide what makes two sums equal (partial sums of two
            # reduction trees shared as atoms), expanding the rest cannot show it, and the whole forms follow
            return self.equal(x, y, SHARING_BUDGET, SHARING_WORK)
        except (TooBig, NoRealMeaning):
            return False
        finally:
            self.memo, self._root_nfs, self._recips = saved

    def _finite_nodes(self, nodes: np.ndarray) -> np.ndarray:
        """Per node of `nodes` (sorted ids, closed under children: a subgraph, or the nodes two subgraphs share),
        whether its real value is finite for every input by its structure alone: finite float constants,
        integer and predicate constants, inputs (finite by REAL_ASSUMPTIONS), and +, -, *, fma, mma of float
        operands, neg, abs, min, max, exp2, float conversions and if-then-else of such nodes (a real reading of
        finite reals; its overflow is the precision check's, as for every node). Anything else (an infinite
        constant, a division, log2, sqrt, a float made of bits, an opaque value) is not. Kept per node."""
        T = self.T
        if self._fin.size < len(T):
            grown = np.full(max(len(T), 2 * self._fin.size), -1, np.int8)
            grown[:self._fin.size] = self._fin
            self._fin = grown
        fin = self._fin
        todo = nodes[fin[nodes] < 0]
        if todo.size:
            self._float_sort = _float_sorts()
            ops, sorts = T.op[todo].tolist(), T.sort[todo].tolist()
            offs, nks = T._off.a[todo].tolist(), T.nkids[todo].tolist()
            kidcol = T._kids.a
            for i, op, so, o, n in zip(todo.tolist(), ops, sorts, offs, nks):
                fin[i] = self._finite_node(i, op, so, kidcol[o:o + n].tolist(), fin)
        return fin[nodes] == 1

    def _finite_node(self, i: int, op: int, so: int, kids: list, fin: np.ndarray) -> int:
        sort = SORTS[so]
        if op == Op.CONST:
            if sort.kind is not Kind.FLOAT:
                return 1
            return int(_finite(int(self.T.aux[i]) & ((1 << sort.width) - 1), get_format(sort.fmt)))
        if op == Op.INPUT:
            return 1
        if sort.kind is not Kind.FLOAT:
            return 0
        if op == Op.ITE:  # either branch's value; the condition is a predicate
            kids = kids[1:]
        elif op == Op.CVT:
            dst, src = mods(int(self.T.aux[i])).elems
            if any(t[0] in "bus" and t[1:].isdigit() for t in (dst, src)):  # to or from integers: not followed
                return 0
        elif op == Op.MMA:  # float operands only (packed bits may hold any pattern)
            if not self._float_sort[self.T.sort[kids]].all():
                return 0
        elif op not in _FINITE_OPS:
            return 0
        return int(all(fin[k] == 1 for k in kids))

    # ------------------------------------------------------------------ congruence above the differing subterms
    def congruence_pairs(self, c: int, r: int, limit: int = CONGRUENCE_NODES) -> list[tuple[int, int]] | None:
        """The pairs of subterms (a of c, b of r) where the two terms first differ, walking down from the roots
        through nodes of one float operation (_CONGRUENT: +, -, *, fma, neg, abs, min, max, exp2, mma, float
        conversions, if-then-else) with the same sort, modifiers and arity whose differing children are floats
        (an if-then-else's condition, an mma's packed operands, a conversion from integers: the same node on both
        sides, or the pair stops there); None past `limit` pairs or where the roots themselves are the only pair.
        If every returned pair is equal (for every input, in the real reading), so are c and r: each node on the
        way is the same function (the real reading of its operation, which reads its children's values only) of
        children that are pairwise equal or the same node, so equal by induction (congruence; no atom stands for
        anything and no finiteness is needed, unlike equal_sharing's substitution). Commutative operands (interned
        sorted by id) are paired by a shared operand where one is. A pair of nodes that both have several users (a
        row's sum, read by each element of the row) is not walked into: it is one pair, decided once for them all, and
        a node with several users keeps its normal form (memo) for the next pair that holds it."""
        T = self.T
        if not self._float_sort.size:  # (a sort registered after it was made reads as not float: not walked)
            self._float_sort = _float_sorts()
        fl = self._float_sort
        op_, sort_, aux_ = T.op, T.sort, T.aux
        shared = self._users()
        n_shared = shared.size
        out: list[tuple[int, int]] = []
        stack, seen = [(c, r)], set()
        while stack:
            a, b = stack.pop()
            if a == b or (a, b) in seen:
                continue
            seen.add((a, b))
            if len(seen) > limit:
                return None
            o = int(op_[a])
            if (a, b) != (c, r) and a < n_shared and b < n_shared and shared[a] and shared[b]:
                out.append((a, b))  # both used by several nodes (a row's sum): one pair for all its users
                continue
            if o == int(op_[b]) and o in _CONGRUENT and sort_[a] == sort_[b] and aux_[a] == aux_[b] \
                    and fl[sort_[a]]:
                ka, kb = T.kids(a), T.kids(b)
                if len(ka) == len(kb):
                    if len(ka) == 2 and o in _COMMUTATIVE_OPS and (ka[0] == kb[1] or ka[1] == kb[0]):
                        kb = (kb[1], kb[0])
                    pairs = [(x, y) for x, y in zip(ka, kb) if x != y]
                    if all(sort_[x] == sort_[y] and fl[sort_[x]] for x, y in pairs):
                        stack.extend(pairs)
                        continue
            out.append((a, b))
        return None if out == [(c, r)] else out

    def equal_congruent(self, cs: list[int], rs: list[int]) -> np.ndarray:
        """Per element (cs[j], rs[j]), whether it is proved by congruence_pairs: every pair where the two terms
        differ has equal normal forms (the whole procedure, `of` and `equal`, on the pair's subterms; a pair is
        decided once per normalizer: its terms never change). A pair without a real meaning or past a budget is not
        proved; the element is then compared as a whole by the caller, as before."""
        self._float_sort = _float_sorts()  # sorts are registered as they are first made
        walks = [self.congruence_pairs(c, r) for c, r in zip(cs, rs)]
        known = self._congruent
        fresh = sorted({p for w in walks if w for p in w if p not in known})
        if fresh:
            roots = np.array([x for p in fresh for x in p], np.int64)
            try:
                nfs = self.of(roots)
                got = [(nfs[2 * j], nfs[2 * j + 1]) for j in range(len(fresh))]
            except NoRealMeaning:  # one pair's: each on its own
                got = []
                for a, b in fresh:
                    try:
                        got.append(tuple(self.of(np.array([a, b], np.int64))))
                    except NoRealMeaning:
                        got.append(None)
            for p, xy in zip(fresh, got):
                try:
                    known[p] = xy is not None and self.equal(*xy)
                except TooBig:
                    known[p] = False
        return np.array([bool(w) and all(known[p] for p in w) for w in walks], bool)

    _congruent: dict  # (a, b) -> whether their normal forms are equal (equal_congruent), set in __init__

    _fin = np.zeros(0, np.int8)  # per node: 1 finite (_finite_node), 0 not, -1 not known yet
    _float_sort = np.zeros(0, bool)

    # ------------------------------------------------------------------ terms
    def _users(self) -> np.ndarray:
        """Per node of the store, whether more than one node of the whole store uses it (recounted when the
        store grew; _shared_children, a bool per node). Up to 2026-12-06 a bincount of the whole child column:
        its intp copy and int64 counts were 950 MiB at FlashAttention's S = 512 (28.8 M nodes, 3.4 GiB peak)."""
        T = self.T
        if self._users_n != len(T):
            self._shared = _shared_children(T._kids.a[:T._kids.n], len(T))
            self._users_n = len(T)
        return self._shared

    _users_n = -1

    def of(self, roots: np.ndarray) -> list[NF]:
        """Normal forms of term ids `roots` (computed bottom-up over their subgraph). Nodes used by
        more than one node of the store keep their normal form (self.memo) for later calls; with
        `keep_roots`, the roots too."""
        roots = np.asarray(roots, np.int64)
        known = self._root_nfs
        if not known:
            return self._of(roots)
        ids = roots.tolist()
        hit = [known.get(r) for r in ids]
        missing = [r for r, h in zip(ids, hit) if h is None]
        self.root_hits += len(ids) - len(missing)
        fresh = iter(self._of(np.array(missing, np.int64)) if missing else ())
        return [self._copy(h) if h is not None else next(fresh) for h in hit]

    def _of(self, roots: np.ndarray, nodes: np.ndarray | None = None) -> list[NF]:
        """`of` without kept roots; `nodes`: the roots' subgraph below self.memo where the caller has it."""
        from semantics.termeval import child_ids, subgraph

        T = self.T
        shared = self._users()
        if nodes is None:
            nodes = subgraph(T, roots, stop=self.memo)
        # how many users each node has inside this subgraph: a sum used once is extended in place
        nk = T.nkids[nodes].astype(np.int64)
        kids = child_ids(T, nodes)
        # per node of the subgraph, by id (a dict: an array of the store's length was 230 MiB per call at 28.8 M nodes)
        u, c = np.unique(kids, return_counts=True)
        remaining: dict[int, int] = dict(zip(u.tolist(), c.tolist()))
        for r in roots.tolist():  # roots are kept
            remaining[r] = remaining.get(r, 0) + 1
        local: dict[int, NF] = {}
        n_shared = shared.size
        ops = [_OPS[o] for o in T.op[nodes].tolist()]
        sorts = [SORTS[x] for x in T.sort[nodes].tolist()]
        ends = np.cumsum(nk).tolist()
        flat = kids.tolist()
        start = 0
        for j, i in enumerate(nodes.tolist()):
            end = ends[j]
            kids = tuple(flat[start:end])
            try:
                nf = self._node(i, ops[j], sorts[j], kids, local, remaining)
            except Undefined:  # an infinity with no determined real result (x * inf, inf - inf): this
                # term's value, uninterpreted (the same term on both sides is still the same value)
                for k in kids:
                    if k in local:
                        remaining[k] -= 1
                        if remaining[k] <= 0:
                            del local[k]
                nf = Rat({(self.atom(AtomKind.TERM, (i,)), 1): 1})
            start = end
            if i < n_shared and shared[i]:
                self.memo[i] = self.let(nf)
            else:
                local[i] = nf
        if self._root_nfs is not None:
            self._keep_roots(roots, local)
        return [self._copy(local[int(r)] if int(r) in local else self.memo[int(r)]) for r in roots]

    def _keep_roots(self, roots: np.ndarray, local: dict) -> None:
        """The roots' normal forms made by this call, for later calls (those of shared nodes are in memo already).
        Kept as made: `of` hands out copies, so no caller changes them."""
        for r in roots.tolist():
            nf = local.get(r)
            if nf is None:
                continue
            size = len(nf.num) + (len(self.polys[nf.den]) if nf.den is not None else 0) if isinstance(nf, Rat) else 1
            if self._root_size + size > ROOT_CACHE_LIMIT:
                self._root_nfs.clear()
                self._root_size = 0
            self._root_nfs[r] = nf
            self._root_size += size

    def _get(self, k: int, local: dict, remaining: dict) -> tuple[NF, bool]:
        """A child's normal form and whether the caller may take it over (its last user)."""
        got = local.get(k)
        if got is None:
            return self.memo[k], False
        remaining[k] -= 1
        if remaining[k] <= 0:
            del local[k]
            return got, True
        return got, False

    def _node(self, i: int, op: Op, sort, kids: tuple, local: dict, remaining: dict) -> NF:
        T = self.T
        self.steps += 1

        def kid(j: int) -> NF:
            return self._get(kids[j], local, remaining)[0]

        if sort.kind is Kind.PRED:
            return self._pred(i, op, kids, local, remaining)
        if op is Op.CONST:
            return self._const(i, sort)
        if op is Op.INPUT:
            if sort.kind is Kind.FLOAT:
                return Rat({(self.atom(AtomKind.LEAF, (i,)), 1): 1})
            return self._int_atom(i, False)
        if op is Op.OPAQUE:
            raise NoRealMeaning(f"opaque value #{i}")
        m = mods(int(T.aux[i]))
        if op in (Op.FADD, Op.FSUB):
            a, own = self._get(kids[0], local, remaining)
            b, _ = self._get(kids[1], local, remaining)
            if op is Op.FSUB:
                b = self.neg(b)
            r = self.add(a, b, own_x=own)
            return self._sat(r, m)
        if op is Op.FMUL:
            return self._sat(self.mul(kid(0), kid(1)), m)
        if op is Op.FFMA:
            a, b = kid(0), kid(1)
            c, own = self._get(kids[2], local, remaining)
            r = self.add(c, self.mul(a, b), own_x=own)
            if m.relu:
                r = self.extremum(True, [r, Rat({})])
            return self._sat(r, m)
        if op is Op.MMA:
            k = (len(kids) - 1) // 2
            acc, own = self._get(kids[0], local, remaining)
            acc = acc if own else self._copy(acc)
            a_t, b_t, c_t = m.elems
            for q in range(k):
                x = self._operand(kids[1 + q], a_t, local, remaining)
                y = self._operand(kids[1 + k + q], b_t, local, remaining)
                if not self._plain_product_into(acc, x, y):
                    acc = self.add(acc, self.mul(x, y), own_x=True)
            if c_t == "s32" and self._int_mma_bound(i) is None:
                # the sum may leave int32: its value is the exact sum wrapped (or, .satfinite, clamped) to
                # 32 bits (9.7.14.5.14, 9.7.15.5.2), a function of the exact sum, not the sum itself
                return self.app("mma.s32.satfinite" if m.sat else "mma.s32.wrap", acc)
            return acc
        if op is Op.SCALE:
            return self._scaled(kids, m, local, remaining)
        if op is Op.FNEG:
            return self.neg(kid(0))
        if op is Op.FABS:
            return self._abs(kid(0))
        if op in (Op.FMIN, Op.FMAX):
            return self.extremum(op is Op.FMAX, [kid(0), kid(1)])
        if op is Op.FDIV:
            x = kid(0)
            return self.mul(x, self._recip_of(kids[1], local, remaining))
        if op is Op.FRCP:
            return self._recip_of(kids[0], local, remaining)
        if op is Op.FEX2:
            return self.exp2(kid(0))
        if op is Op.FSQRT:
            return self.app("sqrt", kid(0))
        if op is Op.FRSQRT:
            return self.recip(self.app("sqrt", kid(0)))
        if op is Op.FLG2:
            return self._log2(kid(0))
        if op in (Op.FSIN, Op.FCOS, Op.FTANH, Op.FCOPYSIGN):
            return self.app(op.name[1:].lower(), *[kid(j) for j in range(len(kids))])
        if op is Op.CVT:
            return self._cvt(i, kids, m, sort, local, remaining)
        if op is Op.FLOAT:
            return self._float_view(kids[0], sort, local, remaining)
        if op is Op.ITE:
            ln = self._libdevice_log(i, sort, kids, local, remaining)
            if ln is not None:
                return ln
            cond = kid(0)
            if sort.kind is not Kind.FLOAT:  # an if-then-else of bits: its integer value, an atom
                kid(1), kid(2)
                return Rat({(self.atom(AtomKind.INT, (i, False)), 1): 1})
            return self._ite(cond, kid(1), kid(2))
        for j in range(len(kids)):  # bit-vector operations: the integer value of the term, an atom
            kid(j)  # (its function table is made only where a number or a condition is read from it)
        return Rat({(self.atom(AtomKind.INT, (i, False)), 1): 1})

    def _plain_product_into(self, acc: NF, x: NF, y: NF) -> bool:
        """acc += x * y in place, for x and y each one plain atom's power times a coefficient (an integer MMA's
        operands, PTX 9.7.14.5.14: sage_attention's int8 products, 86 % of its cross-target proof in mul) and acc a
        polynomial (no denominator): exactly what add(acc, mul(x, y), own_x=True) makes there (mul_poly's one
        product, by _mono_mul's rule for two atoms outside _special, coefficient ca * cb; _add_into's sum), without
        the normal forms between. False, with nothing done, for anything else (a budgeted expansion: _work)."""
        if acc.__class__ is not Rat or x.__class__ is not Rat or y.__class__ is not Rat or self._work is not None \
                or acc.den is not None or x.den is not None or y.den is not None or len(x.num) != 1 or len(y.num) != 1:
            return False
        (ma, ca), = x.num.items()
        (mb, cb), = y.num.items()
        special = self._special
        if len(ma) != 2 or len(mb) != 2 or ma[0] in special or mb[0] in special:
            return False
        mono, _ = _mono_mul(ma, mb, self._merge_exp2, special)  # two plain atoms: its direct rule, coefficient 1
        _add_into(acc.num, {mono: ca * cb}, 1)
        return True

    def _scaled(self, kids: tuple, m, local: dict, remaining: dict) -> NF:
        """A block-scaled element x * scale(s) (PTX 9.7.14.3; scale formats 5.2.3), s the scale byte's integer
        value (an atom, or a constant). ue8m0: x * exp2(s) * 2^-127 (exp2_atom pulls a constant out as a power
        of two); 0xFF is NaN. ue4m3: a constant's exact value, else the uninterpreted `ue4m3(s)` (equal bytes,
        equal scales); 0x7F is NaN and bit 7 must be clear. A constant NaN code has no real meaning; a
        data-dependent byte is assumed to be a number (UE8M0_ASSUMPTION / UE4M3_ASSUMPTION)."""
        stype = m.elems[1]
        if stype not in ("ue8m0", "ue4m3"):
            raise NoRealMeaning(f"a .{stype} scale factor")
        x, _ = self._get(kids[0], local, remaining)
        self._get(kids[1], local, remaining)
        s = self._int_atom(kids[1], False)
        if isinstance(s, Rat) and s.den is None and set(s.num) <= {()}:
            code = int(s.num.get((), 0))
            if stype == "ue8m0":
                if code == 0xFF:
                    raise NoRealMeaning("a ue8m0 scale factor 0xFF (NaN, PTX 5.2.3)")
                return self.mul(x, self.exp2(self.const(code - 127)))
            if code & 0x80 or code == 0x7F:
                raise NoRealMeaning(f"a ue4m3 scale factor {code:#04x} (NaN or not a 7-bit code, PTX 5.2.3)")
            return self.mul(x, self.const(bits_to_fraction(code, get_format("e4m3"))))
        assumption = UE8M0_ASSUMPTION if stype == "ue8m0" else UE4M3_ASSUMPTION
        if assumption not in self.assumptions:
            self.assumptions.append(assumption)
        if stype == "ue8m0":
            return self.mul(x, self.exp2(self.add(s, self.const(-127))))
        return self.mul(x, self.app("ue4m3", s))

    def _log2(self, x: NF) -> NF:
        a = self._single_atom(x) if isinstance(x, Rat) else None
        if a is not None and self.atoms[a][0] is AtomKind.EXP2:  # lg2(ex2(P)) = P
            return Rat(dict(self.polys[self.atoms[a][1][0]]))
        return self.app("log2", x)

    def _libdevice_log(self, i: int, sort, kids: tuple, local: dict, remaining: dict) -> NF | None:
        """libdevice's __nv_logf(x) as log2(x) * RN_f32(ln 2) (proofs/libdevice.py, an assumption), or
        None for any other if-then-else (or when x's normal form was not kept)."""
        if sort.kind is not Kind.FLOAT or sort.width != 32:
            return None
        from .libdevice import LN2_F32, LOGF_ASSUMPTION, logf_argument

        x = logf_argument(self.T, i)
        if x is None:
            return None
        nx = local.get(x, self.memo.get(x))
        if nx is None:
            return None
        for k in kids:  # the if-then-else's own children are not read
            self._get(k, local, remaining)
        if LOGF_ASSUMPTION not in self.assumptions:
            self.assumptions.append(LOGF_ASSUMPTION)
        ln2 = bits_to_fraction(LN2_F32, get_format("f32"))
        return self.mul(self._log2(self._copy(nx)), self.const(ln2))

    def _pred(self, i: int, op: Op, kids, local, remaining) -> tuple:
        """A predicate's normal form, a condition: ("gt", P) for P > 0, ("eq", P), ("not", c),
        ("and"/"or"/"xor", c, d), ("const", b), or ("atom", term id) for a bit-level predicate."""
        T = self.T
        got = [self._get(k, local, remaining)[0] for k in kids]
        if op is Op.PNOT:
            return ("not", got[0])
        if op in (Op.PAND, Op.POR, Op.PXOR):
            return ({Op.PAND: "and", Op.POR: "or", Op.PXOR: "xor"}[op], got[0], got[1])
        if op is Op.CONST:
            return ("const", bool(int(T.aux[i]) & 1))
        if op is Op.CMP and SORTS[int(T.sort[kids[0]])].kind is Kind.FLOAT:
            cmp = mods(int(T.aux[i])).cmp
            x, y = got
            if cmp in ("num", "nan") or isinstance(x, Inf) or isinstance(y, Inf):
                return ("atom", i)
            cmp = cmp.rstrip("u") if cmp not in ("eq", "ne") else cmp  # no NaN in reals: ltu = lt
            d = self.sub(x, y)  # the sign of x - y: num * den has it (den^2 > 0)
            p = d.num if d.den is None else self.mul_poly(d.num, self.polys[d.den])
            neg = {mm: -v for mm, v in p.items()}
            return {"gt": ("gt", p), "lt": ("gt", neg), "ge": ("not", ("gt", neg)), "le": ("not", ("gt", p)),
                    "eq": ("eq", p), "ne": ("not", ("eq", p))}[cmp]
        if self._wide_equality(i):  # no table (table()), and no bit of +-x + c is a predicate's (_bit_of
            return ("atom", self._bits_cmp(i))  # stops at add, sub, neg and leaves): _packed_cmp's None
        table = self.table(i)
        if table is not None:
            return ("atom", table)
        packed = self._packed_cmp(i)
        return packed if packed is not None else ("atom", self._bits_cmp(i))

    def _packed_cmp(self, i: int) -> tuple | None:
        """A comparison `x == c` / `x != c` (c a constant) whose every bit of x is a constant or one
        predicate's value (a predicate packed into a bit mask by selp/shl/or and read back by shr/and, as
        Triton does for sm_89's masks), as the conjunction of those predicates' conditions; None when a
        bit is neither or more than PACKED_PREDICATES predicates take part. Bit by bit, PTX 9.7.8.x."""
        T = self.T
        m = mods(int(T.aux[i]))
        if int(T.op[i]) != Op.CMP or m.cmp not in ("eq", "ne"):
            return None
        a, b = T.kids(i)
        if int(T.op[a]) == Op.CONST:
            a, b = b, a
        w = SORTS[int(T.sort[a])].width
        if int(T.op[b]) != Op.CONST or int(T.op[a]) == Op.CONST or w > 64 or SORTS[int(T.sort[b])].width != w:
            return None
        c = int(T.aux[b]) & ((1 << w) - 1)
        need: dict[int, bool] = {}  # predicate term -> the value x == c needs of it
        equal: bool = True
        for j in range(w):
            bit = self._bit(a, j, PACKED_DEPTH)
            if bit is None:
                return None
            cj = (c >> j) & 1
            if isinstance(bit, int):
                equal = equal and bit == cj
                continue
            pred, flip = bit
            want = bool(cj ^ flip)
            if need.setdefault(pred, want) != want:
                equal = False
            if len(need) > PACKED_PREDICATES:
                return None
        if not equal:
            cond: tuple = ("const", False)
        else:
            cond = ("const", True)
            for pred, want in sorted(need.items()):
                got = self._cond_of(pred)
                got = got if want else ("not", got)
                cond = got if cond == ("const", True) else ("and", cond, got)
        return cond if m.cmp == "eq" else ("not", cond)

    def _cond_of(self, pred: int) -> tuple:
        """The condition of predicate term `pred` (normalised on its own when no user kept it)."""
        got = self.memo.get(pred)
        if got is None:
            (got,) = self.of(np.array([pred], np.int64))
        return got

    def _bit(self, k: int, j: int, depth: int) -> int | tuple[int, bool] | None:
        """Bit j of bit-vector term k: 0 or 1 for every input, (p, flip) when it is predicate p's value
        (xor flip), None when it is neither or deeper than `depth`. Memoised per (term, bit)."""
        key = (k, j)
        memo = self._bit_memo
        got = memo.get(key, memo)  # (memo itself: not there; None is an answer)
        if got is not memo:
            return got
        got = self._bit_of(k, j, depth) if depth > 0 else None
        if got is not None or depth >= PACKED_DEPTH:  # a None found with less depth may be found with more
            memo[key] = got
        return got

    def _bit_row(self, k: int) -> tuple[int, object, tuple[int, ...], int]:
        """Term k's (op, sort, kids, aux), kept (_bit_rows)."""
        got = self._bit_rows.get(k)
        if got is None:
            T = self.T
            got = self._bit_rows[k] = (int(T.op[k]), SORTS[int(T.sort[k])], T.kids(k), int(T.aux[k]))
        return got

    def _bit_of(self, k: int, j: int, depth: int) -> int | tuple[int, bool] | None:
        op, sort, kids, aux = self._bit_row(k)
        w = sort.width
        if j >= w or w > 64:
            return None
        if op == Op.CONST:
            return (aux >> j) & 1
        d = depth - 1
        if op == Op.ITE and self._bit_row(kids[0])[1].kind is Kind.PRED:  # selp (9.7.9.x)
            x, y = self._bit(kids[1], j, d), self._bit(kids[2], j, d)
            if isinstance(x, int) and isinstance(y, int):
                return x if x == y else (kids[0], x == 0)
            return None
        if op == Op.NOT:
            x = self._bit(kids[0], j, d)
            return _bit_not(x)
        if op == Op.AND or op == Op.OR or op == Op.XOR:
            x = self._bit(kids[0], j, d)
            if isinstance(x, int) and op != Op.XOR and x == (0 if op == Op.AND else 1):
                return x  # 0 & y = 0, 1 | y = 1
            y = self._bit(kids[1], j, d)
            if isinstance(y, int) and op != Op.XOR and y == (0 if op == Op.AND else 1):
                return y
            if x is None or y is None:
                return None
            if isinstance(x, tuple) and isinstance(y, tuple):
                return None  # two predicates in one bit: not followed
            if isinstance(x, tuple):
                x, y = y, x
            # x a constant: 1 & y = y, 0 | y = y, 0 ^ y = y, 1 ^ y = not y
            return _bit_not(y) if op == Op.XOR and x == 1 else y
        if op == Op.SHL or op == Op.SHR:
            amount = self._bit_row(kids[1])
            if amount[0] != Op.CONST:
                return None
            amt = min(amount[3] & 0xFFFFFFFF, w)  # amounts past the width clamp (9.7.8.8-9)
            if op == Op.SHL:
                return 0 if j < amt else self._bit(kids[0], j - amt, d)
            src = j + amt
            if src >= w:
                if not mods(aux).signed:
                    return 0  # zero fill
                src = w - 1  # sign fill
            return self._bit(kids[0], src, d)
        if op == Op.CVT:
            m = mods(aux)
            dst, src = m.elems
            if m.sat or m.rnd or not all(t[0] in "bus" and t[1:].isdigit() for t in (dst, src)):
                return None
            sw = int(src[1:])
            if j < sw:
                return self._bit(kids[0], j, d)
            return self._bit(kids[0], sw - 1, d) if src[0] == "s" else 0  # sign- or zero-extension
        if op == Op.EXTRACT:
            m = mods(aux)
            return self._bit(kids[0], m.lo + j, d) if j < m.width else 0
        if op == Op.CONCAT:  # children high to low
            for c in reversed(kids):
                cw = self._bit_row(c)[1].width
                if j < cw:
                    return self._bit(c, j, d)
                j -= cw
            return None
        return None

    def _bits_cmp(self, i: int) -> int | tuple:
        """A comparison of bit-vectors too wide for a table, canonical up to operands that add,
        subtract, or, xor or shift by zero (x - 0 is x's bits) and the order of its operands
        (0 < x is x > 0): ("cmp", cmp, signed, a, b); another predicate: its term id."""
        T = self.T
        if int(T.op[i]) != Op.CMP:
            return i
        m = mods(int(T.aux[i]))
        a, b = (self._without_zero(k) for k in T.kids(i))
        cmp = m.cmp
        if cmp in ("eq", "ne"):
            got = self._linear_eq(a, b)
            if got is not None:  # x + c == d as x == d - c: one key for every such form
                return ("cmp", cmp, False, got[0], ("value", got[1]))
        if b < a:
            a, b, cmp = b, a, _SWAPPED_CMP.get(cmp)
        return i if cmp is None else ("cmp", cmp, m.signed, a, b)

    def _linear_eq(self, a: int, b: int) -> tuple[int, int] | None:
        """a == b, where one side is +-x + c and the other a constant d (modulo 2^w: integer addition
        wraps, PTX 9.7.1), as x == +-(d - c) mod 2^w: (x, that value); None for any other form. Equality
        is kept by adding a constant to both sides and by negating both (bijections of w-bit words),
        so `(8i | 3) - y == 3` is `y == 8i` however the kernel spelled the column index. Kept per (a, b)."""
        key = (a, b)
        if key in self._linear_eqs:
            return self._linear_eqs[key]
        got = self._linear_eqs[key] = self._solve_linear_eq(a, b)
        return got

    def _solve_linear_eq(self, a: int, b: int) -> tuple[int, int] | None:
        w = SORTS[int(self.T.sort[a])].width
        if w > 64 or SORTS[int(self.T.sort[b])].width != w:
            return None
        la, lb = self._linear(a, w), self._linear(b, w)
        if la is None or lb is None or (la[1] is None) == (lb[1] is None):
            return None
        (s, x, c), (_, _, d) = (la, lb) if la[1] is not None else (lb, la)
        k = (d - c) % (1 << w)
        return x, (k if s == 1 else (-k) % (1 << w))

    def _linear(self, k: int, w: int, depth: int = 8) -> tuple[int, int | None, int] | None:
        """Term k as s * x + c modulo 2^w (s = +-1, x a term or None for a constant), through integer
        add, sub and neg of w-bit operands; x is k itself when k is none of those."""
        T = self.T
        op = int(T.op[k])
        if op == Op.CONST:
            return 1, None, int(T.aux[k]) & ((1 << w) - 1)
        kids = T.kids(k)
        if depth and op in (Op.IADD, Op.ISUB, Op.INEG) and all(SORTS[int(T.sort[j])].width == w for j in kids):
            parts = [self._linear(j, w, depth - 1) for j in kids]
            if all(p is not None for p in parts):
                if op == Op.INEG:
                    (s, x, c), = parts
                    return -s, x, -c
                (s1, x1, c1), (s2, x2, c2) = parts
                if op == Op.ISUB:
                    s2, c2 = -s2, -c2
                if x1 is None or x2 is None:
                    return (s1, x1, c1 + c2) if x2 is None else (s2, x2, c1 + c2)
        return 1, k, 0

    def _without_zero(self, k: int) -> int:
        T = self.T
        while int(T.op[k]) in _ZERO_RIGHT:
            kids = T.kids(k)
            if len(kids) != 2 or int(T.sort[kids[0]]) != int(T.sort[k]) or not self._is_zero(kids[1]):
                break
            k = kids[0]
        return k

    def _is_zero(self, k: int) -> bool:
        T = self.T
        if int(T.op[k]) != Op.CONST:
            return False
        w = SORTS[int(T.sort[k])].width
        return int(T.aux[k]) & ((1 << w) - 1 if w < 64 else (1 << 64) - 1) == 0

    def _recip_of(self, k: int, local, remaining) -> NF:
        """1 / term k, kept for a shared divisor (a row sum divides every element of its row)."""
        got = self._recips.get(k)
        if got is not None:
            self._get(k, local, remaining)
            return got
        x, _ = self._get(k, local, remaining)
        r = self.recip(x)
        if k in self.memo:
            self._recips[k] = r
        return r

    def _sat(self, r: NF, m) -> NF:
        if m.sat:  # .sat clamps to [0, 1] (NaN to 0)
            return self.extremum(False, [self.extremum(True, [r, Rat({})]), self.const(1)])
        return r

    def _abs(self, x: NF) -> NF:
        if isinstance(x, Inf):
            return POS_INF
        c = _constant(x)
        if c is not None:
            return self.const(abs(c))
        if x.num and x.num[max(x.num)] < 0:
            x = self.neg(x)
        return self.app("abs", x)

    def _const(self, i: int, sort) -> NF:
        bits = int(self.T.aux[i]) & ((1 << sort.width) - 1 if sort.width < 64 else (1 << 64) - 1)
        if sort.kind is Kind.FLOAT:
            fmt = get_format(sort.fmt)
            e, mbits = fmt.ebits, fmt.mbits
            exp = (bits >> (mbits + fmt.shift)) & ((1 << e) - 1) if fmt.shift == 0 else None
            v = bits_to_fraction(bits, fmt) if _finite(bits, fmt) else None
            if v is None:
                if _is_inf(bits, fmt):
                    return NEG_INF if bits >> (fmt.bits - 1) & 1 else POS_INF
                raise NoRealMeaning(f"NaN constant 0x{bits:x}")
            del exp
            return self.const(_tidy(v))
        return self.const(bits)

    def _int_atom(self, i: int, signed: bool) -> NF:
        T = self.T
        if int(T.op[i]) == Op.CONST:
            w = SORTS[int(T.sort[i])].width
            v = int(T.aux[i]) & ((1 << w) - 1 if w < 64 else (1 << 64) - 1)
            if signed and v >> (w - 1) & 1:
                v -= 1 << w
            return self.const(v)
        if int(T.op[i]) != Op.INPUT:
            table = self.table(i)
            if table is not None:  # a function of few input bits: its values say what it is
                w = SORTS[int(T.sort[i])].width
                ck = (table[2], w, signed)
                vals = self._selections.get(ck)
                if vals is None:
                    raw = np.frombuffer(table[2], np.uint64)
                    vals = self._selections[ck] = tuple(int(v) - (1 << w) if signed and int(v) >> (w - 1) & 1
                                                        else int(v) for v in raw.tolist())
                return self._selection(table[1], vals)
        return Rat({(self.atom(AtomKind.INT, (i, signed)), 1): 1})

    def _selection(self, leaves: tuple, vals: tuple) -> NF:
        """A number that is a function of input bits, by its values for every assignment: two values
        v0 (on the first assignment), v1 are v0 + (v1 - v0) [the bits select v1]; more, an atom of
        the value table (the same function of the same bits, the same atom)."""
        got = self._selected.get(vals)
        if got is None:
            distinct = sorted(set(vals))
            got = self._selected[vals] = (distinct, np.array([v != vals[0] for v in vals], np.uint64).tobytes())
        distinct, sel = got
        if len(distinct) == 1:
            return self.const(vals[0])
        if len(distinct) == 2:
            v0 = vals[0]
            v1 = distinct[1] if distinct[0] == v0 else distinct[0]
            ind = self.indicator(("atom", ("table", leaves, sel)))
            return self.add(self.const(v0), self.scale(ind, v1 - v0))
        key = ("values", leaves, tuple(vals))
        return Rat({(self.atom(AtomKind.INT, (key, True)), 1): 1})

    def _shape_id(self, i: int) -> int:
        """An interned id of term i's shape with every input leaf replaced by its sort (exact: equal
        ids, equal structure); for a term of one leaf, its function of that leaf."""
        got = self._shape_ids.get(i)
        if got is not None:
            return got
        T = self.T
        todo = [i]
        while todo:  # children first, without recursion
            x = todo[-1]
            kids = [k for k in T.kids(x) if k not in self._shape_ids]
            if kids and int(T.op[x]) != Op.INPUT:
                todo.extend(kids)
                continue
            todo.pop()
            if x in self._shape_ids:
                continue
            if int(T.op[x]) == Op.INPUT:
                key: tuple = ("leaf", int(T.sort[x]))
            else:
                key = (int(T.op[x]), int(T.sort[x]), int(T.aux[x]), *(self._shape_ids[k] for k in T.kids(x)))
            self._shape_ids[x] = self._shape_keys.setdefault(key, len(self._shape_keys))
        return self._shape_ids[i]

    def _shape(self, nodes: list[int], leaves: np.ndarray) -> tuple:
        T = self.T
        local = {int(x): -1 - j for j, x in enumerate(leaves.tolist())}
        out = []
        for j, x in enumerate(nodes):
            if x in local:
                out.append((int(T.sort[x]),))
                continue
            local[x] = j
            out.append((int(T.op[x]), int(T.sort[x]), int(T.aux[x]), *(local[k] for k in T.kids(x))))
        return tuple(out)

    def table(self, i: int) -> tuple | None:
        """A bit-level term whose inputs have at most TABLE_BITS bits in all, as the function it
        computes: (input leaves, its value for every assignment of them, in order). Two terms that
        compute the same function of the same inputs get the same key, however their bits are
        shuffled (the evaluation over every assignment is the proof; semantics.termeval's
        arithmetic is the emulator's)."""
        got = self._tables.get(i)
        if got is not None or i in self._tables:
            return got
        self._tables[i] = None
        from semantics.termeval import small_subgraph, table_of

        T = self.T
        if self._wide_equality(i) or self._no_table(i):
            return None
        nodes = small_subgraph(T, i, big=self._big)
        if nodes is None:
            return None
        ops = T.op[nodes]
        if (ops == Op.OPAQUE).any():
            return None
        leaves = np.array(nodes, np.int64)[ops == Op.INPUT]
        widths = [SORTS[int(s)].width for s in T.sort[leaves]]
        if sum(widths) > TABLE_BITS:
            key = self._support(i, nodes, leaves)
            self._tables[i] = key
            return key
        # the table is a function of the term's shape with its leaves as positions: terms that
        # differ only in which elements they read share it (a sign decoded from every byte)
        shape = ("one", self._shape_id(i)) if leaves.size == 1 else self._shape(nodes, leaves)
        values = self._shapes.get(shape)
        if values is None:
            values = self._shapes[shape] = table_of(T, i, nodes, leaves).tobytes()
        key = ("table", tuple(leaves.tolist()), values)
        self._tables[i] = key
        return key

    def _no_table(self, i: int) -> bool:
        """Does table(i) answer None by its input leaves alone, without its subgraph's walk? True when term i reads
        more than TABLE_BITS input bits and _support's first test (lemmas.support_possible) refuses those leaves
        (more than SUPPORT_LEAVES of them, a float leaf, or none of at most TABLE_BITS bits): table() would walk
        the subgraph (small_subgraph), find these leaves and answer None, or answer None for a subgraph past its
        limit. So the answer is table()'s, only cheaper: the leaves are kept per node (_leaves_of), where each walk
        made them again (cross_entropy_zloss' reference: 30 720 bits of packed label masks `(m >> j) & 1 != 0`,
        each a walk of its whole 16-bit mask tree; the label leaf is 32 bits wide). False when not known."""
        from .lemmas import SUPPORT_LEAVES, support_possible

        leaves = self._leaves_of(i)
        if leaves is False:  # not known within the walk's budget: table() decides as before
            return False
        if leaves is None:  # more than SUPPORT_LEAVES leaves (of one bit at least each): > TABLE_BITS bits too
            return SUPPORT_LEAVES >= TABLE_BITS
        ids = sorted(leaves)
        widths = _widths(self.T, ids)
        return sum(widths) > TABLE_BITS and not support_possible(self.T, ids, TABLE_BITS)

    def _leaves_of(self, i: int, budget: int = 4096) -> frozenset | None | bool:
        """The INPUT leaves of term i's subgraph (None: more than lemmas.SUPPORT_LEAVES of them), kept per node, made
        children first; False where more than `budget` nodes not known yet would have to be visited (nothing is
        claimed then; the nodes finished so far are kept: a node's leaves never change)."""
        from .lemmas import SUPPORT_LEAVES

        memo, T = self._leaves, self.T
        if i in memo:
            return memo[i]
        todo, seen = [i], 0
        while todo:
            x = todo[-1]
            if x in memo:
                todo.pop()
                continue
            if int(T.op[x]) == Op.INPUT:
                memo[x] = frozenset((x,))
                todo.pop()
                continue
            kids = T.kids(x)
            missing = [k for k in kids if k not in memo]
            if missing:
                seen += len(missing)
                if seen > budget:
                    return False
                todo.extend(missing)
                continue
            todo.pop()
            got: frozenset | None = frozenset()
            for k in kids:
                lk = memo[k]
                if lk is None:
                    got = None
                    break
                got = got | lk
                if len(got) > SUPPORT_LEAVES:
                    got = None
                    break
            memo[x] = got
        return memo[i]

    def _wide_equality(self, i: int) -> bool:
        """Is term i a comparison `+-x + c == d` (or !=) of an integer input leaf x wider than TABLE_BITS
        with constants (_linear_eq: modulo 2^w)? Such a term is true at one value of x and false at
        the others, whatever its other leaves: it depends on x, so it has no table (more than TABLE_BITS
        input bits) and no support lemma of at most TABLE_BITS bits (the lemma's claim that it is a
        function of other leaves would be false). table() answers None for it without making its
        subgraph, its shape and the support guess (cross_entropy_zloss: one per column of a label
        compared with the column index, each of another shape). Kept per term (_wide_eqs)."""
        got = self._wide_eqs.get(i)
        if got is None:
            got = self._wide_eqs[i] = self._wide_equality_of(i)
        return got

    def _wide_equality_of(self, i: int) -> bool:
        T = self.T
        if int(T.op[i]) != Op.CMP or mods(int(T.aux[i])).cmp not in ("eq", "ne"):
            return False
        a, b = (self._without_zero(k) for k in T.kids(i))
        if SORTS[int(T.sort[a])].kind is Kind.FLOAT:
            return False
        got = self._linear_eq(a, b)
        if got is None:
            return False
        x = got[0]
        s = SORTS[int(T.sort[x])]
        return int(T.op[x]) == Op.INPUT and s.kind is not Kind.FLOAT and s.width > TABLE_BITS

    def _support(self, i: int, nodes: list[int], leaves: np.ndarray) -> tuple | None:
        """The table key of a bit-level term that reads more than TABLE_BITS input bits but depends on
        leaves of at most TABLE_BITS bits (a sign bit decoded from a packed 32-bit word), through a
        proved support lemma (proofs.lemmas.Support), proved once per shape of term; else None."""
        from .lemmas import Lemma, prove_support, support_possible

        if not support_possible(self.T, leaves, TABLE_BITS):  # prove_support's own refusal, before the shape
            return None
        shape = ("support", self._shape(nodes, leaves))
        if shape not in self._support_shapes:
            got = prove_support(self.T, i, nodes, tuple(leaves.tolist()), TABLE_BITS)
            self._support_shapes[shape] = None if got is None else \
                (got.lemma.smt2, tuple(leaves.tolist().index(leaf) for leaf in got.read), got.values)
        proved = self._support_shapes[shape]
        if proved is None:
            return None
        smt2, read, values = proved  # the leaves the table reads, as positions (the same for the shape)
        read_leaves = tuple(int(leaves[j]) for j in read)
        self.lemmas.append(Lemma(i, read_leaves[0], str(SORTS[int(self.T.sort[i])]), "support", smt2, "unsat"))
        return ("table", read_leaves, values)

    def _int_mma_bound(self, i: int) -> int | None:
        """A bound on |value| of integer (.s32) MMA node i read as its exact sum (acc + sum_k a * b), or None where
        that sum may leave int32 (then wrapping or .satfinite decide its value): its accumulator is a constant the
        normal form reads as a number below 2^31 or an integer MMA node of known bound, and the bound plus k times
        the largest product of its element types stays below 2^31 (semantics.ptx.mma.int_mma_bound). Made down the
        chain of accumulators without recursion (a K loop chains one MMA per step: thousands deep)."""
        memo, T = self._mma_bounds, self.T
        chain, x = [], i
        while x not in memo and int(T.op[x]) == Op.MMA:
            chain.append(x)
            x = int(T.kids(x)[0])
        if x in memo:
            below = memo[x]
        elif int(T.op[x]) == Op.CONST:
            v = int(T.aux[x]) & 0xFFFFFFFF  # as _const reads it: the unsigned value of its bits
            below = v if v < 1 << 31 else None
        else:
            below = None
        for node in reversed(chain):
            a_t, b_t, c_t = mods(int(T.aux[node])).elems
            k = (len(T.kids(node)) - 1) // 2
            memo[node] = below = int_mma_bound(below, k, a_t, b_t) if c_t == "s32" else None
        return memo[i]

    def _operand(self, k: int, ty: str, local: dict, remaining: dict) -> NF:
        """An mma operand's value: a float element, or an integer element (s8/u8/s4/u4/s32). An integer element's
        value is kept per (term, signedness) (_operands): a function of them (_int_atom, its table kept), read by
        every MMA node of the operand's row or column tile; the one object is handed to each, which only reads it
        (mul, _plain_product_into and add never change an operand that is not their own accumulator)."""
        if ty[0] in "su" and ty[1:].isdigit():
            self._get(k, local, remaining)
            key = (k, ty[0] == "s")
            got = self._operands.get(key)
            if got is None:
                got = self._operands[key] = self._int_atom(k, key[1])
            return got
        return self._get(k, local, remaining)[0]

    def _cvt(self, i: int, kids, m, sort, local, remaining) -> NF:
        dst, src = m.elems
        x, _ = self._get(kids[0], local, remaining)
        dst_int = dst[0] in "bus" and dst[1:].isdigit()
        src_int = src[0] in "bus" and src[1:].isdigit()
        if not dst_int and not src_int:  # float to float: the same real (rounding: precision check)
            r = x
            if m.relu:
                r = self.extremum(True, [r, Rat({})])
            return self._sat(r, m)
        if not dst_int:  # integer to float: the integer's value; .sat then clamps it to [0, 1] (PTX 9.7.9.21: "for
            # floating-point destination types, .sat limits the result to the range [0.0, 1.0]")
            got = self._exact_int_mma(kids[0], x) if src == "s32" else None
            return self._sat(self._int_atom(kids[0], src[0] == "s") if got is None else got, m)
        if not src_int:  # float to integer: rounding and saturation, uninterpreted
            return self.app(f"cvt.{m.rnd}.{dst}.{src}{'.sat' if m.sat else ''}", x)
        return self._int_atom(i, False)

    def _exact_int_mma(self, k: int, x: NF) -> NF | None:
        """An .s32 read of integer MMA node k (normal form x) as one atom keyed by its exact sum S's normal form,
        app("mma.s32.exact", S), or None (the caller keeps the atom by term id). Where _int_mma_bound(k) holds,
        |S| < 2^31: wrapping or .satfinite clamping to int32 leaves S as it is (PTX 9.7.14.5.14, 9.7.15.5.2), the
        register holds S's two's complement bits, and an .s32 read of them is S. S is a sum of products of integer
        atoms with every let-atom expanded (a canonical form: equal sums, equal keys), so sm_80's mma.sync
        .satfinite chain and sm_90a's wrapping wgmma with the same sum give one atom. The atom, never S itself:
        a let of S was expanded into the exp2 / max / division forms above it (stop 44: cross-target sage went
        past 571 s CPU). None for a node that is not such an MMA, a table-decided term (_int_atom decides it by
        its values), or an S past MMA_SUM_LIMIT monomials."""
        T = self.T
        if int(T.op[k]) != Op.MMA or mods(int(T.aux[k])).elems[2] != "s32" or self._int_mma_bound(k) is None:
            return None
        if not isinstance(x, Rat) or self.table(k) is not None:
            return None
        if self._has_let(x):
            budget, work = self._budget, self._work
            self._budget, self._work = 4 * MMA_SUM_LIMIT, None  # monomials the expansion may make
            try:
                x = self.expand(x)
            except TooBig:
                return None
            finally:
                self._budget, self._work = budget, work
        if not isinstance(x, Rat) or x.den is not None or len(x.num) > MMA_SUM_LIMIT:  # expand leaves no let-atom
            return None
        return self.app("mma.s32.exact", x)

    def _float_view(self, k: int, sort, local, remaining) -> NF:
        """The bits of term k read as a float: a constant decoded, the float a bit pattern came from;
        else an uninterpreted function of the bits (the lemmas of proofs/lemmas.py rewrite the bit
        tricks they can prove)."""
        T = self.T
        x, _ = self._get(k, local, remaining)
        ks = SORTS[int(T.sort[k])]
        if ks.kind is Kind.FLOAT and (ks.fmt == sort.fmt or _tf32_view(ks, sort)):
            return x
        if int(T.op[k]) == Op.CONST:
            from semantics.terms import float_sort

            bits = int(T.aux[k]) & ((1 << sort.width) - 1)
            return self._const(int(T.const(float_sort(sort.fmt), bits)[0]), sort)
        src = self._slice_source(k, 0, ks.width)
        if src is not None:
            ss = SORTS[int(T.sort[src])]
            if ss.kind is Kind.FLOAT and ((ss.fmt == sort.fmt and ss.width == sort.width) or _tf32_view(ss, sort)):
                (got,) = self.of(np.array([src], np.int64))  # the very bits of a float of this format
                return got
        got = self._bit_trick(k, sort)
        if got is not None:
            return got
        return self.app(f"float.{sort.fmt}", self._int_atom(k, False))

    def _slice_source(self, k: int, lo: int, width: int, depth: int = 16, top: bool = True) -> int | None:
        """A term whose bits are exactly bits [lo, lo + width) of term k: k itself for its whole width,
        else through a concat's child, an extract, or an integer cvt that truncates (no .sat: the low bits,
        PTX cvt's integer-to-integer wrap) or widens (the low bits are the source's); None for anything
        else. A 64-bit load of two f32 elements truncated to its low word is the low element."""
        T = self.T
        w = SORTS[int(T.sort[k])].width
        if lo == 0 and width == w and not top:
            return k
        if depth <= 0 or lo + width > w:
            return None
        op = int(T.op[k])
        kids = T.kids(k)
        if op == Op.CONCAT:  # children high to low
            base = 0
            for c in reversed(kids):
                cw = SORTS[int(T.sort[c])].width
                if base <= lo and lo + width <= base + cw:
                    return self._slice_source(c, lo - base, width, depth - 1, False)
                base += cw
            return None
        if op == Op.EXTRACT:
            m = mods(int(T.aux[k]))
            return self._slice_source(kids[0], m.lo + lo, width, depth - 1, False)
        if op == Op.CVT:
            m = mods(int(T.aux[k]))
            dst, src = m.elems
            if m.sat or m.rnd or not all(t[0] in "bus" and t[1:].isdigit() for t in (dst, src)):
                return None
            sw = min(int(src[1:]), SORTS[int(T.sort[kids[0]])].width)
            if lo + width <= min(sw, int(dst[1:])):  # bits below both widths are the source's
                return self._slice_source(kids[0], lo, width, depth - 1, False)
        return None

    def _bit_trick(self, k: int, sort) -> NF | None:
        """FLOAT(fmt, k) through a proved lemma (proofs.lemmas), or, for a term of few integer input
        bits, by the floats its value table decodes to."""
        from .lemmas import bit_lemma

        lem = bit_lemma(self.T, k, sort.fmt)
        if lem is not None:
            self.lemmas.append(lem)
            if lem.assumption:
                self.assumptions.append(lem.assumption)
            (x,) = self.of(np.array([lem.source]))
            if lem.template == "identity":
                return x
            if lem.template == "neg":
                return self.neg(x)
            if lem.template == "abs":
                return self._abs(x)
            if lem.template == "negabs":
                return self.neg(self._abs(x))
            e = int(lem.template.split(":")[1])
            return self.scale(x, Fraction(2) ** e)
        got = self._sign_select(k, sort)
        if got is not None:
            return got
        table = self.table(k)
        if table is None:
            return None
        from semantics.formats import bits_to_fraction

        fmt = get_format(sort.fmt)
        raw = np.frombuffer(table[2], np.uint64)
        distinct = np.unique(raw)
        if not all(_finite(int(v), fmt) for v in distinct):
            return None
        values = {int(v): _tidy(bits_to_fraction(int(v), fmt)) for v in distinct}
        return self._selection(table[1], tuple(values[int(v)] for v in raw.tolist()))

    def _sign_select(self, k: int, sort) -> NF | None:
        """FLOAT(fmt, k) = x - 2 x [flip] for a term that xors x's sign bit with a function of
        integer input bits (proofs.lemmas.SignSelect), proved once per shape of term."""
        from .lemmas import Lemma, prove_sign_select, sign_select_cone, sign_select_parts

        parts = sign_select_parts(self.T, k, sort.fmt)
        if parts is None:
            return None
        x, leaves = parts
        nodes = sign_select_cone(self.T, k, x)  # x's own subterms are no part of the shape
        if nodes is None:
            return None
        shape = ("sign", sort.fmt, self._shape(nodes, np.array((x, *leaves), np.int64)))
        if shape not in self._sign_shapes:
            got = prove_sign_select(self.T, k, x, leaves, sort.fmt)
            self._sign_shapes[shape] = None if got is None else \
                (got.lemma.smt2, tuple(leaves.index(leaf) for leaf in got.leaves), got.flips)
        proved = self._sign_shapes[shape]
        if proved is None:
            return None
        smt2, read, flips = proved  # the leaves the flip reads, as positions (the same for the shape)
        self.lemmas.append(Lemma(k, x, sort.fmt, "sign-select", smt2, "unsat"))
        (v,) = self.of(np.array([x]))
        flip = self.indicator(("atom", ("table", tuple(leaves[j] for j in read), flips)))
        return self.sub(v, self.scale(self.mul(v, flip), 2))

    def _ite(self, cond: tuple, then: NF, other: NF) -> NF:
        kind = cond[0]
        if kind == "not":
            return self._ite(cond[1], other, then)
        if kind == "const":
            return then if cond[1] else other
        if kind == "and":
            return self._ite(cond[1], self._ite(cond[2], then, other), other)
        if kind == "or":
            return self._ite(cond[1], then, self._ite(cond[2], then, other))
        if kind == "xor":
            return self._ite(cond[1], self._ite(cond[2], other, then), self._ite(cond[2], then, other))
        return self.ite(cond, then, other)

    # ------------------------------------------------------------------ printing
    def describe(self, x: NF, depth: int = 3, limit: int = 300) -> str:
        out = self._describe(x, depth)
        return out if len(out) <= limit else out[:limit - 3] + "..."

    def _describe(self, x: NF, depth: int) -> str:
        if isinstance(x, Inf):
            return "+inf" if x.sign > 0 else "-inf"
        num = self._poly_text(x.num, depth)
        if x.den is None:
            return num
        return f"({num}) / ({self._poly_text(self.polys[x.den], depth)})"

    def _poly_text(self, p: Poly, depth: int) -> str:
        if not p:
            return "0"
        parts = []
        for m in sorted(p):
            c = p[m]
            atoms = "*".join(self._atom_text(m[i], depth) + (f"^{m[i + 1]}" if m[i + 1] != 1 else "")
                             for i in range(0, len(m), 2))
            parts.append(f"{_num_text(c)}{'*' + atoms if atoms else ''}" if c != 1 or not atoms else atoms)
        return " + ".join(parts)

    def _leaf_text(self, t: int) -> str:
        buf, e = self.T.input_name(int(self.T.aux[t]))
        return f"{buf}[{e}]"

    def _atom_text(self, a: int, depth: int) -> str:
        kind, payload = self.atoms[a]
        if kind is AtomKind.LEAF:
            buf, e = self.T.input_name(int(self.T.aux[payload[0]]))
            return f"{buf}[{e}]"
        if kind is AtomKind.INT:
            t = payload[0]
            if isinstance(t, tuple):  # a function table of input bits
                return f"{'s' if payload[1] else 'u'}int(bits of {', '.join(self._leaf_text(x) for x in t[1])})"
            if int(self.T.op[t]) == Op.INPUT:
                buf, e = self.T.input_name(int(self.T.aux[t]))
                return f"{'s' if payload[1] else 'u'}int({buf}[{e}])"
            return f"int(#{t})"
        if depth <= 0:
            return f"<{kind.name.lower()}#{a}>"
        if kind is AtomKind.EXP2:
            return f"exp2({self._poly_text(self.polys[payload[0]], depth - 1)})"
        if kind in (AtomKind.MAX, AtomKind.MIN):
            inner = ", ".join(self._describe(self.key_nf[k], depth - 1) for k in sorted(payload[0]))
            return f"{kind.name.lower()}({inner})"
        if kind is AtomKind.IND:
            c = payload[0]
            if c[0] in ("gt", "eq"):
                return f"[{self._poly_text(self.polys[c[1]], depth - 1)} {'> 0' if c[0] == 'gt' else '= 0'}]"
            if c[0] == "table":
                return f"[bits of {', '.join(self._leaf_text(t) for t in c[1])}: table {hash(c[2]) & 0xFFFF:04x}]"
            if isinstance(c[1], tuple):  # a canonical comparison of bit-vectors
                _, cmp, signed, x, y = c[1]
                return f"[#{x} {cmp}{'.s' if signed else ''} #{y}]"
            return f"[#{c[1]}]"
        if kind is AtomKind.LET:
            return f"let({self._describe(self.key_nf[payload[0]], depth - 1)})"
        if kind is AtomKind.TERM:
            return f"term#{payload[0]}"
        fn, *args = payload
        return f"{fn}({', '.join(self._describe(self.key_nf[k], depth - 1) for k in args)})"


# ---------------------------------------------------------------------- helpers

def _widths(T: TermStore, ids: list[int]) -> list[int]:
    """The bit widths of term ids' sorts."""
    return [SORTS[int(s)].width for s in T.sort[ids]] if ids else []


def _check_time(doing: str) -> None:
    """Stop with the run's time limit (symexec.TimeLimit: the verdict is inconclusive, naming it)."""
    from symexec.machine import check_time_limit

    check_time_limit(doing)


def _equality_with_value(key: tuple) -> tuple[tuple[int, bool], int] | None:
    """An indicator's condition key if it is the canonical integer equality ("term", ("cmp", "eq", signed,
    x, ("value", v))) with x a term id: ((x, signed), v); else None (any other condition: no rule)."""
    if len(key) != 2 or key[0] != "term" or not isinstance(key[1], tuple):
        return None
    c = key[1]
    if (len(c) == 5 and c[0] == "cmp" and c[1] == "eq" and isinstance(c[3], (int, np.integer))
            and isinstance(c[4], tuple) and len(c[4]) == 2 and c[4][0] == "value"):
        return (int(c[3]), bool(c[2])), int(c[4][1])
    return None


def _intersect_ranges(a: tuple, b: tuple) -> tuple[tuple[int, int], ...]:
    """The intersection of two sets of words given as sorted disjoint inclusive ranges."""
    out = []
    for lo, hi in a:
        for lo2, hi2 in b:
            l, h = max(lo, lo2), min(hi, hi2)
            if l <= h:
                out.append((l, h))
    return tuple(sorted(out))


def _bit_not(x: int | tuple[int, bool] | None) -> int | tuple[int, bool] | None:
    if x is None:
        return None
    return 1 - x if isinstance(x, int) else (x[0], not x[1])


def _renamed_poly(p: Poly, name: Callable[[int], int]) -> dict:
    """p with every atom a renamed name(a): monomials as sorted (name, exponent) pairs (the products they
    are), the coefficients of monomials that became one added, zero sums dropped."""
    out: dict = {}
    for m, c in p.items():
        mono = tuple(sorted((name(m[i]), m[i + 1]) for i in range(0, len(m), 2)))
        v = out.get(mono, 0) + c
        if v:
            out[mono] = v
        else:
            out.pop(mono, None)
    return out


def _add_into(acc: Poly, p: Poly, scale: Coef) -> None:
    get = acc.get
    if scale == 1:  # the common case: no product (a Fraction times 1 is a new Fraction, by gcd)
        for m, c in p.items():
            old = get(m)
            v = c if old is None else old + c
            if v:
                acc[m] = v
            else:
                acc.pop(m, None)
        return
    for m, c in p.items():
        old = get(m)
        v = c * scale if old is None else old + c * scale
        if v:
            acc[m] = v
        else:
            acc.pop(m, None)


def _proportional(a: Poly, b: Poly, positive: bool) -> bool:
    """a = r * b for a constant r (> 0 when `positive`)."""
    if len(a) != len(b) or not a:
        return False
    m0 = next(iter(b))
    if m0 not in a:
        return False
    r = Fraction(a[m0]) / Fraction(b[m0])
    if positive and r <= 0:
        return False
    return all(m in a and a[m] == b[m] * r for m in b)


def _poly_eq(a: Poly, b: Poly) -> bool:
    return len(a) == len(b) and all(b.get(m) == c for m, c in a.items())


def _constant(x: Rat) -> Coef | None:
    if x.den is not None:
        return None
    if not x.num:
        return 0
    if len(x.num) == 1 and () in x.num:
        return x.num[()]
    return None


def _tidy(v: Coef) -> Coef:
    return int(v) if isinstance(v, Fraction) and v.denominator == 1 else v


def _inf_add(x: NF, y: NF) -> NF:
    if isinstance(x, Inf) and isinstance(y, Inf):
        if x.sign != y.sign:
            raise Undefined("inf - inf")
        return x
    return x if isinstance(x, Inf) else y


def _finite(bits: int, fmt) -> bool:
    if not fmt.has_inf and fmt.nan == "none":
        return True
    e = (bits >> (fmt.mbits + fmt.shift)) & ((1 << fmt.ebits) - 1)
    if fmt.nan == "allones":
        return (bits & ((1 << (fmt.bits - 1)) - 1)) != ((1 << (fmt.bits - 1)) - 1)
    return e != (1 << fmt.ebits) - 1


def _is_inf(bits: int, fmt) -> bool:
    if not fmt.has_inf:
        return False
    e = (bits >> (fmt.mbits + fmt.shift)) & ((1 << fmt.ebits) - 1)
    frac = (bits >> fmt.shift) & ((1 << fmt.mbits) - 1)
    return e == (1 << fmt.ebits) - 1 and frac == 0


def _num_text(c: Coef) -> str:
    if isinstance(c, Fraction):
        f = float(c)
        return repr(f) if Fraction(f) == c else f"{c.numerator}/{c.denominator}"
    return str(c)


#: Children per chunk of _shared_children (its temporaries: a few bytes per child of a chunk).
#: Float operations whose real reading is finite when their operands' are (Normalizer._finite_node).
_FINITE_OPS = frozenset(int(o) for o in (Op.FADD, Op.FSUB, Op.FMUL, Op.FFMA, Op.FNEG, Op.FABS, Op.FMIN, Op.FMAX,
                                         Op.FEX2))


def _tf32_view(src, dst) -> bool:
    """The bits of a float of sort `src` read as `dst`, the same real: an f32's bits read as .tf32 (a
    wgmma.mma_async .tf32 operand: "truncate lower 13 bits of the 32-bit input data", PTX 9.7.15.5.2;
    semantics.formats.TF32 is those top 19 bits) are the f32 rounded toward zero to tf32, read as the same
    real as every float-to-float rounding (REAL_ASSUMPTIONS; proofs.precision counts it: a FLOAT node of sort
    tf32); a tf32's container bits read as .f32 are exactly its value (an f32 with the low 13 bits zero)."""
    return (src.fmt, dst.fmt) in (("f32", "tf32"), ("tf32", "f32"))


#: Float operations whose real reading is a function of their children's values alone (congruence_pairs walks
#: through them): the finite ones, mma (its accumulate c + sum a_i b_i), conversions between float formats (the
#: identity, or the clamp of .sat / .relu) and if-then-else (the selected branch's value).
_CONGRUENT = _FINITE_OPS | frozenset(int(o) for o in (Op.MMA, Op.CVT, Op.ITE))
_COMMUTATIVE_OPS = frozenset(int(o) for o in COMMUTATIVE)


def _float_sorts() -> np.ndarray:
    """Per sort id, whether it is a float sort (sorts are registered as they are first made)."""
    return np.array([s.kind is Kind.FLOAT for s in SORTS] + [False] * (256 - len(SORTS)))


_SHARED_CHUNK = 1 << 22


def _shared_children(kids: np.ndarray, n: int, chunk: int = _SHARED_CHUNK) -> np.ndarray:
    """Per node id below n, whether it occurs more than once in `kids` (the store's child column), in two passes
    of chunks: the first scatters every occurrence's position into its id's slot, which ends holding the position
    of one occurrence (whichever NumPy wrote last); the second marks the ids of the occurrences that read back
    another position: an id occurring once reads its own, one occurring twice or more has an occurrence that
    does not."""
    shared = np.zeros(n, bool)
    if not kids.size:
        return shared
    pos = np.empty(n, np.int64 if kids.size > np.iinfo(np.int32).max else np.int32)
    for s in range(0, kids.size, chunk):
        pos[kids[s:s + chunk]] = np.arange(s, min(s + chunk, kids.size), dtype=pos.dtype)
    for s in range(0, kids.size, chunk):
        k = kids[s:s + chunk]
        shared[k[pos[k] != np.arange(s, s + k.size, dtype=pos.dtype)]] = True
    return shared
