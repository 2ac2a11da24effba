"""abab.py BASE_TREE BRANCH_TREE ROUNDS K... : in-process A/B of two source trees (A = base, B = branch).

Both trees' project packages are imported into one process (each side's modules swapped into sys.modules
before it runs); per kernel (suite contract, verify instance, sm_80) and side: plain emulation
(symexec.run_kernel) and a check run (run_checked(new_run(...))), rounds alternating ABBA..., least CPU
time (process_time) per side; each round asserts repr(report) equal between the sides. Prints ms and ratios,
with the 1-minute load. K = 'all': every sm_80 suite kernel."""
import os, sys, time, importlib

PKGS = ("symexec", "semantics", "ptx_parser", "harness", "proofs", "tcgen05", "volta", "bench")
base_tree, branch_tree, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
names = sys.argv[4:]


def load(tree):
    sys.path.insert(0, tree)
    import bench.check_overhead as co  # noqa: F401 (and everything it imports)
    import symexec.check.reach, symexec.check.paths  # noqa: F401 (lazily imported by run_checked)
    mods = {k: v for k, v in sys.modules.items() if k.split(".")[0] in PKGS}
    for k in mods:
        del sys.modules[k]
    sys.path.remove(tree)
    return mods


def activate(mods, tree):
    for k in [k for k in sys.modules if k.split(".")[0] in PKGS]:
        del sys.modules[k]
    sys.modules.update(mods)
    sys.path.insert(0, tree)


def deactivate(tree):
    sys.path.remove(tree)


sides = {"A": (base_tree, load(base_tree)), "B": (branch_tree, load(branch_tree))}
co_b = sides["B"][1]["bench.check_overhead"]
if names == ["all"]:
    activate(sides["B"][1], branch_tree)
    names = [c.name for c in co_b.all_contracts() if c.min_arch <= 80]
    deactivate(branch_tree)


def setup(side, name):
    tree, mods = sides[side]
    activate(mods, tree)
    try:
        co = mods["bench.check_overhead"]
        c = {c.name: c for c in co.all_contracts()}[name]
        compiled = co.compile_contract(c, "sm_80")
        prog = co.load_program(co.ptx_parser.parse(compiled.ptx, f"{name}.ptx"), compiled.entry)
        launch = co.launch_for(c, compiled, c.make_inputs("verify", "normal", 0, lazy=True), "verify")
        return co, prog, launch
    finally:
        deactivate(tree)


def once(side, what, ctx):
    tree, mods = sides[side]
    co, prog, launch = ctx
    activate(mods, tree)
    try:
        t0 = time.process_time()
        out = co.run_kernel(prog, launch) if what == "plain" else co.run_checked(co.new_run(prog, launch), prog, launch)
        return time.process_time() - t0, out
    finally:
        deactivate(tree)


print(f"load {os.getloadavg()[0]:.2f}", flush=True)
for name in names:
    ctx = {s: setup(s, name) for s in sides}
    best = {(s, w): 1e9 for s in sides for w in ("plain", "check")}
    for r in range(rounds + 1):
        order = ("A", "B") if r % 4 in (0, 3) else ("B", "A")
        reps = {}
        for s in order:
            for w in ("plain", "check"):
                dt, out = once(s, w, ctx[s])
                if r:
                    best[(s, w)] = min(best[(s, w)], dt)
                if w == "check":  # (the tree's own path appears in sources: not a difference)
                    reps[s] = repr(out).replace(sides[s][0].rstrip("/"), "<tree>")
        assert reps["A"] == reps["B"], f"{name}: reports differ"
    pa, ca, pb, cb = best[("A", "plain")], best[("A", "check")], best[("B", "plain")], best[("B", "check")]
    print(f"{name:22s} plain A {pa*1e3:8.2f} B {pb*1e3:8.2f} ms (B/A {pb/pa:.3f}) | check A {ca*1e3:8.2f} "
          f"B {cb*1e3:8.2f} ms (B/A {cb/ca:.3f}) | ratio A {ca/pa:.2f} B {cb/pb:.2f} | reports equal | "
          f"load {os.getloadavg()[0]:.2f}", flush=True)
