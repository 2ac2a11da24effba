"""cProfile of the suite test's pairs of one contract in one store (as tests/test_equivalence_suite.py runs them, without
the shared safety report): prints each pair's CPU seconds, the total and peak RSS, then the top functions.
usage: PYTHONPATH=. python prof.py CONTRACT FIRST_PAIR N_PAIRS OUT.prof"""
import cProfile, pstats, sys, time, resource
sys.path.insert(0, '.')
from harness.equivalence import triton_kernel
import tests.test_equivalence_suite as TS
from proofs.prove import prove
from semantics.terms import TermStore
name = sys.argv[1]; first = int(sys.argv[2]); cnt = int(sys.argv[3]); out = sys.argv[4]
c = TS.CONTRACTS[name]; store = TermStore(); pairs = TS._pairs(name)
pr = cProfile.Profile()
t0 = time.process_time()
pr.enable()
for cand, ref in pairs[first:first+cnt]:
    t = time.process_time()
    rep = prove(triton_kernel(c, cand, label="candidate"), triton_kernel(c, ref), store)
    print(cand, ref, rep.result.verdict, round(time.process_time()-t, 1), flush=True)
pr.disable()
print('total', round(time.process_time()-t0, 1), 'maxrss', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss//1024)
pr.dump_stats(out)
st = pstats.Stats(out); st.sort_stats('cumulative').print_stats(45); st.sort_stats('tottime').print_stats(30)
