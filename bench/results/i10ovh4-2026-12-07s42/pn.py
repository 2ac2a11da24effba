"""pn.py: CPU µs per product_numbers call at 256-16384 lanes (2000 calls each)."""
import sys, time, numpy as np
sys.path.insert(0,'.')
from symexec.check import shadow as S
for n in (256, 1024, 4096, 16384):
    rng = np.random.default_rng(0)
    a,b,c,x,y = (rng.integers(0, 2**63, n, dtype=np.uint64) for _ in range(5))
    S.product_numbers(1, 2, a, b, c, 3, x, y)
    t0=time.process_time()
    for _ in range(2000): S.product_numbers(1, 2, a, b, c, 3, x, y)
    print(n, (time.process_time()-t0)/2000*1e6, "us")
