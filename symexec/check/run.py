"""Run a kernel in check mode and turn the record into a verdict with witnesses.

What a verdict covers (and prints as assumptions): the given launch (grid, block, scalar
parameter values); every CTA of the grid is executed (or covered symbolically, grid.py); tensor
contents are arbitrary as long as no branch, guard of a memory access, or address depended on
them (shadow taint says whether one did; if so the verdict is `inconclusive`). Data races follow
the PTX memory model with bar/barrier synchronisation and mbarrier phases; atomics and strong
accesses are morally strong at their scope.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ptx_parser import ast as A

from ..errors import Deadlock, ExecError, MemoryFault, Trap, UndefinedBehavior, Unsupported
from ..events import Buffer, Completion, MemSpace, Observer
from ..launch import Launch
from ..tensormap import TensorMap
from ..machine import FindingKind, Machine
from ..program import Program
from .exec import CheckedExec
from .findings import SEVERITY, Finding, Report, Verdict, site_for
from .places import global_place, shared_place
from .policy import DataDependencePolicy
from .races import find_races
from .state import ATOMIC, READ, CheckState
from .timeline import SyncLog, describe_point

@dataclass
class CheckRun:
    """A machine in check mode and its check state."""

    machine: Machine
    state: CheckState
    ctas: list | None = None  # the CTAs it executes (None: the whole grid)
    sync: SyncLog | None = None  # the synchronisation each thread took part in (race timelines)


def new_run(prog: Program, launch: Launch, ctas: list | None = None, observers: tuple[Observer, ...] = ()) -> CheckRun:
    """A check-mode machine for `launch` (all CTAs, or exactly `ctas` as one batch), with extra
    observers (the symbolic grid's shadow)."""
    lpc = -(-launch.threads_per_block // 32) * 32
    state = CheckState(lpc, len(ctas) if ctas is not None else launch.num_ctas)
    state.input_buffers = set(range(len(launch.buffers)))
    sync = SyncLog(state)
    m = Machine(prog, launch, observers=(state, sync, *observers), policy=DataDependencePolicy(state), ctas=ctas,
                exec_factory=lambda b: CheckedExec(b, state))
    return CheckRun(m, state, ctas, sync)


def _thread_of(launch: Launch, lanes_per_cta: int, row: int,
               ctas: list | None = None) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    cta_index, t = divmod(int(row), lanes_per_cta)
    gx, gy, _ = launch.grid
    bx, by, _ = launch.block
    cta = tuple(ctas[cta_index]) if ctas else (cta_index % gx, (cta_index // gx) % gy, cta_index // (gx * gy))
    return cta, (t % bx, (t // bx) % by, t // (bx * by))


def _describe_buffer(m: Machine, buf: Buffer, byte: int) -> tuple[str, str]:
    """(space, place) of byte `byte` of a buffer, in the user's terms (places.py)."""
    if buf.space is MemSpace.GLOBAL:
        alloc = m.glob.allocations[buf.index]
        return ".global", global_place(m, alloc.base + byte) or f"{alloc.name}+{byte}"
    if buf.space is MemSpace.SHARED:
        per = max(1, m.prog.shared_size() + m.launch.dynamic_shared_bytes)
        off = byte % per
        return ".shared", shared_place(m, off) or f"0x{off:x}"
    if buf.space is MemSpace.TMEM:  # 128 lanes x 512 columns of 32-bit cells per CTA (9.7.16.2)
        cell = (byte % (128 * 512 * 4)) // 4
        return ".tmem", f"lane {cell // 512} column {cell % 512}"
    return "." + buf.space.value, f"0x{byte:x}"


def run_checked(run: CheckRun, prog: Program, launch: Launch) -> Report:
    """Run a check-mode machine and turn its record into a report."""
    m, state, ctas = run.machine, run.state, run.ctas
    module = prog.module
    report = Report(Verdict.RACE_FREE, prog.function.name)
    report.assumptions += [
        f"launch: grid {launch.grid}, block {launch.block}, dynamic shared memory "
        f"{launch.dynamic_shared_bytes} bytes; " + _ran(m, ctas, stopped=False),
        "scalar parameters fixed to the launch's values: " + (", ".join(
            f"{p.name}={_value(v)}" for p, v in zip(prog.params, launch.params) if not isinstance(v, str)) or "none"),
        "clusters of one CTA; asynchronous copies complete at their latest legal point",
    ]
    fatal: Finding | None = None
    try:
        try:
            m.run()
        except ExecError:
            report.assumptions[0] = report.assumptions[0].rsplit("; ", 1)[0] + "; " + _ran(m, ctas, stopped=True)
            raise
    except MemoryFault as e:
        fatal = _fault_finding(m, module, e, getattr(e, "batch_ctas", None) or ctas)
    except Trap as e:
        bctas = getattr(e, "batch_ctas", None) or ctas
        sites = [site_for(module, e.ins, *_thread_of(launch, -(-launch.threads_per_block // 32) * 32, lane, bctas))
                 for lane in e.lanes[:2]]
        fatal = Finding(FindingKind.TRAP, e.message, sites)
    except Deadlock as e:
        fatal = Finding(FindingKind.DEADLOCK, e.message,
                        [site_for(module, e.ins, (0, 0, 0), (0, 0, 0))] if e.ins else [])
    except Unsupported as e:
        report.decide(Verdict.UNSUPPORTED,
                      e.what + (f" at {e.ins.span}" if e.ins is not None and e.ins.span else ""))
        report.notes.append(str(e))
    except UndefinedBehavior as e:
        cta, thread = (0, 0, 0), (0, 0, 0)
        if e.lane is not None:
            cta, thread = _thread_of(launch, -(-launch.threads_per_block // 32) * 32, e.lane,
                                     getattr(e, "batch_ctas", None) or ctas)
        fatal = Finding(FindingKind.UNDEFINED_BEHAVIOR, e.message, [site_for(module, e.ins, cta, thread)] if e.ins else [])
    except ExecError as e:
        at = f" at {e.ins.span}" if e.ins is not None and e.ins.span is not None and str(e.ins.span) not in e.message else ""
        report.decide(Verdict.INCONCLUSIVE, f"{e.message}{at}")
        report.notes.append("the emulation stopped there: nothing after it was checked")
    findings: list[Finding] = []
    if fatal is not None:
        findings.append(fatal)
    for f in m.findings:
        sites = [site_for(module, f.ins, f.cta or (0, 0, 0), f.thread or (0, 0, 0))] \
            if f.ins is not None or f.cta is not None else []
        findings.append(Finding(f.kind, f.message, sites))
    for pair in find_races(state.events, state.clocks, state.lanes_per_cta):
        f = _race_finding(m, module, state, pair, ctas, run.sync)
        if pair.benign:
            report.notes.append(f"{f.message} ({'; '.join(s.describe() for s in f.sites)})")
        else:
            findings.append(f)
    for ins, lane, pc in state.uninit_outputs:
        findings.append(Finding(FindingKind.UNINITIALIZED, "a value computed from shared memory that no thread wrote "
                                "reaches global memory", [site_for(module, ins, (0, 0, 0), (0, 0, 0))]))
    if any(ins.opcode == "elect" for ins in prog.code):
        report.assumptions.append("elect.sync: the highest active lane of each warp is the leader (the manual only "
                                  "promises the same leader for the same membermask, 9.7.13.14); the verdict is "
                                  "for that choice, and a kernel that relies on lane 0 being elected is caught")
    if state.async_ops:
        report.assumptions.append(
            f"{state.async_ops} asynchronous operation(s): each one's accesses may happen at any time between its "
            "issue (ordered after the issuing threads' earlier instructions) and the completion a thread observes "
            "(PTX 8.9.1.1); bulk/tensor copies and wgmma complete with an implicit generic-async proxy fence "
            "(9.7.9.25.2, 9.7.15.4), cp.async (generic proxy) needs none; the async-proxy reads of any operation "
            "whose completion was observed are performed (a later generic write needs no fence); other "
            "generic/async pairs need fence.proxy.async on the happens-before path (8.6, 8.9.5)")
    findings.sort(key=lambda f: SEVERITY.index(f.kind))  # the verdict's finding first
    report.findings = findings
    report.stats = {"steps": m.stats.steps, "batches": m.stats.batches, "accesses": len(state.events),
                    "paths_explored_both_ways": state.both_paths, "async_operations": state.async_ops}
    if findings:
        report.decide(Verdict.of(min((f.kind for f in findings), key=SEVERITY.index)))
        return report
    if report.outcome in (Verdict.UNSUPPORTED, Verdict.INCONCLUSIVE):
        return report
    if state.data_dependent:
        what, ins = state.data_dependent[0]
        where = f" at {ins.span}" if ins is not None and ins.span else ""
        report.decide(Verdict.INCONCLUSIVE, f"{what}{where} depends on input data (only this input was explored)")
        report.notes += list(dict.fromkeys(f"{w} at {i.span if i is not None else '?'} depends on input data"
                                           for w, i in state.data_dependent))
        return report
    report.assumptions.append("no branch, access guard or address depended on tensor data: the verdict "
                              "holds for every input of this launch")
    return report


def _ran(m: Machine, ctas: list | None, stopped: bool) -> str:
    """Which CTAs the verdict covers: all of them, the ones given, or (the run stopped) how far it got."""
    if stopped:
        return (f"the emulation stopped after {m.ctas_done} of {m.ctas_total} CTAs had finished "
                "(only what ran before the stop was checked)")
    return f"all {m.launch.num_ctas} CTA(s) executed" if ctas is None else f"CTA(s) {ctas} executed"


def _value(v) -> str:
    """A parameter value as the assumptions print it (a tensor map by its buffer and box, not its repr)."""
    if isinstance(v, TensorMap):
        return (f"tensor map of {v.buffer} ({v.dtype.value}, dims {list(v.global_dims)}, box {list(v.box_dims)}, "
                f"swizzle {v.swizzle.name.lower()})")
    if isinstance(v, dict) and "float" in v:
        return f"{v['float']!r}"
    return str(v)


def _fault_finding(m: Machine, module: A.Module, e: MemoryFault, ctas: list | None = None) -> Finding:
    sites = []
    for lane, addr in list(zip(e.lanes, e.addresses))[:2]:
        lpc = -(-m.launch.threads_per_block // 32) * 32
        cta, thread = _thread_of(m.launch, lpc, lane, ctas)  # ctas: the faulting batch's
        place = None
        if e.space in (".global", ".const"):
            place = global_place(m, addr)
        elif e.space.startswith(".shared"):
            place = shared_place(m, addr)
        sites.append(site_for(module, e.ins, cta, thread, access="access", address=place or f"0x{addr:x}",
                              space=e.space, byte=int(addr)))
    what = f"{e.message}: {sites[0].address}" if sites and sites[0].address else e.message
    return Finding(FindingKind.OUT_OF_BOUNDS, what, sites, {"addresses": [hex(a) for a in e.addresses]})


def _race_finding(m: Machine, module: A.Module, state: CheckState, pair, ctas: list | None = None,
                  sync: SyncLog | None = None) -> Finding:
    kinds = {READ: "read", 1: "write", ATOMIC: "atomic"}
    sites = []
    rows = []
    for ev_i, lane in ((pair.a_event, pair.a_lane), (pair.b_event, pair.b_lane)):
        ev = state.events[ev_i]
        j = int(np.nonzero(ev.lanes == lane)[0][0])
        rows.append(int(ev.hb[j]) if ev.op is None else None)
        cta, thread = _thread_of(m.launch, state.lanes_per_cta, int(ev.rows[j]), ctas)
        space, addr = _describe_buffer(m, ev.buffer, pair.byte)
        sites.append(site_for(module, m.prog.code[ev.pc], cta, thread, access=kinds[ev.kind], address=addr,
                              space=space, byte=int(pair.byte)))
    space = sites[0].space.lstrip(".")
    more = f" ({pair.count} conflicting byte pairs between these two instructions)" if pair.count > 1 else ""
    live = [] if pair.proxy_only else \
        [_live(state.events[e].op) for e in (pair.a_event, pair.b_event) if state.events[e].op is not None]
    if live:  # the asynchronous window explains the race better than "not ordered": say it first
        text = f"data race on {space} {sites[0].address}: {'; '.join(dict.fromkeys(live))}; {pair.reason}{more}"
    else:
        text = f"data race on {space} {sites[0].address}: {pair.reason}{more}"
    details: dict = {"conflicts": pair.count}
    if sync is not None:
        times = (state.events[pair.a_event].time, state.events[pair.b_event].time)
        details["timeline"] = _timeline(module, sync, sites, rows, times)
    return Finding(FindingKind.RACE, text, sites, details)


def _timeline(module: A.Module, sync: SyncLog, sites: list, rows: list, times: tuple[int, int]) -> list[dict]:
    """The two threads' accesses and the synchronisation each took part in between them (and just
    before), in the order the emulator ran them: what the HTML report draws."""
    from ptx_parser import source_location

    t0, t1 = min(times), max(times)
    out = []
    for k, (site, row, t) in enumerate(zip(sites, rows, times)):
        out.append({"thread": k, "time": int(t), "kind": "access", "text": f"{site.access} of {site.space.lstrip('.')} "
                    f"{site.address}", "instruction": site.instruction, "ptx": site.ptx, "source": site.source})
        if row is None:  # an asynchronous operation's access: its issuing thread's clock is not this row
            continue
        for r in sync.of(row, t0, t1):
            src = source_location(module, r.ins) if r.ins is not None else None
            point = describe_point(r.point)
            text = {"arrive": f"arrives at {point}", "complete": f"{point} completes",
                    "fence": "fence"}[r.what] if point or r.what == "fence" else r.what
            out.append({"thread": k, "time": int(r.time), "kind": r.what, "text": text,
                        "instruction": r.ins.name if r.ins is not None else "",
                        "ptx": str(r.ins.span) if r.ins is not None and r.ins.span else None,
                        "source": str(src) if src else None})
    out.sort(key=lambda e: (e["time"], e["thread"], e["kind"] != "access"))
    return out


#: How the completion of an asynchronous operation is observed, for witnesses.
_COMPLETION_WORDS = {
    Completion.CP_ASYNC_GROUP: "cp.async.wait_group/wait_all of the issuing thread, or an mbarrier phase it was "
                               "handed to (cp.async.mbarrier.arrive)",
    Completion.MBARRIER: "a wait that observes the mbarrier phase its complete-tx counts toward",
    Completion.BULK_GROUP: "cp.async.bulk.wait_group of the issuing thread (.read: its source reads only)",
    Completion.WGMMA_GROUP: "wgmma.wait_group of the warpgroup",
    Completion.TCGEN05_COMMIT: "tcgen05.commit -> a wait on that mbarrier",
    Completion.TCGEN05_WAIT_LD: "tcgen05.wait::ld of the issuing warp",
    Completion.TCGEN05_WAIT_ST: "tcgen05.wait::st of the issuing warp",
}


def _live(op) -> str:
    return (f"{op.ins.name} at {op.ins.span} is asynchronous: its accesses may happen at any time from its issue "
            f"until {_COMPLETION_WORDS[op.completion]} (PTX 8.9.1.1)")


__all__ = ["run_checked", "new_run", "CheckRun"]
