"""Verification time and peak memory per suite kernel, at the verify and bench instances, vs SentryWard.

    python bench/verify.py [--arch sm_90a sm_100a] [--instance verify|bench|both] [--timeout 600]
                           [--max-rss 16G] [--sentryward PATH] [--json PATH] [--markdown PATH]
                           [--scaling [NAMES...]] [names...]

Part 1: for each suite contract and target, the contract compiled at the instance
(harness.compile.compile_contract(c, arch, instance=...)), its launch (harness.emulate.launch_for)
and `symexec.check.check_kernel` in a child process, and SentryWard (a peer tool) on the same PTX
and launch. Both tools run under the same limits, measured the same way (bench/limits.py): a
wall-clock limit (--timeout; Volta's child also gets it as symexec.time_limit for the check, plus
--setup-grace seconds for making the inputs) and an address-space cap (--max-rss, RLIMIT_AS in the
child; SentryWard is also given it as --memory-limit-mib). Peak RSS is ru_maxrss of the child's
process tree (os.wait4); times are each tool's own analysis time (Volta: parse + load + check,
inputs excluded; SentryWard: its `elapsed_seconds`), process wall and CPU times are in the JSON.
A run that is killed, runs out of memory (MemoryError, a failed allocation, a kill by signal) or
out of time is a row like any other, with the limit it hit: nothing is skipped.

The verify instances (default) are small; the bench instances are the full-size problems the
GPU benchmarks time (e.g. 8192^3 GEMMs) and are opt-in: --instance bench|both.

Part 2 (grid scaling, first --arch only): the verify instance with the grid scaled to 1, 4, 16,
256 and 1024 CTAs (a problem dimension that drives the grid is scaled), Volta only; `--no-scaling`
(or `--scaling` with no names) skips it. `--scaling` takes every name after it: put it last.

SentryWard is installed apart (python -m venv /tmp/sw && /tmp/sw/bin/pip install sentryward);
without it Part 1 reports Volta alone and says so. Its input (undocumented; see
bench/results/verify-2026-12-01/README.md) declares pointers as distinct global objects, every
scalar with its concrete value and, for TMA kernels, one `tma_descriptors` entry per CUtensorMap
parameter built from the same TensorMap the emulator's launch uses.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import shutil
import sys
import tempfile
import time
import traceback
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from limits import Measured, load_average, mem_available_mib, parse_size, run_limited

DEFAULT_ARCHES = ("sm_90a", "sm_100a")
DEFAULT_TIMEOUT = 600.0
DEFAULT_MAX_RSS = "16G"
SETUP_GRACE = 300.0
STAGE = "volta-bench stage:"  # the child's progress markers on stderr
SW_DECIDED = {"race_free", "verified", "potential_race", "not_wellsynced", "invalid_lifecycle"}


# ---------------------------------------------------------------------------------------- child

def _stage(name: str) -> None:
    print(f"{STAGE} {name}", file=sys.stderr, flush=True)


def _vm_peak_mib() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmPeak:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def _volta_one(name: str, arch: str, instance: str, scale: int, timeout: float) -> dict:
    """In the child: check one kernel at one instance; verdict, check time, grid method."""
    import resource

    out: dict = {"status": "error", "stage": "setup"}
    try:
        _stage("setup")
        import ptx_parser
        from harness.compile import compile_contract
        from harness.emulate import launch_for
        from harness.suite import get
        from symexec import Unsupported, load_program, time_limit
        from symexec.check import check_kernel

        t_setup = time.perf_counter()
        c = get(name)
        compiled = compile_contract(c, arch, instance=instance)
        _stage("inputs")
        out["stage"] = "inputs"
        if scale:
            launch = _scaled(c, compiled, scale, instance)
        else:
            arrays = c.make_inputs(instance, "normal", 0, lazy=True)
            launch = launch_for(c, compiled, arrays, instance)
            del arrays
        out["setup_seconds"] = time.perf_counter() - t_setup
        out["ctas"] = launch.num_ctas
        out["grid"] = list(launch.grid)
        out["buffer_mib"] = sum(a.nbytes for a in launch.buffers.values()) / 2**20
        _stage("check")
        out["stage"] = "check"
        t0 = time.perf_counter()
        c0 = time.process_time()
        try:
            module = ptx_parser.parse(compiled.ptx, f"{name}.ptx")
            prog = load_program(module, compiled.entry)
            with time_limit(timeout):
                report = check_kernel(prog, launch)
            verdict = report.verdict
            method = str(report.stats.get("grid_method", "enumerate"))
            out["findings"] = [f"{f.kind.value}: {f.message}"[:300] for f in report.findings[:3]]
            out["notes"] = [n[:300] for n in report.notes[:4]]
            out["loops_summarised"] = report.stats.get("loops_summarised")
        except Unsupported as e:  # refused while loading, as `volta check` reports it
            verdict, method = f"unsupported: {str(e).removeprefix('unsupported: ')}", "none (not loaded)"
        out["seconds"] = time.perf_counter() - t0
        out["cpu_seconds"] = time.process_time() - c0
        out.update(verdict=verdict, grid_method=method, status="ok")
        if verdict.startswith("inconclusive") and "time limit of" in verdict:
            out["status"] = "timeout"
    except MemoryError as e:
        out.update(status="out_of_memory", detail=f"MemoryError: {e}"[:400])
    except Exception as e:  # noqa: BLE001 - reported as the row's verdict
        tb = traceback.format_exc(limit=3)
        oom = "bad_alloc" in tb or "Cannot allocate memory" in tb or "out of memory" in tb.lower()
        out.update(status="out_of_memory" if oom else "error", detail=f"{type(e).__name__}: {e}"[:400])
    out["self_peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["vm_peak_mib"] = _vm_peak_mib()
    return out


def _scaled(c, compiled, target_ctas: int, instance: str = "verify"):
    """The contract at its verify instance with one grid-driving dimension scaled so the grid has
    `target_ctas` CTAs (or as close as that dimension allows)."""
    from harness.emulate import launch_for

    base = c.resolve(instance)
    n0 = base.grid[0] * base.grid[1] * base.grid[2]
    best = None
    for dim, v in base.dims.items():
        for value in sorted({max(1, (v * m) // 16) for m in range(1, 16 * 64)} | {v * m for m in range(64, 4097, 64)}):
            dims = dict(base.dims, **{dim: value})
            c.instances["_scaled"] = dims
            try:
                r = c.resolve("_scaled")
            except Exception:  # noqa: BLE001, S112 - an invalid scaling: try another
                continue
            n = r.grid[0] * r.grid[1] * r.grid[2]
            if n >= target_ctas and (best is None or n < best[0]):
                best = (n, dims)
            if n >= target_ctas:
                break
        if best is not None and best[0] == target_ctas:
            break
    if best is not None:
        c.instances["_scaled"] = best[1]
        arrays = c.make_inputs("_scaled", "normal", 0, lazy=True)
        return launch_for(c, compiled, arrays, "_scaled")
    raise ValueError(f"{c.name}: no dimension scales the grid to {target_ctas} CTAs (base {n0})")


# ------------------------------------------------------------------------------------ measuring

def _limits_text(timeout: float, max_bytes: int) -> str:
    return f"{timeout:g} s, {max_bytes / 2**30:g} GiB"


def volta(name: str, arch: str, instance: str, scale: int, timeout: float, max_bytes: int,
          grace: float = SETUP_GRACE) -> dict:
    """volta check of one kernel in a child under the limits; the child's record plus the
    measurement (wall/CPU/peak RSS of the child) and a status: ok, timeout, out_of_memory, error."""
    m = run_limited([sys.executable, __file__, "--one", name, arch, instance, str(scale), repr(timeout)],
                    timeout + grace, max_bytes, cwd=str(ROOT), env=dict(os.environ, PYTHONWARNINGS="ignore"))
    rec: dict = {}
    for line in reversed(m.stdout.strip().splitlines()):
        try:
            rec = json.loads(line)
            break
        except json.JSONDecodeError:
            continue
    stages = [ln.split(STAGE, 1)[1].strip() for ln in m.stderr.splitlines() if STAGE in ln]
    rec.setdefault("stage", stages[-1] if stages else "start")
    if not rec.get("status"):
        tail = m.stderr.strip()[-300:]
        if m.timed_out:
            rec.update(status="timeout", detail=f"killed at the wall-clock limit ({timeout + grace:g} s with setup)")
        elif m.signal is not None or "MemoryError" in tail or "bad_alloc" in tail:
            rec.update(status="out_of_memory", detail=_killed_detail(m, max_bytes) + f": {tail}")
        else:
            rec.update(status="error", detail=f"rc={m.returncode}: {tail}")
    rec.update(wall_seconds=m.wall_seconds, cpu_seconds=m.cpu_seconds, peak_rss_mib=m.peak_rss_mib,
               killed_by=m.signal_name or None)
    if rec["status"] == "timeout" and "seconds" not in rec:
        rec["seconds"] = m.wall_seconds
    rec["label"] = _volta_label(rec, timeout, max_bytes)
    return rec


def _killed_detail(m: Measured, max_bytes: int) -> str:
    """Why a child ended without a report: under RLIMIT_AS a failed allocation in native code
    aborts (SIGABRT, or SIGSEGV); SIGKILL that is not ours comes from the kernel's OOM killer (the
    machine, not the cap, ran out of memory)."""
    if m.signal == 9 and not m.timed_out:
        return (f"killed by SIGKILL, not by the benchmark: the kernel's OOM killer (machine memory; "
                f"MemAvailable now {mem_available_mib():.0f} MiB)")
    if m.signal is not None:
        return f"ended by {m.signal_name} (address space capped at {max_bytes / 2**30:g} GiB: a failed allocation)"
    return f"a failed allocation (address space capped at {max_bytes / 2**30:g} GiB)"


def _volta_label(rec: dict, timeout: float, max_bytes: int) -> str:
    st = rec["status"]
    if st == "ok":
        return str(rec.get("verdict"))
    if st == "timeout":
        return f"timeout (> {timeout:g} s, during {rec.get('stage')})"
    if st == "out_of_memory":
        if str(rec.get("detail", "")).startswith("killed by SIGKILL, not by the benchmark"):
            return f"out of memory (machine: OOM killer, during {rec.get('stage')})"
        return f"out of memory (cap {max_bytes / 2**30:g} GiB, during {rec.get('stage')})"
    return f"error ({rec.get('stage')}): {rec.get('detail', '')}"


_SW_TYPES = {"b32": "u32", "b64": "u64", "b16": "u16", "b8": "u8"}
_SW_ELEM = {"uint8": "u8", "uint16": "u16", "uint32": "u32", "int32": "s32", "uint64": "u64", "int64": "s64",
            "float16": "f16", "float32": "f32", "float64": "f64", "bfloat16": "bf16", "tfloat32": "tf32",
            "16u4_align8b": "16u4_align8b", "16u4_align16b": "16u4_align16b"}
_SW_SWIZZLE = {"NONE": "none", "B32": "32B", "B64": "64B", "B128": "128B", "B128_ATOM_32B": "128B_atom32B",
               "B128_ATOM_64B": "128B_atom64B"}
_SW_FILL = {"ZERO": "zero", "NAN_REQUEST_ZERO_FMA": "nan"}


class PeerInputUnsupported(ValueError):
    """The launch has something SentryWard's input format cannot state."""


def sentryward_input(c, compiled, instance: str) -> dict:
    """SentryWard's kernel-input JSON for the same PTX and launch as Volta's (launch_for): every
    pointer a distinct global object, every scalar (tensor-descriptor shapes and strides too) with
    its concrete value, and a `tma_descriptors` entry per CUtensorMap parameter, from the same
    TensorMap the emulator's launch passes (harness.emulate.descriptor_map)."""
    from harness.compile import DescPart
    from harness.contract import TensorDesc
    from harness.emulate import _desc_part

    r = c.resolve(instance)
    descs = {a.name: a for a in c.args if isinstance(a, TensorDesc)}
    maps = dict(zip(descs, compiled.tensordesc))
    decls, args, tma = [], [], []
    for p in compiled.params:
        if p.arg is None:  # Triton's hidden scratch pointers: may stay undeclared (no scratch in use)
            if compiled.global_scratch_size:
                raise PeerInputUnsupported("global scratch (device-side tensor maps)")
            continue
        if p.part is DescPart.TENSOR_MAP:
            tm = _desc_part(c, descs[p.arg], p.part, p.index, r.shapes[p.arg], maps.get(p.arg))
            elem = _SW_ELEM.get(tm.dtype.value)
            swz = _SW_SWIZZLE.get(tm.swizzle.name)
            if elem is None or swz is None or tm.interleave.name != "NONE":
                raise PeerInputUnsupported(f"tensor map {p.arg}: {tm.dtype.value}, {tm.swizzle.name}, "
                                           f"{tm.interleave.name}")
            decls.append({"parameter": p.name, "name": f"{p.arg}_map", "type": "tensor_map"})
            tma.append({"parameter": p.name, "object": p.arg, "rank": len(tm.global_dims),
                        "element_type": elem, "global_shape": list(tm.global_dims),
                        "global_strides_bytes": list(tm.global_strides), "box_shape": list(tm.box_dims),
                        "element_strides": list(tm.element_strides or (1,) * len(tm.global_dims)),
                        "interleave": "none", "swizzle": swz, "oob_fill": _SW_FILL[tm.oob_fill.name]})
            continue
        if p.part is not None:
            field = f"{p.arg}_{p.part.value}{p.index}"
            if p.part is DescPart.BASE:
                decls.append({"parameter": p.name, "name": field, "type": "pointer", "space": "global",
                              "object": p.arg})
                continue
            value = _desc_part(c, descs[p.arg], p.part, p.index, r.shapes[p.arg], maps.get(p.arg))
        elif p.is_pointer:
            decls.append({"parameter": p.name, "name": p.arg, "type": "pointer", "space": "global", "object": p.arg})
            continue
        else:
            field, value = p.arg, r.scalars[p.arg]
        ty = p.ptx_type.lstrip(".")
        ty = _SW_TYPES.get(ty, ty)
        decls.append({"parameter": p.name, "name": field, "type": ty})
        args.append({"field": field, "value": value})
    spec = {"schema": "spverify.kernel-input/v1", "entry": compiled.entry,
            "launch": {"grid_dim": list(r.grid), "block_dim": [compiled.threads_per_block, 1, 1],
                       "dynamic_shared_bytes": compiled.shared},
            "declarations": decls, "arguments": args}
    if tma:
        spec["tma_descriptors"] = tma
    return spec


def sentryward(sw: str, c, compiled, instance: str, timeout: float, max_bytes: int) -> dict:
    """SentryWard on the same PTX and launch under the same limits (its own --timeout and
    --memory-limit-mib too, so it can answer timeout/memory_budget_exceeded itself)."""
    try:
        spec = sentryward_input(c, compiled, instance)
    except PeerInputUnsupported as e:
        return {"status": "unsupported_input", "result": None, "label": f"peer: unsupported input ({e})"}
    with tempfile.TemporaryDirectory() as tmp:
        ptx = Path(tmp) / f"{c.name}.ptx"
        ptx.write_text(compiled.ptx)
        inp = Path(tmp) / "input.json"
        inp.write_text(json.dumps(spec))
        m = run_limited([sw, str(ptx), "--input", str(inp), "--timeout", f"{timeout:g}",
                         "--memory-limit-mib", str(max_bytes // 2**20)], timeout + 60, max_bytes, cwd=tmp)
    rec = _sw_record(m, timeout, max_bytes)
    rec["input_sha256"] = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]
    return rec


def _sw_record(m: Measured, timeout: float, max_bytes: int) -> dict:
    rec: dict = {"wall_seconds": m.wall_seconds, "cpu_seconds": m.cpu_seconds, "peak_rss_mib": m.peak_rss_mib,
                 "returncode": m.returncode, "killed_by": m.signal_name or None}
    try:
        out = json.loads(m.stdout)
    except json.JSONDecodeError:
        out = None
    if m.timed_out:
        rec.update(status="timeout", result=None, seconds=m.wall_seconds,
                   label=f"killed at the wall-clock limit ({timeout + 60:g} s)")
        return rec
    if not isinstance(out, dict):
        oom = m.signal is not None or "MemoryError" in m.stderr or "bad_alloc" in m.stderr
        rec.update(status="out_of_memory" if oom else "error", result=None,
                   detail=(_killed_detail(m, max_bytes) if oom else "") + f": {m.stderr.strip()[-300:]}",
                   label=(f"out of memory (cap {max_bytes / 2**30:g} GiB, {m.signal_name or 'failed allocation'})"
                          if oom else f"error rc={m.returncode}: {m.stderr.strip()[-160:]}"))
        return rec
    result = str(out.get("result"))
    diags = out.get("diagnostics") or []
    rec.update(result=result, seconds=out.get("elapsed_seconds", m.wall_seconds),
               self_peak_rss_mib=out.get("peak_rss_mib"),
               diagnostics=[{"code": d.get("code"), "message": str(d.get("message", ""))[:200]}
                            for d in diags[:4] if isinstance(d, dict)])
    rec["status"] = {"timeout": "timeout", "memory_budget_exceeded": "out_of_memory",
                     "allocation_failed": "out_of_memory"}.get(result, "ok")
    first = diags[0] if diags and isinstance(diags[0], dict) else {}
    why = first.get("code") or ""
    if result == "unsupported" and first.get("message"):
        why = f"{why}: {first['message']}"
    rec["label"] = result + (f" ({why})" if why and result not in SW_DECIDED else "")
    if rec["status"] == "timeout":
        rec["label"] = f"timeout (> {timeout:g} s)"
    elif rec["status"] == "out_of_memory":
        rec["label"] = f"{result} (cap {max_bytes / 2**30:g} GiB)"
    return rec


def repeated(run, n: int) -> dict:
    """``run()`` once, and n-1 more times when it finished: the record of the fastest run, with every
    run's time (``samples_s``) and the largest peak RSS of all (``peak_rss_mib``)."""
    first = run()
    if n <= 1 or first.get("status") != "ok":
        return first
    runs = [first] + [run() for _ in range(n - 1)]
    ok = [r for r in runs if r.get("status") == "ok" and isinstance(r.get("seconds"), (int, float))]
    best = dict(min(ok, key=lambda r: r["seconds"])) if ok else dict(first)
    best["samples_s"] = [r.get("seconds") for r in runs]
    best["samples_peak_rss_mib"] = [r.get("peak_rss_mib") for r in runs]
    best["peak_rss_mib"] = max(r.get("peak_rss_mib") or 0 for r in runs)
    labels = {r.get("label") for r in runs}
    if len(labels) > 1:
        best["label_differs_between_runs"] = sorted(map(str, labels))
    return best


# -------------------------------------------------------------------------------------- output

def _cell(text, width: int = 70) -> str:
    s = str(text).replace("|", "\\|").replace("\n", " ")
    return s if len(s) <= width else s[: width - 1] + "…"


def _num(v, fmt: str = ".2f") -> str:
    return format(v, fmt) if isinstance(v, (int, float)) and math.isfinite(v) else "-"


def agreement(v: dict, s: dict) -> str:
    """yes/no where both tools decided: Volta race_free/verified vs SentryWard race_free/verified,
    a Volta bug verdict vs potential_race/not_wellsynced/invalid_lifecycle; '-' otherwise."""
    if not _volta_decided(v) or s.get("result") not in SW_DECIDED:
        return "-"
    volta_ok = str(v.get("verdict")).split(":")[0] in ("race_free", "verified")
    return "yes" if volta_ok == (s["result"] in ("race_free", "verified")) else "no"


def _ratio(x: float | None, decided: bool) -> str:
    """'1.23x'; in parentheses where a tool's answer was unsupported/inconclusive (not in the mean)."""
    if x is None:
        return "-"
    return f"{x:.2f}x" if decided else f"({x:.2f}x)"


def _shown_seconds(rec: dict) -> float | None:
    """A finished run: the tool's analysis time; one that ran out of time or memory or failed: the
    wall time of its process until then (Volta's includes making the inputs)."""
    return rec.get("seconds") if rec.get("status") == "ok" else rec.get("wall_seconds", rec.get("seconds"))


def _volta_decided(v: dict) -> bool:
    return v.get("status") == "ok" and not str(v.get("verdict", "")).startswith(("unsupported", "inconclusive"))


def ratios(rec: dict) -> tuple[float | None, float | None]:
    """Volta / SentryWard time and memory where both finished (a verdict within the limits)."""
    v, s = rec["volta"], rec.get("sentryward") or {}
    if v.get("status") != "ok" or s.get("status") != "ok":
        return None, None
    t = v["seconds"] / s["seconds"] if s.get("seconds") else None
    mem = v["peak_rss_mib"] / s["peak_rss_mib"] if s.get("peak_rss_mib") else None
    return t, mem


def markdown_table(records: list[dict], instance: str, arch: str, timeout: float, max_bytes: int,
                   have_sw: bool, sw_note: str) -> str:
    rows = [r for r in records if r["instance"] == instance and r["arch"] == arch]
    lines = [f"### {instance} instance, {arch} (limits per run: {_limits_text(timeout, max_bytes)})", ""]
    if not have_sw:
        lines += [f"SentryWard: {sw_note}", ""]
    lines += [("| kernel | CTAs | Volta verdict | Volta s | Volta MiB | grid method | SentryWard result | SW s "
               "| SW MiB | time V/SW | mem V/SW | agree |"),
              "|---|--:|---|--:|--:|---|---|--:|--:|--:|--:|---|"]
    tr, mr = [], []
    for r in rows:
        v, s = r["volta"], r.get("sentryward") or {}
        t, m = ratios(r)
        decided = _volta_decided(v) and s.get("result") in SW_DECIDED
        if t is not None and decided:
            tr.append(t)
        if m is not None and decided:
            mr.append(m)
        method = str(v.get("grid_method", "-")).split(" (")[0]
        lines.append("| " + " | ".join([
            r["contract"], str(r.get("ctas", "-")), _cell(v["label"]), _num(_shown_seconds(v)),
            _num(v.get("peak_rss_mib"), ".0f"), method, _cell(s.get("label", "-") if have_sw else "-", 60),
            _num(_shown_seconds(s)), _num(s.get("peak_rss_mib"), ".0f"),
            _ratio(t, decided), _ratio(m, decided), agreement(v, s)]) + " |")
    def gm(xs: list[float]) -> float:
        return math.exp(sum(map(math.log, xs)) / len(xs))
    lines.append("")
    if tr:
        lines.append(f"Geometric mean Volta/SentryWard over the {len(tr)} kernels both decided (a verdict other "
                     f"than unsupported/inconclusive): time {gm(tr):.2f}x" + (f", memory {gm(mr):.2f}x" if mr else "")
                     + "; ratios in parentheses: one tool's answer was unsupported/inconclusive.")
    else:
        lines.append("No kernel decided by both tools: no geometric mean.")
    lines.append("Times: the tool's analysis time where it finished (Volta: parse + load + check; SentryWard: its "
                 "elapsed_seconds); where it hit a limit or failed, its process's wall time until then. MiB: peak "
                 "RSS of the tool's process tree.")
    loads = [r["load_average"][0] for r in rows if r.get("load_average")]
    if loads:
        lines.append(f"1-minute load average at the start of each kernel: {min(loads):.1f} to {max(loads):.1f} "
                     f"({os.cpu_count()} CPUs)")
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["volta"]["status"]] = counts.get(r["volta"]["status"], 0) + 1
    lines.append("Volta status counts: " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------- main

def _cap(arch: str) -> int:
    return int("".join(ch for ch in arch[3:] if ch.isdigit()))


def _sentryward_state(path: str) -> tuple[bool, str]:
    p = Path(path)
    if not p.exists():
        return False, (f"not found at {path} (install: python -m venv /tmp/sw && /tmp/sw/bin/pip install "
                       "sentryward); Volta's numbers alone")
    return True, f"{path}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--arch", nargs="+", default=list(DEFAULT_ARCHES))
    ap.add_argument("--instance", choices=("verify", "bench", "both"), default="verify")
    ap.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per run (default 600)")
    ap.add_argument("--max-rss", default=DEFAULT_MAX_RSS, help="address-space cap per run (default 16G)")
    ap.add_argument("--setup-grace", type=float, default=SETUP_GRACE,
                    help="extra wall-clock seconds for Volta's child to make the inputs (default 300)")
    ap.add_argument("--sentryward", default=shutil.which("sentryward") or "/tmp/sw/bin/sentryward")
    ap.add_argument("--no-sentryward", action="store_true")
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs per tool and kernel when the first finishes (time: the fastest; memory: the largest)")
    ap.add_argument("--json", help="write the records here (after every kernel)")
    ap.add_argument("--resume", action="store_true",
                    help="keep the records already in --json and measure only the kernels missing there")
    ap.add_argument("--markdown", help="write the tables here too")
    ap.add_argument("--scaling", nargs="*", default=["relu", "softmax", "layernorm", "gemm_fp16", "flash_attention"],
                    help="Part 2's contracts (default: relu softmax layernorm gemm_fp16 flash_attention); it takes "
                         "every name after it, so put it after the kernels' names; with no names: skip Part 2")
    ap.add_argument("--no-scaling", dest="scaling", action="store_const", const=[], help="skip Part 2")
    ap.add_argument("--render", metavar="JSON", help="print the tables of saved records; measure nothing")
    ap.add_argument("--one", nargs=5, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        name, arch, instance, scale, timeout = args.one
        print(json.dumps(_volta_one(name, arch, instance, int(scale), float(timeout))))
        return 0
    if args.render:
        return render(args.render, args.markdown)

    from harness.compile import compile_contract, parse_arch
    from harness.suite import all_contracts

    for a in args.arch:
        parse_arch(a)
    max_bytes = parse_size(args.max_rss)
    timeout = args.timeout
    instances = ("verify", "bench") if args.instance == "both" else (args.instance,)
    have_sw, sw_note = (False, "not run (--no-sentryward)") if args.no_sentryward else _sentryward_state(args.sentryward)
    known = {c.name for c in all_contracts()}
    unknown = [n for n in args.names if n not in known]
    if unknown:
        ap.error(f"unknown kernels: {', '.join(unknown)}")
    started = time.time()
    header = {"started": time.strftime("%Y-%m-%d %H:%M:%S %z", time.localtime(started)), "host": platform.node(),
              "commit": _commit(), "root": str(ROOT),
              "cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
              "load_average_start": load_average(), "mem_available_mib_start": mem_available_mib(),
              "timeout_s": timeout, "max_rss_bytes": max_bytes, "setup_grace_s": args.setup_grace,
              "arches": args.arch, "instances": list(instances), "sentryward": sw_note if have_sw else None,
              "argv": sys.argv[1:]}
    print(f"# volta check vs SentryWard ({', '.join(args.arch)}; {', '.join(instances)} instance(s); "
          f"limits per run {_limits_text(timeout, max_bytes)}; load average {header['load_average_start']})\n")
    if not have_sw:
        print(f"SentryWard: {sw_note}\n")
    records: list[dict] = []
    done: set[tuple[str, str, str]] = set()
    if args.resume and args.json and Path(args.json).exists():
        old = json.loads(Path(args.json).read_text())
        records = [r for r in old["records"] if r["instance"] in ("verify", "bench")]
        done = {(r["contract"], r["arch"], r["instance"]) for r in records}
        header["resumed_from"] = old["header"]
        print(f"resuming: {len(done)} records kept from {args.json}\n", file=sys.stderr)

    def save() -> None:
        if args.json:
            Path(args.json).write_text(json.dumps({"header": header, "records": records}, indent=1, default=str))

    tables = []
    for instance in instances:
        for arch in args.arch:
            for c in all_contracts():
                if args.names and c.name not in args.names or _cap(arch) < c.min_arch:
                    continue
                if (c.name, arch, instance) in done:
                    continue
                rec: dict = {"contract": c.name, "arch": arch, "instance": instance,
                             "load_average": load_average(), "mem_available_mib": mem_available_mib()}
                try:
                    compiled = compile_contract(c, arch, instance=instance)
                except Exception as e:  # noqa: BLE001 - a row that says so
                    rec["volta"] = {"status": "error", "label": f"compile error: {e}"[:300]}
                    records.append(rec)
                    save()
                    continue
                res = c.resolve(instance)
                rec.update(ctas=res.grid[0] * res.grid[1] * res.grid[2], grid=list(res.grid),
                           threads_per_block=compiled.threads_per_block, shared_bytes=compiled.shared,
                           ptx_sha256=hashlib.sha256(compiled.ptx.encode()).hexdigest()[:16],
                           tensor_mib=sum(math.prod(s) * _elem_bytes(c, t) for t, s in res.shapes.items()) / 2**20)
                print(f"  {instance} {arch} {c.name} ({rec['ctas']} CTAs): volta ...", end="", flush=True,
                      file=sys.stderr)
                rec["volta"] = repeated(partial(volta, c.name, arch, instance, 0, timeout, max_bytes,
                                                args.setup_grace), args.repeat)
                print(f" {rec['volta']['label'][:50]} {_num(rec['volta'].get('seconds'))}s", end="", flush=True,
                      file=sys.stderr)
                if have_sw:
                    print("; SentryWard ...", end="", flush=True, file=sys.stderr)
                    rec["sentryward"] = repeated(partial(sentryward, args.sentryward, c, compiled, instance,
                                                         timeout, max_bytes), args.repeat)
                    print(f" {rec['sentryward']['label'][:50]} {_num(rec['sentryward'].get('seconds'))}s", end="",
                          file=sys.stderr)
                print(file=sys.stderr, flush=True)
                t, m = ratios(rec)
                rec["ratio_time"], rec["ratio_memory"] = t, m
                records.append(rec)
                save()
            table = markdown_table(records, instance, arch, timeout, max_bytes, have_sw, sw_note)
            tables.append(table)
            print(table, flush=True)

    if args.scaling:
        table = scaling_table(args.scaling, args.arch[0], timeout, max_bytes, args.setup_grace, records)
        tables.append(table)
        print(table, flush=True)
    header["finished"] = time.strftime("%Y-%m-%d %H:%M:%S %z")
    header["load_average_end"] = load_average()
    save()
    if args.markdown:
        Path(args.markdown).write_text("\n".join(tables))
    return 0


def _commit() -> dict:
    """The code measured: $VOLTA_COMMIT (a snapshot made with git archive) or git's HEAD and the
    paths that differ from it."""
    import subprocess

    if os.environ.get("VOLTA_COMMIT"):
        return {"head": os.environ["VOLTA_COMMIT"], "source": "VOLTA_COMMIT (snapshot)"}
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return {"head": "unknown"}
    return {"head": head.stdout.strip(), "modified": [ln[3:] for ln in dirty.stdout.splitlines()]}


def render(path: str, markdown: str | None) -> int:
    """The tables of a saved run (--json), without measuring."""
    data = json.loads(Path(path).read_text())
    h = data["header"]
    timeout, max_bytes = h["timeout_s"], h["max_rss_bytes"]
    have_sw = bool(h.get("sentryward"))
    recs = data["records"]
    tables = [markdown_table(recs, inst, arch, timeout, max_bytes, have_sw, "not run")
              for inst in h["instances"] for arch in h["arches"]
              if any(r["instance"] == inst and r["arch"] == arch for r in recs)]
    text = "\n".join(tables)
    print(text)
    if markdown:
        Path(markdown).write_text(text)
    return 0


def _elem_bytes(c, tensor: str) -> int:
    from harness import dtypes

    t = next(t for t in c.tensors if t.name == tensor)
    return max(1, dtypes.dtype(t.dtype).bits // 8)


def scaling_table(names: list[str], arch: str, timeout: float, max_bytes: int, grace: float,
                  records: list[dict]) -> str:
    sizes = (1, 4, 16, 256, 1024)
    lines = [(f"### Grid scaling, volta check, {arch} (grid=auto: every CTA up to 64, a symbolic CTA pair above; "
              f"limits per run {_limits_text(timeout, max_bytes)})"), "",
             "| kernel | " + " | ".join(f"{k} CTAs" for k in sizes) + " | 1024/16 time |",
             "|---|" + "--:|" * (len(sizes) + 1)]
    for name in names:
        cells, times = [], []
        for k in sizes:
            v = volta(name, arch, "verify", k, timeout, max_bytes, grace)
            records.append({"contract": name, "arch": arch, "instance": f"verify scaled to {k} CTAs",
                            "ctas": v.get("ctas"), "volta": v, "load_average": load_average()})
            times.append(v.get("seconds") if v["status"] == "ok" else float("nan"))
            method = "sym" if str(v.get("grid_method", "")).startswith("symbolic") else "enum"
            cells.append(f"{_num(v.get('seconds'))}s {_num(v.get('peak_rss_mib'), '.0f')}MiB ({v.get('ctas')}, {method})"
                         if v["status"] == "ok" else _cell(v["label"], 40))
        growth = f"{times[-1] / times[2]:.1f}x" if all(math.isfinite(x) and x for x in (times[2], times[-1])) else "-"
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {growth} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
