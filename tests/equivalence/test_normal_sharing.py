"""proofs.normal: Normalizer.equal_sharing (the subterms both sides share as atoms) and _finite_nodes.

Checked against the terms' values (semantics.termeval, bit-exact f32: an oracle that knows nothing of normal
forms):
- a node _finite_nodes calls finite has a finite value at every random input tried (the soundness direction:
  only such nodes become atoms); an if-then-else with an infinite branch, a division, log2 are not finite;
- equal_sharing says equal only for pairs whose values agree at random inputs, and it proves a rewritten
  online-softmax-like row (reassociated sums, commuted products, the shared scores as atoms) while the seeded
  bugs beside it (a dropped term, a swapped operand, a missing rescale) are not equal by it nor by the whole
  normal forms;
- an infinite shared subterm (a masked score, -inf) is never an atom: the TERM atoms it made are finite nodes.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import proofs.normal as normal
from proofs.normal import AtomKind, Normalizer
from semantics.termeval import evaluate
from semantics.terms import PRED, Mods, Op, TermStore, float_sort, mods_id

F32 = float_sort("f32")
RN = mods_id(Mods(rnd="rn"))
APPROX = mods_id(Mods(approx="approx"))
NEG_INF = 0xFF800000
N_IN = 6


def _bin(T: TermStore, op: Op, a: int, b: int) -> int:
    return int(T.make(op, F32, RN, [np.array([a]), np.array([b])])[0])


def _un(T: TermStore, op: Op, a: int) -> int:
    return int(T.make(op, F32, APPROX, [np.array([a])])[0])


def _ite(T: TermStore, p: int, a: int, b: int) -> int:
    return int(T.make(Op.ITE, F32, 0, [np.array([p]), np.array([a]), np.array([b])])[0])


def _gt(T: TermStore, a: int, b: int) -> int:
    return int(T.make(Op.CMP, PRED, mods_id(Mods(cmp="gt")), [np.array([a]), np.array([b])])[0])


def _const(T: TermStore, bits: int) -> int:
    return int(T.const(F32, bits)[0])


def _f32(v: float) -> int:
    return int(np.array([v], np.float32).view(np.uint32)[0])


def _values(T: TermStore, terms: list[int], seed: int) -> np.ndarray:
    """f32 values of `terms` at one random input (x in [-1, 1])."""
    x = np.random.default_rng(seed).uniform(-1, 1, N_IN).astype(np.float32)

    def leaf(buf: str, elems: np.ndarray, sort: int) -> np.ndarray:
        return x[np.asarray(elems)].view(np.uint32).astype(np.uint64)

    return evaluate(T, np.array(terms), leaf).astype(np.uint32).view(np.float32).astype(np.float64)


OPS = ["add", "sub", "mul", "max", "ex2", "ite", "div", "lg2", "inf"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 10**6), st.integers(0, 10**6)), min_size=1,
                max_size=24), st.integers(0, 2**32 - 1))
def test_finite_nodes_have_finite_values(steps, seed) -> None:
    T = TermStore()
    nodes = T.input("x", np.arange(N_IN), F32).tolist()
    for op, i, j in steps:
        a, b = nodes[i % len(nodes)], nodes[j % len(nodes)]
        if op == "inf":
            nodes.append(_ite(T, _gt(T, a, b), a, _const(T, NEG_INF)))
        elif op == "ite":
            nodes.append(_ite(T, _gt(T, a, b), b, a))
        elif op in ("ex2", "lg2"):  # ex2 of a scaled-down value: no f32 overflow in the oracle
            nodes.append(_un(T, Op.FEX2 if op == "ex2" else Op.FLG2, _bin(T, Op.FMUL, a, _const(T, _f32(1 / 64)))))
        else:
            nodes.append(_bin(T, {"add": Op.FADD, "sub": Op.FSUB, "mul": Op.FMUL, "max": Op.FMAX,
                                  "div": Op.FDIV}[op], a, b))
    N = Normalizer(T)
    ids = np.arange(len(T), dtype=np.int64)
    fin = N._finite_nodes(ids)
    vals = np.concatenate([_values(T, ids.tolist(), seed + k) for k in range(3)]).reshape(3, -1)
    assert np.isfinite(vals[:, fin]).all()
    for k, i in enumerate(ids.tolist()):  # the operations that can leave the reals are never finite
        if int(T.op[i]) in (Op.FDIV, Op.FLG2) or (int(T.op[i]) == Op.CONST and int(T.aux[i]) == NEG_INF):
            assert not fin[k]


def _row(T: TermStore, scores: list[int], v: list[int], order: list[int], bug: str) -> int:
    """sum_j exp2(s_j - m) v_j / sum_j exp2(s_j - m), m = max_j s_j, in two tiles (online softmax: the first
    tile's sums rescaled by exp2(m1 - m)), the terms summed in `order`; `bug` seeds one mistake."""
    half = len(scores) // 2
    tiles = [order[:half], order[half:]]
    m1 = scores[tiles[0][0]]
    for j in tiles[0][1:]:
        m1 = _bin(T, Op.FMAX, m1, scores[j])
    m = m1
    for j in tiles[1]:
        m = _bin(T, Op.FMAX, m, scores[j])
    acc = l = None
    for t, tile in enumerate(tiles):
        mt = m1 if t == 0 else m
        for j in tile:
            p = _un(T, Op.FEX2, _bin(T, Op.FSUB, scores[j], mt))
            pv = _bin(T, Op.FMUL, v[j] if bug != "swapped" or j != tile[0] else scores[j], p)
            if bug == "dropped" and j == tile[-1] and t == 1:
                continue
            acc = pv if acc is None else _bin(T, Op.FADD, acc, pv)
            l = p if l is None else _bin(T, Op.FADD, p, l)
        if t == 0 and bug != "rescale":
            alpha = _un(T, Op.FEX2, _bin(T, Op.FSUB, m1, m))
            acc, l = _bin(T, Op.FMUL, acc, alpha), _bin(T, Op.FMUL, alpha, l)
    return _bin(T, Op.FDIV, acc, l)


@settings(max_examples=25, deadline=None)
@given(st.permutations(range(4)), st.sampled_from(["", "", "dropped", "swapped", "rescale"]), st.booleans(),
       st.integers(0, 2**32 - 1))
def test_equal_sharing_proves_a_rewritten_row_and_not_its_bugs(order, bug, masked, seed) -> None:
    T = TermStore()
    x = T.input("x", np.arange(N_IN), F32).tolist()
    scale = _const(T, _f32(0.5))
    # the shared scores (both sides' same nodes): products of inputs, one of them masked to -inf when `masked`
    scores = [_bin(T, Op.FMUL, _bin(T, Op.FMUL, x[j], x[(j + 1) % N_IN]), scale) for j in range(4)]
    if masked:
        scores[3] = _ite(T, _gt(T, x[4], x[5]), scores[3], _const(T, NEG_INF))
    v = x[2:6]
    ref = _row(T, scores, v, [0, 1, 2, 3], "")
    cand = _row(T, scores, v, list(order), bug)
    N = Normalizer(T)
    with pytest.MonkeyPatch.context() as mp:  # these small rows share less than a FlashAttention row does
        mp.setattr(normal, "SHARING_REGION", 1)
        got = N.equal_sharing(cand, ref)
    a, b = _values(T, [cand, ref], seed), _values(T, [cand, ref], seed + 1)
    if got:  # the oracle: equal values (up to f32 rounding of the two orders)
        assert abs(a[0] - a[1]) <= 1e-5 * max(1.0, abs(a[1])) and abs(b[0] - b[1]) <= 1e-5 * max(1.0, abs(b[1]))
    assert got == (bug == "")  # the rewrite proved, each seeded bug not
    F = Normalizer(T)
    assert F.equal(*F.of(np.array([cand, ref]))) == got  # the whole normal forms agree
    fin = N._finite_nodes(np.arange(len(T), dtype=np.int64))
    assert any(kind is AtomKind.TERM for kind, _ in N.atoms)  # the shared scores (products) were atoms
    for kind, payload in N.atoms:  # its atoms stand for finite shared nodes only (never the masked score)
        if kind is AtomKind.TERM:
            assert fin[payload[0]] and payload[0] != (scores[3] if masked else -1)


def test_a_root_below_the_other_is_normalised_not_an_atom() -> None:
    """c = (x0 x1) x3 and r = c + (x2 - x2): c is shared and finite, but as a root it is normalised over the atom
    x0 x1 (c's own atom would be a form nothing else has): equal both ways, and c against c + x2 is not."""
    T = TermStore()
    x = T.input("x", np.arange(N_IN), F32).tolist()
    c = _bin(T, Op.FMUL, _bin(T, Op.FMUL, x[0], x[1]), x[3])
    r = _bin(T, Op.FADD, c, _bin(T, Op.FSUB, x[2], x[2]))
    N = Normalizer(T)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(normal, "SHARING_REGION", 1)
        assert N.equal_sharing(c, r) and N.equal_sharing(r, c)
        assert not N.equal_sharing(c, _bin(T, Op.FADD, c, x[2]))
