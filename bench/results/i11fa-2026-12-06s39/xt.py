import sys, time, resource
sys.argv = ["x"]
import tests.test_equivalence_suite as m
name = sys.argv[1] if len(sys.argv) > 1 else "flash_attention"
import os
name = os.environ.get("XT", "flash_attention")
t = time.process_time()
m.test_cross_target_equivalent(name)
print("XT", name, "cpu", time.process_time() - t, "maxrss", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
