"""The attention pair at S (argv[1], default 512), with CPU seconds of its phases: the whole run, the output
comparison (proofs.equivalence.compare_outputs) and, inside it, the instance check (_group_instances)."""
import sys, time
from pathlib import Path

import proofs.equivalence as E
import proofs.prove as P

S = sys.argv[1] if len(sys.argv) > 1 else "512"
cpu = {"compare_outputs": 0.0, "instance_check": 0.0}
real_cmp, real_grp = P.compare_outputs, E._group_instances


def timed(name, f):
    def g(*a, **kw):
        t0 = time.process_time()
        try:
            return f(*a, **kw)
        finally:
            cpu[name] += time.process_time() - t0
    return g


P.compare_outputs = timed("compare_outputs", real_cmp)
E._group_instances = timed("instance_check", real_grp)
from volta.equiv_cli import run_equivalence

A = Path("examples/pairs/attention")
c0 = time.process_time()
r = run_equivalence(A / "fast.ptx", reference=A / "naive.ptx", launch_path=A / f"fast.s{S}.json",
                    reference_launch=A / f"naive.s{S}.json", timeout=3000)
eq = r.stats["equivalence"]
print(f"S={S} verdict={r.verdict} run_cpu={time.process_time() - c0:.2f} "
      + " ".join(f"{k}={v:.2f}" for k, v in cpu.items()) + f" instances={eq.get('instances')}", flush=True)
