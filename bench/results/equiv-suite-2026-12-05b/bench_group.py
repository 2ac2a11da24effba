import pickle, sys, time
import numpy as np
sys.path.insert(0, "tests/equivalence")
import proofs.equivalence as eq
import proofs.instances
T, calls = pickle.load(open(sys.argv[1], "rb"))
which = sys.argv[2]
if which == "old":
    import instances_pernode
    proofs.instances.instances = lambda T_, rep, members, give_up_below=0.0, **kw: \
        instances_pernode.instances(T_, rep, members, give_up_below=give_up_below)
    proofs.instances.prepare = lambda T_, rep: None
for call in calls:
    cr, rr, res = call
    if cr.size == 0: continue
    t0 = time.process_time()
    got = eq._group_instances(T, cr, rr)
    print(which, "n", cr.size, "cpu", round(time.process_time() - t0, 2), "same", bool((got == res).all()), "inst", int((got >= 0).sum()), flush=True)
