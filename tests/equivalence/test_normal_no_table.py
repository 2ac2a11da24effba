"""proofs.normal's table() answers None from a term's input leaves, kept per node (Normalizer._no_table), where
those leaves already decide it: more than TABLE_BITS input bits and no support lemma possible (one 32-bit label, a
float leaf, more than SUPPORT_LEAVES leaves). cross_entropy_zloss' reference reads 30 720 bits of packed label masks
(`(m >> j) & 1 != 0`, m a 16-bit OR of `col == y` predicates put in place by selp and shl, PTX 9.7.8.x/9.7.9.x),
and each walked its whole mask tree before answering None (bench/results/i11ce3-2026-12-07s43). The shortcut must
give table()'s own answer on every term: checked here against a normalizer whose shortcut is off."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import semantics.termeval as termeval
from proofs.normal import Normalizer
from semantics.terms import PRED, Mods, Op, TermStore, bits_sort, mods_id

EQ, NE = mods_id(Mods(cmp="eq")), mods_id(Mods(cmp="ne"))
TO_U32 = mods_id(Mods(elems=("u32", "u16")))


def _packed_label_mask(T: TermStore, y: int, cols: range) -> int:
    """A 16-bit mask whose bit j is `cols[j] == y` (selp 1/0, shifted into place, or'ed)."""
    b16 = bits_sort(16)
    mask = int(T.const(b16, 0)[0])
    for j, col in enumerate(cols):
        pred = T.make1(Op.CMP, PRED, EQ, [int(T.const(bits_sort(32), col)[0]), y])
        bit = T.make1(Op.ITE, b16, 0, [pred, int(T.const(b16, 1)[0]), int(T.const(b16, 0)[0])])
        mask = T.make1(Op.OR, b16, 0, [mask, T.make1(Op.SHL, b16, 0, [bit, int(T.const(b16, j)[0])])])
    return mask


def _read_bit(T: TermStore, mask: int, j: int) -> int:
    """`((u32) mask >> j) & 1 != 0`, as Triton's sm_90a build reads a packed predicate back."""
    b32 = bits_sort(32)
    wide = T.make1(Op.CVT, b32, TO_U32, [mask])
    shifted = T.make1(Op.SHR, b32, 0, [wide, int(T.const(b32, j)[0])])
    one = T.make1(Op.AND, b32, 0, [shifted, int(T.const(b32, 1)[0])])
    return T.make1(Op.CMP, PRED, NE, [one, int(T.const(b32, 0)[0])])


def _off(N: Normalizer) -> Normalizer:
    N._no_table = lambda i: False  # type: ignore[method-assign]  # table() walks every subgraph, as before
    return N


def test_packed_label_bits_refused_without_a_walk(monkeypatch) -> None:
    T = TermStore()
    y = int(T.input("labels", np.arange(1), bits_sort(32))[0])
    mask = _packed_label_mask(T, y, range(40, 56))
    reads = [_read_bit(T, mask, j) for j in range(16)]
    before = Normalizer(T)
    assert [before.table(r) for r in reads] == [None] * 16  # one 32-bit leaf: no table, no support lemma
    forms = _off(Normalizer(T)).of(np.array(reads, np.int64))

    def walk(*args, **kwargs):
        raise AssertionError("small_subgraph walked a term its leaves decide")

    monkeypatch.setattr(termeval, "small_subgraph", walk)
    N = Normalizer(T)
    assert all(N._no_table(r) for r in reads)
    assert [N.table(r) for r in reads] == [None] * 16
    # the predicates read back through _packed_cmp as before: bit j is the condition of `40 + j == y`
    assert N.of(np.array(reads, np.int64)) == forms
    assert len({repr(f) for f in forms}) == 16


def test_small_leaves_still_get_their_table() -> None:
    """A term of at most TABLE_BITS input bits is not refused: its table is made as before."""
    T = TermStore()
    code = int(T.input("codes", np.arange(1), bits_sort(8))[0])
    b8 = bits_sort(8)
    t = T.make1(Op.AND, b8, 0, [T.make1(Op.SHR, b8, 0, [code, int(T.const(b8, 3)[0])]), int(T.const(b8, 5)[0])])
    N = Normalizer(T)
    assert not N._no_table(t)
    assert N.table(t) is not None and N.table(t) == _off(Normalizer(T)).table(t)


_OPS = [Op.AND, Op.OR, Op.XOR, Op.SHL, Op.SHR, Op.IADD]


@settings(max_examples=60, deadline=None)
@given(widths=st.lists(st.sampled_from([8, 16, 32]), min_size=1, max_size=20),
       steps=st.lists(st.tuples(st.sampled_from(_OPS), st.integers(0, 63), st.integers(0, 63), st.integers(0, 31)),
                      min_size=1, max_size=40),
       budget=st.sampled_from([2, 8, 4096]))
def test_the_shortcut_is_table_itself(widths: list[int], steps: list[tuple], budget: int) -> None:
    """Random 32-bit terms over leaves of random widths (each leaf zero-extended): table() with the shortcut and
    without it agree on every node, whatever the leaf walk's budget (a walk past it claims nothing)."""
    T = TermStore()
    b32 = bits_sort(32)
    nodes = []
    for j, w in enumerate(widths):
        leaf = int(T.input(f"in{j}", np.arange(1), bits_sort(w))[0])
        nodes.append(leaf if w == 32 else T.make1(Op.CVT, b32, mods_id(Mods(elems=("u32", f"u{w}"))), [leaf]))
    for op, a, b, c in steps:
        x, y = nodes[a % len(nodes)], nodes[b % len(nodes)]
        if op in (Op.SHL, Op.SHR):
            y = int(T.const(b32, c)[0])
        nodes.append(T.make1(op, b32, 0, [x, y]))
    nodes.append(T.make1(Op.CMP, PRED, EQ, [nodes[-1], int(T.const(b32, 7)[0])]))
    N, plain = Normalizer(T), _off(Normalizer(T))
    N._leaves_of = (lambda i, _f=N._leaves_of: _f(i, budget))  # type: ignore[method-assign]
    for t in reversed(nodes):
        got = N.table(t)
        assert got == plain.table(t)
        if N._no_table(t):
            assert got is None
