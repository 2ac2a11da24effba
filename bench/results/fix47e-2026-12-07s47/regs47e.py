"""fix47e: registers fast-forwarded by the inner K loop's summary in CTA 0's lone run vs the NOSUM run.
Runs drive_tma47c.py (race47d's driver) with extra hooks. env: as the driver; STOPK=N stops the lone run's
NOSUM run after inner back edge N of tile 0."""
import os, runpy, sys
import numpy as np
from symexec.check import loops as L
REGS = ("%r161", "%r162", "%r163", "%r164", "%r229", "%p33")
def show(b, tag):
    out = []
    for r in REGS:
        v = b.regs.get(r)
        out.append(f"{r}={np.unique(np.broadcast_to(np.asarray(v), b.alive.shape)[b.alive]).tolist()[:4] if v is not None else None}")
    print(tag, " ".join(out), flush=True)
_skip = L.LoopSummariser._skip
def skip(self, b, n):
    p = self._proof
    print(f"SKIP head={p.head} start={p.start} period={p.period} skip={n} ctas={len(b.ctas)} arrivals={self._arrivals.get(p.head)} deltas={ {r: np.unique(d).tolist()[:3] for r, d in p.deltas.items()} }", flush=True)
    for r in REGS:
        st = self.shadow.regs.get(r)
        print("  SHADOW", r, str(st)[:300], flush=True)
    print("  DECISIONS", [(d.pc, str(d.expr)[:200]) for d in self.shadow.loop.decisions][:12], flush=True)
    show(b, "  BEFORE")
    _skip(self, b, n)
    show(b, "  AFTER ")
L.LoopSummariser._skip = skip
_ob = L.LoopSummariser.on_back_edge
INNER = None
def ob(self, b, g, ins, pc):
    global INNER
    if INNER is None:
        INNER = {h for h in b.prog.loop_headers if str(b.prog.code[h].span).split(":")[1] == "467"}
        print("INNER", INNER, flush=True)
    r = _ob(self, b, g, ins, pc)
    if g.pc in INNER and len(b.ctas) == 1:
        a = self._arrivals.get(g.pc)
        show(b, f"EDGE lone arrival={a}")
        if os.environ.get("STOPK") and a >= int(os.environ["STOPK"]):
            raise SystemExit(0)
    return r
L.LoopSummariser.on_back_edge = ob
sys.argv = [sys.argv[0]] + sys.argv[1:]
runpy.run_path(os.path.join(os.path.dirname(__file__), "drive_tma47c.py"), run_name="__main__")
