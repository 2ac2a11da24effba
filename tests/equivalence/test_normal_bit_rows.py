"""proofs.normal's _bit reads each term's row (op, sort, kids, aux) once (Normalizer._bit_rows) and _wide_equality
is kept per term (Normalizer._wide_eqs): cross_entropy_zloss' reference asks every bit of 30 736 packed-mask reads
`((u32) m >> j) & 1 != 0` (PTX 9.7.8.x shifts/logic, 9.7.9.x selp), 1.6 M _bit_of calls over about 50 k terms, and
_pred then table() asked _wide_equality of one term twice (bench/results/i11cost-2026-12-07s46). Speed only: here
the answers AND the memo that later answers depend on (_bit_memo, depth-limited) are those of the code before the
change (kept below, verbatim, as the reference), on random bit-level terms and query orders."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from proofs.normal import PACKED_DEPTH, Normalizer, _bit_not
from semantics.terms import PRED, SORTS, Kind, Mods, Op, TermStore, bits_sort, mods, mods_id

from .test_normal_no_table import _packed_label_mask, _read_bit


class _Before(Normalizer):
    """_bit and _bit_of as they were before the row cache (main 811b63b), verbatim."""

    def _bit(self, k, j, depth):
        key = (k, j)
        if key in self._bit_memo:
            return self._bit_memo[key]
        got = self._bit_of(k, j, depth) if depth > 0 else None
        if got is not None or depth >= PACKED_DEPTH:
            self._bit_memo[key] = got
        return got

    def _bit_of(self, k, j, depth):
        T = self.T
        op = int(T.op[k])
        w = SORTS[int(T.sort[k])].width
        if j >= w or w > 64:
            return None
        if op == Op.CONST:
            return (int(T.aux[k]) >> j) & 1
        kids = T.kids(k)
        d = depth - 1
        if op == Op.ITE and SORTS[int(T.sort[kids[0]])].kind is Kind.PRED:
            x, y = self._bit(kids[1], j, d), self._bit(kids[2], j, d)
            if isinstance(x, int) and isinstance(y, int):
                return x if x == y else (kids[0], x == 0)
            return None
        if op == Op.NOT:
            x = self._bit(kids[0], j, d)
            return _bit_not(x)
        if op in (Op.AND, Op.OR, Op.XOR):
            x = self._bit(kids[0], j, d)
            if isinstance(x, int) and op != Op.XOR and x == (0 if op == Op.AND else 1):
                return x
            y = self._bit(kids[1], j, d)
            if isinstance(y, int) and op != Op.XOR and y == (0 if op == Op.AND else 1):
                return y
            if x is None or y is None:
                return None
            if isinstance(x, tuple) and isinstance(y, tuple):
                return None
            if isinstance(x, tuple):
                x, y = y, x
            return _bit_not(y) if op == Op.XOR and x == 1 else y
        if op in (Op.SHL, Op.SHR):
            if int(T.op[kids[1]]) != Op.CONST:
                return None
            amt = min(int(T.aux[kids[1]]) & 0xFFFFFFFF, w)
            if op == Op.SHL:
                return 0 if j < amt else self._bit(kids[0], j - amt, d)
            src = j + amt
            if src >= w:
                if not mods(int(T.aux[k])).signed:
                    return 0
                src = w - 1
            return self._bit(kids[0], src, d)
        if op == Op.CVT:
            m = mods(int(T.aux[k]))
            dst, src = m.elems
            if m.sat or m.rnd or not all(t[0] in "bus" and t[1:].isdigit() for t in (dst, src)):
                return None
            sw = int(src[1:])
            if j < sw:
                return self._bit(kids[0], j, d)
            return self._bit(kids[0], sw - 1, d) if src[0] == "s" else 0
        if op == Op.EXTRACT:
            m = mods(int(T.aux[k]))
            return self._bit(kids[0], m.lo + j, d) if j < m.width else 0
        if op == Op.CONCAT:
            for c in reversed(kids):
                cw = SORTS[int(T.sort[c])].width
                if j < cw:
                    return self._bit(c, j, d)
                j -= cw
            return None
        return None


def _same_everywhere(T: TermStore, queries: list[tuple[int, int, int]]) -> None:
    new, old = Normalizer(T), _Before(T)
    for k, j, depth in queries:
        assert new._bit(k, j, depth) == old._bit(k, j, depth), (k, j, depth)
    assert new._bit_memo == old._bit_memo  # the same facts kept: later answers cannot differ either


def test_packed_label_bits_as_before() -> None:
    T = TermStore()
    y = int(T.input("labels", np.arange(1), bits_sort(32))[0])
    mask = _packed_label_mask(T, y, range(40, 56))
    reads = [_read_bit(T, mask, j) for j in range(16)]
    new, old = Normalizer(T), _Before(T)
    got = [new._packed_cmp(r) for r in reads]
    assert got == [old._packed_cmp(r) for r in reads] and all(g is not None for g in got)
    assert new._bit_memo == old._bit_memo
    # negative: a bit that is two predicates' (or'ed in one place) is not followed, as before
    b16 = bits_sort(16)
    two = T.make1(Op.OR, b16, 0, [mask, T.make1(Op.SHL, b16, 0, [mask, int(T.const(b16, 1)[0])])])
    bad = _read_bit(T, two, 3)
    assert Normalizer(T)._packed_cmp(bad) is None and _Before(T)._packed_cmp(bad) is None


_OPS = [Op.AND, Op.OR, Op.XOR, Op.NOT, Op.SHL, Op.SHR, Op.ITE, Op.CVT, Op.EXTRACT, Op.CONCAT, Op.IADD]


@settings(max_examples=80, deadline=None)
@given(steps=st.lists(st.tuples(st.sampled_from(_OPS), st.integers(0, 63), st.integers(0, 63), st.integers(0, 40)),
                      min_size=1, max_size=40),
       queries=st.lists(st.tuples(st.integers(0, 80), st.integers(0, 40), st.integers(0, PACKED_DEPTH + 2)),
                        min_size=1, max_size=60))
def test_bits_and_memo_as_before(steps: list[tuple], queries: list[tuple]) -> None:
    """Random 16-bit terms over a 16-bit leaf, constants and predicates (selp, shifts by constants and by terms,
    signed shifts, narrowing/widening cvt, extract, concat): every (term, bit, depth) query, in a random order and
    at random depths, answers as before and leaves the same memo."""
    T = TermStore()
    b16, b32 = bits_sort(16), bits_sort(32)
    leaf = int(T.input("x", np.arange(1), b16)[0])
    preds = [T.make1(Op.CMP, PRED, mods_id(Mods(cmp="eq")), [leaf, int(T.const(b16, v)[0])]) for v in (3, 9)]
    nodes = [leaf, int(T.const(b16, 0x00F1)[0]), int(T.const(b16, 1)[0])]
    for op, a, b, c in steps:
        x, y = nodes[a % len(nodes)], nodes[b % len(nodes)]
        if op is Op.ITE:
            t = T.make1(op, b16, 0, [preds[c % 2], x, y])
        elif op is Op.NOT:
            t = T.make1(op, b16, 0, [x])
        elif op in (Op.SHL, Op.SHR):
            amount = int(T.const(b16, c)[0]) if c % 5 else y  # a term amount: not followed
            t = T.make1(op, b16, mods_id(Mods(signed=bool(c % 2))) if op is Op.SHR else 0, [x, amount])
        elif op is Op.CVT:  # widen then narrow back (u or s)
            s = "s" if c % 2 else "u"
            wide = T.make1(op, b32, mods_id(Mods(elems=(f"{s}32", f"{s}16"))), [x])
            t = T.make1(op, b16, mods_id(Mods(elems=("u16", "u32"))), [wide])
        elif op is Op.EXTRACT:  # the low 8 bits of x as the high byte over y's low byte
            lo = T.make1(op, bits_sort(8), mods_id(Mods(lo=c % 9, width=8)), [x])
            t = T.make1(Op.CONCAT, b16, 0, [lo, T.make1(op, bits_sort(8), mods_id(Mods(lo=0, width=8)), [y])])
        elif op is Op.CONCAT:
            t = T.make1(Op.EXTRACT, b16, mods_id(Mods(lo=c % 17, width=16)), [T.make1(op, b32, 0, [x, y])])
        else:
            t = T.make1(op, b16, 0, [x, y])
        nodes.append(t)
    _same_everywhere(T, [(nodes[k % len(nodes)], j, d) for k, j, d in queries])


def test_wide_equality_kept_per_term() -> None:
    """_wide_equality answers as _wide_equality_of (the test before the cache) on each term, asked twice."""
    T = TermStore()
    b32 = bits_sort(32)
    y = int(T.input("labels", np.arange(1), b32)[0])
    small = int(T.input("codes", np.arange(1), bits_sort(8))[0])
    terms = [T.make1(Op.CMP, PRED, mods_id(Mods(cmp=c)), [a, int(T.const(s, 5)[0])])
             for c in ("eq", "ne", "lt") for a, s in ((y, b32), (small, bits_sort(8)))]
    N = Normalizer(T)
    for t in terms * 2:
        assert N._wide_equality(t) == N._wide_equality_of(t)
    assert [N._wide_equality(t) for t in terms] == [True, False, True, False, False, False]
