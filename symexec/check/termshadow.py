"""The equivalence shadow of check mode: a term (semantics.terms) beside the bits of every
data-dependent register and memory byte, per lane.

The machine runs the kernel concretely as always (addresses, indices, loop counters and control
flow are the launch's); tensor elements of input buffers are INPUT leaves. Each instruction whose
operands include a term gets the term of its result from `semantics.symbolic.build`; registers and
bytes that depend on no input stay CONCRETE (their bits are the value, the same for every input).
Memory keeps, per byte, the term it is part of and the byte's position in it, so that stores and
loads of any width, vector accesses, packed halves and asynchronous copies move terms intact.
At the end, `outputs` gives one term per element of every global buffer a kernel wrote, with the
number of plain stores and atomics that wrote it.

What the terms cannot follow is recorded, never guessed (`gaps`): a data-dependent branch (the
explored input's path only), a data-dependent guard of a memory or synchronisation instruction, an
instruction without a term meaning (its results become opaque leaves that remember why), values
that depend on the schedule (an atomic's old value, a timer).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ptx_parser import ast as A
from semantics.errors import Unsupported
from semantics.ptx.core import tinfo
from semantics.ptx.mma import int_mma_bound
from semantics.symbolic import Arg, Builder, BuildContext, build, ldmatrix_sources
from semantics.terms import (CONCRETE, NO_MODS, PRED, SORTS, Kind, Mods, Op, TermStore, bits_sort, float_sort, mods_id,
                             sort_of_type, sort_widths)

from ..events import (Buffer, MemoryAccess, MemSpace, MmaPerformed, Observer, Proxy, SplitReason, Stream,
                      TensorMmaPerformed)
from ..machine import BranchDecision
from ..memory import scatter_rows
from ..opcodes import touches_memory_or_sync
from .exec import CheckedExec
from .policy import DataDependencePolicy
from .shadow import rows_all, rows_any
from .termpaths import TAKEN, Exploration

_INPUT = -2  # an untouched byte of an input buffer: part of its element's INPUT leaf
#: Float operations of concrete operands whose rounded result keeps its exact term (TermShadow._exact_terms),
#: and the float operations on data that read that term in place of the rounded bits.
_EXACT_PRODUCERS = frozenset(("rcp", "div", "sqrt", "rsqrt"))
_EXACT_CONSUMERS = frozenset(("add", "sub", "mul", "fma", "mad", "div", "rcp", "sqrt", "rsqrt", "min", "max"))


@dataclass(frozen=True)
class GlobalInfo:
    """How the shadow sees one global buffer of the launch: its element sort and whether its
    contents are symbolic inputs (otherwise its initial bytes are concrete)."""

    name: str
    sort: int
    elem_bytes: int
    symbolic: bool


@dataclass
class Gap:
    """Something the terms do not follow: why, the instruction, and the terms it made opaque."""

    why: str
    ins: A.Instruction | None
    fatal: bool = False  # the terms of the whole run are in doubt (not just some opaque values)

    def describe(self) -> str:
        at = f" at {self.ins.span}" if self.ins is not None and self.ins.span is not None else ""
        return f"{self.why}{at}"


@dataclass
class OutputElement:
    """The final term of one element of a global buffer and how it was written."""

    term: int  # CONCRETE: its final bits are the same for every input
    stores: int
    atomics: int


@dataclass
class BufferOutput:
    name: str
    sort: int
    elements: np.ndarray  # element indices written (sorted)
    terms: np.ndarray  # their final terms (CONCRETE where concrete)
    bits: np.ndarray  # their final concrete bits (the machine's, for this input)
    stores: np.ndarray
    atomics: np.ndarray
    writer: np.ndarray  # the last write of each: pc << 32 | global thread row (symexec.check.run._thread_of)


class _Mem:
    """Term shadow of one buffer: per byte its term and position, and (global) how often written."""

    def __init__(self, size: int, initial: int, tracked: bool, layout=None) -> None:
        from ..paged import PAGE, PageLayout, PagedArray, constant

        # the columns are indexed together: one page lookup per index array for all; `layout`: the check
        # state's shadow of the same buffer (every access indexes both with the same array, in turn)
        if layout is None or layout.npages != -(-int(size) // PAGE):
            layout = PageLayout(size)
        self.term = PagedArray(size, np.int64, constant(initial, np.int64), layout)
        self.pos = PagedArray(size, np.uint8, constant(0, np.uint8), layout)
        self.stores = PagedArray(size, np.uint16, constant(0, np.uint16), layout) if tracked else None
        self.atomics = PagedArray(size, np.uint16, constant(0, np.uint16), layout) if tracked else None
        self.writer = PagedArray(size, np.int64, constant(-1, np.int64), layout) if tracked else None  # pc << 32 | thread
        self.written: list[np.ndarray] = []

    def wrote(self, flat: np.ndarray, pc: int, rows: np.ndarray, atomic: bool = False) -> None:
        """Count a write of bytes `flat` (k, nbytes) by the instruction at `pc`, threads `rows`."""
        if self.stores is None:
            return
        counts = self.atomics if atomic else self.stores
        counts[flat] = counts[flat] + np.uint16(1)
        self.writer[flat] = ((np.int64(pc) << np.int64(32)) | rows.astype(np.int64))[:, None]
        self.written.append(flat.reshape(-1))


@dataclass
class _Layout:
    """A copy's byte mapping (symexec.events.CopyLayout) and how many of its bytes were written."""

    source: np.ndarray
    reads: int  # the operation whose reads supply the bytes
    cursor: int = 0


class TermShadow(Observer):
    """Per-lane register terms and per-byte memory terms of one run (see the module docstring)."""

    def __init__(self, store: TermStore, globals_: dict[str, GlobalInfo]) -> None:
        self.T = store
        self.info = globals_
        self.glob = None  # the machine's GlobalMemory (set by `attach`)
        self.gaps: list[Gap] = []
        self.opaque_why: dict[int, int] = {}  # OPAQUE term id -> index in gaps
        # what the terms read into an instruction the manual leaves open (each printed with the verdict)
        self.assumptions: list[str] = []
        self.mem: dict[Buffer, _Mem] = {}
        self.regs: dict[str, np.ndarray] = {}
        self.n = 0
        self.cta_base = self.lanes_per_cta = 0
        self.prog = None
        self._op_bytes: dict[tuple[int, int], list[tuple[np.ndarray, np.ndarray]]] = {}
        self._op_read: set[int] = set()  # copy operations that read something
        self._op_source: dict[int, int] = {}  # bulk store writes op -> its reads op
        self._layouts: dict[tuple[int, int], _Layout] = {}  # (copy op, lane) -> where its written bytes come from
        self._last_issued = None
        self._mma_refused: dict[int, int] = {}  # wgmma op ident -> gap: its descriptor or scale-d depends on data
        # tcgen05.mma op ident -> (the op being performed, its shared-memory reads so far: (buffer, flat, term, pos))
        self._tmma: dict[int, tuple[TensorMmaPerformed, list[tuple[Buffer, np.ndarray, np.ndarray, np.ndarray]]]] = {}
        self._tmma_refused: dict[int, int] = {}  # tcgen05.mma op ident -> gap: an operand register holds data
        self._tst: dict[int, _TmemStore] = {}  # tcgen05.st op ident -> its source registers' terms at issue
        # integer wgmma MMA node -> a bound on |its value| (exact sum), where it provably never leaves int32
        self._int_mma_bound: dict[int, int] = {}
        self.merges: dict[int, list[tuple[np.ndarray, dict[str, np.ndarray]]]] = {}  # pc -> pending merges
        # per register, per lane: the term of a correctly rounded rcp/div/sqrt/rsqrt of concrete operands
        # whose bits the register holds (CONCRETE where none); see _exact_terms
        self.exact: dict[str, np.ndarray] = {}
        self.exploring: Exploration | None = None  # a data-dependent branch with memory effects (termpaths.py)
        # (buffer, size) -> a page layout to share with another shadow of that buffer (CheckState.layout_of)
        self.layout_of = None
        self.self_check = None  # a semantics.termeval.Incremental: check every written term (tests)
        self.mismatches: list[tuple] = []
        self.checked = self.unchecked = 0
        self._reset(None)

    def attach(self, machine) -> None:
        self.glob = machine.glob
        self.prog = machine.prog

    # ------------------------------------------------------------------ gaps
    def gap(self, why: str, ins: A.Instruction | None, fatal: bool = False) -> int:
        for i, g in enumerate(self.gaps):
            if g.why == why and g.ins is ins:
                g.fatal |= fatal
                return i
        self.gaps.append(Gap(why, ins, fatal))
        return len(self.gaps) - 1

    def opaque(self, sort: int, count: int, gap: int) -> np.ndarray:
        ids = self.T.opaque(sort, count)
        for i in ids.tolist():
            self.opaque_why[i] = gap
        return ids

    # ------------------------------------------------------------------ per batch / instruction
    def on_batch(self, batch) -> None:
        self.n = batch.n
        self.memory = batch.memory
        self.cta_base = batch.cta_base
        self.lanes_per_cta = batch.lanes_per_cta
        self.regs = {}
        self.exact = {}
        self.merges = {}
        if self.exploring is not None:
            self.exploring.stopped("its paths did not reach the join")
        self._reset(None)

    def _reset(self, ins: A.Instruction | None) -> None:
        self.ins = ins
        self.args: list[Arg] = []
        self.arg_exact: list[np.ndarray | None] = []  # per entry of args: its register's exact terms, if any
        self.loaded: np.ndarray | None = None  # (n, nbytes) term ids of the bytes loaded, per lane
        self.loaded_pos: np.ndarray | None = None
        # None: the rows of loaded, loaded_pos and loaded_bits are the batch's lanes; else the lanes (increasing)
        # whose rows they are, all other lanes' bytes CONCRETE (a load by a few lanes: _full_loaded)
        self.loaded_rows: np.ndarray | None = None
        self.cursor = 0
        self.pending: list[np.ndarray] | None = None
        self.permute: np.ndarray | None = None
        self.address_mode = False
        self.mask = np.zeros(self.n, bool)
        self.guard: tuple[np.ndarray, np.ndarray] | None = None  # (lanes, pred terms) of a data guard
        self.loaded_bits: np.ndarray | None = None  # (n, nbytes) concrete bytes loaded (rows with terms)
        self.atomic_old: tuple | None = None  # (lanes, terms, positions) an atomic read
        self.store_map: tuple | None = None  # stmatrix: (lane, register, byte) of each stored byte
        # an asynchronous computation being performed (wgmma.mma_async: symexec/wgmma.py) read
        # bytes holding tensor data: the registers it writes have no term meaning (opaque)
        self.async_data = False
        # a wgmma.mma_async being performed (events.MmaPerformed) and its shared-memory operands as read,
        # (term, position, concrete bytes) per read in the emulator's order (A through a descriptor, then B)
        self.mma: MmaPerformed | None = None
        self.mma_reads: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        # a tcgen05.ld being completed in this context: (term, position) of the tensor-memory bytes it read per
        # lane, register j's bytes at 4j..4j+3 (tcgen05/unit.py _report_ld_reads), and the registers written so far
        self.tld: tuple[np.ndarray, np.ndarray] | None = None
        self.tld_next = 0

    _STATE = ("ins", "args", "arg_exact", "loaded", "loaded_pos", "loaded_rows", "cursor", "pending", "permute",
              "address_mode", "mask", "guard", "loaded_bits", "atomic_old", "store_map", "async_data", "mma",
              "mma_reads", "tld", "tld_next")

    def save(self) -> tuple:
        return tuple(getattr(self, k) for k in self._STATE)

    def restore(self, saved: tuple) -> None:
        for k, v in zip(self._STATE, saved):
            setattr(self, k, v)

    def begin(self, mask: np.ndarray, ins: A.Instruction, guard) -> None:
        self._reset(ins)
        self.mask = mask
        if guard is not None:
            lanes, pred = guard
            if touches_memory_or_sync(ins.opcode):
                self.gap(f"data-dependent guard of {ins.name} (a memory or synchronisation effect under a "
                         "condition on tensor data)", ins, fatal=True)
            else:
                self.guard = guard

    def guard_read(self, ins: A.Instruction, group_mask: np.ndarray) -> tuple | None:
        """The guard of `ins` was read before it runs: (lanes, predicate terms) where it depends on data."""
        ids = self.regs.get(ins.guard.pred)
        if ids is None:
            return None
        ids = np.broadcast_to(ids, (self.n,))
        lanes = group_mask & (ids != CONCRETE)
        if not lanes.any():
            return None
        p = ids.copy()
        if ins.guard.negated:
            p[lanes] = self.T.make(Op.PNOT, PRED, NO_MODS, [p[lanes]])
        return lanes, p

    def skipped(self, ins: A.Instruction, guard) -> None:
        """A guarded instruction whose guard depends on data did not run on any lane for this input:
        its destination registers are unknown where the guard depends on data."""
        lanes, _ = guard
        if touches_memory_or_sync(ins.opcode):
            self.gap(f"data-dependent guard of {ins.name}", ins, fatal=True)
            return
        g = self.gap(f"{ins.name} under a data-dependent guard did not run for the explored input", ins)
        for name in _dest_registers(ins):
            width = self.prog.reg(name).width if self.prog is not None and self.prog.reg(name) else 32
            sort = PRED if width == 1 else bits_sort(width)
            old = np.broadcast_to(self.regs.get(name, np.int64(CONCRETE)), (self.n,)).copy()
            old[lanes] = self.opaque(sort, int(lanes.sum()), g)
            self.regs[name] = old
            self._drop_exact(name, lanes)

    # ------------------------------------------------------------------ register hooks
    def on_read_reg(self, name: str, value: np.ndarray, width: int) -> None:
        if self.address_mode:
            return
        ids = self.regs.get(name)
        self.args.append(Arg(np.int64(CONCRETE) if ids is None else ids, np.asarray(value), width))
        self.arg_exact.append(self.exact.get(name))

    def on_read_const(self, value: np.ndarray, width: int) -> None:
        if not self.address_mode:
            self.args.append(Arg(np.int64(CONCRETE), np.asarray(value), width))
            self.arg_exact.append(None)

    def on_read_volatile(self, value: np.ndarray, width: int) -> None:
        if self.address_mode:
            return
        g = self.gap("a value that depends on the schedule (timer, physical id)", self.ins)
        self.args.append(Arg(self.opaque(bits_sort(max(width, 1)), self.n, g), np.asarray(value), width))
        self.arg_exact.append(None)

    def on_write_reg(self, name: str, value: np.ndarray, width: int, mask: np.ndarray,
                     old_bits: np.ndarray | None) -> None:
        self._update_exact(name, value, width, mask)
        if self.tld is not None:  # tcgen05.ld: one register at a time, from the bytes it read
            new = self._tmem_ld_result(value, mask)
        else:
            if self.pending is None:
                self.pending = self._results(width)
            if self.pending:
                new = self.pending.pop(0)
            else:  # more writes than the rule gave terms for: never guess
                g = self.gap(f"{self.ins.name if self.ins else '?'}: unexpected register write", self.ins)
                new = self._opaque_lanes(np.full(self.n, CONCRETE, np.int64), width, g) if self.async_data \
                    else self._opaque_where_symbolic(width, g)
        new = self._fit(np.broadcast_to(new, (self.n,)), width)
        old = np.broadcast_to(self.regs.get(name, np.int64(CONCRETE)), (self.n,))
        if self.guard is not None:  # lanes whose guard depends on data: if-then-else of new and old
            lanes, p = self.guard
            both = lanes & ((new != CONCRETE) | (old != CONCRETE))
            out = np.where(mask, new, old)
            if both.any():
                sort = PRED if width == 1 else bits_sort(width)
                B = Builder(self.T, self.n)
                prior = np.zeros(self.n, value.dtype) if old_bits is None else old_bits
                nv = B.value(Arg(new, np.broadcast_to(value, (self.n,)), width), sort, both)
                ov = B.value(Arg(old, np.broadcast_to(prior, (self.n,)), width), sort, both)
                out = out.copy()
                out[both] = self.T.make(Op.ITE, sort, NO_MODS, [p[both], nv[both], ov[both]])
            self.regs[name] = out
            return
        if mask.all():
            self.regs[name] = new.copy()
        else:
            self.regs[name] = np.where(mask, new, old)
        if self.self_check is not None:
            self._self_check(name, self.regs[name], value, width, mask)

    # ------------------------------------------------------------------ exact terms of concrete roundings
    def _update_exact(self, name: str, value: np.ndarray, width: int, mask: np.ndarray) -> None:
        """Keep (or forget) the exact term of register `name` on the lanes this instruction writes."""
        old = self.exact.get(name)
        new = self._exact_terms(value, width, mask)
        if new is None and old is None:
            return
        out = np.where(mask, np.int64(CONCRETE) if new is None else new,
                       np.int64(CONCRETE) if old is None else np.broadcast_to(old, (self.n,)))
        if self.guard is not None:  # a data-dependent guard: the register becomes a term or keeps its old one
            out[self.guard[0]] = CONCRETE
        if (out == CONCRETE).all():
            self.exact.pop(name, None)
        else:
            self.exact[name] = out

    def _drop_exact(self, name: str, lanes: np.ndarray) -> None:
        old = self.exact.get(name)
        if old is not None:
            old = np.where(lanes, np.int64(CONCRETE), old)
            if (old == CONCRETE).all():
                del self.exact[name]
            else:
                self.exact[name] = old

    def _exact_terms(self, value: np.ndarray, width: int, mask: np.ndarray) -> np.ndarray | None:
        """A correctly rounded (or approximate) reciprocal, quotient, square root or reciprocal square
        root of operands that are the same for every input (1/N of a row length) is concrete: the
        register holds its rounded bits, the same for every input. Read as those bits, a later
        product with data would be a different real number from the reference's exact division by
        N (1/3008 rounded to fp32 is not 1/3008), although both kernels round the same way. So
        the shadow keeps, beside the concrete register, the operation's term over constant operands
        (FRCP(3008.0)): its bits evaluate to the register's (the same rounding, PTX ISA 9.7.3
        rcp/div/sqrt/rsqrt), and the normal form reads it as the exact function it rounds, as it
        reads every rounding operation on data (proofs/normal.py, equivalence.REAL_ASSUMPTIONS).
        The term is used only as an operand of float arithmetic on data (`_with_exact`); control,
        addresses and all-concrete values keep the bits. None where the instruction is not one."""
        ins = self.ins
        if ins is None or ins.opcode not in _EXACT_PRODUCERS or self.pending is not None or width not in (32, 64) \
                or len(ins.types) != 1 or ins.types[0] not in (".f32", ".f64") or self.loaded is not None \
                or self.async_data or not self.args:
            return None
        fdt = np.float32 if width == 32 else np.float64
        udt = np.uint32 if width == 32 else np.uint64
        lanes = np.broadcast_to(mask, (self.n,)).copy()
        lanes &= np.isfinite(np.broadcast_to(np.asarray(value).astype(udt), (self.n,)).view(fdt))
        for a, e in zip(self.args, self.arg_exact):
            if a.width != width or (np.broadcast_to(a.ids, (self.n,)) != CONCRETE).any():
                return None
            lanes &= np.isfinite(np.broadcast_to(np.asarray(a.bits).astype(udt), (self.n,)).view(fdt))
        if not lanes.any():
            return None
        sort = sort_of_type(ins.types[0])
        args = []
        for a, e in zip(self.args, self.arg_exact):
            ids = np.full(self.n, CONCRETE, np.int64)
            bits = np.broadcast_to(np.asarray(a.bits).astype(udt), (self.n,))
            ids[lanes] = self.T.const(sort, bits[lanes].astype(np.uint64))
            if e is not None:  # an operand that is itself such a rounding: its term
                ids = np.where(lanes & (e != CONCRETE), e, ids)
            args.append(Arg(ids, bits, width))
        try:
            (out, *_) = build(ins, args, self.T, BuildContext(lanes, None))
        except Unsupported:
            return None
        out = np.broadcast_to(out, (self.n,)).copy()
        out[~lanes] = CONCRETE
        return out

    def _with_exact(self, args: list[Arg]) -> list[Arg]:
        """The operands with a concrete register's exact term (see _exact_terms) where it has one."""
        out = []
        for a, e in zip(args, self.arg_exact):
            if e is not None:
                ids = np.broadcast_to(a.ids, (self.n,))
                use = (ids == CONCRETE) & (e != CONCRETE)
                if use.any():
                    a = Arg(np.where(use, e, ids), a.bits, a.width)
            out.append(a)
        return out

    def _self_check(self, name: str, ids: np.ndarray, value: np.ndarray, width: int, mask: np.ndarray) -> None:
        """Debugging aid (tests): the term just written, evaluated on the run's inputs, must be the
        machine's bits."""
        ev = self.self_check
        ev.extend()
        lanes = mask & (ids != CONCRETE)
        if not lanes.any():
            return
        t = ids[lanes]
        ok = ev.known[t]
        self.checked += int(ok.sum())
        self.unchecked += int((~ok).sum())
        got = ev.val[t][ok]
        want = np.broadcast_to(value, (self.n,))[lanes][ok].astype(np.uint64) & np.uint64((1 << width) - 1 if width < 64
                                                                                           else 0xFFFFFFFFFFFFFFFF)
        if (got != want).any():
            i = int(np.nonzero(got != want)[0][0])
            tid = int(t[ok][i])
            self.mismatches.append((self.ins, name, tid, int(got[i]), int(want[i])))

    def _fit(self, new: np.ndarray, width: int) -> np.ndarray:
        """A load of a narrower element into a wider register: the write extends it (sign for
        ld.s8/.s16, zero otherwise)."""
        sym = new != CONCRETE
        if width == 1 or not sym.any():
            return new
        widths = sort_widths()[self.T.sort[new[sym]]]
        short = widths < width
        if not short.any():
            return new
        out = new.copy()
        idx = np.nonzero(sym)[0][short]
        signed = self.ins is not None and self.ins.types and self.ins.types[-1].startswith(".s")
        if signed:
            for w in np.unique(widths[short]).tolist():
                sel = idx[widths[short] == w]
                out[sel] = self.T.make(Op.CVT, bits_sort(width), mods_id(Mods(elems=(f"s{width}", f"s{w}"))), [new[sel]])
        else:
            B = Builder(self.T, idx.size)
            for w in np.unique(widths[short]).tolist():
                sel = idx[widths[short] == w]
                out[sel] = B.concat([self.T.const(bits_sort(width - w), 0), new[sel]])
        return out

    def arrive(self, pc: int, group_mask: np.ndarray) -> None:
        """Lanes reaching a reconvergence point take the merged terms of the region they left."""
        pending = self.merges.get(pc)
        if not pending:
            return
        keep = []
        for lanes, regs in pending:
            now = lanes & group_mask
            if now.any():
                for name, ids in regs.items():
                    cur = np.broadcast_to(self.regs.get(name, np.int64(CONCRETE)), (self.n,))
                    self.regs[name] = np.where(now, ids, cur)
                    self._drop_exact(name, now)
                lanes = lanes & ~now
            if lanes.any():
                keep.append((lanes, regs))
        if keep:
            self.merges[pc] = keep
        else:
            del self.merges[pc]

    def _opaque_lanes(self, out: np.ndarray, width: int, gap: int) -> np.ndarray:
        """A copy of `out` with a fresh opaque term in every lane the instruction writes."""
        out = out.copy()
        lanes = np.broadcast_to(self.mask, (self.n,))
        if lanes.any():
            out[lanes] = self.opaque(PRED if width == 1 else bits_sort(width), int(lanes.sum()), gap)
        return out

    def _opaque_where_symbolic(self, width: int, gap: int) -> np.ndarray:
        sym = np.zeros(self.n, bool)
        for a in self.args:
            sym |= np.broadcast_to(a.ids, (self.n,)) != CONCRETE
        if self.loaded is not None:
            self._full_loaded()
            sym |= rows_any(self.loaded != CONCRETE)
        out = np.full(self.n, CONCRETE, np.int64)
        if sym.any():
            out[sym] = self.opaque(PRED if width == 1 else bits_sort(width), int(sym.sum()), gap)
        return out

    def _results(self, width: int) -> list[np.ndarray]:
        """The terms of every register the current instruction writes, in write order."""
        ins = self.ins
        if ins is None:
            return []
        op = ins.opcode
        if op in ("ld", "ldu"):
            return self._load_results(ins)
        if op == "ldmatrix":
            return self._ldmatrix_results(ins)
        if op in ("atom",):
            return self._atom_result(ins, width)
        if self.mma is not None and self.mma.op.ins is ins:
            return self._mma_results()
        if self.async_data:  # its operands came from memory the registers do not show: never concrete
            g = self.gap(f"{ins.name}: asynchronous computation over tensor data (no term meaning yet)", ins)
            out = np.full(self.n, CONCRETE, np.int64)
            return [self._opaque_lanes(out, w, g) for w in _dest_widths(ins, self.prog)]
        sym = any((np.asarray(a.ids) != CONCRETE).any() for a in self.args)
        sym_mem = self.loaded is not None and bool((self.loaded != CONCRETE).any())
        if sym_mem:
            g = self.gap(f"{ins.name}: reads memory holding tensor data (no term meaning)", ins)
            return [self._opaque_where_symbolic(w, g) for w in _dest_widths(ins, self.prog)]
        if not sym:
            return [np.int64(CONCRETE)] * 64
        args = self.args
        if ins.opcode in _EXACT_CONSUMERS and len(ins.types) == 1 and ins.types[0] in (".f32", ".f64") \
                and any(e is not None for e in self.arg_exact):
            args = self._with_exact(args)
        try:
            return build(ins, args, self.T, BuildContext(self.mask, self.permute))
        except Unsupported as e:
            g = self.gap(e.what if hasattr(e, "what") else str(e), ins)
            return [self._opaque_where_symbolic(w, g) for w in _dest_widths(ins, self.prog)]

    # ------------------------------------------------------------------ memory
    def _shadow(self, buffer: Buffer, size: int) -> _Mem:
        m = self.mem.get(buffer)
        if m is None:
            info = self._global_info(buffer)
            initial = _INPUT if info is not None and info.symbolic else CONCRETE
            layout = self.layout_of(buffer, size) if self.layout_of is not None else None
            m = self.mem[buffer] = _Mem(size, initial, buffer.space is MemSpace.GLOBAL, layout)
        return m

    def _global_info(self, buffer: Buffer) -> GlobalInfo | None:
        if buffer.space is not MemSpace.GLOBAL or self.glob is None:
            return None
        return self.info.get(self.glob.allocations[buffer.index].name)

    def _read_bytes(self, buffer: Buffer, shadow: _Mem, flat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(term, position) of bytes `flat`; untouched input bytes become their elements' INPUT leaves."""
        term = shadow.term[flat]
        pos = shadow.pos[flat]
        fresh = term == _INPUT
        if fresh.any():
            info = self._global_info(buffer)
            b = flat[fresh]
            elems = b // info.elem_bytes
            if info.elem_bytes > 1 and elems.size > 1:  # one leaf per element, not per byte, to intern
                uniq, back = np.unique(elems, return_inverse=True)
                leaves = self.T.input(info.name, uniq, info.sort)[back.reshape(-1)]
            else:
                leaves = self.T.input(info.name, elems, info.sort)
            term = term.copy()
            pos = pos.copy()
            term[fresh] = leaves
            pos[fresh] = (b % info.elem_bytes).astype(np.uint8)
            # written back: the bytes' meaning is unchanged (the same leaf and position every read would
            # make), and the next read of them finds the leaf without interning it again
            shadow.term[b] = leaves
            shadow.pos[b] = pos[fresh]
        return term, pos

    def on_access(self, ev: MemoryAccess) -> None:
        shadow = self._shadow(ev.buffer, ev.size)
        lanes, flat = ev.lanes, ev.flat
        ex = self.exploring
        if ex is not None and ex.join is not None:  # on a path of a branch explored both ways: before the write
            if ev.write:
                ex.on_write(ev, shadow)
            else:
                ex.on_read(ev)
        if ev.op is not None:
            self._async(ev, shadow)
            return
        if not ev.write:
            term, pos = self._read_bytes(ev.buffer, shadow, flat)
            nb = flat.shape[1]
            every_lane = lanes.size == self.n  # (term and pos are the access's own arrays: kept as they are)
            if self.loaded is None and (every_lane or _increasing(lanes)):
                # the access's rows as they are: every lane's, or (loaded_rows) those of the lanes that load
                self.loaded, self.loaded_pos = term, pos
                self.loaded_rows = None if every_lane else lanes
                if (term != CONCRETE).any():
                    self.loaded_bits = self._concrete_bytes(ev.buffer, flat)
                if ev.atomic:
                    self.atomic_old = (lanes, term, pos)
                return
            self._full_loaded()
            if every_lane and self.loaded is None:
                self.loaded, self.loaded_pos = term, pos
            else:
                if self.loaded is None or self.loaded.shape[1] != nb:
                    self.loaded = np.full((self.n, nb), CONCRETE, np.int64)
                    self.loaded_pos = np.zeros((self.n, nb), np.uint8)
                self.loaded[lanes], self.loaded_pos[lanes] = term, pos
            if (term != CONCRETE).any():
                if every_lane and self.loaded_bits is None:
                    self.loaded_bits = self._concrete_bytes(ev.buffer, flat)
                else:
                    if self.loaded_bits is None or self.loaded_bits.shape[1] != nb:
                        self.loaded_bits = np.zeros((self.n, nb), np.uint8)
                    self.loaded_bits[lanes] = self._concrete_bytes(ev.buffer, flat)
            if ev.atomic:
                self.atomic_old = (lanes, term, pos)
            return
        if ev.atomic:
            self._atomic_write(ev, shadow)
            return
        self._store(ev, shadow)

    def _store(self, ev: MemoryAccess, shadow: _Mem) -> None:
        lanes, flat = ev.lanes, ev.flat
        k, nb = flat.shape
        ins = ev.ins
        if self.store_map is not None:  # stmatrix: byte j of lane l from another lane's register
            src_lane, src_reg, src_byte = (m[lanes] for m in self.store_map)
            regs = np.stack([np.broadcast_to(a.ids, (self.n,)) for a in self.args])
            H = regs[src_reg, src_lane]
            P = src_byte.astype(np.uint8)
        elif _is_tcgen05(ins, ".alloc"):
            # the allocated tensor-memory address (9.7.16.7.1), the same for every input; written when the
            # allocation succeeds, which may be inside another instruction's context (a blocked alloc woken)
            H, P = np.full((k, nb), CONCRETE, np.int64), np.zeros((k, nb), np.uint8)
        else:
            H, P = self._value_bytes(lanes, nb)
        shadow.term[flat] = H
        shadow.pos[flat] = P
        shadow.wrote(flat, ev.pc, self._rows(lanes))

    def _rows(self, lanes: np.ndarray) -> np.ndarray:
        return lanes.astype(np.int64) + self.cta_base * self.lanes_per_cta

    def _opaque_bytes(self, lanes: np.ndarray, nb: int, why: str) -> np.ndarray:
        sym = np.zeros(lanes.size, bool)
        for a in self.args:
            sym |= np.broadcast_to(a.ids, (self.n,))[lanes] != CONCRETE
        H = np.full((lanes.size, nb), CONCRETE, np.int64)
        if sym.any():
            g = self.gap(why, self.ins)
            H[sym] = self.opaque(bits_sort(8 * nb), int(sym.sum()), g)[:, None]
        return H

    def _value_bytes(self, lanes: np.ndarray, nb: int) -> tuple[np.ndarray, np.ndarray]:
        """Per stored byte: the term of the register it comes from (the data operands in order)."""
        vals = [a for a in self.args]
        widths = [max(8, a.width) // 8 for a in vals]
        k = lanes.size
        H = np.full((k, nb), CONCRETE, np.int64)
        P = np.zeros((k, nb), np.uint8)
        total = sum(widths)
        if total < nb or not vals:  # fewer source bytes than stored: opaque where data
            why = f"{self.ins.name if self.ins else '?'}: stored bytes without a register source"
            return self._opaque_bytes(lanes, nb, why), np.tile(np.arange(nb, dtype=np.uint8), (k, 1))
        per = nb // len(vals) if nb % len(vals) == 0 else None
        col = 0
        for a, w in zip(vals, widths):
            take = per if per is not None else w
            ids = np.broadcast_to(a.ids, (self.n,))[lanes]
            sym = ids != CONCRETE
            if take < w and sym.any():  # a narrower store of a wider register: its low bytes
                B = Builder(self.T, k)
                ids = ids.copy()
                ids[sym] = B.extract(ids[sym], 0, 8 * take)
            H[:, col:col + take] = np.where(sym, ids, CONCRETE)[:, None]
            P[:, col:col + take] = np.arange(take, dtype=np.uint8)[None, :]
            col += take
        return H, P

    # ---- loads
    def _assemble(self, terms: np.ndarray, pos: np.ndarray, concrete: np.ndarray, sort: int) -> np.ndarray:
        """One register term per row of bytes (low byte first): the stored term itself when the bytes
        are one whole term, else a concatenation of slices and constants; CONCRETE if all concrete."""
        m, nb = terms.shape
        out = np.full(m, CONCRETE, np.int64)
        sym = rows_any(terms != CONCRETE)
        if not sym.any():
            return out
        if not sym.all():  # only the rows holding terms (a load by the few active lanes of a large batch)
            rows = np.nonzero(sym)[0]  # (take: numpy's row-wise fancy indexing is ~10x slower on short rows)
            out[rows] = self._assemble(terms.take(rows, axis=0), pos.take(rows, axis=0),
                                       concrete.take(rows, axis=0), sort)
            return out
        widths = sort_widths()
        first = terms[:, 0]
        whole = sym & rows_all(terms == first[:, None]) & rows_all(pos == np.arange(nb, dtype=np.uint8))
        whole[whole] = widths[self.T.sort[first[whole]]] == 8 * nb
        out[whole] = first[whole]
        rest = sym & ~whole
        if rest.any():
            rest &= ~self._assemble_chunks(terms, pos, rest, out)
        if rest.any():
            B = Builder(self.T, 1)
            for i in np.nonzero(rest)[0].tolist():
                out[i] = self._assemble_row(B, terms[i], pos[i], concrete[i])
        want = SORTS[sort]
        if want.kind is Kind.FLOAT:
            s = out != CONCRETE
            if s.any():
                out[s] = Builder(self.T, int(s.sum())).coerce(out[s], sort)
        return out

    def _assemble_chunks(self, terms: np.ndarray, pos: np.ndarray, rows: np.ndarray, out: np.ndarray) -> np.ndarray:
        """Rows made of whole terms of one size side by side (two f16 elements in a word): their
        concatenation, in one vectorised step. Returns the rows done."""
        m, nb = terms.shape
        done = np.zeros(m, bool)
        widths = sort_widths()
        for c in (2, 4, 1, 8):
            if nb % c or c == nb:
                continue
            sel = rows & ~done
            if not sel.any():
                break
            t = terms[sel].reshape(-1, nb // c, c)
            p = pos[sel].reshape(-1, nb // c, c)
            ok = (t == t[:, :, :1]).all(axis=2).all(axis=1) & (p == np.arange(c, dtype=np.uint8)).all(axis=2).all(axis=1)
            ok &= (t[:, :, 0] != CONCRETE).all(axis=1)
            ok[ok] = (widths[self.T.sort[t[ok][:, :, 0]]] == 8 * c).all(axis=1)
            if not ok.any():
                continue
            idx = np.nonzero(sel)[0][ok]
            chunks = t[ok][:, ::-1, 0]  # high chunk first
            out[idx] = Builder(self.T, idx.size).concat([chunks[:, j] for j in range(chunks.shape[1])])
            done[idx] = True
        return done

    def _assemble_row(self, B: Builder, terms: np.ndarray, pos: np.ndarray, concrete: np.ndarray) -> int:
        parts: list[int] = []  # low to high
        j, nb = 0, terms.size
        while j < nb:
            t = int(terms[j])
            e = j + 1
            if t == CONCRETE:
                while e < nb and terms[e] == CONCRETE:
                    e += 1
                v = int.from_bytes(bytes(concrete[j:e].tolist()), "little")
                parts.append(int(self.T.const(bits_sort(8 * (e - j)), np.uint64(v))[0]))
            else:
                while e < nb and terms[e] == t and int(pos[e]) == int(pos[e - 1]) + 1:
                    e += 1
                parts.append(B._extract1(t, 8 * int(pos[j]), 8 * (e - j)))  # extract of one term
            j = e
        # concat of one row of two or more parts is _concat1 of it (the same node)
        return B._concat1(tuple(reversed(parts))) if len(parts) > 1 else parts[0]

    def _load_results(self, ins: A.Instruction) -> list[np.ndarray]:
        if self.loaded is None:
            return [np.int64(CONCRETE)] * 8
        t = tinfo(ins.types[-1])
        eb = max(1, t.width // 8)
        n_dst = self.loaded.shape[1] // eb
        data = self._loaded_bits()
        rows = self.loaded_rows
        outs = []
        for i in range(n_dst):
            sl = slice(i * eb, (i + 1) * eb)
            got = self._assemble(self.loaded[:, sl], self.loaded_pos[:, sl], data[:, sl],
                                 sort_of_type(t.name) if t.kind == "f" else bits_sort(8 * eb))
            if rows is not None:  # the loading lanes' rows: the other lanes' bytes are all CONCRETE
                out = np.full(self.n, CONCRETE, np.int64)
                out[rows] = got
                got = out
            outs.append(got)
        return outs

    def _full_loaded(self) -> None:
        """`loaded` (and its positions and bits) with a row per lane of the batch (see loaded_rows)."""
        rows = self.loaded_rows
        if rows is None:
            return
        nb = self.loaded.shape[1]
        term = np.full((self.n, nb), CONCRETE, np.int64)
        pos = np.zeros((self.n, nb), np.uint8)
        term[rows] = self.loaded
        scatter_rows(pos, rows, self.loaded_pos)
        if self.loaded_bits is not None:
            bits = np.zeros((self.n, nb), np.uint8)
            scatter_rows(bits, rows, self.loaded_bits)
            self.loaded_bits = bits
        self.loaded, self.loaded_pos, self.loaded_rows = term, pos, None

    def _loaded_bits(self) -> np.ndarray:
        """The concrete bytes loaded beside terms (for words mixing both)."""
        return self.loaded_bits if self.loaded_bits is not None else np.zeros(self.loaded.shape, np.uint8)

    def _ldmatrix_results(self, ins: A.Instruction) -> list[np.ndarray]:
        if self.loaded is None:
            return [np.int64(CONCRETE)] * 4
        self._full_loaded()
        count, src = ldmatrix_sources(ins)
        L = self.loaded.reshape(-1, 32, 16)
        Pp = self.loaded_pos.reshape(-1, 32, 16)
        W = L.shape[0]
        rows_t = L[:, :8 * count].reshape(W, -1)  # the address lanes' rows end to end
        rows_p = Pp[:, :8 * count].reshape(W, -1)
        outs = []
        for q in range(count):
            cols = []
            for j in (1, 0):  # element 1 high, element 0 low
                off = src[:, q, j]  # (32,)
                cols.append((rows_t[:, off[:, None] + np.arange(2)], rows_p[:, off[:, None] + np.arange(2)]))
            terms = np.concatenate([cols[1][0], cols[0][0]], axis=2).reshape(-1, 4)
            pos = np.concatenate([cols[1][1], cols[0][1]], axis=2).reshape(-1, 4)
            outs.append(self._assemble(terms, pos, np.zeros(terms.shape, np.uint8), bits_sort(32)))
        return outs

    # ---- atomics
    def _atom_result(self, ins: A.Instruction, width: int) -> list[np.ndarray]:
        """An atomic's returned old value depends on the order of the atomics (schedule)."""
        sym_mem = self.loaded is not None
        g = self.gap(f"{ins.name}: the value an atomic returns depends on the schedule", ins)
        out = np.full(self.n, CONCRETE, np.int64)
        if sym_mem:
            lanes = self.mask
            out[lanes] = self.opaque(bits_sort(width), int(lanes.sum()), g)
        return [out]

    def _atomic_write(self, ev: MemoryAccess, shadow: _Mem) -> None:
        ins = ev.ins
        lanes, flat = ev.lanes, ev.flat
        k, nb = flat.shape
        op = next((m[1:] for m in ins.modifiers if m in (".add", ".min", ".max", ".and", ".or", ".xor", ".exch",
                                                          ".cas", ".inc", ".dec")), "?") if ins is not None else "?"
        t = tinfo(ins.types[-1]) if ins is not None else None
        old_lanes, old_t, old_p = self.atomic_old if self.atomic_old is not None else (None, None, None)
        operand = self.args[0] if self.args else None
        if ins is not None and ins is not self.ins and ins.opcode == "mbarrier":
            # a blocked mbarrier wait completed inside another instruction's context (symexec/mbarrier.py): the
            # barrier word's update takes no operand of that instruction (flash_attention sm_100a: an fma's)
            operand = None
        sym_old = old_t is not None and (old_t != CONCRETE).any()
        sym_v = operand is not None and (np.broadcast_to(operand.ids, (self.n,))[lanes] != CONCRETE).any()
        shadow.wrote(flat, ev.pc, self._rows(lanes), atomic=True)
        if not (sym_old or sym_v):
            shadow.term[flat] = CONCRETE
            return
        table = {"add": (Op.FADD if t.kind == "f" else Op.IADD), "min": (Op.FMIN if t.kind == "f" else Op.IMIN),
                 "max": (Op.FMAX if t.kind == "f" else Op.IMAX), "and": Op.AND, "or": Op.OR, "xor": Op.XOR}
        if op not in table or t.lanes != 1:
            g = self.gap(f"{ins.name}: atomic .{op} of tensor data depends on the schedule", ins)
            shadow.term[flat] = self.opaque(bits_sort(8 * nb), k, g)[:, None]
            shadow.pos[flat] = np.arange(nb, dtype=np.uint8)[None, :]
            return
        sort = sort_of_type(t.name)
        B = Builder(self.T, k)
        old = self._assemble(old_t, old_p, np.zeros(old_t.shape, np.uint8), sort)
        old_c = old == CONCRETE
        if old_c.any():  # a concrete old value: its bits are in memory before this write
            raw = self._concrete_bytes(ev.buffer, flat[old_c])
            old[old_c] = B.T.const(sort, np.frombuffer(raw.tobytes(), dtype=np.dtype(f"<u{nb}")).astype(np.uint64))
        ones = np.ones(k, bool)
        v = B.value(Arg(np.broadcast_to(operand.ids, (self.n,))[lanes], np.broadcast_to(operand.bits, (self.n,))[lanes],
                        operand.width), sort, ones)
        aux = mods_id(Mods(rnd="rn" if t.kind == "f" else None, signed=t.kind == "s", mode="atomic"))
        new = self.T.make(table[op], sort, aux, [old, v])
        shadow.term[flat] = new[:, None]
        shadow.pos[flat] = np.arange(nb, dtype=np.uint8)[None, :]

    def on_split(self, ev) -> None:
        ex = self.exploring
        if ex is not None and ex.join is None and ev.reason is SplitReason.BOTH_PATHS:
            ex.join = ev.children[0].joins[-1]

    def on_reconverge(self, ev) -> None:
        ex = self.exploring
        if ex is not None and ev.join is ex.join:
            ex.merge()
            self.exploring = None

    def _set_concrete(self, buffer: Buffer, flat: np.ndarray, bits: np.ndarray) -> None:
        """Set the machine's bytes `flat` of `buffer` (a path explored both ways set back, termpaths.py)."""
        if buffer.space is MemSpace.GLOBAL:
            self.glob.allocations[buffer.index].store[flat] = bits
            return
        mem = self.memory
        arr = {MemSpace.SHARED: mem.shared, MemSpace.LOCAL: mem.local}[buffer.space]
        arr[flat] = bits

    def _concrete_bytes(self, buffer: Buffer, flat: np.ndarray) -> np.ndarray:
        """The machine's bytes (before the access's own write) of `buffer`."""
        if buffer.space is MemSpace.GLOBAL and self.glob is not None:
            return self.glob.allocations[buffer.index].store[flat]
        mem = self.memory
        arr = {MemSpace.SHARED: mem.shared, MemSpace.LOCAL: mem.local, MemSpace.PARAM: mem.params}.get(buffer.space)
        return arr[flat] if arr is not None else np.zeros(flat.shape, np.uint8)

    # ---- asynchronous copies
    def _async(self, ev: MemoryAccess, shadow: _Mem) -> None:
        """A copy's reads (at issue) travel per lane to its writes (at completion), byte for byte;
        anything else an asynchronous unit writes is opaque where it read data."""
        op = ev.op
        lanes, flat = ev.lanes, ev.flat
        if not op.copy or ev.atomic:
            if not ev.write and not ev.atomic:  # a computation's operand (wgmma's A/B from shared memory)
                term, pos = self._read_bytes(ev.buffer, shadow, flat)
                self.async_data |= bool((term != CONCRETE).any())
                if self.mma is not None and self.mma.op is op:
                    self.mma_reads.append((term, pos, self._concrete_bytes(ev.buffer, flat)))
                t = self._tmma.get(op.ident)
                if t is not None:
                    t[1].append((ev.buffer, flat.reshape(-1), term.reshape(-1), pos.reshape(-1)))
                return
            t = self._tmma.pop(op.ident, None) if ev.write and not ev.atomic else None
            if t is not None:  # a tcgen05.mma's D cells
                shadow.term[flat], shadow.pos[flat] = self._tensor_mma_cells(t[0], t[1], flat, shadow)
                shadow.wrote(flat, ev.pc, self._rows(lanes))
                return
            if ev.write:
                g = self.gap(f"{op.ins.name}: asynchronous {'reduction' if ev.atomic else 'computation'} "
                             "(no term meaning yet)", op.ins)
                shadow.term[flat] = self.opaque(bits_sort(8), flat.size, g).reshape(flat.shape)
                shadow.pos[flat] = 0
                shadow.wrote(flat, ev.pc, self._rows(lanes))
            return
        if not ev.write:
            if ev.proxy is Proxy.TENSORMAP:  # a tensor copy reading its tensor map: no data moved
                return
            term, pos = self._read_bytes(ev.buffer, shadow, flat)
            if ev.buffer.space is MemSpace.TMEM and op.ins is self.ins and _is_tcgen05(op.ins, ".ld"):
                # tcgen05.ld completing in its own context (tcgen05/unit.py _complete_ld): the registers it
                # writes next take these bytes, register j bytes 4j..4j+3 of each lane's row (9.7.16.8.3)
                if self.tld is None:
                    self.tld = (np.full((self.n, flat.shape[1]), CONCRETE, np.int64),
                                np.zeros((self.n, flat.shape[1]), np.uint8))
                w = self.tld[0].shape[1]
                if w == flat.shape[1]:
                    self.tld[0][lanes], self.tld[1][lanes] = term, pos
                else:  # never guess: these lanes' registers are opaque
                    g = self.gap(f"{op.ins.name}: tensor-memory reads of unequal widths", op.ins)
                    self.tld[0][lanes] = self.opaque(bits_sort(8), lanes.size * w, g).reshape(lanes.size, w)
                return
            # registers written in this context take these bytes without a term rule: opaque where the
            # bytes hold data
            self.async_data |= bool((term != CONCRETE).any())
            self._op_read.add(op.ident)
            for i, lane in enumerate(lanes.tolist()):
                self._op_bytes.setdefault((op.ident, lane), []).append((term[i], pos[i]))
            return
        if op.unit == "tcgen05" and _is_tcgen05(op.ins, ".st"):
            shadow.term[flat], shadow.pos[flat] = self._tmem_st_cells(op, lanes, flat)
            shadow.wrote(flat, ev.pc, self._rows(lanes))
            return
        if op.unit == "tcgen05" and _is_tcgen05(op.ins, ".cp"):
            # tcgen05.cp reports its source bytes sorted (tcgen05/unit.py _report_footprint), not in the order its
            # cells receive them (the descriptor's layout, 9.7.16.9.2): not followed; opaque where they hold data
            parts = [q[0] for ln in np.unique(lanes).tolist() for q in self._op_bytes.pop((op.ident, ln), [])]
            data = any((p != CONCRETE).any() for p in parts)
            shadow.term[flat] = CONCRETE
            shadow.pos[flat] = 0
            if data:
                g = self.gap(f"{op.ins.name}: tensor-memory copy from a shared-memory layout (no term rule)", op.ins)
                shadow.term[flat] = self.opaque(bits_sort(8), flat.size, g).reshape(flat.shape)
            shadow.wrote(flat, ev.pc, self._rows(lanes))
            return
        k, nb = flat.shape
        H = np.full((k, nb), CONCRETE, np.int64)
        P = np.zeros((k, nb), np.uint8)
        src = self._op_source.get(op.ident, op.ident)  # a bulk store's writes carry its reads' bytes
        for lane in np.unique(lanes).tolist():
            rows = np.nonzero(lanes == lane)[0]
            layout = self._layouts.get((op.ident, lane))
            if layout is not None:  # a tensor copy: the emulator's byte mapping (symexec.tma)
                h, p = self._laid_out(layout, op, lane, rows.size * nb)
                H[rows], P[rows] = h.reshape(rows.size, nb), p.reshape(rows.size, nb)
                continue
            parts = self._op_bytes.pop((src, lane), None)
            if parts is None:
                if src not in self._op_read:  # it read nothing at all: a zero fill (src-size 0, out of bounds)
                    continue
                if _per_lane_fill(op.ins):  # cp.async: this lane's src-size was 0, it wrote zeros
                    continue
                g = self.gap(f"{op.ins.name}: asynchronous copy bytes of unknown origin", op.ins)
                H[rows] = self.opaque(bits_sort(8), rows.size * nb, g).reshape(rows.size, nb)
                continue
            h = np.concatenate([p[0] for p in parts])
            p = np.concatenate([q[1] for q in parts])
            if h.size == rows.size * nb:  # the bytes read, in order, are the bytes written
                H[rows], P[rows] = h.reshape(rows.size, nb), p.reshape(rows.size, nb)
            elif rows.size == 1 and h.size < nb:  # cp.async src-size: the rest is zero-filled
                H[rows[0], :h.size], P[rows[0], :h.size] = h, p
            else:  # some other mapping (a tensor copy with out-of-bounds cells): not followed
                g = self.gap(f"{op.ins.name}: an asynchronous copy whose bytes land in another order", op.ins)
                H[rows] = self.opaque(bits_sort(8), rows.size * nb, g).reshape(rows.size, nb)
        shadow.term[flat] = H
        shadow.pos[flat] = P
        shadow.wrote(flat, ev.pc, self._rows(lanes))

    def _laid_out(self, layout: _Layout, op, lane: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The terms and positions of the next `n` bytes a laid-out copy writes for `lane`: each the
        byte its reads reported at the layout's index, the constant 0 where the copy zero-fills."""
        key = (layout.reads, lane)
        parts = self._op_bytes.get(key)
        if parts is not None and len(parts) > 1:  # gather once: a store writes in two accesses
            parts = self._op_bytes[key] = [(np.concatenate([q[0] for q in parts]),
                                            np.concatenate([q[1] for q in parts]))]
        src = layout.source[layout.cursor:layout.cursor + n]
        layout.cursor += n
        if layout.cursor >= layout.source.size:
            del self._layouts[(op.ident, lane)]
            self._op_bytes.pop(key, None)
        term = np.full(src.shape, CONCRETE, np.int64)
        pos = np.zeros(src.shape, np.uint8)
        moved = src >= 0
        if moved.any():
            h, p = parts[0] if parts is not None else (np.empty(0, np.int64), np.empty(0, np.uint8))
            if int(src[moved].max()) >= h.size:  # fewer bytes read than the layout names: never guess
                g = self.gap(f"{op.ins.name}: a tensor copy's bytes of unknown origin", op.ins)
                return self.opaque(bits_sort(8), src.size, g), pos
            term[moved], pos[moved] = h[src[moved]], p[src[moved]]
        return term, pos

    def on_copy_layout(self, ev) -> None:
        """A copy that does not move its bytes in order (symexec.events.CopyLayout)."""
        self._layouts[(ev.op.ident, ev.lane)] = _Layout(ev.source, (ev.reads or ev.op).ident)

    def on_async_issued(self, ev) -> None:
        """A bulk store is issued as two operations, its source reads and its destination writes
        (symexec/tma.py, async_copy.py): the writes move the reads' bytes. A wgmma.mma_async reads its
        descriptors and scale-d at issue (9.7.15.5.2): where they hold data, its results get no meaning."""
        op = ev.op
        if op.unit == "wgmma":
            self._mma_issued(op)
        elif op.unit == "tcgen05" and _is_tcgen05(op.ins, ".mma"):
            self._tensor_mma_issued(op)
        elif op.unit == "tcgen05" and _is_tcgen05(op.ins, ".st"):
            self._tmem_st_issued(op)
        prev = self._last_issued
        if op.stream is Stream.BULK_WRITES and prev is not None and prev.stream is Stream.BULK_READS \
                and prev.ins is op.ins and np.array_equal(prev.lanes, op.lanes):
            self._op_source[op.ident] = prev.ident
        self._last_issued = op

    # ---- Blackwell tensor-core MMA (tcgen05.mma, PTX 9.7.16.10.9) and tcgen05.ld (9.7.16.8.3)
    def on_tensor_mma_performed(self, ev: TensorMmaPerformed) -> None:
        """A tcgen05.mma is performed now (tcgen05/unit.py _perform): its shared-memory reads, then its D cells
        written, follow."""
        self._tmma[ev.op.ident] = (ev, [])

    def _tensor_mma_issued(self, op) -> None:
        """tcgen05.mma reads its D address, descriptors, instruction descriptor and enable-input-d at issue
        (9.7.16.10.9): where a register among them holds data, its D gets no meaning (as `_mma_issued`)."""
        r = self._data_register([o.base if isinstance(o, A.Address) else o for o in op.ins.operands], op.lanes)
        if r is not None:
            self._tmma_refused[op.ident] = self.gap(
                f"{op.ins.name}: its address, descriptor or enable-input-d ({r}) depends on tensor data", op.ins)

    def _data_register(self, operands, lanes: np.ndarray) -> str | None:
        """The first of `operands` that is a register holding tensor data in one of `lanes` (its name), or None:
        an asynchronous MMA's addresses and descriptors read at issue (`_mma_issued`, `_tensor_mma_issued`)."""
        for r in operands:
            ids = self.regs.get(r.name) if isinstance(r, A.Sym) else None
            if ids is not None and (np.broadcast_to(ids, (self.n,))[lanes] != CONCRETE).any():
                return r.name
        return None

    def _tensor_mma_refusal(self, ev: TensorMmaPerformed) -> str | None:
        """Why this tcgen05.mma has no term meaning here (None: it has one)."""
        name = ev.op.ins.name
        if ev.kind not in _TMMA_KINDS or ev.block_scaled or ev.dtype != "f32" \
                or (ev.atype, ev.btype) not in _TMMA_KINDS[ev.kind]:
            return (f"{name}: .kind::{ev.kind} {ev.atype} x {ev.btype} -> {ev.dtype} (only .kind::f16 (f16/bf16), "
                    ".kind::tf32 and .kind::f8f6f4 with e4m3/e5m2 elements, f32 accumulators, have a term meaning)")
        if ev.a_bytes is None or ev.b_bytes is None:
            return f"{name}: operand addresses not told"
        return None

    def _tensor_mma_cells(self, ev: TensorMmaPerformed, reads: list, flat: np.ndarray,
                          shadow: _Mem) -> tuple[np.ndarray, np.ndarray]:
        """(term, position) of the D cells a tcgen05.mma writes (`flat`: (M, N) cells row-major, 4 bytes each,
        tcgen05.ops.d_region): element (m, n) = one MMA node (enable-input-d ? old D[m, n] : 0) + sum_k A[m, k] *
        B[n, k], the node of wgmma's f32 accumulation (`_mma_results`, semantics.symbolic._mma), over the terms of
        the shared-memory bytes at the element addresses the emulator reads (events.TensorMmaPerformed, from
        tcgen05.ops.operand_addresses_checked: swizzle and major-ness applied there, not here). Negate-A/B
        (instruction descriptor bits 13/14, 9.7.16.4.2) negate that operand's elements. Anything else: opaque
        cells with a gap naming the instruction."""
        ins = ev.op.ins
        m, n, k = ev.m, ev.n, ev.k
        old_t = shadow.term[flat].reshape(-1)
        old_p = shadow.pos[flat].reshape(-1)
        why = self._tensor_mma_refusal(ev)
        g = self._tmma_refused.get(ev.op.ident)
        if why is None and g is None and flat.size != m * n * 4:
            why = f"{ins.name}: D cells not written in the order the term rule expects"
        found = None
        if why is None and g is None:
            found = self._tensor_mma_operands(ev, reads)
            if found is None:
                why = f"{ins.name}: operand bytes not read where the term rule expects them"
        sym_in = any(r[2].size and (r[2] != CONCRETE).any() for r in reads) \
            or (ev.enable_input_d and bool((old_t != CONCRETE).any()))
        if not sym_in:  # nothing it read depends on the input: the emulator's bits are the value
            return np.full(flat.shape, CONCRETE, np.int64), np.zeros(flat.shape, np.uint8)
        if why is not None or g is not None:
            g = self.gap(why, ins) if why is not None else g
            return self.opaque(bits_sort(8), flat.size, g).reshape(flat.shape), np.zeros(flat.shape, np.uint8)
        (at, ap, ac), (bt, bp, bc) = found
        a_ty, b_ty = ev.atype, ev.btype
        Am = self._mma_elements((at, ap, ac), _mma_elem_sort(a_ty)).reshape(m, k)
        Bm = self._mma_elements((bt, bp, bc), _mma_elem_sort(b_ty)).reshape(n, k)
        B = Builder(self.T, self.n)
        if ev.negate_a:
            Am = B.make(Op.FNEG, _mma_elem_sort(a_ty), NO_MODS, Am.reshape(-1)).reshape(Am.shape)
        if ev.negate_b:
            Bm = B.make(Op.FNEG, _mma_elem_sort(b_ty), NO_MODS, Bm.reshape(-1)).reshape(Bm.shape)
        acc = _mma_elem_sort("f32")
        if ev.enable_input_d:  # the old D cells' terms, their bits from the unit (tensor memory is not ours)
            bits = np.ascontiguousarray(ev.d_old.astype("<u4")).view(np.uint8).reshape(m * n, 4)
            C = self._mma_elements((old_t.reshape(m * n, 4), old_p.reshape(m * n, 4), bits), acc)
        else:  # D = A*B: the old D is not an operand
            C = np.full(m * n, self.T.const(acc, np.zeros(1, np.uint64))[0], np.int64)
        self._assume(tcgen05_mma_assumption(ins))
        if ev.kind == "f8f6f4":
            self._assume(fp8_tcgen05_assumption(ins))
        aux = mods_id(Mods(elems=(a_ty, b_ty, "f32"), sat=False))
        kids = np.concatenate([C.reshape(m, n, 1), np.broadcast_to(Am[:, None, :], (m, n, k)),
                               np.broadcast_to(Bm[None, :, :], (m, n, k))], axis=2)
        D = self.T.make(Op.MMA, acc, aux, kids.reshape(m * n, 1 + 2 * k))
        term = np.repeat(D, 4).reshape(flat.shape)
        pos = np.tile(np.arange(4, dtype=np.uint8), m * n).reshape(flat.shape)
        return term, pos

    def _tensor_mma_operands(self, ev: TensorMmaPerformed, reads: list) -> tuple | None:
        """((term, pos, concrete bytes) of A's elements (m*k, eb), the same of B's (n*k, eb)) from the op's reads
        (A's of shared memory, or of tensor memory with the bits the unit told; B's of shared memory), looked up at
        the element addresses of the event; None where a byte was not read."""
        out = []
        for addr, space in ((ev.a_bytes, MemSpace.TMEM if ev.a_in_tmem else MemSpace.SHARED),
                            (ev.b_bytes, MemSpace.SHARED)):
            mine = [r for r in reads if r[0].space is space]
            if not mine:
                return None
            fl = np.concatenate([r[1] for r in mine])
            order = np.argsort(fl, kind="stable")
            fl = fl[order]
            tm = np.concatenate([r[2] for r in mine])[order]
            ps = np.concatenate([r[3] for r in mine])[order]
            eb = addr.shape[-1]
            a = addr.reshape(-1)
            i = np.searchsorted(fl, a)
            if (i >= fl.size).any() or (fl[np.minimum(i, fl.size - 1)] != a).any():
                return None
            bits = ev.a_tmem_bits.reshape(-1) if space is MemSpace.TMEM else self._concrete_bytes(mine[0][0], a)
            out.append((tm[i].reshape(-1, eb), ps[i].reshape(-1, eb), bits.reshape(-1, eb)))
        return tuple(out)

    def _tmem_st_issued(self, op) -> None:
        """tcgen05.st reads its source registers at issue (9.7.16.8.4; tcgen05/unit.py _ld_st): keep their
        terms for the cells written at tcgen05.wait::st."""
        vec = op.ins.operands[-1]
        regs = vec.elements if isinstance(vec, A.Vector) else (vec,)
        cols = []
        for r in regs:
            ids = self.regs.get(r.name) if isinstance(r, A.Sym) else None
            cols.append(np.full(op.lanes.size, CONCRETE, np.int64) if ids is None
                        else np.broadcast_to(ids, (self.n,))[op.lanes].astype(np.int64))
        unpack = ".unpack::16b" in op.ins.modifiers
        self._tst[op.ident] = _TmemStore(np.asarray(op.lanes, np.int64), np.stack(cols, axis=1), unpack,
                                         2 if unpack else 1)

    def _tmem_st_cells(self, op, lanes: np.ndarray, flat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(term, position) of the cells a tcgen05.st writes: register j's term in bytes 4j..4j+3 of each lane's
        row (tcgen05/unit.py _complete_st, register order). With .unpack::16b (each register split over two
        cells) the cells are opaque where a register holds data: not followed."""
        term = np.full(flat.shape, CONCRETE, np.int64)
        pos = np.zeros(flat.shape, np.uint8)
        st = self._tst.get(op.ident)
        if st is not None:
            st.writes_left -= 1
            if st.writes_left <= 0:
                del self._tst[op.ident]
        why = None
        if st is None:
            why = f"{op.ins.name}: source registers not seen at issue"
        else:
            i = np.searchsorted(st.lanes, lanes)
            if (i >= st.lanes.size).any() or (st.lanes[np.minimum(i, st.lanes.size - 1)] != lanes).any():
                why = f"{op.ins.name}: source registers not seen at issue"
            else:
                src = st.ids[i]  # (k, R)
                if not (src != CONCRETE).any():
                    return term, pos
                widths = sort_widths()
                if st.unpack:
                    why = f"{op.ins.name}: .unpack::16b (register halves in two cells) has no term rule"
                elif flat.shape[1] != 4 * src.shape[1] or (widths[self.T.sort[src[src != CONCRETE]]] != 32).any():
                    why = f"{op.ins.name}: cells not written in the order the term rule expects"
                else:
                    return np.repeat(src, 4, axis=1), np.tile(np.arange(4, dtype=np.uint8), src.shape).reshape(
                        flat.shape)
        g = self.gap(why, op.ins)
        return self.opaque(bits_sort(8), flat.size, g).reshape(flat.shape), pos

    def _tmem_ld_result(self, value: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The term of the next register a tcgen05.ld writes: its 4 bytes of tensor memory per lane (with
        .pack::16b the low halves of two cells, already in register order), the register's bits for the
        bytes without a term."""
        term, pos = self.tld
        j = self.tld_next
        self.tld_next += 1
        out = np.full(self.n, CONCRETE, np.int64)
        if 4 * j + 4 > term.shape[1]:  # more writes than bytes read: never guess
            g = self.gap(f"{self.ins.name}: unexpected register write", self.ins)
            return self._opaque_lanes(out, 32, g)
        t = term[:, 4 * j:4 * j + 4]
        rows = np.nonzero(np.broadcast_to(mask, (self.n,)) & rows_any(t != CONCRETE))[0]
        if rows.size:
            bits = np.ascontiguousarray(np.broadcast_to(value, (self.n,)).astype("<u4")).view(np.uint8).reshape(-1, 4)
            out[rows] = self._assemble(t[rows], pos[rows, 4 * j:4 * j + 4], bits[rows], bits_sort(32))
        return out

    # ---- warpgroup MMA (wgmma.mma_async, PTX 9.7.15.5.2)
    def on_mma_performed(self, ev: MmaPerformed) -> None:
        """A wgmma.mma_async is performed now (at the wgmma.wait_group covering it): its operand reads
        and D register writes follow in this context (symexec/wgmma.py _compute)."""
        self.mma = ev
        self.mma_reads = []

    def _mma_issued(self, op) -> None:
        from ..wgmma import parse_spec

        spec = parse_spec(op.ins)
        r = self._data_register((spec.b_desc, spec.a_desc, spec.scale_d), op.lanes)
        if r is not None:
            self._mma_refused[op.ident] = self.gap(
                f"{op.ins.name}: its matrix descriptor or scale-d ({r}) depends on tensor data", op.ins)

    def _mma_refusal(self, ev: MmaPerformed, n_args: int) -> str | None:
        """Why this wgmma has no term meaning here (None: it has one)."""
        floats = ev.atype in _MMA_FLOAT16 and ev.btype == ev.atype and ev.dtype in (".f32", ".f16")
        # fp8: A and B may differ (.e4m3 x .e5m2), .f16 or .f32 accumulators (9.7.15.5.2)
        fp8 = ev.atype in _MMA_FP8 and ev.btype in _MMA_FP8 and ev.dtype in (".f32", ".f16")
        # tf32: A and B alike, .f32 accumulators; each element the top 19 bits of its word (9.7.15.5.2)
        tf32 = ev.atype == ev.btype == ".tf32" and ev.dtype == ".f32"
        ints = ev.atype in _MMA_INT8 and ev.btype in _MMA_INT8 and ev.dtype == ".s32"
        if not (floats or fp8 or tf32 or ints):
            return (f"{ev.op.ins.name}: .{ev.atype[1:]} multiplicands "
                    "(only .f16/.bf16, .tf32, .e4m3/.e5m2 and .s8/.u8 have a term meaning)")
        if ev.scale_a not in (1, -1) or ev.scale_b not in (1, -1) or (ints and (ev.scale_a, ev.scale_b) != (1, 1)):
            return f"{ev.op.ins.name}: imm-scale-a/b {ev.scale_a}/{ev.scale_b} has no term meaning"
        want_reads = 1 if ev.a_in_registers else 2
        d_regs = ev.n // 4 if ev.dtype == ".f16" else ev.n // 2  # .f32 / .s32: one element a register
        if len(self.mma_reads) != want_reads or n_args != (4 if ev.a_in_registers else 0) + d_regs:
            return f"{ev.op.ins.name}: operand reads not in the order the term rule expects"
        return None

    def _mma_results(self) -> list[np.ndarray]:
        """D of the wgmma being performed, per D register of the warpgroup's lanes: each element
        (m, n) = one MMA node (scale-d ? D[m, n] : 0) + sum_k A[m, k] * B[n, k] in the accumulator
        type, as mma.sync's (semantics.symbolic._mma; the order and rounding of the sum are
        unspecified, 9.7.15.5.2). fp8 elements (.e4m3/.e5m2, A and B may differ) are floats of their
        format; with .f32 accumulators the verdict carries fp8_wgmma_assumption. A and B are the terms of the bytes the emulator read, in its
        order (symexec.wgmma_layout.matrix_addresses: swizzles and transposes are already applied),
        or A's registers in the A fragment layout (9.7.15.5.1.1); D's registers in the D fragment."""
        from ..wgmma_layout import d_fragment

        ev, ins = self.mma, self.ins
        widths = _dest_widths(ins, self.prog)
        sym = self.async_data or any((np.asarray(a.ids) != CONCRETE).any() for a in self.args)
        if not sym:  # nothing it read depends on the input: its bits are the value
            return [np.int64(CONCRETE)] * len(widths)
        why = self._mma_refusal(ev, len(self.args))
        g = self._mma_refused.get(ev.op.ident)
        if why is not None or g is not None:
            g = self.gap(why, ins) if why is not None else g
            out = np.full(self.n, CONCRETE, np.int64)
            return [self._opaque_lanes(out, w, g) for w in widths]
        lanes, n, k = ev.op.lanes, ev.n, ev.k
        a_ty, b_ty, acc_ty = ev.atype[1:], ev.btype[1:], ev.dtype[1:]
        B = Builder(self.T, self.n)
        everyone = np.ones(self.n, bool)
        args = self.args
        if ev.a_in_registers:
            Am = self._mma_a_registers(B, args[:4], lanes, a_ty, k)
            args = args[4:]
        else:
            Am = self._mma_elements(self.mma_reads[0], _mma_elem_sort(a_ty)).reshape(64, k)
        Bm = self._mma_elements(self.mma_reads[-1], _mma_elem_sort(b_ty)).reshape(n, k)
        # imm-scale-a/b -1: that multiplicand's elements negated before the products (9.7.15.5.2)
        if ev.scale_a == -1:
            Am = B.make(Op.FNEG, _mma_elem_sort(a_ty), NO_MODS, Am.reshape(-1)).reshape(Am.shape)
        if ev.scale_b == -1:
            Bm = B.make(Op.FNEG, _mma_elem_sort(b_ty), NO_MODS, Bm.reshape(-1)).reshape(Bm.shape)
        if ev.atype in _MMA_FP8 and acc_ty == "f32":
            self._assume(fp8_wgmma_assumption(ins))
        rows, cols = d_fragment(n)  # (128, n/2)
        acc = _mma_elem_sort(acc_ty)
        Dregs = np.stack([B.value(a, bits_sort(32), everyone)[lanes] for a in args], axis=1)  # (128, regs)
        C = np.zeros((64, n), np.int64)
        if not ev.scale_d:  # D = A*B: the old D is not an operand (9.7.15.5.2)
            C[:] = self.T.const(acc, np.zeros(1, np.uint64))[0]
        elif acc_ty == "s32":  # one s32 element per register, its bits as they are
            C[rows, cols] = Dregs
        elif acc_ty == "f32":
            C[rows, cols] = B.as_float(Dregs.reshape(-1), "f32").reshape(128, -1)
        else:  # two f16 elements per register, element 2r in the low half
            fl = Dregs.reshape(-1)
            C[rows, cols] = np.stack([B.as_float(B.extract(fl, 16 * j, 16), "f16") for j in (0, 1)],
                                     axis=1).reshape(128, -1)
        bound = None
        if acc_ty == "s32":
            bound = self._int_mma_bound_of(C, a_ty, b_ty, k)
            if bound is None:
                g = self.gap(f"{ins.name}: integer accumulators of unbounded range (the proofs read an s32 MMA as "
                             "its exact sum: only where it provably stays inside int32, 9.7.15.5.2)", ins)
                out = np.full(self.n, CONCRETE, np.int64)
                return [self._opaque_lanes(out, w, g) for w in widths]
        # integers: exact, then wrapped to s32 or (.satfinite) clamped, as termeval._mma and the emulator
        aux = mods_id(Mods(elems=(a_ty, b_ty, acc_ty), sat=ev.satfinite))
        kids = np.concatenate([C.reshape(64, n, 1), np.broadcast_to(Am[:, None, :], (64, n, k)),
                               np.broadcast_to(Bm[None, :, :], (64, n, k))], axis=2)
        D = self.T.make(Op.MMA, acc, aux, kids.reshape(64 * n, 1 + 2 * k)).reshape(64, n)
        if bound is not None:
            for d in np.unique(D).tolist():
                self._int_mma_bound[int(d)] = max(bound, self._int_mma_bound.get(int(d), 0))
        Dl = D[rows, cols]  # (128, n/2): the thread's elements in register order
        if acc_ty == "f16":
            Dl = Dl.reshape(128, -1, 2)
            Dl = B.concat([Dl[..., 1].reshape(-1), Dl[..., 0].reshape(-1)]).reshape(128, -1)
        outs = []
        for j in range(Dl.shape[1]):
            o = np.full(self.n, CONCRETE, np.int64)
            o[lanes] = Dl[:, j]
            outs.append(o)
        return outs

    def _assume(self, text: str) -> None:
        if text not in self.assumptions:
            self.assumptions.append(text)

    def _int_mma_bound_of(self, C: np.ndarray, a_ty: str, b_ty: str, k: int) -> int | None:
        """A bound on |C + sum_k A*B| for an integer wgmma, or None where it may leave int32. proofs/normal.py
        reads an s32 MMA node as its exact integer sum (wrap and .satfinite are not in its normal form), which
        is its value only without overflow: so an integer wgmma gets a term only when its old D is a constant
        or an earlier integer wgmma's node of known bound, and the new bound stays inside int32."""
        T = self.T
        worst = 0
        for c in np.unique(C).tolist():
            if int(T.op[c]) == Op.CONST:
                v = int(T.aux[c]) & 0xFFFFFFFF
                worst = max(worst, abs(v - (1 << 32) if v >> 31 else v))
            elif c in self._int_mma_bound:
                worst = max(worst, self._int_mma_bound[c])
            else:
                return None
        return int_mma_bound(worst, k, a_ty, b_ty)

    def _mma_a_registers(self, B: Builder, regs_args: list[Arg], lanes: np.ndarray, ty: str, k: int) -> np.ndarray:
        """A (64 x k) from the warpgroup's four A registers in the A fragment layout (9.7.15.5.1.1):
        element j of a thread is register j // per, bits (j % per) * width up (low first). 8-bit
        elements (.e4m3/.e5m2, .s8/.u8) are four to a register, 16-bit ones two, .tf32 one (9.7.15.5.1.1 table);
        a .tf32 element is its register's bits read as tf32 (the top 19: semantics.formats.TF32)."""
        from ..wgmma_layout import a_fragment

        width = _MMA_A_BITS[ty]
        per = 32 // width
        everyone = np.ones(self.n, bool)
        regs = np.stack([B.value(a, bits_sort(32), everyone)[lanes] for a in regs_args], axis=1)  # (128, 4)
        flat = regs.reshape(-1)
        parts = [B.extract(flat, width * j, width) for j in range(per)]
        if ty[0] not in "su":  # float elements: their bits read in their format
            parts = [B.as_float(x, ty) for x in parts]
        rows, cols = a_fragment(width)
        Am = np.zeros((64, k), np.int64)
        Am[rows, cols] = np.stack(parts, axis=1).reshape(128, 4 * per)
        return Am

    def _mma_elements(self, read: tuple[np.ndarray, np.ndarray, np.ndarray], sort: int) -> np.ndarray:
        """Float terms of the elements of one shared-memory operand read (a row of bytes per element),
        constants where the bytes are the same for every input."""
        term, pos, concrete = read
        ids = self._assemble(term, pos, concrete, sort)
        nb = concrete.shape[1]
        bits = np.ascontiguousarray(concrete).view(np.dtype(f"<u{nb}")).reshape(-1).astype(np.uint64)
        B = Builder(self.T, ids.size)
        return B.value(Arg(ids, bits, 8 * nb), sort, np.ones(ids.size, bool))

    # ------------------------------------------------------------------ results
    def outputs(self) -> dict[str, BufferOutput]:
        """Final terms of the elements of every global buffer written (by name)."""
        out: dict[str, BufferOutput] = {}
        for buf, sh in self.mem.items():
            if buf.space is not MemSpace.GLOBAL or not sh.written:
                continue
            alloc = self.glob.allocations[buf.index]
            info = self.info.get(alloc.name)
            if info is None:
                continue
            eb = info.elem_bytes
            elems = np.unique(np.concatenate(sh.written) // eb)
            flat = elems[:, None] * eb + np.arange(eb)
            term, pos = self._read_bytes(buf, sh, flat)
            bits = alloc.store[flat]
            terms = self._assemble(term, pos, bits, info.sort)
            raw = np.ascontiguousarray(bits).view(np.dtype(f"<u{eb}")).reshape(-1) if eb in (1, 2, 4, 8) else bits
            out[alloc.name] = BufferOutput(alloc.name, info.sort, elems, terms, raw,
                                           sh.stores[flat].max(axis=1), sh.atomics[flat].max(axis=1),
                                           sh.writer[flat].max(axis=1))
        return out


#: wgmma.mma_async multiplicand types whose results have a term meaning (_mma_results)
_MMA_FLOAT16 = (".f16", ".bf16")
_MMA_FP8 = (".e4m3", ".e5m2")
_MMA_INT8 = (".s8", ".u8")
#: bits of one A element in its register (9.7.15.5.1.1: four 8-bit, two 16-bit elements per .b32 register)
_MMA_A_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8}


def fp8_wgmma_assumption(ins: A.Instruction) -> str:
    """What the proof assumes of an fp8 wgmma with .f32 accumulators: PTX 9.7.15.5.2's note says the current
    implementation accumulates them "at higher than half precision but lower than single precision" (an H200
    kept 14 significant bits: symexec/wgmma_numerics.py, VOLTA_WGMMA_ARITHMETIC=sm90). The MMA node is the
    real sum (as every float MMA), rounded to .f32 for the precision check (proofs/precision.py), which so
    compares it as an f32 accumulation: it would not report a reference that accumulates fp8 products in
    true f32 against this narrower one."""
    where = f" at {ins.span}" if ins.span is not None else ""
    return (f"{ins.name}{where}: an fp8 (.e4m3/.e5m2) wgmma.mma_async with .f32 accumulators is read as the exact "
            "sum of its products; its accumulation precision is not modelled (PTX 9.7.15.5.2 note: higher than "
            "half but lower than single precision; an H200 kept 14 significant bits) and the precision check "
            "counts it as an f32 rounding")


@dataclass
class _TmemStore:
    """The source register terms of one tcgen05.st (one warp), read at issue."""

    lanes: np.ndarray  # (k,) increasing thread slots
    ids: np.ndarray  # (k, registers) term ids
    unpack: bool
    writes_left: int  # write events still to come (the warp's cells at wait::st; .unpack::16b: two)


#: tcgen05.mma kinds whose D has a term meaning, with their (A, B) element types (9.7.16.10.9; Table 42: the
#: instruction descriptor's atype/btype for .kind::f16 are f16 or bf16, both alike; .kind::tf32 tf32)
_TMMA_KINDS = {"f16": (("f16", "f16"), ("bf16", "bf16")), "tf32": (("tf32", "tf32"),),
               # 8-bit elements of .kind::f8f6f4 (A and B may differ, 9.7.16.4.2); f6/f4 elements are not told (a gap)
               "f8f6f4": tuple((a, b) for a in ("e4m3", "e5m2") for b in ("e4m3", "e5m2"))}


def _is_tcgen05(ins: A.Instruction | None, sub: str) -> bool:
    return ins is not None and ins.opcode == "tcgen05" and sub in ins.modifiers


def tcgen05_mma_assumption(ins: A.Instruction) -> str:
    """What the proof assumes of a tcgen05.mma with f32 accumulators: the manual (9.7.16.10.9) gives D = A x B + D
    and neither the order nor the internal precision of the K-sum; the MMA node is the exact real sum (as wgmma's and
    mma.sync's nodes), rounded once to f32 for the precision check, as the emulator's model (tcgen05/ops.py)."""
    where = f" at {ins.span}" if ins.span is not None else ""
    return (f"{ins.name}{where}: a tcgen05.mma with .f32 accumulators is read as the exact sum of its products and "
            "old D; the order and internal precision of its accumulation are not specified (PTX 9.7.16.10.9) and not "
            "modelled; the precision check counts it as one f32 rounding")


def fp8_tcgen05_assumption(ins: A.Instruction) -> str:
    """What the proof assumes of an fp8 tcgen05.mma (.kind::f8f6f4, e4m3/e5m2 elements, f32 accumulators), beside
    `tcgen05_mma_assumption`: as `fp8_wgmma_assumption` for Hopper, whose note (PTX 9.7.15.5.2) says fp8 products
    are accumulated at lower than single precision there; the tcgen05 text gives no precision at all."""
    where = f" at {ins.span}" if ins.span is not None else ""
    return (f"{ins.name}{where}: an fp8 (.e4m3/.e5m2) tcgen05.mma is read as the exact sum of its products and counted "
            "as an f32 accumulation by the precision check; PTX gives its accumulation precision nowhere (wgmma's fp8 "
            "note, 9.7.15.5.2: lower than single precision on sm_90), so a reference accumulating fp8 products in true "
            "f32 is not told apart from a narrower accumulation")


def _mma_elem_sort(ty: str) -> int:
    """The term sort of a wgmma element: integers (.s8/.u8 multiplicands, .s32 accumulators) are their
    bits, as mma.sync's integer form (semantics.symbolic._mma); f16/bf16/f32 are floats."""
    return bits_sort(int(ty[1:])) if ty[0] in "su" else float_sort(ty)


def _per_lane_fill(ins: A.Instruction | None) -> bool:
    """A non-bulk cp.async: a lane whose src-size (or ignore-src) is 0 reads nothing and writes
    cp-size zero bytes (PTX ISA 9.7.9.25.3.1, cp.async; symexec/async_copy.py)."""
    return ins is not None and ins.name.startswith("cp.async.c")


def _dest_registers(ins: A.Instruction) -> list[str]:
    if not ins.operands:
        return []
    d = ins.operands[0]
    items = d.elements if isinstance(d, A.Vector) else (d.first, d.second) if isinstance(d, A.Pair) else (d,)
    return [x.name for x in items if isinstance(x, A.Sym) and x.name.startswith("%")]


def _dest_widths(ins: A.Instruction, prog) -> list[int]:
    ws = []
    for name in _dest_registers(ins):
        d = prog.reg(name) if prog is not None else None
        ws.append(d.width if d is not None else 32)
    return ws or [32]


class EquivExec(CheckedExec):
    """Check mode's instruction context with the term shadow beside the value shadows."""

    def __init__(self, batch, state, shadow: TermShadow) -> None:
        self._fresh = False
        self._guard: tuple | None = None  # (pc, ins, guard lanes/terms) read before the instruction ran
        super().__init__(batch, state)
        self.shadow = shadow

    @property
    def group(self):
        return self._group

    @group.setter
    def group(self, g) -> None:
        self._group = g
        sh = getattr(self, "shadow", None)
        if sh is not None and sh.exploring is not None and g is not None:
            sh.exploring.running(g)

    @property
    def pc(self) -> int:
        return self._pc

    @pc.setter
    def pc(self, value: int) -> None:
        self._pc = value
        self._fresh = True  # the machine moved to an instruction; its guard is read before it runs
        sh = getattr(self, "shadow", None)
        if sh is not None and sh.merges and value in sh.merges and self.group is not None:
            sh.arrive(value, self.group.mask)

    def begin(self, mask: np.ndarray, ins: A.Instruction) -> None:
        super().begin(mask, ins)
        self._fresh = False
        guard = None
        if self._guard is not None:
            gpc, gins, g = self._guard
            self._guard = None
            if gins is ins:
                guard = g
            else:
                self.shadow.skipped(gins, g)
        self.shadow.begin(mask, ins, guard)

    def read_reg(self, name: str, ty: str) -> np.ndarray:
        if self._fresh and ty == ".pred":
            code = self.b.prog.code
            ins = code[self._pc] if 0 <= self._pc < len(code) else None
            if ins is not None and ins.guard is not None and ins.guard.pred == name and ins.opcode != "bra":
                if self._guard is not None:  # the previous guarded instruction never ran
                    self.shadow.skipped(self._guard[1], self._guard[2])
                    self._guard = None
                g = self.shadow.guard_read(ins, self.group.mask if self.group is not None else self.mask)
                if g is not None:
                    self._guard = (self._pc, ins, g)
        return super().read_reg(name, ty)

    def _save(self) -> tuple:
        return super()._save(), self.shadow.save()

    def _restore(self, saved: tuple) -> None:
        mine, sh = saved
        super()._restore(mine)
        self.shadow.restore(sh)
        self._fresh = False

    def _on_read_reg(self, name: str, value: np.ndarray, width: int) -> None:
        super()._on_read_reg(name, value, width)
        self.shadow.on_read_reg(name, value, width)

    def _on_write_reg(self, name: str, value: np.ndarray, width: int) -> None:
        super()._on_write_reg(name, value, width)
        self.shadow.on_write_reg(name, value, width, self.mask, self.b.regs.get(name))

    def _on_read_const(self, value: np.ndarray, width: int) -> None:
        super()._on_read_const(value, width)
        self.shadow.on_read_const(value, width)

    def _on_read_volatile(self, value: np.ndarray, width: int) -> None:
        super()._on_read_volatile(value, width)
        self.shadow.on_read_volatile(value, width)

    def _read_base(self, op: A.Sym) -> np.ndarray:
        sh = self.shadow
        sh.address_mode = True
        try:
            base = super()._read_base(op)
        finally:
            sh.address_mode = False
        ids = sh.regs.get(op.name)
        if ids is not None and (np.broadcast_to(ids, (self.n,))[self.mask] != CONCRETE).any():
            sh.gap(f"address of {self.ins.name if self.ins else '?'} depends on tensor data", self.ins, fatal=True)
        return base

    def lane_source(self, src: np.ndarray) -> None:
        super().lane_source(src)
        self.shadow.permute = src

    def store_sources(self, lane: np.ndarray, reg: np.ndarray, byte: np.ndarray) -> None:
        super().store_sources(lane, reg, byte)
        self.shadow.store_map = (lane, reg, byte)


class EquivPolicy(DataDependencePolicy):
    """Check mode's branch policy, with the terms of data-dependent branches: a forward branch
    over register-only code (both paths reconverge, nothing but register writes) is executed on
    terms along both paths, and at the reconvergence point every register either path writes
    becomes if-then-else(condition, taken path's term, fall-through path's term) on the lanes
    whose condition depends on data. Any other data-dependent branch (a loop exit, a path with
    memory effects or an exit) is a gap: the terms would be those of the explored path only."""

    def __init__(self, state, shadow: TermShadow) -> None:
        super().__init__(state)
        self.shadow = shadow

    def on_branch(self, b, g, ins: A.Instruction, dest: int) -> BranchDecision:
        sh = self.shadow
        ids = sh.regs.get(ins.guard.pred)
        lanes = g.mask & (np.broadcast_to(ids, (b.n,)) != CONCRETE) if ids is not None else None
        decision = super().on_branch(b, g, ins, dest)
        if decision is BranchDecision.BOTH_PATHS:
            self._explore(b, g, ins, ids)
            return decision
        if lanes is None or not lanes.any():
            return decision
        stop = b.prog.reconverge.get(g.pc)
        if decision is BranchDecision.REGISTER_REGION and stop is not None:
            try:
                cond = np.broadcast_to(ids, (b.n,)).copy()
                if ins.guard.negated:
                    cond[lanes] = sh.T.make(Op.PNOT, PRED, NO_MODS, [cond[lanes]])
                sh.merges.setdefault(stop, []).append(
                    (lanes.copy(), _merge_paths(sh, b, g.pc + 1, dest, stop, lanes, cond)))
                return decision
            except Unsupported as e:
                why = e.what if hasattr(e, "what") else str(e)
                sh.gap(f"data-dependent branch {ins.name}: its paths could not be merged ({why})", ins, fatal=True)
                return decision
        sh.gap(f"data-dependent branch {ins.name} ({'a loop exit' if dest <= g.pc else 'memory effects or an exit on a path'}:"
               " paths are not merged into if-then-else terms)", ins, fatal=True)
        return decision

    def _explore(self, b, g, ins: A.Instruction, ids) -> None:
        """Both paths of `ins` will run, the fall-through path first: follow them (termpaths.py). The
        condition of each lane is its predicate's term, a constant where that depends on no data."""
        sh = self.shadow
        if sh.exploring is not None or g.explore > 0:
            sh.gap(f"data-dependent branch {ins.name} on a path explored for another one (nested paths are not "
                   "merged)", ins, fatal=True)
            if sh.exploring is not None:
                sh.exploring.stopped("another data-dependent branch with memory effects on a path")
            return
        pred = np.broadcast_to(b.regs.get(ins.guard.pred, np.zeros((), bool)), (b.n,)).astype(bool)
        taken = (~pred if ins.guard.negated else pred) & g.mask
        terms = np.broadcast_to(np.int64(CONCRETE) if ids is None else ids, (b.n,))
        cond = np.full(b.n, CONCRETE, np.int64)
        sym = g.mask & (terms != CONCRETE)
        if sym.any():
            cond[sym] = terms[sym]
            if ins.guard.negated:
                cond[sym] = sh.T.make(Op.PNOT, PRED, NO_MODS, [cond[sym]])
        con = g.mask & ~sym
        if con.any():
            cond[con] = sh.T.const(PRED, taken[con])
        sh.exploring = Exploration(sh, b, g, ins, g.mask.copy(), cond, taken)

    def explored(self, b, g, ins: A.Instruction):
        ident, both = super().explored(b, g, ins)
        ex = self.shadow.exploring
        if ex is not None and ex.join is None:
            ops = self.shadow.T.op[ex.cond[ex.lanes & ~both]]
            if (ops != Op.CONST).any():  # lanes that go one way although their condition depends on data
                ex.stopped("lanes whose condition depends on data are not explored both ways")
        return ident, both

    def next_group(self, ready: list):
        ex = self.shadow.exploring
        if ex is not None and ex.join is not None:  # the fall-through path first, to its end
            for g in ready:
                if ex.side_of(g) != TAKEN:
                    return g
        return ready[0]

    def on_error(self, b, g, err: Exception) -> bool:
        taken = super().on_error(b, g, err)
        if taken and self.shadow.exploring is not None:
            self.shadow.exploring.stopped(f"lanes leave a path by an error ({err})")
        return taken

    def on_indirect(self, b, g, ins: A.Instruction, index: A.Operand) -> None:
        super().on_indirect(b, g, ins, index)
        if (np.broadcast_to(self.state.tracker.in_taint, (b.n,))[g.mask] != 0).any():
            self.shadow.gap(f"data-dependent jump {ins.name}", ins, fatal=True)


__all__ = ["TermShadow", "EquivExec", "EquivPolicy", "GlobalInfo", "BufferOutput", "Gap", "equivalence_run"]


# ---------------------------------------------------------------------- both paths on terms

_MAX_PATH = 4096  # instructions on one path of a merged region


def _merge_paths(sh: TermShadow, b, fall: int, taken: int, stop: int, lanes: np.ndarray,
                 cond: np.ndarray) -> dict[str, np.ndarray]:
    """Registers written on either path from the branch to `stop`, as if-then-else terms."""
    entry: dict[str, np.ndarray] = {}
    paths = [_walk(sh, b, start, stop, lanes, entry) for start in (taken, fall)]
    out = {}
    for name in set(paths[0]) | set(paths[1]):
        t, f = (p.get(name, None) for p in paths)
        t = _entry(sh, b, name, lanes, entry) if t is None else t
        f = _entry(sh, b, name, lanes, entry) if f is None else f
        sort = int(sh.T.sort[t[lanes][0]])
        m = np.full(b.n, CONCRETE, np.int64)
        fv = Builder(sh.T, int(lanes.sum())).coerce(f[lanes], sort)
        m[lanes] = sh.T.make(Op.ITE, sort, NO_MODS, [cond[lanes], t[lanes], fv])
        out[name] = m
    return out


def _entry(sh: TermShadow, b, name: str, lanes: np.ndarray, cache: dict) -> np.ndarray:
    """A register's value at the branch, as terms (constants where concrete)."""
    got = cache.get(name)
    if got is not None:
        return got
    decl = b.prog.reg(name)
    width = decl.width if decl is not None else 32
    ids = np.broadcast_to(sh.regs.get(name, np.int64(CONCRETE)), (b.n,)).copy()
    con = lanes & (ids == CONCRETE)
    if con.any():
        bits = np.broadcast_to(b.regs.get(name, np.zeros((), np.uint64)), (b.n,))[con].astype(np.uint64)
        ids[con] = sh.T.const(PRED if width == 1 else bits_sort(width), bits)
    cache[name] = ids
    return ids


def _walk(sh: TermShadow, b, pc: int, stop: int, lanes: np.ndarray, entry: dict) -> dict[str, np.ndarray]:
    """Execute register-only code from pc to stop on terms; returns the registers written."""
    prog = b.prog
    ctx = b.ctx
    state: dict[str, np.ndarray] = {}
    steps = 0
    while pc != stop:
        steps += 1
        if steps > _MAX_PATH or pc >= len(prog.code):
            raise Unsupported("a path too long to merge")
        ins = prog.code[pc]
        if ins.opcode == "bra":
            if ins.guard is not None:
                raise Unsupported(f"a nested branch at {ins.span}")
            pc = prog.labels[ins.operands[0].name]
            continue
        if touches_memory_or_sync(ins.opcode) or ins.opcode in ("ret", "exit", "trap", "call"):
            raise Unsupported(f"{ins.name} on a path")

        def value(name: str) -> np.ndarray:
            return state[name] if name in state else _entry(sh, b, name, lanes, entry)

        args = [_arg(ctx, b, op, ty, value) for op, ty in _reads(ins)]
        outs = build(ins, args, sh.T, BuildContext(lanes))
        dests = _dest_registers(ins)
        if len(outs) < len(dests):
            raise Unsupported(f"{ins.name}: fewer terms than destinations")
        for name, new in zip(dests, outs):
            new = np.broadcast_to(new, (b.n,)).copy()
            con = lanes & (new == CONCRETE)
            if con.any():  # every operand an immediate: only a move of one is evaluated here
                if ins.opcode != "mov" or not args or (args[0].ids != CONCRETE).any():
                    raise Unsupported(f"{ins.name}: constant operands only")
                decl = prog.reg(name)
                w = decl.width if decl is not None else 32
                new[con] = sh.T.const(PRED if w == 1 else bits_sort(w),
                                      np.broadcast_to(args[0].bits, (b.n,))[con].astype(np.uint64))
            if ins.guard is not None:
                p = value(ins.guard.pred)
                if ins.guard.negated:
                    p = p.copy()
                    p[lanes] = sh.T.make(Op.PNOT, PRED, NO_MODS, [p[lanes]])
                old = value(name)
                sort = int(sh.T.sort[new[lanes][0]])
                ov = Builder(sh.T, int(lanes.sum())).coerce(old[lanes], sort)
                new[lanes] = sh.T.make(Op.ITE, sort, NO_MODS, [p[lanes], new[lanes], ov])
            state[name] = new
        pc += 1
    return state


_U32_AT = {"shl": (2,), "shr": (2,), "bfe": (2, 3), "shfl": (2, 3, 4)}


def _reads(ins: A.Instruction) -> list[tuple[A.Operand, str]]:
    """The operands a register-only instruction's handler reads, in order, with their types."""
    t = ins.types[-1] if ins.types else ".b32"
    op = ins.opcode
    out: list[tuple[A.Operand, str]] = []
    srcs = list(ins.operands[1:])
    if op == "cvt" and len(ins.types) == 2:
        return [(o, ".f32" if len(srcs) == 2 else ins.types[1]) for o in srcs]
    if op == "mov" and srcs and isinstance(srcs[0], A.Vector):
        w = int(t.lstrip(".")[1:]) // len(srcs[0].elements)
        return [(e, f".b{w}") for e in srcs[0].elements]
    for i, o in enumerate(srcs, start=1):
        if isinstance(o, A.Negated):
            o = o.operand
        ty = ".u32" if i in _U32_AT.get(op, ()) else t
        if op in ("selp", "setp") and i == 3:
            ty = ".pred"
        out.append((o, ty))
    return out


def _arg(ctx, b, op: A.Operand, ty: str, value) -> Arg:
    """An operand of an instruction executed on terms: registers from the path's state (terms),
    immediates and special registers as the machine reads them (concrete)."""
    width = tinfo(ty).width
    if isinstance(op, A.Sym) and op.component is None and b.prog.reg(op.name) is not None:
        decl = b.prog.reg(op.name)
        return Arg(value(op.name), np.zeros(b.n, np.uint64), decl.width)
    if isinstance(op, A.Sym) and op.name.startswith("%"):
        return Arg(np.int64(CONCRETE), np.asarray(ctx.special(op.name, op.component)).astype(np.uint64), width)
    return Arg(np.int64(CONCRETE), np.asarray(ctx._immediate(op, ty)), width)


def equivalence_run(prog, launch, store: TermStore, globals_: dict[str, GlobalInfo], races: bool = True):
    """A check-mode run of `launch` (every CTA) with the term shadow: (CheckRun, TermShadow). races=False:
    without race records (a caller that takes the race verdict from `check_kernel`, whose symbolic grid
    runs two CTAs where this run needs every one; the records of every CTA's accesses are what a
    FlashAttention pair at S = 512 ran out of memory on)."""
    from .run import new_run

    shadow = TermShadow(store, globals_)
    run = new_run(prog, launch, observers=(shadow,),
                  exec_factory=lambda b, state: EquivExec(b, state, shadow),
                  policy=lambda state: EquivPolicy(state, shadow), races=races)
    shadow.attach(run.machine)
    shadow.layout_of = run.state.layout_of  # the state hears each access first: its shadow exists by then
    return run, shadow


def _increasing(lanes: np.ndarray) -> bool:
    """Are `lanes` strictly increasing (distinct, in order: nonzero of a mask)?"""
    return lanes.ndim == 1 and bool((lanes[1:] > lanes[:-1]).all())
