"""Run the ce_zloss equivalence, pickling compare_outputs' inputs."""
import pickle, sys
import proofs.prove as P
orig = P.compare_outputs
OUT = sys.argv[1]
def cap(T, cand, ref, **kw):
    with open(OUT, "wb") as f:
        import semantics.terms as TT
        pickle.dump((list(TT.SORTS), list(TT._MODS), T, cand, ref), f, protocol=5)
    print("captured", len(T), file=sys.stderr)
    raise SystemExit(0)
P.compare_outputs = cap
from volta.cli import main
sys.argv = ["volta", "check", "examples/candidates/cross_entropy_zloss/ce_zloss_smem_row.sm_90a.ptx",
            "--contract", "cross_entropy_zloss", "--equivalence"] + sys.argv[2:]
main()
