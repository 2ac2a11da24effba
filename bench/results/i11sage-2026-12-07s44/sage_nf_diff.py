"""Diagnosis (issue 11, stop 44): sage_attention's sm_90a build against its sm_80 build, one output element.

Runs both builds' term runs only (no safety check, no comparison), then prints for output element E (argv[1],
default 0) of `o`: the kinds of the nodes of each side's term DAG that the other side does not share, the
integer MMA nodes' users and one MMA node, the pairs of subterms where the two terms first differ (Normalizer.congruence_pairs) with their normal forms, and,
with a third argument the pairs' forms, with a fourth each side's whole normal form (minutes) in OUT/nf_sm_90a.txt, OUT/nf_sm_80.txt (OUT: argv[2],
default /tmp/i11sage) for a diff.
"""
import collections
import resource
import sys
import time

import numpy as np

from harness.equivalence import triton_kernel
from harness.suite import all_contracts
from proofs.normal import Normalizer
from semantics.terms import Op, TermStore, mods, SORTS
from symexec.check.run import run_checked
from symexec.check.termshadow import equivalence_run

E = int(sys.argv[1]) if len(sys.argv) > 1 else 0
OUT = sys.argv[2] if len(sys.argv) > 2 else "/tmp/i11sage"
c = {c.name: c for c in all_contracts()}["sage_attention"]
T = TermStore()
roots = {}
for arch in ("sm_90a", "sm_80"):
    k = triton_kernel(c, arch, label=arch)
    t0 = time.process_time()
    run, shadow = equivalence_run(k.prog, k.launch, T, k.buffers, races=False)
    run_checked(run, k.prog, k.launch)
    out = shadow.outputs()["o"]
    roots[arch] = int(out.terms[list(out.elements).index(E)])
    print(f"{arch}: term run {time.process_time() - t0:.1f} s CPU, o[{E}] = #{roots[arch]}, gaps={len(shadow.gaps)}",
          flush=True)


def dag(r: int) -> set[int]:
    seen, todo = set(), [r]
    while todo:
        x = todo.pop()
        if x in seen:
            continue
        seen.add(x)
        if int(T.op[x]) != Op.INPUT:
            todo.extend(T.kids(x))
    return seen


def label(x: int) -> str:
    op = Op(int(T.op[x]))
    s = str(SORTS[int(T.sort[x])])
    if op in (Op.CONST, Op.INPUT):
        return f"{op.name}:{s}"
    m = mods(int(T.aux[x]))
    return f"{op.name}:{s}:{m}"


nodes = {a: dag(r) for a, r in roots.items()}
hist = {a: collections.Counter(label(x) for x in ns) for a, ns in nodes.items()}
print("shared nodes:", len(nodes["sm_90a"] & nodes["sm_80"]), "sm_90a only:", len(nodes["sm_90a"] - nodes["sm_80"]),
      "sm_80 only:", len(nodes["sm_80"] - nodes["sm_90a"]))
for a, b in (("sm_90a", "sm_80"), ("sm_80", "sm_90a")):
    print(f"-- node kinds of the {a} side's nodes that the {b} side does not share (count):")
    only = collections.Counter(label(x) for x in nodes[a] - nodes[b])
    for lab, n in only.most_common(25):
        print(f"   {n:6d}  {lab}")
for a in roots:
    mma = [x for x in nodes[a] if int(T.op[x]) == Op.MMA]
    parents = collections.Counter()
    for x in nodes[a]:
        for kd in T.kids(x) if int(T.op[x]) != Op.INPUT else ():
            if int(T.op[kd]) == Op.MMA:
                parents[label(x)] += 1
    print(f"{a}: {len(mma)} MMA nodes; kinds of their parents: {dict(parents)}")
    if mma:
        x = mma[0]
        print(f"   e.g. #{x} {label(x)} kids={len(T.kids(x))} acc kid: {label(T.kids(x)[0])}")
        print("   ", T.show(x, depth=3, limit=600))
N = Normalizer(T)
# where the two terms first differ below float operations of the same kind (the prover's own congruence walk),
# and each differing pair's normal forms (the whole procedure, on the pair's subterms)
pairs = N.congruence_pairs(roots["sm_90a"], roots["sm_80"], limit=10 ** 6) or []
kinds = collections.Counter((label(a), label(b)) for a, b in pairs)
print(f"congruence: {len(pairs)} differing subterm pairs; kinds:")
for (ka, kb), n in kinds.most_common(6):
    print(f"   {n:5d}  {ka[:60]} | {kb[:60]}")
if pairs:
    flat = N.of(np.array([x for p in pairs for x in p], np.int64))
    equal = [N.equal(flat[2 * j], flat[2 * j + 1]) for j in range(len(pairs))]
    print(f"pairs with equal normal forms: {sum(equal)} of {len(pairs)}")
    for j, (a, b) in enumerate(pairs[:2]):
        print(f"pair {j}: #{a} vs #{b}")
        if len(sys.argv) > 3:  # (describing sage's pair, its whole quotient, ran > 2 min CPU: not run on stop 44)
            print("   sm_90a:", N.describe(flat[2 * j], depth=2, limit=400))
            print("   sm_80: ", N.describe(flat[2 * j + 1], depth=2, limit=400))
if len(sys.argv) > 4:  # the whole normal forms of the element (slow: minutes), in full for a diff
    nf = dict(zip(roots, N.of(np.array(list(roots.values()), np.int64))))
    for a, x in nf.items():
        text = N.describe(x, depth=50, limit=10 ** 7)
        with open(f"{OUT}/nf_{a}.txt", "w") as f:
            f.write(text + "\n")
        print(f"{a}: normal form {len(text)} chars -> {OUT}/nf_{a}.txt")
    print("whole forms equal:", N.equal(nf["sm_90a"], nf["sm_80"]))
ru = resource.getrusage(resource.RUSAGE_SELF)
print(f"cpu={ru.ru_utime + ru.ru_stime:.1f} s maxrss={ru.ru_maxrss / 1024:.0f} MiB")
