import sys, time, cProfile, pstats, collections
import ptx_parser
from harness.compile import compile_contract
from harness.emulate import launch_for
from harness.suite import get
from symexec import load_program, time_limit
from symexec.check import check_kernel
from symexec.check import loops as L
arch = sys.argv[1]; inst = sys.argv[2]; lim = float(sys.argv[3]); prof = len(sys.argv) > 4
c = get("gemm_tma_persistent")
import os
if os.environ.get("NOSUM"):  # race47d control: no loop summary is attempted (every iteration runs)
    L.MAX_ATTEMPTS = 0
if inst == "probe": c.instances["probe"] = {"M": int(os.environ.get("PM", 2048)), "N": int(os.environ.get("PN", 2048)), "K": int(os.environ.get("PK", 128)), "SMS": int(os.environ.get("PS", 66))}
if os.environ.get("HACK_BULK"):
    def _ac(self, u):
        recs = []
        for r in u.records:
            rel_group = r.group - u.committed[r.lanes]
            recs.append((id(r.ins), r.lanes.tobytes(), rel_group.tobytes(), r.dst.tobytes(), r.done.tobytes(), r.pc, self.op_label(r.op)))
        self._add("cp.async", (tuple(recs), len([o for o in u.bulk_ops if not o.performed]), len(u.exited_pending), len(u.unwaited_bulk)))
    L.Canon._async_copy = _ac
comp = compile_contract(c, arch, instance=inst)
arrays = c.make_inputs(inst, "normal", 0, lazy=True)
launch = launch_for(c, comp, arrays, inst)
module = ptx_parser.parse(comp.ptx, "k.ptx")
prog = load_program(module, comp.entry)
T0 = time.process_time()
OUTER = {h for h in prog.loop_headers if str(prog.code[h].span).split(":")[1] in ("138","197")}; print("OUTER", OUTER, [str(prog.code[h].span) for h in prog.loop_headers])
import os

cnt = collections.Counter()
orig = L.LoopSummariser.on_back_edge
def hook(self, b, g, ins, pc):
    cnt[g.pc] += 1
    if os.environ.get("TIMES") and len(b.ctas) == 1 and 2300 <= self.state.time <= 3200:  # race47d: event times
        print(f"TIME back edge to {prog.code[g.pc].span} n={cnt[g.pc]} state.time={self.state.time}", flush=True)
    if g.pc in OUTER and os.environ.get("EDGES"):
        print(f"{time.process_time()-T0:7.2f}s back edge head={prog.code[g.pc].span} n={cnt[g.pc]} ctas={[tuple(x) for x in b.ctas][:3]} proof={self._proof.head if self._proof else None}", flush=True)
    if False:
        why = self._ineligible(b, g)
        h = self._history.get(g.pc, [])
        print("  OUTER", prog.code[g.pc].span, "inel=", why, "hist=", len(h), "attempts=", self._attempts.get(g.pc), "watch=", set(b.reg_watch) - L._canonical_watches(b), flush=True)
    if os.environ.get("RACES") and prog.code[g.pc].span is not None and str(prog.code[g.pc].span).split(":")[1] in ("137", "138") and self.state.detector.races():
        print(f"{time.process_time()-T0:7.2f}s RACE at tile-loop back edge n={cnt[g.pc]} ctas={[tuple(x) for x in b.ctas][:2]}:", "\n".join(str(x)[:3000] for x in self.state.detector.races()[:3]), flush=True)
        if os.environ.get("RACES") == "stop": raise SystemExit(0)
    r = orig(self, b, g, ins, pc)
    if g.pc in OUTER:
        h = self._history.get(g.pc, [])
        if len(h) >= 2:
            pass #print("  early equal prev:", [x.early == h[-1].early for x in h[:-1]], "canon:", [x.canon is not None for x in h], "proof", self._proof, flush=True)
            cs = [x for x in h if x.canon is not None]
            if len(cs) >= 2:
                a, bb = cs[-1].canon, cs[-2].canon
                if a == bb: print("   CANON EQUAL")
                else:
                    for i,(x,y) in enumerate(zip(a,bb)):
                        if x != y: print("   canon diff part", i, x[0], str(x[1])[:200], "|", str(y[1])[:200])
                    if len(a)!=len(bb): print("   canon len", len(a), len(bb))
            if h[-1].early != h[-2].early:
                a, bb = h[-1].early, h[-2].early
                try:
                    for i,(x,y) in enumerate(zip(a,bb)):
                        if x != y: print("   early diff part", i, str(x)[:300], "|", str(y)[:300])
                except Exception as e: print("cmp", e)
    return r
L.LoopSummariser.on_back_edge = hook
_ab = L.LoopSummariser._abandon
def ab(self, why, final=False):
    if self._proof is not None: print(f"{time.process_time()-T0:7.2f}s ABANDON head={prog.code[self._proof.head].span} period={self._proof.period} final={final}: {why}", flush=True)
    return _ab(self, why, final)
L.LoopSummariser._abandon = ab
_st = L.LoopSummariser._start
def st(self, b, head, k, p, *a, **kw):
    if os.environ.get("SUMMAX") and len(b.ctas) == 1 and k >= int(os.environ["SUMMAX"]):  # race47d bisect:
        print(f"{time.process_time()-T0:7.2f}s SKIPPED START head={prog.code[head].span} k={k} p={p}", flush=True)
        return None  # no proof at or after back edge SUMMAX of a loop in the lone run
    print(f"{time.process_time()-T0:7.2f}s START head={prog.code[head].span} k={k} p={p} ctas={[tuple(x) for x in b.ctas][:2]}", flush=True)
    return _st(self, b, head, k, p, *a, **kw)
L.LoopSummariser._start = st
_fin = L.LoopSummariser.finish
import symexec.check.grid as G
_rep = G._represent
def rep(*a, **kw):
    r = _rep(*a, **kw)
    run = r[3]
    print("REPRESENT", r[0], "failed=", r[2].failed, "summaries=", run.loops.summaries if run.loops else None, "notes=", run.loops.notes if run.loops else None, flush=True)
    return r
G._represent = rep
_ck = G._check
def ck(s, quick=False):
    t=time.perf_counter(); r = _ck(s, quick)
    if time.perf_counter()-t > 0.5 or r != G.z3.unsat: print(f"Z3 quick={quick} -> {r} in {time.perf_counter()-t:.1f}s", flush=True)
    if not quick and r == G.z3.sat:
        m = s.model(); print("MODEL", sorted(((str(d), m[d]) for d in m.decls()), key=str)[:40], flush=True)
        print("ASSERTS", [str(a)[:600] for a in s.assertions()][-6:], flush=True)
    return r
G._check = ck

_pv = G._prove
def pv(*a, **kw):  # an internal error of the proof: its traceback (grid.py turns it into a fallback note)
    try:
        return _pv(*a, **kw)
    except Exception:
        import traceback; traceback.print_exc(); raise
G._prove = pv


# stop 47 (tma47c): the nested summary's attempts
_ni = L.LoopSummariser._nested
def ni(self, b, g, ins, pc, head, k):
    before = self._inner
    r = _ni(self, b, g, ins, pc, head, k)
    if self._inner is not None and before is None:
        print(f"{time.process_time()-T0:7.2f}s NEST START head={prog.code[head].span} k={k} p={self._inner.period}", flush=True)
    return r
L.LoopSummariser._nested = ni
_ai = L.LoopSummariser._abandon_inner
def ai(self, why):
    print(f"{time.process_time()-T0:7.2f}s NEST ABANDON head={prog.code[self._inner.head].span} p={self._inner.period}: {why}", flush=True)
    return _ai(self, why)
L.LoopSummariser._abandon_inner = ai
_fi = L.LoopSummariser._finish_inner
def fi(self, b, g):
    n = len(self.summaries)
    if b.reports or self.state.uninit_outputs or self.state.detector.races():
        print("  FINDING in the run:", [getattr(x, "message", x) for x in b.reports][:2], "uninit", bool(self.state.uninit_outputs), "races", "\n".join(str(x)[:3000] for x in self.state.detector.races()[:3]), flush=True)
    r = _fi(self, b, g)
    if len(self.summaries) > n: print(f"{time.process_time()-T0:7.2f}s NEST HELD {self.summaries[-1]}", flush=True)
    return r
L.LoopSummariser._finish_inner = fi

if os.environ.get("STATIC_OFF"):  # experiment: no `_deltas_static` guess at the tile loop's first boundary
    _ds = L.LoopSummariser._deltas_static
    def ds(self, b, head, latch, z):
        return None if str(prog.code[head].span).split(":")[1] in ("137", "138") else _ds(self, b, head, latch, z)
    L.LoopSummariser._deltas_static = ds

if os.environ.get("INVAL"):  # race47d: the barrier state at each mbarrier.inval that still has copies in flight
    import symexec.mbarrier as MB
    _inv = MB.MbarrierUnit.inval
    def inv(self, key, ins):
        bar = self.bars.get(key)
        if bar is not None:
            print(f"INVAL key={key} phase={bar.phase} gen={bar.generation} tx={bar.tx} pending={bar.pending}/{bar.expected} "
                  f"landing={len(bar.landing)} observed={bar.observed}", flush=True)
        return _inv(self, key, ins)
    MB.MbarrierUnit.inval = inv
pr = cProfile.Profile() if prof else None
if pr: pr.enable()
try:
    with time_limit(lim):
        r = check_kernel(prog, launch)
    print("VERDICT", r.verdict, r.stats.get("grid_method"))
    for n in r.notes: print("NOTE", n[:400])
    for a in r.assumptions: print("ASSUME", a[:400])
    for f in r.findings[:3]: print("FIND", f.message[:300])
except BaseException as e:
    print("EXC", type(e).__name__, e)
finally:
    if pr:
        pr.disable(); pstats.Stats(pr).sort_stats("cumulative").print_stats(45)
print("cpu", time.process_time()-T0)
