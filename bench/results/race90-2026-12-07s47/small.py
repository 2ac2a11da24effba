"""Check gemm_tma_persistent on a small custom launch (stop 47, race47d).
usage: small.py ARCH M N K SMS [LIMIT_S] [--ptx OUT.ptx]"""
import sys, time, os
import ptx_parser
from harness.compile import compile_contract
from harness.emulate import launch_for
from harness.suite import get
from symexec import load_program, time_limit
from symexec.check import check_kernel

arch, M, N, K, S = sys.argv[1], *map(int, sys.argv[2:6])
lim = float(sys.argv[6]) if len(sys.argv) > 6 else 120.0
c = get("gemm_tma_persistent")
c.instances["probe"] = {"M": M, "N": N, "K": K, "SMS": S}
comp = compile_contract(c, arch, instance="probe")
if os.environ.get("PTX_OUT"):
    open(os.environ["PTX_OUT"], "w").write(comp.ptx)
arrays = c.make_inputs("probe", "normal", 0, lazy=True)
launch = launch_for(c, comp, arrays, "probe")
prog = load_program(ptx_parser.parse(comp.ptx, "k.ptx"), comp.entry)
t0 = time.process_time()
with time_limit(lim):
    r = check_kernel(prog, launch, os.environ.get("GRID", "auto"))
print("LAUNCH", dict(M=M, N=N, K=K, SMS=S), "grid", launch.grid if hasattr(launch, "grid") else "")
print("VERDICT", r.verdict, r.stats.get("grid_method"))
for n in r.notes: print("NOTE", n[:600])
for f in r.findings[:3]:
    print("FIND", f.message[:2000])
    print("FINDREPR", repr(f)[:4000])
print("cpu", round(time.process_time() - t0, 2))
