"""Equivalence of two kernels' outputs, element by element, from their terms (one shared store).

For every element of every global buffer either kernel wrote, the obligation is "the candidate's
final value equals the reference's for every input". It is discharged, cheapest first:
- the same term id (hash-consing: both kernels computed the same expression the same way);
- both values concrete (the same for every input): their bits;
- the real-arithmetic normal forms (proofs/normal.py) are equal, after the bit-level lemmas
  (proofs/lemmas.py) rewrote what they could prove;
- the element's two terms are a proved element's with input elements renamed (proofs/instances.py):
  elements of one shape are grouped, one representative per group gets the normal forms, and the
  others are checked to be its instances (an identity over all inputs stays one under substitution).
An element written by only one kernel, or whose normal forms differ, is a *suspect*: the caller
looks for an input that shows the difference (proofs/witness.py) before saying `not_equivalent`.
An opaque value (an instruction without a term meaning) in an output makes the result
`unsupported` naming it; a fatal gap of either run (a data-dependent branch that could not be
merged, a data-dependent address) makes it `unsupported` before any comparison.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from semantics.terms import CONCRETE, Op, TermStore
from symexec.machine import check_time_limit

from .normal import NoRealMeaning, Normalizer, TooBig

__all__ = ["Outcome", "Method", "Side", "Suspect", "Proof", "EquivalenceResult", "compare_outputs"]


class Outcome(str, Enum):
    VERIFIED = "verified"
    NOT_EQUIVALENT = "not_equivalent"
    UNSUPPORTED = "unsupported"
    INCONCLUSIVE = "inconclusive"


class Method(str, Enum):
    """How one element's obligation was discharged."""

    IDENTICAL = "identical term"
    CONCRETE = "equal concrete bits"
    NORMAL_FORM = "equal real-arithmetic normal forms"
    INSTANCE = "a proved element's terms with input elements renamed"


@dataclass
class Side:
    """One kernel's run: final terms per written global buffer, and what the terms missed."""

    label: str  # "candidate" / "reference"
    outputs: dict  # buffer name -> symexec.check.termshadow.BufferOutput
    gaps: list  # symexec.check.termshadow.Gap
    opaque_why: dict[int, int]  # OPAQUE term id -> index in gaps
    inputs: set[str] = field(default_factory=set)  # buffers that are symbolic inputs
    # every race of its run is warps of one instruction storing one value to the same bytes
    # (races.RaceDetector.replicated_stores_only): its outputs do not depend on which store lands
    replicated_stores_only: bool = False
    # what its terms read into instructions the manual leaves open (TermShadow.assumptions): printed with the verdict
    assumptions: list[str] = field(default_factory=list)


@dataclass
class Suspect:
    """An element the proof could not show equal: written by one side only, or different forms."""

    buffer: str
    element: int
    why: str
    candidate: str = ""
    reference: str = ""


@dataclass
class Proof:
    """Per buffer: how many elements each method proved (the certificate lists them one by one)."""

    buffer: str
    elements: int
    methods: dict[str, int] = field(default_factory=dict)


@dataclass
class EquivalenceResult:
    outcome: Outcome
    reason: str = ""
    proofs: list[Proof] = field(default_factory=list)
    suspects: list[Suspect] = field(default_factory=list)
    suspect_count: int = 0
    assumptions: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    stats: dict = field(default_factory=dict)
    obligations: list[tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)
    # (buffer, elements, candidate terms, reference terms, method codes) for certificates
    instance_of: dict[str, np.ndarray] = field(default_factory=dict)
    # buffer -> per obligation (as in `obligations`), the element whose instance it is (-1: none)

    @property
    def verdict(self) -> str:
        return f"{self.outcome.value}: {self.reason}" if self.reason and self.outcome is not Outcome.VERIFIED \
            else self.outcome.value


METHOD_CODES = {Method.IDENTICAL: 0, Method.CONCRETE: 1, Method.NORMAL_FORM: 2, Method.INSTANCE: 3}
#: Elements of one shape needed to try proving one of them for all (smaller groups: each on its own).
GROUP_MIN = 4
GROUP_ROUNDS = 4  # representatives tried per shape before the rest are proved one by one
#: Members of a big group checked first, spread over it: when fewer than GROUP_SAMPLE_YIELD of them
#: pass the instance check's first pass, the shape's members are mostly not renamings of one
#: another (the rows of a column-normalised matrix: each one's norm is a sum over every row, in an
#: order no renaming preserves) and they are proved one by one, without checking the whole group
#: against this representative or another (Dion's q_out: 63 instances of 7167 per representative,
#: 16.6 s each; bench/results/equiv-dion-2026-12-04).
GROUP_SAMPLE = 16
GROUP_SAMPLE_YIELD = 0.25
#: A group is checked for instances only when a representative's DAG (the first group's, standing for the
#: buffer's) has at most this many nodes per member: the check walks the whole DAG in Python once per
#: representative, while a proof on its own reuses the normal forms of shared nodes (ce_zloss_smem_row: 6000 column shapes of 8 rows, each DAG a whole row's
#: reduction; the planning alone ran for minutes).
NODES_PER_MEMBER = 1024
#: ... unless the members' DAGs are their own (a member shares less than half its DAG's nodes with the
#: representative's, so a proof on its own normalises about the whole DAG again, some 20-50 us per node in Python,
#: where the check plans it once in numpy steps, about 2 us per node): such groups are checked while the buffer's
#: checked DAGs hold at most OWN_DAG_NODES nodes in all (ce_zloss_smem_row's `loss`: 8 rows of one shape, a 174 k
#: node DAG each, 0.4 s to check the 7 members, 20 s CPU to normalise them; its 6000 logits column shapes of 8 rows
#: stay out: 6000 plans); one representative each (not GROUP_ROUNDS): a failed check costs one plan
OWN_DAG_NODES = 1 << 20
SUSPECT_CODE = -1
#: Elements per buffer tried by Normalizer.equal_sharing before it is given up there when none was proved by it
SHARING_TRIES = 16
SHARING_MAX = 2048  # FlashAttention cross-target: 288 row representatives; cross_entropy_zloss: 48 000 solo elements
#: Elements per buffer tried by Normalizer.equal_congruent before it is given up there when none was proved by it (in a
#: buffer with more than SHARING_MAX elements to prove on their own only: cross_entropy_zloss' 48 000)
CONGRUENCE_TRIES = 16

REAL_ASSUMPTIONS = [
    "floating-point operations are read as exact real arithmetic (no rounding, overflow, NaN or "
    "flushed subnormals); approximate instructions (ex2.approx, div.full, rsqrt.approx, ...) as the exact "
    "functions they approximate; the precision check compares rounding formats separately",
    "inputs are finite real numbers of their tensors' formats",
]


def compare_outputs(T: TermStore, cand: Side, ref: Side, chunk: int = 256,
                    normalizer: Normalizer | None = None, max_suspects: int = 8,
                    forms: dict | None = None) -> EquivalenceResult:
    """Discharge the obligations of every written element (see the module docstring). `forms`, when
    given, receives (buffer, index among the compared elements) -> both normal forms of each element
    proved by them (for its certificate, proofs/certificate.py). Once `max_suspects` elements are not
    proved the verdict cannot be verified: the rest are not compared by normal forms, counted as not
    proved (they keep the suspect code, so the witness search still sees them) and a note says so."""
    t0 = time.perf_counter()
    for side in (cand, ref):
        fatal = [g for g in side.gaps if g.fatal]
        if fatal:
            return EquivalenceResult(Outcome.UNSUPPORTED, f"{fatal[0].describe()} ({side.label})",
                                     notes=[f"{side.label}: {g.describe()}" for g in fatal])
    N = normalizer or Normalizer(T)
    steps0, hits0 = N.steps, N.root_hits  # a normalizer may serve several comparisons
    res = EquivalenceResult(Outcome.VERIFIED, assumptions=list(REAL_ASSUMPTIONS))
    names = sorted(set(cand.outputs) | set(ref.outputs))
    unsupported: str | None = None
    skipped = 0  # elements not compared by normal forms once max_suspects were found
    too_big = 0  # elements whose comparison went past the normal form's expansion budgets
    sharing = 0  # elements proved with the subterms both sides share as atoms (Normalizer.equal_sharing)
    congruent = 0  # elements proved by their differing subterms' normal forms (Normalizer.equal_congruent)
    for name in names:
        c, r = cand.outputs.get(name), ref.outputs.get(name)
        ce = c.elements if c is not None else np.zeros(0, np.int64)
        re_ = r.elements if r is not None else np.zeros(0, np.int64)
        both = np.intersect1d(ce, re_)
        proof = Proof(name, int(np.union1d(ce, re_).size))
        for e in np.setdiff1d(ce, re_)[:max_suspects].tolist():
            res.suspects.append(Suspect(name, e, "written by the candidate, not by the reference"))
        for e in np.setdiff1d(re_, ce)[:max_suspects].tolist():
            res.suspects.append(Suspect(name, e, "written by the reference, not by the candidate"))
        res.suspect_count += int(np.setxor1d(ce, re_).size)
        if not both.size:
            res.proofs.append(proof)
            continue
        ct = c.terms[np.searchsorted(ce, both)]
        rt = r.terms[np.searchsorted(re_, both)]
        cb = c.bits[np.searchsorted(ce, both)]
        rb = r.bits[np.searchsorted(re_, both)]
        codes = np.full(both.size, SUSPECT_CODE, np.int8)
        same = ct == rt
        conc = (ct == CONCRETE) & (rt == CONCRETE)
        codes[same & ~conc] = METHOD_CODES[Method.IDENTICAL]
        codes[conc & (cb == rb)] = METHOD_CODES[Method.CONCRETE]
        todo = np.nonzero(~same | (conc & (cb != rb)))[0]
        todo = todo[~conc[todo]]  # two different concrete values: a suspect as they are
        for k in np.nonzero(conc & (cb != rb))[0][:max_suspects].tolist():
            res.suspects.append(Suspect(name, int(both[k]), "different values for every input",
                                        f"0x{int(cb[k]):x}", f"0x{int(rb[k]):x}"))
        res.suspect_count += int((conc & (cb != rb)).sum())
        sort = c.sort
        c_roots = _as_term(T, ct[todo], cb[todo], sort)
        r_roots = _as_term(T, rt[todo], rb[todo], sort)
        rep_of = _group_instances(T, c_roots, r_roots)  # per todo entry: its representative's position, or -1
        inst = rep_of >= 0
        res.stats["instances"] = res.stats.get("instances", 0) + int(inst.sum())
        solo = todo[~inst]
        c_solo, r_solo = c_roots[~inst], r_roots[~inst]
        # elements of this buffer tried by equal_sharing: none where the buffer has more elements to prove on their
        # own than SHARING_MAX (each try walks both whole DAGs, where the whole forms' memo serves every element)
        tried = 0 if solo.size <= SHARING_MAX else SHARING_TRIES
        sharing0 = sharing
        # equal_congruent only where equal_sharing is gated out: where both apply, a pair that needs the whole forms
        # (sinkhorn_attention's) costs what equal_sharing saves (back to back, load ~7: 29.6 -> 52.5 s CPU)
        ctried, congruent0 = (0 if solo.size > SHARING_MAX else CONGRUENCE_TRIES), congruent
        for s in range(0, solo.size, chunk):
            check_time_limit(f"comparing the normal forms of {name}")
            if res.suspect_count >= max_suspects:  # the verdict cannot be verified any more: stop comparing
                left = int(solo.size - s)
                skipped += left
                res.suspect_count += left
                break
            idx = solo[s:s + chunk]
            cs_, rs_ = c_solo[s:s + chunk], r_solo[s:s + chunk]
            if forms is None and (ctried < CONGRUENCE_TRIES or congruent > congruent0):  # the pairs where the two
                # terms differ compared, the same nodes above them (a certificate records whole normal forms); given
                # up in a buffer whose first CONGRUENCE_TRIES elements were none proved so
                k = idx.size if ctried >= CONGRUENCE_TRIES else min(idx.size, CONGRUENCE_TRIES - ctried)
                done = np.zeros(idx.size, bool)
                done[:k] = N.equal_congruent(cs_[:k].tolist(), rs_[:k].tolist())
                if k < idx.size and congruent + int(done.sum()) > congruent0:
                    done[k:] = N.equal_congruent(cs_[k:].tolist(), rs_[k:].tolist())
                ctried += idx.size
                codes[idx[done]] = METHOD_CODES[Method.NORMAL_FORM]
                congruent += int(done.sum())
                idx, cs_, rs_ = idx[~done], cs_[~done], rs_[~done]
                if not idx.size:
                    continue
            if forms is None and (tried < SHARING_TRIES or sharing > sharing0):  # shared subterms as atoms first (a
                # certificate records whole normal forms); given up in a buffer whose first tries all failed
                done = np.zeros(idx.size, bool)
                for j, (x, y) in enumerate(zip(cs_.tolist(), rs_.tolist())):
                    if tried >= SHARING_TRIES and sharing + int(done.sum()) == sharing0:
                        break
                    done[j] = N.equal_sharing(x, y)
                    tried += 1
                codes[idx[done]] = METHOD_CODES[Method.NORMAL_FORM]
                sharing += int(done.sum())
                idx, cs_, rs_ = idx[~done], cs_[~done], rs_[~done]
                if not idx.size:
                    continue
            roots = np.concatenate([cs_, rs_])
            try:
                nfs = N.of(roots)
            except NoRealMeaning as e:
                unsupported = unsupported or _opaque_reason(T, roots, cand, ref, str(e))
                continue
            k = idx.size
            for j, (x, y) in enumerate(zip(nfs[:k], nfs[k:])):
                if res.suspect_count >= max_suspects:
                    skipped += 1
                    res.suspect_count += 1
                    continue
                try:
                    same, why = N.equal(x, y), "different real-arithmetic normal forms"
                except TooBig as e:  # past a budget: a suspect (unproved), never verified
                    same, why = False, f"normal forms not compared: {e}"
                    too_big += 1
                if same:
                    codes[idx[j]] = METHOD_CODES[Method.NORMAL_FORM]
                    if forms is not None:
                        forms[(name, int(idx[j]))] = (x, y)
                else:
                    res.suspect_count += 1
                    if len(res.suspects) < max_suspects:
                        res.suspects.append(Suspect(name, int(both[idx[j]]), why,
                                                    N.describe(x, 2, 400), N.describe(y, 2, 400)))
        if inst.any():
            members, reps = todo[inst], todo[rep_of[inst]]
            proved = codes[reps] == METHOD_CODES[Method.NORMAL_FORM]
            codes[members[proved]] = METHOD_CODES[Method.INSTANCE]
            for e, r in zip(members[~proved][:max(0, max_suspects - len(res.suspects))].tolist(),
                            reps[~proved].tolist()):
                res.suspects.append(Suspect(name, int(both[e]), f"its terms are element {int(both[r])}'s with input "
                                            "elements renamed, and that element was not proved"))
            res.suspect_count += int((~proved).sum())
            where = np.full(both.size, -1, np.int64)
            where[members] = both[reps]
            res.instance_of[name] = where
        for m, code in METHOD_CODES.items():
            n = int((codes == code).sum())
            if n:
                proof.methods[m.value] = n
        res.proofs.append(proof)
        res.obligations.append((name, both, ct, rt, codes))
    res.assumptions += [a for a in N.assumptions if a not in res.assumptions]
    res.assumptions += [f"{side.label}: {a}" for side in (cand, ref) for a in side.assumptions]
    res.stats = {"normal_form_nodes": N.steps - steps0, "kept_roots": N.root_hits - hits0, "atoms": len(N.atoms),
                 "instances": res.stats.get("instances", 0), "sharing": sharing, "congruent": congruent,
                 "seconds": round(time.perf_counter() - t0, 3), "too_big": too_big, "not_compared": skipped,
                 "expanded_cache_resets": N.cache_resets}
    if skipped:
        res.notes.append(f"{skipped} element(s) not compared by normal forms: {max_suspects} suspects made the "
                         "verdict inconclusive already (they are counted as not proved)")
    if unsupported is not None:
        res.outcome, res.reason = Outcome.UNSUPPORTED, unsupported
    elif res.suspect_count:
        res.outcome = Outcome.INCONCLUSIVE
        res.reason = f"{res.suspect_count} output element(s) not proved equal"
    return res


def _group_instances(T: TermStore, c_roots: np.ndarray, r_roots: np.ndarray) -> np.ndarray:
    """Per obligation (candidate root, reference root): the position of a representative obligation
    whose instance it is (proofs/instances.py), or -1 to be proved on its own. Obligations are grouped
    by the shapes of their two roots; in a group of GROUP_MIN or more, the first is the
    representative and the others are checked (a sample first in a big group: GROUP_SAMPLE); those
    that are not its instances try the next representative among themselves, up to GROUP_ROUNDS times.
    Groups too small for their DAGs (NODES_PER_MEMBER) are not checked."""
    from semantics.termeval import subgraph

    from .instances import instances, prepare

    rep_of = np.full(c_roots.size, -1, np.int64)
    if c_roots.size < GROUP_MIN:
        return rep_of
    keys: np.ndarray | None = None  # T.node_keys(), once for every check (the store does not grow here)
    key = np.stack([T.shape[c_roots], T.shape[r_roots]], axis=1)
    _, inv, counts = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    inv = inv.reshape(-1)
    groups = np.nonzero(counts >= GROUP_MIN)[0]
    if groups.size:  # the DAG of one representative stands for all (the elements of a buffer are alike)
        first, second = np.nonzero(inv == groups[0])[0][:2]
        nodes = subgraph(T, np.array([c_roots[first], r_roots[first]])).size
        cheap = counts[groups] - 1 >= nodes / NODES_PER_MEMBER
        rounds = np.where(cheap, GROUP_ROUNDS, 1)  # a group let in by its own DAGs: one representative, one plan
        if not cheap.all() and (~cheap).sum() * nodes <= OWN_DAG_NODES:  # (the first DAG again: rarely asked)
            dag = subgraph(T, np.array([c_roots[first], r_roots[first]]))
            other = subgraph(T, np.array([c_roots[second], r_roots[second]]))
            cheap |= np.intersect1d(dag, other, assume_unique=True).size * 2 < other.size
        groups, rounds = groups[cheap], rounds[cheap]
    else:
        rounds = np.zeros(0, np.int64)
    for g, n_rounds in zip(groups.tolist(), rounds.tolist()):
        rest = np.nonzero(inv == g)[0]
        for _ in range(n_rounds):
            if rest.size < GROUP_MIN:
                break
            rep, members = rest[0], rest[1:]
            pair = np.array([c_roots[rep], r_roots[rep]])
            plan = prepare(T, pair)  # the representative's DAG, planned once for its sample and its group
            if keys is None:
                keys = T.node_keys()
            ok = np.zeros(members.size, bool)
            todo = np.ones(members.size, bool)
            if members.size > 2 * GROUP_SAMPLE:  # a sample first: is this representative worth the whole group?
                pick = np.unique(np.linspace(0, members.size - 1, GROUP_SAMPLE).astype(np.int64))
                ok[pick] = instances(T, pair, np.stack([c_roots[members[pick]], r_roots[members[pick]]], axis=1),
                                     give_up_below=GROUP_SAMPLE_YIELD, plan=plan, keys=keys)
                if ok[pick].sum() < GROUP_SAMPLE_YIELD * pick.size:
                    break  # the rest of this shape is proved one by one
                todo[pick] = False
            ok[todo] = instances(T, pair, np.stack([c_roots[members[todo]], r_roots[members[todo]]], axis=1),
                                 plan=plan, keys=keys)
            rep_of[members[ok]] = rep
            rest = members[~ok]
    return rep_of


def _as_term(T: TermStore, terms: np.ndarray, bits: np.ndarray, sort: int) -> np.ndarray:
    """Concrete values as constant terms of the buffer's element sort."""
    out = terms.copy()
    c = out == CONCRETE
    if c.any():
        out[c] = T.const(sort, bits[c].astype(np.uint64))
    return out


def _opaque_reason(T: TermStore, roots: np.ndarray, cand: Side, ref: Side, fallback: str) -> str:
    """The gap behind the first opaque leaf an output depends on."""
    from semantics.termeval import subgraph

    nodes = subgraph(T, roots)
    opaque = nodes[T.op[nodes] == Op.OPAQUE]
    for side in (cand, ref):
        for o in opaque.tolist():
            g = side.opaque_why.get(o)
            if g is not None:
                return f"{side.gaps[g].describe()} ({side.label})"
    return fallback
