"""`volta check` on the nvcc check corpus (tests/corpus/cuda/check, -O3 and -G builds): the share
of race_free / bug / inconclusive / unsupported / bad-input verdicts, and how many match the verdict
each kernel owes (its `// expect:` header).

    python bench/nvcc_corpus.py [--timeout 120] [--max-gib 4] [--json out.json] [--markdown out.md]
                                [--from-json old.json] [-k SUBSTRING]

Each check runs `python -m volta.cli check FILE --json` in its own child under a wall-clock limit
and an address-space cap (bench/limits.py), from this checkout. `--from-json` adds a column with
the verdicts of an earlier run (e.g. the code before a change), so "before" and "after" are
compared file by file; both runs' shares are printed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from limits import run_limited  # noqa: E402

#: Verdict classes of the share table, in print order.
CLASSES = ("race_free", "bug", "inconclusive", "unsupported", "bad_input", "crash")
BUGS = {"race", "out_of_bounds", "deadlock", "divergence", "uninitialized", "undefined_behavior", "trap"}


def verdict_class(verdict: str) -> str:
    head = verdict.split(":")[0].strip()
    if head in BUGS:
        return "bug"
    return head if head in CLASSES else "crash"


def check_one(path: Path, timeout: float, max_bytes: int) -> dict:
    cmd = [sys.executable, "-m", "volta.cli", "check", str(path), "--json", "--timeout", str(timeout)]
    m = run_limited(cmd, timeout + 30, max_bytes, cwd=str(ROOT))
    row = {"wall_s": round(m.wall_seconds, 2), "peak_mib": round(m.peak_rss_mib)}
    if m.timed_out or m.signal is not None:
        row.update(verdict=f"crash: {'wall-clock limit' if m.timed_out else m.signal_name}", exit=None)
    elif m.returncode == 2:
        row.update(verdict="bad_input: " + (m.stderr.strip().splitlines() or ["?"])[-1][:200], exit=2)
    else:
        try:
            rep = json.loads(m.stdout)
            row.update(verdict=rep["verdict"], exit=rep["exit_code"],
                       findings=[f["kind"] for f in rep.get("findings", [])])
        except (json.JSONDecodeError, KeyError):
            row.update(verdict="crash: " + (m.stderr.strip().splitlines() or ["no output"])[-1][:200],
                       exit=m.returncode)
    return row


def shares(rows: list[dict], key: str = "verdict") -> Counter:
    return Counter(verdict_class(r[key]) for r in rows if r.get(key) is not None)


def matches(expect: str, verdict: str) -> bool:
    return verdict.split(":")[0].strip() == expect


def table(rows: list[dict], before: dict | None) -> str:
    out = ["| kernel | build | expected | verdict" + (" | before" if before else "") + " | ok | s |",
           "|---|---|---|---" + ("|---" if before else "") + "|---|---|"]
    for r in rows:
        b = before.get(r["id"], {}).get("verdict", "-") if before else None
        out.append(f"| {r['stem']} | {r['flavour']} | {r['expect']} | {r['verdict'][:90]}"
                   + (f" | {b[:90]}" if before else "") + f" | {'yes' if r['ok'] else 'NO'} | {r['wall_s']} |")
    return "\n".join(out)


def share_line(name: str, c: Counter, n: int, ok: int) -> str:
    parts = ", ".join(f"{k} {c.get(k, 0)} ({100 * c.get(k, 0) / max(n, 1):.0f}%)" for k in CLASSES if c.get(k, 0)
                      or k in CLASSES[:4])
    return f"{name}: {n} checks: {parts}; {ok} of {n} match the expected verdict"


def detail_line(name: str, rows: list[dict], key: str = "verdict") -> str:
    """How far race_free verdicts reach, and the bug verdicts on kernels that owe race_free (false
    alarms) or the race_free verdicts on kernels with a bug (misses)."""
    only = sum(r[key].startswith("race_free: for the launch's input only") for r in rows)
    every = sum(r[key] == "race_free" for r in rows)
    false_bug = sum(r["expect"] == "race_free" and verdict_class(r[key]) == "bug" for r in rows)
    missed = sum(r["expect"] not in ("race_free", "bad_input") and verdict_class(r[key]) == "race_free"
                 for r in rows)
    return (f"{name}: race_free for every input {every}, for the launch's input only {only}; bug verdicts on "
            f"kernels that owe race_free {false_bug}; race_free on kernels with a bug {missed}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds of emulation per check")
    ap.add_argument("--max-gib", type=float, default=4.0, help="address-space cap of each check")
    ap.add_argument("--json", type=Path, help="write the rows here")
    ap.add_argument("--markdown", type=Path, help="write the table and the shares here")
    ap.add_argument("--from-json", type=Path, help="an earlier run to compare with (its verdicts as 'before')")
    ap.add_argument("-k", dest="pattern", help="only kernels whose name contains this")
    args = ap.parse_args()

    from tests.corpus.nvcc_check import generate_check_corpus

    cases = [c for c in generate_check_corpus() if args.pattern is None or args.pattern in c.stem]
    before = None
    if args.from_json:
        before = {r["id"]: r for r in json.loads(args.from_json.read_text())["rows"]}
    rows = []
    t0 = time.perf_counter()
    for c in cases:
        r = {"id": c.test_id, "stem": c.stem, "flavour": c.flavour, "expect": c.expect}
        r.update(check_one(c.path, args.timeout, int(args.max_gib * (1 << 30))))
        r["ok"] = matches(c.expect, r["verdict"])
        rows.append(r)
        print(f"{c.test_id:45s} expect {c.expect:14s} got {r['verdict'][:80]:80s} {r['wall_s']:7.1f}s", flush=True)
    n, ok = len(rows), sum(r["ok"] for r in rows)
    lines = [share_line("this run", shares(rows), n, ok)]
    for fl in ("O3", "G"):
        sub = [r for r in rows if r["flavour"] == fl]
        lines.append(share_line(f"  -{fl}", shares(sub), len(sub), sum(r["ok"] for r in sub)))
    lines.append(detail_line("this run", rows))
    if before:
        old = [dict(before[r["id"]], expect=r["expect"]) for r in rows if r["id"] in before]
        lines.append(share_line("before", shares(old), len(old), sum(matches(o["expect"], o["verdict"]) for o in old)))
        lines.append(detail_line("before", old))
    lines.append(f"total wall time {time.perf_counter() - t0:.0f} s")
    print("\n".join(lines))
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "summary": lines}, indent=1))
    if args.markdown:
        args.markdown.write_text(table(rows, before) + "\n\n" + "\n".join(f"- {x}" for x in lines) + "\n")


if __name__ == "__main__":
    main()
