"""Run the suite test's pairs of one contract (one store, as the test does), with a sampling profiler
thread (sys._current_frames every 50 ms): prints per-pair CPU s and, every REPORT s and at the end,
the functions most often on the main thread's stack (inclusive) and at its top (exclusive).
usage: sample.py CONTRACT [FIRST_PAIR [N_PAIRS]]"""
import collections, os, resource, sys, threading, time
sys.path.insert(0, '.')
from harness.equivalence import triton_kernel
import tests.test_equivalence_suite as TS
from proofs.prove import prove
from semantics.terms import TermStore

incl = collections.Counter(); excl = collections.Counter(); n = [0]
main = threading.main_thread().ident
REPORT = float(os.environ.get('REPORT', '60'))

def report():
    print(f'--- {n[0]} samples, cpu {time.process_time():.1f}, maxrss {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024:.0f} MiB', flush=True)
    for k, v in incl.most_common(30): print(f'  incl {100*v/max(n[0],1):5.1f}% {k}')
    for k, v in excl.most_common(15): print(f'  excl {100*v/max(n[0],1):5.1f}% {k}')
    sys.stdout.flush()

def sampler():
    last = time.time()
    while True:
        time.sleep(0.05)
        f = sys._current_frames().get(main)
        if f is None: continue
        n[0] += 1
        seen = set(); top = True
        while f is not None:
            k = f'{f.f_code.co_filename.split("/")[-1]}:{f.f_code.co_name}'
            if top: excl[k] += 1; top = False
            if k not in seen: incl[k] += 1; seen.add(k)
            f = f.f_back
        if time.time() - last > REPORT: report(); last = time.time()

threading.Thread(target=sampler, daemon=True).start()
name = sys.argv[1]
c = TS.CONTRACTS[name]
store = TermStore()
pairs = TS._pairs(name)
first = int(sys.argv[2]) if len(sys.argv) > 2 else 0
cnt = int(sys.argv[3]) if len(sys.argv) > 3 else len(pairs)
t0 = time.process_time()
for cand, ref in pairs[first:first + cnt]:
    t = time.process_time()
    rep = prove(triton_kernel(c, cand, label="candidate"), triton_kernel(c, ref), store)
    print(cand, ref, rep.result.verdict, round(time.process_time() - t, 1), rep.seconds, rep.result.stats, flush=True)
print('total', round(time.process_time() - t0, 1))
report()
