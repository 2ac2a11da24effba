import json, sys, importlib.util, tempfile
from pathlib import Path
from volta.equiv_cli import run_equivalence
PAIRS = Path("examples/pairs")
rep = run_equivalence(PAIRS/"attention/fast.ptx", reference=PAIRS/"attention/naive.ptx",
    launch_path=PAIRS/"attention/fast.s512.json", reference_launch=PAIRS/"attention/naive.s512.json", timeout=3000)
print(rep.verdict, rep.notes[:3])
print(rep.stats.get("seconds"), {k: v for k, v in rep.stats.get("equivalence", {}).items() if k != "proofs"})
