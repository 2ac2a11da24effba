"""reports_side.py OUT.json [base|branch]: check-overhead-2026-12-04/reports.py (every regression case's and sm_80 suite
kernel's full JSON report) from this tree; `base`: with main's value numbering put back first (Tracker.fast_products
False and main's product_numbers, as ab.py does; shadow.py is the only source file this branch changes)."""
import re, runpy, subprocess, sys
sys.path.insert(0, '.')
out, side = sys.argv[1], sys.argv[2]
import symexec.check.shadow as S
if side == "base":
    src = subprocess.run(["git", "show", "main:symexec/check/shadow.py"], capture_output=True, text=True, check=True).stdout
    ns = vars(S)
    exec(re.search(r"^def product_numbers\(.*?(?=^def )", src, re.S | re.M).group(0), ns)
    S.Tracker.fast_products = False
    assert S.product_numbers.__code__.co_filename == "<string>"
sys.argv = ["reports.py", out, "both"]
runpy.run_path("/work/main/bench/results/check-overhead-2026-12-04/reports.py", run_name="__main__")
