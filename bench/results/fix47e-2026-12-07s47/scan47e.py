"""fix47e: the decision scan (`_first_change`) of the inner K loop's k=19 proof, pair run vs lone run."""
import os, runpy, sys
import numpy as np
from symexec.check import loops as L
from symexec.check.grid_expr import evaluate
from symexec.check.grid_expr import leaf_keys
_fc = L.LoopSummariser._first_change
def fc(self, decisions):
    r = _fc(self, decisions)
    sh = self.shadow
    n = len(sh.batch.ctas) if hasattr(sh.batch, "ctas") else None
    print(f"FIRST_CHANGE -> {r} ctas={n} ndec={len(decisions)}", flush=True)
    for d in decisions:
        lanes = np.nonzero(d.lanes)[0]
        line = f"  pc={getattr(d, 'pc', '?')} lanes={lanes.size} "
        if lanes.size:
            used = leaf_keys(d.expr)
            env = {k: (v[lanes] if np.ndim(v) else v) for k, v in sh.lane_env(0).items() if k in used}
            vals = []
            for t in (0, 16, 17, 18):
                env[("t", sh.loop.ident)] = np.asarray(t, np.uint64)
                try:
                    got = np.broadcast_to(evaluate(d.expr, env), lanes.shape)
                    vals.append((t, np.unique(got).tolist()[:3]))
                except Exception as e:
                    vals.append((t, repr(e)[:80]))
            line += f"want={np.unique(d.value[lanes]).tolist()[:3]} vals={vals} "
        print(line + str(d.expr)[:700], flush=True)
    if n == 1:
        raise SystemExit(0)
    return r
L.LoopSummariser._first_change = fc
runpy.run_path(os.path.join(os.path.dirname(__file__), "drive_tma47c.py"), run_name="__main__")
