"""Races between CTAs on global memory without enumerating the grid (Z3, symbolic pair of CTAs).

Method (sound; anything outside it falls back to enumeration, with the reason in
`report.stats["grid_method"]`):
1. Run the first and last CTA as one batch in check mode with the %ctaid shadow (grid_shadow.py):
   every register is independent of the CTA, unknown (TOP), or an exact bit-vector expression of
   %ctaid and per-lane constants. If a branch/exit/barrier guard depends on %ctaid, or a global
   address is TOP, CTAs may behave differently: fall back. Otherwise every CTA executes the same
   instruction sequence under the same schedule as this one, and each global access of CTA c is
   given by the recorded expression instantiated at c (rows = the lanes' constants; guards that
   depend on %ctaid are kept as expressions, TOP guards as "may execute").
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
"""

from __future__ import annotations

import time

import numpy as np
import z3

from ptx_parser import ast as A

from ..launch import DIM_LIMITS, Launch, param_layout
from ..program import Program
from .findings import GridMethod, Report, Verdict
from .grid_shadow import Access, Shadow
from .run import loop_summaries, new_run, run_checked
from .sizes import SizeDomain, term
from .state import ATOMIC, READ


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
            iters.append(z3.ULT(env[("t", i)], n))
        o = z3.BitVec(f"{tag}_o", 64)
        rows = self.all_rows()
        ncol = rows.shape[1] - 2
        lane = z3.BitVec(f"{tag}_t", 32)
        cols = [env[("q", i)] for i in range(ncol)] + [lane, o]
        if relaxed:
            member = z3.And([z3.And(z3.UGE(v, int(rows[:, k].min())), z3.ULE(v, int(rows[:, k].max())))
                             for k, v in enumerate(cols)] + iters)
            guard = z3.BoolVal(True)
        else:
            member = z3.And(z3.Or([z3.And([v == int(r[k]) for k, v in enumerate(cols)]) for r in rows]), *iters)
            guard = _z3(a.guard, env) if a.guard is not None else z3.BoolVal(True)
        addr = _z3(a.addr, env) + o
        out = (member, addr - z3.BitVecVal(base, 64), guard, rows.shape[0], lane)
        self.cache[key] = out
        return out

    def all_rows(self) -> np.ndarray:
        if len(self.rows) > 1:
            self.rows = [np.unique(np.concatenate(self.rows), axis=0)]
        return self.rows[0]


class _Space:
    """The launches a proof covers: the given one, or (sizes) every launch of a SizeDomain. One per
    query: the sizes are shared by the CTAs of a query (one launch), fresh between queries."""

    def __init__(self, launch: Launch, sizes: SizeDomain | None, tag: str) -> None:
        self.launch, self.sizes = launch, sizes
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


def _solver() -> z3.Solver:
    s = z3.Solver()
    s.set("timeout", Z3_QUERY_MS)
    return s


def check_symbolic(prog: Program, launch: Launch, sizes: SizeDomain | None = None,
                   require_summary: bool = False) -> tuple[Report | None, str]:
    """(report, "") when the symbolic grid check applies, else (None, why not). sizes: prove for
    every launch of the domain (symbolic sizes), not only `launch` (one of its points).
    require_summary: only if the representatives' run summarised a loop (else not worth it)."""
    t0 = time.perf_counter()
    gx, gy, gz = launch.grid
    if launch.num_ctas == 1 and sizes is None:
        return None, "one CTA"
    whole = needs_whole_grid(prog)
    if whole:
        return None, f"symbolic not applicable: {whole}"
    last = (gx - 1, gy - 1, gz - 1)
    reps = [(0, 0, 0), last] if last != (0, 0, 0) else [(0, 0, 0)]
    sh = Shadow(prog, _size_params(prog, sizes))
    run = new_run(prog, launch, reps, shadow=sh)
    rep = run_checked(run, prog, launch)
    sh.finish()
    if run.state.footprint_hit is not None:  # a summary's skipped writes were read: every iteration, then
        why = run.state.footprint_hit
        with loop_summaries(False):
            sh = Shadow(prog, _size_params(prog, sizes))
            run = new_run(prog, launch, reps, shadow=sh)
            rep = run_checked(run, prog, launch)
            sh.finish()
        rep.notes.insert(0, f"loops run iteration by iteration: {why}")
        if require_summary:
            return None, f"symbolic not applicable: {why}"
    m = run.machine
    if rep.findings:  # real: these CTAs were executed concretely
        rep.stats["grid_method"] = GridMethod.SYMBOLIC.describe("finding in a representative CTA")
        return rep, ""
    if rep.outcome is not Verdict.RACE_FREE or sh.failed or rep.reason:
        return None, f"symbolic not applicable: {sh.failed or rep.verdict}"
    if require_summary and not (run.loops and run.loops.summaries):
        return None, "symbolic not applicable: no loop long enough to summarise"
    try:
        return _prove(prog, launch, m, sh, rep, reps, t0, sizes)
    except (z3.Z3Exception, KeyError, ValueError, IndexError, TypeError, AttributeError) as e:
        return None, f"symbolic not applicable: internal: {type(e).__name__}: {e}"


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


def _witness(prog: Program, sp: _Space, s: z3.Solver, cvars: list, what: str, stats: dict) -> Report | None:
    """Run the CTAs of a model concretely (at the model's sizes); the report if it finds something."""
    point = sp.point(s.model())
    ctas = sorted({_model_cta(s, c) for c in cvars})
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


def _first_failing(sp: _Space, s: z3.Solver) -> dict[str, int] | None:
    """With one size variable, the smallest size at which the query's constraints hold (below it
    they never do), for the verdict's 'holds for ...'."""
    if sp.sizes is None or len(sp.sizes.vars) != 1:
        return None
    o = z3.Optimize()
    o.set("timeout", Z3_QUERY_MS)
    o.add(s.assertions())
    o.minimize(next(iter(sp.env.values())).t)
    if o.check() != z3.sat:
        return None
    return sp.point(o.model())


def _prove(prog: Program, launch: Launch, m, sh: Shadow, rep: Report, reps: list, t0: float,
           sizes: SizeDomain | None = None):
    classes: dict = {}
    for a in sh.accesses:
        key = (a.buffer, a.kind, a.strong, a.size, a.addr, a.guard, a.rows.shape[1])
        if key in classes:
            classes[key].rows.append(a.rows)
        else:
            classes[key] = _Class(a, sh.loop_ranges)
    allocs = m.glob.allocations
    for d, where in sh.nonzero:  # divisors depending on %ctaid (lane placeholders: every lane's value)
        canon = d
        if _has_leaf(d, ("p", "q")):
            return None, f"symbolic not applicable: lane-varying %ctaid-dependent divisor at {where}"
        sp = _Space(launch, sizes, "d")
        c, grid = sp.cta("d")
        s = _solver()
        s.add(grid + [_z3(canon, {**{("c", i): c[i] for i in range(3)}, **sp.leaves}) == 0])
        if s.check() != z3.unsat:
            return None, f"symbolic not applicable: divisor at {where} may be 0 in some CTA"
    stats = {"grid_method": GridMethod.SYMBOLIC.describe(), "access_classes": len(classes), "z3_queries": 0,
             "validation_runs": 0}
    # ---- bounds: every CTA (of every launch of the domain), every class
    for cl in classes.values():
        buf = allocs[cl.a.buffer]
        sp = _Space(launch, sizes, "b")
        c, grid = sp.cta("b")
        # too many rows to list: each column in its range (a superset) must stay in bounds
        relaxed = cl.all_rows().shape[0] > MAX_ROWS
        mem, off, guard, nrows, _ = cl.side("b", c, buf.base, relaxed=relaxed, leaves=sp.leaves)
        s = _solver()
        s.add(grid + [mem, guard, z3.UGT(z3.ZeroExt(1, off) + cl.a.size, sp.buffer_bytes(buf))])
        stats["z3_queries"] += 1
        res = s.check()
        if res != z3.unsat and relaxed:
            return None, f"symbolic not applicable: {nrows} distinct lane offsets in one access class"
        if res != z3.unsat:
            if res == z3.sat:
                first = _first_failing(sp, s)
                if first is not None:  # witness at the smallest failing size
                    s.push()
                    s.add([e.t == first[k] for k, e in sp.env.items()])
                    if s.check() != z3.sat:
                        s.pop()
                        first = None
                        s.check()
                w = _witness(prog, sp, s, [c], "bounds witness validated concretely", stats)
                if w is not None:
                    if first is not None:
                        var = sizes.vars[0]
                        w.notes.insert(0, f"symbolic sizes: {prog.code[cl.a.pc].name} at {prog.code[cl.a.pc].span} "
                                          f"stays in bounds for every {var.name} in [{var.lo}, "
                                          f"{first[var.name] - 1}] of the domain and leaves {buf.name} from "
                                          f"{var.name} = {first[var.name]}")
                    return w, ""
            return None, f"symbolic not applicable: bounds of {prog.code[cl.a.pc].name} not proven for every CTA"
    # ---- cross-CTA races
    pairs = list(_pairs(classes, allocs))
    validations = 0
    for base, w, a in pairs:
        sp = _Space(launch, sizes, "z")
        c1, g1 = sp.cta("w")
        c2, g2 = sp.cta("a")
        distinct = z3.Or([c1[k] != c2[k] for k in range(3)])
        m1, o1, gd1, _, _ = w.side("w", c1, base, relaxed=True, leaves=sp.leaves)
        m2, o2, gd2, _, _ = a.side("a", c2, base, relaxed=True, leaves=sp.leaves)
        s = _solver()
        s.add(g1 + g2 + [distinct, m1, m2, z3.ULT(o1, o2 + a.a.size), z3.ULT(o2, o1 + w.a.size)])
        stats["z3_queries"] += 1
        if s.check() == z3.unsat:
            continue  # refuted on the relaxation (a superset of the lanes' accesses)
        if max(w.all_rows().shape[0], a.all_rows().shape[0]) > MAX_ROWS:
            return None, "symbolic not applicable: too many distinct lane offsets to refute a cross-CTA overlap"
        m1, o1, gd1, _, _ = w.side("w", c1, base, leaves=sp.leaves)
        m2, o2, gd2, _, _ = a.side("a", c2, base, leaves=sp.leaves)
        s = _solver()
        s.add(g1 + g2 + [distinct, m1, m2, gd1, gd2,
                         z3.ULT(o1, o2 + a.a.size), z3.ULT(o2, o1 + w.a.size)])
        while True:
            stats["z3_queries"] += 1
            res = s.check()
            if res == z3.unsat:
                break
            if res != z3.sat or validations >= MAX_VALIDATIONS:
                return None, "symbolic not applicable: possible cross-CTA overlap not refuted"
            x, y = _model_cta(s, c1), _model_cta(s, c2)
            point = sp.point(s.model())
            validations += 1
            found = _witness(prog, sp, s, [c1, c2], "Z3 overlap validated on two concrete CTAs", stats)
            if found is not None:
                return found, ""
            block = [c1[k] == x[k] for k in range(3)] + [c2[k] == y[k] for k in range(3)]
            swap = [c1[k] == y[k] for k in range(3)] + [c2[k] == x[k] for k in range(3)]
            at = [e.t == point[k] for k, e in sp.env.items()] if point is not None else []
            s.add(z3.Not(z3.And(block + at)))
            s.add(z3.Not(z3.And(swap + at)))
    intra, witness = _intra_cta(prog, launch, pairs, reps, stats, sizes)
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
        rep.stats["sizes"] = {"domain": sizes.describe(), "checked_at": dict(sizes.concrete)}
        scope = f"ALL sizes ({sizes.describe()}) and ALL CTAs of each"
    guarded = (f" (except {', '.join(sh.guard_branches)}: a forward branch over code without synchronisation "
               "or other branches, whose accesses are proved as a guard of it, every thread that reaches it having "
               "run that code in an executed CTA)") if sh.guard_branches else ""
    rep.assumptions.append(
        (f"symbolic sizes and grid (Z3): every branch, exit and barrier is independent of %ctaid and of the "
         f"sizes{guarded}, " if sizes else
         f"symbolic grid (Z3): every branch, exit and barrier is independent of %ctaid{guarded}, ")
        + f"so all CTAs run the same instruction sequence; proven for {scope}: global accesses in bounds, no race "
        "between two different CTAs on global memory" + shared_all
        + ("; no two threads of one CTA touch overlapping global bytes in any CTA (Z3), so there is no "
           "intra-CTA race on global memory" if intra is None else
           f"; checked on the executed CTAs only: intra-CTA races on global memory ({intra})")
        + (f"; checked on the executed CTAs only: shared memory ({sh.shared_varies} depends on %ctaid"
           + (" or the sizes" if sizes else "") + ")" if sh.shared_varies else ""))
    return rep, ""


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


def _intra_cta(prog: Program, launch: Launch, pairs: list, reps: list, stats: dict, sizes: SizeDomain | None = None):
    """Two different threads of one CTA c (any c) touching overlapping global bytes, W a write.

    UNSAT for every pair: no intra-CTA race on global memory in any CTA (accesses of one thread are
    ordered by program order). SAT: CTA c is run concretely (a race there is reported); conflicts
    that synchronisation orders, or equal-value stores, leave the property checked on the executed
    CTAs only. Returns (None or why not proven, witness report or None)."""
    budget = MAX_VALIDATIONS
    not_proven = None
    for base, w, a in pairs:
        if max(w.all_rows().shape[0], a.all_rows().shape[0]) > MAX_ROWS:
            not_proven = not_proven or f"{prog.code[w.a.pc].name} at {prog.code[w.a.pc].span}: too many lane offsets"
            continue
        sp = _Space(launch, sizes, "i")
        c, g = sp.cta("i")
        m1, o1, gd1, _, l1 = w.side("w", c, base, leaves=sp.leaves)
        m2, o2, gd2, _, l2 = a.side("a", c, base, leaves=sp.leaves)
        s = _solver()
        s.add(g + [m1, m2, gd1, gd2, l1 != l2, z3.ULT(o1, o2 + a.a.size), z3.ULT(o2, o1 + w.a.size)])
        at_checked = [e.t == sizes.concrete[k] for k, e in sp.env.items()] if sizes is not None else []
        if not (w.loops or a.loops):  # a summarised loop's accesses were not all run, even in these
            for r in reps:  # executed already (at the checked launch's sizes)
                s.add(z3.Not(z3.And([c[k] == r[k] for k in range(3)] + at_checked)))
        while True:
            stats["z3_queries"] += 1
            res = s.check()
            if res == z3.unsat:
                break
            if res != z3.sat or budget == 0:
                not_proven = not_proven or (f"{prog.code[w.a.pc].name} at {prog.code[w.a.pc].span} and "
                                            f"{prog.code[a.a.pc].name} at {prog.code[a.a.pc].span} may touch the "
                                            "same bytes from two threads")
                break
            x = _model_cta(s, c)
            point = sp.point(s.model())
            budget -= 1
            found = _witness(prog, sp, s, [c], "Z3 intra-CTA overlap validated concretely", stats)
            if found is not None:
                return None, found
            at = [e.t == point[k] for k, e in sp.env.items()] if point is not None else []
            s.add(z3.Not(z3.And([c[k] == x[k] for k in range(3)] + at)))
    return not_proven, None


def _model_cta(s: z3.Solver, c) -> tuple[int, int, int]:
    mdl = s.model()
    return tuple(mdl.eval(c[k], model_completion=True).as_long() for k in range(3))  # type: ignore[return-value]
