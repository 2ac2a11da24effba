import sys, time
sys.path.insert(0, "/tmp/tma47c")
from gen import ring_kernel
from volta.check_cli import check_file
from pathlib import Path
args = [int(x) for x in sys.argv[1:6]] + [sys.argv[6] == "1"]
p = Path(f"/tmp/tma47c/k_{'_'.join(sys.argv[1:7])}.ptx"); p.write_text(ring_kernel(*args))
t = time.process_time()
r = check_file(p)
print(sys.argv[1:], r.verdict, r.stats.get("grid_method"), f"{time.process_time()-t:.1f}s")
for s in r.stats.get("loops_summarised", []): print("  ", s)
for a in r.assumptions:
    if "in the checked period" in a: print("  NESTED:", a[:160])
for n in r.notes: print("  NOTE", n[:200])
print("  stats:", {k: v for k, v in r.stats.items() if k in ("not_validated", "grid_fallback", "z3_queries")})
for f in r.findings[:1]: print("  FIND", f.message[:300])
