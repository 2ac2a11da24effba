import sys, time
sys.path.insert(0, "/work/wt/i11xt/tests")
from harness.equivalence import triton_kernel
from proofs.prove import run_side
from semantics.terms import TermStore
from test_equivalence_suite import CONTRACTS
def sides(name, ca, ra):
    c = CONTRACTS[name]; T = TermStore()
    t0 = time.process_time()
    _, cs = run_side(triton_kernel(c, ca, label="candidate"), T)
    _, rs = run_side(triton_kernel(c, ra), T)
    print("runs cpu", round(time.process_time() - t0, 1), flush=True)
    return T, cs, rs
