"""`GroupExec`: the concrete implementation of the instruction-handler interface (semantics.ptx.Exec).

Registers hold raw bits in numpy arrays of their declared width (bool for predicates); a value
that is the same on every lane is kept as a 0-d array until a masked write makes it vary.

Check mode subclasses it (symexec.check.exec.CheckedExec) to follow what each value depends on;
the `_on_*` methods are its hooks (no-ops here).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Callable, Iterator

import numpy as np

from ptx_parser import ast as A
from semantics.constexpr import ConstExprError, evaluate
from semantics.errors import Unsupported
from semantics.formats import round_f64
from semantics.ptx.core import UINT, Exec, tinfo

from .events import AsyncOp, Proxy
from .memory import LOCAL_BASE, PARAM_BASE, SHARED_BASE, WINDOW, from_bytes, scatter_rows, to_bytes
from .opcodes import SCHEDULE_DEPENDENT
from .program import RESERVED_SHARED

if TYPE_CHECKING:  # pragma: no cover
    from .machine import Batch, Group

_CC = "%%cc"


class GroupExec(Exec):
    #: whether the machine shows every instruction to `audit` before it runs, its guard included (check mode's
    #: STALE audit, symexec/check/exec.py; a plain run does not pay for the call)
    audits = False

    def audit(self, g: "Group", ins: A.Instruction) -> None:
        """Instruction `ins` of group `g` is about to run (its guard not yet read): only when `audits`."""

    def __init__(self, batch: "Batch") -> None:
        self.b = batch
        self.n = batch.n
        self.mask = np.zeros(batch.n, dtype=bool)
        self.full = False
        self.ins: A.Instruction | None = None
        self._imm: dict = {}
        self.undefined: list[tuple[str, A.Instruction, int]] = []
        self.pc = -1
        self.group: "Group | None" = None  # the group being run
        self.proxy = Proxy.GENERIC  # the proxy of the memory accesses being made
        self.async_op: AsyncOp | None = None  # the asynchronous operation they are made for
        self.async_atomic = False  # they are element-wise atomic (.relaxed.gpu reductions, 9.7.9.25.4.2)

    def begin(self, mask: np.ndarray, ins: A.Instruction) -> None:
        self.mask = mask
        self.full = bool(mask.all())
        self.ins = ins

    @contextmanager
    def nested(self, mask: np.ndarray, ins: A.Instruction, pc: int | None = None, proxy: Proxy = Proxy.GENERIC,
               op: AsyncOp | None = None, atomic: bool = False) -> Iterator[None]:
        """Effects of another instruction made in the middle of the current one (an asynchronous
        operation completing when a register is read, a copy landing at a wait): run them as `ins`
        on `mask` (through `proxy`, for `op`), then restore the current instruction's context."""
        saved = self._save()
        if pc is not None:
            self.pc = pc
        self.proxy, self.async_op, self.async_atomic = proxy, op, atomic
        self.begin(mask, ins)
        try:
            yield
        finally:
            self._restore(saved)

    def _save(self) -> tuple:
        return self.mask, self.full, self.ins, self.pc, self.proxy, self.async_op, self.async_atomic

    def _restore(self, saved: tuple) -> None:
        self.mask, self.full, self.ins, self.pc, self.proxy, self.async_op, self.async_atomic = saved

    # ------------------------------------------------------------------ hooks (check mode)
    def _on_read_reg(self, name: str, value: np.ndarray, width: int) -> None:
        """Register `name` (of `width` bits) was read; `value` its bits."""

    def _on_write_reg(self, name: str, value: np.ndarray, width: int) -> None:
        """Register `name` is about to be written with `value` on the executing lanes."""

    def _on_read_const(self, value: np.ndarray, width: int) -> None:
        """An operand that is the same in every run of the launch was read (immediate, address, %tid)."""

    def _on_read_volatile(self, value: np.ndarray, width: int) -> None:
        """A value another run could see differently was read (a timer, a physical id)."""

    def _read_base(self, op: A.Sym) -> np.ndarray:
        """The base register of an address operand."""
        return self.read(op, ".u64")

    # ------------------------------------------------------------------ registers
    def _reg_width(self, name: str) -> int:
        if name == _CC:
            return 1
        d = self.b.prog.reg(name)
        if d is None:
            raise Unsupported(f"'{name}' is not a register here", self.ins)
        return d.width

    def read_reg(self, name: str, ty: str) -> np.ndarray:
        width = self._reg_width(name)
        if self.b.reg_watch and name in self.b.reg_watch:  # first: a pending result may land now
            self.b.reg_watch[name](self.mask, name, self.ins, "read")
        v = self.b.regs.get(name)
        if v is None:
            v = np.zeros((), dtype=UINT[width])
        self._on_read_reg(name, v, width)
        t = tinfo(ty)
        if t.kind == "pred" or width == 1:
            return v.astype(bool) if width != 1 else v
        if width == t.width:
            return v
        if width > t.width:  # a wider register: the low bits (PTX 6.4.x operand size rules)
            return v.astype(t.dtype)
        return v.astype(t.dtype)  # narrower register: zero-extended

    def write_reg(self, name: str, value: np.ndarray, ty: str) -> None:
        width = self._reg_width(name)
        t = tinfo(ty)
        v = np.asarray(value)
        if width == 1:
            v = v.astype(bool)
        elif t.width < width and t.kind == "s":  # sign-extend into a wider register
            v = v.astype(UINT[t.width]).view(_SIGNED[t.width]).astype(_SIGNED[width]).view(UINT[width])
        elif v.dtype != UINT[width]:
            v = v.astype(UINT[width])
        self._on_write_reg(name, v, width)
        if self.b.reg_watch and name in self.b.reg_watch:
            self.b.reg_watch[name](self.mask, name, self.ins, "write")
        if self.full:
            self.b.regs[name] = v
            return
        old = self.b.regs.get(name)
        if old is None:
            old = np.zeros((), dtype=v.dtype)
        self.b.regs[name] = np.where(self.mask, v, old)

    # ------------------------------------------------------------------ operands
    def read(self, op: A.Operand, ty: str) -> np.ndarray:
        if isinstance(op, A.Sym):
            if op.component is None and op.name in self.b.var_addr:
                v = self._address_value(op.name, ty)
                self._on_read_const(v, tinfo(ty).width)
                return v
            if op.name == "WARP_SZ" and self.b.prog.reg(op.name) is None:  # 32 on every target (PTX 4.4.1)
                v = np.asarray(32, dtype=tinfo(ty).dtype)
                self._on_read_const(v, tinfo(ty).width)
                return v
            if op.name.startswith("%") and op.name != _CC and self.b.prog.reg(op.name) is None:
                v = self.special(op.name, op.component).astype(tinfo(ty).dtype)
                if op.name in SCHEDULE_DEPENDENT:  # timers, physical ids: another run differs
                    self._on_read_volatile(v, tinfo(ty).width)
                else:
                    self._on_read_const(v, tinfo(ty).width)
                return v
            if op.component is not None:
                raise Unsupported(f"vector register component {op.name}{op.component}", self.ins)
            return self.read_reg(op.name, ty)
        if isinstance(op, A.Negated):
            return ~self.read(op.operand, ".pred").astype(bool)
        return self.read_value(op, ty)

    def read_value(self, op: A.Operand, ty: str) -> np.ndarray:
        if isinstance(op, A.Sym):
            return self.read(op, ty)
        key = (op, ty)
        v = self._imm.get(key)
        if v is None:
            v = self._immediate(op, ty)
            self._imm[key] = v
        self._on_read_const(v, tinfo(ty).width)
        return v

    def _immediate(self, op, ty: str) -> np.ndarray:
        t = tinfo(ty)
        if isinstance(op, A.FloatLit) and t.kind == "f" and op.bits is not None:
            if op.width == t.width and op.value is None:
                return np.asarray(op.bits, dtype=t.dtype)
            val = evaluate(op)
            return np.asarray(round_f64(np.asarray([float(val)]), t.fmt, "rn")[0], dtype=t.dtype)
        if isinstance(op, A.FloatLit) and op.bits is not None and op.value is None and t.kind in "bus":
            return np.asarray(op.bits & ((1 << t.width) - 1), dtype=t.dtype)
        if isinstance(op, (A.Sink,)):
            return np.zeros((), dtype=t.dtype)
        symbols = {k: a for k, (_, a) in self.b.var_addr.items()}
        try:
            val = evaluate(op, symbols)
        except ConstExprError as e:
            raise Unsupported(f"operand {op!r}: {e}", self.ins) from None
        if t.kind == "pred":
            return np.asarray(bool(val))
        if t.kind == "f":
            return np.asarray(round_f64(np.asarray([float(val)]), t.fmt, "rn")[0], dtype=t.dtype)
        return np.asarray(int(val) & ((1 << t.width) - 1), dtype=t.dtype)

    def _address_value(self, name: str, ty: str) -> np.ndarray:
        """A variable's address in its own window (mov/cvta of a variable name, PTX 6.4.1)."""
        _space, addr = self.b.var_addr[name]
        return np.asarray(addr, dtype=tinfo(ty).dtype)

    def write(self, op: A.Operand, value: np.ndarray, ty: str) -> None:
        if isinstance(op, A.Sink):
            return
        if isinstance(op, A.Sym) and op.component is None:
            self.write_reg(op.name, value, ty)
            return
        raise Unsupported(f"destination operand {op!r}", self.ins)

    def scalar(self, op: A.Operand, ty: str, mask: np.ndarray, ins: A.Instruction) -> int:
        """An operand that must be the same on every executing lane (barrier ids, counts)."""
        v = np.asarray(self.read(op, ty))
        if v.ndim == 0:
            return int(v)
        vals = np.unique(v[mask])
        if vals.size != 1:
            from semantics.errors import UndefinedBehavior

            raise UndefinedBehavior(f"{ins.name}: operand differs between threads ({vals[:4].tolist()})", ins)
        return int(vals[0])

    # ------------------------------------------------------------------ addresses and memory
    def address(self, op: A.Operand) -> tuple[str | None, np.ndarray]:
        if isinstance(op, A.Address):
            off = 0
            if op.offset is not None:
                off = int(evaluate(op.offset, {k: a for k, (_, a) in self.b.var_addr.items()}))
            if op.base is None:
                return None, np.asarray(np.uint64(off & (2**64 - 1)))
            space = None
            if op.base.name in self.b.var_addr:
                space, base = self.b.var_addr[op.base.name]
                return space, np.asarray(np.uint64((base + off) & (2**64 - 1)))
            base_v = self._read_base(op.base)
            return None, (base_v.astype(np.uint64) + np.uint64(off & (2**64 - 1))).astype(np.uint64)
        if isinstance(op, A.Indexed):
            space, base = self.b.var_addr.get(op.base, (None, None))
            if base is None:
                raise Unsupported(f"indexed operand on '{op.base}'", self.ins)
            return space, np.asarray(np.uint64(base + int(evaluate(op.index))))
        raise Unsupported(f"address operand {op!r}", self.ins)

    def _lanes(self) -> np.ndarray:
        return np.nonzero(self.mask)[0]

    def load(self, space: str, addrs: np.ndarray, nbytes: int, ins: A.Instruction) -> np.ndarray:
        lanes = self._lanes()
        a = np.broadcast_to(addrs, (self.n,))[lanes]
        data = self.b.memory.read(_mem_space(space), lanes, a, nbytes, ins)
        if lanes.size == self.n:  # every lane: the bytes read are the result (a fresh array)
            return data
        out = np.zeros((self.n, nbytes), dtype=np.uint8)
        scatter_rows(out, lanes, data)
        return out

    def store(self, space: str, addrs: np.ndarray, data: np.ndarray, ins: A.Instruction) -> None:
        lanes = self._lanes()
        a = np.broadcast_to(addrs, (self.n,))[lanes]
        self.b.memory.write(_mem_space(space), lanes, a, data[lanes], ins)

    def atomic(self, space: str, addrs: np.ndarray, nbytes: int,
               update: Callable[..., np.ndarray], operand: np.ndarray, ins: A.Instruction) -> np.ndarray:
        lanes = self._lanes()
        sp = _mem_space(space)
        a = np.broadcast_to(addrs, (self.n,))[lanes]
        ops = np.asarray(operand)[lanes]
        old_all = np.zeros(self.n, dtype=UINT[8 * nbytes])
        mem = self.b.memory
        if np.unique(a).size == a.size:  # distinct addresses: one vectorised read-modify-write
            old = from_bytes(mem.read(sp, lanes, a, nbytes, ins))
            new = update(old, *(ops.T if ops.ndim == 2 else (ops,)))
            mem.write(sp, lanes, a, to_bytes(np.asarray(new), nbytes), ins)
            old_all[lanes] = old
            return old_all
        for i, lane in enumerate(lanes):  # conflicting lanes: one after another, in lane order
            li = lanes[i:i + 1]
            ai = a[i:i + 1]
            old = from_bytes(mem.read(sp, li, ai, nbytes, ins))
            o = ops[i:i + 1]
            new = update(old, *(o.T if o.ndim == 2 else (o,)))
            mem.write(sp, li, ai, to_bytes(np.asarray(new), nbytes), ins)
            old_all[lane] = old[0]
        return old_all

    def generic_base(self, space: str) -> int:
        return {".shared": SHARED_BASE, ".local": LOCAL_BASE, ".param": PARAM_BASE}.get(space, 0)

    def in_space(self, space: str, generic: np.ndarray) -> np.ndarray:
        g = np.asarray(generic).astype(np.uint64)
        if space in (".shared", ".local", ".param"):
            base = np.uint64(self.generic_base(space))
            return (g >= base) & (g < base + np.uint64(WINDOW))
        if space == ".global":
            windows = (SHARED_BASE, LOCAL_BASE, PARAM_BASE)
            return ~np.logical_or.reduce([(g >= np.uint64(b)) & (g < np.uint64(b + WINDOW)) for b in windows])
        raise Unsupported(f"isspacep{space}", self.ins)

    # ------------------------------------------------------------------ special registers (PTX 10)
    def special(self, name: str, component: str | None) -> np.ndarray:
        b = self.b
        axis = {".x": 0, ".y": 1, ".z": 2, None: 0}.get(component)
        if name == "%tid":
            return b.tid[axis].astype(np.uint32)
        if name == "%ntid":
            return np.asarray(b.launch.block[axis], dtype=np.uint32)
        if name == "%ctaid":
            return b.ctaid[axis].astype(np.uint32)
        if name == "%nctaid":
            return np.asarray(b.launch.grid[axis], dtype=np.uint32)
        lane = np.arange(b.n) % 32
        if name == "%laneid":
            return lane.astype(np.uint32)
        if name == "%warpid":
            return ((np.arange(b.n) % b.lanes_per_cta) // 32).astype(np.uint32)
        if name == "%nwarpid":
            return np.asarray(b.warps_per_cta, dtype=np.uint32)
        if name.startswith("%lanemask_"):
            rel = name[len("%lanemask_"):]
            l64 = lane.astype(np.uint64)
            one = np.uint64(1)
            m = {"eq": one << l64, "lt": (one << l64) - one, "le": (one << (l64 + one)) - one,
                 "gt": ~((one << (l64 + one)) - one), "ge": ~((one << l64) - one)}[rel]
            return (m & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        if name in ("%cluster_ctaid", "%cluster_nctaid", "%clusterid", "%nclusterid"):
            if name == "%cluster_nctaid":
                return np.asarray(1, dtype=np.uint32)
            if name == "%clusterid":
                return b.ctaid[axis].astype(np.uint32)
            if name == "%nclusterid":
                return np.asarray(b.launch.grid[axis], dtype=np.uint32)
            return np.asarray(0, dtype=np.uint32)
        if name in ("%cluster_ctarank", "%is_explicit_cluster", "%smid", "%gridid"):
            return np.asarray(0, dtype=np.uint32)
        if name in ("%cluster_nctarank", "%nsmid"):
            return np.asarray(1, dtype=np.uint32)
        if name in ("%clock", "%clock64", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi", "%clock_hi"):
            # timers: any increasing value is a possible one; the emulator's instruction count
            self.b.timer_reads += 1
            t = np.uint64(1000 + 4 * self.b.timer_reads)
            if name.endswith("_hi"):
                t = t >> np.uint64(32)
            return np.asarray(t, dtype=np.uint64 if name in ("%clock64", "%globaltimer") else np.uint32)
        if name.startswith("%reserved_smem_offset"):  # the region reserved for system software (PTX 10.29)
            var = b.prog.variables[RESERVED_SHARED]
            rel = {"_begin": 0, "_0": 0, "_1": 16, "_end": var.size, "_cap": var.size}.get(name[len("%reserved_smem_offset"):])
            if rel is None:
                raise Unsupported(f"special register {name}", self.ins)
            return np.asarray(rel if name.endswith("_cap") else var.offset + rel, dtype=np.uint32)
        if name.startswith("%envreg"):  # driver-defined (PTX 10.22); cooperative launches: see Machine.environment
            value = b.environment.get(name)
            if value is None:
                raise Unsupported(f"special register {name} (driver-defined; Volta models %envreg1/%envreg2, the "
                                  "cooperative-groups grid workspace address, only)", self.ins)
            return np.asarray(value, dtype=np.uint32)
        if name == "%dynamic_smem_size":
            return np.asarray(b.launch.dynamic_shared_bytes, dtype=np.uint32)
        if name in ("%total_smem_size", "%aggr_smem_size"):
            return np.asarray(b.memory.shared_bytes, dtype=np.uint32)
        raise Unsupported(f"special register {name}{component or ''}", self.ins)

    def note_undefined(self, lanes: np.ndarray, what: str, ins: A.Instruction) -> None:
        hit = np.broadcast_to(lanes, (self.n,)) & self.mask
        if hit.any():
            self.undefined.append((what, ins, int(np.nonzero(hit)[0][0])))


_SIGNED = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}


def _mem_space(space: str | None) -> str:
    if space in (None, ".generic"):
        return ".generic"
    if space.startswith(".shared"):
        return ".shared"  # ::cta, and ::cluster with a cluster of one CTA
    return ".const" if space == ".const" else space
