import time, numpy as np
from symexec.paged import PagedArray, from_array, gather_rows
rng = np.random.default_rng(0)
raw = rng.integers(0, 256, 1 << 22, dtype=np.uint8)
pa = PagedArray(raw.size, np.uint8, from_array(raw)); pa.rows(np.arange(0, raw.size, 256), 1)
for nb in (2, 4, 8, 16):
    first = (rng.integers(0, raw.size // nb, 16384) * nb).astype(np.int64)
    def old(): return pa[first[:, None] + np.arange(nb)]
    def new(): return pa.rows(first, nb)
    def old_s(): return raw[first[:, None] + np.arange(nb)]
    def new_s(): return gather_rows(raw, first, nb)
    assert np.array_equal(old(), new()) and np.array_equal(old_s(), new_s())
    res = []
    for f in (old, new, old_s, new_s):
        c0 = time.process_time()
        for _ in range(200): f()
        res.append((time.process_time() - c0) / 200 * 1e6)
    print(f"nb={nb}: paged {res[0]:.0f} -> {res[1]:.0f} us, plain {res[2]:.0f} -> {res[3]:.0f} us (16384 rows)")
