"""tests/test_equivalence_suite.py's cross-target proof of one contract (argv[1]), with CPU seconds of its phases:
the whole test, the output comparisons (compare_outputs) and, inside them, the instance checks (_group_instances)."""
import sys, time

import proofs.equivalence as E
import proofs.prove as P

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
sys.path.insert(0, ".")
from tests.test_equivalence_suite import test_cross_target_equivalent  # noqa: E402

c0 = time.process_time()
test_cross_target_equivalent(sys.argv[1])
print(f"{sys.argv[1]} verified run_cpu={time.process_time() - c0:.2f} "
      + " ".join(f"{k}={v:.2f}" for k, v in cpu.items()), flush=True)
