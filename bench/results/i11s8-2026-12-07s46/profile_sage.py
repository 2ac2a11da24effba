# cProfile of sage_attention's sm_90a proof against sm_80 (prove_sm90a.py's call): the top functions by own time
# and by cumulative time, written to ARGV[1] (a pstats dump) and printed
import cProfile, pstats, sys
from harness.equivalence import triton_kernel
from harness.suite import all_contracts
from proofs.prove import prove
from semantics.terms import TermStore
c = {c.name: c for c in all_contracts()}["sage_attention"]
pr = cProfile.Profile()
pr.enable()
rep = prove(triton_kernel(c, "sm_90a", label="candidate"), triton_kernel(c, "sm_80"), TermStore())
pr.disable()
print("RESULT", rep.result.verdict[:120], rep.seconds, flush=True)
pr.dump_stats(sys.argv[1])
st = pstats.Stats(sys.argv[1])
st.sort_stats("tottime").print_stats(25)
st.sort_stats("cumulative").print_stats(40)
