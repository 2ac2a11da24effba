import sys, time, numpy as np
import semantics.terms as TM
factor = int(sys.argv[1])  # table kept at most 1/factor full
N = int(sys.argv[2]); B = int(sys.argv[3])
class H(TM._HashIndex):
    def insert(self, ids, h, stops=None):
        if factor * (self.count + ids.size) > self.table.size:
            self._grow(self.count + ids.size); stops = None
        self._place(ids, h, stops); self.count += ids.size
    def _grow(self, need):
        cap = self.table.size
        while factor * need > cap: cap *= 2
        old = self.table[self.table != self._EMPTY]
        self.table = np.full(cap, self._EMPTY, np.int32)
        self._place(old.astype(np.int64), self.hashes.a[old])
rng = np.random.default_rng(1)
allh = rng.integers(0, 2**63, N, dtype=np.int64).view(np.uint64)
idx = H()
t = time.process_time(); tl = 0.0
for s in range(0, N, B):
    h = allh[s:s + B]
    t1 = time.process_time()
    f, stops = idx.lookup_stops(h)
    if s and (s // B) % 3 == 0:  # some repeats found
        idx.lookup(allh[s - B:s])
    tl += time.process_time() - t1
    ids = np.arange(s, s + h.size)
    idx.record(h); idx.insert(ids, h, stops)
print(factor, 'total', round(time.process_time() - t, 2), 'lookups', round(tl, 2), 'table MiB', idx.table.nbytes >> 20)
