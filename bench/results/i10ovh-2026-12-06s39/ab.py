"""ab.py N KERNEL...: in one process, check runs with RaceDetector._pairs as on the branch (a window of reads only
by _read_pairs) and as before (every window merged, _merged_pairs) in turn, N rounds; the least CPU time of each."""
import sys, time
sys.path.insert(0, '.')
import bench.check_overhead as co
from harness.suite import all_contracts
from symexec.check.races import RaceDetector

branch = RaceDetector._pairs


def merged(self, st, byte, rec, kind):
    self._merged_pairs(st, byte, rec, kind)


n = int(sys.argv[1])
by = {c.name: c for c in all_contracts()}
for name in sys.argv[2:]:
    c = by[name]
    compiled = co.compile_contract(c, 'sm_80')
    prog = co.load_program(co.ptx_parser.parse(compiled.ptx, 'x.ptx'), compiled.entry)
    launch = co.launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
    best = {"base": float("inf"), "branch": float("inf")}
    verdicts = {}
    for r in range(n):
        for side, f in (("base", merged), ("branch", branch)):
            RaceDetector._pairs = f
            t = time.process_time()
            rep = co.run_checked(co.new_run(prog, launch), prog, launch)
            best[side] = min(best[side], time.process_time() - t)
            verdicts.setdefault(side, []).append((rep.verdict, [str(f.message) for f in rep.findings]))
    RaceDetector._pairs = branch
    same = all(v == verdicts["base"][0] for s in verdicts for v in verdicts[s])
    print(f"{name}: base {best['base']*1000:.1f} ms, branch {best['branch']*1000:.1f} ms, "
          f"branch/base {best['branch']/best['base']:.3f}; same verdict and findings in every run: {same}", flush=True)
