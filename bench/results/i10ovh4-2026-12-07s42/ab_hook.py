"""ab_hook.py N K: ab.py's alternating A/B of kernel K, also timing Tracker.on_write_reg (process time, summed over
a run; the same wrapper on both sides): least of N per side, of the run and of the hook."""
import sys, time, functools
sys.argv, (n, k) = ['x'] + sys.argv[3:], (int(sys.argv[1]), sys.argv[2])
sys.path.insert(0, '.')
import os, re, subprocess
from bench.check_overhead import *
import symexec.check.shadow as S
src = subprocess.run(["git", "show", "main:symexec/check/shadow.py"], capture_output=True, text=True, check=True).stdout
ns = dict(vars(S)); exec(re.search(r"^def product_numbers\(.*?(?=^def )", src, re.S | re.M).group(0), ns)
old_pn, new_pn = ns["product_numbers"], S.product_numbers
spent = [0.0]
w = S.Tracker.on_write_reg
@functools.wraps(w)
def timed(*a, **kw):
    t0 = time.process_time()
    try: return w(*a, **kw)
    finally: spent[0] += time.process_time() - t0
S.Tracker.on_write_reg = timed
AA = bool(os.environ.get("AA"))
c = {c.name: c for c in all_contracts()}[k]
compiled = compile_contract(c, 'sm_80')
prog = load_program(ptx_parser.parse(compiled.ptx, f"{c.name}.ptx"), compiled.entry)
launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
best = {True: [1e9, 1e9], False: [1e9, 1e9]}
for i in range(n):
    for on in ((False, True) if i % 2 == 0 else (True, False)):
        br = on and not AA
        S.Tracker.fast_products = br; S.product_numbers = new_pn if br else old_pn
        spent[0] = 0.0
        t0 = time.process_time()
        run_checked(new_run(prog, launch), prog, launch)
        t = time.process_time() - t0
        best[on] = [min(best[on][0], t), min(best[on][1], spent[0])]
print(f"{k}: {'A/A ' if AA else ''}run base {best[False][0]*1e3:.1f} branch {best[True][0]*1e3:.1f} ratio {best[True][0]/best[False][0]:.3f}; "
      f"on_write_reg base {best[False][1]*1e3:.1f} branch {best[True][1]*1e3:.1f} ms ratio {best[True][1]/best[False][1]:.3f}", flush=True)
