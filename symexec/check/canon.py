"""Canonical Z3 models: the least model in lexicographic order over a list of keys, so that a witness read from
a model (the CTAs of a symbolic-grid finding, the sizes it holds at, the input bytes that reach a finding) is the
same in every run.

Z3 hands back whichever model its search meets first. That depends on the context's history (the ids its terms
were given, what earlier queries left in its caches), so the same query asked twice in one process can give two
models; a fixed random seed does not make the history the same. The least model does not depend on it: each key
is pinned in turn by a binary search between its least possible value and the model's value, each step a query
with the key bounded above (push/pop), after which the key is fixed at its least value. The answer depends only on
which bounds are satisfiable, never on which model Z3 gives. A step Z3 does not decide (within `rlimit`), or past
`budget` steps, leaves that key and the later ones at the values shown so far: still a model of the query,
only not claimed to be the least. Nothing is proved by the choice: callers validate the model as before."""

from __future__ import annotations

from dataclasses import dataclass

import z3

#: Queries one witness may ask (`least_model`'s budget), and Z3's resource limit of each (about 0.3 s of CPU): a
#: binary search per key, so a CTA index costs at most log2 of its grid dimension, a size log2 of its range.
QUERIES = 160
RLIMIT = 5_000_000


@dataclass(frozen=True)
class Key:
    """A bit-vector term to minimise: as a signed or unsigned number, at least `least` in every model."""

    term: z3.BitVecRef
    least: int = 0
    signed: bool = False

    def value(self, mdl: z3.ModelRef) -> int:
        v = mdl.eval(self.term, model_completion=True)
        return v.as_signed_long() if self.signed else v.as_long()

    def at_most(self, bound: int) -> z3.BoolRef:
        return self.term <= bound if self.signed else z3.ULE(self.term, bound)


def least_model(s: z3.Solver, keys: list[Key], budget: int, rlimit: int, timeout_ms: int) -> z3.ModelRef:
    """The model of `s` (just found sat) least over `keys` in order (see the module docstring). `s` keeps its
    assertions (its own scope pushed and popped) and its resource limit (reset to none); its timeout is left at
    `timeout_ms`, so a caller that asks `s` again sets its own first (every caller does). At most `budget` extra
    queries, each within Z3's `rlimit` and `timeout_ms`."""
    mdl = s.model()
    s.push()
    try:
        for key in keys:
            hi, lo = key.value(mdl), key.least
            while lo < hi and budget > 0:
                mid = lo if lo == key.least else (lo + hi) // 2  # the least value first: usually the answer
                budget -= 1
                s.push()
                s.add(key.at_most(mid))
                s.set("rlimit", rlimit)  # more than the solver has used so far (Z3's limit is relative)
                s.set("timeout", timeout_ms)
                res = s.check()
                s.set("rlimit", 0)
                if res == z3.sat:
                    mdl = s.model()
                    hi = key.value(mdl)
                s.pop()
                if res == z3.unsat:
                    lo = mid + 1
                elif res != z3.sat:
                    budget = 0  # undecided: keep what is shown
            s.add(key.term == hi)
    finally:
        s.pop()
    return mdl


def free_consts(assertions) -> set[int]:
    """The ids of the uninterpreted constants (variables) the assertions mention."""
    seen: set[int] = set()
    out: set[int] = set()
    todo = list(assertions)
    while todo:
        x = todo.pop()
        k = x.get_id()
        if k in seen:
            continue
        seen.add(k)
        if z3.is_const(x) and x.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            out.add(k)
        todo.extend(x.children())
    return out
