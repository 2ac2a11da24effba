"""timers.py K [REPS]: process time of the race detector's methods (outermost calls) in check runs of K, least of REPS."""
import sys, time, functools
sys.path.insert(0, '.')
k = sys.argv[1]; reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
sys.argv = ['x']
from bench.check_overhead import *
from symexec.check import races
c = {c.name: c for c in all_contracts()}[k]
compiled = compile_contract(c, 'sm_80')
prog = load_program(ptx_parser.parse(compiled.ptx, f"{c.name}.ptx"), compiled.entry)
launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
names = [("RaceDetector", m) for m in ("flush", "_step", "_record_all", "_pairs", "_merged_pairs", "_read_pairs", "_test", "_push_reads", "_reads", "_refine", "_same_instruction", "_atomics", "_gc")] + \
        [("_BufferState", m) for m in ("entries", "_middle_untouched", "padded", "_first_touch")]
acc = {}
for cls, m in names:
    C = getattr(races, cls); f = getattr(C, m); depth = [0]
    def wrap(f=f, key=m, depth=depth):
        @functools.wraps(f)
        def w(*a, **kw):
            if depth[0]:
                return f(*a, **kw)
            depth[0] += 1; t = time.process_time()
            try: return f(*a, **kw)
            finally:
                depth[0] -= 1; s = acc.setdefault(key, [0.0, 0]); s[0] += time.process_time() - t; s[1] += 1
        return w
    setattr(C, m, wrap())
best = None
for r in range(reps + 1):
    acc.clear(); t0 = time.process_time(); run_checked(new_run(prog, launch), prog, launch); dt = time.process_time() - t0
    if r and (best is None or dt < best[0]): best = (dt, {k: tuple(v) for k, v in acc.items()})
t0 = min(time.process_time() - t0 + 0 for _ in [0])
pl = []
for r in range(reps):
    t = time.process_time(); run_kernel(prog, launch); pl.append(time.process_time() - t)
print(f"{k}: plain {min(pl):.3f} check {best[0]:.3f}")
for key, (s, n) in sorted(best[1].items(), key=lambda x: -x[1][0]):
    print(f"  {key:20s} {s*1e3:8.1f} ms {n:6d} calls")
