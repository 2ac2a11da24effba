"""tests/test_equivalence_suite.py's cross-target proofs of the contracts named in argv[2:], pair by pair, the
test's way (one TermStore per contract, the reference's safety report once); writes per pair the outcome, the
suspect count and suspects, the proved element counts per buffer and method, the safety verdicts, and CPU
seconds of each phase, one JSON line per pair, to argv[1]."""
import inspect, json, sys, time

sys.path.insert(0, ".")
from harness.equivalence import triton_kernel  # noqa: E402
from proofs.prove import prove, safety_report  # noqa: E402
from semantics.terms import TermStore  # noqa: E402
from tests.test_equivalence_suite import CONTRACTS, _pairs  # noqa: E402

with open(sys.argv[1], "a") as out:
    for name in sys.argv[2:]:
        c = CONTRACTS[name]
        store = TermStore()
        ref_safety, ref_runs = {}, {}
        branch = "runs" in inspect.signature(prove).parameters
        if branch:  # the branch's test: the reference's run and normal forms made once, one normalizer for the store
            from proofs.normal import Normalizer
            N = Normalizer(store, keep_roots=True)
        c0 = time.process_time()
        for cand_arch, ref_arch in _pairs(name):
            p0 = time.process_time()
            ref = triton_kernel(c, ref_arch)
            if branch:
                rep = prove(triton_kernel(c, cand_arch, label="candidate"), ref, store, normalizer=N,
                            runs={ref.label: ref_runs[ref_arch]} if ref_arch in ref_runs else None)
                ref_runs.setdefault(ref_arch, (rep.checks[ref.label], rep.sides[ref.label]))
            else:  # base's test
                if ref_arch not in ref_safety:
                    ref_safety[ref_arch] = safety_report(ref)
                rep = prove(triton_kernel(c, cand_arch, label="candidate"), ref, store,
                            safety={ref.label: ref_safety[ref_arch]})
            r = rep.result
            row = {"contract": name, "pair": [cand_arch, ref_arch], "outcome": r.outcome.value, "reason": r.reason,
                   "suspect_count": r.suspect_count,
                   "suspects": [[s.buffer, s.element, s.why] for s in r.suspects],
                   "proofs": [[p.buffer, p.elements, p.methods] for p in r.proofs],
                   "checks": {k: v.verdict for k, v in rep.checks.items()},
                   "replicated": {k: s.replicated_stores_only for k, s in rep.sides.items()},
                   "instances": r.stats.get("instances"), "kept_roots": r.stats.get("kept_roots"),
                   "nf_nodes": r.stats.get("normal_form_nodes"),
                   "seconds": rep.seconds, "pair_cpu": round(time.process_time() - p0, 2), "store": len(rep.store)}
            out.write(json.dumps(row) + "\n")
            out.flush()
            print(json.dumps(row)[:600], flush=True)
        print(f"{name} total_cpu={time.process_time() - c0:.2f}", flush=True)
