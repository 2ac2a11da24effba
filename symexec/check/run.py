"""Run a kernel in check mode and turn the record into a verdict with witnesses.

What a verdict covers (and prints as assumptions): the given launch (grid, block, scalar
parameter values); every CTA of the grid is executed (or covered symbolically, grid.py); tensor
contents are arbitrary as long as no branch, guard of a memory access, or address depended on
them (shadow taint says whether one did; if so the verdict is `inconclusive`). Data races follow
the PTX memory model with bar/barrier synchronisation and mbarrier phases; atomics and strong
accesses are morally strong at their scope.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

from ptx_parser import ast as A

from ..errors import Deadlock, ExecError, MemoryFault, Trap, UndefinedBehavior, Unsupported
from ..events import Buffer, Completion, MemSpace, Observer
from ..launch import Launch
from ..tensormap import TensorMap
from ..machine import FindingKind, Machine
from ..program import Program
from .exec import CheckedExec
from .findings import SEVERITY, Finding, Reach, Region, Report, Verdict, group_findings, race_message, site_for
from .grid_shadow import Shadow, ShadowFailed
from .loops import LoopSummariser
from .places import global_place, shared_place
from .policy import ConcretePolicy, DataDependencePolicy
from .same_value import ASSUMPTION as SAME_VALUE
from .state import ATOMIC, READ, CheckState
from .terms import TermLog
from .timeline import SyncLog, describe_point

@dataclass
class CheckRun:
    """A machine in check mode and its check state."""

    machine: Machine
    state: CheckState
    ctas: list | None = None  # the CTAs it executes (None: the whole grid)
    sync: SyncLog | None = None  # the synchronisation each thread took part in (race timelines)
    loops: LoopSummariser | None = None  # proves and skips loop iterations (the symbolic grid's run)


def new_run(prog: Program, launch: Launch, ctas: list | None = None, observers: tuple[Observer, ...] = (),
            concrete: bool = False, terms: bool = False, shadow: Shadow | None = None,
            exec_factory=CheckedExec, policy=None, races: bool = True) -> CheckRun:
    """A check-mode machine for `launch` (all CTAs, or exactly `ctas` as one batch), with extra
    observers (e.g. the equivalence shadow). concrete: follow every branch as the launch's input
    decides (ConcretePolicy) instead of exploring data-dependent ones both ways. terms: record how
    data-dependent values are computed (terms.py). shadow: the symbolic grid's shadow (an observer
    too), with which loops are summarised (loops.py). exec_factory(batch, state): the instruction
    context (the equivalence shadow's wraps CheckedExec); policy(state): the branch policy
    (default: as `concrete` says). races=False: no race records (the run's report says nothing about
    races; the caller gets that verdict from another check)."""
    lpc = -(-launch.threads_per_block // 32) * 32
    state = CheckState(lpc, len(ctas) if ctas is not None else launch.num_ctas)
    state.races = races
    if terms:
        state.terms = TermLog()
        state.log = []  # paths.race_alternatives reads every access of the race's instructions
    state.input_buffers = set(range(len(launch.buffers)))
    sync = SyncLog(state)
    branch_policy = (policy or (ConcretePolicy if concrete else DataDependencePolicy))(state)
    loops = None
    if shadow is not None:
        observers = (*observers, shadow)
        if LOOP_SUMMARIES:
            loops = branch_policy.loops = LoopSummariser(prog, state, shadow)
    # value numbers are read by race records (same-value writes), loop summaries and the term log only
    state.numbered = races or loops is not None or terms
    # happens-before clocks and the synchronisation log are read by race records (and their timelines)
    # and loop summaries only
    state.clocked = races or loops is not None or terms
    hooked = (state, sync) if state.clocked else (state,)
    m = Machine(prog, launch, observers=(*hooked, *observers), policy=branch_policy, ctas=ctas,
                exec_factory=lambda b: exec_factory(b, state))
    return CheckRun(m, state, ctas, sync, loops)


#: Loops of the symbolic grid's run are summarised (loops.py); tests turn it off to compare.
LOOP_SUMMARIES = True


@contextmanager
def loop_summaries(on: bool):
    """Runs made inside summarise loops (or not)."""
    global LOOP_SUMMARIES
    saved, LOOP_SUMMARIES = LOOP_SUMMARIES, on
    try:
        yield
    finally:
        LOOP_SUMMARIES = saved


def _thread_of(launch: Launch, lanes_per_cta: int, row: int,
               ctas: list | None = None) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """The CTA and thread of clock row `row` (CTA slot * lanes_per_cta + thread slot)."""
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


def _region_of(m: Machine, buf: Buffer, byte: int) -> tuple[str, int]:
    """(what holds byte `byte` of `buf`: its space and the variable or buffer, the byte's offset in
    it) for a finding's region; memory without variables (tensor memory) is one region per space."""
    if buf.space is MemSpace.GLOBAL:
        return f".global {m.glob.allocations[buf.index].name}", byte
    if buf.space is MemSpace.SHARED:
        per = max(1, m.prog.shared_size() + m.launch.dynamic_shared_bytes)
        off = byte % per
        var = next((v for v in m.prog.variables.values() if v.space == ".shared"
                    and v.offset <= off < v.offset + max(v.size, 1 if not v.extern else per)), None)
        return (f".shared {var.name}", off - var.offset) if var is not None else (".shared", off)
    return "." + buf.space.value, byte


def run_checked(run: CheckRun, prog: Program, launch: Launch) -> Report:
    """Run a check-mode machine and turn its record into a report. A run that explored
    data-dependent branches both ways decides its findings for real inputs afterwards: a concrete
    replay of the launch's input confirms them, Z3 over the explored paths' conditions prunes the
    ones no input reaches (symexec.check.reach)."""
    try:
        report = record_report(run, prog, launch)
    except ShadowFailed as e:  # the symbolic grid's shadow ended the run: grid.py falls back, and takes the
        # findings of what ran (`prefix`) where there are any. Not when branches were explored both ways (their
        # findings wait for a replay) or a loop summary's skipped writes were read (values there are not the
        # kernel's): None then
        record = getattr(e, "record", None)
        e.prefix = None if record is None or run.state.both_paths or run.state.footprint_hit is not None \
            else conclude(record, run.state)
        raise
    if run.state.both_paths:
        from .reach import confirm

        return confirm(report, run, prog, launch)
    return conclude(report, run.state)


def record_report(run: CheckRun, prog: Program, launch: Launch) -> Report:
    """Run the machine; the report of its record, findings unjudged (no verdict from them yet)."""
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
    lpc = state.lanes_per_cta
    fatal: Finding | None = None
    shadow_stop: ShadowFailed | None = None
    try:
        try:
            m.run()
        except (ExecError, ShadowFailed):
            report.assumptions[0] = report.assumptions[0].rsplit("; ", 1)[0] + "; " + _ran(m, ctas, stopped=True)
            raise
    except ShadowFailed as e:  # raised again below, with the record of the instructions executed before it
        shadow_stop = e
        report.decide(Verdict.INCONCLUSIVE, f"the symbolic grid's shadow stopped the run: {e}")
        report.notes.append("the emulation stopped there: nothing after it was checked")
    except Unsupported as e:
        report.decide(Verdict.UNSUPPORTED,
                      e.what + (f" at {e.ins.span}" if e.ins is not None and e.ins.span else ""))
        report.notes.append(str(e))
    except (MemoryFault, Trap, Deadlock, UndefinedBehavior) as e:
        fatal = error_finding(m, module, e, getattr(e, "batch_ctas", None) or ctas, 0, lpc)
    except ExecError as e:
        at = f" at {e.ins.span}" if e.ins is not None and e.ins.span is not None and str(e.ins.span) not in e.message else ""
        report.decide(Verdict.INCONCLUSIVE, f"{e.message}{at}")
        report.notes.append("the emulation stopped there: nothing after it was checked")
    findings: list[Finding] = []
    if fatal is not None:
        findings.append(fatal)
    merged: dict[tuple, list] = {}  # errors on explored paths: findings if an input takes the path
    for c in state.candidates:
        merged.setdefault((type(c.error), id(c.ins)), []).append(c)
    for group in merged.values():
        c = group[0]
        f = error_finding(m, module, c.error, ctas, int(c.rows[0]) - int(c.lanes[0]) if c.lanes.size else 0, lpc,
                          lanes=c.lanes)
        f.origin = Reach(tuple(((x.path, int(r)),) for x in group for r in x.rows)[:64])
        findings.append(f)
    for f in m.findings:
        sites = [site_for(module, f.ins, f.cta or (0, 0, 0), f.thread or (0, 0, 0))] \
            if f.ins is not None or f.cta is not None else []
        findings.append(Finding(f.kind, f.message, sites))
    for pair in state.detector.races():
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
    if state.detector.same_value:
        report.assumptions.append(f"{SAME_VALUE} ({state.detector.same_value} byte pair(s))")
    report.assumptions += feature_assumptions(prog, m, state)
    findings = group_findings(findings)
    if run.loops is not None:
        run.loops.finish()
        report.assumptions += run.loops.describe()
        report.notes += run.loops.notes
    findings.sort(key=lambda f: SEVERITY.index(f.kind))  # the verdict's finding first
    report.findings = findings
    report.stats = {"steps": m.stats.steps, "batches": m.stats.batches, "accesses": state.detector.accesses,
                    "paths_explored_both_ways": state.both_paths, "async_operations": state.async_ops}
    if run.loops is not None and run.loops.summaries:
        report.stats["loops_summarised"] = [{"line": str(m.prog.code[x.head_pc].span), "period": x.period,
                                             "from_iteration": x.first, "iterations_skipped": x.skipped}
                                            for x in run.loops.summaries]
    if shadow_stop is not None:
        shadow_stop.record = report
        raise shadow_stop
    return report


#: The reason of a verdict that holds for the launch's input data only.
INPUT_ONLY = "for the launch's input only"


def conclude(report: Report, state: CheckState) -> Report:
    """The verdict of a run whose record is exact for the launch's input (nothing explored both
    ways): its findings; else what it depends on decides how far `race_free` reaches."""
    if report.findings:
        report.decide(Verdict.of(min((f.kind for f in report.findings), key=SEVERITY.index)))
        return report
    if report.outcome in (Verdict.UNSUPPORTED, Verdict.INCONCLUSIVE):
        return report
    sched = [(w, i) for w, i, s in state.data_dependent if s]
    if sched:
        what, ins = sched[0]
        report.decide(Verdict.INCONCLUSIVE, f"{what}{_at(ins)} depends on the schedule (a value another CTA wrote or "
                      "an atomic returned): another run of the same input may touch other memory")
        report.notes += list(dict.fromkeys(f"{w}{_at(i)} depends on the schedule" for w, i in sched))
        return report
    if state.data_dependent:
        report.decide(Verdict.RACE_FREE, INPUT_ONLY)
        report.notes += list(dict.fromkeys(f"{w}{_at(i)} depends on input data" for w, i, _ in state.data_dependent))
        report.assumptions.append("the launch's input data: the access pattern depends on it (see the notes), so the "
                                  "verdict holds for this input only; other inputs were not explored")
        return report
    report.assumptions.append("no branch, access guard or address depended on tensor data: the verdict "
                              "holds for every input of this launch")
    return report


def _at(ins: A.Instruction | None) -> str:
    return f" at {ins.span}" if ins is not None and ins.span else ""


def feature_assumptions(prog: Program, m: Machine, state: CheckState) -> list[str]:
    """What the verdict assumes about modelled CUDA features the kernel uses."""
    out = []
    sp = prog.specials
    if sp & {"%envreg1", "%envreg2"}:
        out.append("cooperative launch: %envreg1:%envreg2 hold the address of a zero-filled grid workspace (how "
                   "cooperative groups find their grid barrier) and every CTA is resident at once")
    if any(n.startswith("%reserved_smem_offset") for n in sp):
        out.append("the shared memory reserved for system software (%reserved_smem_offset_*, PTX 10.29) is 1 KiB "
                   "after the kernel's own; offsets _0 and _1 are its bytes 0 and 16")
    if state.spin_waits:
        where = ", ".join(str(prog.code[pc].span) for pc in sorted(state.spin_waits)[:4])
        out.append(f"spin-wait loop(s) at {where}: they poll memory other threads or CTAs update; how often they "
                   "loop depends on the schedule, what the kernel does after them does not")
    calls = getattr(m, "call_state", None)
    if calls is not None and calls.heap:
        out.append(f"device heap: {len(calls.heap)} malloc block(s), each with its own bounds; malloc returns NULL "
                   "beyond CUDA's default 8 MiB heap")
    return out


def error_finding(m: Machine, module: A.Module, e: Exception, ctas: list | None, row_base: int, lpc: int,
                  lanes=None) -> Finding:
    """The finding of an error that stopped (or, on an explored path, would stop) the run. Its lanes
    are a batch's lanes: `ctas` that batch's CTAs, or the run's with `row_base` the batch's first
    clock row."""
    def who(lane: int):
        return _thread_of(m.launch, lpc, row_base + int(lane), ctas)

    if isinstance(e, MemoryFault):
        sites = []
        pairs = list(zip(e.lanes, e.addresses))
        if lanes is not None:
            keep = set(int(x) for x in lanes)
            pairs = [(lane, a) for lane, a in pairs if lane in keep] or pairs
        for lane, addr in pairs[:2]:
            place = None
            if e.space in (".global", ".const"):
                place = global_place(m, addr)
            elif e.space.startswith(".shared"):
                place = shared_place(m, addr)
            sites.append(site_for(module, e.ins, *who(lane), access="access", address=place or f"0x{addr:x}",
                                  space=e.space, byte=int(addr)))
        what = f"{e.message}: {sites[0].address}" if sites and sites[0].address else e.message
        return Finding(FindingKind.OUT_OF_BOUNDS, what, sites, {"addresses": [hex(a) for _, a in pairs[:8]]})
    if isinstance(e, Trap):
        picked = list(lanes[:2]) if lanes is not None and len(lanes) else e.lanes[:2]
        return Finding(FindingKind.TRAP, e.message, [site_for(module, e.ins, *who(lane)) for lane in picked])
    if isinstance(e, Deadlock):
        return Finding(FindingKind.DEADLOCK, e.message, [site_for(module, e.ins, (0, 0, 0), (0, 0, 0))] if e.ins else [])
    lane = e.lane if getattr(e, "lane", None) is not None else (int(lanes[0]) if lanes is not None and len(lanes) else None)
    cta, thread = who(lane) if lane is not None else ((0, 0, 0), (0, 0, 0))
    return Finding(FindingKind.UNDEFINED_BEHAVIOR, e.message, [site_for(module, e.ins, cta, thread)] if e.ins else [])


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


def _race_finding(m: Machine, module: A.Module, state: CheckState, pair, ctas: list | None = None,
                  sync: SyncLog | None = None) -> Finding:
    kinds = {READ: "read", 1: "write", ATOMIC: "atomic"}
    sites = []
    rows = []
    origin = []
    buf = pair.buffer
    for side in (pair.a, pair.b):
        rows.append(side.hbrow if side.op is None else None)
        origin.append((side.path, side.row))
        cta, thread = _thread_of(m.launch, state.lanes_per_cta, side.row, ctas)
        space, addr = _describe_buffer(m, buf, pair.byte)
        sites.append(site_for(module, m.prog.code[side.pc], cta, thread, access=kinds[side.kind], address=addr,
                              space=space, byte=int(pair.byte)))
    live = [] if pair.proxy_only else [_live(*side.op) for side in (pair.a, pair.b) if side.op is not None]
    # the asynchronous window explains the race better than "not ordered": say it first
    why = f"{'; '.join(dict.fromkeys(live))}; {pair.reason}" if live else pair.reason
    label, lo = _region_of(m, buf, pair.byte)
    label_hi, hi = _region_of(m, buf, pair.last) if pair.last > pair.byte else (label, lo)
    last = _describe_buffer(m, buf, pair.last)[1] if pair.last > pair.byte else ""
    region = Region(sites[0].space.lstrip("."), label, lo, hi if label_hi == label and hi >= lo else lo,
                    sites[0].address, last if label_hi == label and hi >= lo else "")
    details: dict = {"conflicts": pair.count, "region": region.describe(), "why": why}
    if sync is not None:
        details["timeline"] = _timeline(module, sync, sites, rows, (pair.a.time, pair.b.time))
    f = Finding(FindingKind.RACE, race_message(region, why, pair.count), sites, details, region=region)
    f.origin = Reach((tuple(origin),), (pair.a.pc, pair.b.pc, buf))
    return f


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


def _live(ins: A.Instruction, completion: Completion) -> str:
    return (f"{ins.name} at {ins.span} is asynchronous: its accesses may happen at any time from its issue "
            f"until {_COMPLETION_WORDS[completion]} (PTX 8.9.1.1)")


__all__ = ["run_checked", "record_report", "conclude", "new_run", "CheckRun", "INPUT_ONLY"]
