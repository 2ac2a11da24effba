"""semantics.termeval.small_subgraph with a `big` set (proofs.normal.Normalizer.table's walks): the nodes it
marks big have more than `limit` nodes below them, and its answers are the plain walk's, whatever roots
were walked before with the same set (sage_attention: every int8 code of a quantised block reads the
block's scale, a reduction of thousands of nodes; one walk marks the scale and the other codes stop
there, instead of each walking `limit` nodes)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from semantics.termeval import small_subgraph, subgraph
from semantics.terms import Mods, Op, TermStore, bits_sort, mods_id

NONE = mods_id(Mods())
S32 = bits_sort(32)


def _dag(data, T: TermStore) -> list[int]:
    """A random DAG of and/or/xor/add/not nodes over a few input leaves and constants: each new node
    reads earlier ones (a long chain, a wide reduction, shared subterms: whatever is drawn)."""
    ids = [int(x) for x in T.input("x", np.arange(data.draw(st.integers(1, 6))), S32)]
    ids.append(int(T.const(S32, np.uint64(data.draw(st.integers(0, 255))))[0]))
    for _ in range(data.draw(st.integers(1, 120))):
        op = data.draw(st.sampled_from([Op.AND, Op.OR, Op.XOR, Op.IADD, Op.NOT]))
        recent = data.draw(st.booleans())  # a chain (reads the last nodes) or anywhere
        pick = st.integers(max(0, len(ids) - 3) if recent else 0, len(ids) - 1)
        kids = [ids[data.draw(pick)]] if op is Op.NOT else [ids[data.draw(pick)], ids[data.draw(pick)]]
        ids.append(int(T.make(op, S32, NONE, [np.array([k]) for k in kids])[0]))
    return ids


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_big_set_gives_the_plain_answers(data) -> None:
    T = TermStore()
    ids = _dag(data, T)
    limit = data.draw(st.integers(1, 40))
    big: set[int] = set()
    roots = data.draw(st.lists(st.sampled_from(ids), min_size=1, max_size=40))
    for r in roots:  # in any order, sharing the set
        plain = small_subgraph(T, r, limit)
        assert small_subgraph(T, r, limit, big) == plain
        exact = subgraph(T, np.array([r]))
        assert (plain is None) == (exact.size > limit)
        if plain is not None:
            assert plain == exact.tolist()
    for b in big:  # only nodes whose subgraphs are over the limit are marked
        assert subgraph(T, np.array([b])).size > limit


def test_shared_big_reduction_is_walked_once() -> None:
    """Codes x[j] ^ scale, with scale an or-chain over 3000 leaves: the first walk marks scale (found early on
    its path), the next ones stop as soon as they reach it."""
    T = TermStore()
    leaves = T.input("x", np.arange(3000), S32)
    s = int(leaves[0])
    for x in leaves[1:].tolist():
        s = int(T.make(Op.OR, S32, NONE, [np.array([s]), np.array([x])])[0])
    codes = T.make(Op.XOR, S32, NONE, [np.array([s]), T.input("q", np.arange(50), S32)])
    big: set[int] = set()
    assert small_subgraph(T, int(codes[0]), 1000, big) is None
    assert s in big and int(codes[0]) in big
    seen_kids = []
    real = T.kids
    T.kids = lambda i: (seen_kids.append(i), real(i))[1]  # type: ignore[method-assign]
    for c in codes[1:].tolist():
        assert small_subgraph(T, c, 1000, big) is None
    assert len(seen_kids) == 49  # one kids() per code: its first kid read is marked already
    T.kids = real  # type: ignore[method-assign]
    assert small_subgraph(T, int(leaves[5]), 1000, big) == [int(leaves[5])]
