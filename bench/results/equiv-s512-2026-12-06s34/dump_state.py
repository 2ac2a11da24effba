"""Run the S = 512 pair up to the output comparison and pickle (store, both sides) for compare_bench.py."""
import pickle, sys, time
from pathlib import Path

import proofs.prove as P

out = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/i11s512_state.pkl")
S = sys.argv[2] if len(sys.argv) > 2 else "512"
real = P.compare_outputs


def dump(T, cand, ref, **kw):
    with open(out, "wb") as f:
        import semantics.terms as st
        pickle.dump((list(st.SORTS), list(st._MODS), T, cand, ref), f, protocol=5)
    print("dumped", len(T), "nodes", flush=True)
    return real(T, cand, ref, **kw)


P.compare_outputs = dump
from volta.equiv_cli import run_equivalence

E = Path("examples/pairs/attention")
c0 = time.process_time()
r = run_equivalence(E / "fast.ptx", reference=E / "naive.ptx", launch_path=E / f"fast.s{S}.json",
                    reference_launch=E / f"naive.s{S}.json", timeout=3000)
print(r.verdict, "cpu", round(time.process_time() - c0, 2), r.stats["equivalence"].get("seconds"))
