"""Shadow of a representative run: every register as an exact function of %ctaid.

A register is either *independent* (not in `Shadow.regs`: its per-lane value is the same in every
CTA, because it was computed from %tid, parameters and constants only), TOP (unknown: loaded from
memory, produced by an instruction without a rule here, or selected by a %ctaid-dependent guard),
or an expression tree over the CTA id (`("c", 32, axis)`) and per-lane *placeholders* (`("p", w,
id)`, whose values are the concrete bits of independent operands in this run) plus a concrete
per-lane offset. Expressions are modulo 2^width, as PTX integer arithmetic is (PTX 9.7.1), so add,
mul, shifts, or, cvt widenings are all exact; nothing is assumed about overflow. grid.py turns the
trees into Z3 terms.

The run fails (`Shadow.failed`) when the schedule could differ between CTAs: a branch, exit or
barrier whose guard depends on %ctaid, or a global access whose address is TOP.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ptx_parser import ast as A
from semantics.constexpr import evaluate as evaluate_constexpr
from semantics.ptx.core import tinfo
from semantics.ptx.memory import space_of

from ..events import MemoryAccess, MemSpace
from ..machine import Batch, Group, InstructionObserver, is_machine_level
from ..memory import LOCAL_BASE, PARAM_BASE, SHARED_BASE, WINDOW
from ..opcodes import SCHEDULE_DEPENDENT, facts, strength
from ..tensormap import TENSOR_MAP_BYTES, is_param_ident, tag_ident, unmodelled
from .grid_expr import TOP, K, Sv, adapt, evaluate, leaf_keys, leaves, replace_leaf, substitute, width
from .grid_loops import divergence, skipped_loop
from .grid_rules import transfer
from .grid_wgmma import WgmmaWrites, wgmma_registers
from .provenance import PointerOrigins
from .state import ATOMIC, READ, WRITE

_BULK_LOAD = {".async", ".bulk"}
# register-to-register opcodes (PTX 9.7.1-9.7.4 arithmetic, 9.7.8 logic, 9.7.9.x mov/cvt, 9.7.3 setp/selp): `before`'s
# fast path (`_plain_dests`), for those without an address, vector or pair operand
_REGISTER_ONLY = frozenset({"add", "sub", "mul", "mad", "fma", "div", "rem", "abs", "neg", "min", "max", "shl", "shr",
                            "and", "or", "xor", "not", "mov", "cvt", "selp", "setp", "rcp", "sqrt", "rsqrt", "ex2",
                            "lg2", "sin", "cos", "tanh", "copysign", "testp", "mul24", "mad24", "sad", "popc", "clz",
                            "brev", "bfe", "bfi", "prmt", "shf", "lop3", "cnot", "slct", "set", "fns", "bfind"})


class _Regs(dict):
    """The shadow's register states (absent: the run's value, the same in every CTA that runs the same path). It
    remembers each register ever given another state (`varied`), and the registers that are unknown only because
    CTAs of different trip patterns leave a loop (or skip a block) on %ctaid at different points (`pattern`, state
    TOP: `Shadow._pattern_unknown`) until they are written again."""

    __slots__ = ("varied", "pattern")

    def __init__(self) -> None:
        super().__init__()
        self.varied: set[str] = set()
        self.pattern: set[str] = set()

    def __setitem__(self, name: str, state) -> None:
        self.pattern.discard(name)
        if state is not None:
            self.varied.add(name)
        super().__setitem__(name, state)

    def __delitem__(self, name: str) -> None:
        self.pattern.discard(name)
        super().__delitem__(name)

    def pop(self, name: str, *default):
        self.pattern.discard(name)
        return super().pop(name, *default)

    def mark_pattern(self, name: str) -> None:
        super().__setitem__(name, TOP)
        self.pattern.add(name)


class ShadowFailed(Exception):
    """Raised by a Shadow made with `stop=True` when it fails: the representatives' run is abandoned
    there (the grid is enumerated instead; running on would cost without deciding anything)."""


@dataclass
class Access:
    pc: int
    kind: int
    strong: int
    buffer: int  # index into GlobalMemory.allocations
    size: int
    addr: tuple  # canonical expression (placeholders renamed ("q", w, i))
    guard: tuple | None  # canonical boolean expression, None: executes on every listed lane
    rows: np.ndarray  # (k, n_placeholders + 2) uint64: placeholder values, thread index in the CTA, offset
    # a tensor store's box (PTX 9.7.9.25.5.2): (byte stride, count) of each outer box dimension, () otherwise.
    # Where given, the rows' offset column is exactly {sum i_k * stride_k : 0 <= i_k < count_k} for each lane's
    # row (`_tensor_store`), which grid.py's relaxed queries read as rank-1 independent index columns instead of
    # one byte interval [min, max] (that interval holds the neighbouring tile's bytes between the box's rows)
    box: tuple[tuple[int, int], ...] = ()


@dataclass
class Decision:
    """A guard a summarised loop's iterations decide on (loops.py): it must be the same for every
    iteration summarised. `value`: its outcome per lane in the iteration run (t = 0)."""

    pc: int
    expr: tuple
    lanes: np.ndarray
    value: np.ndarray


@dataclass
class SizeDecision:
    """A branch, exit or barrier whose guard depends on the problem sizes only (symbolic sizes,
    sizes.py), outside any loop it closes: grid.py proves it takes the run's value at every size.
    `rows`: the guard's placeholder values per lane (canonical "q" order) and, last, the run's value."""

    pc: int
    where: str
    expr: tuple
    rows: np.ndarray


@dataclass
class Uniform:
    """A branch, exit or barrier whose guard depends on %ctaid (or the sizes) and that the executed
    CTAs took one way per thread: grid.py proves with Z3 that every CTA takes it the same way, so
    that every CTA runs the same instruction sequence. `rows`: the guard's placeholder values, the
    thread index and the outcome (0/1) per thread; `loop`: the summarised loop whose leaf t the guard
    holds (a decision of every iteration in [0, n), loops.py), None for one outcome."""

    where: str
    expr: tuple  # canonical boolean expression (placeholders ("q", w, i))
    rows: np.ndarray  # (k, n_placeholders + 2) uint64
    loop: int | None = None


@dataclass(frozen=True)
class Divisor:
    """A divisor that depends on %ctaid (or the sizes): it must not be 0 in any CTA that divides by it. `reach`:
    the back edges and loop entry guards on %ctaid (or the sizes) passed to reach the division, and the guard
    of the %ctaid-guarded region holding it (`Shadow._after_trips`); a CTA for which it is false never divides
    here (it left the loop before, skipped the block or the region). None: every CTA divides."""

    expr: tuple
    where: str
    reach: tuple | None = None
    loop: int | None = None  # the summarised loop whose leaf t the divisor holds: non-zero for every t in [0, n)


@dataclass
class LoopProof:
    """One iteration (a period of iterations) of a loop run with its loop-carried registers as
    functions of the iteration t (the leaf ("t", 64, ident)); see loops.py."""

    ident: int
    first_access: int  # index into Shadow.accesses of the first access it recorded
    decisions: list[Decision]
    failed: str | None = None
    # global writes: (address expression, per-lane offset, lanes, bytes, buffer index)
    writes: list[tuple] = field(default_factory=list)
    # global reads, the same shape: the lanes that read in the period run (all the group's lanes where the
    # guard depends on data, which may differ from period to period); loops.py checks the skipped periods'
    # bounds with them when the run already has a finding (the symbolic grid's proof does not run then)
    reads: list[tuple] = field(default_factory=list)
    # per entry of `writes` (and of `reads`): (its instruction's pc, its place in the order the period made its
    # global accesses)
    write_sites: list[tuple[int, int]] = field(default_factory=list)
    read_sites: list[tuple[int, int]] = field(default_factory=list)


class Shadow(InstructionObserver):
    """Follows the representative run (an observer of its machine) with exact %ctaid expressions."""

    def __init__(self, prog, size_params: dict[str, int] | None = None, stop: bool = False) -> None:
        """size_params: kernel parameters (name -> bits) that hold a function of the problem sizes
        (symbolic sizes, sizes.py): loading one gives the leaf ("s", bits, name), and %nctaid is the
        grid's leaf ("g", 32, axis), instead of values independent of everything. stop: raise
        ShadowFailed when the shadow fails."""
        self.prog = prog
        self.stop = stop
        self.size_params = size_params or {}
        self.batch: Batch | None = None
        self.glob = None
        self._origins: PointerOrigins | None = None  # made on first need
        self.pc = -1
        self.ctl_ops = {ins.opcode for ins in prog.code if is_machine_level(ins.opcode)}
        self.regs: _Regs = _Regs()
        self.ph: dict[int, np.ndarray] = {}
        self.failed: str | None = None
        self.accesses: list[Access] = []
        self.poison: list[tuple[int, set, np.ndarray]] = []  # (reconvergence pc, registers, lanes)
        self.nonzero: list[Divisor] = []  # divisors that must not be 0 in any CTA that divides by them
        self.shared_varies: str | None = None  # a shared access whose address/guard depends on %ctaid
        # forward branches on %ctaid over straight-line code (CUDA's `if (i < n) {...}`): their code is
        # followed as guarded by the branch's condition (see _guard_region)
        self.guard_branches: list[str] = []
        self._region: dict | None = None  # the guarded region being executed
        self._targets: set[int] | None = None
        self.loop: LoopProof | None = None  # a loop iteration followed as a function of its index
        # the outer loop's proof while an inner loop's period is followed inside its period (`begin_inner`): the
        # run is then the outer loop's period t = 0 (its leaf is 0 in `lane_env`)
        self.outer: LoopProof | None = None
        self.loop_ranges: dict[int, int] = {}  # t leaf -> the iterations it stands for: t in [0, n)
        # symbolic sizes: the followed period's steps as leaves ("d", w, (loop, register)) and their
        # values in this run, until the period closes and names each step's expression (resolve_steps)
        self.steps: dict[tuple, np.ndarray] = {}
        # registers recomputed every period (loops.py `_recomputed`): per leaf ("v", w, (loop, register)) their
        # start expression and the run's values (the leaf's value in `lane_env`), until the period closes
        self.starts: dict[str, tuple[object, np.ndarray]] = {}
        self._plain: dict[int, tuple] = {}  # pc -> (its instruction, `_plain_dests`)
        # symbolic sizes: the sizes' values in this run (leaves ("s", name), ("g", axis)), branches on the
        # sizes to prove constant, loops whose trip count depends on the sizes (`trips`),
        # and the summarised loops' proofs (t leaf -> (proof, head pc)), for grid.py
        self.size_values: dict[tuple, int] = {}
        self.size_decisions: list[SizeDecision] = []
        self.trips: dict[int, int] = {}  # head pc -> how many times every thread left the loop
        # the size decisions of loop back edges taken since the loop was entered: a condition of every
        # access made after them (at other sizes the loop may have ended before)
        self.taken: dict[int, list[tuple]] = {}
        self.loop_proofs: dict[int, tuple[LoopProof, int]] = {}
        self.uniform: list[Uniform] = []  # %ctaid-dependent guards every CTA must decide as the run did
        self._gmask: np.ndarray | None = None  # the lanes of the instruction being run (`_shared_guard_uniform`)
        self.tensor_reads: dict[int, str] = {}  # buffer index -> a tensor load recorded as reading all of it
        # loops whose trip count depends on %ctaid (grid_loops.py): with `ctaid_trips` set (grid.py runs the
        # CTA with the longest trip count alone) a back edge on %ctaid is a trip, as a back edge on the sizes
        # is: taken, its guard is a reach condition of every later access (until the loop is left); left,
        # every CTA that reached it must leave too (a Uniform obligation on the reach condition and the guard)
        self.ctaid_trips = False
        self.longer: tuple | None = None  # a CTA that goes on where another executed CTA leaves a loop on %ctaid
        # summarised loops (t leaf) whose period's back edge depends on %ctaid: those back-edge guards, as
        # functions of t; grid.py bounds the periods' accesses by them (_Trips)
        self.ctaid_backs: dict[int, list[tuple]] = {}
        # every back-edge guard on %ctaid the run took, in order: (None, guard) for one iteration, (t leaf, guard
        # of period t) for a summarised loop's periods; CTAs for which all hold alike run the same iterations
        self.trip_conds: list[tuple[int | None, tuple]] = []
        # summarised loops (t leaf) whose period after the skipped ones is their last and differs from period 0
        # only in leaving at the back edge on %ctaid (loops.py `_leaves_after`): a CTA that leaves at an earlier
        # period runs what the executed CTA runs from there (grid.py `_trip_patterns`)
        self.exits_after_summary: set[int] = set()
        # such a loop whose final period is running (head pc -> t leaf), and per t leaf the indices in `trip_conds`
        # of the back edges that period took before its last (P - 1 of them for a period of P iterations)
        self.final_period: dict[int, int] = {}
        self.final_rows: dict[int, list[int]] = {}
        self.early_leavers = 0  # CTAs that leave such a loop earlier and share the executed CTA's run (grid.py)
        self._ctaid_exits: list[Decision] = []  # back edges on %ctaid left inside a followed period (handled then)
        # entry guards on %ctaid of a loop (grid_loops.py `skipped_loop`) that the executed CTA passed to run the
        # loop: the end of the skipped block -> (the branch's pc, "not taken"), a reach condition of every access
        # until that end (a CTA that takes the branch makes none of them); `_ctaid_entry`
        self.entered: dict[int, tuple[int, tuple]] = {}
        self.entry_ends: dict[int, int] = {}  # ends of such blocks reached -> the branch's pc (each arrival: `_entry_joined`)
        self._own_guard = None  # the guard of the access being recorded, without the back edges taken (`taken`)
        # wgmma D/A registers written since the fence / of pending operations (grid_wgmma.py), per batch
        self._wgmma_regs = wgmma_registers(prog)
        self._wgmma: WgmmaWrites | None = None
        # shared bytes (flat, the batch's) whose last write was a tcgen05.alloc storing its tensor-memory address
        # (9.7.16.7.1): the emulator's allocator gives every CTA the same address when every alloc, dealloc and
        # relinquish runs unguarded on %ctaid with operands independent of it (else `_alloc_varies`); a load of
        # such bytes alone is independent of %ctaid (the tensor-memory base Triton reads back from shared memory)
        self._alloc_bytes: set[int] = set()
        self._alloc_varies = False

    # ---------------------------------------------------------------- observer hooks
    def on_access(self, ev: MemoryAccess) -> None:
        if not ev.write or ev.buffer.space is not MemSpace.SHARED:
            return
        flat = np.asarray(ev.flat).ravel().tolist()
        if ev.ins is not None and ev.ins.opcode == "tcgen05" and ".alloc" in ev.ins.modifiers \
                and not self._alloc_varies:
            self._alloc_bytes.update(flat)
        elif self._alloc_bytes:
            self._alloc_bytes.difference_update(flat)

    def _alloc_op(self, ins: A.Instruction, guard) -> None:
        """A tcgen05 allocator instruction (alloc, dealloc, relinquish_alloc_permit, 9.7.16.7): one guarded or
        with an operand on %ctaid may make the allocator's addresses differ between CTAs."""
        ops = [o.base if isinstance(o, A.Address) else o for o in ins.operands]
        # reached under a back edge or entry guard on %ctaid or the sizes (`taken`, `entered`) or in a loop followed
        # as a function of t: other CTAs may run it another number of times, so their allocators part (for good)
        under = bool(self.loop is not None or any(self.taken.values()) or self.entered)
        if under or guard is not None or any(isinstance(o, A.Sym) and self.state(o) is not None for o in ops):
            self._alloc_varies = True
            self._alloc_bytes.clear()

    def _alloc_load(self, g, ins: A.Instruction) -> bool:
        """A scalar ld.shared, unguarded, at an address independent of %ctaid, of bytes a tcgen05.alloc wrote
        last on every lane (`_alloc_bytes`)."""
        if not self._alloc_bytes or ins.guard is not None or len(ins.operands) != 2 \
                or not isinstance(ins.operands[0], A.Sym) or not isinstance(ins.operands[1], A.Address):
            return False
        a = ins.operands[1]
        if a.base is not None and self.state(a.base) is not None:
            return False
        b = self.batch
        lanes = np.nonzero(g.mask)[0]
        if lanes.size == 0:
            return False
        try:
            space, addrs = b.ctx.address(a)
            if not space.startswith(".shared"):
                return False
            nbytes = tinfo(ins.types[-1]).width // 8
            addrs = np.broadcast_to(np.asarray(addrs, dtype=np.uint64), (b.n,))[lanes]
            _, _, off = b.memory._flat(".shared", lanes, addrs, nbytes, ins, False)
        except Exception:  # noqa: BLE001 - not decided here: the load stays unknown
            return False
        flat = (np.asarray(off, np.int64)[:, None] + np.arange(nbytes)).ravel().tolist()
        return all(x in self._alloc_bytes for x in flat)

    def on_batch(self, batch: Batch) -> None:
        self.batch = batch
        self.glob = batch.memory.glob
        self._wgmma = WgmmaWrites(self._wgmma_regs, batch.n) if self._wgmma_regs else None

    def before_instruction(self, b: Batch, g: Group, ins: A.Instruction, mask: np.ndarray):
        self.pc = g.pc
        if self.failed is not None:
            return [], None
        try:
            return self.before(g, ins, mask)
        except ShadowFailed:
            raise
        except Exception as e:  # a gap in the shadow must not break the concrete check
            self.fail(f"internal: {type(e).__name__}: {e} at {ins.name} {ins.span}")
            return [], None

    def after_instruction(self, b: Batch, g: Group, ins: A.Instruction, mask: np.ndarray, token) -> None:
        if self.failed is None:
            try:
                self.after(ins, mask, token)
            except ShadowFailed:
                raise
            except Exception as e:
                self.fail(f"internal: {type(e).__name__}: {e} at {ins.name} {ins.span}")

    # ---------------------------------------------------------------- leaves and operands
    def leaf(self, arr, w: int, lanes: np.ndarray | None = None) -> tuple:
        a = np.asarray(arr)
        if w == 0:
            a = a.astype(bool)
            if a.ndim == 0 or (a.all() or not a.any()):
                return ("b", 0, bool(a.reshape(-1)[0]))
            pid = len(self.ph)
            self.ph[pid] = a.astype(np.uint64)
            return ("cmp", 0, "eq", ("p", 1, pid), ("k", 1, 1))
        a = a.astype(np.uint64) & np.uint64((1 << w) - 1) if w < 64 else a.astype(np.uint64)
        if a.ndim == 0 or (a == a.reshape(-1)[0]).all():
            return ("k", w, int(a.reshape(-1)[0]))
        pid = len(self.ph)
        self.ph[pid] = np.broadcast_to(a, (self.batch.n,)).copy()
        return ("p", w, pid)

    def concrete(self, op, ty: str) -> np.ndarray:
        """An operand's current bits (without touching the checker's taint tracking)."""
        b, ctx = self.batch, self.batch.ctx
        t = tinfo(ty)
        if isinstance(op, A.Sym) and op.component is None and b.prog.reg(op.name) is not None:
            v = b.regs.get(op.name)
            if v is None:
                return np.zeros((), bool if t.kind == "pred" else t.dtype)
            return v.astype(bool) if t.kind == "pred" else v.astype(t.dtype)
        if isinstance(op, A.Sym) and op.name in b.var_addr and op.component is None:
            return ctx._address_value(op.name, ty)
        if isinstance(op, A.Sym) and op.name.startswith("%"):
            return ctx.special(op.name, op.component).astype(t.dtype)
        if isinstance(op, A.Negated):
            return ~self.concrete(op.operand, ".pred")
        return ctx._immediate(op, ty)

    def state(self, op) -> object:
        """None (independent), TOP, or the register's Sv / boolean expression."""
        if isinstance(op, A.Negated):
            s = self.state(op.operand)
            return s if s is None or s is TOP else ("not", 0, s)
        if isinstance(op, A.Sym):
            if op.name in ("%ctaid", "%clusterid"):
                return Sv(("c", 32, {".x": 0, ".y": 1, ".z": 2, None: 0}[op.component]))
            if self.size_params and op.name == "%nctaid":
                return Sv(("g", 32, {".x": 0, ".y": 1, ".z": 2, None: 0}[op.component]))
            if self.size_params and op.name in ("%nclusterid", "%cluster_nctaid", "%cluster_nctarank"):
                return TOP
            if op.name in SCHEDULE_DEPENDENT:
                return TOP
            return self.regs.get(op.name)
        if isinstance(op, (A.Vector,)):
            ss = [self.state(e) for e in op.elements]
            return None if all(s is None for s in ss) else TOP
        return None

    def expr(self, op, ty: str) -> object:
        """Operand as a full expression at the type's width (bool for .pred), or TOP."""
        t = tinfo(ty)
        s = self.state(op)
        if s is TOP:
            return TOP
        if s is None:
            return self.leaf(self.concrete(op, ty), 0 if t.kind == "pred" else t.width)
        if isinstance(s, tuple):  # boolean
            return s
        e = s.expr if s.off is None else ("add", width(s.expr), s.expr, self.leaf(s.off, width(s.expr)))
        return adapt(e, t.width)

    def sv(self, op, ty: str) -> object:
        """Operand as Sv at the type's width (offset kept apart), or TOP/None."""
        s = self.state(op)
        if s is None or s is TOP:
            return s
        t = tinfo(ty)
        if isinstance(s, Sv) and width(s.expr) == t.width:
            return s
        e = self.expr(op, ty)
        return TOP if e is TOP else Sv(e)

    # ---------------------------------------------------------------- per instruction
    def before(self, g, ins: A.Instruction, mask: np.ndarray) -> tuple:
        op = ins.opcode
        pc = self.pc
        region = self._region
        self._gmask = g.mask
        if region is not None and not region["start"] <= pc < region["end"]:
            self._close_region()
            if self.failed is not None:
                return [], None
            region = None
        self.reconverge_at(pc, g.mask)
        if self._wgmma is not None and op != "wgmma":  # (an mma_async's D is written when it is performed)
            self._wgmma_wrote(ins, [n for n, _ in self._dests(ins)], g.mask)
        if pc in self.entered or pc in self.entry_ends:  # the end of a block some CTAs skip (`_ctaid_entry`)
            self._entry_joined(pc)
        if region is None and ins.guard is None:
            dests = self._plain_dests(pc, ins)
            if dests is not None:  # what the general path below does for it, without the checks that cannot apply
                self._own_guard = None
                try:
                    return dests, transfer(self, ins)
                except (KeyError, ValueError, IndexError):
                    return dests, TOP
        guard = None
        if ins.guard is not None:
            guard = self.state(A.Sym(ins.guard.pred))
            if guard is not None and guard is not TOP:
                guard = self.expr(A.Sym(ins.guard.pred), ".pred")
                if ins.guard.negated:
                    guard = ("not", 0, guard)
        prog = self.prog
        if op == "tcgen05" and any(m in ins.modifiers for m in (".alloc", ".dealloc", ".relinquish_alloc_permit")):
            self._alloc_op(ins, guard)
        if op == "bra" and guard is not None and prog.reconverge.get(pc) is not None and prog.region_pure.get(pc) \
                and not prog.region_exits.get(pc):
            # a choice between register-only paths that may differ between CTAs: the instructions up to
            # the reconvergence point have no memory or synchronisation effects, so every CTA's memory
            # accesses stay the same instructions; what the region writes is unknown afterwards
            regs = {r for r in prog.region_writes(pc) if prog.reg(r) is not None}
            for r in regs:
                self.regs[r] = TOP
            self._wgmma_wrote(ins, regs, g.mask)  # the other path's writes too
            self.poison.append((prog.reconverge[pc], regs, g.mask.copy()))
            return [], None
        if op in ("bra", "exit", "ret", "trap", "bar", "barrier") and guard is not None \
                and self._loop_guard(ins, guard, g.mask, control=True):  # a decision of a loop iteration
            return [], None
        if op == "bra" and guard is not None and guard is not TOP and region is None:
            end = self._guard_region(pc)
            if end is not None:
                # every CTA runs the code up to `end` with the lanes whose branch is not taken: its memory
                # accesses are those of a predicated straight-line block, guarded by "not taken"
                self._region = {"start": pc + 1, "end": end, "guard": ("not", 0, guard), "ins": ins,
                                "at_branch": set((np.nonzero(g.mask)[0] % self.batch.lanes_per_cta).tolist()),
                                "ran": set(), "writes": set()}
                return [], None
        if self.ctaid_trips and op == "bra" and guard is not None and guard is not TOP and region is None \
                and leaves(guard, ("c",)) and not leaves(guard, ("t", "s", "g", "p", "q", "d")) \
                and self._back_edge(ins) is None and skipped_loop(prog, pc) is not None \
                and self._ctaid_entry(g.mask, ins, guard, skipped_loop(prog, pc)):
            return [], None
        if self.ctaid_trips and op == "bra" and guard is not None and guard is not TOP and region is None \
                and leaves(guard, ("c",)) and not leaves(guard, ("t", "s", "g")) and self._back_edge(ins) is not None:
            self._ctaid_trip(g.mask, ins, self._goes(pc, guard), self._goes(pc, self._taken(ins, g.mask)))
            return [], None
        if op in ("bra", "exit", "ret", "trap", "bar", "barrier") and guard is not None and guard is not TOP \
                and self.size_params and leaves(guard, ("s", "g")) and not leaves(guard, ("c", "t")):
            self._size_decision(g, ins, guard)
            return [], None
        if op in ("bra", "exit", "ret", "trap", "bar", "barrier"):
            if guard is not None and guard is not TOP and region is None and not leaves(guard, ("t",)):
                # the same way in every CTA as in the executed ones, or the proof falls back (grid.py)
                u = self._outcome(ins, guard, g.mask)
                if u is None:
                    self.longer = self._goes_on(ins, g.mask) or self._enters(ins, g.mask) \
                        or self._inside_loop(ins, g.mask)
                    self.fail(self._divergence(ins, g.mask))
                    return [], None
                self.uniform.append(u)
                return [], None
            if guard is not None:
                why = ("%ctaid" + (" or a problem size" if self.size_params else "")) if guard is not TOP \
                    else "data or values this check does not follow"
                self.fail(f"the guard of {ins.name} at {ins.span} depends on {why}: CTAs may follow different paths")
            elif ".red" in ins.modifiers and any(self.state(o) is not None for o in ins.operands[1:]):
                self.fail(f"{ins.name} at {ins.span} reduces values that depend on %ctaid")
            return [], None
        if region is not None:
            region["ran"].update((np.nonzero(g.mask)[0] % self.batch.lanes_per_cta).tolist())
            region["writes"].update(n for n, _ in self._dests(ins))
            path = region["guard"]
            self._own_guard = path if guard is None else TOP if guard is TOP else ("band", 0, path, guard)
            self._memory(g, ins, mask, self._after_trips(self._own_guard))
        else:
            self._own_guard = guard
            self._memory(g, ins, mask, self._after_trips(guard))
        dests = self._dests(ins)
        if not dests:
            return [], None
        if guard is not None:
            return dests, TOP
        if op in ("ld", "ldu") and self.size_params and space_of(ins) == ".param":
            a = ins.operands[1]
            named = isinstance(a, A.Address) and a.base is not None and a.base.name in self.batch.var_addr
            if not named or a.offset is not None:  # through a register, or at an offset: may read a size
                return dests, TOP
            if a.base.name not in self.size_params:
                return dests, None
            bits = self.size_params[a.base.name]
            lw = tinfo(ins.types[-1]).width
            if len(dests) != 1 or lw > 64:
                return dests, TOP
            return dests, Sv(adapt(("s", bits, a.base.name), lw, tinfo(ins.types[-1]).kind == "s"))
        if op == "ld" and space_of(ins).startswith(".shared") and self._alloc_load(g, ins):
            return dests, None  # the tensor-memory address a tcgen05.alloc stored: the same in every CTA
        if op in ("ld", "ldu"):
            sp = space_of(ins)
            addr_ind = self.state(ins.operands[1].base) is None if isinstance(ins.operands[1], A.Address) \
                and ins.operands[1].base is not None else True
            return dests, (None if sp in (".param", ".const") and addr_ind else TOP)
        if op == "mbarrier":
            return dests, None  # the emulator's schedule of CTA-local waits is the same in every CTA
        if op == "mov" and len(ins.operands) == 2 and (isinstance(ins.operands[0], A.Vector)
                                                         or isinstance(ins.operands[1], A.Vector)):
            return self._pack(ins, dests)
        if op in self.ctl_ops or len(dests) > 1:
            srcs = [self.state(o) for o in ins.operands[1:]]
            return dests, (None if all(s is None for s in srcs) and not facts(op).memory_result else TOP)
        try:
            return dests, transfer(self, ins)
        except (KeyError, ValueError, IndexError):
            return dests, TOP

    def _plain_dests(self, pc: int, ins: A.Instruction) -> list[tuple[str, str]] | None:
        """The one destination of an unguarded register-only instruction at `pc` (cached per pc), None for
        any other. For such an instruction `before` reaches `transfer` with nothing else to do: no control
        flow, no memory (no address operand, `_memory` finds nothing), no packing, no machine-level op."""
        got = self._plain.get(pc)
        if got is None or got[0] is not ins:
            op = ins.opcode
            dests = None
            if op in _REGISTER_ONLY and op not in self.ctl_ops and ins.operands \
                    and not any(isinstance(o, (A.Address, A.Vector, A.Pair)) for o in ins.operands) \
                    and ".global" not in ins.modifiers and not any("global" in p for p in ins.positional):
                dests = self._dests(ins)
                dests = dests if len(dests) == 1 else None
            got = self._plain[pc] = (ins, dests)
        return got[1]

    def after(self, ins: A.Instruction, mask: np.ndarray, pre: tuple) -> None:
        dests, result = pre
        if result is None and not self.poison and len(dests) == 1 and dests[0][0] not in self.regs:
            return  # independent before and after: the loop below would change nothing
        b = self.batch
        poisoned = set().union(*(regs for _r, regs, _l in self.poison)) if self.poison else set()
        for i, (name, ty) in enumerate(dests):
            rw = b.prog.reg(name).width
            new = TOP if name in poisoned else result[i] if isinstance(result, list) else result
            if new is TOP:
                self.regs[name] = TOP
                continue
            if not mask.any():
                continue
            val = None if new is None else _to_reg(self, new, ty, rw)
            region = self._region
            # inside a guarded region only its lanes read what it writes, and it is unknown after it
            whole = not (b.valid & ~mask).any() or (region is not None and region["start"] <= self.pc < region["end"])
            old = self.regs.get(name)
            if whole or (val is None and old is None):
                if val is None:
                    self.regs.pop(name, None)
                else:
                    self.regs[name] = val
                continue
            if old is TOP:
                if val is not None and name in self.regs.pattern:
                    self.regs[name] = TOP  # lanes with a %ctaid-dependent value: no longer one value per pattern
                continue
            cur = self.leaf(b.regs.get(name, np.zeros((), np.uint64)), 0 if rw == 1 else rw)
            ne = cur if val is None else (val if isinstance(val, tuple) else _full(self, val))
            oe = cur if old is None else (old if isinstance(old, tuple) else _full(self, old))
            sel = self.leaf(mask, 0)
            self.regs[name] = ("bite", 0, sel, ne, oe) if rw == 1 else Sv(("ite", rw, sel, ne, oe))

    def _pack(self, ins: A.Instruction, dests: list) -> tuple:
        """mov.bN {a, b, ..}, x (unpack, low element first) and mov.bN x, {a, b, ..} (pack), PTX 9.7.9.1."""
        d, src = ins.operands
        w = tinfo(ins.types[-1]).width
        if isinstance(d, A.Vector) and not isinstance(src, A.Vector):
            ew = w // len(d.elements)
            if self.state(src) is None:
                return dests, None
            x = self.expr(src, ins.types[-1])
            if x is TOP:
                return dests, TOP
            outs = [Sv(("trunc", ew, ("lshr", w, x, K(i * ew, w)))) for i, e in enumerate(d.elements)
                    if isinstance(e, A.Sym) and self.prog.reg(e.name) is not None]
            return [(n, f".b{ew}") for n, _ in dests], outs
        if isinstance(src, A.Vector) and not isinstance(d, A.Vector):
            ew = w // len(src.elements)
            if all(self.state(e) is None for e in src.elements):
                return dests, None
            parts = [self.expr(e, f".b{ew}") for e in src.elements]
            if any(p is TOP for p in parts):
                return dests, TOP
            acc = None
            for i, p in enumerate(parts):
                term = ("shl", w, ("zext", w, p), K(i * ew, w))
                acc = term if acc is None else ("or", w, acc, term)
            return dests, Sv(acc)
        return dests, TOP

    def _guard_region(self, pc: int) -> int | None:
        """The end of the code a conditional forward branch at `pc` skips, when every CTA can be
        taken to run it as predicated code: the branch's target is its reconvergence point, and
        the code in between has no control flow, synchronisation or unit operation (only data
        instructions and plain memory accesses) and no label another branch jumps to."""
        prog = self.prog
        ins = prog.code[pc]
        t = ins.operands[0] if ins.operands else None
        end = prog.labels.get(t.name) if isinstance(t, A.Sym) else None
        if end is None or end <= pc + 1 or prog.reconverge.get(pc) != end:
            return None
        if any(is_machine_level(i.opcode) or i.opcode == "call" for i in prog.code[pc + 1:end]):
            return None
        if self._targets is None:
            self._targets = {prog.labels[o.name] for i in prog.code if i.opcode in ("bra", "brx")
                             for o in i.operands if isinstance(o, A.Sym) and o.name in prog.labels}
        if any(pc + 1 < x < end for x in self._targets):
            return None
        return end

    def finish(self) -> None:
        """After the run: a guarded region that reached the end of the code is left there."""
        if self._region is not None and self.failed is None:
            self._close_region()
        if self.entered and self.failed is None:  # the CTA that ran the loop never reached the block's end
            self.fail(f"the block after the loop entry guard at {self.prog.code[min(self.entered.values())[0]].span} "
                      "was not left at its end in the executed CTA")
            return
        written = {a.buffer for a in self.accesses if a.kind != READ}
        for buf, where in self.tensor_reads.items():
            if buf in written:
                self.fail(f"{where} reads a tensor of buffer {self.glob.allocations[buf].name}, which the kernel "
                          "also writes: the symbolic grid takes a tensor load as reading the whole tensor")
                return

    def _close_region(self) -> None:
        """Leaving a guarded region: its registers differ between CTAs from here on (unknown), and
        every thread that reached the branch must have run the region in some executed CTA, or
        the rows recorded for its accesses miss that thread's."""
        region, self._region = self._region, None
        ins = region["ins"]
        missing = region["at_branch"] - region["ran"]
        if missing:
            self.fail(f"the code after {ins.name} at {ins.span} (a branch on %ctaid) was not run by thread(s) "
                      f"{sorted(missing)[:4]} in the executed CTAs: CTAs may follow different paths")
            return
        for r in region["writes"]:
            self.regs[r] = TOP
        where = f"{ins.name} at {ins.span}"
        if where not in self.guard_branches:
            self.guard_branches.append(where)

    def fail(self, why: str) -> None:
        if self.failed is None:
            self.failed = why
            if self.stop:
                e = ShadowFailed(why)
                e.longer = self.longer  # a CTA that goes on where another leaves a loop on %ctaid
                raise e

    # ---------------------------------------------------------------- a loop iteration as a function of t
    def loop_fail(self, why: str, expr: tuple | None = None) -> None:
        """The followed period cannot be summarised. Inside an inner loop's period (`begin_inner`): the proof
        of the loop whose t `expr` depends on, both where it is not known (None)."""
        proofs = [lp for lp in (self.loop, self.outer) if lp is not None]
        hit = [lp for lp in proofs if expr is None or self.outer is None or uses_t(expr, lp.ident)] or proofs
        for lp in hit:
            if lp.failed is None:
                lp.failed = why

    def lane_env(self, t: int | np.ndarray = 0) -> dict:
        """Leaf values per lane of the batch for `evaluate` (the iteration: `t`)."""
        b = self.batch
        env = {("c", k): b.ctaid[k].astype(np.uint64) for k in range(3)}
        env.update({("p", pid): v for pid, v in self.ph.items()})
        env.update(self.size_values)
        if self.loop is not None:
            env[("t", self.loop.ident)] = np.asarray(t, dtype=np.uint64)
        if self.outer is not None:
            env[("t", self.outer.ident)] = np.zeros((), np.uint64)
        env.update({("d", k): v for k, v in self.steps.items()})
        env.update({("v", k): v for k, (_, v) in self.starts.items()})
        return env

    def _loop_guard(self, ins: A.Instruction, guard, mask: np.ndarray, control: bool = False) -> bool:
        """In a loop followed as a function of t: a guard that depends on t (and on nothing that differs
        between CTAs) is a decision of the iteration, to be proved the same for every iteration
        summarised. A branch, exit or barrier (`control`) may also depend on %ctaid: the executed CTAs'
        values decide here, and grid.py proves every CTA decides the same (`Uniform`). With symbolic
        sizes a guard may depend on them (a trip count the proof takes symbolically). True when it
        was taken as one."""
        varying = () if self.size_params else ("s", "g")
        if self.loop is None or guard is TOP or not leaves(guard, ("t",)) or (varying and leaves(guard, varying)) \
                or (leaves(guard, ("c",)) and not control):
            return False
        try:
            value = np.broadcast_to(evaluate(guard, self.lane_env(0)), mask.shape).astype(bool)
        except (KeyError, TypeError, ValueError) as e:
            self.loop_fail(f"internal: {type(e).__name__}: {e} at {ins.name} {ins.span}")
            return True
        pred = self._taken(ins, mask)
        if (value != pred)[mask].any():  # the shadow disagrees with the run: never trust it
            self.loop_fail(f"internal: the shadow of the guard of {ins.name} at {ins.span} disagrees with the run")
            return True
        self.loop.decisions.append(Decision(self.pc, guard, mask.copy(), value))
        head = self._back_edge(ins)
        goes = self._goes(self.pc, value)
        if head is not None and leaves(guard, ("s", "g")):
            self._trip(head, goes[mask])
        elif head is not None and self.ctaid_trips and leaves(guard, ("c",)) and not goes[mask].all():
            # the loop is left (or threads part) inside the period followed, which then ran as t = 0: the code
            # after the loop must see its registers unknown now, not when the period is abandoned
            self._ctaid_exits.append(self.loop.decisions[-1])
            self._ctaid_trip(mask, ins, substitute(self._goes(self.pc, guard), "t", self.loop.ident, 0), goes)
        return True

    # ---------------------------------------------------------------- back edges on %ctaid (grid_loops.py)
    def _goes_on(self, ins: A.Instruction, mask: np.ndarray) -> tuple | None:
        """At a loop's back edge whose guard depends on %ctaid, where the executed CTAs part: the first
        executed CTA some thread of which takes it (goes on); None when `ins` is no back edge."""
        if ins.opcode != "bra" or self._back_edge(ins) is None:
            return None
        b = self.batch
        live = (mask & b.valid).reshape(b.n_ctas, -1)
        goes = (self._goes(self.pc, self._taken(ins, mask)).reshape(b.n_ctas, -1) & live).any(axis=1)
        on = np.nonzero(goes)[0]
        return tuple(int(x) for x in b.ctas[int(on[0])]) if on.size else None

    def _inside_loop(self, ins: A.Instruction, mask: np.ndarray) -> tuple | None:
        """At a forward branch on %ctaid inside a loop with a conditional back edge, where the executed CTAs part
        before any of them leaves the loop (a causal kernel's last iteration differs from the others': CTA 0's
        first iteration is its last): the last executed CTA (the highest ids, the one with the most iterations
        when the trip count grows with %ctaid), to run alone (grid.py). Only a choice: that run proves what it
        proves for every CTA (each back edge and each decision an obligation over the grid, `_ctaid_trip`,
        `_outcome`), and falls back where another CTA goes on longer or decides otherwise. None when `ins` is a
        back edge or lies in no such loop."""
        if ins.opcode != "bra" or self._back_edge(ins) is not None:
            return None
        prog, pc = self.prog, self.pc
        for latch in sorted({*prog.back_branches, *prog.falls_back}):
            head = self._head_of(latch)
            if head is not None and prog.code[latch].guard is not None and pc in prog.loop_body(head, latch):
                b = self.batch
                live = np.nonzero((mask & b.valid).reshape(b.n_ctas, -1).any(axis=1))[0]
                return tuple(int(x) for x in b.ctas[int(live[-1])]) if live.size else None
        return None

    def _ctaid_trip(self, mask: np.ndarray, ins: A.Instruction, guard: tuple, taken: np.ndarray,
                    pc: int | None = None) -> None:
        """A loop's back edge on %ctaid (at `pc`, default the current one), decided `taken` per lane; the run
        has one CTA, the one with the longest trip count. Taken by every thread: its guard joins `taken`, so
        every access until the loop is left holds it as a condition (a CTA for which it is false has left
        before: its accesses there are not made). Left by every thread: every CTA that took the back edges
        before (the reach condition) must leave here too, or it would run iterations the executed CTA did
        not: a Uniform obligation (the reach condition and the guard, value false) that grid.py proves over
        every CTA (_same_path)."""
        pc = self.pc if pc is None else pc
        if leaves(guard, ("p",)):  # a CTA's threads might leave at different iterations, with other warp masks
            self.fail(f"the back edge {ins.name} at {ins.span} depends on %ctaid and on the thread")
            return
        head = self._head_of(pc)
        lanes = mask & self.batch.valid
        value = np.broadcast_to(taken, mask.shape)[lanes]
        if value.all():
            self.taken.setdefault(head, []).append(guard)
            if head in self.final_period:
                self.final_rows[self.final_period[head]].append(len(self.trip_conds))
            self.trip_conds.append((None, guard))
            return
        self.final_period.pop(head, None)
        if value.any():
            self.fail(f"threads of one CTA leave the loop at {self.prog.code[head].span} at different iterations "
                      "(its back edge depends on %ctaid)")
            return
        goes_on = self._after_trips(guard)  # reached this back edge and takes it
        self.uniform.append(self._uniform(ins, goes_on, mask, np.zeros(self.batch.n, bool), None))
        self.taken.pop(head, None)
        for i in self.prog.loop_body(head, pc):  # the CTAs leave at other iterations: unknown after the loop
            for name, _ in self._dests(self.prog.code[i]):
                self._pattern_unknown(name)

    def _pattern_unknown(self, name: str) -> None:
        """Register `name`, written in a loop that CTAs leave at different iterations (`_ctaid_trip`) or in a block
        some CTAs skip (`_entry_joined`), is unknown from here: TOP. One the shadow never gave a state other than
        "the run's value" (`_Regs.varied`: every value it took was computed from %ctaid-free values only, no
        %ctaid, size, iteration t, data (loads are TOP), guarded or partial write) is moreover the same in every CTA
        of one trip pattern: those CTAs run the same instructions (every other decision an obligation, `_outcome`,
        and the loops' trips and entries their pattern, grid.py `_trip_patterns`), so compute the same values; an
        early leaver that shares the executed CTA's run leaves at the same back edge of a period from the state the
        summary proved to repeat (a register that advances is an Sv of t in the period: varied), so with the
        executed CTA's values. Such a register (`_Regs.pattern`) is still TOP for every proof over the grid (a
        global address or a guard that reads it falls back: CTAs of other patterns hold other values), and a shared
        access whose address is that register itself is CTA-local behaviour the same in every CTA of a pattern,
        which the run of one CTA per pattern checks (`_shared_operands`, `_record`). (flash_attention sm_100a: the
        MMA mbarrier address %r2192 after the key loop, period 2.)"""
        regs = self.regs
        if name in regs.pattern or (name not in regs and name not in regs.varied):
            regs.mark_pattern(name)
        else:
            regs[name] = TOP

    def _enters(self, ins: A.Instruction, mask: np.ndarray) -> tuple | None:
        """At a loop's entry guard on %ctaid (a forward branch over a single-entry, single-exit block holding
        the loop, grid_loops `skipped_loop`) where the executed CTAs part: the first executed CTA no thread of
        which takes it (runs the loop); None when `ins` is no such guard."""
        if ins.opcode != "bra" or self._back_edge(ins) is not None or skipped_loop(self.prog, self.pc) is None:
            return None
        b = self.batch
        live = (mask & b.valid).reshape(b.n_ctas, -1)
        skips = (self._taken(ins, mask).reshape(b.n_ctas, -1) & live).any(axis=1)
        enter = np.nonzero(~skips & live.any(axis=1))[0]
        return tuple(int(x) for x in b.ctas[int(enter[0])]) if enter.size else None

    def _ctaid_entry(self, mask: np.ndarray, ins: A.Instruction, guard: tuple, end: int) -> bool:
        """A loop's entry guard on %ctaid (`guard`: skip to `end`), in the run of the one CTA that enters
        (grid.py). Passed by every thread: "not taken" joins the reach conditions of every access until `end`
        (a CTA that takes the branch runs none of the block: its accesses there are not made, and none of it
        may leave the block elsewhere, `skipped_loop`), counts for the trip patterns (a CTA that skips is a
        pattern of its own, run concretely where the kernel keeps CTA-local state), and at `end` what the
        block wrote is unknown (`_entry_joined`). Taken by every thread (the executed CTA skips the loop): not
        handled here (False), the guard is an obligation as any other, which a CTA that enters then fails."""
        lanes = mask & self.batch.valid
        skip = np.broadcast_to(self._taken(ins, mask), mask.shape)[lanes]
        if skip.all():
            return False
        if skip.any():
            self.fail(f"threads of one CTA part at the entry guard {ins.name} at {ins.span} (on %ctaid)")
            return True
        enters = ("not", 0, guard)
        self.trip_conds.append((None, enters))
        start = self.pc
        if end in self.entered:  # an outer guard to the same end: both hold, and the block starts at the first
            start, outer = self.entered[end]
            enters = ("band", 0, outer, enters)
        self.entered[end] = (start, enters)
        return True

    def _entry_joined(self, end: int) -> None:
        """At the end of a block that CTAs which take its entry guard skip: the guard is no condition of
        what follows (every CTA runs it), and each register the block writes differs between the CTAs that
        ran it and those that skipped it: unknown from here (an address or guard that uses one falls back; a shared
        address that is one the block computed from %ctaid-free values is the same within a trip pattern,
        `_pattern_unknown`)."""
        # every group of threads that arrives (another may still have been in the block at the first arrival)
        start = self.entered.pop(end)[0] if end in self.entered else self.entry_ends[end]
        self.entry_ends[end] = start
        for x in self.prog.code[start + 1:end]:
            for name, _ in self._dests(x):
                self._pattern_unknown(name)

    # ---------------------------------------------------------------- branches on the sizes
    def _latch(self, pc: int) -> tuple[int, bool] | None:
        """The loop head the `bra` at `pc` closes a back edge to, with the direction that goes on: (head, True)
        for a jump back to a header that dominates it (Program.back_branches), (pc + 1, False) for a
        conditional branch that leaves the loop and falls through into its header (Program.falls_back: a
        latch block laid out before its header, as LLVM lays out rotated loops; not taken goes on). None for
        any other branch: a backward jump to a block that is no header (to such a latch block) is a forward
        edge of the control flow, a decision like any other."""
        prog = self.prog
        back = prog.back_branches.get(pc)
        if pc in prog.falls_back:
            return None if back is not None else (pc + 1, False)  # both ways go on: no exit here
        return None if back is None else (back, True)

    def _head_of(self, pc: int) -> int | None:
        """The loop head the `bra` at `pc` closes a back edge to (`_latch`; None: no back edge)."""
        latch = self._latch(pc)
        return None if latch is None else latch[0]

    def _back_edge(self, ins: A.Instruction) -> int | None:
        """The loop head the current instruction (a `bra`) closes a back edge to (None: no back edge)."""
        return self._head_of(self.pc) if ins.opcode == "bra" else None

    def _goes(self, pc: int, x):
        """A back edge's guard (a boolean expression) or per-lane outcome (an array) of "the branch at `pc`
        is taken" as "the loop goes on" (`_latch`: negated where the loop goes on by falling through)."""
        latch = self._latch(pc)
        if latch is None or latch[1]:
            return x
        return ~np.asarray(x, bool) if isinstance(x, np.ndarray) else ("not", 0, x)

    def _size_decision(self, g, ins: A.Instruction, guard) -> None:
        """A guard of the sizes only. On a loop's back edge: the loop runs a number of iterations that
        depends on the sizes (grid.py requires it summarised, loops.py, and takes its iterations
        symbolically). Anywhere else: recorded, to be proved to take this run's value at every size."""
        lanes = np.nonzero(g.mask)[0]
        pred = np.broadcast_to(self.concrete(A.Sym(ins.guard.pred), ".pred"), g.mask.shape).astype(bool)
        value = ~pred[lanes] if ins.guard.negated else pred[lanes]
        head = self._back_edge(ins)
        if head is not None:
            self._trip(head, self._goes(self.pc, value), self._goes(self.pc, guard))
            return
        canon, cols = _canonical([guard], self.ph, lanes)
        rows = np.unique(np.column_stack(cols + [value.astype(np.uint64)]), axis=0)
        self.size_decisions.append(SizeDecision(self.pc, f"{ins.name} at {ins.span}", canon[0], rows))

    def _after_trips(self, guard):
        """An access's guard and the back-edge decisions on the sizes taken to reach it (and, with
        `ctaid_trips`, the back edges and loop entry guards on %ctaid passed to reach it)."""
        for conds in [*self.taken.values(), [c for _, c in self.entered.values()]]:
            for c in conds:
                guard = c if guard is None else TOP if guard is TOP else ("band", 0, guard, c)
        return guard

    def divisor(self, d: tuple, where: str) -> None:
        """Record divisor `d` of the instruction being executed (grid_rules) with the condition under which a CTA
        reaches it (`Divisor.reach`): its own guard and the back edges on %ctaid or the sizes taken to get here.
        A condition the proof could not state over the grid alone (a lane placeholder, a loop's iteration t, a
        step, unknown) is left out: then every CTA must have the divisor non-zero, as before."""
        reach = self._after_trips(self._own_guard)
        # in a summarised period (not an inner one: grid_rules fails those): one obligation per period t, which
        # grid.py asks over t in [0, n) and the periods a CTA reaches; `end_loop` puts t = 0 where the period ran
        # as any other iteration
        lp = self.loop
        loop = lp.ident if lp is not None and self.outer is None and uses_t(d, lp.ident) else None
        if loop is not None and self.ctaid_trips and reach is not TOP:
            # and the back edges on %ctaid this period took before the division (a latch laid out before the header:
            # the tile loop's exit is tested before the next tile's coordinates are divided): a CTA that leaves
            # there in period t never divides in it (grid.py binds t for the reach as for the divisor)
            for dec in lp.decisions:
                if leaves(dec.expr, ("c",)) and self._head_of(dec.pc) is not None:
                    goes = self._goes(dec.pc, dec.expr)
                    reach = goes if reach is None else ("band", 0, reach, goes)
        if reach is TOP or (reach is not None and (leaves(reach, ("p", "q", "d", "v")) or any(
                tag == "t" and k != loop for tag, k in leaf_keys(reach)))):
            reach = None
        self.nonzero.append(Divisor(d, where, reach, loop))

    def _trip(self, head: int, value: np.ndarray, guard=None) -> None:
        """The back edge of the loop at `head` decided on the sizes: `value` per lane (taken: again).
        When every thread leaves, what the loop wrote is unknown after it: at other sizes the loop
        ends at another iteration (a register the code after it uses as an address then fails)."""
        self.trips.setdefault(head, 0)
        if value.all():
            if guard is not None and not leaves(guard, ("t",)):
                self.taken.setdefault(head, []).append(guard)
            return
        if value.any():
            self.fail(f"threads leave the loop at {self.prog.code[head].span} at different iterations, on the sizes")
            return
        self.trips[head] += 1
        self.taken.pop(head, None)
        for i in self.prog.loop_body(head, self.pc):  # wherever the loop's blocks lie in the code
            for name, _ in self._dests(self.prog.code[i]):
                self.regs[name] = TOP

    def _outcome(self, ins: A.Instruction, guard: tuple, mask: np.ndarray) -> Uniform | None:
        """The executed threads' outcome of a %ctaid-dependent guard, as an obligation for grid.py;
        None when one thread decides it differently in two executed CTAs (then some CTAs differ)."""
        b = self.batch
        pred = self._taken(ins, mask)
        per_cta, p = (mask & b.valid).reshape(b.n_ctas, -1), pred.reshape(b.n_ctas, -1)
        both = per_cta.all(axis=0)
        if (p[:, both] != p[:1, both]).any():
            return None
        return self._uniform(ins, guard, mask, pred, None)

    def _taken(self, ins: A.Instruction, mask: np.ndarray) -> np.ndarray:
        """Per lane: the guard of `ins` holds (its predicate, negated where the guard says so)."""
        pred = np.broadcast_to(self.concrete(A.Sym(ins.guard.pred), ".pred"), mask.shape).astype(bool)
        return ~pred if ins.guard.negated else pred

    def _divergence(self, ins: A.Instruction, mask: np.ndarray) -> str:
        """Why the executed CTAs part at `ins` (a loop whose trip count depends on %ctaid, say): grid_loops.py."""
        b = self.batch
        pred = self._taken(ins, mask)
        live = (mask & b.valid).reshape(b.n_ctas, -1)
        goes = (pred.reshape(b.n_ctas, -1) & live).any(axis=1).tolist()
        return divergence(self.prog, self.pc, list(b.ctas), goes)

    def _uniform(self, ins: A.Instruction, expr: tuple, mask: np.ndarray, outcome: np.ndarray,
                 loop: int | None) -> Uniform:
        lanes = np.nonzero(mask & self.batch.valid)[0]
        (canon,), cols = _canonical([expr], self.ph, lanes)
        thread = (lanes % self.batch.lanes_per_cta).astype(np.uint64)
        rows = np.column_stack(cols + [thread, outcome[lanes].astype(np.uint64)])
        return Uniform(f"{ins.name} at {ins.span}", canon, np.unique(rows, axis=0), loop)

    def begin_loop(self, ident: int, deltas: dict[str, np.ndarray], recomputed: frozenset[str] = frozenset()) -> None:
        """Follow the next iteration with registers `deltas` (name -> change per iteration, per lane)
        as their value now plus t times the change. With symbolic sizes the change is the leaf
        ("d", w, (ident, name)) (its value here: `deltas`): a step such as `BLOCK_K * stride` is a
        function of the sizes, named when the period closes (loops.py, `resolve_steps`). A register of
        `recomputed` (written in each period from other values, not from itself: loops.py `_recomputed`) is
        its value now at t = 0 and the leaf ("v", w, (ident, name)) at t >= 1, `ite(t == 0, now, v)`: the
        closure names v, its value at the end of period t - 1, where that value does not read v."""
        self.loop = LoopProof(ident, len(self.accesses), [])
        self.steps = {}
        t = ("t", 64, ident)
        for name, d in deltas.items():
            w = self.prog.reg(name).width
            cur = self.state(A.Sym(name))
            if cur is TOP:
                self.loop_fail(f"loop-carried register {name} is not followed by the shadow")
                continue
            base = self.expr(A.Sym(name), f".b{w}")
            if name in recomputed:
                key = step_key(ident, name)
                self.starts[key] = (base, np.asarray(self.concrete(A.Sym(name), f".b{w}")).astype(np.uint64))
                self.regs[name] = Sv(("ite", w, ("cmp", 0, "eq", t, K(0, 64)), base, ("v", w, key)))
                continue
            step = self.leaf(d, w)
            if self.size_params and step[0] == "k":  # the same in every lane: it may be a function of the sizes
                step = ("d", w, step_key(ident, name))
                self.steps[step_key(ident, name)] = np.asarray(d, np.uint64)
            self.regs[name] = Sv(("add", w, base, ("mul", w, adapt(t, w), step)))

    def begin_inner(self, ident: int, deltas: dict[str, np.ndarray]) -> None:
        """Follow a period of an inner loop inside the period of the outer loop followed (`loop`), as a function
        of its own iteration u (the leaf ("t", 64, ident)) and of the outer t: loops.py's nested summary. Its
        decisions, reads and writes are its own (`loop`) until `end_inner` hands them to the outer proof."""
        outer = self.loop
        self.begin_loop(ident, deltas)
        self.outer = outer

    def end_inner(self, t_value: int, periods: int | None, held: list[Decision] = ()) -> None:
        """Leave the inner loop's period. periods None: abandoned, the period ran as u = 0 (its registers and
        accesses at u = 0); else summarised over u in [0, periods), registers at u = t_value, accesses keep u.
        Either way the outer proof gets the inner period's decisions (and `held`, registers held over the inner
        periods) and global reads and writes, each once per u in those periods: the outer loop's periods
        summarised must decide alike for every one of them (loops.py `_first_change`), and its checks of the
        skipped periods' global bytes (`_skipped_writes`, `_skipped_reads`, `_reads_checked`) see them all."""
        lp, outer = self.loop, self.outer
        us = range(1) if periods is None else range(periods)
        for d in [*lp.decisions, *held]:
            for u in us:
                e = substitute(d.expr, "t", lp.ident, u)
                if leaves(e, ("t",)) or leaves(e, ("c",)):
                    outer.decisions.append(Decision(d.pc, e, d.lanes, d.value))
        for entries, sites, into, into_sites in ((lp.writes, lp.write_sites, outer.writes, outer.write_sites),
                                                 (lp.reads, lp.read_sites, outer.reads, outer.read_sites)):
            for (addr, offs, lanes, size, buf), site in zip(entries, sites):
                for u in us:
                    into.append((substitute(addr, "t", lp.ident, u), offs, lanes, size, buf))
                    into_sites.append(site)
        lp.decisions = []  # handed over: end_loop would otherwise read those on %ctaid with the outer t in them
        self.outer = None
        self.end_loop(t_value, accesses=periods is None)
        self.loop = outer

    def reconverge_at(self, pc: int, mask: np.ndarray) -> None:
        """The group `mask` is at `pc`: a register-only region (`poison`) ends where all of its lanes
        reconverge. Called before each instruction, and by loops.py at a back edge, whose target may be
        the region's reconvergence point (a data-dependent choice at the end of a loop body whose paths
        both jump to the head, as __nv_logf's slow path is laid out): nothing runs in between."""
        if self.poison:
            self.poison = [(r, regs, lanes) for r, regs, lanes in self.poison
                           if not (r == pc and not (lanes & ~mask).any())]

    def resolve_steps(self, ident: int, steps: dict[str, tuple], tag: str = "d") -> None:
        """The period of loop `ident` closed with each register's step as an expression (of the sizes,
        placeholders, constants; never of t): it replaces the step's leaf in everything recorded. With
        tag "v": each recomputed register's start value at t >= 1 (`begin_loop`), an expression of t."""
        def put(e):
            if not isinstance(e, tuple) or not leaves(e, (tag,)):
                return e
            for name, by in steps.items():
                e = replace_leaf(e, tag, step_key(ident, name), by)
            return e

        for name, st in list(self.regs.items()):
            if isinstance(st, Sv):
                self.regs[name] = Sv(put(st.expr), st.off)
            elif isinstance(st, tuple):
                self.regs[name] = put(st)
        lp = self.loop
        if lp is not None:
            lp.decisions = [Decision(d.pc, put(d.expr), d.lanes, d.value) for d in lp.decisions]
            lp.writes = [(put(w[0]),) + tuple(w[1:]) for w in lp.writes]
            lp.reads = [(put(w[0]),) + tuple(w[1:]) for w in lp.reads]
            for i in range(lp.first_access, len(self.accesses)):
                a = self.accesses[i]
                self.accesses[i] = replace(a, addr=put(a.addr), guard=put(a.guard))
        self.nonzero = [Divisor(put(d.expr), d.where, put(d.reach), d.loop) for d in self.nonzero]
        self.taken = {h: [put(c) for c in cs] for h, cs in self.taken.items()}
        if tag == "d":
            self.steps = {}
        else:
            for name in steps:
                self.starts.pop(step_key(ident, name), None)

    def resolve_starts(self, ident: int, starts: dict[str, tuple]) -> str | None:
        """The period of loop `ident` closed with each recomputed register's value at the start of periods t >= 1
        (`begin_loop`; loops.py `_recomputed_starts`): it replaces the register's leaf v everywhere recorded. Where
        that value holds per-thread placeholders, each access recorded in the period gets a lane column for each
        (its value at the row's thread: a placeholder is the same in every CTA, checked here), as `_canonical`
        names them when an access is recorded; None, or why not (a divisor or branch condition would hold one)."""
        lp = self.loop
        new = sorted({k for e in starts.values() for tag, k in leaf_keys(e) if tag == "p"})
        if new:
            per_cta = self.batch.lanes_per_cta
            for pid in new:
                v = np.broadcast_to(np.asarray(self.ph[pid], np.uint64), (self.batch.n,)).reshape(-1, per_cta)
                if (v != v[0]).any():
                    return "is recomputed from per-thread values that differ between CTAs"
            if any(leaves(e, ("v",)) for d in self.nonzero for e in (d.expr, d.reach) if isinstance(e, tuple)) \
                    or any(leaves(c, ("v",)) for cs in self.taken.values() for c in cs):
                return "is recomputed from per-thread values and read by a divisor or a branch on %ctaid"
        self.resolve_steps(ident, starts, tag="v")
        if new and lp is not None:
            for i in range(lp.first_access, len(self.accesses)):
                self.accesses[i] = self._lane_columns(self.accesses[i])
        return None

    def _lane_columns(self, a: Access) -> Access:
        """`a` with its placeholders ("p", w, id) named as lane columns ("q", w, i) after those it has."""
        exprs = [a.addr] + ([a.guard] if a.guard is not None else [])
        pids = sorted({k for e in exprs for tag, k in leaf_keys(e) if tag == "p"})
        if not pids:
            return a
        n = a.rows.shape[1] - 2
        thread = a.rows[:, n].astype(np.int64)
        cols = [np.broadcast_to(np.asarray(self.ph[pid], np.uint64), (self.batch.n,))[thread] for pid in pids]
        at = {pid: n + j for j, pid in enumerate(pids)}

        def name(e):
            if not isinstance(e, tuple) or not e:
                return e
            if e[0] == "p":
                return ("q", e[1], at[e[2]])
            return e[:2] + tuple(name(x) for x in e[2:])

        rows = np.unique(np.column_stack([a.rows[:, :n], *cols, a.rows[:, n:]]).astype(np.uint64), axis=0)
        return replace(a, addr=name(a.addr), guard=name(a.guard) if a.guard is not None else None, rows=rows)

    def end_loop(self, t_value: int, accesses: bool) -> None:
        """Leave loop mode: every register (and, if `accesses`, every access recorded in it) at
        iteration t = t_value."""
        proof, self.loop = self.loop, None
        if proof is None:
            return
        if self.steps:  # abandoned (t = 0 below): a step's leaf only ever multiplies t
            self.resolve_steps(proof.ident, {k.split("/", 1)[1]: K(0, 64) for k in self.steps})
        mine = {k.split("/", 1)[1]: base for k, (base, _) in self.starts.items() if k.startswith(f"{proof.ident}/")}
        if mine:  # abandoned: a recomputed register's leaf stands for t >= 1 only, and the period ran as t = 0
            self.resolve_steps(proof.ident, mine, tag="v")
        trips = []  # back edges on %ctaid (ctaid_trips): handled after the registers are at t_value
        for d in proof.decisions:  # decided by the executed CTAs: every CTA must decide the same
            if self.ctaid_trips and leaves(d.expr, ("c",)) and self._head_of(d.pc) is not None:
                trips.append(d)
                continue
            if leaves(d.expr, ("c",)):
                u = self._uniform(self.prog.code[d.pc], d.expr, d.lanes, d.value, proof.ident)
                if accesses:  # the period ran as iteration t = 0 only
                    u = Uniform(u.where, substitute(u.expr, "t", proof.ident, t_value), u.rows, None)
                self.uniform.append(u)

        for name, st in list(self.regs.items()):
            if st is TOP or st is None:
                continue
            e = st.expr if isinstance(st, Sv) else st
            if not uses_t(e, proof.ident):  # an outer loop's t only (`end_inner`): kept as it is
                continue
            e = substitute(e, "t", proof.ident, t_value)
            if not leaves(e, ("c", "s", "g", "t")):  # the same in every CTA again: the run's value says it
                del self.regs[name]
                continue
            self.regs[name] = Sv(e, st.off) if isinstance(st, Sv) else e
        left = any(d is x for d in trips for x in self._ctaid_exits)
        for d in trips:
            ins = self.prog.code[d.pc]
            goes, value = self._goes(d.pc, d.expr), self._goes(d.pc, d.value)  # "the loop goes on" (`_latch`)
            if any(d is x for x in self._ctaid_exits):  # left inside the period: handled there (_loop_guard)
                if not accesses:
                    self.fail(f"the loop at {ins.span} is left inside a period the loop summariser skips")
                    return
                continue
            if accesses and left:  # taken before the loop was left in this period: no condition of what
                # follows the loop (a stale one would drop accesses); it still tells the CTAs' patterns apart
                if not value[d.lanes & self.batch.valid].all():
                    self.fail(f"threads of one CTA leave the loop at {ins.span} at different iterations")
                    return
                self.trip_conds.append((None, substitute(goes, "t", proof.ident, 0)))
                continue
            if accesses:  # the period ran as the iteration t = 0, as any other iteration
                self._ctaid_trip(d.lanes, ins, substitute(goes, "t", proof.ident, 0), value, d.pc)
                continue
            if not value[d.lanes & self.batch.valid].all():
                self.fail(f"the loop at {ins.span} leaves within a summarised period (its back edge depends on %ctaid)")
                return
            # periods 0 .. t_value ran in the executed CTA (the accesses keep t: grid.py bounds them by these
            # guards); the iteration after them is reached through period t_value's back edge
            self.ctaid_backs.setdefault(proof.ident, []).append(goes)
            self.trip_conds.append((proof.ident, goes))
            self.taken.setdefault(self._head_of(d.pc), []).append(substitute(goes, "t", proof.ident, t_value))
        if not accesses and self.size_params:  # periods skipped: reaching the next one took their back edges
            for d in proof.decisions:
                head = self._head_of(d.pc)
                if head is not None and leaves(d.expr, ("s", "g")):
                    self.taken.setdefault(head, []).append(substitute(self._goes(d.pc, d.expr), "t", proof.ident,
                                                                      t_value))
        for i, dv in enumerate(self.nonzero):  # t = t_value where the period ran as any iteration, else kept
            if accesses and (uses_t(dv.expr, proof.ident) or (dv.reach is not None and uses_t(dv.reach, proof.ident))):
                self.nonzero[i] = Divisor(substitute(dv.expr, "t", proof.ident, t_value), dv.where,
                                          None if dv.reach is None else substitute(dv.reach, "t", proof.ident, t_value))
        if accesses:
            for i in range(proof.first_access, len(self.accesses)):
                a = self.accesses[i]
                if leaves(a.addr, ("t",)) or (a.guard is not None and leaves(a.guard, ("t",))):
                    self.accesses[i] = replace(a, addr=substitute(a.addr, "t", proof.ident, t_value),
                                               guard=None if a.guard is None else substitute(a.guard, "t", proof.ident,
                                                                                              t_value))

    def _dests(self, ins: A.Instruction) -> list[tuple[str, str]]:
        if not ins.operands:
            return []
        d = ins.operands[0]
        ty = ins.types[0] if ins.types else ".b32"
        names = []
        items = d.elements if isinstance(d, A.Vector) else (d.first, d.second) if isinstance(d, A.Pair) else (d,)
        for e in items:
            if isinstance(e, A.Sym) and self.prog.reg(e.name) is not None:
                names.append((e.name, ".pred" if self.prog.reg(e.name).width == 1 else ty))
        return names

    # ---------------------------------------------------------------- memory accesses
    def _memory(self, g, ins: A.Instruction, mask: np.ndarray, guard) -> None:
        op = ins.opcode
        if op in ("ld", "ldu", "atom"):
            aop, kind = ins.operands[1], (READ if op != "atom" else ATOMIC)
        elif op in ("st", "red"):
            aop, kind = ins.operands[0], (WRITE if op == "st" else ATOMIC)
        elif op == "cp" and ".async" in ins.modifiers and not ins.modifiers & {".bulk", ".tensor", ".reduce"} \
                and len(ins.operands) in (3, 4):
            # cp.async dst, src, cp-size{, src-size} (PTX 9.7.9.25.3): reads src-size bytes of global
            # memory (cp-size when absent); src-size 0 reads nothing, modelled as a guard
            self._shared_operands(ins, [ins.operands[0]], guard)
            aop, kind = ins.operands[1], READ
            size = int(self.concrete(ins.operands[2], ".u32"))
            live = None
            if len(ins.operands) == 4:
                live = np.broadcast_to(self.concrete(ins.operands[3], ".u32"), mask.shape) != 0
                ss = self.state(ins.operands[3])
                if ss is TOP:
                    guard = TOP if guard is None else guard
                elif ss is not None or guard is not None:
                    nz = ("cmp", 0, "ne", self.expr(ins.operands[3], ".u32"), K(0, 32))
                    guard = nz if guard is None else TOP if guard is TOP else ("band", 0, guard, nz)
                else:  # independent: lanes that read nothing are not accesses
                    mask = mask & live
            self._record(g, ins, mask, guard, aop, kind, size, ".global", live)
            return
        elif op == "cp" and _BULK_LOAD <= ins.modifiers and not ins.modifiers & {".tensor", ".reduce", ".prefetch"} \
                and [p for p in ins.positional if p.startswith((".shared", ".global"))][1:] == [".global"] \
                and len(ins.operands) >= 4:
            # cp.async.bulk.shared.global dst, src, size, [mbar] (PTX 9.7.9.25.4.1): one thread reads size
            # bytes of global memory at src, like a cp.async of that width
            self._shared_operands(ins, [ins.operands[0], ins.operands[3]], guard)
            if self.state(ins.operands[2]) is not None:
                self.fail(f"the size of {ins.name} at {ins.span} is not the same in every CTA")
                return
            sizes = np.unique(np.broadcast_to(self.concrete(ins.operands[2], ".u32"), mask.shape)[mask])
            if sizes.size > 1:
                self.fail(f"the size of {ins.name} at {ins.span} differs between its threads")
                return
            if sizes.size:
                self._record(g, ins, mask, guard, ins.operands[1], READ, int(sizes[0]), ".global")
            return
        elif op == "cp" and {".bulk", ".tensor"} <= ins.modifiers and not ins.modifiers & {".reduce", ".prefetch"}:
            self._tensor_copy(g, ins, mask, guard)
            return
        else:
            # ldmatrix, stmatrix, mbarrier, wgmma descriptors' shared addresses, ...
            self._shared_operands(ins, ins.operands, guard)
            if op == "wgmma":
                self._wgmma_op(g, ins, mask)
            elif op == "tcgen05" and any(self.state(o) is not None for o in ins.operands[1:]
                                         # tcgen05.st's values (9.7.16.8.4) are data, as a st.shared's are
                                         if not (".st" in ins.modifiers and isinstance(o, A.Vector))):
                self.shared_varies = self.shared_varies or f"{ins.name} at {ins.span} (descriptor operands)"
            if ".global" in ins.modifiers or any("global" in p for p in ins.positional):
                if op not in ("prefetch", "prefetchu", "applypriority", "cvta", "isspacep", "createpolicy"):
                    self.fail(f"{ins.name} at {ins.span} accesses global memory in a way the symbolic grid "
                              "check does not model")
            return
        sp = space_of(ins)
        if sp in (".param", ".const", ".local"):
            return
        vec = next((int(m[2:]) for m in ins.modifiers if m in (".v2", ".v4", ".v8")), 1)
        size = vec * max(8, tinfo(ins.types[-1]).width) // 8
        self._record(g, ins, mask, guard, aop, kind, size, sp)

    def _wgmma_op(self, g, ins: A.Instruction, mask: np.ndarray) -> None:
        """wgmma (PTX 9.7.15): an mma_async whose descriptors or scale-d depend on %ctaid, or one of whose D/A
        registers depends on %ctaid and was written since the last wgmma.fence (the 9.7.15.7.1 check compares
        its value with the fence's snapshot: another CTA may differ there), is CTA-local behaviour that may
        depend on %ctaid (grid_wgmma.py); fence, commit_group and wait_group 0 move the registers' marks."""
        mods, ops, w = ins.modifiers, ins.operands, self._wgmma
        if ".mma_async" not in mods:
            if w is not None and ins.guard is None:  # under a guard: no mark is cleared (conservative)
                if ".fence" in mods:
                    w.fence(mask)
                elif ".commit_group" in mods:
                    w.commit(mask)
                elif ".wait_group" in mods and len(ops) == 1 and _const(ops[0]) == 0:
                    w.wait_all(mask)
            return
        regs_a = len(ops) > 1 and isinstance(ops[1], A.Vector)
        if any(self.state(o) is not None for o in ops[2 if regs_a else 1:]):
            self.shared_varies = self.shared_varies or f"{ins.name} at {ins.span} (descriptor operands)"
            return
        if w is None:
            if regs_a and self.state(ops[1]) is not None:
                self.shared_varies = self.shared_varies or f"{ins.name} at {ins.span} (A registers)"
            return
        names = [e.name for o in ops[:2] if isinstance(o, A.Vector) for e in o.elements if isinstance(e, A.Sym)]
        hit = w.issue(names, g.mask, lambda r: self.regs.get(r) is not None)
        if hit is not None:
            self.shared_varies = self.shared_varies or (
                f"{ins.name} at {ins.span} (register {hit}, whose value depends on %ctaid, written after the last "
                "wgmma.fence: 9.7.15.7.1 compares values)")

    def _wgmma_wrote(self, ins: A.Instruction, names, lanes: np.ndarray) -> None:
        """Instruction `ins` writes `names` on `lanes` (every lane that reaches it): marks for grid_wgmma.py; a
        write to a register of a pending wgmma.mma_async (9.7.15.7.3, compared by value at the covering wait)
        makes the instruction CTA-local behaviour that may depend on %ctaid."""
        if self._wgmma is None:
            return
        hit = self._wgmma.wrote(names, lanes)
        if hit is not None:
            self.shared_varies = self.shared_varies or (
                f"{ins.name} at {ins.span} (writes {hit}, a register of a pending wgmma.mma_async)")

    def _shared_guard(self, guard):
        """The guard of a shared access as far as it may differ between CTAs of one trip pattern: with
        `ctaid_trips`, the back edges on %ctaid taken before it are left out (CTAs of one pattern took the
        same ones, grid.py `_trip_patterns`); otherwise the guard."""
        return self._own_guard if self.ctaid_trips else guard

    def _shared_operands(self, ins: A.Instruction, operands, guard) -> None:
        """Note `ins` as a shared access that may differ between CTAs when one of its address operands
        (shared memory, an mbarrier) has a %ctaid-dependent base or the instruction a %ctaid-dependent
        guard (`_shared_differs`)."""
        for o in operands:
            if isinstance(o, A.Address) and o.base is not None and o.base.name not in self.batch.var_addr \
                    and self._shared_differs(ins, self._shared_base(o.base), self._shared_guard(guard)):
                return

    def _shared_base(self, base: A.Sym):
        """The state of a shared address's base register for `_shared_differs`: None (the same in every CTA of a
        trip pattern) for a register unknown only across trip patterns (`_pattern_unknown`) while `ctaid_trips`
        (one CTA of each pattern runs, grid.py), else its state."""
        if self.ctaid_trips and base.name in self.regs.pattern:
            return None
        return self.state(base)

    def _shared_differs(self, ins: A.Instruction, a_state, guard) -> bool:
        """A shared access with address state `a_state` and guard `guard` (`_shared_guard`): noted in
        `shared_varies` (True) where either depends on %ctaid, the sizes or what the shadow does not follow. One
        that depends only on the iteration t of a period followed (a stage's mbarrier in a K loop's period) is the
        same in every CTA for each t: where the period runs as t = 0 (its proof abandoned) it is the run's value,
        and where the loop is summarised each CTA's period t makes the access the executed CTA's period t makes,
        which the loop proof covers (loops.py; a plain ld/st.shared whose address moves with t fails that proof:
        `_record`). Noting it made every later run of the CTA give up the symbolic grid ("mbarrier.try_wait.parity
        at :403 has a shared address or guard that depends on %ctaid", gemm_tma_persistent sm_120)."""
        exprs = [x.expr if isinstance(x, Sv) else x for x in (a_state, guard) if x is not None]
        if not exprs:
            return False
        lps = [lp.ident for lp in (self.loop, self.outer) if lp is not None]
        if lps and not any(e is TOP or leaves(e, ("c", "s", "g", "d", "q")) for e in exprs) \
                and all(_t_only(e, lps) for e in exprs):
            return False
        if a_state is None and guard is not None and self._shared_guard_uniform(ins, guard):
            return False
        self.shared_varies = self.shared_varies or f"{ins.name} at {ins.span}"
        return True

    def _shared_guard_uniform(self, ins: A.Instruction, guard) -> bool:
        """With `ctaid_trips` (one CTA per trip pattern runs, grid.py `_trip_patterns`), a shared access whose address
        is the same in every CTA and whose guard (`_shared_guard`: its predicate, inside a region on %ctaid with the
        region's path) depends on %ctaid, and on nothing taken per iteration or per size (no t, size, grid or step
        leaf): the guard becomes an obligation that every CTA decides it, per thread, as the executed CTA did (a
        Uniform, proved by grid.py `_same_path` over every CTA whether or not it reaches the access: stricter than
        needed). Proved, the access is made by the same threads at the same address in every CTA of the pattern,
        as an unguarded one is; not proved, the grid falls back as when the guard made the access vary. True when
        taken as an obligation. (flash_attention: a tcgen05.st under min(%ctaid.y * 128 + 128, S) > 0.)"""
        mask = self._gmask
        if not self.ctaid_trips or guard is TOP or mask is None or leaves(guard, ("t", "s", "g", "d")):
            return False
        try:
            value = np.broadcast_to(evaluate(guard, self.lane_env()), mask.shape).astype(bool)
        except (KeyError, TypeError, ValueError):
            return False
        lanes = mask & self.batch.valid
        if self._region is None:
            if ins.guard is None or (value != self._taken(ins, mask))[lanes].any():
                return False  # the shadow disagrees with the run: never trust it
        elif not value[lanes].all():
            return False  # every lane that runs `ins` in a region took its path and passed its own predicate
        self.uniform.append(self._uniform(ins, guard, mask, value, None))
        return True

    def _tensor_copy(self, g, ins: A.Instruction, mask: np.ndarray, guard) -> None:
        """cp.async.bulk.tensor (PTX 9.7.9.25.5.2), tile mode, global -> shared: the CTA reads part of
        the tensor the map describes. Out-of-bounds box elements are not read (they are filled,
        5.5.3.2), so whatever the coordinates, the footprint lies in [map address, + extent): that
        whole range is recorded as the read, the same in every CTA. Sound for any coordinates; exact
        enough while nothing in the kernel writes that buffer (finish() falls back otherwise).
        Stores, im2col and multicast copies end the symbolic grid with their reason."""
        where = f"{ins.name} at {ins.span}"
        pos = [p for p in ins.positional if p.startswith((".shared", ".global"))]
        store = pos[:1] == [".global"]
        if any(m.startswith((".im2col", ".tile::gather4", ".tile::scatter4")) for m in ins.modifiers):
            self.fail(f"{where}: tensor copies in im2col/gather4 mode are not modelled by the symbolic grid")
            return
        if any(m.startswith(".multicast") for m in ins.modifiers):
            self.fail(f"{where}: a multicast tensor copy writes other CTAs' shared memory, which the symbolic "
                      "grid does not model")
            return
        tas = [o for o in ins.operands if isinstance(o, A.TensorAddress)]
        self._shared_operands(ins, ins.operands, guard)  # the shared destination and the mbarrier
        if len(tas) != 1 or not isinstance(tas[0].tensor, A.Sym):
            self.fail(f"{where}: tensor-map operand not understood by the symbolic grid")
            return
        tm_sym = tas[0].tensor
        lanes = np.nonzero(mask)[0]
        if lanes.size == 0:
            return
        tm = self._param_map(tm_sym, lanes, where)
        if tm is None:
            return
        if store:
            self._tensor_store(g, ins, mask, guard, tm, tas[0], where)
            return
        base = int(self.glob.by_name(tm.buffer).base) + tm.offset
        if self.glob.locate(np.array([base], np.uint64), tm.extent_bytes())[0][0] < 0:
            # which boxes reach past the buffer depends on the coordinates: the run of every CTA decides
            self.fail(f"{where}: the tensor map's tensor reaches past its buffer {tm.buffer}")
            return
        buf = self._record(g, ins, mask, guard, None, READ, tm.extent_bytes(), ".global", at=base)
        if buf is not None:
            self.tensor_reads.setdefault(buf, where)

    def _tensor_store(self, g, ins: A.Instruction, mask: np.ndarray, guard, tm, ta, where: str) -> None:
        """A tile-mode tensor store writes its box at the coordinates (PTX 9.7.9.25.5.2), clipped to
        the tensor (5.5.3.2). Followed when the box lies inside the tensor in every CTA (an obligation
        for grid.py, like a %ctaid-dependent branch): then the footprint is exact, one row of
        boxDim[0] elements per combination of the outer box indices, at
        map address + sum(coordinate[k] * byte stride[k]) + the row's offset."""
        if tm.interleave.name != "NONE" or any(e != 1 for e in tm.element_strides):
            self.fail(f"{where}: a tensor store with interleave or element strides is not modelled by the "
                      "symbolic grid")
            return
        if guard is TOP:
            self.fail(f"{where}: the guard of a tensor store depends on values the symbolic grid does not follow")
            return
        if self.loop is not None and self.outer is not None:  # an inner period's writes end its proof anyway
            self.loop_fail(f"{where}: a tensor store in a summarised loop")
        els = ta.rest[0].elements if len(ta.rest) == 1 and isinstance(ta.rest[0], A.Vector) else []
        if len(els) != tm.rank:
            self.fail(f"{where}: tensor coordinates not understood by the symbolic grid")
            return
        coords = [self.expr(e, ".s32") for e in els]
        if any(c is TOP for c in coords):
            self.fail(f"{where}: a tensor store's coordinates are not a function of %ctaid this check can follow")
            return
        lanes = np.nonzero(mask)[0]
        conc = np.stack([np.broadcast_to(self.concrete(e, ".s32").astype(np.int64), (self.batch.n,))[lanes]
                         for e in els], axis=1)
        inside = ((conc >= 0) & (conc + np.array(tm.box_dims) <= np.array(tm.global_dims))).all(axis=1)
        if not inside.all():
            self.fail(f"{where}: a tensor store's box reaches past the tensor (clipped) in an executed CTA")
            return
        base = int(self.glob.by_name(tm.buffer).base) + tm.offset
        strides = tm.byte_strides()
        addr = K(base, 64)
        box_in = None
        for c, st, box, dim in zip(coords, strides, tm.box_dims, tm.global_dims):
            c64 = adapt(c, 64, signed=True)
            addr = ("add", 64, addr, ("mul", 64, c64, K(st, 64)))
            ok = ("band", 0, ("cmp", 0, "sge", c64, K(0, 64)), ("cmp", 0, "sle", ("add", 64, c64, K(box, 64)),
                                                                  K(dim, 64)))
            box_in = ok if box_in is None else ("band", 0, box_in, ok)
        # every CTA's box lies inside the tensor (where the store's guard holds), as in the executed ones
        cond = box_in if guard is None else ("bor", 0, ("not", 0, guard), box_in)
        if self.loop is not None and leaves(cond, ("t",)):
            # in a summarised period (loops.py): a decision of the period, true at t = 0 (checked above), so the
            # periods summarised end before the first t at which some executed lane's box leaves the tensor
            # (`_first_change`), and one that also depends on %ctaid becomes an obligation for every CTA and
            # every period summarised (`end_loop`: a Uniform of the loop, grid.py `_same_path`)
            try:
                now = np.broadcast_to(evaluate(cond, self.lane_env(0)), mask.shape).astype(bool)
                bad = None if now[g.mask].all() else f"internal: the shadow of {where}'s box disagrees with the run"
            except (KeyError, TypeError, ValueError) as e:
                bad = f"internal: {type(e).__name__}: {e} at {where}"
            if bad is None:
                self.loop.decisions.append(Decision(self.pc, cond, g.mask.copy(), np.ones(mask.shape, bool)))
            else:  # the period runs as t = 0: the obligation at t = 0, and the access recorded below as any other
                self.loop_fail(bad)
                self.uniform.append(self._uniform(ins, substitute(cond, "t", self.loop.ident, 0), g.mask,
                                                  np.ones(self.batch.n, bool), None))
        else:
            self.uniform.append(self._uniform(ins, cond, g.mask, np.ones(self.batch.n, bool), None))
        outer = np.zeros(1, np.int64)
        for st, box in zip(strides[1:], tm.box_dims[1:]):
            outer = (outer[:, None] + np.arange(box, dtype=np.int64)[None, :] * st).reshape(-1)
        buf = next(i for i, a in enumerate(self.glob.allocations) if a.name == tm.buffer)
        lanes = np.nonzero(g.mask if guard is not None else mask)[0]
        exprs = [addr] + ([guard] if guard is not None else [])
        if self.loop is not None:
            # the skipped periods' writes (loops.py `_skipped_writes`: not a plain st, so their bytes are kept with
            # no single writer, and any later access of them voids the summary): one row of the box per entry, of
            # the threads that store now (a guard without t stores on the same threads in every period), else of
            # every thread of the group (a superset: `_skipped_writes` keeps only the bytes inside the buffer)
            wl = np.nonzero(g.mask if guard is not None and leaves(guard, ("t",)) else mask)[0]
            self.loop.writes.append((addr, np.tile(outer.astype(np.uint64), wl.size), np.repeat(wl, outer.size),
                                     tm.box_dims[0] * tm.elem_bytes, buf))
            self.loop.write_sites.append((self.pc, len(self.accesses)))
        canon, cols = _canonical(exprs, self.ph, lanes)
        thread = (lanes % self.batch.lanes_per_cta).astype(np.uint64)
        rows = np.column_stack(cols + [thread, np.zeros(lanes.size, np.uint64)])
        rows = np.repeat(rows, outer.size, axis=0)
        rows[:, -1] = np.tile(outer.astype(np.uint64), lanes.size)
        self.accesses.append(Access(self.pc, WRITE, strength(ins), buf, tm.box_dims[0] * tm.elem_bytes, canon[0],
                                    canon[1] if len(canon) > 1 else None, np.unique(rows, axis=0),
                                    tuple(zip(strides[1:], tm.box_dims[1:]))))

    def _param_map(self, sym: A.Sym, lanes: np.ndarray, where: str):
        """The launch's tensor map that the tensor-map operand names, when it is a kernel parameter
        (by name, or its generic address from cvta.param) the same in every CTA; else fail."""
        mem = self.batch.memory
        if self.prog.reg(sym.name) is None:
            off = mem.param_offsets.get(sym.name)
            if off is None:
                self.fail(f"{where}: the tensor map is not a kernel parameter (not modelled by the symbolic grid)")
                return None
            offs = np.array([off])
        else:
            if self.state(sym) is not None:
                self.fail(f"{where}: the tensor-map address depends on %ctaid")
                return None
            gen = np.unique(np.broadcast_to(np.asarray(self.concrete(sym, ".u64"), np.uint64), (self.batch.n,))[lanes])
            if gen.size != 1 or not PARAM_BASE <= int(gen[0]) < PARAM_BASE + WINDOW:
                self.fail(f"{where}: the tensor map is not one kernel parameter (a map in global memory or "
                          "built on the device is not modelled by the symbolic grid)")
                return None
            offs = gen.astype(np.int64) - PARAM_BASE
        o = int(offs[0])
        ident = tag_ident(mem.params[o:o + TENSOR_MAP_BYTES]) if o + TENSOR_MAP_BYTES <= mem.params.size else None
        tm = self.batch.launch.tensor_maps.get(ident - 1) if ident is not None and is_param_ident(ident) else None
        if tm is None or tm.buffer is None or unmodelled(tm) is not None:
            # the concrete run reports what is wrong with the map; the grid just does not follow it
            self.fail(f"{where}: the tensor map is not a launch tensor map over a named buffer")
            return None
        return tm

    def _pointer_buffer(self, reg: str) -> int | None:
        """The allocation of the one buffer parameter register `reg` is computed from (provenance.py),
        or None: the parameter is not one buffer, or the address may come from elsewhere."""
        if self._origins is None:
            self._origins = PointerOrigins(self.prog)
        got = self._origins.params_of(reg)
        if got is None:
            return None
        params = self.batch.launch.params
        names = {params[i] for i in got if i < len(params) and isinstance(params[i], str)}
        if len(names) != 1 or len(names) != len(got):
            return None
        name = names.pop()
        return next((i for i, al in enumerate(self.glob.allocations) if al.name == name), None)

    def _record(self, g, ins: A.Instruction, mask: np.ndarray, guard, aop, kind: int, size: int, sp: str,
                live: np.ndarray | None = None, at: int | None = None) -> int | None:
        """Record the access (returns its buffer's index). at: one concrete global address for every
        lane, instead of the address operand `aop`."""
        if at is not None or not isinstance(aop, A.Address) or aop.base is None \
                or aop.base.name in self.batch.var_addr:
            a_state = None
        else:
            a_state = self.state(aop.base)
        if self.loop is not None:
            if guard is not None and guard is not TOP and leaves(guard, ("t",)):
                self._loop_guard(ins, guard, g.mask)
            a_expr = self.sv(aop.base, ".u64") if a_state is not None and a_state is not TOP else None
            if a_expr is not None and leaves(a_expr.expr, ("t",)):
                if sp.startswith(".shared") or sp in (".local", ".param", ".const"):
                    self.loop_fail(f"the {sp[1:]} address of {ins.name} at {ins.span} changes from iteration to "
                                   "iteration", a_expr.expr)
        if sp.startswith(".shared"):
            base = aop.base if isinstance(aop, A.Address) and aop.base is not None else None
            self._shared_differs(ins, a_state if base is None or a_state is not TOP else self._shared_base(base),
                                 self._shared_guard(guard))
            return
        if a_state is TOP:
            self.fail(f"the address of {ins.name} at {ins.span} is not a function of %ctaid this check can follow")
            return
        lanes = np.nonzero(g.mask if guard is not None else mask)[0]
        if lanes.size == 0:
            return
        ctx = self.batch.ctx
        if at is not None:
            base_c, off = np.uint64(at), 0
        else:
            base_c = (self.concrete(aop.base, ".u64") if aop.base is not None else np.uint64(0)) \
                if a_state is None else None
            off = int(ctx._immediate(aop.offset, ".s64").astype(np.int64)) if aop.offset is not None else 0
        if a_state is None:
            conc = np.broadcast_to(np.asarray(base_c, np.uint64), (self.batch.n,))
            e, o = self.leaf(conc, 64), None
        else:
            sv = self.sv(aop.base, ".u64")
            e, o = sv.expr, sv.off
        addr = e  # the displacement goes into the offset column (more accesses share one shape)
        # concrete addresses in this run: which buffer, and the generic windows
        conc = np.broadcast_to(np.asarray(base_c if a_state is None
                                          else self.concrete(aop.base, ".u64") if aop.base is not None else 0,
                                          np.uint64), (self.batch.n,))[lanes] \
            + np.uint64(off & (2**64 - 1))
        act = mask[lanes] if live is None else (mask & live)[lanes]  # lanes that access memory in this run
        win = ((conc >= SHARED_BASE) & (conc < SHARED_BASE + WINDOW)) | ((conc >= LOCAL_BASE) & (conc < LOCAL_BASE + WINDOW))
        if win.any():
            if a_state is not None or guard is not None:
                self.fail(f"generic access {ins.name} at {ins.span} reaches shared/local memory with a %ctaid-"
                          "dependent address or guard")
            return
        # no lane accesses memory here in this run (guarded off): the buffer of the pointer parameter the
        # address is computed from; the addresses the lanes would use may lie in the next buffer
        origin = self._pointer_buffer(aop.base.name) if not act.any() and at is None \
            and isinstance(aop, A.Address) and aop.base is not None else None
        if origin is not None:
            found, counts = np.array([origin]), np.ones(1)
        elif not act.any() and self.size_params and at is None:
            # this run's layout says nothing about where the address lands at other sizes
            self.fail(f"cannot tell which buffer {ins.name} at {ins.span} accesses: no lane performs it in this "
                      "run and its address is not computed from one buffer parameter")
            return
        else:
            idx, _ = self.glob.locate(conc[act] if act.any() else conc, size)
            found, counts = np.unique(idx[idx >= 0], return_counts=True)
        if found.size == 0:  # nor is the pointer's parameter known: the allocation at or below the address
            bases = np.array([al.base for al in self.glob.allocations], dtype=np.uint64)
            below = np.searchsorted(bases, conc[:1], side="right") - 1
            if below[0] < 0:
                self.fail(f"cannot tell which buffer {ins.name} at {ins.span} accesses")
                return
            found, counts = below, np.ones(1)
        # the buffer most lanes use here; the bounds proof (grid.py) shows every lane of every CTA stays in it
        found = found[np.argmax(counts):]
        exprs = [addr] + ([guard] if guard is not None and guard is not TOP else [])
        if self.loop is not None and kind != READ:
            o_full = (np.broadcast_to(np.asarray(o, np.uint64), (self.batch.n,))[lanes] if o is not None
                      else np.zeros(lanes.size, np.uint64)) + np.uint64(off & (2**64 - 1))
            self.loop.writes.append((addr, o_full, lanes, size, int(found[0])))
            self.loop.write_sites.append((self.pc, len(self.accesses)))
        elif self.loop is not None:
            o_full = (np.broadcast_to(np.asarray(o, np.uint64), (self.batch.n,))[lanes] if o is not None
                      else np.zeros(lanes.size, np.uint64)) + np.uint64(off & (2**64 - 1))
            reading = np.ones(lanes.size, bool) if guard is TOP else act
            self.loop.reads.append((addr, o_full[reading], lanes[reading], size, int(found[0])))
            self.loop.read_sites.append((self.pc, len(self.accesses)))
        canon, cols = _canonical(exprs, self.ph, lanes)
        offcol = (o[lanes] if o is not None and np.ndim(o) else np.full(lanes.size, 0 if o is None else int(o)))
        offcol = offcol.astype(np.uint64) + np.uint64(off & (2**64 - 1))
        thread = (lanes % self.batch.lanes_per_cta).astype(np.uint64)
        rows = np.column_stack(cols + [thread, offcol.astype(np.uint64)])
        self.accesses.append(Access(self.pc, kind, strength(ins), int(found[0]), size, canon[0],
                                    canon[1] if len(canon) > 1 else None, np.unique(rows, axis=0)))
        return int(found[0])


def _t_only(e, idents: list[int]) -> bool:
    """Does `e` hold a leaf t, and only leaves t of the loops `idents` among its t leaves?"""
    if not isinstance(e, tuple) or not e:
        return False
    ts = {ident for tag, ident in leaf_keys(e) if tag == "t"}
    return bool(ts) and ts <= set(idents)


def uses_t(e, ident: int) -> bool:
    """Does expression `e` contain the iteration leaf ("t", w, ident) of loop `ident`?"""
    return isinstance(e, tuple) and bool(e) and ((e[0] == "t" and e[2] == ident) or any(uses_t(x, ident)
                                                                                      for x in e[2:]))


def _full(sh: Shadow, v: Sv) -> tuple:
    return v.expr if v.off is None else ("add", width(v.expr), v.expr, sh.leaf(v.off, width(v.expr)))


def _to_reg(sh: Shadow, v, ty: str, rw: int):
    """A result of type `ty` written to a register of width rw (as GroupExec.write_reg does)."""
    if isinstance(v, tuple):
        return v
    if width(v.expr) == rw:
        return v
    t = tinfo(ty)
    return Sv(adapt(_full(sh, v), rw, t.kind == "s" and t.width < rw))


def _const(op) -> int | None:
    """An immediate operand's value, None if it is not a constant."""
    try:
        return int(evaluate_constexpr(op))
    except Exception:  # noqa: BLE001 - not a constant
        return None


def step_key(ident: int, name: str) -> str:
    """The name of register `name`'s step (or, for a recomputed register, its start value "v") in loop proof
    `ident`: the key of `Shadow.steps` / `Shadow.starts` and of the leaves that stand for them (loops.py reads it
    too, when it resolves a recomputed register's start)."""
    return f"{ident}/{name}"


def _canonical(exprs: list[tuple], ph: dict, lanes: np.ndarray) -> tuple[list[tuple], list[np.ndarray]]:
    """Rename placeholders to ("q", w, i) in first-seen order; their values at `lanes`."""
    order: dict[int, int] = {}
    cols: list[np.ndarray] = []

    def walk(e):
        if not isinstance(e, tuple) or not e:
            return e
        if e[0] == "p":
            if e[2] not in order:
                order[e[2]] = len(order)
                v = ph[e[2]]
                cols.append(v[lanes] if np.ndim(v) else np.full(lanes.size, int(v), np.uint64))
            return ("q", e[1], order[e[2]])
        return tuple(walk(x) if isinstance(x, tuple) else x for x in e)

    return [walk(e) for e in exprs], cols
