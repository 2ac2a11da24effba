"""Micro-benchmark: gathers of int32 vs intp images (shared ~22 members per distinct, like the S = 512 group)."""
import numpy as np, time
rng=np.random.default_rng(0)
N=28_800_000
key=rng.integers(0,1<<30,N).astype(np.int32); off=rng.integers(0,1<<30,N).astype(np.int64); aux=off.copy()
n,k=400,1727
# images: mostly shared per row (realistic: ~22 members per distinct)
base=rng.integers(0,N,(n,k//22+1))
Y32=np.repeat(base,22,axis=1)[:, :k].astype(np.int32)
def t(f, r=20):
    c=time.process_time()
    for _ in range(r): f()
    return (time.process_time()-c)/r/Y32.size*1e9
print("key[Y32]", t(lambda: key[Y32]))
Y64=Y32.astype(np.intp)
print("astype", t(lambda: Y32.astype(np.intp)))
print("key[Y64]", t(lambda: key[Y64]))
print("key.take(Y64)", t(lambda: key.take(Y64)))
print("off[Y64]", t(lambda: off[Y64]))
rec=(off<<32)|key
print("rec[Y64]", t(lambda: rec[Y64]))
Yr=rng.integers(0,N,(n,k)).astype(np.int32)
print("key[Yrandom32]", t(lambda: key[Yr]))
print("eq", t(lambda: key[Y64]==key[:n,None]))
