"""cProfile of the ce_zloss_smem_row equivalence proof: writes prof.out (pstats) and prints the top."""
import cProfile, pstats, sys, time
from pathlib import Path
from volta.equiv_cli import run_equivalence
pr = cProfile.Profile()
t = time.process_time()
pr.enable()
r = run_equivalence(Path(sys.argv[1]), contract='cross_entropy_zloss', timeout=1500)
pr.disable()
print("VERDICT", r.verdict, time.process_time() - t)
pr.dump_stats(sys.argv[2] if len(sys.argv) > 2 else "prof.out")
st = pstats.Stats(pr); st.sort_stats("cumulative").print_stats(60)
st.sort_stats("tottime").print_stats(40)
