"""replay.py MODE ROUNDS K...: the race detector alone, on the accesses of a check run.

One check run of kernel K (sm_80, verify instance) is recorded: every RaceDetector.add (its Event and the detector's
shared_bytes then), every flush (a deep copy of the happens-before clocks then) and every races() call. The trace is
then replayed into main's detector (A: races.py of $BASE, default /tmp/ovh47b-base) and the branch's (B), with each
flush seeing the clocks of its time.
MODE "time": ROUNDS rounds ABBA, least process time per side, findings asserted equal.
MODE "same": one replay per side; asserts that every races() result (repr), same_value, left_out and accesses agree.
"""
import copy, importlib.util, os, sys, time
sys.path.insert(0, '.')
mode, rounds, ks = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
sys.argv = ['x']
from bench.check_overhead import *
from symexec.check import state, races as B
base = os.environ.get("BASE", "/tmp/ovh47b-base")
spec = importlib.util.spec_from_file_location("symexec.check._races_base", f"{base}/symexec/check/races.py")
A = importlib.util.module_from_spec(spec); A.__package__ = "symexec.check"; sys.modules[spec.name] = A
spec.loader.exec_module(A)
by = {c.name: c for c in all_contracts()}
load = lambda: open('/proc/loadavg').read().split()[0]


def record(prog, launch):
    ops, snaps, meta = [], [], {}
    orig_add, orig_flush, orig_races = B.RaceDetector.add, B.RaceDetector.flush, B.RaceDetector.races
    depth = [0]

    def add(self, e):
        meta.setdefault("init", (copy.deepcopy(self.clocks), self.threads, self.limit))
        ops.append(("add", e, self.shared_bytes))
        depth[0] += 1
        try:
            return orig_add(self, e)
        finally:
            depth[0] -= 1

    def flush(self):
        snaps.append(copy.deepcopy(self.clocks))
        if depth[0] == 0:
            ops.append(("flush",))
        depth[0] += 1
        try:
            return orig_flush(self)
        finally:
            depth[0] -= 1

    def races_(self):
        if depth[0] == 0:
            ops.append(("races",))
        depth[0] += 1
        try:
            return orig_races(self)
        finally:
            depth[0] -= 1
    B.RaceDetector.add, B.RaceDetector.flush, B.RaceDetector.races = add, flush, races_
    try:
        run_checked(new_run(prog, launch), prog, launch)
    finally:
        B.RaceDetector.add, B.RaceDetector.flush, B.RaceDetector.races = orig_add, orig_flush, orig_races
    return ops, snaps, meta


def replay(mod, ops, snaps, meta):
    clocks0, threads, limit = meta["init"]
    det = mod.RaceDetector(clocks0, threads, limit)
    q = iter(snaps)
    orig = mod.RaceDetector.flush

    def flush(self):
        self.clocks = next(q, self.clocks)
        return orig(self)
    det.flush = flush.__get__(det)
    out = []
    for op in ops:
        if op[0] == "add":
            det.shared_bytes = op[2]
            det.add(op[1])
        elif op[0] == "flush":
            det.flush()
        else:
            out.append(repr(det.races()))
    det.flush()
    out.append(repr(det.races()))
    out.append((det.same_value, sorted(det.left_out), det.accesses))
    return out


for k in ks:
    c = by[k]
    compiled = compile_contract(c, 'sm_80')
    prog = load_program(ptx_parser.parse(compiled.ptx, f"{c.name}.ptx"), compiled.entry)
    launch = launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
    ops, snaps, meta = record(prog, launch)
    if "init" not in meta:
        print(f"{k}: no accesses"); continue
    n_add = sum(op[0] == "add" for op in ops)
    if mode == "lines":  # per-statement times of the branch's detector methods named in $FUNCS (lines.py's way)
        import lines_lib
        T = lines_lib.instrument_all(B, os.environ["FUNCS"].split())
        replay(B, ops, snaps, meta); T.clear()
        t0 = time.process_time(); replay(B, ops, snaps, meta); print(k, "replay", time.process_time() - t0)
        lines_lib.show(T)
        continue
    if mode == "same":
        ra, rb = replay(A, ops, snaps, meta), replay(B, ops, snaps, meta)
        assert ra == rb, k
        print(f"{k}: {n_add} accesses, {len(snaps)} flushes: same findings ({len(ra[-2])} chars, same_value {ra[-1][0]})", flush=True)
        continue
    best = {"A": 1e9, "B": 1e9}; l0 = load(); res = {}
    for r in range(rounds + 1):
        for side in (("A", "B") if r % 4 in (0, 3) else ("B", "A")):
            t0 = time.process_time()
            res[side] = replay(A if side == "A" else B, ops, snaps, meta)
            dt = time.process_time() - t0
            if r:
                best[side] = min(best[side], dt)
        assert res["A"] == res["B"], k
    print(f"{k}: detector replay base {best['A']*1e3:.1f} ms branch {best['B']*1e3:.1f} ms branch/base "
          f"{best['B']/best['A']:.3f} ({n_add} accesses, {len(snaps)} flushes; findings equal) load {l0} -> {load()}", flush=True)
