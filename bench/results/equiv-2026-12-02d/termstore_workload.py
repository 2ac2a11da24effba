import sys, time, resource
import numpy as np
from semantics.terms import TermStore, Op, float_sort, NO_MODS
T = TermStore(); f = float_sort("f32"); m = int(sys.argv[1]) if len(sys.argv) > 1 else 16384
t0 = time.process_time()
x = T.input("q", np.arange(m), f)
acc = T.input("k", np.arange(m), f)
for i in range(300):
    y = T.input("k", np.arange(m) + (i + 1) * m, f)
    p = T.make(Op.FMUL, f, NO_MODS, [x, y])
    acc = T.make(Op.FADD, f, NO_MODS, [acc, p])
    again = T.make(Op.FADD, f, NO_MODS, [p, acc if i % 2 else acc])  # half hits
print(f"nodes {len(T)} cpu {time.process_time()-t0:.2f} s maxrss {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024:.0f} MiB")
