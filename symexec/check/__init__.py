"""`check_kernel`: run a kernel in check mode and turn the record into a verdict with witnesses.

What a verdict covers (and prints as assumptions): the given launch (grid, block, scalar
parameter values); every CTA of the grid is executed; tensor contents are arbitrary as long as no
branch, guard of a memory access, or address depended on them (shadow taint says whether one did;
if so the verdict is `inconclusive`). Data races follow the PTX memory model with bar/barrier
synchronisation (and mbarrier phases where the unit reports them); atomics and strong accesses
are morally strong at their scope.
"""

from __future__ import annotations

import numpy as np

from ptx_parser import ast as A

from ..errors import Deadlock, ExecError, MemoryFault, UndefinedBehavior, Unsupported
from ..launch import Launch
from ..machine import Machine
from ..program import Program
from .findings import Finding, Report, Site, site_for
from .races import find_races
from .state import ATOMIC, READ

AUTO_MIN_CTAS = 64  # grid="auto": up to this many CTAs, enumerating (one vectorised batch) is cheaper
_SEVERITY = ["out_of_bounds", "race", "deadlock", "divergence", "uninitialized", "undefined_behavior"]


def _thread_of(launch: Launch, lanes_per_cta: int, row: int,
               ctas: list | None = None) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    cta_index, t = divmod(int(row), lanes_per_cta)
    gx, gy, _ = launch.grid
    bx, by, _ = launch.block
    cta = tuple(ctas[cta_index]) if ctas else (cta_index % gx, (cta_index // gx) % gy, cta_index // (gx * gy))
    return cta, (t % bx, (t // bx) % by, t // (bx * by))


def _describe_buffer(m: Machine, key, byte: int) -> tuple[str, str]:
    if key[0] == "global":
        alloc = m.glob.allocations[key[1]]
        return ".global", f"{alloc.name}+{byte} (0x{alloc.base + byte:x})"
    if key[0] == "shared":
        per = max(1, m.prog.shared_size() + m.launch.dynamic_shared_bytes)
        return ".shared", f"0x{byte % per:x}"
    return "." + key[0], f"0x{byte:x}"


def _unmodelled(prog: Program) -> tuple[str, A.Instruction] | None:
    """Features the emulator runs but whose ordering the checker does not model yet: operations
    of the async proxy (PTX 8.x proxies; fence.proxy.async) and tensor memory. A verdict that
    ignored them could call a racy kernel race-free, so they make the verdict `unsupported`."""
    for ins in prog.code:
        if ins.opcode == "wgmma" and ".mma_async" in ins.modifiers:
            return "wgmma.mma_async operand reads through the async proxy", ins
        if ins.opcode == "tcgen05":
            return "tcgen05 tensor-memory and async-proxy ordering", ins
        if ins.opcode == "cp" and ".bulk" in ins.modifiers and ".prefetch" not in ins.modifiers:
            spaces = [sp for sp in ins.spaces]
            if ".reduce" in ins.modifiers or ".tensor" in ins.modifiers or (spaces and spaces[0] == ".global"):
                # the async proxy reads shared memory that generic stores wrote: that needs
                # fence.proxy.async, which the checker does not track yet. Global -> shared bulk
                # loads completing on an mbarrier need no proxy fence and are modelled.
                return "cp.async.bulk reading shared memory through the async proxy (fence.proxy.async not tracked)", ins
    return None


#: Enumerating a grid keeps per-thread clocks for every CTA: beyond this many threads (about 1.5 GB
#: of clocks, and hours of emulation) the checker answers inconclusive instead of trying.
MAX_ENUMERATED_THREADS = 1 << 27


def check_kernel(prog: Program, launch: Launch, grid: str = "auto") -> Report:
    """grid: "enumerate" runs every CTA; "symbolic" proves cross-CTA global races and global bounds
    with Z3 for a symbolic pair of CTAs (grid.py) and falls back to enumerating when it cannot;
    "auto" (default) = symbolic where it applies and the grid has more than AUTO_MIN_CTAS CTAs."""
    gap = _unmodelled(prog)
    if gap is not None:
        what, ins = gap
        report = Report(f"unsupported: {what} (checker) at {ins.span}", prog.function.name)
        report.notes.append(f"{ins.name} at {ins.span}: the emulator runs it (volta run) but the race "
                            "checker does not model its ordering yet")
        return report
    if grid not in ("auto", "enumerate", "symbolic"):
        raise ValueError(f"grid must be auto, enumerate or symbolic, not {grid!r}")
    why = "requested" if grid == "enumerate" else f"grid of at most {AUTO_MIN_CTAS} CTAs"
    if grid == "symbolic" or (grid == "auto" and launch.num_ctas > AUTO_MIN_CTAS):  # grid.py; None: enumerate
        from .grid import check_symbolic

        done, why = check_symbolic(prog, launch)
        if done is not None:
            return done
    threads = launch.num_ctas * (-(-launch.threads_per_block // 32) * 32)
    if threads > MAX_ENUMERATED_THREADS:
        report = Report(f"inconclusive: enumerating {launch.num_ctas} CTAs ({threads} threads) is beyond the "
                        f"checker's limit of {MAX_ENUMERATED_THREADS} threads", prog.function.name)
        report.notes.append(f"the symbolic grid could not be used: {why}" if grid != "enumerate" else
                            "use --grid symbolic (or auto) to cover the grid with a symbolic pair of CTAs")
        report.stats["grid_method"] = "none (grid too large to enumerate)"
        return report
    report = run_checked(Machine(prog, launch, check=True), prog, launch)
    report.stats["grid_method"] = "enumerate" + ("" if grid == "enumerate" else f" ({why})")
    return report


def run_checked(m: Machine, prog: Program, launch: Launch, ctas: list | None = None) -> Report:
    """Run machine `m` in check mode; `ctas`: the CTAs it executes when not the whole grid."""
    module = prog.module
    report = Report("race_free", prog.function.name)
    ran = f"all {launch.num_ctas} CTA(s) executed" if ctas is None else f"CTA(s) {ctas} executed"
    report.assumptions += [
        f"launch: grid {launch.grid}, block {launch.block}, dynamic shared memory "
        f"{launch.dynamic_shared_bytes} bytes; {ran}",
        "scalar parameters fixed to the launch's values: " + (", ".join(
            f"{p.name}={v}" for p, v in zip(prog.params, launch.params) if not isinstance(v, str)) or "none"),
        "clusters of one CTA; asynchronous copies complete at their latest legal point",
    ]
    fatal: Finding | None = None
    try:
        m.run()
    except MemoryFault as e:
        fatal = _fault_finding(m, module, e, ctas)
    except Deadlock as e:
        fatal = Finding("deadlock", e.message, [site_for(module, e.ins, (0, 0, 0), (0, 0, 0))] if e.ins else [])
    except Unsupported as e:
        report.verdict = f"unsupported: {e.what}" + (f" at {e.ins.span}" if e.ins is not None and e.ins.span else "")
        report.notes.append(str(e))
    except UndefinedBehavior as e:
        fatal = Finding("undefined_behavior", e.message, [site_for(module, e.ins, (0, 0, 0), (0, 0, 0))] if e.ins else [])
    except ExecError as e:
        at = f" at {e.ins.span}" if e.ins is not None and e.ins.span is not None and str(e.ins.span) not in e.message else ""
        report.verdict = f"inconclusive: {e.message}{at}"
        report.notes.append("the emulation stopped there: nothing after it was checked")
    state = m.check
    assert state is not None
    findings: list[Finding] = []
    if fatal is not None:
        findings.append(fatal)
    for kind, message, ins, details in m.findings:
        sites = [site_for(module, ins, details.get("cta", (0, 0, 0)), details.get("thread", (0, 0, 0)))] \
            if ins is not None or "cta" in details else []
        findings.append(Finding(kind, message, sites))
    for pair in find_races(state.events, state.clocks, state.lanes_per_cta):
        f = _race_finding(m, module, state, pair, ctas)
        if pair.benign:
            report.notes.append(f"{f.message} ({'; '.join(s.describe() for s in f.sites)})")
        else:
            findings.append(f)
    for ins, lane, pc in state.uninit_outputs:
        findings.append(Finding("uninitialized", "a value computed from shared memory that no thread wrote "
                                "reaches global memory", [site_for(module, ins, (0, 0, 0), (0, 0, 0))]))
    report.findings = findings
    report.stats = {"steps": m.stats.steps, "batches": m.stats.batches, "accesses": len(state.events),
                    "paths_explored_both_ways": state.both_paths}
    if findings:
        report.verdict = min((f.kind for f in findings), key=_SEVERITY.index)
        return report
    if report.verdict.startswith(("unsupported", "inconclusive")):
        return report
    if state.data_dependent:
        what, ins = state.data_dependent[0]
        where = f" at {ins.span}" if ins is not None and ins.span else ""
        report.verdict = f"inconclusive: {what}{where} depends on input data (only this input was explored)"
        report.notes += [f"{w} at {i.span if i is not None else '?'} depends on input data" for w, i in state.data_dependent]
        return report
    report.assumptions.append("no branch, access guard or address depended on tensor data: the verdict "
                              "holds for every input of this launch")
    return report


def _fault_finding(m: Machine, module: A.Module, e: MemoryFault, ctas: list | None = None) -> Finding:
    sites = []
    for lane, addr in list(zip(e.lanes, e.addresses))[:2]:
        lpc = -(-m.launch.threads_per_block // 32) * 32
        cta, thread = _thread_of(m.launch, lpc, lane, ctas)  # lanes of the first batch map directly
        sites.append(site_for(module, e.ins, cta, thread, access="access", address=f"0x{addr:x}", space=e.space))
    return Finding("out_of_bounds", e.message, sites, {"addresses": [hex(a) for a in e.addresses]})


def _race_finding(m: Machine, module: A.Module, state, pair, ctas: list | None = None) -> Finding:
    kinds = {READ: "read", 1: "write", ATOMIC: "atomic"}
    sites = []
    for ev_i, lane in ((pair.a_event, pair.a_lane), (pair.b_event, pair.b_lane)):
        ev = state.events[ev_i]
        j = int(np.nonzero(ev.lanes == lane)[0][0])
        cta, thread = _thread_of(m.launch, state.lanes_per_cta, int(ev.rows[j]), ctas)
        space, addr = _describe_buffer(m, ev.buffer, pair.byte)
        sites.append(site_for(module, m.prog.code[ev.pc], cta, thread, access=kinds[ev.kind], address=addr,
                              space=space))
    space = sites[0].space
    more = f" ({pair.count} conflicting byte pairs between these two instructions)" if pair.count > 1 else ""
    return Finding("race", f"data race on {space} {sites[0].address}: {pair.reason}{more}", sites,
                   {"conflicts": pair.count})


__all__ = ["check_kernel", "run_checked", "Report", "Finding", "Site"]
