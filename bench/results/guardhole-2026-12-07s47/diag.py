import sys, collections
sys.path.insert(0, "/work/main")
import symexec.check.grid_shadow as gs

orig = gs.Shadow._loop_guard
hits = collections.Counter()
def patched(self, ins, guard, mask, control=False):
    try:
        if self.loop is not None and guard is not gs.TOP and gs.leaves(guard, ("t",)) and gs.leaves(guard, ("c",)) and not control:
            hits[(ins.name, str(ins.span))] += 1
    except Exception as e:
        hits[("diag-error", repr(e))] += 1
    return orig(self, ins, guard, mask, control)
gs.Shadow._loop_guard = patched
from volta.cli import main
try:
    main(sys.argv[1:], standalone_mode=False)
except SystemExit as e:
    print("exit", e.code)
print("HITS", len(hits))
for k, v in hits.most_common(20): print(v, k)
