"""one.py base|branch CASE: one regression case's report (stats.seconds aside) in a fresh process, as a digest, and
how many product_numbers calls it made; `base`: main's numbering put back (as reports_side.py)."""
import hashlib, json, re, subprocess, sys
from pathlib import Path
sys.path.insert(0, '.')
side, name = sys.argv[1:3]
import tcgen05  # noqa
import symexec.check.shadow as S
if side == "base":
    src = subprocess.run(["git", "show", "main:symexec/check/shadow.py"], capture_output=True, text=True, check=True).stdout
    exec(re.search(r"^def product_numbers\(.*?(?=^def )", src, re.S | re.M).group(0), vars(S))
    S.Tracker.fast_products = False
calls = [0]
pn = S.product_numbers
def counted(*a):
    calls[0] += 1
    return pn(*a)
S.product_numbers = counted
from volta.check_cli import check_file
j = check_file(Path('tests/regression') / f'{name}.ptx').to_json()
j.get("stats", {}).pop("seconds", None)
print(side, name, hashlib.sha256(json.dumps(j, sort_keys=True, default=str).encode()).hexdigest()[:16], "product_numbers calls", calls[0])
