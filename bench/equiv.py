"""Equivalence proofs: time and peak memory of `volta check --reference/--equivalence` per pair.

Each case runs as a child process under an address-space cap (bench/limits.py: wall and CPU time,
peak RSS of the child's tree). The baseline, measured in the same run, is the plain safety check of
the same candidate (`volta check` with its launch): the ratio is what the equivalence proof costs on
top of the check every candidate gets anyway.

    python bench/equiv.py                         # all cases, table on stdout
    python bench/equiv.py -k attention --out DIR   # some cases; DIR/equiv.{md,json}
    python bench/equiv.py -k matmul -k conv         # -k again: cases matching any of them

Cases: examples/pairs (matmul, conv, attention at S = 128 and 512, with their bug twins) and the
hand-written candidates of examples/candidates against Triton's build of their contract.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from limits import load_average, parse_size, run_limited  # noqa: E402
from report import add_run_options, load_line, write_report  # noqa: E402

P = "examples/pairs"
C = "examples/candidates"


@dataclass(frozen=True)
class Case:
    name: str
    args: tuple[str, ...]  # after `volta check KERNEL`
    kernel: str
    expect: str
    safety: tuple[str, ...]  # the baseline: the candidate's own launch for a plain check


def _pair(name: str, fast: str, naive: str, expect: str, fl: str | None = None, nl: str | None = None) -> Case:
    args = (["--launch", fl] if fl else []) + ["--reference", naive] + (["--reference-launch", nl] if nl else [])
    return Case(name, tuple(args), fast, expect, tuple(["--launch", fl] if fl else []))


def _cand(contract: str, path: str, expect: str, reference_arch: str | None = None) -> Case:
    """A candidate against Triton's build of its contract (`reference_arch`: that target's build instead of
    the one nearest the candidate's: Triton's sm_90a GEMM-like builds are wgmma kernels, unsupported in terms)."""
    ref = ("--reference-arch", reference_arch) if reference_arch else ()
    label = f"{contract} ({Path(path).name}" + (f" vs Triton {reference_arch})" if reference_arch else ")")
    return Case(label, ("--contract", contract, "--equivalence", *ref), path, expect, ("--contract", contract))


CASES = [
    _pair("matmul 128^3 tiled vs naive", f"{P}/matmul/fast.ptx", f"{P}/matmul/naive.ptx", "verified"),
    _pair("conv 16x32x32x16 tiled vs naive", f"{P}/conv/fast.ptx", f"{P}/conv/naive.ptx", "verified"),
    _pair("conv bug_halo_mask", f"{P}/conv/fast.bug_halo_mask.ptx", f"{P}/conv/naive.ptx", "not_equivalent",
          f"{P}/conv/fast.json"),
    _pair("attention S=128 flash vs naive", f"{P}/attention/fast.ptx", f"{P}/attention/naive.ptx", "verified",
          f"{P}/attention/fast.s128.json", f"{P}/attention/naive.s128.json"),
    # one key tile at S = 128: the missing rescale is harmless there (verified, rightly); S = 129 has two
    _pair("attention S=128 bug_no_rescale", f"{P}/attention/fast.bug_no_rescale.ptx", f"{P}/attention/naive.ptx",
          "verified", f"{P}/attention/fast.s128.json", f"{P}/attention/naive.s128.json"),
    _pair("attention S=129 bug_no_rescale", f"{P}/attention/fast.bug_no_rescale.ptx", f"{P}/attention/naive.ptx",
          "not_equivalent", "@fast.s129.json", "@naive.s129.json"),
    _pair("attention S=512 flash vs naive", f"{P}/attention/fast.ptx", f"{P}/attention/naive.ptx", "verified",
          f"{P}/attention/fast.s512.json", f"{P}/attention/naive.s512.json"),
    _cand("rowsum", f"{C}/rowsum/rowsum_warp_row.sm_80.ptx", "verified"),
    _cand("softmax", f"{C}/softmax/softmax_warp_row.sm_80.ptx", "verified"),
    _cand("layernorm", f"{C}/layernorm/layernorm_warp_row.sm_80.ptx", "verified"),
    _cand("rmsnorm", f"{C}/rmsnorm/rmsnorm_warp_row.sm_80.ptx", "verified"),
    # issue 11's five tricks: sign flips by bits (BitDelta), split-K with atomics, overlapping windows
    _cand("bitdelta", f"{C}/bitdelta/bitdelta_signflip.sm_90a.ptx", "verified"),
    _cand("bitdelta", f"{C}/bitdelta/bitdelta_signflip.bug_sign_set.sm_90a.ptx", "not_equivalent"),
    _cand("bitdelta", f"{C}/bitdelta/bitdelta_signflip.bug_fp16_acc.sm_90a.ptx", "not_equivalent"),
    # Triton's sm_90a gemm_accumulate, conv2d and bitdelta_batched are wgmma builds (no term meaning yet):
    # these candidates (mma.sync, valid on both targets) are compared with Triton's sm_80 build
    _cand("gemm_accumulate", f"{C}/gemm_accumulate/gemm_splitk.sm_80.ptx", "verified"),
    _cand("gemm_accumulate", f"{C}/gemm_accumulate/gemm_splitk.bug_skip_last_split.sm_90a.ptx", "not_equivalent",
          "sm_80"),
    _cand("conv2d", f"{C}/conv2d/conv2d_halo_mma.sm_80.ptx", "verified"),
    _cand("conv2d", f"{C}/conv2d/conv2d_halo_mma.bug_halo_mask.sm_90a.ptx", "not_equivalent", "sm_80"),
    _cand("bitdelta_batched", f"{C}/bitdelta_batched/bitdelta_batched_mma.sm_80.ptx", "verified"),
    _cand("dion_update", f"{C}/dion_update/dion_cta_fma.sm_90a.ptx", "verified"),
    _cand("cross_entropy_zloss", f"{C}/cross_entropy_zloss/ce_zloss_smem_row.sm_90a.ptx", "verified"),
]


@dataclass
class Row:
    case: str
    expect: str
    verdict: str
    wall_s: float
    cpu_s: float
    peak_mib: float
    check_wall_s: float
    check_cpu_s: float
    check_peak_mib: float

    @property
    def ok(self) -> bool:
        return self.verdict.split(":")[0] == self.expect


def _generated(args: tuple[str, ...], tmp: Path) -> list[str]:
    """`@NAME.sSIZE.json`: examples/pairs/launches.py's attention launch of that side and size, made here."""
    sys.path.insert(0, str(ROOT / P))
    import launches

    out = []
    for a in args:
        if a.startswith("@"):
            side, size, _ = a[1:].split(".")
            path = tmp / a[1:]
            path.write_text(json.dumps(launches.attention(int(size[1:]))[side]))
            a = str(path)
        out.append(a)
    return out


def _volta(kernel: str, args: tuple[str, ...], timeout: float, cap: int) -> tuple[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        # volta's own limit (wall-clock, default 600 s) set to the run's: under load it would stop first
        cmd = [sys.executable, "-m", "volta.cli", "check", kernel, *_generated(args, Path(tmp)), "--json", "-q",
               "--timeout", str(timeout)]
        m = run_limited(cmd, timeout, cap, cwd=str(ROOT))
    try:
        verdict = json.loads(m.stdout)["verdict"]
    except (json.JSONDecodeError, KeyError):
        verdict = "timeout" if m.timed_out else f"crashed ({m.signal_name}): {m.stderr.strip()[-200:]}"
    return verdict, m


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-k", action="append", default=None,
                    help="only cases whose name contains this text (repeat: any of them)")
    add_run_options(ap, name="equiv", max_memory="8G")
    a = ap.parse_args()
    cap = parse_size(a.max_memory)
    load0 = load_average()
    rows = []
    for case in CASES:
        if a.k and not any(k in case.name for k in a.k):
            continue
        verdict, m = _volta(case.kernel, case.args, a.timeout, cap)
        _, b = _volta(case.kernel, case.safety, a.timeout, cap)
        r = Row(case.name, case.expect, verdict, round(m.wall_seconds, 1), round(m.cpu_seconds, 1),
                round(m.peak_rss_mib), round(b.wall_seconds, 1), round(b.cpu_seconds, 1), round(b.peak_rss_mib))
        rows.append(r)
        print(f"{r.case}: {r.verdict} ({'as expected' if r.ok else 'expected ' + r.expect}) "
              f"{r.cpu_s} s CPU, {r.peak_mib} MiB", flush=True)
    lines = [load_line(load0[0], load_average()[0]), "",
             "| case | verdict | expected | equivalence wall / CPU s | peak MiB | check only wall / CPU s | peak MiB "
             "| CPU ratio |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ratio = f"{r.cpu_s / r.check_cpu_s:.1f}x" if r.check_cpu_s else "-"
        lines.append(f"| {r.case} | {r.verdict.split(':')[0]} | {r.expect} | {r.wall_s} / {r.cpu_s} | {r.peak_mib} | "
                     f"{r.check_wall_s} / {r.check_cpu_s} | {r.check_peak_mib} | {ratio} |")
    write_report(a.out, a.name, "\n".join(lines), [asdict(r) | {"verdict_full": r.verdict} for r in rows])
    return 0 if all(r.ok for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
