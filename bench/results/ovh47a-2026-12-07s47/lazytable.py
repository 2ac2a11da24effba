"""lazytable.py ROUNDS K...: plain emulation and check runs with PageLayout's chunked table filled lazily (the
branch) or at every _make (main's cost: `_table()` called at the end of each _make), alternating in one process;
least process time per side."""
import sys, time, os
sys.path.insert(0, ".")
import bench.check_overhead as co
from harness.suite import all_contracts
import ptx_parser
from symexec import paged
lazy = paged.PageLayout._make


def eager(self, pages, slots, want_slots=True):
    out = lazy(self, pages, slots, want_slots)
    self._table()
    return out


rounds = int(sys.argv[1])
for name in sys.argv[2:]:
    c = {c.name: c for c in all_contracts()}[name]
    compiled = co.compile_contract(c, "sm_80")
    prog = co.load_program(ptx_parser.parse(compiled.ptx, f"{name}.ptx"), compiled.entry)
    launch = co.launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
    best = {}
    for r in range(rounds + 1):
        for side in (("eager", "lazy") if r % 4 in (0, 3) else ("lazy", "eager")):
            paged.PageLayout._make = eager if side == "eager" else lazy
            for w in ("plain", "check"):
                t0 = time.process_time()
                co.run_kernel(prog, launch) if w == "plain" else co.run_checked(co.new_run(prog, launch), prog, launch)
                if r:
                    best[(side, w)] = min(best.get((side, w), 9e9), time.process_time() - t0)
    pe, pl, ce, cl = best[("eager", "plain")], best[("lazy", "plain")], best[("eager", "check")], best[("lazy", "check")]
    print(f"{name}: plain eager {pe*1e3:.2f} lazy {pl*1e3:.2f} ms ({pl/pe:.3f}); check eager {ce*1e3:.2f} lazy "
          f"{cl*1e3:.2f} ms ({cl/ce:.3f}); ratio eager {ce/pe:.2f} lazy {cl/pl:.2f}; load {os.getloadavg()[0]:.2f}",
          flush=True)
