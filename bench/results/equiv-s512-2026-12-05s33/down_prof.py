import sys, time, collections
from pathlib import Path
import numpy as np
import proofs.instances as I
from proofs.instances import _INPUT_BITS
T_ = collections.Counter(); N_ = collections.Counter(); SZ = collections.Counter()
def _down(T, d, M, S, ok, key, cols):
    t = time.process_time
    t0 = t()
    aux, shape = T.aux, T.shape
    Y = M[d.rows, cols]
    SZ['Y'] += Y.size; SZ['ep'] += d.ep.size * Y.shape[1]
    t1 = t(); T_['Y'] += t1 - t0
    good = key[Y] == d.key[:, None]
    t2 = t(); T_['key'] += t2 - t1
    if d.aux_i.size:
        good[d.aux_i] &= aux[Y[d.aux_i]] == d.aux_v[:, None]
    if d.in_i.size:
        good[d.in_i] &= (aux[Y[d.in_i]] >> _INPUT_BITS) == d.in_buf[:, None]
    if d.opq_i.size:
        good[d.opq_i] &= Y[d.opq_i] == d.ids[d.opq_i, None]
    if d.sset_i.size:
        S[d.sset_g, cols] = aux[Y[d.sset_i]]
    if d.schk_i.size:
        good[d.schk_i] &= aux[Y[d.schk_i]] == S[d.schk_g, cols]
    t3 = t(); T_['auxtests'] += t3 - t2
    ok &= good.all(axis=0)
    if not ok.all():
        Y = np.where(ok, Y, d.ids[:, None].astype(np.int32))
    t4 = t(); T_['okwhere'] += t4 - t3
    if d.ep.size:
        O = T._off.a[Y]
        t5 = t(); T_['O'] += t5 - t4
        prop = T._kids.a[O[d.ep] + d.es[:, None]]
        t6 = t(); T_['prop'] += t6 - t5
        if d.pe0.size:
            a, b = prop[d.pe0], prop[d.pe1]
            swap = shape[a] != d.ps0[:, None]
            a, b = np.where(swap, b, a), np.where(swap, a, b)
            ok &= ((shape[a] == d.ps0[:, None]) & (shape[b] == d.ps1[:, None])).all(axis=0)
            prop[d.pe0], prop[d.pe1] = a, b
        t7 = t(); T_['pair'] += t7 - t6
        M[d.first_rows, cols] = prop[d.first]
        t8 = t(); T_['Mset'] += t8 - t7
        if d.chk.size:
            ok &= (prop[d.chk] == M[d.chk_rows, cols]).all(axis=0)
        T_['chk'] += t() - t8
    N_['calls'] += 1
I._down = _down
from volta.equiv_cli import run_equivalence
P = Path("examples/pairs")
c0 = time.process_time()
r = run_equivalence(P/"attention/fast.ptx", reference=P/"attention/naive.ptx", launch_path=P/"attention/fast.s512.json", reference_launch=P/"attention/naive.s512.json", timeout=3000)
print(r.verdict, "total cpu", time.process_time() - c0)
print({k: round(v, 2) for k, v in T_.items()}, N_, SZ)
print(r.stats["equivalence"].get("seconds"))
