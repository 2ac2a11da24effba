"""parts.py K N [extra qualnames...]: warm per-run CPU us of check mode's parts (outermost calls only), in-process.
Each part is timed with process_time around its entry point (adds ~1 us per call)."""
import sys, time, functools, importlib
sys.path.insert(0, ".")
import bench.check_overhead as co
from harness.suite import all_contracts
import ptx_parser
name = sys.argv[1]; N = int(sys.argv[2])
PARTS = ["symexec.check.run:new_run", "symexec.machine:Machine.__init__", "symexec.machine:Batch.__init__",
         "symexec.check.state:CheckState.on_batch", "symexec.check.state:CheckState.access",
         "symexec.check.shadow:Tracker.on_load", "symexec.check.shadow:Tracker.on_store",
         "symexec.check.shadow:Tracker.on_write_reg", "symexec.check.shadow:Tracker.on_read_reg",
         "symexec.check.shadow:Tracker.on_read_const",
         "symexec.check.exec:CheckedExec.begin", "symexec.execctx:GroupExec.begin",
         "symexec.check.races:RaceDetector.flush", "symexec.check.races:RaceDetector.add",
         "symexec.check.races:RaceDetector.races",
         "symexec.check.run:conclude", "symexec.machine:Machine.run", "symexec.check.run:record_report",
         "symexec.check.timeline:SyncLog.on_access"] + sys.argv[3:]
c = {c.name: c for c in all_contracts()}[name]
compiled = co.compile_contract(c, "sm_80")
prog = co.load_program(ptx_parser.parse(compiled.ptx, f"{name}.ptx"), compiled.entry)
launch = co.launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
spent = {}; calls = {}
for spec in PARTS:
    mod, qual = spec.split(":")
    m = importlib.import_module(mod)
    owner, attr = (m, qual) if "." not in qual else (getattr(m, qual.split(".")[0]), qual.split(".")[1])
    f = owner.__dict__.get(attr) if hasattr(owner, "__dict__") else getattr(owner, attr)
    if f is None:
        print("no", spec); continue
    depth = [0]
    def timed(*a, _f=f, _l=spec, _d=depth, **k):
        _d[0] += 1
        t0 = time.process_time()
        try:
            return _f(*a, **k)
        finally:
            _d[0] -= 1
            if _d[0] == 0:
                spent[_l] = spent.get(_l, 0.0) + time.process_time() - t0
                calls[_l] = calls.get(_l, 0) + 1
    setattr(owner, attr, functools.wraps(f)(timed))
    if owner is m:  # module function imported elsewhere by name
        for other in ("bench.check_overhead", "symexec.check.run"):
            om = importlib.import_module(other)
            if getattr(om, attr, None) is f:
                setattr(om, attr, getattr(owner, attr))
for _ in range(3):
    co.run_checked(co.new_run(prog, launch), prog, launch)
spent.clear(); calls.clear()
t0 = time.process_time()
for _ in range(N):
    co.run_checked(co.new_run(prog, launch), prog, launch)
tot = (time.process_time() - t0) / N
print(f"{name}: check {tot*1e6:.0f} us/run (timed)")
for k in PARTS:
    if k in spent:
        print(f"  {k:55s} {spent[k]/N*1e6:9.0f} us {calls[k]/N:8.1f} calls")
