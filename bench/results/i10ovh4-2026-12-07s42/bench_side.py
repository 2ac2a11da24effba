"""bench_side.py base|branch ARGS...: bench/check_overhead.py ARGS from this tree; `base`: with main's value numbering
put back first (as reports_side.py and ab.py do)."""
import re, runpy, subprocess, sys
sys.path.insert(0, '.')
side = sys.argv.pop(1)
import symexec.check.shadow as S
if side == "base":
    src = subprocess.run(["git", "show", "main:symexec/check/shadow.py"], capture_output=True, text=True, check=True).stdout
    exec(re.search(r"^def product_numbers\(.*?(?=^def )", src, re.S | re.M).group(0), vars(S))
    S.Tracker.fast_products = False
sys.argv[0] = "bench/check_overhead.py"
runpy.run_path("bench/check_overhead.py", run_name="__main__")
