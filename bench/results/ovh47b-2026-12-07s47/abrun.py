"""abrun.py ROUNDS K...: in-process A/B of whole check runs (and plain runs): the check state's RaceDetector is main's
(A: races.py of the tree in $BASE, default /tmp/ovh47b-base, loaded as symexec.check._races_base) or the branch's (B),
alternating ABBA per round after a warm run; least process time per side; the reports' repr must be equal.
Plain emulation (run_kernel) is timed in the same rounds. Prints the 1-minute load before and after each kernel."""
import importlib.util, os, sys, time
sys.path.insert(0, '.')
rounds = int(sys.argv[1]); ks = sys.argv[2:]
sys.argv = ['x']
from bench.check_overhead import *
from symexec.check import state, races as B
base = os.environ.get("BASE", "/tmp/ovh47b-base")
spec = importlib.util.spec_from_file_location("symexec.check._races_base", f"{base}/symexec/check/races.py")
A = importlib.util.module_from_spec(spec); A.__package__ = "symexec.check"; sys.modules[spec.name] = A
spec.loader.exec_module(A)
by = {c.name: c for c in all_contracts()}
FL = {"A": 0.0, "B": 0.0}  # process time inside RaceDetector.flush (outermost calls), per side, this run


def timed(mod, side):
    orig = mod.RaceDetector.flush
    depth = [0]

    def flush(self):
        depth[0] += 1
        t0 = time.process_time()
        try:
            return orig(self)
        finally:
            depth[0] -= 1
            if not depth[0]:
                FL[side] += time.process_time() - t0
    mod.RaceDetector.flush = flush


timed(A, "A"); timed(B, "B")
load = lambda: open('/proc/loadavg').read().split()[0]
for k in ks:
    c = by[k]
    compiled = compile_contract(c, 'sm_80')
    prog = load_program(ptx_parser.parse(compiled.ptx, f"{c.name}.ptx"), compiled.entry)
    launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
    best = {"A": 1e9, "B": 1e9, "plain": 1e9}; reps = {}; fbest = {"A": 1e9, "B": 1e9}
    l0 = load()
    for r in range(rounds + 1):
        order = ("A", "B") if r % 4 in (0, 3) else ("B", "A")
        for side in order:
            state.RaceDetector = A.RaceDetector if side == "A" else B.RaceDetector
            FL[side] = 0.0
            t0 = time.process_time()
            rep = run_checked(new_run(prog, launch), prog, launch)
            dt = time.process_time() - t0
            if r:
                best[side] = min(best[side], dt)
                fbest[side] = min(fbest[side], FL[side])
            reps[side] = repr(rep)
        assert reps["A"] == reps["B"], k
        t0 = time.process_time(); run_kernel(prog, launch); dt = time.process_time() - t0
        if r:
            best["plain"] = min(best["plain"], dt)
    state.RaceDetector = B.RaceDetector
    p = best["plain"]
    print(f"{k}: plain {p:.4f} s | check base {best['A']:.4f} s ({best['A']/p:.2f}x) branch {best['B']:.4f} s "
          f"({best['B']/p:.2f}x) | branch/base {best['B']/best['A']:.3f} | flush base {fbest['A']:.4f} s branch {fbest['B']:.4f} s "
          f"({fbest['B']/fbest['A']:.3f}) | reports equal | load {l0} -> {load()}", flush=True)
