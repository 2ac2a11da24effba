import sys
import tcgen05  # noqa: F401
from harness.equivalence import triton_kernel
from harness.suite import all_contracts
from proofs.prove import prove
from semantics.terms import TermStore
name = sys.argv[1] if len(sys.argv) > 1 else "sinkhorn_attention"
c = {c.name: c for c in all_contracts()}[name]
T = TermStore()
rep = prove(triton_kernel(c, "sm_100a", label="candidate"), triton_kernel(c, "sm_80"), T)
r = rep.result
for s in r.suspects:
    print(s)
print(r.verdict[:200], r.notes, r.stats)
import re
from semantics.terms import SORTS, Op, mods
def show(k, d=0, maxd=7):
    s = SORTS[int(T.sort[k])]
    op = Op(int(T.op[k]))
    extra = ""
    if op == Op.CONST:
        extra = hex(int(T.aux[k]))
    elif op in (Op.EXTRACT, Op.CVT):
        extra = str(mods(int(T.aux[k])))
    print("  " * d + f"#{k} {op.name} {s.kind.name}{s.width} {s.fmt if hasattr(s,'fmt') else ''} {extra}")
    if d < maxd and op not in (Op.INPUT,):
        for c in T.kids(k):
            show(int(c), d + 1, maxd)
for s in r.suspects[:2]:
    m = re.search(r"#(\d+)", s.candidate)
    if m:
        show(int(m.group(1)))
