"""fix47e: why the TMA issues' guard (pc 403/410) is no decision of the k=19 proof in CTA 0's lone run."""
import os, runpy
import numpy as np
from symexec.check import grid_shadow as GS
from symexec.check.grid_expr import leaves
C = GS.Shadow
_lg = C._loop_guard
def lg(self, ins, guard, mask, control=False):
    r = _lg(self, ins, guard, mask, control)
    if self.pc in (403, 410) and self.loop is not None and self.loop.ident <= 12:
        print(f"LOOPGUARD pc={self.pc} ctas={len(self.batch.ctas)} ident={self.loop.ident} ret={r} size_params={bool(self.size_params)} "
              f"top={guard is GS.TOP} c={leaves(guard, ('c',)) if guard is not GS.TOP else None} sg={leaves(guard, ('s','g')) if guard is not GS.TOP else None} "
              f"guard={str(guard)[:300]}", flush=True)
    return r
C._loop_guard = lg
_ck = C.step if hasattr(C, "step") else None
runpy.run_path(os.path.join(os.path.dirname(__file__), "scan47e.py"), run_name="__main__")
