import sys, time, resource
import ptx_parser
from harness.compile import compile_contract
from harness.emulate import launch_for
from harness.suite import get
from symexec import load_program, time_limit
from symexec.check import grid as G
name = sys.argv[1] if len(sys.argv) > 1 else "flash_attention"
c = get(name)
comp = compile_contract(c, "sm_100a", instance="bench")
arrays = c.make_inputs("bench", "normal", 0, lazy=True)
launch = launch_for(c, comp, arrays, "bench"); del arrays
prog = load_program(ptx_parser.parse(comp.ptx, f"{name}.ptx"), comp.entry)
open(f"/tmp/i10sm100/{name}.ptx", "w").write(comp.ptx)
print("grid", launch.grid)
c0 = time.process_time()
mode = sys.argv[2] if len(sys.argv) > 2 else "alone"
with time_limit(150):
    if mode == "alone":
        try:
            reps, rep, sh, run = G._represent(prog, launch, None, [tuple(launch.grid[i]-1 for i in range(3))], ctaid_trips=True)
            print("verdict", rep.verdict, "failed", sh.failed)
            print("summaries", run.loops.summaries if run.loops else None)
            print("notes", rep.notes[:6])
            print("uniform", len(sh.uniform))
        except Exception as e:
            print("EXC", type(e).__name__, e)
    else:
        if mode == "patched":
            from symexec.check import grid_shadow as GS
            orig = GS.Shadow._goes_on
            def go(self, ins, mask):
                r = orig(self, ins, mask)
                return r if r is not None else tuple(launch.grid[i]-1 for i in range(3))
            GS.Shadow._goes_on = go
            import os
            if os.environ.get("KEEP"):
                keep = os.environ["KEEP"].split(",")
                orig_ct = GS.Shadow._ctaid_trip
                def ct(self, *a, **k):
                    saved = {r: self.regs.get(r) for r in keep}
                    orig_ct(self, *a, **k)
                    for r, v in saved.items():
                        if self.regs.get(r) is GS.TOP:
                            if v is None: self.regs.pop(r, None)
                            else: self.regs[r] = v
                GS.Shadow._ctaid_trip = ct
        r, why = G.check_symbolic(prog, launch)
        print("sym", r and r.verdict, why, r and r.notes[:4], r and r.stats.get("grid_method"))
print("cpu", time.process_time() - c0, "rss MiB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024)
