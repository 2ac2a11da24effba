"""Certificates: the cost of writing one (`volta check ... --certificate DIR`) and of re-checking it
(`volta recheck DIR`, a fresh process without the executor), per verified case.

Each command runs as a child process under an address-space cap (bench/limits.py: wall and CPU time,
peak RSS). The baseline, measured in the same run, is the equivalence check itself: writing is timed
inside it (`stats.equivalence.seconds`: wall and CPU of write_certificate), re-checking is its own
process. Ratios are CPU seconds against the equivalence check's.

    python bench/certificates.py                        # every case, table on stdout
    python bench/certificates.py -k conv --out DIR      # some cases; DIR/certificates.{md,json}

Cases: the verified hand-written cases of tests/equivalence/cases and the verified pairs and candidates
of bench/equiv.py.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from equiv import CASES as EQUIV_CASES  # noqa: E402
from equiv import Case, _generated  # noqa: E402
from limits import load_average, parse_size, run_limited  # noqa: E402
from report import add_run_options, load_line, write_report  # noqa: E402

HAND = ROOT / "tests" / "equivalence" / "cases"


def _hand_cases() -> list[Case]:
    out = []
    for p in sorted(HAND.glob("*.ptx")):
        text = p.read_text()
        ref = re.search(r"^\s*//\s*reference\s*:\s*(\S+)", text, re.M)
        if ref and re.search(r"^\s*//\s*expect\s*:\s*verified", text, re.M):
            rel = str(p.relative_to(ROOT))
            out.append(Case(p.stem, ("--reference", str((HAND / ref.group(1)).relative_to(ROOT))), rel, "verified", ()))
    return out


@dataclass
class Row:
    case: str
    verdict: str
    obligations: dict
    lemmas: int
    size_kib: int
    check_wall_s: float
    check_cpu_s: float
    check_peak_mib: float
    write_wall_s: float
    write_cpu_s: float
    recheck: str
    recheck_wall_s: float
    recheck_cpu_s: float
    recheck_peak_mib: float


def _run(case: Case, timeout: float, cap: int) -> Row:
    with tempfile.TemporaryDirectory() as tmp:
        cert = Path(tmp) / "cert"
        cmd = [sys.executable, "-m", "volta.cli", "check", case.kernel, *_generated(case.args, Path(tmp)),
               "--certificate", str(cert), "--json", "-q"]
        m = run_limited(cmd, timeout, cap, cwd=str(ROOT))
        try:
            data = json.loads(m.stdout)
            verdict, eq = data["verdict"], data["stats"]["equivalence"]
        except (json.JSONDecodeError, KeyError):
            verdict = "timeout" if m.timed_out else f"crashed ({m.signal_name}): {m.stderr.strip()[-200:]}"
            eq = {}
        sec = eq.get("seconds", {})
        cinfo = eq.get("certificate", {})
        size = sum(f.stat().st_size for f in cert.rglob("*") if f.is_file()) // 1024 if cert.exists() else 0
        r = run_limited([sys.executable, "-m", "volta.cli", "recheck", str(cert), "--json"], timeout, cap,
                        cwd=str(ROOT)) if cert.exists() else None
        try:
            rc = json.loads(r.stdout) if r is not None else {}
            status = "ok" if rc.get("ok") else f"failed: {rc.get('failures', rc.get('error'))!s:.200}"
        except json.JSONDecodeError:
            status = "crashed" if r is not None else "no certificate"
        return Row(case.name, verdict, cinfo.get("counts", {}), cinfo.get("lemmas", 0), size,
                   round(m.wall_seconds, 1), round(m.cpu_seconds, 1), round(m.peak_rss_mib),
                   sec.get("certificate", 0.0), sec.get("certificate cpu", 0.0), status,
                   round(r.wall_seconds, 2) if r else 0.0, round(r.cpu_seconds, 2) if r else 0.0,
                   round(r.peak_rss_mib) if r else 0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-k", default=None, help="only cases whose name contains this text")
    ap.add_argument("--exclude", action="append", default=[], help="skip cases whose name contains this text")
    add_run_options(ap, name="certificates", max_memory="6G")
    a = ap.parse_args()
    cap = parse_size(a.max_memory)
    load0 = load_average()
    cases = _hand_cases() + [c for c in EQUIV_CASES if c.expect == "verified" and "S=512" not in c.name]
    rows = []
    for case in cases:
        if (a.k and a.k not in case.name) or any(x in case.name for x in a.exclude):
            continue
        r = _run(case, a.timeout, cap)
        rows.append(r)
        print(f"{r.case}: {r.verdict}; write {r.write_cpu_s} s CPU; recheck {r.recheck} {r.recheck_cpu_s} s CPU",
              flush=True)
    lines = [load_line(load0[0], load_average()[0]) + " Cap: " + a.max_memory + ".", "",
             "| case | verdict | obligations | lemmas | KiB | check wall / CPU s | peak MiB | write wall / CPU s "
             "| write/check CPU | recheck | recheck wall / CPU s | peak MiB | recheck/check CPU |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ob = ", ".join(f"{n} {k}" for k, n in sorted(r.obligations.items()))
        wr = f"{r.write_cpu_s / r.check_cpu_s:.2f}" if r.check_cpu_s else "-"
        rr = f"{r.recheck_cpu_s / r.check_cpu_s:.2f}" if r.check_cpu_s else "-"
        lines.append(f"| {r.case} | {r.verdict.split(':')[0]} | {ob} | {r.lemmas} | {r.size_kib} | {r.check_wall_s} / "
                     f"{r.check_cpu_s} | {r.check_peak_mib} | {r.write_wall_s} / {r.write_cpu_s} | {wr} | {r.recheck} | "
                     f"{r.recheck_wall_s} / {r.recheck_cpu_s} | {r.recheck_peak_mib} | {rr} |")
    write_report(a.out, a.name, "\n".join(lines), [asdict(r) for r in rows])
    return 0 if all(r.recheck == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
