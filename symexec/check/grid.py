"""Races between CTAs on global memory without enumerating the grid (Z3, symbolic pair of CTAs).

Method (sound; anything outside it falls back to enumeration, with the reason in
`report.stats["grid_method"]`):
1. Run the first and last CTA as one batch in check mode with the %ctaid shadow (grid_shadow.py):
   every register is independent of the CTA, unknown (TOP), or an exact bit-vector expression of
   %ctaid and per-lane constants. If a branch/exit/barrier guard is TOP, or a global address is,
   CTAs may behave differently: fall back (the run stops there). A guard that is an expression of
   %ctaid is recorded with each thread's outcome (per iteration t of a summarised loop: a loop
   decision); the two executed CTAs must agree, and Z3 proves no CTA of the grid decides it
   otherwise (`_same_path`), or fall back. Then every CTA executes the same instruction sequence
   under the same schedule as this one, and each global access of CTA c is given by the recorded
   expression instantiated at c (rows = the lanes' constants; guards that depend on %ctaid are
   kept as expressions, TOP guards as "may execute").
2. Bounds, all CTAs: for each access class, Z3 searches c in the grid and a row with the guard
   true whose bytes leave the buffer the representative used. SAT: that CTA is run concretely
   (a real fault is reported); a spurious model (over-approximated guard) falls back.
3. Cross-CTA races: for each pair (W write/atomic, A any access) of classes on one buffer, not
   both atomic, Z3 searches c1 != c2 in the grid and rows whose byte ranges overlap. SAT: the two
   CTAs are run concretely with the enumerating checker; a race found there is reported with its
   two-CTA witness, otherwise the pair is blocked and the query repeated (bounded), then fall back.
4. Intra-CTA, global memory: for each pair of classes Z3 searches a CTA c (not yet executed) and
   two different threads of c whose bytes overlap. UNSAT for every pair: no intra-CTA race on
   global memory in any CTA (one thread's accesses are ordered by program order). SAT: CTA c is
   run concretely (a race is reported); if the overlap is ordered there (barriers) or benign, the
   property is stated as checked on the executed CTAs only.
5. Intra-CTA, everything else (shared-memory races and bounds, barrier use, uninitialised values)
   comes from the concrete run of the representatives; it holds for every CTA when no shared
   address or guard depends on %ctaid (then every CTA's shared accesses and synchronisation are
   the same), which the report's assumption line states either way.
Cheaper forms, tried first: bounds on intervals over the grid, the lane columns and the summarised
iterations (grid_numbers.in_bounds, no query; concrete sizes only); bounds with each lane column in its
range (a superset of the rows);
intra-CTA pairs whose addresses move by one amount from CTA 0 to every CTA (Z3) and whose rows of
different threads do not meet in CTA 0 (numpy): every CTA's pairs are CTA 0's, shifted.
"""

from __future__ import annotations

import math
import os
import sys
import time
from dataclasses import replace

import numpy as np
import z3
from z3 import z3util

from ptx_parser import ast as A

from ..launch import DIM_LIMITS, Launch, param_layout
from ..machine import _LIMITS
from ..program import Program
from .findings import GridMethod, Report, Verdict
from .bv2int import Untranslatable, to_int
from .canon import QUERIES as CANON_QUERIES, RLIMIT as CANON_RLIMIT, Key, least_model
from .monotone import refute as refute_by_monotonicity
from .grid_expr import evaluate
from .grid_loops import cta_local_state
from .grid_numbers import apart, in_bounds
from .grid_shadow import Access, Shadow, ShadowFailed
from .run import loop_summaries, new_run, run_checked
from .sizes import SizeDomain, term
from .state import ATOMIC, READ
from .z3rows import rows_formula


def _concrete(prog: Program, launch: Launch, ctas: list) -> Report:
    """Check exactly `ctas` (as one batch), concretely."""
    return run_checked(new_run(prog, launch, ctas), prog, launch)

MAX_ROWS = 4096
MAX_VALIDATIONS = 4


def _z3(e: tuple, env: dict):
    tag, w = e[0], e[1]
    if tag == "k":
        return z3.BitVecVal(e[2], w)
    if tag == "b":
        return z3.BoolVal(e[2])
    if tag in ("c", "q"):
        return env[(tag, e[2])]
    if tag in ("s", "g", "t"):  # a size-dependent parameter, the grid (64-bit terms of the sizes, sizes.py),
        # a summarised loop's iteration (loops.py)
        x = env[(tag, e[2])]
        return x if w == 64 else z3.Extract(w - 1, 0, x)
    a = [_z3(x, env) for x in e[2:] if isinstance(x, tuple)]
    if tag == "add":
        return a[0] + a[1]
    if tag == "sub":
        return a[0] - a[1]
    if tag == "mul":
        return a[0] * a[1]
    if tag == "and":
        return a[0] & a[1]
    if tag == "or":
        return a[0] | a[1]
    if tag == "xor":
        return a[0] ^ a[1]
    if tag == "shl":
        return a[0] << a[1]
    if tag == "lshr":
        return z3.LShR(a[0], a[1])
    if tag == "ashr":
        return a[0] >> a[1]
    if tag in ("sdiv", "srem", "udiv", "urem"):
        return {"sdiv": lambda x, y: x / y, "srem": z3.SRem, "udiv": z3.UDiv, "urem": z3.URem}[tag](a[0], a[1])
    if tag in ("smin", "smax", "umin", "umax"):
        lt = (a[0] < a[1]) if tag[0] == "s" else z3.ULT(a[0], a[1])
        return z3.If(lt, a[0], a[1]) if tag[1:] == "min" else z3.If(lt, a[1], a[0])
    if tag == "zext":
        return z3.ZeroExt(w - a[0].size(), a[0])
    if tag == "sext":
        return z3.SignExt(w - a[0].size(), a[0])
    if tag == "high":
        return z3.Extract(2 * w - 1, w, a[0])
    if tag == "trunc":
        return z3.Extract(w - 1, 0, a[0])
    if tag in ("ite", "bite"):
        return z3.If(a[0], a[1], a[2])
    if tag == "not":
        return z3.Not(a[0])
    if tag in ("band", "bor", "bxor"):
        return {"band": z3.And, "bor": z3.Or, "bxor": z3.Xor}[tag](a[0], a[1])
    if tag == "cmp":
        op = e[2]
        x, y = a
        return {"eq": x == y, "ne": x != y, "slt": x < y, "sle": x <= y, "sgt": x > y, "sge": x >= y,
                "ult": z3.ULT(x, y), "ule": z3.ULE(x, y), "ugt": z3.UGT(x, y), "uge": z3.UGE(x, y)}[op]
    raise KeyError(tag)


def _n_q(e) -> dict:
    out: dict = {}

    def walk(x):
        if isinstance(x, tuple) and x:
            if x[0] == "q":
                out[x[2]] = x[1]
            for y in x[2:]:
                walk(y)

    walk(e)
    return out


def _has_t(a: Access, ident: int) -> bool:
    def walk(e) -> bool:
        return isinstance(e, tuple) and bool(e) and ((e[0] == "t" and e[2] == ident) or any(walk(x) for x in e[2:]))
    return walk(a.addr) or (a.guard is not None and walk(a.guard))


def _has_leaf(e, tags: tuple) -> bool:
    return isinstance(e, tuple) and bool(e) and (e[0] in tags or any(_has_leaf(x, tags) for x in e[2:]))


class _Class:
    """Accesses of one instruction shape: same buffer, kind, size, address and guard expressions.
    `loops`: the iterations each summarised loop's leaf t stands for (t in [0, n), loops.py)."""

    def __init__(self, a: Access, loops: dict[int, int] | None = None) -> None:
        self.a = a
        self.rows = [a.rows]
        self.cache: dict = {}
        self.loops = {i: n for i, n in (loops or {}).items() if _has_t(a, i)}
        self.bounds: dict[int, "_Trips"] = {}  # symbolic sizes: loops whose iterations depend on the sizes

    def side(self, tag: str, cvars, base: int, relaxed: bool = False, leaves: dict | None = None):
        """(membership constraint, byte offset in the buffer, guard, rows) for the CTA `cvars`.

        Exact: the lane constants form one of the recorded rows. Relaxed (a superset, for a quick
        refutation): each constant anywhere in its column's [min, max], guard dropped."""
        key = (tag, relaxed, str(cvars[0]))
        if key in self.cache:
            return self.cache[key]
        a = self.a
        qs = _n_q(a.addr)
        qs.update(_n_q(a.guard) if a.guard is not None else {})
        env = {("c", i): cvars[i] for i in range(3)}
        env.update(leaves or {})
        for i, w in qs.items():
            env[("q", i)] = z3.BitVec(f"{tag}_q{i}", w)
        iters = []
        for i, n in self.loops.items():  # a summarised loop's iterations: any of them
            env[("t", i)] = z3.BitVec(f"{tag}_t{i}", 64)
            iters.append(self.bounds[i].runs(env[("t", i)], env) if i in self.bounds else z3.ULT(env[("t", i)], n))
        o = z3.BitVec(f"{tag}_o", 64)
        rows = self.all_rows()
        ncol = rows.shape[1] - 2
        lane = z3.BitVec(f"{tag}_t", 32)
        cols = [env[("q", i)] for i in range(ncol)] + [lane, o]
        lanes = None if relaxed else self.box_lanes()
        if lanes is not None:
            # a tensor store's rows are each lane's row times the box's offsets (`box_lanes`): the table lists the
            # lanes (offset column o0, 0 in each), the box's index columns give o - o0, exactly
            o0 = z3.BitVec(f"{tag}_o0", 64)
            rows, cols = lanes, cols[:-1] + [o0]
        if relaxed:
            # the guard's conjuncts that name no lane column (reach conditions: back edges and entry guards on
            # %ctaid passed, grid_shadow `_after_trips`) stay: each is a condition of every row, so keeping it
            # still gives a superset of the accesses, and without it a CTA that left a loop on %ctaid before
            # an iteration would make that iteration's accesses
            kept = []
            for x in _conjuncts(a.guard) if a.guard is not None else []:
                if not _has_leaf(x, ("q", "p")):
                    try:
                        kept.append(_z3(x, env))
                    except KeyError:  # a leaf this query does not bind (another loop's t): dropped, a superset
                        pass
            member = z3.And([_in_range(v, rows[:, k]) for k, v in enumerate(cols)] + iters + kept
                            + (_box_index_columns(a.box, o, tag) if self.box_offsets() is not None else []))
            guard = z3.BoolVal(True)
        else:
            # the columns' ranges and an affine summary of the rows too (implied by them): the integer form
            # (bv2int.py) leaves the table out and keeps these, whose products it can bound
            member = z3.And([rows_formula(cols, rows)]
                            + [_in_range(v, rows[:, k]) for k, v in enumerate(cols)]
                            + _affine_rows(rows, cols) + _row_lemmas(rows, cols)
                            + _lane_part_lemmas(a.addr, rows, cols) + iters
                            + (_box_index_columns(a.box, o, tag, start=cols[-1]) if lanes is not None else []))
            guard = _z3(a.guard, env) if a.guard is not None else z3.BoolVal(True)
        addr = _z3(a.addr, env) + o
        out = (member, addr - z3.BitVecVal(base, 64), guard, rows.shape[0], lane)
        self.cache[key] = out
        return out

    def all_rows(self) -> np.ndarray:
        if len(self.rows) > 1:
            self.rows = [np.unique(np.concatenate(self.rows), axis=0)]
        return self.rows[0]

    def box_offsets(self) -> np.ndarray | None:
        """The box's row offsets, sorted (`Access.box`), where every row's offset is one of them (so the relaxed
        side may read the offset as the box's index columns, `_box_index_columns`); None for a class without a box or
        one whose offsets are not all the box's."""
        if not self.a.box:
            return None
        if "box_offsets" not in self.cache:
            offs = np.zeros(1, np.uint64)
            for stride, count in self.a.box:
                offs = (offs[:, None] + np.arange(count, dtype=np.uint64)[None, :] * np.uint64(stride)).reshape(-1)
            offs = np.unique(offs)
            self.cache["box_offsets"] = offs if np.isin(self.all_rows()[:, -1], offs).all() else None
        return self.cache["box_offsets"]

    def box_lanes(self) -> np.ndarray | None:
        """For a tensor store's class (`Access.box`) whose rows are exactly L x B, L its distinct lane rows
        (constants and thread) and B the box's offsets (`grid_shadow._tensor_store` records them so; checked
        here: every row's lane part is in L and offset in B, and there are |L| |B| distinct rows): L, with an
        offset column of 0. None for any other class: its table is its rows."""
        offs = self.box_offsets()
        if offs is None:
            return None
        if "box_lanes" not in self.cache:
            rows = np.unique(self.all_rows(), axis=0)
            lanes = np.unique(rows[:, :-1], axis=0)
            product = (lanes.shape[0] * offs.size == rows.shape[0]
                       and np.array_equal(np.unique(rows[:, -1]), offs))
            self.cache["box_lanes"] = (np.column_stack([lanes, np.zeros(lanes.shape[0], np.uint64)])
                                       if product else None)
        return self.cache["box_lanes"]

    def listed(self) -> int:
        """The rows of this class's exact table (`side`): its lanes for a tensor store's box, else its rows."""
        lanes = self.box_lanes()
        return (lanes if lanes is not None else self.all_rows()).shape[0]


def _box_index_columns(box: tuple[tuple[int, int], ...], o, tag: str, start=None) -> list:
    """The offset column `o` of a tensor store's rows as the box's outer index columns (`Access.box`):
    o = sum_k i_k * stride_k with 0 <= i_k < count_k (PTX 9.7.9.25.5.2: the box is boxDim[0] elements per
    combination of its outer indices, at those byte strides of the tensor map, 5.5.3). That is exactly the set
    the rows' offsets take for each lane (`grid_shadow._tensor_store`), so the relaxed side stays a superset of
    the accesses; unlike the interval [min, max] of the offsets, it leaves out the bytes between the box's rows,
    where a horizontally adjacent tile's box lies. No wrap: sum (count_k - 1) * stride_k is the tensor's
    extent (the box lies inside it, an obligation of `_tensor_store`), far below 2^63. `start`: o - start is
    the box's offset instead (the exact side, `_Class.box_lanes`: start is the lane row's offset column)."""
    if not box:
        return []
    out, total = [], z3.BitVecVal(0, 64) if start is None else start
    for k, (stride, count) in enumerate(box):
        i = z3.BitVec(f"{tag}_box{k}", 64)
        out.append(z3.ULT(i, count))
        total = total + i * z3.BitVecVal(stride, 64)
    return out + [o == total]


def _conjuncts(e: tuple) -> list[tuple]:
    """The operands of a boolean expression's top-level conjunction ("band" nodes), or [e]."""
    if isinstance(e, tuple) and e[0] == "band":
        return [x for y in e[2:] if isinstance(y, tuple) for x in _conjuncts(y)]
    return [e]


def _skeleton(e, consts: list):
    """`e` with each constant leaf ("k", w, v) made ("k", w, None), its (w, v mod 2^w) appended to
    `consts` in the order of a left-to-right walk (the one `_with_columns` follows)."""
    if not isinstance(e, tuple) or not e:
        return e
    if e[0] == "k" and e[1]:  # a predicate constant (width 0) stays in the skeleton
        consts.append((e[1], e[2] % (1 << e[1])))
        return ("k", e[1], None)
    return e[:2] + tuple(_skeleton(x, consts) for x in e[2:])


def _with_columns(e, columns: dict[int, int], width: dict[int, int], low: dict[int, int], at: list):
    """`e` with its j-th constant leaf (walk order of `_skeleton`, counted in at[0]) replaced, where j is in
    `columns`, by the lane constant ("q", w, columns[j]) shifted left by low[j] (the row holds the constant
    shifted right by as much: its low[j] low bits are 0 in every member, and the shift says so to
    bv2int.py's known-bits analysis, which reads `r | 4` as `r + 4` only where the bits cannot meet)."""
    if not isinstance(e, tuple) or not e:
        return e
    if e[0] == "k" and e[1]:
        j = at[0]
        at[0] += 1
        if j not in columns:
            return e
        q = ("q", width[j], columns[j])
        return ("shl", width[j], q, ("k", width[j], low[j])) if low[j] else q
    return e[:2] + tuple(_with_columns(x, columns, width, low, at) for x in e[2:])


def families(classes: list[_Class], max_rows: int = MAX_ROWS) -> list[_Class]:
    """Access classes merged where they differ only in constants of their address and guard (an
    unrolled tile: one load or store per row offset, `(q0 | cta << 7) | 4`, `| 8`, ...): each such
    constant becomes a lane column of the family, whose table is the members' rows, each with its
    member's constants. The family's accesses (address, guard, thread, per row) are then exactly the
    union of its members' (the expressions agree leaf for leaf once the column holds the constant), so a
    query over two families is the disjunction of their members' pair queries: one query where there
    were n^2 (gemm_accumulate's C tile: 32 loads and 32 stores, 1552 pairs). Members are the same
    buffer, kind, size, summarised loops and row shape; a family keeps to `max_rows` rows (the exact
    query's table), more members start another. Classes with nothing to merge come back as they were."""
    groups: dict = {}
    for cl in classes:
        a, consts = cl.a, []
        skel = (_skeleton(a.addr, consts), _skeleton(a.guard, consts))
        key = (a.buffer, a.kind, a.strong, a.size, skel, cl.all_rows().shape[1], tuple(sorted(cl.loops.items())),
               tuple(sorted(cl.bounds)), a.box)
        groups.setdefault(key, []).append((cl, consts))
    out: list[_Class] = []
    for members in groups.values():
        chunk: list = []
        for cl, consts in members + [(None, None)]:
            if cl is not None and (not chunk or sum(c.all_rows().shape[0] for c, _ in chunk)
                                   + cl.all_rows().shape[0] <= max_rows):
                chunk.append((cl, consts))
                continue
            out.append(chunk[0][0] if len(chunk) == 1 else _family(chunk))
            chunk = [(cl, consts)]
    return out


def _family(chunk: list) -> _Class:
    """One class for `chunk`'s (class, constants) pairs (`families`): the constants that differ become
    lane columns after the members' own, before the thread and offset columns."""
    first = chunk[0][0]
    ncol = first.all_rows().shape[1] - 2
    differ = [j for j in range(len(chunk[0][1])) if len({c[j] for _, c in chunk}) > 1]
    columns = {j: ncol + i for i, j in enumerate(differ)}
    width = {j: chunk[0][1][j][0] for j in differ}
    low = {j: min(_trailing_zeros(c[j][1], width[j]) for _, c in chunk) for j in differ}
    rows = []
    for cl, consts in chunk:
        r = cl.all_rows().astype(np.uint64)
        extra = np.tile(np.array([consts[j][1] >> low[j] for j in differ], dtype=np.uint64), (r.shape[0], 1))
        rows.append(np.concatenate([r[:, :ncol], extra, r[:, ncol:]], axis=1))
    a = first.a
    addr = _with_columns(a.addr, columns, width, low, [0])
    guard = _with_columns(a.guard, columns, width, low, [len(_collect_consts(a.addr))]) if a.guard is not None else None
    fam = _Class(replace(a, addr=addr, guard=guard, rows=np.unique(np.concatenate(rows), axis=0)))
    fam.loops, fam.bounds = dict(first.loops), dict(first.bounds)
    return fam


def _trailing_zeros(v: int, w: int) -> int:
    return w if v == 0 else (v & -v).bit_length() - 1


def _collect_consts(e) -> list:
    out: list = []
    _skeleton(e, out)
    return out


def _lane_coefficients(e: tuple) -> dict[int, int] | None:
    """The coefficient of each lane constant (q leaf) in `e`, read as a sum of multiples of them plus
    terms that read none: extensions, truncations and `or` taken as the integers they carry (no
    wrap-around: a heuristic choice of the combination `_lane_part_lemmas` relates, which is sound at any
    coefficients), {} when `e` reads no lane constant, None when it reads one other than linearly."""
    tag = e[0]
    if tag == "q":
        return {e[2]: 1}
    if not _has_leaf(e, ("q",)):
        return {}
    args = [x for x in e[2:] if isinstance(x, tuple)]
    if tag in ("sext", "zext", "trunc"):
        return _lane_coefficients(args[0])
    if tag in ("add", "sub", "or"):
        x, y = (_lane_coefficients(v) for v in args)
        if x is None or y is None:
            return None
        sign = -1 if tag == "sub" else 1
        return {i: x.get(i, 0) + sign * y.get(i, 0) for i in set(x) | set(y)}
    if tag in ("mul", "shl"):
        x, y = args
        if tag == "shl":
            if y[0] != "k" or y[2] >= 64:
                return None
            y = ("k", 64, 1 << y[2])
        if x[0] == "k":
            x, y = y, x
        if y[0] != "k":
            return None
        cx = _lane_coefficients(x)
        return None if cx is None else {i: v * y[2] for i, v in cx.items()}
    return None


def _lane_part_lemmas(addr: tuple, rows: np.ndarray, cols: list) -> list:
    """The pair lemmas (`_pair_lemma`) of the address's lane part, `sum_k a_k q_k + o` with the a_k the
    address's own coefficients of its lane constants (`_lane_coefficients`), against each lane constant:
    where a guard tests one column and the address adds another (the fp32 element `4 q0 + o` of a
    vector loaded under `q1 < M`, with `4 q0 + o = 4 q1 + {0, 32}` on every row), no lemma of two columns
    relates them. The lane part is computed at each row from the row itself, as the 64-bit term built from
    the zero-extended columns is, so every lemma holds on every row, as `_row_lemmas`' do. [] when the
    address reads no lane constant linearly (its lane part is o, a column already)."""
    coef = _lane_coefficients(addr)
    if not coef or all(v == 0 for v in coef.values()):
        return []
    coef = {i: v for i, v in sorted(coef.items()) if v}
    mod = 2**64
    ys = [int(x) for x in rows[:, -1]]
    y = cols[-1]
    for i, a in coef.items():
        ys = [(u + a * int(v)) % mod for u, v in zip(ys, rows[:, i])]
        c = cols[i]
        y = y + _u64(c) * z3.BitVecVal(a % mod, 64)
    out = []
    for k in range(rows.shape[1] - 2):  # the lane constants (the guard's columns), not the thread or o
        got = _pair_lemma(cols[k], y, [int(x) for x in rows[:, k]], ys)
        if got is not None:
            out.append(got)
    return out


CONTROL = ("bra", "exit", "ret", "trap", "bar", "barrier")
#: A witness whose loop would run longer than this at the model's sizes is not run (not validated).
VALIDATION_ITERATIONS = 4096


class _Trips:
    """The iterations of a summarised loop (loops.py) whose trip count depends on the sizes.

    Period t of its proof runs at given sizes only if period t-1's back edges were all taken (`again`:
    each back edge's guard has its period-0 value, taken); for t = 0 that is the period run before the
    proof, whose registers are the expressions at t = -1 (they are affine in t modulo 2^w, loops.py). `limit` L is proved to bound
    every run: no size of the domain takes the back edges of both periods L-2 and L-1 (then, by
    induction over t, no period L or later runs), the least power of two for which Z3 shows it. So
    the periods that run are among t < L with again(t-1): an exact bound for a counter
    that does not wrap below L, without quantifiers. The accesses of period t are the recorded
    expressions at t on the path of period 0 (every other branch, exit and barrier in the loop is
    proved to decide as in period 0 there)."""

    def __init__(self, ident: int, backs: list[tuple], where: str) -> None:
        self.ident, self.backs, self.where = ident, backs, where
        self.limit = 0

    def again(self, u, env: dict):
        """Period u's back edges are all taken."""
        e = {**env, ("t", self.ident): u}
        return z3.And([_z3(x, e) == z3.BoolVal(v) for x, v in self.backs])

    def runs(self, t, env: dict):
        return z3.And(z3.ULT(t, self.limit), self.again(t - 1, env))

    def bound(self, launch: Launch, sizes: SizeDomain, ks: range | None = None) -> str:
        """Find `limit` (2^k, the least k of `ks`, all of 1 .. TRIP_BITS by default, where it holds); "" when
        found, else why not."""
        sp = _Space(launch, sizes, "lim")
        t = z3.BitVec("lim_t", 64)
        for k in ks if ks is not None else range(1, TRIP_BITS + 1):
            s = _solver()
            s.add(sp.facts + [t == 2**k - 1, self.again(t - 1, sp.leaves), self.again(t, sp.leaves)])
            res = _check(s)
            if res == z3.unsat:
                self.limit = 2**k
                return ""
        return (f"the loop at {self.where} {WRAPS} 2^{TRIP_BITS} periods at every size of the domain (a counter "
                "that wraps near the top of the domain, say)")

    def reads(self, launch: Launch, sizes: SizeDomain) -> set[str]:
        """The sizes its back edges depend on (through the parameters and the grid)."""
        sp = _Space(launch, sizes, "rd")
        got = {str(c) for c in z3util.get_vars(self.again(z3.BitVec("rd_t", 64), sp.leaves))}
        return {v.name for v in sizes.vars if f"rd_{v.name}" in got}


class _CtaidTrips(_Trips):
    """The periods of a summarised loop whose back edge depends on %ctaid (grid_loops.py), run in the one
    executed CTA for t in [0, n): period t runs in CTA c only if t < n and, for t > 0, period t - 1's
    back edges were taken in c (`again`, the recorded guards at t - 1 with c's leaves). Period 0 is
    reached through the iterations before it, whose back edges are already conditions of its accesses
    (grid_shadow `taken`). A necessary condition: the accesses it admits are a superset of c's. Beyond
    period n - 1 the executed CTA ran iterations as any other (a CTA that goes further is refuted by the
    obligation at the back edge where the executed CTA leaves)."""

    def __init__(self, ident: int, backs: list[tuple], where: str, periods: int) -> None:
        super().__init__(ident, backs, where)
        self.limit = periods

    def runs(self, t, env: dict):
        return z3.And(z3.ULT(t, self.limit), z3.Or(t == 0, self.again(t - 1, env)))


#: The most periods (2^TRIP_BITS) a loop whose trip count depends on the sizes is proved to stay under.
TRIP_BITS = 40
WRAPS = "is not proved to end within"  # the reason a proof over narrower sizes is tried (check_symbolic)


AFFINE_OFFSETS = 16  # most distinct offset vectors of an affine summary of rows


def _in_range(v, col: np.ndarray):
    """`v` between the least and the greatest of `col` (a column of recorded lane constants, each
    below 2^w for v's width w), read unsigned or as two's complement, whichever span is narrower.
    Both are supersets of the column; the signed reading keeps a column of small negative and
    positive offsets (an unrolled loop's [%rd+-64] ... [%rd+60]) from covering the whole space."""
    w = v.size()
    lo, hi = int(col.min()), int(col.max())
    half = 1 << (w - 1)
    neg, pos = col[col >= half], col[col < half]
    if len(neg) and len(pos) and hi < (1 << w):  # both signs present: the signed span is [min of neg, max of pos]
        slo, shi = int(neg.min()) - (1 << w), int(pos.max())
        if shi - slo < hi - lo:
            return z3.And(v >= z3.BitVecVal(slo, w), v <= z3.BitVecVal(shi, w))  # signed comparisons
    return z3.And(z3.UGE(v, lo), z3.ULE(v, hi))


def _affine_rows(rows: np.ndarray, cols: list) -> list:
    """Constraints every row satisfies, in few terms: one column k (the key) in its progression
    (range, stride) and every other column a fixed multiple of it plus one of few offset vectors
    (a thread's element and the same element one tile on, say). [] when no column gives at most
    AFFINE_OFFSETS offset vectors."""
    r = rows.astype(object)
    n, m = r.shape
    best = None
    for key in range(m):
        kv = r[:, key]
        lo, hi = min(kv), max(kv)
        if lo == hi:
            continue
        i0, i1 = list(kv).index(lo), list(kv).index(hi)
        a = [(r[i1, k] - r[i0, k]) // (hi - lo) for k in range(m)]
        if any((r[i1, k] - r[i0, k]) % (hi - lo) for k in range(m)):
            continue
        offs = {tuple(int(r[i, k] - a[k] * kv[i]) for k in range(m)) for i in range(n)}
        if len(offs) <= AFFINE_OFFSETS and (best is None or len(offs) < len(best[3])):
            best = (key, lo, a, offs)
    if best is None:
        return []
    key, lo, a, offs = best
    stride = 0
    for v in r[:, key]:
        stride = math.gcd(stride, int(v - lo))
    kc = cols[key]
    out = [z3.URem(kc - lo, stride) == 0] if stride > 1 else []

    def at(k):  # the key at column k's width
        wk, w = cols[k].size(), kc.size()
        return z3.ZeroExt(wk - w, kc) if wk > w else z3.Extract(wk - 1, 0, kc) if wk < w else kc

    out.append(z3.Or([z3.And([cols[k] == at(k) * a[k] + d[k] for k in range(m) if k != key]) for d in sorted(offs)]))
    return out


#: Largest power-of-two modulus whose residues `_row_lemmas` reads from a column.
RESIDUE_MODULUS = 256
#: Most distinct offsets of a pairwise relation `_row_lemmas` states.
PAIR_OFFSETS = 4


def _residue_lemma(v, col: list[int]) -> list:
    """`v mod m` in one run [r0, r1] of residues, for the largest power of two m <= RESIDUE_MODULUS
    (and below the column's width) for which every value of `col` lies in one run that is not all
    of [0, m): Triton's 16-byte vector offsets (`col mod 8 == 0`), the first eight rows of every 16
    that carry a K-mask (`row mod 16 < 8`). [] when no modulus gives one. (A second lemma, the span of
    the residues modulo a larger m, slowed gemm_fp16's B-tile query past its limits: not stated.)"""
    best = None
    m = 2
    while m <= RESIDUE_MODULUS and m < 2 ** v.size():
        res = sorted({x % m for x in col})
        if len(res) < m and res[-1] - res[0] + 1 == len(res):  # one run, not everything
            best = (m, res[0], res[-1])
        m *= 2
    if best is None:
        return []
    m, lo, hi = best
    r = z3.URem(v, m)
    return [r == lo if lo == hi else z3.And(z3.UGE(r, lo), z3.ULE(r, hi))]


def _u64(v):
    """A column's bit-vector zero-extended to 64 bits (its value as the unsigned integer it holds)."""
    return z3.ZeroExt(64 - v.size(), v) if v.size() < 64 else v


def _pair_lemma(x, y, cx: list[int], cy: list[int]):
    """`y = a * x + d` for one slope a and at most PAIR_OFFSETS offsets d that every row satisfies (a
    guard's row a fixed distance from the address's row: Triton masks eight K-rows by the first one's
    test), as 64-bit terms of the zero-extended columns. With more offsets, the band they span,
    `a * x + min d <= y <= a * x + max d`, where it says more than the columns' ranges: a row's 16-byte
    vectors at `row * pitch + 16 v` for 8 or 16 values of v (an attention tile's K or V rows, whose mask
    tests the row). The slope is read from x's extremes (their first rows, or the least or the greatest y
    at each: the least and greatest offsets when every x has the same ones), the one with the fewest
    offsets. None when the rows are not so related."""
    lo, hi = min(cx), max(cx)
    if lo == hi or min(cy) == max(cy):
        return None
    least: dict[int, int] = {}
    most: dict[int, int] = {}
    for u, b in zip(cx, cy):
        least[u], most[u] = min(b, least.get(u, b)), max(b, most.get(u, b))
    i0, i1 = cx.index(lo), cx.index(hi)
    best = None
    for rise in (cy[i1] - cy[i0], least[hi] - least[lo], most[hi] - most[lo]):
        if rise % (hi - lo) == 0:
            offs = sorted({b - rise // (hi - lo) * u for u, b in zip(cx, cy)})
            if best is None or len(offs) < len(best[1]):
                best = (rise // (hi - lo), offs)
            if len(best[1]) <= PAIR_OFFSETS:
                break  # the first slope that gives few offsets, the first rows' first (as before the band)
    if best is None:
        return None
    a, offs = best
    x64, y64 = _u64(x), _u64(y)
    if len(offs) <= PAIR_OFFSETS:
        return z3.Or([y64 == x64 * a + d for d in offs])
    dlo, dhi = offs[0], offs[-1]
    # the band, compared unsigned, is the rows' own inequality only where its ends stay in [0, 2^64) for
    # every x of the column: then the 64-bit terms are the integers (no wrap-around)
    ends = (a * lo + dlo, a * hi + dlo, a * lo + dhi, a * hi + dhi)
    if a == 0 or dhi - dlo >= abs(a) * (hi - lo) or min(ends) < 0 or max(ends) >= 2**64:
        return None
    return z3.And(z3.ULE(x64 * a + dlo, y64), z3.ULE(y64, x64 * a + dhi))


def _row_lemmas(rows: np.ndarray, cols: list) -> list:
    """Facts every recorded row satisfies, one or two columns at a time (`_residue_lemma`,
    `_pair_lemma`): implied by the table of rows, so adding them beside it changes no model of the
    bit-vector query, and the integer form (bv2int.py, which leaves a large table out) keeps them.
    A bounds proof of a pipelined tile load needs both: `row < K` read from the guard's row and the
    16-byte vector's column a multiple of 8 halves (the B tile of gemm_fp16)."""
    r = [[int(x) for x in rows[:, k]] for k in range(rows.shape[1])]
    out = []
    for k, v in enumerate(cols):
        if min(r[k]) != max(r[k]):
            out += _residue_lemma(v, r[k])
    for i in range(len(cols)):
        for j in range(len(cols)):
            if i != j:
                got = _pair_lemma(cols[i], cols[j], r[i], r[j])
                if got is not None:
                    out.append(got)
    return out


class _Space:
    """The launches a proof covers: the given one, or (sizes) every launch of a SizeDomain. One per
    query: the sizes are shared by the CTAs of a query (one launch), fresh between queries."""

    def __init__(self, launch: Launch, sizes: SizeDomain | None, tag: str, trips: dict | None = None) -> None:
        self.launch, self.sizes = launch, sizes
        self.trips: dict[int, _Trips] = trips or {}  # loops whose iterations depend on the sizes
        self.leaves: dict = {}
        self.facts: list = []
        if sizes is None:
            return
        self.env = sizes.env(tag)
        self.grid = [term(g) for g in sizes.grid(self.env)]
        self.facts = sizes.constraints(self.env) + [z3.And(g >= 1, g <= lim)
                                                    for g, lim in zip(self.grid, DIM_LIMITS["grid"])]
        self.leaves = {("g", i): self.grid[i] for i in range(3)}
        self.leaves.update({("s", name): term(f(self.env)) for name, f in sizes.params.items()})

    def cta(self, tag: str):
        c = [z3.BitVec(f"{tag}_c{i}", 32) for i in range(3)]
        if self.sizes is None:
            return c, [z3.ULT(c[i], self.launch.grid[i]) for i in range(3)]
        return c, self.facts + [z3.ULT(z3.ZeroExt(32, c[i]), self.grid[i]) for i in range(3)]

    def buffer_bytes(self, alloc):
        f = self.sizes.buffer_bytes.get(alloc.name) if self.sizes is not None else None
        return z3.ZeroExt(1, term(f(self.env))) if f is not None else alloc.size

    def point(self, model) -> dict[str, int] | None:
        return self.sizes.point(model, self.env) if self.sizes is not None else None

    def at(self, point: dict[str, int] | None) -> Launch:
        """The concrete launch of a model's sizes (the checked launch when they are its own)."""
        if point is None or point == self.sizes.concrete:
            return self.launch
        return self.sizes.launch_at(point)



#: Per-query Z3 limit: an "unknown" answer counts as not proven (the grid is then enumerated).
Z3_QUERY_MS = 30_000


#: A query bit-blasting has not decided in this long is also tried over the integers (bv2int.py),
#: within INT_RLIMIT of Z3's resource count (about 2 s of CPU per 30 million).
Z3_QUICK_MS = 3_000
#: Bit-blasting is bounded by Z3's resource count, not by time, so that a loaded machine gets the answers an
#: idle one does (a quick query at 2.6 s of CPU alone turned unknown under load, and test_sizes_families' race
#: fell back to the checked launch in CI): about Z3_QUICK_MS of CPU (grid queries of the sizes tests: 2.5-7
#: million a second), then about the rest of Z3_QUERY_MS. The time limits stay, WALL_SLACK times longer, as a
#: net for work Z3 does not count (and the run's own time limit still ends a query).
QUICK_RLIMIT = 10_000_000
LONG_RLIMIT = 80_000_000
WALL_SLACK = 4
INT_RLIMIT = 100_000_000
#: The linear abstraction with monotonicity lemmas (monotone.py) answers in 10-130 ms where it
#: refutes at all (row-wise bounds and overlaps); past this it gives way to nlsat.
MONO_RLIMIT = 20_000_000

class _OutOfTime(Exception):
    """The run's time limit (symexec.time_limit) passed during the proof: Z3 is not interrupted by it."""


def _ms_left(ms: int) -> int:
    """`ms`, or what is left of the run's time limit if less (raises _OutOfTime once it has passed)."""
    deadline = _LIMITS.get().deadline
    if deadline is None:
        return ms
    left = int((deadline - time.monotonic()) * 1000)
    if left <= 0:
        raise _OutOfTime()
    return min(ms, left)


def _solver() -> z3.Solver:
    """A solver whose queries end by LONG_RLIMIT of Z3's resource count (about Z3_QUERY_MS of CPU), by
    WALL_SLACK * Z3_QUERY_MS of wall time and by the run's time limit, if one is set."""
    s = z3.Solver()
    s.set("rlimit", LONG_RLIMIT)
    s.set("timeout", _ms_left(WALL_SLACK * Z3_QUERY_MS))
    return s


def _check(s: z3.Solver, quick: bool = False):
    """s.check() (see _check_once), timed: with VOLTA_Z3_LOG set, every query slower than
    Z3_LOG_MS is printed to stderr with its answer, its caller and its size (assertions, AST nodes).
    A set of assertions found unsat before (`_UNSAT`) is unsat again, without a search."""
    given = s.assertions()
    key = (id(s.ctx), tuple(x.get_id() for x in given))
    if key in _UNSAT:
        return z3.unsat
    res = _check_timed(s, quick)
    if res == z3.unsat:
        if len(_UNSAT) >= UNSAT_KEPT:
            _UNSAT.clear()
        _UNSAT[key] = given  # kept alive: an AST's id is not given to another term while it lives
    return res


#: Sets of assertions (by the ids of their ASTs, hash-consed in their context: equal ids, the same formulas) found
#: unsat, with the ASTs themselves. The symbolic grid asks some queries more than once: a load and a store of
#: one element have the same bounds and cross-CTA queries (gemm_accumulate sm_100a at the bench instance: 74
#: queries, 42 distinct, all unsat, about 0.6 s of CPU). Only unsat is kept: a sat answer's caller reads the model.
_UNSAT: dict[tuple, object] = {}
UNSAT_KEPT = 4096  # entries kept before the cache starts again


def _check_timed(s: z3.Solver, quick: bool = False):
    if not z3_log_on():
        return _check_once(s, quick)
    t0, c0 = time.perf_counter(), time.process_time()
    res = _check_once(s, quick)
    ms = 1000 * (time.process_time() - c0)
    if ms >= Z3_LOG_MS:
        f = sys._getframe(2)  # _check's caller
        nodes = sum(1 for _ in _subterms(s.assertions()))
        print(f"volta z3: {res} {ms:.0f} ms CPU ({1000 * (time.perf_counter() - t0):.0f} wall) in "
              f"{f.f_code.co_name}:{f.f_lineno}{' (quick)' if quick else ''}: {len(s.assertions())} assertions, "
              f"{nodes} nodes", file=sys.stderr, flush=True)
    return res


#: Values of VOLTA_Z3_LOG that leave the log off (as unset or empty does).
_OFF_WORDS = frozenset({"0", "false", "no", "off"})


def z3_log_on() -> bool:
    """Is VOLTA_Z3_LOG set to something other than an off word (0, false, no, off)?"""
    v = os.environ.get("VOLTA_Z3_LOG", "").strip().lower()
    return bool(v) and v not in _OFF_WORDS


#: The least CPU time of a query that VOLTA_Z3_LOG prints.
Z3_LOG_MS = 50


def _subterms(assertions):
    """The distinct sub-terms of Z3 expressions (their DAG's nodes), each once."""
    seen: set = set()
    todo = list(assertions)
    while todo:
        x = todo.pop()
        k = x.get_id()
        if k in seen:
            continue
        seen.add(k)
        yield x
        todo.extend(x.children())


#: Resource limit of the integer form tried first on a query with a multiplication (about 1 s of CPU).
INT_FIRST_RLIMIT = 15_000_000


def _has_mul(assertions) -> bool:
    """Some bit-vector multiplication wider than 8 bits (a CTA id or lane value times a row pitch):
    bit-blasting a 64-bit product costs seconds where the integer form is linear arithmetic."""
    return any(z3.is_app_of(x, z3.Z3_OP_BMUL) and x.size() > 8 for x in _subterms(assertions))


def _int_check(ints: list | None, rlimit: int, ms: int | None):
    """The integer form's (bv2int.py) answer within `rlimit` of Z3's resource count (a resource limit,
    not a time limit: the same answer on a loaded machine) and `ms` (None: the resource limit and
    the run's time limit only); only unsat is used (sat may come from a table to_int left out)."""
    if ints is None:
        return z3.unknown
    # A context of its own: Z3's search depends on the ids of the terms it is given, and in the
    # shared context those depend on every query before (a bit-blasted query grows it), so the same
    # query at the same resource limit was unsat in one run and unknown in another
    # (tests/check/test_sizes_steps.py under load). Translated, the answer is a function of the query.
    ctx = z3.Context()
    si = z3.Solver(ctx=ctx)
    si.set("rlimit", rlimit)
    if ms is not None or _LIMITS.get().deadline is not None:
        si.set("timeout", _ms_left(ms if ms is not None else 4 * Z3_QUERY_MS))
    si.add([x.translate(ctx) for x in ints])
    return si.check()


def _ints(assertions: list) -> list | None:
    try:
        return to_int(assertions)
    except Untranslatable:
        return None


def _check_once(s: z3.Solver, quick: bool = False):
    """s.check(), for queries bit-blasting does not decide quickly (products of sizes and CTA ids):
    unsat when the same query over the integers is (bv2int.py, exact), shown by linear arithmetic with
    monotonicity lemmas for its products (monotone.py), then by nlsat; otherwise the bit-vector
    answer, with a model to read when it is sat.

    A query with a multiplication is tried over the integers first, within INT_FIRST_RLIMIT (a
    cross-CTA overlap `c1 * pitch + q1 = c2 * pitch + q2` is linear there, and decided in
    milliseconds where bit-blasting the 64-bit products took 5-9 s of CPU). quick: a pre-filter
    whose caller only acts on unsat (a superset of the rows, say, with the exact query behind it):
    no more than the integer try and Z3_QUICK_MS of bit-blasting; anything else is "unknown"."""
    given = list(s.assertions())  # as built: after a check Z3 hands back its own preprocessed (bit-split) form
    ints, first = None, z3.unknown
    if _has_mul(given):
        ints = _ints(given)
        # the resource limit alone, no wall limit: the same answer on a loaded machine
        first = _int_check(ints, INT_FIRST_RLIMIT, None)
        if first == z3.unsat:
            return z3.unsat
    res = _bounded_check(s, QUICK_RLIMIT, Z3_QUICK_MS)
    if res != z3.unknown or quick:
        return res
    if ints is None:
        ints = _ints(given)
    if ints is not None and refute_by_monotonicity(ints, MONO_RLIMIT, _ms_left(WALL_SLACK * Z3_QUERY_MS)):
        return z3.unsat
    if first == z3.unknown and _int_check(ints, INT_RLIMIT, 4 * Z3_QUERY_MS) == z3.unsat:
        return z3.unsat
    return _bounded_check(s, LONG_RLIMIT, Z3_QUERY_MS - Z3_QUICK_MS)


def _bounded_check(s: z3.Solver, rlimit: int, ms: int):
    """s.check() within `rlimit` of Z3's resource count more than it has used (the limit is relative), with
    WALL_SLACK * ms of wall time (and the run's time limit) as a net; then the solver has `_solver`'s bounds."""
    s.set("rlimit", rlimit)
    s.set("timeout", _ms_left(WALL_SLACK * ms))
    try:
        return s.check()
    finally:
        s.set("rlimit", LONG_RLIMIT)


def check_symbolic(prog: Program, launch: Launch, sizes: SizeDomain | None = None,
                   require_summary: bool = False) -> tuple[Report | None, str]:
    """(report, "") when the symbolic grid check applies, else (None, why not). sizes: prove for
    every launch of the domain (symbolic sizes), not only `launch` (one of its points).
    require_summary: only if the representatives' run summarised a loop (else not worth it); a small grid
    that kernel.py would enumerate anyway, so a stop of the shadow is never answered with the
    representatives' partial run (`_found_before_stop`): every CTA runs and the report is complete."""
    t0 = time.perf_counter()
    gx, gy, gz = launch.grid
    if launch.num_ctas == 1 and sizes is None:
        return None, "one CTA"
    whole = needs_whole_grid(prog)
    if whole:
        return None, f"symbolic not applicable: {whole}"
    try:
        reps, rep, sh, run = _represent(prog, launch, sizes)
    except ShadowFailed as e:  # the representatives' run stopped where the shadow failed
        longer = getattr(e, "longer", None)
        if longer is None or sizes is not None:
            return _found_before_stop(e, f"{e}", partial=not require_summary)
        # a loop whose trip count depends on %ctaid (grid_loops.py): the CTA that goes on, alone
        try:
            reps, rep, sh, run = _represent(prog, launch, None, [longer], ctaid_trips=True)
        except ShadowFailed as e2:
            return _found_before_stop(e2, f"{e}; with CTA {longer} run alone: {e2}", partial=not require_summary)
        if not rep.findings and cta_local_state(prog):  # one CTA of each trip pattern runs too
            patterns, why = _trip_patterns(sh, launch, longer)
            if why:
                return None, f"symbolic not applicable: {e}; with CTA {longer} run alone: {why}"
            others = [c for c in patterns if c != tuple(longer)]
            if others:
                r2 = _concrete(prog, launch, others)
                if r2.findings:  # real: these CTAs ran concretely
                    r2.stats["grid_method"] = GridMethod.SYMBOLIC.describe("finding in a CTA run for its trip count")
                    return r2, ""
                if r2.outcome is not Verdict.RACE_FREE or r2.reason:
                    return None, f"symbolic not applicable: {e}; CTAs {others} run for their trip counts: {r2.verdict}"
            rep.assumptions.append(
                f"loops whose trip count depends on %ctaid: {len(patterns)} distinct patterns of back edges taken over "
                f"the grid (numpy, every CTA); CTAs {patterns} executed concretely, one of each, so shared memory, "
                "barriers and other CTA-local behaviour are checked for every CTA (CTAs of one pattern run the same "
                "instructions, and no shared address or guard depends on %ctaid beyond those back edges)"
                + (f"; {sh.early_leavers} CTAs whose pattern differs from CTA {tuple(longer)}'s only in leaving a "
                   "summarised loop at an earlier period share its run: they run a prefix of its periods, all proved "
                   "to repeat one state and one path, and after leaving what it runs after its last period (grid.py "
                   "_shares_run, loops.py _leaves_after)" if sh.early_leavers else ""))
            rep.stats["trip_patterns"] = len(patterns)
            if sh.early_leavers:
                rep.stats["early_leavers"] = sh.early_leavers
    if run.state.footprint_hit is not None and require_summary:
        return None, f"symbolic not applicable: {run.state.footprint_hit}"
    if rep.findings:  # real: these CTAs were executed concretely
        rep.stats["grid_method"] = GridMethod.SYMBOLIC.describe("finding in a representative CTA")
        return rep, ""
    try:
        probe = _probe(prog, sizes, sh) if sizes is not None and not sh.failed else None
    except _OutOfTime:
        return None, "symbolic not applicable: the time limit passed during the Z3 proof"
    if probe is not None:  # a loop on the sizes too short here to be summarised: run where it is longer
        point, launch, sizes = probe
        try:
            reps, rep2, sh2, run2 = _represent(prog, launch, sizes)
        except ShadowFailed as e:
            return None, f"symbolic not applicable: {e}"
        if rep2.findings:  # real: these CTAs ran concretely, at a point of the domain
            rep2.notes.insert(0, f"symbolic sizes: the finding is at {_at(point)}, where the representatives ran "
                                 "(the loops are too short to summarise at the checked launch's sizes, which "
                                 "have no finding in these CTAs)")
            rep2.stats["witness_sizes"] = point
            rep2.stats["grid_method"] = GridMethod.SYMBOLIC.describe("finding in a representative CTA")
            return rep2, ""
        rep, sh, run = rep2, sh2, run2
        rep.assumptions.append(f"symbolic sizes: the representative CTAs ran at {_at(point)}, a point of the domain "
                               f"where the loops run long enough to be summarised (at {_at(_checked_sizes(sizes))}, the "
                               "checked launch's sizes, they are too short); the checked launch is a point of the proof")
    if rep.outcome is not Verdict.RACE_FREE or sh.failed or rep.reason:
        return None, f"symbolic not applicable: {sh.failed or rep.verdict}"
    if require_summary and not (run.loops and run.loops.summaries):
        return None, "symbolic not applicable: no loop long enough to summarise"
    try:
        wraps: list[_Trips] = []
        got, why = _prove(prog, launch, run.machine, sh, rep, reps, t0, sizes, wraps)
        if got is None and sizes is not None and WRAPS in why:
            # a loop not proved to end over the whole domain (a counter that wraps near 2^31): the proof over
            # the widest narrower domain where the loops end (`_widest`), else over sizes up to NARROW_TO; the
            # reason it stops there said with it. Each is a full proof over its domain.
            whole = why.removeprefix("symbolic not applicable: ")
            tried: dict[str, str] = {}  # narrower domain -> why its proof failed
            wide = _widest(prog, launch, sh, sizes, wraps[0] if wraps else None)
            for small in ([wide] if wide is not None else []) + (
                    [sizes.narrowed(NARROW_TO)] if any(v.hi > NARROW_TO for v in sizes.vars) else []):
                if small.describe() in tried or small.describe() == sizes.describe():
                    continue
                got, why2 = _prove(prog, launch, run.machine, sh, rep, reps, t0, small)
                if got is not None:
                    got.notes.insert(0, f"symbolic sizes: checked for sizes in {small.describe()}"
                                        + "".join(f"; over {d} not proven: {w}" for d, w in tried.items())
                                        + f"; over the whole domain ({sizes.describe()}) not proven: {whole}")
                    got.stats.setdefault("sizes", {})["not_proven_above"] = whole
                    return got, why2
                tried[small.describe()] = why2.removeprefix("symbolic not applicable: ")
                why = f"{why}; over {small.describe()}: {tried[small.describe()]}"
        return got, why
    except _OutOfTime:
        return None, "symbolic not applicable: the time limit passed during the Z3 proof"
    except (z3.Z3Exception, KeyError, ValueError, IndexError, TypeError, AttributeError) as e:
        return None, f"symbolic not applicable: internal: {type(e).__name__}: {e}"


def _found_before_stop(e: ShadowFailed, why: str, partial: bool = True) -> tuple[Report | None, str]:
    """The shadow stopped the representatives' run (`why`): the grid is enumerated instead (None, reason),
    unless the run had found a bug before the stop and a partial report is accepted (`partial`; a small
    grid enumerates instead, so that what runs after the stop is checked too: a report names every
    finding the launch has, not only the first ones). The representative CTAs executed concretely up to
    there, as they would when the grid is enumerated, so a race or fault among those instructions is
    one of the launch (run.py `run_checked` leaves `prefix` None where it is not: paths explored both
    ways, values a loop summary skipped); enumerating would find it again, at the cost of every CTA."""
    prefix = getattr(e, "prefix", None)
    if not partial or prefix is None or not prefix.findings:
        return None, f"symbolic not applicable: {why}"
    prefix.notes.insert(0, f"the representative CTAs ran concretely up to where the symbolic grid stopped ({why}); "
                           "the finding is among the instructions they executed before it, and the rest of the "
                           "launch was not checked")
    prefix.stats["grid_method"] = GridMethod.SYMBOLIC.describe("finding in a representative CTA before the shadow "
                                                               "stopped")
    return prefix, ""


#: The narrower range a proof over every size retries when the whole domain is not proven.
NARROW_TO = 2**20


def _tops(v, floor: int) -> list[int]:
    """Upper ends to try for size `v`, greatest first: a power of two less a power of two (2^31 - 4096: the
    largest size where a counter stepping by 4096 from 0 stays below 2^31), or a power of two; each a
    multiple of v's, at least `floor` and below v.hi."""
    p = 1 << max(1, v.hi).bit_length()
    out = set()
    for j in range(1, p.bit_length()):
        for t in (p - (1 << j), 1 << j):
            t -= t % v.multiple
            if max(floor, v.lo) <= t < v.hi:
                out.add(t)
    return sorted(out, reverse=True)


def _widest(prog: Program, launch: Launch, sh: Shadow, sizes: SizeDomain, trip: _Trips | None = None
            ) -> SizeDomain | None:
    """A narrower domain where the loops whose trip count is a size are proved to end (`_Trips.bound`), as
    wide as a binary search over `_tops` finds: one size its back edge reads narrowed (the one that keeps the
    most of its range), else all of them to one top; repeated while another loop does not end there. Only a
    choice of domain (probes ask k near the one the narrowest top needs, not all of 1 .. TRIP_BITS): the
    proof over it is then made in full (check_symbolic). Every domain keeps the sizes the representatives ran
    at and the checked launch's. trip: the loop not proved to end over `sizes`, where the caller knows it."""
    keep = {**sizes.concrete, **(sizes.concrete_from or {})}
    for _ in range(4):
        if trip is None:
            failing, why = _size_paths(prog, launch, sh, sizes)
            if WRAPS not in why:
                return sizes
            (trip,) = failing.values()
        names = trip.reads(launch, sizes) or {v.name for v in sizes.vars}
        best: tuple[float, SizeDomain] | None = None
        for i, v in enumerate(sizes.vars):
            if v.name not in names:
                continue
            def one(t: int, i: int = i) -> SizeDomain:
                return replace(sizes, vars=[replace(u, hi=t) if k == i else u for k, u in enumerate(sizes.vars)])
            top = _greatest(trip, launch, _tops(v, keep.get(v.name, v.lo)), one)
            if top is not None and (best is None or top / v.hi > best[0]):
                best = (top / v.hi, one(top))
        if best is None:
            big = max(sizes.vars, key=lambda v: v.hi)
            top = _greatest(trip, launch, _tops(replace(big, multiple=1), max(keep.get(v.name, v.lo) for v in sizes.vars)),
                            sizes.narrowed)
            if top is None:
                return None
            best = (0.0, sizes.narrowed(top))
        sizes, trip = best[1], None
    return None


def _greatest(trip: _Trips, launch: Launch, cands: list[int], at) -> int | None:
    """The greatest of `cands` (descending) where `trip` is proved to end over `at(top)`, by binary search (a
    narrower domain ends where a wider one does). The narrowest is asked every k (its least is k0); a wider top
    t only the k's near k0 + log2(t / narrowest), as many more periods as a counter stepping through the size
    takes (any k where the bound holds shows the loop ends; the proof finds the least)."""
    if not cands or trip.bound(launch, at(cands[-1])):
        return None
    k0, t0 = trip.limit.bit_length() - 1, cands[-1]

    def ends(t: int) -> bool:
        k = k0 + math.ceil(math.log2(t / t0))
        return not trip.bound(launch, at(t), range(max(1, k - 1), min(TRIP_BITS, k + 1) + 1))

    lo, hi = 0, len(cands) - 1  # cands[hi] ends
    while lo < hi:
        mid = (lo + hi) // 2
        if ends(cands[mid]):
            hi = mid
        else:
            lo = mid + 1
    return cands[hi]


def _at(point: dict[str, int]) -> str:
    return ", ".join(f"{k} = {v}" for k, v in point.items())


def _checked_sizes(sizes: SizeDomain) -> dict[str, int]:
    return sizes.concrete_from if sizes.concrete_from is not None else sizes.concrete


#: Most distinct trip patterns of loops on %ctaid for which one CTA each is run (CTA-local state, grid_loops.py).
MAX_TRIP_PATTERNS = 8


def _trip_patterns(sh: Shadow, launch: Launch, executed: tuple) -> tuple[list[tuple], str]:
    """One CTA of each distinct pattern of the back edges on %ctaid that the executed CTA took
    (`Shadow.trip_conds`, evaluated with numpy for every CTA of the grid; a summarised loop's at each
    period t it covers): CTAs of one pattern leave every such loop at the same iteration, so, with every
    other branch proved to go as in the executed CTA and no shared address or guard depending on %ctaid,
    they run the same instructions on the same CTA-local addresses. ([], why) when that does not hold or
    there are more than MAX_TRIP_PATTERNS patterns. `executed`: the CTA already run, its pattern's."""
    if sh.shared_varies:
        return [], f"{sh.shared_varies} has a shared address or guard that depends on %ctaid"
    ids = [x.ravel() for x in np.indices(launch.grid)]
    n = len(ids[0])
    env = {("c", k): ids[k].astype(np.uint64)[None, :] for k in range(3)}
    rows = []
    conds = sh.trip_conds
    # summarised loops whose final period only leaves (loops.py `_leaves_after`): their P back edges per period
    # (consecutive entries), then the m < P the final period took before leaving (`Shadow.final_rows`)
    blocks: dict[int, list[int]] = {}
    for ident in sh.exits_after_summary:
        at = [i for i, (x, _) in enumerate(conds) if x == ident]
        fin = sh.final_rows.get(ident, [])
        if at and at == list(range(at[0], at[0] + len(at))) and len(fin) < len(at) \
                and all(i > at[-1] and conds[i][0] is None for i in fin):
            blocks[ident] = fin
    final = {i for fin in blocks.values() for i in fin}
    periods = []  # row blocks of summarised loops that a CTA may leave earlier and still share the executed run,
    # each with its period (iterations) and the back edge of a period the executed CTA leaves at
    partial: dict[int, list[np.ndarray]] = {}  # a block's back edges of one period so far, each over t
    for ident, expr in conds:
        if _has_leaf(expr, ("p", "q", "s", "g", "d")):
            return [], "a back edge on %ctaid depends on the thread"
    for i, (ident, expr) in enumerate(conds):
        if i in final:
            continue  # in its loop's block
        if ident is None:
            rows.append(np.broadcast_to(np.asarray(evaluate(expr, env), bool), (1, n)))
            continue
        t = np.arange(sh.loop_ranges[ident], dtype=np.uint64)[:, None]
        row = np.broadcast_to(np.asarray(evaluate(expr, {**env, ("t", ident): t}), bool), (len(t), n))
        if ident not in blocks:
            rows.append(row)
            continue
        if i + 1 < len(conds) and conds[i + 1][0] == ident:  # not the period's last back edge yet
            partial.setdefault(ident, []).append(row)
            continue
        per_t = partial.pop(ident, []) + [row]  # the period's back edges in order, each over t
        p = len(per_t)
        block = np.stack(per_t, axis=1).reshape(len(t) * p, n)  # in the order the run takes them
        block = np.concatenate([block] + [np.broadcast_to(np.asarray(evaluate(conds[f][1], env), bool), (1, n))
                                          for f in blocks[ident]])
        at = sum(len(r) for r in rows)
        periods.append((slice(at, at + len(block)), p, len(blocks[ident])))
        rows.append(block)
    if not rows:
        return [], "no back edge on %ctaid was recorded"
    sig = np.concatenate(rows).T
    executed = int(np.ravel_multi_index(tuple(int(x) for x in executed), launch.grid))
    shares = _shares_run(sig, periods, executed)
    _, first = np.unique(sig[~shares], axis=0, return_index=True)
    first = np.nonzero(~shares)[0][first]
    early = int(shares.sum()) - int((sig == sig[executed][None, :]).all(axis=1).sum())
    if len(first) + 1 > MAX_TRIP_PATTERNS:
        return [], (f"{len(first) + 1} distinct trip patterns over the grid"
                    + (f" ({early} CTAs that leave a summarised loop earlier share the executed CTA's run)"
                       if periods else "")
                    + f", more than {MAX_TRIP_PATTERNS} CTAs to run for the kernel's CTA-local state (shared memory, "
                    "barriers)")
    sh.early_leavers = early
    return [tuple(int(ids[k][i]) for k in range(3)) for i in sorted(first.tolist() + [executed])], ""


def _shares_run(sig: np.ndarray, periods: list[tuple[slice, int, int]], executed: int) -> np.ndarray:
    """Per CTA (rows of `sig`: its back edges on %ctaid taken), whether the executed CTA's run covers its
    CTA-local behaviour: its pattern is the executed CTA's, except that in each block of `periods` (a summarised
    loop whose period after the skipped ones is its last, `Shadow.exits_after_summary`, and whose back edges the
    executed CTA takes in every period of the block; with its period p: the block lists the p back edges of each
    period t in turn, then the m < p the final period takes before the executed CTA leaves at its m-th) it may
    leave earlier, at the m-th back edge of a period: taken before, the m-th of period j not taken (nor any after
    it).
    Such a CTA runs the executed CTA's instructions with the periods j .. n - 1 of that loop left out, which the
    summary proved to start and end in the same repeating state (loops.py, 3) with the same decisions, every
    CTA's decisions of those periods proved the executed CTA's (Z3, `_same_path`); so what it does before
    leaving is a prefix of the executed CTA's run (the skipped periods covered by period 0, as in the summary),
    and what it does after leaving at period j is what the executed CTA does after leaving at period n, from the
    same state (loops.py `_leaves_after`). Loops in turn: the state each leaves is the repeating one."""
    want = sig[executed]
    shares = np.ones(sig.shape[0], bool)
    rest = np.ones(sig.shape[1], bool)
    for sl, p, m in periods:
        if not want[sl].all():  # the executed CTA leaves inside the block: no such loop
            continue
        rest[sl] = False
        block = sig[:, sl]
        left = np.logical_or.accumulate(~block, axis=1)  # not taken at some back edge up to this one
        shares &= ~(left & block).any(axis=1)  # taken again after leaving: not a prefix
        # a period of p iterations: only a CTA that leaves at the m-th back edge of a period, as the executed CTA
        # does, leaves from the state it leaves from (one that leaves elsewhere in a period is a pattern of its own)
        shares &= block.all(axis=1) | (np.argmax(~block, axis=1) % p == m)
    return shares & (sig[:, rest] == want[None, rest]).all(axis=1)


def _represent(prog: Program, launch: Launch, sizes: SizeDomain | None, reps: list | None = None,
               ctaid_trips: bool = False):
    """Run the first and last CTA (or `reps`) with the shadow: (reps, report, shadow, run). ctaid_trips:
    back edges on %ctaid are trips of the one CTA run (grid_loops.py)."""
    gx, gy, gz = launch.grid
    last = (gx - 1, gy - 1, gz - 1)
    if reps is None:
        reps = [(0, 0, 0), last] if last != (0, 0, 0) else [(0, 0, 0)]

    def shadow() -> Shadow:
        sh = Shadow(prog, _size_params(prog, sizes), stop=True)
        sh.ctaid_trips = ctaid_trips
        if sizes is not None:  # the sizes' values in this run, for evaluating loop decisions on them
            sh.size_values = {("g", i): launch.grid[i] for i in range(3)}
            sh.size_values.update({("s", p.name): int(v) & (2**64 - 1) for p, v in zip(prog.params, launch.params)
                                   if p.name in sizes.params and not isinstance(v, str)})
        return sh

    sh = shadow()
    run = new_run(prog, launch, reps, shadow=sh)
    rep = run_checked(run, prog, launch)
    sh.finish()
    if run.state.footprint_hit is not None:  # a summary's skipped writes were read: every iteration, then
        why = run.state.footprint_hit
        with loop_summaries(False):
            sh = shadow()
            run = new_run(prog, launch, reps, shadow=sh)
            rep = run_checked(run, prog, launch)
            sh.finish()
        run.state.footprint_hit = why
        rep.notes.insert(0, f"loops run iteration by iteration: {why}")
    return reps, rep, sh, run


#: Factors the checked sizes are scaled by for a run whose loops on the sizes are long enough to summarise.
PROBE_SCALES = (16, 8, 4)


def _probe(prog: Program, sizes: SizeDomain, sh: Shadow):
    """(point, its launch, the domain checked at it) when a loop whose trip count depends on the sizes
    was not summarised in this run (too few iterations): the checked sizes scaled up, within the
    domain. None when every such loop was summarised, or no scaled point is in the domain."""
    heads = {h for _, h in sh.loop_proofs.values()}
    if all(h in heads for h in sh.trips):
        return None
    env = sizes.env("probe")
    for f in PROBE_SCALES:
        point = {}
        for v in sizes.vars:
            x = sizes.concrete[v.name] * f
            point[v.name] = min(v.hi, x - x % v.multiple) if v.lo < v.hi else v.lo
        s = z3.Solver()
        s.add(sizes.constraints(env) + [env[k].t == x for k, x in point.items()])
        if _check(s) == z3.sat:
            return point, sizes.launch_at(point), sizes.at(point)
    return None


def needs_whole_grid(prog: Program) -> str:
    """Why two representative CTAs cannot stand for the grid ("" when they can): a cooperative
    launch's grid barrier needs every CTA resident (%envreg), device-heap blocks are placed as the
    CTAs run (malloc)."""
    if prog.specials & {"%envreg1", "%envreg2"}:
        return "a cooperative launch (%envreg: a grid barrier needs every CTA)"
    if any(i.opcode == "call" and any(isinstance(o, A.Sym) and o.name == "malloc" for o in i.operands)
           for i in prog.code):
        return "device-heap allocations (malloc)"
    return ""


def _size_params(prog: Program, sizes: SizeDomain | None) -> dict[str, int]:
    """The kernel parameters that hold functions of the sizes, with their widths in bits."""
    if sizes is None:
        return {}
    out = {}
    for p in prog.params:
        if p.name in sizes.params:
            lay = param_layout(p)
            out[p.name] = 8 * lay[1] if lay is not None else 64
    return out


def _too_long(sp: _Space, point: dict[str, int] | None) -> str:
    """Why the model's launch is not run to validate it ("" when it is): a loop whose trip count
    depends on the sizes would run more than VALIDATION_ITERATIONS periods there (or never end)."""
    if point is None or not sp.trips:
        return ""
    at = [e.t == point[k] for k, e in sp.env.items()]
    for tr in sp.trips.values():
        u = z3.BitVec("u_end", 64)
        s = _solver()
        s.add(sp.facts + at + [z3.ULT(u, VALIDATION_ITERATIONS), z3.Not(tr.again(u, sp.leaves))])
        if _check(s) != z3.sat:
            where = ", ".join(f"{k} = {v}" for k, v in point.items())
            return (f"at {where} the loop at {tr.where} runs more than {VALIDATION_ITERATIONS} periods (its counter "
                    "may wrap and never end): the witness was not run")
    return ""


def _canonical(s: z3.Solver, sp: _Space, cvars: list) -> z3.ModelRef:
    """The model of `s` (just found sat) least in lexicographic order over the CTA indices of `cvars` (each CTA's x,
    y, z, unsigned) and then the sizes (in the domain's order, signed, from their least values): the witness a
    finding names, so that a kernel gives the same report in every run (canon.py says why Z3's own model does not).
    Only findings (and notes naming sizes) pay for this: a proof's queries are unsat."""
    keys = [Key(c[k]) for c in cvars for k in range(3)]
    if sp.sizes is not None:
        keys += [Key(sp.env[v.name].t, v.lo, True) for v in sp.sizes.vars]
    return least_model(s, keys, CANON_QUERIES, CANON_RLIMIT, _ms_left(Z3_QUERY_MS))


def _witness(prog: Program, sp: _Space, mdl: z3.ModelRef, cvars: list, what: str, stats: dict) -> Report | None:
    """Run the CTAs of a model concretely (at the model's sizes); the report if it finds something."""
    point = sp.point(mdl)
    ctas = sorted({_model_cta(mdl, c) for c in cvars})
    long = _too_long(sp, point)
    if long:
        stats["not_validated"] = long
        return None
    launch = sp.at(point)
    stats["validation_runs"] = stats.get("validation_runs", 0) + 1
    r2 = _concrete(prog, launch, ctas)
    if not r2.findings:
        return None
    r2.stats.update(stats)
    r2.stats["grid_method"] = GridMethod.SYMBOLIC.describe(what)
    if point is not None and point != sp.sizes.concrete:
        where = ", ".join(f"{k} = {v}" for k, v in point.items())
        r2.notes.insert(0, f"symbolic sizes: the finding is at {where} (CTAs {ctas}), not at the "
                           "checked launch's sizes; it was confirmed by running that launch's CTAs concretely")
        r2.stats["witness_sizes"] = point
        r2.assumptions[0] = (f"launch: the one at {where}: grid {launch.grid}, block {launch.block}; CTAs "
                             f"{ctas} executed")
    return r2


#: The sizes `_at_small_sizes` searches: each at most its least value plus this many of its multiples.
SMALL_SIZES = 256
#: Z3's resource limit of `_at_small_sizes` (about 3 s of CPU).
SMALL_RLIMIT = 40_000_000


def _at_small_sizes(s: z3.Solver, sp: _Space, stats: dict) -> tuple:
    """(sat, a solver holding a model) when the query `s` (whose answer was unknown) has a model with every
    size at most SMALL_SIZES of its multiples above its least value, else (unknown, `s`). A bug at a small
    ragged size (the last tile of a short row) is one bit-blasting finds quickly once the products of sizes
    are small, where over the whole domain it answered unknown. Only a model is read from it, validated by
    running its CTAs concretely (`_witness`): nothing is proved by it. Bounded by Z3's resource count
    (SMALL_RLIMIT) more than the query used, not by time, so that a loaded machine gets the same answer."""
    s.push()  # on the solver of the exact query: what it learnt there is what finds the model at once
    s.add([sp.env[v.name].t <= v.lo + SMALL_SIZES * v.multiple for v in sp.sizes.vars])
    s.set("rlimit", SMALL_RLIMIT)  # more resources than the solver has used so far (Z3's limit is relative)
    s.set("timeout", _ms_left(WALL_SLACK * Z3_QUERY_MS))
    stats["z3_queries"] += 1
    res = s.check()
    s.set("rlimit", LONG_RLIMIT)
    if res == z3.sat:
        stats["small_sizes_witness"] = stats.get("small_sizes_witness", 0) + 1
        return z3.sat, s
    s.pop()
    return z3.unknown, s



def _first_failing(sp: _Space, s: z3.Solver) -> dict[str, int] | None:
    """The smallest first size at which the query's constraints hold, the others held at their
    smallest such values (lexicographically, the first size last): below it, with the others as
    they are, they never hold; for the verdict's 'holds for ...'."""
    if sp.sizes is None:
        return None
    o = z3.Optimize()
    o.set("timeout", Z3_QUERY_MS)
    o.add(s.assertions())
    names = [v.name for v in sp.sizes.vars]
    for k in names[1:] + names[:1]:
        o.minimize(sp.env[k].t)
    if o.check() != z3.sat:
        return None
    return sp.point(o.model())


def _inhabitant(launch: Launch, sizes: SizeDomain) -> tuple[dict[str, int] | None, str]:
    """A point of the size domain (Z3 model), the checked launch's sizes when they are one: a proof
    over an empty domain is vacuous (every query unsat), so none is claimed without one. (point, "")
    or (None, why not)."""
    sp = _Space(launch, sizes, "dom")
    checked = _checked_sizes(sizes)
    for at in ([e.t == checked[k] for k, e in sp.env.items() if k in checked], []):
        s = _solver()
        s.add(sp.facts + at)
        res = s.check()
        if res == z3.sat:  # all the checked sizes, else the least point (a model Z3 picks would vary between runs)
            return sp.point(s.model() if len(at) == len(sp.env) else _canonical(s, sp, [])), ""
    return None, ("symbolic not applicable: the size domain (" + sizes.describe() + ", with the grid limits and the "
                  "compiled-in facts) is " + ("empty" if res == z3.unsat else "not shown to be non-empty")
                  + ": a proof over it would be vacuous")


def _prove(prog: Program, launch: Launch, m, sh: Shadow, rep: Report, reps: list, t0: float,
           sizes: SizeDomain | None = None, wraps: list | None = None):
    """(report, "") or (None, why not). wraps: gets the loop not proved to end, where that is why (_widest)."""
    inhabitant = None
    if sizes is not None:
        inhabitant, why = _inhabitant(launch, sizes)
        if why:
            return None, why
    classes: dict = {}
    for a in sh.accesses:
        key = (a.buffer, a.kind, a.strong, a.size, a.addr, a.guard, a.rows.shape[1], a.box)
        if key in classes:
            classes[key].rows.append(a.rows)
        else:
            classes[key] = _Class(a, sh.loop_ranges)
    allocs = m.glob.allocations
    trips: dict[int, _Trips] = {}
    if sizes is not None:
        trips, why = _size_paths(prog, launch, sh, sizes)
        if why:
            if wraps is not None and WRAPS in why:
                wraps.extend(trips.values())
            return None, f"symbolic not applicable: {why}"
        for cl in classes.values():
            cl.bounds = {i: trips[i] for i in cl.loops if i in trips}
    for ident, backs in sh.ctaid_backs.items():  # summarised periods of loops whose trip count depends on %ctaid
        if any(_has_leaf(x, ("p", "q")) for x in backs):
            return None, (f"symbolic not applicable: the back edge of a summarised loop depends on %ctaid and "
                          "differs between threads")
        trips[ident] = _CtaidTrips(ident, [(x, True) for x in backs], "", sh.loop_ranges[ident])
    if sh.ctaid_backs:
        for cl in classes.values():
            cl.bounds = {i: trips[i] for i in cl.loops if i in trips}
    for dv in sh.nonzero:  # divisors depending on %ctaid (lane placeholders: every lane's value)
        where = dv.where
        if _has_leaf(dv.expr, ("p", "q")):
            return None, f"symbolic not applicable: lane-varying %ctaid-dependent divisor at {where}"
        sp = _Space(launch, sizes, "d", trips)
        c, grid = sp.cta("d")
        env = {**{("c", i): c[i] for i in range(3)}, **sp.leaves}
        periods = []
        if dv.loop is not None:  # every period t of the summary that the CTA reaches (`_CtaidTrips.runs`)
            if sizes is not None and dv.loop not in trips:
                return None, f"symbolic not applicable: the divisor at {where} changes from iteration to iteration"
            t = env[("t", dv.loop)] = z3.BitVec(f"d_t{dv.loop}", 64)
            periods.append(trips[dv.loop].runs(t, env) if dv.loop in trips else z3.ULT(t, sh.loop_ranges[dv.loop]))
        s = _solver()
        # only CTAs that reach the division (a CTA that left the loop on %ctaid before never divides here)
        s.add(grid + periods + [_z3(dv.expr, env) == 0] + ([] if dv.reach is None else [_z3(dv.reach, env)]))
        if _check(s) != z3.unsat:
            return None, f"symbolic not applicable: divisor at {where} may be 0 in some CTA"
    stats = {"grid_method": GridMethod.SYMBOLIC.describe(), "access_classes": len(classes), "z3_queries": 0,
             "bounds_by_numbers": 0, "validation_runs": 0}
    why = _same_path(sh, launch, sizes, stats)
    if why:
        return None, f"symbolic not applicable: {why}"
    # ---- bounds: every CTA (of every launch of the domain), every class
    for cl in classes.values():
        buf = allocs[cl.a.buffer]
        if sizes is None and in_bounds(cl, launch.grid, buf.base, buf.size):
            stats["bounds_by_numbers"] += 1  # every CTA's bytes inside the buffer on intervals (grid_numbers.py)
            continue
        sp = _Space(launch, sizes, "b", trips)
        c, grid = sp.cta("b")
        # each column in its range (a superset of the rows, guard dropped) first: in bounds there, in
        # bounds; too many rows to list: that must hold. A guarded (masked) access is tried exactly first:
        # its superset drops the mask that keeps it in bounds, so it is almost never unsat (gemm_fp16 under
        # --sizes symbolic: 0 of 123, 72 of 164 s CPU), and is asked only when the exact query is undecided.
        relaxed = cl.listed() > MAX_ROWS
        order = (True,) if relaxed else (False, True) if cl.a.guard is not None else (True, False)
        exact = None  # (answer, solver) of the exact query: the one a witness is read from
        for superset in order:
            mem, off, guard, nrows, _ = cl.side("b", c, buf.base, relaxed=superset, leaves=sp.leaves)
            s = _solver()
            s.add(grid + [mem, guard, z3.UGT(z3.ZeroExt(1, off) + cl.a.size, sp.buffer_bytes(buf))])
            stats["z3_queries"] += 1
            res = _check(s, quick=superset and not relaxed)
            if res == z3.unsat:
                break
            if not superset:
                exact = (res, s)
                if res == z3.sat:
                    break  # the superset of a satisfiable query is satisfiable too
        if res != z3.unsat and exact is not None:
            res, s = exact
            if res == z3.unknown and sizes is not None:
                res, s = _at_small_sizes(s, sp, stats)
        if res != z3.unsat and relaxed:
            return None, f"symbolic not applicable: {nrows} distinct lane offsets in one access class"
        if res != z3.unsat:
            if res == z3.sat:
                first = _first_failing(sp, s)
                if first is not None:  # witness at the smallest failing size
                    s.push()
                    s.add([e.t == first[k] for k, e in sp.env.items()])
                    if _check(s) != z3.sat:
                        s.pop()
                        first = None
                        _check(s)
                w = _witness(prog, sp, _canonical(s, sp, [c]), [c], "bounds witness validated concretely", stats)
                if w is not None:
                    if first is not None:
                        var = sizes.vars[0]
                        held = ", ".join(f"{k} = {v}" for k, v in first.items() if k != var.name)
                        below = (f"stays in bounds for every {var.name} in [{var.lo}, {first[var.name] - 1}] of the "
                                 "domain and " if first[var.name] > var.lo else "")  # none below the least
                        w.notes.insert(0, f"symbolic sizes: {prog.code[cl.a.pc].name} at {prog.code[cl.a.pc].span} "
                                          + (f"with {held} " if held else "") + below +
                                          f"leaves {buf.name} from {var.name} = {first[var.name]}")
                    return w, ""
            return None, (f"symbolic not applicable: bounds of {prog.code[cl.a.pc].name} at {prog.code[cl.a.pc].span} "
                          "not proven for every CTA" + (f" ({stats['not_validated']})" if "not_validated" in stats else ""))
    # ---- cross-CTA races
    if sizes is not None:  # classes that differ only in constants: one family each (n^2 pairs -> a few)
        fams = families(list(classes.values()))
        if len(fams) < len(classes):
            stats["class_families"] = len(fams)
            classes = {i: f for i, f in enumerate(fams)}
    pairs = list(_pairs(classes, allocs))
    validations = 0
    refuted = apart(pairs, launch.grid, stats) if sizes is None else set()
    refuted |= _refute_by_slices([p for p in pairs if (id(p[1]), id(p[2])) not in refuted], launch, sizes, trips,
                                 allocs, stats)
    refuted |= _refute_by_writer([p for p in pairs if (id(p[1]), id(p[2])) not in refuted], launch, sizes, trips,
                                 stats)
    for base, w, a in pairs:
        if (id(w), id(a)) in refuted:
            continue
        sp = _Space(launch, sizes, "z", trips)
        c1, g1 = sp.cta("w")
        c2, g2 = sp.cta("a")
        distinct = z3.Or([c1[k] != c2[k] for k in range(3)])
        m1, o1, gd1, _, _ = w.side("w", c1, base, relaxed=True, leaves=sp.leaves)
        m2, o2, gd2, _, _ = a.side("a", c2, base, relaxed=True, leaves=sp.leaves)
        s = _solver()
        s.add(g1 + g2 + [distinct, m1, m2, z3.ULT(o1, o2 + a.a.size), z3.ULT(o2, o1 + w.a.size)])
        stats["z3_queries"] += 1
        listed = max(w.listed(), a.listed()) <= MAX_ROWS  # the exact query can follow
        if _check(s, quick=listed) == z3.unsat:
            continue  # refuted on the relaxation (a superset of the lanes' accesses)
        if not listed:
            return None, "symbolic not applicable: too many distinct lane offsets to refute a cross-CTA overlap"
        m1, o1, gd1, _, _ = w.side("w", c1, base, leaves=sp.leaves)
        m2, o2, gd2, _, _ = a.side("a", c2, base, leaves=sp.leaves)
        s = _solver()
        s.add(g1 + g2 + [distinct, m1, m2, gd1, gd2,
                         z3.ULT(o1, o2 + a.a.size), z3.ULT(o2, o1 + w.a.size)])
        while True:
            stats["z3_queries"] += 1
            res = _check(s)
            if res == z3.unsat:
                break
            if res != z3.sat or validations >= MAX_VALIDATIONS:
                return None, ("symbolic not applicable: possible cross-CTA overlap not refuted"
                              + (f" ({stats['not_validated']})" if "not_validated" in stats else ""))
            mdl = _canonical(s, sp, [c1, c2])
            x, y = _model_cta(mdl, c1), _model_cta(mdl, c2)
            point = sp.point(mdl)
            validations += 1
            found = _witness(prog, sp, mdl, [c1, c2], "Z3 overlap validated on two concrete CTAs", stats)
            if found is not None:
                return found, ""
            block = [c1[k] == x[k] for k in range(3)] + [c2[k] == y[k] for k in range(3)]
            swap = [c1[k] == y[k] for k in range(3)] + [c2[k] == x[k] for k in range(3)]
            at = [e.t == point[k] for k, e in sp.env.items()] if point is not None else []
            s.add(z3.Not(z3.And(block + at)))
            s.add(z3.Not(z3.And(swap + at)))
    intra, witness = _intra_cta(prog, launch, pairs, reps, stats, sizes, trips)
    if witness is not None:
        return witness, ""
    stats["seconds"] = round(time.perf_counter() - t0, 3)
    rep.stats.update(stats)
    shared_all = "" if sh.shared_varies else (", shared-memory races/bounds and barrier use (shared addresses and "
                                              "guards do not depend on %ctaid" + (" or the sizes" if sizes else "") + ")")
    if sizes is None:
        rep.assumptions[0] = (f"launch: grid {launch.grid}, block {launch.block}, dynamic shared memory "
                              f"{launch.dynamic_shared_bytes} bytes; CTAs {reps} executed, the grid covered symbolically")
        scope = "ALL CTAs"
    else:
        where = ", ".join(f"{k} = {v}" for k, v in sizes.concrete.items())
        rep.assumptions[0] = (f"launches: every size with {sizes.describe()}, the grid and buffers the contract's "
                              f"functions of them; block {launch.block}; CTAs {reps} executed at {where} (grid "
                              f"{launch.grid}), every other CTA and size covered symbolically")
        fixed = [f"{p.name}={v}" for p, v in zip(prog.params, launch.params)
                 if not isinstance(v, str) and p.name not in sizes.params]
        rep.assumptions[1] = ("scalar parameters: " + ", ".join(sorted(sizes.params)) + " the contract's functions "
                              "of the sizes; fixed: " + (", ".join(fixed) or "none"))
        rep.assumptions.extend(sizes.assumptions)
        rep.stats["sizes"] = {"domain": sizes.describe(), "checked_at": dict(sizes.concrete),
                              "domain_point": inhabitant}
        rep.assumptions.append(f"symbolic sizes: the domain is not empty (Z3 model: {_at(inhabitant)}"
                               + (", the checked launch's sizes)" if inhabitant == _checked_sizes(sizes) else
                                  "; the checked launch's sizes are NOT in it)"))
        scope = f"ALL sizes ({sizes.describe()}) and ALL CTAs of each"
    guarded = (f" (except {', '.join(sh.guard_branches)}: a forward branch over code without synchronisation "
               "or other branches, whose accesses are proved as a guard of it, every thread that reaches it having "
               "run that code in an executed CTA)") if sh.guard_branches else ""
    uniform = ""
    if sh.uniform:
        names = sorted({u.where for u in sh.uniform})
        uniform = (f" or proven (Z3) to be decided in every CTA, per thread and loop iteration, as in the executed "
                   f"CTAs ({', '.join(names[:4])}{', ...' if len(names) > 4 else ''})")
    rep.assumptions.append(
        (f"symbolic sizes and grid (Z3): every branch, exit and barrier is independent of %ctaid and of the "
         f"sizes{guarded}{uniform}, " if sizes else
         f"symbolic grid (Z3): every branch, exit and barrier is independent of %ctaid{guarded}{uniform}, ")
        + ("so all CTAs run the same instruction sequence" if not sh.ctaid_trips else
           f"except the back edges of loops whose trip count depends on %ctaid"
           + (" and the entry guards on %ctaid that skip a loop" if sh.entry_ends else "")
           + f": CTA {reps[0]}, which runs them longest, ran alone; every CTA runs a prefix of its iterations (each "
           "access is proved under the back edges taken" + (" and the entry guards passed" if sh.entry_ends else "")
           + " before it, and no CTA goes on where it leaves (Z3)), then the same code"
           + ("" if "trip_patterns" in rep.stats else ", and the kernel keeps no CTA-local state (no shared or local "
              "memory, no synchronisation), so its global accesses are all a CTA does"))
        + f"; proven for {scope}: global accesses in bounds, no race "
        "between two different CTAs on global memory" + shared_all
        + ("; no two threads of one CTA touch overlapping global bytes in any CTA (Z3), so there is no "
           "intra-CTA race on global memory" if intra is None else
           f"; checked on the executed CTAs only: intra-CTA races on global memory ({intra})")
        + (f"; checked on the executed CTAs only: shared memory ({sh.shared_varies} depends on %ctaid"
           + (" or the sizes" if sizes else "") + ")" if sh.shared_varies else ""))
    return rep, ""


#: Most CTAs whose byte ranges _refute_by_slices evaluates on numbers before asking Z3.
SLICE_PROBE_CTAS = 8


def _slice_probe_ctas(grid: tuple) -> np.ndarray:
    """A few CTAs of `grid` (first, last, one step along each axis, ...) as a (k, 3) array."""
    gx, gy, gz = grid
    pick = [(0, 0, 0), (gx - 1, gy - 1, gz - 1), (min(1, gx - 1), 0, 0), (0, min(1, gy - 1), 0),
            (0, 0, min(1, gz - 1)), (gx // 2, gy // 2, gz // 2), (gx - 1, 0, 0), (0, gy - 1, gz - 1)]
    return np.unique(np.array(pick[:SLICE_PROBE_CTAS], dtype=np.uint64), axis=0)


def _in_slices_on_numbers(cl: _Class, base: int, piece: int, grid: tuple) -> bool:
    """False when some listed row of `cl`, in one of a few CTAs (_slice_probe_ctas) and at the first or
    last iteration of each summarised loop, touches bytes outside its CTA's slice: the Z3 query would
    be sat, so it is not asked. True also when the class cannot be evaluated here (Z3 decides)."""
    rows = cl.all_rows()
    ctas = _slice_probe_ctas(grid)
    gx, gy, _ = grid
    lin = (ctas[:, 0].astype(object) + gx * (ctas[:, 1].astype(object) + gy * ctas[:, 2].astype(object)))[:, None]
    env = {("c", i): ctas[:, i][:, None] for i in range(3)}
    env.update({("q", k): rows[None, :, k] for k in range(rows.shape[1] - 2)})
    for last in (False, True):
        env.update({("t", i): n - 1 if last else 0 for i, n in cl.loops.items()})
        try:
            addr = evaluate(cl.a.addr, env)
        except KeyError:  # a leaf without a number here (a size): Z3 decides
            return True
        off = (np.broadcast_to(addr, (len(ctas), rows.shape[0])) + rows[None, :, -1].astype(object) - base) % 2**64
        if ((off < lin * piece) | (off + cl.a.size > lin * piece + piece)).any():
            return False
    return True


def _refute_by_slices(pairs: list, launch: Launch, sizes: SizeDomain | None, trips: dict, allocs, stats: dict) -> set:
    """The pairs (id(W), id(A)) refuted because each CTA keeps to a slice of the buffer of its own.

    A buffer of B bytes and a grid of n CTAs, the slice of the CTA with linear index
    l = x + gx * (y + gy * z) is the bytes [l * S, (l + 1) * S) with S = B // n (one program per matrix,
    per row, per batch element). If every access class of the buffer that is in a pair keeps, in every
    CTA, every lane in its columns' ranges and every iteration of its summarised loops (the relaxed side,
    a superset of the rows, guards dropped) to its CTA's slice (one Z3 query per class, quick: only unsat
    counts), then two different CTAs, whose linear indices differ, touch disjoint slices: each pair of
    those classes is refuted exactly as its own relaxed query would refute it, and the writer and pair
    queries over many classes (every executed iteration of a loop that is not summarised is a class of
    its own) are not asked. One query per class instead of one per pair; a buffer one of whose classes
    leaves its slice (a GEMM's tiles of C are not contiguous, say) refutes nothing, and its classes are
    first evaluated on numbers in a few CTAs so that such a buffer costs no Z3 query. Not for symbolic
    sizes (the slice would be a function of them)."""
    if sizes is not None or launch.num_ctas < 2:
        return set()
    by_base: dict = {}
    for base, w, a in pairs:
        by_base.setdefault(base, {}).update({id(w): w, id(a): a})
    alloc_at = {al.base: al for al in allocs}
    gx, gy, _ = launch.grid
    out: set = set()
    for base, members in by_base.items():
        piece = alloc_at[base].size // launch.num_ctas
        if piece < max(cl.a.size for cl in members.values()):
            continue
        if not all(_in_slices_on_numbers(cl, base, piece, launch.grid) for cl in members.values()):
            continue
        held = True
        for cl in members.values():
            sp = _Space(launch, sizes, "sl", trips)
            c, grid = sp.cta("sl")
            m, off, _, _, _ = cl.side("sl", c, base, relaxed=True, leaves=sp.leaves)
            lin = z3.ZeroExt(33, c[0]) + gx * (z3.ZeroExt(33, c[1]) + gy * z3.ZeroExt(33, c[2]))  # 65 bits: no wrap
            lo = lin * piece
            end = z3.ZeroExt(1, off) + cl.a.size
            s = _solver()
            s.add(grid + [m, z3.Or(z3.ULT(z3.ZeroExt(1, off), lo), z3.UGT(end, lo + piece))])
            stats["z3_queries"] += 1
            if _check(s, quick=True) != z3.unsat:
                held = False
                break
        if held:
            ids = set(members)
            out.update((id(w), id(a)) for b, w, a in pairs if b == base and id(w) in ids and id(a) in ids)
            stats["cross_cta_by_slices"] = stats.get("cross_cta_by_slices", 0) + 1
    return out


def _refute_by_writer(pairs: list, launch: Launch, sizes: SizeDomain | None, trips: dict, stats: dict) -> set:
    """The pairs (id(W), id(A)) refuted together, one query per writer W: no two different CTAs c1, c2
    and lanes in their columns' ranges (the relaxed sides, a superset of the rows, guards dropped) where
    W's bytes in c1 meet the bytes of ANY of W's partner classes in c2 (a disjunction over them: unsat
    refutes each pair exactly as its own relaxed query would). Anything but unsat refutes nothing and
    the pairs are queried one by one. A writer with one partner is left to the pair's own query."""
    groups: dict = {}
    for base, w, a in pairs:
        groups.setdefault(id(w), (base, w, []))[2].append(a)
    out: set = set()
    for base, w, parts in groups.values():
        if len(parts) < 2:
            continue
        sp = _Space(launch, sizes, "z", trips)
        c1, g1 = sp.cta("w")
        c2, g2 = sp.cta("a")
        m1, o1, _, _, _ = w.side("w", c1, base, relaxed=True, leaves=sp.leaves)
        meets = []
        for a in parts:
            m2, o2, _, _, _ = a.side("a", c2, base, relaxed=True, leaves=sp.leaves)
            meets.append(z3.And(m2, z3.ULT(o1, o2 + a.a.size), z3.ULT(o2, o1 + w.a.size)))
        s = _solver()
        s.add(g1 + g2 + [z3.Or([c1[k] != c2[k] for k in range(3)]), m1, z3.Or(meets)])
        stats["z3_queries"] += 1
        if _check(s, quick=True) == z3.unsat:
            out.update((id(w), id(a)) for a in parts)
            stats["cross_cta_by_writer"] = stats.get("cross_cta_by_writer", 0) + 1
    return out


def _size_paths(prog: Program, launch: Launch, sh: Shadow, sizes: SizeDomain) -> tuple[dict[int, _Trips], str]:
    """Symbolic sizes: every CTA of every size runs the instructions the representatives ran.
    (1) A branch, exit or barrier on the sizes outside a loop's back edge decides as in the run at
    every size (Z3). (2) A loop whose back edge depends on the sizes was summarised (loops.py): its
    periods are then followed as functions of t, and `_Trips` says which run at given sizes.
    (3) In a summarised loop, every other branch, exit or barrier whose guard depends on the sizes
    decides as in period 0 in every period that runs. Returns (the loops of (2) by t leaf, why not)."""
    for dec in sh.size_decisions:
        sp = _Space(launch, sizes, "sd")
        c, grid = sp.cta("sd")
        env = {**sp.leaves, **{("c", i): c[i] for i in range(3)},
               **{("q", i): z3.BitVec(f"sd_q{i}", w) for i, w in _n_q(dec.expr).items()}}
        g = _z3(dec.expr, env)
        ncol = dec.rows.shape[1] - 1
        other = z3.Or([z3.And([env[("q", k)] == int(r[k]) for k in range(ncol)] + [g != z3.BoolVal(bool(r[-1]))])
                       for r in dec.rows])
        s = _solver()
        s.add(grid + [other])
        res = _check(s)
        if res != z3.unsat:
            at = "" if res != z3.sat else " (at " + ", ".join(
                f"{k} = {v}" for k, v in sp.point(_canonical(s, sp, [])).items()) + ")"  # the least sizes: same note
            return {}, f"{dec.where} depends on a problem size and goes another way at some sizes{at}"
    summarised: dict[int, int] = {}
    for _lp, head in sh.loop_proofs.values():
        summarised[head] = summarised.get(head, 0) + 1
    for head, exits in sh.trips.items():
        if summarised.get(head, 0) < max(1, exits):
            return {}, (f"the loop at {prog.code[head].span} runs a number of iterations that depends on the sizes "
                        "and was not summarised (loops.py) in the representatives' run")
    trips: dict[int, _Trips] = {}
    checks = []
    for ident, (lp, head) in sh.loop_proofs.items():
        backs, others = [], []
        for d in lp.decisions:
            ins = prog.code[d.pc]
            if ins.opcode not in CONTROL:
                continue  # a memory access's guard: part of its access class, exact at every t and size
            back = sh._head_of(d.pc) == head  # a back edge of this loop (grid_shadow `_latch`)
            if not back and not _has_leaf(d.expr, ("s", "g")):
                continue  # decides as at the checked sizes: the loop's concrete periods say when it changes
            # a back edge as "goes on" (a latch that falls through into the head goes on when not taken)
            x, v = (sh._goes(d.pc, d.expr), sh._goes(d.pc, d.value[d.lanes])) if back else (d.expr, d.value[d.lanes])
            if _has_leaf(d.expr, ("p", "q", "c")) or (v.any() and not v.all()):
                return {}, f"{ins.name} at {ins.span} in the loop at {prog.code[head].span} decides per thread"
            (backs if back else others).append((x, bool(v.all()), f"{ins.name} at {ins.span}"))
        if head in sh.trips:
            if not all(v for _, v, _ in backs):
                return {}, f"the loop at {prog.code[head].span} leaves within its first period"
            trips[ident] = _Trips(ident, [(x, v) for x, v, _ in backs], f"{prog.code[head].span}")
            why = trips[ident].bound(launch, sizes)
            if why:
                return {ident: trips[ident]}, why  # the loop not proved to end (_widest reads it)
        checks += [(ident, x, v, w) for x, v, w in others]
    for ident, x, v, where in checks:
        sp = _Space(launch, sizes, "lc", trips)
        _, grid = sp.cta("lc")
        t = z3.BitVec(f"lc_t{ident}", 64)
        env = {**sp.leaves, ("t", ident): t}
        runs = trips[ident].runs(t, sp.leaves) if ident in trips else z3.ULT(t, sh.loop_ranges[ident])
        s = _solver()
        s.add(grid + [runs, _z3(x, env) != z3.BoolVal(v)])
        if _check(s) != z3.unsat:
            return {}, f"{where} depends on a problem size and may decide otherwise in a later iteration"
    return trips, ""


def _same_path(sh: Shadow, launch: Launch, sizes: SizeDomain | None, stats: dict) -> str:
    """Every CTA decides each %ctaid-dependent branch, exit and barrier guard the way the executed
    CTAs did, per thread (and per iteration t in [0, n) of a summarised loop): Z3 searches a CTA, a
    thread's row and an iteration where the guard has the other value. "" when none exists."""
    for u in sh.uniform:
        if u.rows.shape[0] > MAX_ROWS:
            return f"the guard of {u.where} depends on %ctaid through {u.rows.shape[0]} distinct lane values"
        sp = _Space(launch, sizes, "u")
        c, grid = sp.cta("u")
        env = {("c", i): c[i] for i in range(3)}
        env.update(sp.leaves)
        qs = _n_q(u.expr)
        for i, w in qs.items():
            env[("q", i)] = z3.BitVec(f"u_q{i}", w)
        extra = []
        if u.loop is not None and sizes is not None:  # the loop's periods at other sizes are not these
            return f"the guard of {u.where} in a summarised loop depends on %ctaid"
        if u.loop is not None:
            env[("t", u.loop)] = z3.BitVec("u_t", 64)
            extra.append(z3.ULT(env[("t", u.loop)], sh.loop_ranges[u.loop]))
        taken = z3.BitVec("u_v", 64)
        cols = [env[("q", i)] for i in range(len(qs))] + [taken]
        vals = np.delete(u.rows, u.rows.shape[1] - 2, axis=1)  # the thread index is not a leaf
        member = rows_formula(cols, np.unique(vals, axis=0))
        s = _solver()
        s.add(grid + extra + [member, _z3(u.expr, env) != (taken == 1)])
        stats["z3_queries"] += 1
        res = _check(s)
        if res != z3.unsat:
            return (f"the guard of {u.where} depends on %ctaid" + (" or a problem size" if sizes else "")
                    + (": some CTA decides it otherwise than the executed ones" if res == z3.sat else
                       ": Z3 could not show every CTA decides it as the executed ones"))
    stats["uniform_guards"] = len(sh.uniform)
    return ""


def _pairs(classes: dict, allocs):
    """(buffer base, W, A): W writes or is atomic, A any access of the same buffer; not both atomic."""
    by_buf: dict = {}
    for cl in classes.values():
        by_buf.setdefault(cl.a.buffer, []).append(cl)
    for bi, cls in by_buf.items():
        for i, w in enumerate(cls):
            for j, a in enumerate(cls):
                if w.a.kind == READ or (a.a.kind != READ and j < i) or (w.a.kind == ATOMIC and a.a.kind == ATOMIC):
                    continue
                yield allocs[bi].base, w, a


def _threads_apart(rows: np.ndarray, widths: dict[int, int], tags: tuple[str, str], lanes: tuple) -> list:
    """For an access class paired with itself in one CTA (`rows`: its table of lane rows, columns q0 ..,
    thread, o; `widths`: the q constants its address reads; tags: its two sides' names in `_Class.side`):
    when no two rows of different threads agree on every constant the address reads and on the byte
    offset o, two different threads' rows differ in one of them. Implied by the table that each side's
    membership already asserts (no model of the bit-vector query is lost); the integer form (bv2int.py)
    leaves that table out and needs this fact to keep `N * r1 + c1` apart from `N * r2 + c2` (a tile
    store: rows apart by N once the row constants differ, a vector apart once the columns do).
    [] when some key is shared by two threads, or the address reads no constant."""
    rows = rows.astype(np.uint64, copy=False)
    ncol = rows.shape[1] - 2
    key = sorted(i for i in widths if i < ncol) + [ncol + 1]
    masks = [np.uint64((1 << widths[i]) - 1) for i in key[:-1]]  # the table's constants modulo 2^width, as z3 reads them
    keys = np.stack([rows[:, i] & m for i, m in zip(key, masks)] + [rows[:, ncol + 1], rows[:, ncol]], axis=1)
    owners = np.unique(keys, axis=0)  # (key, thread), each once
    if len(key) == 1 or np.unique(owners[:, :-1], axis=0).shape[0] != owners.shape[0]:
        return []
    sides = [[z3.BitVec(f"{t}_q{i}", widths[i]) for i in key[:-1]] + [z3.BitVec(f"{t}_o", 64)] for t in tags]
    return [z3.Implies(lanes[0] != lanes[1], z3.Or([x != y for x, y in zip(*sides)]))]


def _intra_cta(prog: Program, launch: Launch, pairs: list, reps: list, stats: dict, sizes: SizeDomain | None = None,
               trips: dict | None = None):
    """Two different threads of one CTA c (any c) touching overlapping global bytes, W a write.

    UNSAT for every pair: no intra-CTA race on global memory in any CTA (accesses of one thread are
    ordered by program order). SAT: CTA c is run concretely (a race there is reported); conflicts
    that synchronisation orders, or equal-value stores, leave the property checked on the executed
    CTAs only. Returns (None or why not proven, witness report or None)."""
    budget = MAX_VALIDATIONS
    not_proven = None
    moves = _Moves(launch, stats)
    for base, w, a in pairs:
        if sizes is None and _apart_in_every_cta(w, a, launch, stats, moves):
            continue
        if max(w.all_rows().shape[0], a.all_rows().shape[0]) > MAX_ROWS:
            not_proven = not_proven or f"{prog.code[w.a.pc].name} at {prog.code[w.a.pc].span}: too many lane offsets"
            continue
        sp = _Space(launch, sizes, "i", trips)
        c, g = sp.cta("i")
        m1, o1, gd1, _, l1 = w.side("w", c, base, leaves=sp.leaves)
        m2, o2, gd2, _, l2 = a.side("a", c, base, leaves=sp.leaves)
        s = _solver()
        s.add(g + [m1, m2, gd1, gd2, l1 != l2, z3.ULT(o1, o2 + a.a.size), z3.ULT(o2, o1 + w.a.size)]
              + (_threads_apart(w.all_rows(), _n_q(w.a.addr), ("w", "a"), (l1, l2)) if w is a else []))
        at_checked = [e.t == sizes.concrete[k] for k, e in sp.env.items()] if sizes is not None else []
        if not (w.loops or a.loops):  # a summarised loop's accesses were not all run, even in these
            for r in reps:  # executed already (at the checked launch's sizes)
                s.add(z3.Not(z3.And([c[k] == r[k] for k in range(3)] + at_checked)))
        while True:
            stats["z3_queries"] += 1
            res = _check(s)
            if res == z3.unsat:
                break
            if res != z3.sat or budget == 0:
                not_proven = not_proven or (f"{prog.code[w.a.pc].name} at {prog.code[w.a.pc].span} and "
                                            f"{prog.code[a.a.pc].name} at {prog.code[a.a.pc].span} may touch the "
                                            "same bytes from two threads")
                break
            mdl = _canonical(s, sp, [c])
            x = _model_cta(mdl, c)
            point = sp.point(mdl)
            budget -= 1
            found = _witness(prog, sp, mdl, [c], "Z3 intra-CTA overlap validated concretely", stats)
            if found is not None:
                return None, found
            at = [e.t == point[k] for k, e in sp.env.items()] if point is not None else []
            s.add(z3.Not(z3.And([c[k] == x[k] for k in range(3)] + at)))
    return not_proven, None


def _bytes_at_cta0(cl: _Class) -> tuple[np.ndarray, np.ndarray] | None:
    """First byte and thread of each recorded row of `cl` in CTA (0, 0, 0), at every iteration of
    its summarised loops (t in [0, n), loops.py), rows whose guard is false left out when the guard
    holds no %ctaid (else every row: a superset of any CTA's); exact, every leaf has its value
    (Python ints, modulo 2^64). ValueError when rows times iterations exceed MAX_CTA0_BYTES."""
    rows = cl.all_rows()
    its = _iterations(cl)
    shape = (rows.shape[0], len(next(iter(its.values()))) if its else 1)
    if shape[0] * shape[1] > MAX_CTA0_BYTES:
        raise ValueError("too many rows and iterations to list")
    env = {("c", i): 0 for i in range(3)}
    env.update({("q", i): rows[:, i][:, None] for i in range(rows.shape[1] - 2)})
    env.update({k: v[None, :] for k, v in its.items()})
    addr = np.broadcast_to(evaluate(cl.a.addr, env), shape)
    first = ((addr.astype(object) + rows[:, -1].astype(object)[:, None]) % (1 << 64)).ravel()
    thread = np.broadcast_to(rows[:, -2][:, None], shape).ravel()
    if cl.a.guard is not None and not _has_leaf(cl.a.guard, ("c",)):
        keep = np.broadcast_to(evaluate(cl.a.guard, env), shape).astype(bool).ravel()
        return first[keep], thread[keep]
    return first, thread


#: Most (row, loop iteration) byte ranges of one class listed in CTA 0 by `_bytes_at_cta0`.
MAX_CTA0_BYTES = 1 << 18


def _iterations(cl: _Class) -> dict:
    """("t", loop) -> that loop's iteration in each combination of `cl`'s summarised loops' iterations."""
    if not cl.loops:
        return {}
    grid = np.indices(list(cl.loops.values())).reshape(len(cl.loops), -1)
    return {("t", i): grid[k] for k, i in enumerate(cl.loops)}


def _lane_vars(cl: _Class, tag: str) -> tuple[dict, list]:
    """Z3 variables for `cl`'s lane columns and loop iterations, each in its range (a superset of the
    rows; every iteration t < n of a summarised loop)."""
    rows = cl.all_rows()
    qs = {("q", i): z3.BitVec(f"{tag}_q{i}", wd) for i, wd in _n_q(cl.a.addr).items()}
    ranges = [z3.And(z3.UGE(v, int(rows[:, i].min())), z3.ULE(v, int(rows[:, i].max()))) for (_, i), v in qs.items()]
    for i, n in cl.loops.items():
        qs[("t", i)] = z3.BitVec(f"{tag}_t{i}", 64)
        ranges.append(z3.ULT(qs[("t", i)], n))
    return qs, ranges


def _apart_in_every_cta(w: _Class, a: _Class, launch: Launch, stats: dict, moves: "_Moves | None" = None) -> bool:
    """No two different threads of any CTA touch overlapping bytes with accesses of W and A, shown
    without a search over rows: (1) in CTA 0 (numpy, every recorded row whose guard holds there),
    no byte of a W row meets a byte of an A row of another thread; (2) Z3: both classes' addresses move
    by one amount from CTA 0 to any CTA c, whatever the lanes' values in their columns' ranges
    (addr(c, q) - addr(0, q) is the same function of c for both), so every CTA's pairs of threads are
    CTA 0's, shifted. A summarised loop's accesses count at every iteration t < n in both steps.
    False when it does not apply (sizes, a loop bounded by them) or either step fails: the row
    search decides then. A guard that depends on %ctaid is dropped (every recorded row counts), a
    superset of any CTA's."""
    for cl in (w, a):
        if cl.bounds or _has_leaf(cl.a.addr, ("s", "g")) or (
                cl.a.guard is not None and _has_leaf(cl.a.guard, ("s", "g"))):
            return False
    try:
        (fw, tw), (fa, ta) = (moves.cta0(w), moves.cta0(a)) if moves is not None else (_bytes_at_cta0(w),
                                                                                       _bytes_at_cta0(a))
    except (KeyError, TypeError, ValueError):
        return False
    if fw.size and fa.size:
        order = np.argsort(fa)
        fa, ta = fa[order], ta[order]
        lo = np.searchsorted(fa, fw - (a.a.size - 1), side="left")  # A rows starting within W's bytes' reach
        hi = np.searchsorted(fa, fw + w.a.size, side="left")
        for i in np.nonzero(hi > lo)[0].tolist():
            if (ta[lo[i]:hi[i]] != tw[i]).any():
                return False
    if moves is not None and moves.common(w) and moves.common(a):
        stats["intra_cta_by_translation"] = stats.get("intra_cta_by_translation", 0) + 1
        return True
    c = [z3.BitVec(f"s_c{i}", 32) for i in range(3)]
    moved, ranges = [], []
    for tag, cl in (("w", w), ("a", a)):
        qs, within = _lane_vars(cl, tag)
        ranges += within
        at_c = _z3(cl.a.addr, {**qs, **{("c", i): c[i] for i in range(3)}})
        at_0 = _z3(cl.a.addr, {**qs, **{("c", i): z3.BitVecVal(0, 32) for i in range(3)}})
        moved.append(at_c - at_0)
    s = _solver()
    s.add([z3.ULT(c[i], launch.grid[i]) for i in range(3)] + ranges + [moved[0] != moved[1]])
    stats["z3_queries"] += 1
    if s.check() != z3.unsat:
        return False
    stats["intra_cta_by_translation"] = stats.get("intra_cta_by_translation", 0) + 1
    return True


class _Moves:
    """Step (2) of `_apart_in_every_cta` once per class instead of once per pair: a class "moves
    commonly" when, for every CTA c and every lane's values in their columns' ranges, its address
    moves from CTA 0 to c by M(c), one function for all classes (the first class asked, at the lane
    values of its first row). Two classes that both move commonly move by one amount, which is what
    the pair's query asks; a class that does not leaves its pairs to that query. With n classes this
    is n queries, not n^2 (gemm_accumulate at the bench instance: 64 loads and 64 stores of C, over
    8000 pairs)."""

    def __init__(self, launch: Launch, stats: dict) -> None:
        self.launch, self.stats = launch, stats
        self.c = [z3.BitVec(f"m_c{i}", 32) for i in range(3)]
        self.ref = None
        self.known: dict[int, tuple[_Class, bool]] = {}  # by id, the class kept so that its id is not reused
        self.listed: dict[int, tuple[_Class, object]] = {}  # `cta0`'s answers (or errors), by id as above
        self.asked: dict[tuple, bool] = {}  # `common`'s answers by what its query is a function of

    def cta0(self, cl: _Class) -> tuple[np.ndarray, np.ndarray]:
        """`_bytes_at_cta0(cl)`, listed once per class (a class is in many pairs: gemm_accumulate's 128 classes of C
        in 1552), its error raised again on each call."""
        got = self.listed.get(id(cl))
        if got is None:
            try:
                got = self.listed[id(cl)] = (cl, _bytes_at_cta0(cl))
            except (KeyError, TypeError, ValueError) as e:
                got = self.listed[id(cl)] = (cl, e)
        if isinstance(got[1], Exception):
            raise got[1]
        return got[1]

    def _moved(self, cl: _Class, qs: dict):
        at_c = _z3(cl.a.addr, {**qs, **{("c", i): self.c[i] for i in range(3)}})
        at_0 = _z3(cl.a.addr, {**qs, **{("c", i): z3.BitVecVal(0, 32) for i in range(3)}})
        return at_c - at_0

    def common(self, cl: _Class) -> bool:
        got = self.known.get(id(cl))
        if got is not None:
            return got[1]
        widths = _n_q(cl.a.addr)
        rows = cl.all_rows()
        if self.ref is None:
            first = {("q", i): z3.BitVecVal(int(rows[0, i]) % (1 << wd), wd) for i, wd in widths.items()}
            first.update({("t", i): z3.BitVecVal(0, 64) for i in cl.loops})
            self.ref = self._moved(cl, first)
        # the query below is a function of the address expression, the range of each lane column and the loops'
        # trip counts (`_lane_vars`) once the reference is set: a class with the same asks the same question (a
        # load and a store of one element: gemm_accumulate's C, 64 classes and 32 queries)
        key = (cl.a.addr, tuple((i, int(rows[:, i].min()), int(rows[:, i].max())) for i in widths),
               tuple(cl.loops.items()))
        got = self.asked.get(key)
        if got is None:
            qs, ranges = _lane_vars(cl, "m")
            s = _solver()
            s.add([z3.ULT(self.c[i], self.launch.grid[i]) for i in range(3)] + ranges
                  + [self._moved(cl, qs) != self.ref])
            self.stats["z3_queries"] += 1
            got = self.asked[key] = s.check() == z3.unsat
        self.known[id(cl)] = (cl, got)
        return got


def _model_cta(mdl: z3.ModelRef, c) -> tuple[int, int, int]:
    return tuple(mdl.eval(c[k], model_completion=True).as_long() for k in range(3))  # type: ignore[return-value]
