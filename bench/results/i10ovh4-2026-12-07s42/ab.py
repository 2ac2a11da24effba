"""ab.py N K...: in one process, N rounds of each kernel (order base-branch, then branch-base, ...): base is main's
value numbering (Tracker.fast_products False and main's product_numbers, its source taken from `git show
main:symexec/check/shadow.py` and run in this tree's shadow module), branch this tree's; least CPU of each side,
and whether verdict, finding messages and notes agree. AA=1: both sides base."""
import os, re, subprocess, sys, time
sys.path.insert(0, '.')
n = int(sys.argv[1]); ks = sys.argv[2:]
sys.argv = ['x']
from bench.check_overhead import *
import symexec.check.shadow as S
src = subprocess.run(["git", "show", "main:symexec/check/shadow.py"], capture_output=True, text=True, check=True).stdout
m = re.search(r"^def product_numbers\(.*?(?=^def )", src, re.S | re.M)
ns = dict(vars(S)); exec(m.group(0), ns)
old_pn, new_pn = ns["product_numbers"], S.product_numbers
AA = bool(os.environ.get("AA"))
def side(branch):
    branch = branch and not AA
    S.Tracker.fast_products = branch
    S.product_numbers = new_pn if branch else old_pn
def rep(r):
    return (r.verdict, [f.message for f in r.findings], list(r.notes))
for k in ks:
    c = {c.name: c for c in all_contracts()}[k]
    compiled = compile_contract(c, 'sm_80')
    prog = load_program(ptx_parser.parse(compiled.ptx, f"{c.name}.ptx"), compiled.entry)
    launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
    best = {True: 1e9, False: 1e9}; reps = {}
    for i in range(n):
        for on in ((False, True) if i % 2 == 0 else (True, False)):
            side(on)
            t0 = time.process_time()
            r = run_checked(new_run(prog, launch), prog, launch)
            t = time.process_time() - t0
            best[on] = min(best[on], t); reps[on] = rep(r)
    print(f"{k}: {'A/A ' if AA else ''}base {best[False]*1e3:.1f} ms  branch {best[True]*1e3:.1f} ms  ratio {best[True]/best[False]:.3f} same={reps[True]==reps[False]}", flush=True)
side(True)
