"""The machine: runs a kernel over a grid, CTA batch by CTA batch, with thread groups.

Lanes of a batch are the threads of several CTAs laid out side by side (each CTA padded to whole
warps). Execution is by *groups*: a set of lanes at one pc. Uniform code runs as one group for
the whole batch, so each PTX instruction executes once per batch over numpy vectors. A divergent
branch splits a group in two; they reconverge at the branch's immediate post-dominator (a join).
A group blocks at a barrier until every warp the barrier expects has arrived (PTX 9.7.13.1), and
the scheduler runs other groups meanwhile; no runnable group while some wait is a deadlock.
"""

from __future__ import annotations

import hashlib
import time
from contextlib import contextmanager
from contextvars import ContextVar

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable, Sequence

import numpy as np

from ptx_parser import ast as A
from semantics.constexpr import evaluate
from semantics.errors import UndefinedBehavior, Unsupported
from semantics.ptx import HANDLERS
from semantics.ptx.core import UINT, tinfo

from . import units as _units
from .errors import Deadlock, ExecError, MemoryFault, MemoryLimit, TimeLimit, Trap
from .events import (Acquire, Exited, Fence, FenceKind, GroupSplit, Observer, Proxy, Reconverged, Release,
                     SplitReason, SyncKind, SyncPoint, hook_name)
from .execctx import GroupExec
from .launch import Launch, check_launch_bounds, pack_params
from .memory import FUNCTION_BASE, GlobalMemory, Memory
from .opcodes import LaneScope, Purity, facts, purity, touches_memory_or_sync, value_guarded
from .program import Program

MAX_STEPS = 5_000_000  # instructions per batch (a group executing one instruction = 1 step)
GRID_WORKSPACE_BYTES = 256  # the cooperative-groups grid workspace (a barrier word and its neighbours)

MachineHandler = _units.MachineHandler


class FindingKind(str, Enum):
    """What a verdict reports (most severe first in symexec.check's ordering)."""

    OUT_OF_BOUNDS = "out_of_bounds"
    TRAP = "trap"  # the kernel executes trap (or a failed device assert): the launch fails
    RACE = "race"
    DEADLOCK = "deadlock"
    DIVERGENCE = "divergence"
    UNINITIALIZED = "uninitialized"
    UNDEFINED_BEHAVIOR = "undefined_behavior"
    NOT_EQUIVALENT = "not_equivalent"  # an output differs from the reference's (volta check --equivalence)


@dataclass
class MachineFinding:
    """A bug the machine itself sees while running (a barrier reached by part of a warp, ...)."""

    kind: FindingKind
    message: str
    ins: A.Instruction | None
    lane: int | None = None  # a thread slot of the batch that shows it
    cta: tuple[int, int, int] | None = None
    thread: tuple[int, int, int] | None = None


class BranchDecision(Enum):
    FOLLOW = "follow"  # take the branch as the values say
    REGISTER_REGION = "register_region"  # values written until reconvergence depend on the choice
    BOTH_PATHS = "both_paths"  # explore both outcomes with every lane (a superset of what inputs do)


class Policy:
    """How the machine treats guards and branches whose outcome the values alone should not decide
    (angr's exploration techniques, in small): a plain run follows the values. Check mode supplies
    one that explores data-dependent branches both ways (symexec.check.policy)."""

    def on_guard(self, b: "Batch", g: "Group", ins: A.Instruction) -> None:
        """A guarded instruction with memory or synchronisation effects is about to run."""

    def on_value_guard(self, b: "Batch", g: "Group", ins: A.Instruction, mask: np.ndarray) -> None:
        """A guarded register-only instruction is about to run on lanes `mask` of `g` (its guard
        chooses which value its destination holds)."""

    def on_branch(self, b: "Batch", g: "Group", ins: A.Instruction, dest: int) -> BranchDecision:
        return BranchDecision.FOLLOW

    def on_indirect(self, b: "Batch", g: "Group", ins: A.Instruction, index: A.Operand) -> None:
        """An indirect branch (brx.idx) chooses its target from `index` (just read)."""

    def explored(self, b: "Batch", g: "Group", ins: A.Instruction) -> tuple[int, np.ndarray]:
        """The branch `ins` of group `g` is explored both ways: an id for this exploration (the
        paths of the two groups record it) and the lanes that go down both paths (the others go
        the way their predicate says)."""
        return 0, g.mask

    def on_error(self, b: "Batch", g: "Group | None", err: Exception) -> bool:
        """An error (an out-of-bounds access, a trap, undefined behaviour) of group `g`: True to
        record it and go on without the failing lanes' effect (a path that no input may take),
        False to stop the run with it."""
        return False
    #: whether the machine tells `on_back_edge` (a plain run does not pay for the call)
    watches_back_edges = False

    def next_group(self, ready: list["Group"]) -> "Group":
        """Which of the ready groups runs next (any order is a schedule the hardware may take; the
        equivalence shadow runs one explored path to its end before the other)."""
        return ready[0]

    def on_back_edge(self, b: "Batch", g: "Group", ins: A.Instruction, pc: int) -> None:
        """Group `g` jumped backwards from `pc` to `g.pc` (a loop's next iteration begins). Check mode's
        loop summary (symexec.check.loops) may fast-forward the loop's registers here."""


class InstructionObserver(Observer):
    """An observer that also sees every instruction before and after it runs (the symbolic grid's
    %ctaid shadow): the machine wraps its dispatch only when one is present."""

    def before_instruction(self, b: "Batch", g: "Group", ins: A.Instruction, mask: np.ndarray) -> Any: ...

    def after_instruction(self, b: "Batch", g: "Group", ins: A.Instruction, mask: np.ndarray, token: Any) -> None: ...


@dataclass(eq=False)
class Join:
    """Divergent paths of one branch meet at `pc` (None: they never do)."""

    pc: int | None
    expected: np.ndarray
    arrived: np.ndarray
    parked: list["Group"] = field(default_factory=list)
    paths: int = 0  # >0: wait for this many groups (both paths explored with the same lanes)
    explored: bool = False  # the join of a both-paths exploration (its lanes come back once per path)
    taint_regs: frozenset = frozenset()  # registers that depend on the data-dependent path after merging
    dep: int = 0  # what the explored choice depends on (Group.dep of the branching group)


@dataclass(eq=False)
class Group:
    mask: np.ndarray
    pc: int
    joins: tuple[Join, ...] = ()
    status: str = "ready"  # ready | barrier | parked | wait | done
    pending: set = field(default_factory=set)  # CTA slots whose barrier this group waits for
    barrier: int = -1
    wake: Callable[[], bool] | None = None  # status "wait": ready again once this returns True
    ctl: tuple[int, ...] = ()  # reconvergence pcs of enclosing data-dependent branches (check mode)
    explore: int = 0  # inside a both-paths exploration: stores depend on data
    waiting_for: str = ""  # what a waiting group waits for (deadlock witnesses)
    red: A.Instruction | None = None  # a bar.red waiting for its result
    dep: int = 0  # what the enclosing data-dependent choices depend on (the policy's bits, check mode)
    path: tuple[int, ...] = ()  # the explored choices that led here: 2 * exploration id + (1 taken, 0 not)

    def fork(self, mask: np.ndarray, pc: int) -> "Group":
        """A group of `mask` at `pc` with this group's control-dependence state (joins, enclosing
        data-dependent regions, exploration depth)."""
        return self.derive(mask, pc, self.joins)

    def derive(self, mask: np.ndarray, pc: int, joins: tuple["Join", ...], explore: int | None = None,
               path: tuple[int, ...] | None = None) -> "Group":
        """A group of `mask` at `pc` under `joins` that keeps this group's enclosing regions,
        explorations and path (or the given ones)."""
        return Group(mask, pc, joins, ctl=self.ctl, explore=self.explore if explore is None else explore,
                     dep=self.dep, path=self.path if path is None else path)


@dataclass
class RunStats:
    steps: int = 0
    batches: int = 0
    max_groups: int = 1


class Batch:
    """Execution state of a batch of CTAs."""

    def __init__(self, prog: Program, launch: Launch, glob: GlobalMemory, ctas: list[tuple[int, int, int]],
                 params: bytes, param_offsets: dict[str, int], var_addr: dict[str, tuple[str, int]],
                 observers: Sequence[Observer] = (), batch_id: int = 0, cta_base: int = 0,
                 exec_factory: Callable[["Batch"], GroupExec] = GroupExec,
                 environment: dict[str, int] | None = None) -> None:
        self.prog = prog
        self.launch = launch
        self.environment = environment or {}  # %envreg values (Machine.environment)
        T = launch.threads_per_block
        self.lanes_per_cta = -(-T // 32) * 32
        self.warps_per_cta = self.lanes_per_cta // 32
        self.n_ctas = len(ctas)
        self.n = self.n_ctas * self.lanes_per_cta
        lane = np.arange(self.n)
        self.cta_of_lane = lane // self.lanes_per_cta
        t = lane % self.lanes_per_cta
        self.valid = t < T
        bx, by, _ = launch.block
        self.tid = (t % bx, (t // bx) % by, t // (bx * by))
        c = np.array(ctas, dtype=np.int64).reshape(-1, 3)
        self.ctaid = tuple(c[self.cta_of_lane, k] for k in range(3))
        self.alive = self.valid.copy()
        shared = prog.shared_size() + launch.dynamic_shared_bytes
        self.observers = list(observers)
        self.memory = Memory(glob, self.n, self.cta_of_lane, self.n_ctas, shared, prog.local_size(),
                             params, param_offsets, batch_id, self.observers)
        self.batch_id = batch_id
        self.cta_base = cta_base
        self.ctas = ctas
        for o in self.observers:
            o.on_batch(self)
        self.bar_instance = np.zeros((self.n_ctas, 16), dtype=np.int64)  # completions per barrier
        self.var_addr = var_addr
        self.regs: dict[str, np.ndarray] = {}
        # barrier state: arrived warps per (CTA slot, barrier id)
        self.bar_arrived = np.zeros((self.n_ctas, 16, self.lanes_per_cta), dtype=bool)  # arrived threads
        self.bar_waiting: list[Group] = []
        self.bar_count_of: dict[tuple[int, int], int | None] = {}  # (CTA slot, id) -> count of this instance
        self.bar_red: dict[int, np.ndarray] = {}  # bar.red: predicates of the arrivals so far
        self.bar_red_seen: dict[int, np.ndarray] = {}
        self.warp_syncs = 0
        self.groups: list[Group] = [Group(self.alive.copy(), 0)]
        self.units: dict[str, Any] = {}  # per-batch state of asynchronous units (mbarriers, TMEM, ...)
        # register name -> callback(mask, name, ins, "read"|"write"): units watching registers
        # (e.g. accumulators of a pending wgmma, which ordinary instructions must not touch)
        self.reg_watch: dict[str, Callable] = {}
        self.timer_reads = 0
        self.ctx = exec_factory(self)
        self.memory.source = self.ctx
        self.reports: list[MachineFinding] = []  # findings of units (Batch.report)

    def unit(self, name: str, factory: Callable[[], Any]) -> Any:
        """The batch's state for unit `name`, created on first use."""
        u = self.units.get(name)
        if u is None:
            u = self.units[name] = factory()
        return u

    def finding(self, kind: "FindingKind", message: str, ins: A.Instruction | None,
                lane: int | None = None) -> "MachineFinding":
        """A finding at `ins`, naming lane `lane`'s CTA and thread."""
        f = MachineFinding(kind, message, ins, lane)
        if lane is not None:
            f.cta = self.ctas[int(self.cta_of_lane[lane])]
            f.thread = (int(self.tid[0][lane]), int(self.tid[1][lane]), int(self.tid[2][lane]))
        return f

    def report(self, kind: "FindingKind", message: str, ins: A.Instruction | None, lane: int | None = None) -> None:
        """A bug a unit sees that does not stop the run (the machine collects these after the batch)."""
        self.reports.append(self.finding(kind, message, ins, lane))

    def emit(self, ev) -> None:
        """Tell every observer (symexec.events); a plain run has none and builds no events."""
        name = hook_name(type(ev))
        for o in self.observers:
            getattr(o, name)(ev)

    def split(self, g: Group, lanes: np.ndarray, pc: int, ins: A.Instruction | None = None) -> Group:
        """Lanes `lanes` of `g` go on alone at `pc` (e.g. those whose guard was false while the others
        block), keeping g's control-dependence state; `g` keeps the rest."""
        new = g.fork(lanes.copy(), pc)
        g.mask = g.mask & ~lanes
        self.groups.append(new)
        if self.observers:
            self.emit(GroupSplit(g, (g, new), SplitReason.GUARD, ins))
        return new


@dataclass(frozen=True)
class Progress:
    """How far a running machine is, for a `run_limits(progress=...)` callback."""

    ctas_done: int  # CTAs whose batch has finished
    ctas_total: int  # CTAs this machine runs (the grid, or the CTAs it was given)
    steps: int  # instructions executed so far, counted once per thread group
    thread_instructions: int  # ... counted per thread (the group's threads when it started running)
    rss: int  # resident memory of the process in bytes (0 where unknown)


@dataclass(frozen=True)
class Limits:
    """What machines created under `run_limits` stop at, and whom they tell how far they are."""

    deadline: float | None = None  # on time.monotonic()
    seconds: float | None = None
    max_rss: int | None = None  # bytes of resident memory
    progress: Callable[[Progress], None] | None = None


_LIMITS: ContextVar[Limits] = ContextVar("volta_limits", default=Limits())


@contextmanager
def run_limits(seconds: float | None = None, max_rss: int | None = None,
               progress: Callable[[Progress], None] | None = None):
    """Machines created inside raise TimeLimit once ``seconds`` have passed, MemoryLimit once the
    process's resident memory exceeds ``max_rss`` bytes (sampled as TimeLimit's clock is, every
    1024 instructions), and call ``progress`` there and after every CTA batch. None: no limit."""
    outer = _LIMITS.get()
    token = _LIMITS.set(Limits(time.monotonic() + seconds if seconds else outer.deadline,
                               seconds if seconds else outer.seconds,
                               max_rss if max_rss else outer.max_rss,
                               progress if progress is not None else outer.progress))
    try:
        yield
    finally:
        _LIMITS.reset(token)


def time_limit_passed() -> float | None:
    """The seconds of the enclosing run_limits() when its deadline has passed, else None."""
    lim = _LIMITS.get()
    return lim.seconds if lim.deadline is not None and time.monotonic() > lim.deadline else None


def check_time_limit(doing: str) -> None:
    """Raise TimeLimit when the deadline of the enclosing run_limits() has passed: for work outside a
    machine (proofs) that must stop with the run's --timeout too. `doing` says what was cut short."""
    seconds = time_limit_passed()
    if seconds is not None:
        raise TimeLimit(f"time limit of {seconds:g} s reached {doing}")


def time_limit(seconds: float | None):
    """Machines created inside raise TimeLimit once ``seconds`` have passed (None: no limit)."""
    return run_limits(seconds)


_PAGE = None


def rss_bytes() -> int:
    """Resident memory of this process (Linux /proc; elsewhere the peak from getrusage)."""
    global _PAGE
    try:
        with open("/proc/self/statm", "rb") as f:
            pages = int(f.read().split()[1])
        if _PAGE is None:
            import os

            _PAGE = os.sysconf("SC_PAGE_SIZE")
        return pages * _PAGE
    except (OSError, ValueError, IndexError):
        import resource
        import sys

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


class Machine:
    """Runs one program for one launch. `run()` returns the global memory afterwards."""

    def __init__(self, prog: Program, launch: Launch, batch_ctas: int = 64, max_steps: int = MAX_STEPS,
                 observers: Sequence[Observer] = (), policy: Policy | None = None,
                 ctas: list[tuple[int, int, int]] | None = None,
                 exec_factory: Callable[[Batch], GroupExec] = GroupExec) -> None:
        """observers: hear the run's events (symexec.events); policy: how guards and branches are
        treated (default: follow the values); ctas: run exactly these CTAs, as one batch (default:
        the whole grid, batch by batch); exec_factory: the instruction context of each batch."""
        check_launch_bounds(prog.function, launch)
        self.prog = prog
        self.launch = launch
        self.glob = GlobalMemory()
        self.addresses: dict[str, int] = {}
        for name, arr in launch.buffers.items():
            alloc = self.glob.allocate(name, arr.nbytes, data=arr)
            self.addresses[name] = alloc.base
        self.var_addr = self._place_variables()
        params, offsets = pack_params(prog.params, launch.params, self.addresses)
        self.params, self.param_offsets = params, offsets
        for p in prog.params:
            self.var_addr[p.name] = (".param", offsets[p.name])
        self.batch_ctas = max(1, min(batch_ctas, max(1, 16384 // max(32, launch.threads_per_block))))
        self.environment: dict[str, int] = {}
        if prog.specials & {"%envreg1", "%envreg2"}:
            # A cooperative launch (cudaLaunchCooperativeKernel): cooperative groups find the grid's
            # barrier workspace at the address %envreg1:%envreg2 (high:low), zero-filled; every CTA is
            # resident at once, so the grid runs as one batch and a grid-wide sync can complete
            ws = self.glob.allocate("cooperative-groups grid workspace", GRID_WORKSPACE_BYTES)
            self.environment = {"%envreg1": ws.base >> 32, "%envreg2": ws.base & 0xFFFFFFFF}
            self.batch_ctas = launch.num_ctas
        self.max_steps = max_steps
        self.limits = _LIMITS.get()
        self._ctas_done = 0  # CTAs of finished batches (progress and limit messages)
        self._steps_before = 0  # instructions of finished batches
        self._batch_steps = 0  # instructions of the running batch
        self._thread_steps = 0  # instructions times the threads that ran them (all batches)
        self._loops: list[tuple[int, int]] | None = None  # (head, backward branch pc), built on first use
        self.stats = RunStats()
        self.findings: list[MachineFinding] = []
        self.observers = list(observers)
        self.policy = policy or Policy()
        self.ctas = ctas
        self.exec_factory = exec_factory
        self._dispatch = self._decode()

    # ------------------------------------------------------------------ set-up
    def _place_variables(self) -> dict[str, tuple[str, int]]:
        out: dict[str, tuple[str, int]] = {}
        # every function has an address (mov of its name, call tables, indirect calls; PTX 9.7.12.5)
        for i, fn in enumerate(dict.fromkeys(f.name for f in self.prog.module.functions)):
            out[fn] = (".func", FUNCTION_BASE + 16 * i)
        pending_init = []
        for v in self.prog.variables.values():
            if v.space in (".global", ".const"):
                alloc = self.glob.allocate(v.name, v.size, align=max(v.align, 16), readonly=v.space == ".const")
                out[v.name] = (v.space, alloc.base)
                if v.item.init is not None:
                    pending_init.append((v, alloc))
            elif v.space in (".shared", ".local"):
                out[v.name] = (v.space, v.offset)
        symbols = {k: a for k, (_, a) in out.items()}
        for v, alloc in pending_init:
            _initialise(v, alloc.data, symbols)
        return out

    def _decode(self) -> list:
        """Per pc: (machine-level handler or None, data handler or None)."""
        table = []
        self._purity = [purity(ins) for ins in self.prog.code]
        # which lanes run it matters beyond their own registers: memory, synchronisation, and warp
        # collectives (a lane of the membermask that does not run shfl.sync/vote/redux... is UB, 9.7.8.6)
        self._guard_matters = [ins.guard is not None and ins.opcode != "bra"
                               and (touches_memory_or_sync(ins.opcode) or facts(ins.opcode).lanes is not LaneScope.LANE)
                               for ins in self.prog.code]
        self._value_guards = [value_guarded(ins) for ins in self.prog.code]
        for ins in self.prog.code:
            ctl = _CONTROL.get(ins.opcode)
            unit = _units.handler(ins.opcode)
            if ctl is not None:
                table.append((getattr(self, ctl), None))
            elif unit is not None:
                table.append((lambda b, g, i, m, fn=unit: fn(self, b, g, i, m), None))
            else:
                table.append((None, HANDLERS.get(ins.opcode)))
        watchers = [o for o in self.observers if isinstance(o, InstructionObserver)]
        if watchers:
            table = [(self._watched(watchers, c, f), None) for c, f in table]
        return table

    def _watched(self, watchers: list[InstructionObserver], ctl, fn):
        """A dispatch entry that shows the instruction to `watchers` before and after it runs."""
        def run(b: Batch, g: Group, ins: A.Instruction, mask: np.ndarray) -> bool:
            tokens = [w.before_instruction(b, g, ins, mask) for w in watchers]
            if ctl is not None:
                ok = ctl(b, g, ins, mask)
            else:
                self._run_data(b.ctx, ins, fn, mask)
                g.pc += 1
                ok = True
            for w, t in zip(watchers, tokens):
                w.after_instruction(b, g, ins, mask, t)
            return ok

        return run

    # ------------------------------------------------------------------ run
    def run(self) -> GlobalMemory:
        if self.ctas is not None:
            batches = [self.ctas]
        else:
            gx, gy, gz = self.launch.grid
            ctas = [(x, y, z) for z in range(gz) for y in range(gy) for x in range(gx)]
            batches = [ctas[i:i + self.batch_ctas] for i in range(0, len(ctas), self.batch_ctas)]
        base = 0
        for bi, these in enumerate(batches):
            batch = Batch(self.prog, self.launch, self.glob, these, self.params, self.param_offsets, self.var_addr,
                          self.observers, bi, base, self.exec_factory, self.environment)
            base += len(these)
            self.stats.batches += 1
            try:
                self._run_batch(batch)
                self._finish_units(batch)
            except ExecError as e:  # the batch's CTAs name the lanes of a fault (its witness)
                e.batch_ctas = list(these)
                raise
            self._ctas_done += len(these)
            self._steps_before += self._batch_steps
            self._batch_steps = 0
            self.findings.extend(batch.reports[:max(0, 64 - len(self.findings))])
            if self.limits.progress is not None:
                self.limits.progress(self.progress())
        return self.glob

    @property
    def ctas_done(self) -> int:
        """CTAs whose batch has finished."""
        return self._ctas_done

    @property
    def ctas_total(self) -> int:
        return len(self.ctas) if self.ctas is not None else self.launch.num_ctas

    def progress(self) -> Progress:
        return Progress(self._ctas_done, self.ctas_total, self._steps_before + self._batch_steps, self._thread_steps,
                        rss_bytes())

    @staticmethod
    def _finish_units(batch: Batch) -> None:
        """End-of-kernel obligations of the units (e.g. tcgen05.dealloc, pending bulk stores)."""
        for unit in batch.units.values():
            unit.finish(batch)

    def _run_batch(self, b: Batch) -> None:
        steps = 0
        while True:
            ready = [g for g in b.groups if g.status == "ready"]
            if not ready:
                ready = self._wake(b)
            if not ready:
                ready = self._reconverge_per_warp(b)
            if not ready:
                waiting = [g for g in b.groups if g.status != "done"]
                if not waiting:
                    return
                raise Deadlock(self._deadlock_message(b, waiting),
                               self.prog.code[waiting[0].pc] if waiting[0].pc < len(self.prog.code) else None)
            self.stats.max_groups = max(self.stats.max_groups, len(b.groups))
            group = self.policy.next_group(ready) if len(ready) > 1 else ready[0]
            threads = int(np.count_nonzero(group.mask))
            ran = self._step_group(b, group)
            steps += ran
            self._thread_steps += ran * threads
            self.stats.steps = self._batch_steps = steps
            self._check_limits(steps, group.pc, clock=True)
            b.groups = [g for g in b.groups if g.status != "done"]
        # not reached

    def _reconverge_per_warp(self, b: Batch) -> list[Group]:
        """Nothing can run: let warps whose lanes have all reached their join go on alone.

        Joins wait for every lane of the group that diverged, across warps, so that uniform code
        stays one vector; the hardware reconverges each warp separately. When a join blocks
        progress (its other warps wait at a barrier, say), the complete warps are released."""
        released = []
        joins = {id(g.joins[-1]): g.joins[-1] for g in b.groups if g.status == "parked" and g.joins}
        for j in joins.values():
            if not j.parked or j.explored:
                continue
            need = (j.expected & b.alive).reshape(-1, 32)
            got = j.arrived.reshape(-1, 32)
            complete = ((need & ~got) == 0).all(axis=1) & got.any(axis=1)
            if not complete.any():
                continue
            lanes = np.repeat(complete, 32) & j.arrived
            base = j.parked[0]
            g = base.derive(lanes.copy(), j.pc, base.joins[:-1])  # per-warp release
            j.expected &= ~lanes
            j.arrived &= ~lanes
            for p in j.parked:
                p.mask = p.mask & ~lanes
                if not p.mask.any():
                    p.status = "done"
            j.parked = [p for p in j.parked if p.status != "done"]
            b.groups.append(g)
            released.append(g)
        return released

    @staticmethod
    def _wake(b: Batch) -> list[Group]:
        """Groups waiting on a condition (mbarrier phase, async completion) whose time has come."""
        woken = []
        for g in b.groups:
            if g.status == "wait" and g.wake is not None and g.wake():
                g.status, g.wake, g.waiting_for = "ready", None, ""
                woken.append(g)
        return woken

    def _deadlock_message(self, b: Batch, waiting: list[Group]) -> str:
        parts = []
        for g in waiting[:4]:
            lanes = np.nonzero(g.mask)[0]
            ins = self.prog.code[g.pc] if g.pc < len(self.prog.code) else None
            what = f"{ins.name} at {ins.span}" if ins is not None else "end of kernel"
            first = int(lanes[0]) if lanes.size else -1
            why = g.waiting_for or g.status
            parts.append(f"{lanes.size} thread(s) (first: CTA slot {first // b.lanes_per_cta}, thread "
                         f"{first % b.lanes_per_cta}) wait at {what} [{why}]")
        return "no thread can make progress; " + "; ".join(parts)

    def _step_group(self, b: Batch, g: Group) -> int:
        """Run `g` until it blocks, splits, parks, or finishes. Returns instructions executed."""
        code = self.prog.code
        dispatch = self._dispatch
        purity = self._purity
        ctx = b.ctx
        steps = 0
        n_code = len(code)
        # Non-termination: while this group runs alone, a backward jump that finds the group's
        # registers as they were at an earlier jump to the same place, with no instruction in
        # between that touched memory or synchronised, repeats forever (the machine is deterministic).
        seen: set[bytes] = set()
        window = Purity.PURE  # the most effectful instruction since the last reset
        ctx.group = g
        policy = self.policy
        while g.status == "ready":
            if (steps and not steps & 1023) or steps > self.max_steps:  # cheap test on the hot path
                self._check_limits(steps, g.pc, clock=True)
            while g.ctl and g.pc == g.ctl[-1]:
                g.ctl = g.ctl[:-1]
            if g.joins and g.pc == g.joins[-1].pc:
                self._park(b, g)
                return steps
            if g.pc >= n_code:
                self._exit(b, g, g.mask.copy())
                return steps
            ins = code[g.pc]
            steps += 1
            mask = g.mask
            ctx.pc = g.pc
            if ctx.audits:
                ctx.audit(g, ins)
            if ins.guard is not None:
                pred = np.broadcast_to(ctx.read_reg(ins.guard.pred, ".pred"), (b.n,))
                mask = mask & (~pred if ins.guard.negated else pred)
                if self._guard_matters[g.pc]:
                    policy.on_guard(b, g, ins)
                elif self._value_guards[g.pc]:
                    policy.on_value_guard(b, g, ins, mask)
            ctl, fn = dispatch[g.pc]
            window = max(window, purity[g.pc])
            if ctl is not None:
                pc = g.pc
                if not self._attempt(b, g, mask, lambda m: ctl(b, g, ins, m)):
                    return steps
                if (g.pc <= pc or (g.pc == pc + 1 and pc in self.prog.falls_back)) and g.status == "ready" \
                        and policy.watches_back_edges:
                    policy.on_back_edge(b, g, ins, pc)
                if g.pc <= pc and g.status == "ready" and steps > _WATCH_AFTER:  # a backward jump
                    if window == Purity.EFFECT:
                        seen.clear()
                    else:
                        key = self._fingerprint(b, g)
                        if key in seen:
                            raise self._endless(b, g, ins, window)
                        if len(seen) > 4096:
                            seen.clear()
                        seen.add(key)
                    window = Purity.PURE
                continue
            self._attempt(b, g, mask, lambda m: self._run_data(ctx, ins, fn, m))
            g.pc += 1
        return steps

    def _attempt(self, b: Batch, g: Group, mask: np.ndarray, run: Callable[[np.ndarray], Any]) -> Any:
        """run(mask); when lanes of it fault, trap or do something undefined and the policy takes
        the error (a path explored for a data-dependent branch, which no input may take), run
        again without those lanes: their effect is left out and the rest of the path is checked."""
        while True:
            try:
                return run(mask)
            except (MemoryFault, Trap, UndefinedBehavior) as e:
                failing = failing_lanes(e, b.n) & mask
                if not failing.any() or not self.policy.on_error(b, g, e):
                    raise
                mask = mask & ~failing
                self._drop(b, g, failing)

    def _drop(self, b: Batch, g: Group, lanes: np.ndarray) -> None:
        """Lanes leave the path `g` explores (an error the policy took there): joins inside the
        exploration stop waiting for them; at the exploration's join they count as arrived, and
        they go on after it only if their copy on the other path came through (_try_merge)."""
        g.mask = g.mask & ~lanes
        j = None
        for jj in reversed(g.joins):
            if jj.explored:
                j = jj
                jj.arrived |= lanes
                break
            jj.expected &= ~lanes
        if not g.mask.any():
            g.status = "done"
            if j is not None:
                j.paths -= 1  # one path group fewer will come
                self._try_merge(b, j)

    def _retire(self, b: Batch, lanes: np.ndarray) -> None:
        """Lanes dropped on every explored path: they end here, as if they had exited."""
        if b.observers:
            b.emit(Exited(np.nonzero(lanes)[0]))
        b.alive &= ~lanes
        for grp in b.groups:
            for jj in grp.joins:
                jj.expected &= ~lanes
        self._check_barriers(b)

    def _check_limits(self, steps: int, pc: int, clock: bool) -> None:
        """Stop past max_steps or, when ``clock``, past run_limits()' deadline or memory ceiling;
        report progress there."""
        code = self.prog.code
        ins = code[min(pc, len(code) - 1)]
        if steps > self.max_steps:
            raise ExecError(f"step limit of {self.max_steps} instructions reached{self._where(pc)}", ins)
        if not clock:
            return
        lim = self.limits
        if lim.deadline is not None and time.monotonic() > lim.deadline:
            raise TimeLimit(f"time limit of {lim.seconds:g} s reached{self._where(pc)}", ins)
        if lim.max_rss is not None or lim.progress is not None:
            now = self.progress()
            if lim.max_rss is not None and now.rss > lim.max_rss:
                raise MemoryLimit(f"memory limit of {lim.max_rss / 2**20:.0f} MiB reached ({now.rss / 2**20:.0f} MiB "
                                  f"resident){self._where(pc)}", ins)
            if lim.progress is not None:
                lim.progress(now)

    def _where(self, pc: int) -> str:
        """`after 3 of 4000 CTAs, at ld.global.f32 at k.ptx:12:3 in the loop closed by bra at ...`."""
        code = self.prog.code
        pc = min(pc, len(code) - 1)
        ins = code[pc]
        at = f" at {ins.name}" + (f" at {ins.span}" if ins.span else "")
        loop = self._loop_of(pc)
        in_loop = f" in the loop closed by {code[loop].name} at {code[loop].span}" if loop is not None else ""
        return f" after {self._ctas_done} of {self.ctas_total} CTAs{at}{in_loop}"

    def _loop_of(self, pc: int) -> int | None:
        """The backward branch of the innermost loop around `pc` (a branch at or after it to a label
        at or before it), or None: straight-line code."""
        if self._loops is None:
            self._loops = []
            for i, ins in enumerate(self.prog.code):
                t = ins.operands[0] if ins.opcode == "bra" and ins.operands else None
                if isinstance(t, A.Sym) and self.prog.labels.get(t.name, i + 1) <= i:
                    self._loops.append((self.prog.labels[t.name], i))
        inside = [(b - h, b) for h, b in self._loops if h <= pc <= b]
        return min(inside)[1] if inside else None

    @staticmethod
    def _fingerprint(b: Batch, g: Group) -> bytes:
        """The state a group's future depends on when nothing else runs: pc, lanes, registers."""
        h = hashlib.blake2b(digest_size=16)
        h.update(g.pc.to_bytes(8, "little"))
        h.update(np.packbits(g.mask).tobytes())
        h.update(repr((len(g.joins), g.ctl, g.explore)).encode())
        for name in sorted(b.regs):
            v = b.regs[name]
            h.update(name.encode())
            lanes = np.ndim(v) and np.shape(v)[0] == b.n
            h.update(np.ascontiguousarray(v[g.mask] if lanes else v).tobytes())
        return h.digest()

    def _endless(self, b: Batch, g: Group, ins: A.Instruction, window: int) -> ExecError:
        lane = int(np.flatnonzero(g.mask)[0])
        cta, t = b.ctas[int(b.cta_of_lane[lane])], lane % b.lanes_per_cta
        where = f"the loop closed by {ins.name} at {ins.span}" if ins.span else f"the loop closed by {ins.name}"
        if g.explore:
            # on a path explored for both outcomes of a data-dependent branch, the registers may
            # hold a combination no input produces
            return ExecError(f"{where} repeats its state on a path explored for a data-dependent branch "
                             "(it may be one no input takes)", ins)
        if window == Purity.READS:
            # only reads in the loop: another thread or CTA could still change what it reads
            return ExecError(f"{where} repeats its state with no store in between ({int(g.mask.sum())} "
                             f"thread(s) of CTA {cta}, the first: thread {t}): it ends only if another thread "
                             "or CTA changes memory it reads, which the emulator does not interleave here", ins)
        return Deadlock(f"{where} never terminates: {int(g.mask.sum())} thread(s) of CTA {cta} (the first: thread "
                        f"{t}) return to its head with the same registers and no memory access in between", ins)

    @staticmethod
    def _run_data(ctx, ins: A.Instruction, fn, mask: np.ndarray) -> None:
        """Run a data handler on the executing lanes; a Python error inside a handler means a form
        it does not model, reported as unsupported (never as a value)."""
        if fn is None:
            raise Unsupported(f"{ins.name} (no semantics for opcode '{ins.opcode}')", ins)
        if not mask.any():
            return
        ctx.begin(mask, ins)
        try:
            fn(ins, ctx)
        except (ExecError, ArithmeticError, ValueError, KeyError, IndexError, TypeError) as e:
            if isinstance(e, ExecError):
                if e.ins is None:
                    e.ins = ins
                raise
            raise Unsupported(f"{ins.name}: {type(e).__name__}: {e}", ins) from e

    # ------------------------------------------------------------------ reconvergence
    def _park(self, b: Batch, g: Group) -> None:
        j = g.joins[-1]
        j.arrived |= g.mask
        j.parked.append(g)
        g.status = "parked"
        self._try_merge(b, j)

    def _try_merge(self, b: Batch, j: Join) -> None:
        if j.explored and j.paths <= 0 and not j.parked:  # every copy of its lanes was dropped
            gone = j.expected & b.alive
            if gone.any():
                self._retire(b, gone)
            return
        if not j.parked:
            return
        if j.explored and len(j.parked) < j.paths:
            return
        if (j.expected & b.alive & ~j.arrived).any():
            return
        base = j.parked[0]
        mask = j.arrived & b.alive
        if j.explored:  # lanes whose every explored copy was dropped (Machine._drop) end here
            mask = np.logical_or.reduce([p.mask for p in j.parked]) & b.alive
            gone = j.expected & b.alive & ~mask
            if gone.any():
                self._retire(b, gone)
        merged = base.derive(mask, j.pc, base.joins[:-1],
                             explore=max(0, base.explore - (1 if j.explored else 0)),
                             path=base.path[:-1] if j.explored and base.path else base.path)
        for p in j.parked:
            p.status = "done"
        j.parked = []
        if b.observers:
            b.emit(Reconverged(j, merged, j.taint_regs))
        if merged.mask.any():
            b.groups.append(merged)

    # ------------------------------------------------------------------ control flow (PTX 9.7.12)
    def _bra(self, b: Batch, g: Group, ins: A.Instruction, mask: np.ndarray) -> bool:
        check_control_mods(ins, {".uni"})
        target = ins.operands[0]
        if not isinstance(target, A.Sym) or target.name not in self.prog.labels:
            raise Unsupported(f"{ins.name} to a non-label target", ins)
        dest = self.prog.labels[target.name]
        taken = mask
        if ins.guard is not None:
            decision = self.policy.on_branch(b, g, ins, dest)
            if decision is BranchDecision.REGISTER_REGION:
                # a choice between register-only paths: values written until the reconvergence
                # point depend on the choice
                g.ctl = g.ctl + (self.prog.reconverge.get(g.pc),)
            elif decision is BranchDecision.BOTH_PATHS:
                # explore both paths with every lane (a superset of what any input does); the
                # registers they write depend on the choice after they merge
                # (lanes whose predicate does not depend on data go their own way only)
                j = Join(self.prog.reconverge[g.pc], g.mask.copy(), np.zeros_like(g.mask), paths=2,
                         taint_regs=frozenset(self.prog.region_writes(g.pc)), dep=g.dep, explored=True)
                g.status = "done"
                e = g.explore + 1
                ident, both = self.policy.explored(b, g, ins)
                k = 2 * ident
                both = both & g.mask
                paths = (g.derive((g.mask & ~taken) | both, g.pc + 1, g.joins + (j,), explore=e, path=g.path + (k,)),
                         g.derive((taken & g.mask) | both, dest, g.joins + (j,), explore=e, path=g.path + (k + 1,)))
                b.groups.extend(paths)
                if b.observers:
                    b.emit(GroupSplit(g, paths, SplitReason.BOTH_PATHS, ins))
                return False
        if not taken.any():
            g.pc += 1
            return True
        if ins.guard is None or (taken == g.mask).all():
            g.pc = dest
            return True
        if ".uni" in ins.modifiers:
            # .uni promises the branch is non-divergent within each warp (PTX 9.7.12.1); a group can
            # span warps and CTAs that legitimately go different ways
            w_taken = taken.reshape(-1, 32)
            w_active = g.mask.reshape(-1, 32)
            split = (w_taken.any(axis=1)) & ((w_taken != w_active).any(axis=1))
            if split.any():
                raise UndefinedBehavior("bra.uni taken by only some of the threads of a warp executing it", ins)
        # divergence: split and reconverge at the immediate post-dominator
        r = self.prog.reconverge.get(g.pc)
        j = Join(r, g.mask.copy(), np.zeros_like(g.mask))
        joins = g.joins + (j,)
        fall = g.derive(g.mask & ~taken, g.pc + 1, joins)
        jump = g.derive(taken.copy(), dest, joins)
        g.status = "done"
        b.groups.extend([fall, jump])
        if b.observers:
            b.emit(GroupSplit(g, (fall, jump), SplitReason.DIVERGENCE, ins))
        return False

    def _brx(self, b: Batch, g: Group, ins: A.Instruction, mask: np.ndarray) -> bool:
        """brx.idx{.uni} index, tlist (PTX 9.7.12.2): continue at label tlist[index]; an index beyond
        the list is undefined. Lanes going to different labels split (one group per label) and
        reconverge at the branch's immediate post-dominator, as a divergent bra does."""
        check_control_mods(ins, {".idx", ".uni"})
        table = ins.operands[1] if len(ins.operands) == 2 else None
        labels = self.prog.branch_targets.get(table.name) if isinstance(table, A.Sym) else None
        if ".idx" not in ins.modifiers or labels is None or any(lab not in self.prog.labels for lab in labels):
            raise Unsupported(f"{ins.name}: expected `brx.idx index, tlist` with a .branchtargets list", ins)
        if not mask.any():
            g.pc += 1
            return True
        index = np.broadcast_to(np.asarray(b.ctx.read(ins.operands[0], ".u32")), (b.n,)).astype(np.int64)
        self.policy.on_indirect(b, g, ins, ins.operands[0])
        if (index[mask] >= len(labels)).any():
            raise UndefinedBehavior(f"{ins.name}: index {int(index[mask].max())} is beyond the {len(labels)} "
                                    f"targets of {table.name}", ins)
        dests = np.array([self.prog.labels[lab] for lab in labels], dtype=np.int64)[np.where(mask, index, 0)]
        targets = np.unique(dests[mask])
        if ".uni" in ins.modifiers:
            per_warp = np.where(mask, dests, -1).reshape(-1, 32)
            act = mask.reshape(-1, 32)
            if any(np.unique(per_warp[w][act[w]]).size > 1 for w in range(act.shape[0]) if act[w].any()):
                raise UndefinedBehavior("brx.idx.uni with different targets among the threads of a warp", ins)
        if targets.size == 1 and (mask == g.mask).all():
            g.pc = int(targets[0])
            return True
        j = Join(self.prog.reconverge.get(g.pc), g.mask.copy(), np.zeros_like(g.mask))
        joins = g.joins + (j,)
        parts = [g.derive(mask & (dests == t), int(t), joins) for t in targets]
        if (g.mask & ~mask).any():  # lanes whose guard is false fall through
            parts.append(g.derive(g.mask & ~mask, g.pc + 1, joins))
        g.status = "done"
        b.groups.extend(parts)
        if b.observers:
            b.emit(GroupSplit(g, tuple(parts), SplitReason.DIVERGENCE, ins))
        return False

    def _exit(self, b: Batch, g: Group, mask: np.ndarray) -> bool:
        for unit in list(b.units.values()):  # e.g. a thread's pending cp.async copies land at its exit
            unit.on_exit(b, mask)
        if b.observers and mask.any():
            b.emit(Exited(np.nonzero(mask)[0]))
        b.alive &= ~mask
        g.mask = g.mask & ~mask
        for j in g.joins:
            j.expected &= ~mask
        if not g.mask.any():
            g.status = "done"
        # exited warps no longer count towards barriers; joins may now be complete
        for j in {id(j): j for grp in b.groups for j in grp.joins}.values():
            self._try_merge(b, j)
        self._check_barriers(b)
        return g.status == "ready"

    def _exit_ins(self, b: Batch, g: Group, ins: A.Instruction, mask: np.ndarray) -> bool:
        if self.prog.function.kind == ".func" and ins.opcode == "ret":
            raise Unsupported("ret from a .func called by the kernel", ins)
        if ins.opcode == "trap":  # abort the kernel and signal the host (PTX 9.7.19, trap)
            if mask.any():
                lanes = np.nonzero(mask)[0]
                raise Trap(f"trap executed by {lanes.size} thread(s)", ins, [int(x) for x in lanes])
            g.pc += 1
            return True
        stay = self._exit(b, g, mask)
        if stay:
            g.pc += 1
        return stay

    def _bar(self, b: Batch, g: Group, ins: A.Instruction, mask: np.ndarray) -> bool:
        """bar{.cta}.{sync,arrive,red} / barrier{.cta}.{sync,arrive,red}{.aligned} a{, b} (PTX 9.7.13.1).

        Arrivals are counted in threads: with .aligned (bar.* is barrier.*.aligned) every thread of
        a warp takes part, so a warp counts 32; without it, threads arrive one by one."""
        mods = ins.modifiers - {".cta", ".aligned"}
        if ins.opcode == "bar" and ".warp" in mods:
            return self._bar_warp(b, g, ins, mask)
        red_ops = {".popc", ".and", ".or"} & mods
        kind = ("red" if ".red" in mods else "arrive" if ".arrive" in mods else
                "sync" if ".sync" in mods or not (mods - set(ins.types)) else None)
        extra = mods - {".sync", ".arrive", ".red", ".popc", ".and", ".or"} - set(ins.types)
        if kind is None or extra or (kind == "red" and len(red_ops) != 1):
            raise Unsupported(f"{ins.name}", ins)
        if not mask.any():
            g.pc += 1
            return True
        ops = ins.operands[1:] if kind == "red" else ins.operands
        bar_id = b.ctx.scalar(ops[0], ".u32", mask, ins)
        count = None
        if kind == "red":
            if len(ops) == 3:
                count = b.ctx.scalar(ops[1], ".u32", mask, ins)
        elif len(ops) > 1:
            count = b.ctx.scalar(ops[1], ".u32", mask, ins)
        if not 0 <= bar_id < 16:
            raise UndefinedBehavior(f"barrier id {bar_id} outside 0..15", ins)
        if count is not None and (count % 32 or count <= 0):
            raise UndefinedBehavior(f"barrier thread count {count} is not a positive multiple of 32", ins)
        aligned = ins.opcode == "bar" or ".aligned" in ins.modifiers
        shaped = mask.reshape(b.n_ctas, b.warps_per_cta, 32)
        warps = shaped.any(axis=2)
        if aligned:
            partial = (shaped != b.alive.reshape(b.n_ctas, b.warps_per_cta, 32)) & warps[:, :, None]
            if partial.any():
                c, w, lane = (int(v[0]) for v in np.nonzero(partial))
                self._finding(b, FindingKind.DIVERGENCE, f"{ins.name} executed by only part of warp {w} (lane {lane} is on "
                              "another path); an .aligned barrier needs the whole warp", ins,
                              lane=c * b.lanes_per_cta + w * 32 + lane)
            arriving = np.repeat(warps, 32, axis=1).reshape(-1) & b.valid  # whole warps arrive
        else:
            arriving = mask
        ctas = sorted(set(np.nonzero(warps.any(axis=1))[0].tolist()))
        for c in ctas:  # every arrival of one barrier instance must name the same thread count
            prev = b.bar_count_of.get((c, bar_id))
            if b.bar_arrived[c, bar_id].any() and prev != count:
                raise UndefinedBehavior(f"barrier {bar_id} used with thread count {count} while another warp "
                                        f"arrived with {prev}: all arrivals must use the same count", ins)
            b.bar_count_of[(c, bar_id)] = count
        if b.observers:
            lanes = np.nonzero(mask)[0]
            inst = b.bar_instance[b.cta_of_lane[lanes], bar_id]
            for k in np.unique(inst):
                b.emit(Release(lanes[inst == k], SyncPoint(SyncKind.BARRIER, (bar_id, int(k))), ins))
        b.bar_arrived[:, bar_id, :] |= arriving.reshape(b.n_ctas, -1)
        if kind == "red":
            src = ins.operands[-1]
            val = np.broadcast_to(b.ctx.read(src, ".pred") if not isinstance(src, A.Negated)
                                  else ~b.ctx.read(src.operand, ".pred"), (b.n,))
            acc = b.bar_red.setdefault(bar_id, np.zeros(b.n, bool))
            acc |= mask & val.astype(bool)
            b.bar_red_seen.setdefault(bar_id, np.zeros(b.n, bool))
            b.bar_red_seen[bar_id] |= mask
        if kind == "arrive":
            g.pc += 1
            self._check_barriers(b)
            return True
        # the executing lanes wait; lanes of the group that did not execute (guard false) go on
        rest = g.mask & ~mask
        if rest.any():
            b.split(g, rest, g.pc + 1, ins)
        g.status = "barrier"
        g.barrier = bar_id
        g.pending = set(ctas)
        g.red = ins if kind == "red" else None
        b.bar_waiting.append(g)
        self._check_barriers(b)
        return g.status == "ready"

    def _check_barriers(self, b: Batch) -> None:
        """Complete every barrier whose expected threads have all arrived; release waiters."""
        if not b.bar_waiting and not b.bar_arrived.any():
            return
        alive = b.alive.reshape(b.n_ctas, -1)
        alive_n = alive.sum(axis=1)
        arrived_n = b.bar_arrived.sum(axis=2)  # (ctas, 16) threads
        for bar_id in np.nonzero(b.bar_arrived.any(axis=(0, 2)))[0]:
            counts = [b.bar_count_of.get((c, int(bar_id))) for c in range(b.n_ctas)]
            expected = np.array([cnt if cnt is not None else alive_n[c] for c, cnt in enumerate(counts)])
            done = (arrived_n[:, bar_id] >= expected) & (arrived_n[:, bar_id] > 0)
            if not done.any():
                continue
            done_ctas = set(np.nonzero(done)[0].tolist())
            for c in done_ctas:
                if counts[c] is not None and arrived_n[c, bar_id] > expected[c]:
                    # 9.7.13.1: the instance completes when `count` threads have arrived; warps beyond
                    # those start the next instance, so which warps it releases together is unspecified
                    self._finding(b, FindingKind.DIVERGENCE, f"barrier {bar_id} with thread count {counts[c]}: "
                                  f"{int(arrived_n[c, bar_id])} threads arrived at one instance; it completes with "
                                  f"the first {counts[c]} to arrive and the other warps start the next instance, so "
                                  "they are not synchronised with each other here (PTX 9.7.13.1)",
                                  next((self.prog.code[w.pc] for w in b.bar_waiting if w.barrier == bar_id
                                        and c in w.pending and w.pc < len(self.prog.code)), None),
                                  lane=c * b.lanes_per_cta + int(np.nonzero(b.bar_arrived[c, bar_id])[0][-1]))
            b.bar_arrived[done, bar_id, :] = False
            exited = b.valid.reshape(b.n_ctas, -1) & ~alive
            for c in done_ctas:
                if counts[c] is None and exited[c].any():
                    gone = np.nonzero(exited[c])[0]
                    waiter = next((w for w in b.bar_waiting if w.barrier == bar_id and c in w.pending
                                   and w.pc < len(self.prog.code)), None)
                    lane = c * b.lanes_per_cta
                    if waiter is not None:
                        lane = int(np.nonzero(waiter.mask & (b.cta_of_lane == c))[0][0])
                    self._finding(b, FindingKind.DIVERGENCE, f"barrier {bar_id} completed after {gone.size} thread(s) "
                                  f"of the CTA had exited without reaching it (threads {_ranges(gone)} of "
                                  f"{int(b.valid.reshape(b.n_ctas, -1)[c].sum())}); a CTA-wide barrier must be "
                                  "reached by every thread (PTX 9.7.13.1)",
                                  self.prog.code[waiter.pc] if waiter is not None else None, lane=lane)
            red_result = None
            if int(bar_id) in b.bar_red:
                red_result = (b.bar_red.pop(int(bar_id)), b.bar_red_seen.pop(int(bar_id)))
            for w in b.bar_waiting:
                if w.barrier == bar_id:
                    if b.observers:
                        for c in done_ctas & w.pending:
                            lanes = np.nonzero(w.mask & (b.cta_of_lane == c))[0]
                            point = SyncPoint(SyncKind.BARRIER, (int(bar_id), int(b.bar_instance[c, bar_id])))
                            b.emit(Acquire(lanes, point))
                    if w.red is not None and red_result is not None and done_ctas & w.pending:
                        self._deliver_red(b, w, red_result)
                    w.pending -= done_ctas
                    if not w.pending and w.status == "barrier":
                        w.status = "ready"
                        w.pc += 1
            for c in done_ctas:
                b.bar_instance[c, bar_id] += 1
                b.bar_count_of.pop((c, int(bar_id)), None)
        b.bar_waiting = [w for w in b.bar_waiting if w.status == "barrier"]

    @staticmethod
    def _deliver_red(b: Batch, w: Group, red) -> None:
        """bar.red results: popc counts true predicates, and/or reduce them, per CTA."""
        acc, seen = red
        ins = w.red
        per_cta_true = np.bincount(b.cta_of_lane, weights=acc.astype(np.int64), minlength=b.n_ctas)
        per_cta_seen = np.bincount(b.cta_of_lane, weights=seen.astype(np.int64), minlength=b.n_ctas)
        ctx = b.ctx
        ctx.begin(w.mask, ins)
        if ".popc" in ins.modifiers:
            ctx.write(ins.operands[0], per_cta_true[b.cta_of_lane].astype(np.uint32), ".u32")
        elif ".and" in ins.modifiers:
            ctx.write(ins.operands[0], (per_cta_true == per_cta_seen)[b.cta_of_lane], ".pred")
        else:
            ctx.write(ins.operands[0], (per_cta_true > 0)[b.cta_of_lane], ".pred")

    def _bar_warp(self, b: Batch, g: Group, ins: A.Instruction, mask: np.ndarray) -> bool:
        """bar.warp.sync membermask: the named lanes must execute it together (PTX 9.7.13.2)."""
        members = np.broadcast_to(b.ctx.read_value(ins.operands[0], ".b32"), (b.n,)).astype(np.uint32)
        lane_bit = (np.uint32(1) << (np.arange(b.n, dtype=np.uint32) % 32)).astype(np.uint32)
        if (mask & ((members & lane_bit) == 0)).any():
            raise UndefinedBehavior("bar.warp.sync executed by a lane that is not in membermask", ins)
        executing = mask.reshape(-1, 32)
        bits = (executing * (np.uint64(1) << np.arange(32, dtype=np.uint64))).sum(axis=1)
        want = members.reshape(-1, 32)[np.arange(executing.shape[0]), np.argmax(executing, axis=1)]
        if (executing.any(axis=1) & ((want.astype(np.uint64) & ~bits) != 0)).any():
            raise Unsupported("bar.warp.sync whose membermask names lanes on another divergent path", ins)
        if b.observers:  # the member lanes synchronise: memory before it is ordered after it
            lanes = np.nonzero(mask)[0]
            b.warp_syncs += 1
            for w in np.unique(lanes // 32):
                sel = lanes[lanes // 32 == w]
                point = SyncPoint(SyncKind.WARP_SYNC, (int(w % b.warps_per_cta), b.warp_syncs))
                b.emit(Release(sel, point, ins))
                b.emit(Acquire(sel, point, ins, consume=True))
        g.pc += 1
        return True

    def _fence(self, b: Batch, g: Group, ins: A.Instruction, mask: np.ndarray) -> bool:
        """fence / membar (PTX 9.7.13.4): no effect on values in this emulation; observers hear of
        them (proxy fences order the generic proxy against the async and tensormap proxies, 8.6)."""
        if b.observers and mask.any():
            b.emit(fence_event(ins, np.nonzero(mask)[0]))
        g.pc += 1
        return True

    def report(self, b: Batch, kind: FindingKind, message: str, ins: A.Instruction | None,
               lane: int | None = None) -> None:
        """A bug seen while running that does not stop the run (units report theirs here)."""
        self._finding(b, kind, message, ins, lane)

    def _finding(self, b: Batch, kind: FindingKind, message: str, ins: A.Instruction | None,
                 lane: int | None = None) -> None:
        if len(self.findings) < 64 and not any(f.kind is kind and f.ins is ins and f.message == message
                                                for f in self.findings):  # once per instruction and text
            self.findings.append(b.finding(kind, message, ins, lane))

    def _nop(self, b: Batch, g: Group, ins: A.Instruction, mask: np.ndarray) -> bool:
        g.pc += 1
        return True

    def _unsupported(self, b: Batch, g: Group, ins: A.Instruction, mask: np.ndarray) -> bool:
        raise Unsupported(f"{ins.name}", ins)


# Non-termination is watched for once one group has run this many instructions without a break
# (ordinary loops finish sooner and pay nothing for the fingerprints).
_WATCH_AFTER = 20_000

_CONTROL = {
    "bra": "_bra",
    "exit": "_exit_ins",
    "ret": "_exit_ins",
    "trap": "_exit_ins",
    "bar": "_bar",
    "barrier": "_bar",
    "nanosleep": "_nop",
    "pmevent": "_nop",
    "fence": "_fence",
    "membar": "_fence",
    "brx": "_brx",
}


def _ranges(values: np.ndarray, most: int = 6) -> str:
    """Sorted integers as ranges: `0-31, 64-255`; after `most` ranges, how many more."""
    v = np.asarray(values, dtype=np.int64)
    if v.size == 0:
        return "none"
    cuts = np.nonzero(np.diff(v) != 1)[0] + 1
    runs = [(int(r[0]), int(r[-1])) for r in np.split(v, cuts)]
    text = ", ".join(f"{a}-{z}" if z > a else f"{a}" for a, z in runs[:most])
    return text + (f" and {len(runs) - most} more ranges" if len(runs) > most else "")


def failing_lanes(e: ExecError, n: int) -> np.ndarray:
    """The lanes an error names (a fault's every failing lane, a trap's lanes, an undefined act's lane)."""
    out = np.zeros(n, bool)
    lanes = getattr(e, "all_lanes", None) or getattr(e, "lanes", None)
    if lanes is None and getattr(e, "lane", None) is not None:
        lanes = [e.lane]
    if lanes:
        out[np.asarray(lanes, dtype=np.int64)] = True
    return out


def is_machine_level(opcode: str) -> bool:
    """Run by the machine itself (control flow, barriers, fences) or by a unit, not by a data handler."""
    return opcode in _CONTROL or _units.handler(opcode) is not None


def fence_event(ins: A.Instruction, lanes: np.ndarray) -> Fence:
    """What a fence/membar orders (PTX 9.7.13.4): fence.proxy.async{.space} and
    fence.proxy.tensormap::generic order the generic proxy against another proxy (8.6);
    fence.mbarrier_init makes initialisations visible; the rest are memory fences."""
    mods = ins.modifiers
    if ".proxy" in mods:
        other = Proxy.TENSORMAP if any(m.startswith(".tensormap") for m in mods) else \
            Proxy.ASYNC if any(m.startswith(".async") for m in mods) else None
        space = next((m for m in mods if m.startswith((".shared", ".global"))), None)
        return Fence(lanes, FenceKind.PROXY, ins, other, space)
    if ".mbarrier_init" in mods:
        return Fence(lanes, FenceKind.MBARRIER_INIT, ins)
    return Fence(lanes, FenceKind.MEMORY, ins)


def check_control_mods(ins: A.Instruction, allowed: set[str]) -> None:
    extra = ins.modifiers - allowed
    if extra:
        raise Unsupported(f"{ins.name}: modifier(s) {' '.join(sorted(extra))}", ins)


def _initialise(v, data: np.ndarray, symbols: dict[str, int]) -> None:
    """Write a variable's initializer into its bytes (PTX 5.4.4)."""
    ty = v.decl.type or ".b8"
    t = tinfo(ty)
    width = max(1, t.width // 8)
    flat: list = []

    def walk(x) -> None:
        if isinstance(x, tuple):
            for e in x:
                walk(e)
        else:
            flat.append(x)

    walk(v.item.init)
    out = np.zeros(len(flat), dtype=UINT[max(8, t.width)])
    for i, e in enumerate(flat):
        val = evaluate(e, symbols)
        if t.kind == "f":
            from semantics.formats import round_f64

            if isinstance(e, A.FloatLit) and e.bits is not None and e.width == t.width:
                out[i] = e.bits
            else:
                out[i] = round_f64(np.asarray([float(val)]), t.fmt)[0]
        else:
            out[i] = int(val) & ((1 << (8 * width)) - 1)
    raw = out.view(np.uint8)
    data[: raw.size] = raw[: data.size]


def run_kernel(prog: Program, launch: Launch, **kw) -> tuple[GlobalMemory, dict[str, int], RunStats]:
    """Run; returns global memory, the buffers' addresses, and statistics."""
    m = Machine(prog, launch, **kw)
    glob = m.run()
    return glob, m.addresses, m.stats
