# UNSOUND probe (not committed): what stops flash_attention sm_100a once obstacle 3 is taken as solved, i.e. the decision
# at :2680 ignored in loops._leaves_after and its obligations dropped from grid._same_path
import sys, inspect, textwrap
from symexec.check import loops as L, grid as G
src = textwrap.dedent(inspect.getsource(L.LoopSummariser._leaves_after))
assert "if (got != want).any():" in src
src = src.replace("if (got != want).any():", "if (got != want).any() and not str(b.prog.code[d.pc].span).endswith(':2680:9'):")
ns = {}
exec(compile(src, "patched", "exec"), L.__dict__, ns)
L.LoopSummariser._leaves_after = ns["_leaves_after"]
orig = G._same_path
def same_path(sh, launch, sizes, stats):
    keep = [u for u in sh.uniform if ":2680:9" not in u.where]
    print("dropped uniforms at 2680:", len(sh.uniform) - len(keep), file=sys.stderr)
    sh.uniform[:] = keep
    return orig(sh, launch, sizes, stats)
G._same_path = same_path
sys.argv = ["probe", "flash_attention", "sm_100a"]
exec(open(__file__.replace("probe_o3.py", "probe.py")).read())
