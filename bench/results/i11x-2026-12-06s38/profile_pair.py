"""cProfile of one cross-target pair of tests/test_equivalence_suite.py: argv[1] contract, argv[2] candidate target
(reference sm_80), in a fresh store; prints the top functions by cumulative and by own time."""
import cProfile, pstats, sys

sys.path.insert(0, ".")
from harness.equivalence import triton_kernel  # noqa: E402
from proofs.prove import prove  # noqa: E402
from semantics.terms import TermStore  # noqa: E402
from tests.test_equivalence_suite import CONTRACTS  # noqa: E402

c = CONTRACTS[sys.argv[1]]
ref, cand = triton_kernel(c, "sm_80"), triton_kernel(c, sys.argv[2], label="candidate")
pr = cProfile.Profile()
pr.enable()
rep = prove(cand, ref, TermStore())
pr.disable()
print(rep.result.verdict, rep.seconds, rep.result.stats)
st = pstats.Stats(pr)
st.sort_stats("cumulative").print_stats(45)
st.sort_stats("tottime").print_stats(30)
