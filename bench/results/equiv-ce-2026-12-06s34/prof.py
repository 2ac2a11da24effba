import cProfile, pstats, sys, time
from pathlib import Path
from volta.equiv_cli import run_equivalence
pr = cProfile.Profile()
t = time.process_time()
pr.enable()
r = run_equivalence(Path(sys.argv[1]), contract='cross_entropy_zloss', timeout=1500)
pr.disable()
print("VERDICT", r.verdict, time.process_time() - t)
st = pstats.Stats(pr); st.sort_stats("cumulative").print_stats(45)
