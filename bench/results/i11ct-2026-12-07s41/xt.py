"""Cross-target proof of one contract, phases timed; optionally dump/load the runs (pickle)."""
import sys, time, pickle, os, gc
from harness.equivalence import triton_kernel
from harness.suite import all_contracts
from proofs.normal import Normalizer
from proofs.prove import prove
from proofs.equivalence import compare_outputs
from semantics.terms import TermStore
sys.path.insert(0, "/work/wt/i11ct/tests")
from test_equivalence_suite import _pairs, CONTRACTS

name = sys.argv[1]
mode = sys.argv[2] if len(sys.argv) > 2 else "full"
pk = f"/tmp/i11ct/{name}.pkl"
c = CONTRACTS[name]
if mode == "load":
    t0 = time.process_time()
    with open(pk, "rb") as f:
        store, pairs = pickle.load(f)
    print("loaded", round(time.process_time() - t0, 1), len(store))
    N = Normalizer(store, keep_roots=True)
    t0 = time.process_time()
    for (ca, ra), (cs, rs) in pairs:
        t1 = time.process_time()
        res = compare_outputs(store, cs, rs, normalizer=N)
        print(ca, ra, res.verdict, res.stats, "cpu", round(time.process_time() - t1, 1), flush=True)
    print("compare total cpu", round(time.process_time() - t0, 1))
    sys.exit(0)
store = TermStore()
N = Normalizer(store, keep_roots=True)
ref_runs = {}
dump = []
t0 = time.process_time()
for ca, ra in _pairs(name):
    ref = triton_kernel(c, ra)
    rep = prove(triton_kernel(c, ca, label="candidate"), ref, store, normalizer=N,
                runs={ref.label: ref_runs[ra]} if ra in ref_runs else None)
    ref_runs.setdefault(ra, (rep.checks[ref.label], rep.sides[ref.label]))
    print(ca, ra, rep.result.verdict, rep.seconds, rep.result.stats, flush=True)
    dump.append(((ca, ra), (rep.sides["candidate"], rep.sides[ref.label])))
print("total cpu", round(time.process_time() - t0, 1))
if mode == "dump":
    with open(pk, "wb") as f:
        pickle.dump((store, dump), f, protocol=5)
