import os, time
def _install():
    try:
        import proofs.equivalence as E
    except Exception:
        return
    orig = E._group_instances
    def timed(T, cr, rr):
        t0 = time.process_time()
        res = orig(T, cr, rr)
        with open(f"/tmp/i11g/gi_{os.environ.get('GI_TAG','x')}_{os.getpid()}.log", "a") as f:
            f.write(f"group_instances n={cr.size} cpu={time.process_time() - t0:.2f} inst={(res >= 0).sum()}\n")
        return res
    E._group_instances = timed
_install()
