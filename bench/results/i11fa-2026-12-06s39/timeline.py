import threading, time, os, sys, resource
import proofs.prove as pp, proofs.equivalence as pe, proofs.normal as pn, volta.equiv_cli as vc
phase = ["start"]; peaks = {}
def rss():
    with open("/proc/self/statm") as f: return int(f.read().split()[1]) * 4096 // (1 << 20)
def sampler():
    while True:
        r = rss(); p = phase[0]
        if r > peaks.get(p, 0): peaks[p] = r
        time.sleep(0.05)
threading.Thread(target=sampler, daemon=True).start()
def wrap(mod, name, label):
    f = getattr(mod, name)
    def g(*a, **k):
        old = phase[0]; phase[0] = label
        try: return f(*a, **k)
        finally: phase[0] = old + "+"
    setattr(mod, name, g)
wrap(pp, "run_side", "run_side"); wrap(pp, "safety_report", "safety"); wrap(pp, "compare_outputs", "compare")
wrap(pe, "_group_instances", "group_instances"); wrap(pn.Normalizer, "_users", "users"); wrap(pn.Normalizer, "_of", "of")
import semantics.terms as st
wrap(st._HashIndex, "_grow", "grow"); wrap(st._Column, "_room", "room")
import symexec.check.termshadow as ts
exec(open("/tmp/i11fa/s512.py").read())
T = None
print("PEAKS", peaks, "maxrss", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
