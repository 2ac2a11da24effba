"""Lemmas that turn bit-level computations into real arithmetic, proved with Z3 (bit-vectors).

A float read of a bit-level term, FLOAT(fmt, t), has no real-arithmetic meaning as it stands. When
t reads the bits of one float value x of the same format and no input leaf or opaque value, its
effect on x's encoding is guessed from its behaviour on a few values (evaluating only the nodes between t
and its float sources, however large x's own DAG) and then *proved* for every bit pattern of x with Z3
(quantifier-free bit-vectors, an `unsat` of the negated claim); other floats t reads (the other half of a
packed f16x2 word) are free variables of the claim, so it holds whatever their values:

    t(x) = x xor SIGN   ->  FLOAT(t) = -x        (IEEE 754 negation flips the sign bit)
    t(x) = x and ~SIGN  ->  FLOAT(t) = |x|
    t(x) = x or SIGN    ->  FLOAT(t) = -|x|
    t(x) = x            ->  FLOAT(t) = x
    t(x) = x + (k << m) ->  FLOAT(t) = x * 2^k   for finite x whose scaled exponent stays normal (an
                            assumption printed with the verdict)

(the encoding facts on the right are IEEE 754's, the part of the trusted base this step relies on).
Each proved lemma is kept (`Lemma`: the claim as SMT-LIB 2 and Z3's answer) for the certificate,
where `volta recheck` asks cvc5 again.

Terms of integer inputs only (packed 1-bit or 4-bit weights decoded into fp16/bf16 operands) are
functions of few input bits: proofs.normal identifies them by their value table; a float read of
one that takes two values is an if-then-else of a table condition, so a select between +x and -x
and a multiplication by a decoded +-1 meet.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from semantics.formats import get_format
from semantics.terms import SORTS, Kind, Op, TermStore, mods

__all__ = ["Lemma", "bit_lemma", "smt_claim", "SignSelect", "sign_select_parts", "sign_select_cone", "prove_sign_select",
           "sign_select_claim", "Support", "support_claim", "prove_support"]


@dataclass
class Lemma:
    """FLOAT(fmt, term) = template(source), proved for all bit patterns of the source."""

    term: int
    source: int
    fmt: str
    template: str  # "identity", "neg", "abs", "negabs", "scale:k"
    smt2: str  # the negated claim in SMT-LIB 2 (unsat proves it)
    result: str  # Z3's answer: "unsat" (proved)
    assumption: str = ""


#: Float terms a bit-level term may read besides its lemma's source (each one a free bit-vector of the claim)
MAX_FLOAT_SOURCES = 4


def _sources(T: TermStore, k: int) -> tuple[set[int], set[int], bool] | None:
    """The float-sorted terms whose bits t reads (without looking inside them), the input leaves
    that are not floats (integers, packed bits), and whether an opaque value is read; None past a
    size limit."""
    seen: set[int] = set()
    floats: set[int] = set()
    ints: set[int] = set()
    opaque = False
    todo = [k]
    while todo:
        i = todo.pop()
        if i in seen:
            continue
        seen.add(i)
        if len(seen) > 2000:
            return None
        s = SORTS[int(T.sort[i])]
        op = int(T.op[i])
        if i != k and s.kind is Kind.FLOAT and op != Op.CONST:
            floats.add(i)
            continue
        if op == Op.INPUT:
            ints.add(i)
            continue
        if op == Op.OPAQUE:
            opaque = True
            continue
        todo.extend(T.kids(i))
    return floats, ints, opaque


def _z3_bits(T: TermStore, k: int, x: int, xvar, leaves: dict | None = None):
    """Term k as a Z3 bit-vector expression in `xvar` (the bits of term x) and the variables of
    `leaves` (integer input leaf -> its Z3 variable)."""
    import z3

    memo: dict[int, object] = {}

    def go(i: int):
        if i in memo:
            return memo[i]
        if i == x:
            return xvar
        if leaves is not None and i in leaves:
            return leaves[i]
        s = SORTS[int(T.sort[i])]
        op = int(T.op[i])
        kids = T.kids(i)
        w = s.width
        if op == Op.CONST:
            r = z3.BitVecVal(int(T.aux[i]) & ((1 << w) - 1), w) if s.kind is not Kind.PRED else \
                z3.BoolVal(bool(int(T.aux[i]) & 1))
        elif op in (Op.AND, Op.OR, Op.XOR):
            a, b = go(kids[0]), go(kids[1])
            r = a & b if op == Op.AND else a | b if op == Op.OR else a ^ b
        elif op == Op.NOT:
            r = ~go(kids[0])
        elif op == Op.IADD:
            r = go(kids[0]) + go(kids[1])
        elif op == Op.ISUB:
            r = go(kids[0]) - go(kids[1])
        elif op in (Op.SHL, Op.SHR):
            a, n = go(kids[0]), go(kids[1])
            n = z3.ZeroExt(w - n.size(), n) if n.size() < w else z3.Extract(w - 1, 0, n)
            big = z3.UGE(n, w)
            if op == Op.SHL:
                r = z3.If(big, z3.BitVecVal(0, w), a << n)
            elif mods(int(T.aux[i])).signed:
                r = z3.If(big, a >> (w - 1), a >> n)
            else:
                r = z3.If(big, z3.BitVecVal(0, w), z3.LShR(a, n))
        elif op == Op.CONCAT:
            parts = [go(c) for c in kids]
            r = parts[0] if len(parts) == 1 else z3.Concat(*parts)
        elif op == Op.EXTRACT:
            m = mods(int(T.aux[i]))
            r = z3.Extract(m.lo + m.width - 1, m.lo, go(kids[0]))
        elif op == Op.FLOAT:
            r = go(kids[0])
        elif op == Op.CVT and _int_to_int(T, i, w):
            # PTX ISA 9.7.9.21 (cvt): an integer source of width n is its register's low n bits, widened by
            # sign extension when signed, by zeros otherwise, and narrowed by truncation (no .sat here)
            m = mods(int(T.aux[i]))
            dst, src = m.elems
            a = go(kids[0])
            sw = int(src[1:])
            a = z3.Extract(sw - 1, 0, a) if a.size() > sw else a
            r = z3.Extract(w - 1, 0, a) if w <= sw else \
                z3.SignExt(w - sw, a) if src[0] == "s" else z3.ZeroExt(w - sw, a)
        elif op == Op.ITE:
            r = z3.If(go(kids[0]), go(kids[1]), go(kids[2]))
        elif op == Op.CMP and SORTS[int(T.sort[kids[0]])].kind is Kind.BITS:
            m = mods(int(T.aux[i]))
            a, b = go(kids[0]), go(kids[1])
            table = {"eq": lambda: a == b, "ne": lambda: a != b,
                     "lt": lambda: (a < b) if m.signed else z3.ULT(a, b),
                     "le": lambda: (a <= b) if m.signed else z3.ULE(a, b),
                     "gt": lambda: (a > b) if m.signed else z3.UGT(a, b),
                     "ge": lambda: (a >= b) if m.signed else z3.UGE(a, b),
                     "lo": lambda: z3.ULT(a, b), "ls": lambda: z3.ULE(a, b), "hi": lambda: z3.UGT(a, b),
                     "hs": lambda: z3.UGE(a, b)}
            if m.cmp not in table:
                raise ValueError(f"comparison {m.cmp}")
            r = table[m.cmp]()
        elif op in (Op.PAND, Op.POR, Op.PXOR, Op.PNOT):
            args = [go(c) for c in kids]
            r = z3.And(*args) if op == Op.PAND else z3.Or(*args) if op == Op.POR else \
                z3.Xor(*args) if op == Op.PXOR else z3.Not(args[0])
        else:
            raise ValueError(f"{Op(op).name} in a bit-level lemma")
        memo[i] = r
        return r

    return go(k)


def _int_to_int(T: TermStore, i: int, w: int) -> bool:
    """Whether CVT node i is an integer-to-integer conversion without saturation into an integer of
    the node's width, from a source no wider than its register (what _z3_bits encodes)."""
    m = mods(int(T.aux[i]))
    if m.sat or m.relu or len(m.elems) != 2:
        return False
    dst, src = m.elems
    ints = all(t[0] in "bsu" and t[1:].isdigit() for t in (dst, src))
    return ints and int(dst[1:]) == w and int(src[1:]) <= SORTS[int(T.sort[T.kids(i)[0]])].width


def smt_claim(T: TermStore, k: int, x: int, template: str, fmt, others: tuple[int, ...] = ()
              ) -> tuple[object, str]:
    """(Z3 claim, SMT-LIB 2 of its negation) that bits(t) = template(bits(x)) for every x and every value
    of the floats in `others` (free bit-vectors y0, y1, ...)."""
    import z3

    w = fmt.bits
    xv = z3.BitVec("x", w)
    free = {o: z3.BitVec(f"y{j}", SORTS[int(T.sort[o])].width) for j, o in enumerate(others)}
    t = _z3_bits(T, k, x, xv, free)
    sign = 1 << (w - 1)
    want = {"identity": xv, "neg": xv ^ sign, "abs": xv & (sign - 1), "negabs": xv | sign}.get(template)
    if want is None:  # scale:k, for x with a normal encoding whose exponent field + k stays normal
        kk = int(template.split(":")[1])
        e = z3.Extract(fmt.ebits + fmt.mbits - 1, fmt.mbits, xv)
        lo, hi = 1, (1 << fmt.ebits) - 2
        ok = z3.And(z3.UGE(e, lo), z3.ULE(e, hi), z3.UGE(e, lo - kk if kk < 0 else lo),
                    z3.ULE(e, hi - kk if kk > 0 else hi))
        claim = z3.Implies(ok, t == xv + (kk << fmt.mbits) if kk >= 0 else t == xv - ((-kk) << fmt.mbits))
    else:
        claim = t == want
    s = z3.Solver()
    s.add(z3.Not(claim))
    return claim, s.to_smt2()


#: Nodes a bit trick's cone (the term down to its float sources) may hold before it is given up
CONE_LIMIT = 2000


def _cone(T: TermStore, k: int, stops: set[int]) -> list[int] | None:
    """Sorted ids of the nodes k reads without looking inside the `stops` (those reached included); None
    past CONE_LIMIT nodes. A sign flip of a float that is itself a long reduction (sinkhorn_attention's
    epilogue negates m + log l with `xor.b32 x, 0x80000000`) reads three nodes, not the reduction's DAG."""
    from semantics.termeval import small_subgraph

    return small_subgraph(T, k, CONE_LIMIT, stop=stops)


def _sample(T: TermStore, i: int, n: int, salt: int) -> np.ndarray:
    """n bit patterns for a float term that is not the lemma's source (the claim holds for all of them)."""
    w = SORTS[int(T.sort[i])].width
    rng = np.random.default_rng(0x5EED + salt)
    return rng.integers(0, 1 << min(w, 63), n, dtype=np.uint64)


def _guess(T: TermStore, k: int, x: int, fmt, others: tuple[int, ...] = ()) -> str | None:
    """Which template t follows on sample encodings of x, the floats in `others` given arbitrary bits (then
    proved by Z3 for every x and every value of the others)."""
    nodes = _cone(T, k, {x, *others})
    if nodes is None:
        return None
    w = fmt.bits
    sample = np.array([0x3F800000, 0xC0490FDB, 0x3E99999A, 0x42F60000, 0xBF000000, 0x00000001, 0x7F000000,
                       0x12345678], np.uint64) if w == 32 else \
        np.array([0x3C00, 0xC248, 0x3266, 0x57B0, 0xB800, 0x0001, 0x7800, 0x1234], np.uint64) if w == 16 else None
    if sample is None:
        return None
    given = {x: sample} | {o: _sample(T, o, sample.size, j) for j, o in enumerate(others)}
    vals = _eval_with(T, k, nodes, given, sample.size)
    if vals is None:
        return None
    sign = np.uint64(1 << (w - 1))
    for name, want in (("identity", sample), ("neg", sample ^ sign), ("abs", sample & (sign - np.uint64(1))),
                       ("negabs", sample | sign)):
        if (vals == want).all():
            return name
    diff = (vals.astype(np.int64) - sample.astype(np.int64))
    step = 1 << fmt.mbits
    normal = ((sample >> np.uint64(fmt.mbits)) & np.uint64((1 << fmt.ebits) - 1)) > 0
    if normal.any() and (diff[normal] % step == 0).all() and len(set((diff[normal] // step).tolist())) == 1:
        kk = int(diff[normal][0] // step)
        if kk:
            return f"scale:{kk}"
    return None


def _eval_with(T: TermStore, k: int, nodes: list[int], vals: dict[int, np.ndarray], count: int,
               skip: set[int] | frozenset = frozenset()) -> np.ndarray | None:
    """Term k's bits in each of `count` cases, given the bits of the nodes in `vals` (x's encoding,
    integer leaves) per case; the nodes in `skip` (x's own subterms) are not looked at. None when
    k reads another input or an opaque value."""
    from semantics.termeval import _Rows, _apply, _fast, _mask
    from semantics.terms import sort_widths

    vals = dict(vals)
    rows = _Rows(vals)
    for i in nodes:
        if i in vals or i in skip:
            continue
        op = int(T.op[i])
        if op == Op.CONST:
            w = int(sort_widths()[T.sort[i]])
            vals[i] = np.full(count, np.uint64(int(T.aux[i]) & ((1 << w) - 1 if w < 64 else (1 << 64) - 1)))
            continue
        if op in (Op.INPUT, Op.OPAQUE):
            return None
        if any(c not in vals for c in T.kids(i)):
            return None
        got = _fast(T, i, vals)
        vals[i] = got if got is not None else np.asarray(_apply(T, np.array([i]), rows)).reshape(-1)
        vals[i] = vals[i] & _mask(int(sort_widths()[T.sort[i]]))
    return vals.get(k)


def bit_lemma(T: TermStore, k: int, fmt_name: str) -> Lemma | None:
    """A proved lemma for FLOAT(fmt, k) (module docstring), or None. The term may read other floats besides
    its source x (the other half of a packed f16x2 word xor-ed with 0x80008000): the claim is then proved
    for every value of theirs too, so the read is a function of x alone."""
    got = _sources(T, k)
    if got is None:
        return None
    floats, ints, opaque = got
    if ints or opaque or not 1 <= len(floats) <= MAX_FLOAT_SOURCES:
        return None
    fmt = get_format(fmt_name)
    for x in sorted(floats):
        if SORTS[int(T.sort[x])].fmt != fmt.name:
            continue
        others = tuple(sorted(floats - {x}))
        template = _guess(T, k, x, fmt, others)
        if template is None:
            continue
        try:
            claim, smt2 = smt_claim(T, k, x, template, fmt, others)
        except ValueError:
            return None
        if not _unsat(claim):
            continue
        assumption = ""
        if template.startswith("scale:"):
            assumption = (f"the exponent edit at term #{k} scales by 2^{template.split(':')[1]}: assumes the scaled "
                          "value stays a normal number")
        return Lemma(k, x, fmt.name, template, smt2, "unsat", assumption)
    return None


@dataclass
class SignSelect:
    """FLOAT(fmt, term) = x * (1 - 2 [flip(bits)]): the term is x's encoding with its sign bit xor-ed
    by a function of integer input bits (a sign decoded from packed bits and applied by `xor`/`lop3`
    to the float's sign bit), proved for every x and every value of those bits."""

    lemma: Lemma
    leaves: tuple[int, ...]  # the integer input leaves the flip depends on, the first in the low bits of `flips`' index
    flips: bytes  # uint64 0/1 per assignment of the leaves' bits: whether x's sign is flipped


#: Integer input bits the flip of a sign selection may depend on (its table has 2^this entries).
SIGN_SELECT_BITS = 16
#: Integer input leaves a sign selection's term may read.
SIGN_SELECT_LEAVES = 8


def sign_select_claim(T: TermStore, k: int, x: int, leaves: tuple[int, ...], unread: tuple[int, ...], fmt
                      ) -> tuple[object, str]:
    """(Z3 claim, SMT-LIB 2 of its negation): for every x and every value b of the leaves,
    t(x, b) = x xor t(0, b), t(0, b) has no bit but the sign bit, and that bit does not change with
    the leaves in `unread`. Variables are named by position (x, b0, b1, ...; c0, ... for the second
    value of an unread leaf), so the text is the same for terms of one shape."""
    import z3

    w = fmt.bits
    xv = z3.BitVec("x", w)
    vs = {leaf: z3.BitVec(f"b{j}", SORTS[int(T.sort[leaf])].width) for j, leaf in enumerate(leaves)}
    t = _z3_bits(T, k, x, xv, vs)
    t0 = _z3_bits(T, k, x, z3.BitVecVal(0, w), vs)
    parts = [t == xv ^ t0, t0 & ((1 << (w - 1)) - 1) == 0]
    for j, leaf in enumerate(leaves):
        if leaf in unread:
            other = dict(vs)
            other[leaf] = z3.BitVec(f"c{j}", SORTS[int(T.sort[leaf])].width)
            parts.append(z3.Extract(w - 1, w - 1, t0) == z3.Extract(w - 1, w - 1, _z3_bits(T, k, x, z3.BitVecVal(0, w), other)))
    claim = z3.And(*parts)
    s = z3.Solver()
    s.add(z3.Not(claim))
    return claim, s.to_smt2()


def sign_select_parts(T: TermStore, k: int, fmt_name: str) -> tuple[int, tuple[int, ...]] | None:
    """(x, integer leaves in ascending id order) of a term that may be a sign selection: it reads
    the bits of exactly one float x of format fmt and a few integer input leaves."""
    got = _sources(T, k)
    if got is None:
        return None
    floats, ints, opaque = got
    if opaque or len(floats) != 1 or not ints or len(ints) > SIGN_SELECT_LEAVES:
        return None
    (x,) = floats
    if SORTS[int(T.sort[x])].fmt != fmt_name:
        return None
    return x, tuple(sorted(ints))


def sign_select_cone(T: TermStore, k: int, x: int) -> list[int] | None:
    """Sorted ids of the nodes k reads without looking inside x (x included): what a sign
    selection's proof depends on; None past CONE_LIMIT nodes."""
    return [k] if k == x else _cone(T, k, {x})


def _unsat(claim) -> bool:
    import z3

    s = z3.Solver()
    s.set("timeout", 10000)
    s.add(z3.Not(claim))
    return s.check() == z3.unsat


def prove_sign_select(T: TermStore, k: int, x: int, leaves: tuple[int, ...], fmt_name: str) -> SignSelect | None:
    """The proved lemma and the flip table of a sign selection, or None. The leaves the flip does
    not depend on (each proved so) are left out of its table."""
    fmt = get_format(fmt_name)
    try:
        claim, _ = sign_select_claim(T, k, x, leaves, (), fmt)
        if not _unsat(claim):
            return None
        unread = tuple(leaf for leaf in leaves if _unsat(sign_select_claim(T, k, x, leaves, (leaf,), fmt)[0]))
        claim, smt2 = sign_select_claim(T, k, x, leaves, unread, fmt)
    except ValueError:
        return None
    read = tuple(leaf for leaf in leaves if leaf not in unread)
    if not read or sum(SORTS[int(T.sort[i])].width for i in read) > SIGN_SELECT_BITS or not _unsat(claim):
        return None
    flips = _flip_table(T, k, x, read, unread, fmt.bits)
    if flips is None:
        return None
    return SignSelect(Lemma(k, x, fmt.name, "sign-select", smt2, "unsat"), read, flips)


def _every_assignment(T: TermStore, leaves: tuple[int, ...], zeros: tuple[int, ...]
                      ) -> tuple[int, dict[int, np.ndarray]]:
    """Columns of every assignment of the leaves (the first leaf in the low bits), the other nodes named
    in zeros at 0: (number of assignments, values by node) for _eval_with."""
    from semantics.termeval import _mask

    widths = [SORTS[int(T.sort[leaf])].width for leaf in leaves]
    count = 1 << sum(widths)
    idx = np.arange(count, dtype=np.uint64)
    vals: dict[int, np.ndarray] = {node: np.zeros(count, np.uint64) for node in zeros}
    shift = 0
    for leaf, lw in zip(leaves, widths):
        vals[leaf] = (idx >> np.uint64(shift)) & _mask(lw)
        shift += lw
    return count, vals


def _flip_table(T: TermStore, k: int, x: int, leaves: tuple[int, ...], unread: tuple[int, ...], w: int
                ) -> bytes | None:
    """Bit w-1 of t(0, b) for every assignment b of the leaves (the first leaf in the low bits), the
    unread leaves at 0."""
    nodes = sign_select_cone(T, k, x)
    if nodes is None:
        return None
    count, vals = _every_assignment(T, leaves, (x, *unread))
    got = _eval_with(T, k, nodes, vals, count)
    if got is None:
        return None
    return ((got >> np.uint64(w - 1)) & np.uint64(1)).astype(np.uint64).tobytes()


# ---------------------------------------------------------------------------------------------- support
#: A support lemma's term may read this many input leaves at most (a packed 32-bit word of 4 bytes,
#: 128-bit vector loads: 16 bytes).
SUPPORT_LEAVES = 16
#: Random assignments of every leaf on which the leaves a term depends on are guessed (then proved).
SUPPORT_SAMPLES = 64
#: Nodes of the decision tree that states a support lemma's table in SMT-LIB (a bigger one is refused).
SUPPORT_TREE_NODES = 4096


@dataclass
class Support:
    """A bit-level term that reads more than proofs.normal.TABLE_BITS input bits but whose value is a
    function of a few of its input leaves only: bits(term) = TABLE[bits of the leaves it reads], proved
    with Z3 for every value of *every* leaf (the others' irrelevance included). The table is then the
    term's identity for the normal form (a function of few input bits, as proofs.normal.table)."""

    lemma: Lemma
    read: tuple[int, ...]  # the input leaves the value depends on, the first in the low bits of the table index
    values: bytes  # uint64 per assignment of the read leaves' bits: the term's bits


def support_claim(T: TermStore, k: int, leaves: tuple[int, ...], read: tuple[int, ...], values: np.ndarray
                  ) -> tuple[object, str] | None:
    """(Z3 claim, SMT-LIB 2 of its negation): for every value of every leaf, bits(k) equals the table
    `values` at the index made of the `read` leaves' bits (the first in the low bits). The table is
    written as a reduced decision tree on the index bits (a subtree whose two halves are one function
    is that function), so a term that depends on one bit of a byte states a two-way choice. Variables
    are named by position (b0, b1, ... for `leaves`), so terms of one shape have one text. None when
    the tree is too large to state."""
    import z3

    vs = {leaf: z3.BitVec(f"b{j}", SORTS[int(T.sort[leaf])].width) for j, leaf in enumerate(leaves)}
    t = _z3_bits(T, k, -1, None, vs)
    w = SORTS[int(T.sort[k])].width
    parts = [vs[leaf] for leaf in reversed(read)]  # the first read leaf in the low bits
    idx = parts[0] if len(parts) == 1 else z3.Concat(*parts)
    memo: dict[bytes, object] = {}

    def tree(vals: np.ndarray, nbits: int):
        key = vals.tobytes()
        got = memo.get(key)
        if got is not None:
            return got
        if (vals == vals[0]).all():
            r = z3.BitVecVal(int(vals[0]), w) if t.sort() != z3.BoolSort() else z3.BoolVal(bool(vals[0] & 1))
        else:
            half = vals.size // 2
            lo, hi = vals[:half], vals[half:]
            if (lo == hi).all():  # the top index bit is not read here
                r = tree(lo, nbits - 1)
            else:
                bit = z3.Extract(nbits - 1, nbits - 1, idx) == 1
                r = z3.If(bit, tree(hi, nbits - 1), tree(lo, nbits - 1))
        memo[key] = r
        if len(memo) > SUPPORT_TREE_NODES:
            raise OverflowError("support table too large to state")
        return r

    try:
        table = tree(values, int(idx.size()))
    except OverflowError:
        return None
    claim = t == table
    s = z3.Solver()
    s.add(z3.Not(claim))
    return claim, s.to_smt2()


def _support_guess(T: TermStore, k: int, nodes: list[int], leaves: tuple[int, ...], seed: int = 0
                   ) -> tuple[int, ...] | None:
    """The leaves k's value changes with on random assignments (each leaf re-drawn alone, every
    other kept); the proof decides. None when k cannot be evaluated (an opaque value)."""
    rng = np.random.default_rng(seed)
    n = SUPPORT_SAMPLES
    widths = [SORTS[int(T.sort[leaf])].width for leaf in leaves]
    base = {leaf: rng.integers(0, 1 << min(w, 63), n, dtype=np.uint64, endpoint=False)
            for leaf, w in zip(leaves, widths)}
    ref = _eval_with(T, k, nodes, base, n)
    if ref is None:
        return None
    read = []
    for leaf, w in zip(leaves, widths):
        vals = dict(base)
        vals[leaf] = base[leaf] ^ rng.integers(1, 1 << min(w, 63), n, dtype=np.uint64, endpoint=True) \
            if w > 1 else base[leaf] ^ np.uint64(1)
        got = _eval_with(T, k, nodes, vals, n)
        if got is None:
            return None
        if (got != ref).any():
            read.append(leaf)
    return tuple(read)


def support_possible(T: TermStore, leaves, max_bits: int) -> bool:
    """Whether prove_support(..., leaves, max_bits) may find a support at all: 1 to SUPPORT_LEAVES integer
    or bit leaves (a float leaf's bits are no table index), one of them at most max_bits wide (the leaves
    read are a non-empty subset of `leaves` of at most max_bits bits in all). When not, it returns None
    whatever the term, before its guess."""
    return 0 < len(leaves) <= SUPPORT_LEAVES and \
        not any(SORTS[int(T.sort[leaf])].kind is Kind.FLOAT for leaf in leaves) and \
        min(SORTS[int(T.sort[leaf])].width for leaf in leaves) <= max_bits


def prove_support(T: TermStore, k: int, nodes: list[int], leaves: tuple[int, ...], max_bits: int) -> Support | None:
    """A support lemma for bit-level term k (its subgraph `nodes`, its input leaves `leaves` in
    ascending id order, all of them integer/bit inputs) whose value depends on leaves of at most
    `max_bits` bits in all, or None. The leaves it depends on are guessed by evaluation; the table is
    its value for every assignment of those leaves with the others 0; Z3 then proves, for every value
    of every leaf, that the term equals that table (so the other leaves are irrelevant, and the table
    is the term's function: the guess and the enumeration are trusted for nothing)."""
    import z3

    if not support_possible(T, leaves, max_bits):
        return None
    read = _support_guess(T, k, nodes, leaves)
    if read is None or not read or sum(SORTS[int(T.sort[leaf])].width for leaf in read) > max_bits:
        return None
    count, vals = _every_assignment(T, read, leaves)
    values = _eval_with(T, k, nodes, vals, count)
    if values is None:
        return None
    try:
        got = support_claim(T, k, leaves, read, values)
    except ValueError:  # an operation the Z3 encoding does not have
        return None
    if got is None:
        return None
    claim, smt2 = got
    s = z3.Solver()
    s.set("timeout", 10000)
    s.add(z3.Not(claim))
    if s.check() != z3.unsat:
        return None
    return Support(Lemma(k, read[0], str(SORTS[int(T.sort[k])]), "support", smt2, "unsat"), read,
                   np.ascontiguousarray(values, np.uint64).tobytes())
