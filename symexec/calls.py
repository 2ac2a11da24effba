"""Calls (PTX 9.7.12.5): call sites, the targets of indirect calls, and functions without a body.

The program loader inlines every call it can (symexec.program): direct calls of defined functions,
guarded ones behind a branch, and indirect calls as a comparison of the function address with each
possible target. What remains for the machine is a `call` of a function this module only declares
(`.extern .func`), a recursive one, or an indirect call whose address matched no target. Those run
here, through the `calls` unit:

- functions of the CUDA device runtime with a declared effect summary (`EXTERNALS`): `vprintf`
  (reads its format string and its argument buffer, returns the number of arguments), `malloc` and
  `free` (device-heap allocations with their own bounds; an access after `free` faults),
  `__assertfail` (the assertion's message, then the kernel traps);
- `memcpy` and `memset`, whose meaning is plain PTX: their bodies come from a small library
  (`LIBRARY`, a byte loop each) and are inlined like any defined function;
- anything else is `unsupported`, naming the function; an indirect call through an address that
  holds no function of the module with that signature is undefined behaviour (9.7.12.5).
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Callable

import numpy as np

from ptx_parser import ast as A

from .errors import Trap, UndefinedBehavior, Unsupported
from .units import Unit

if TYPE_CHECKING:  # pragma: no cover
    from .machine import Batch, Group, Machine


@dataclass(frozen=True)
class CallSite:
    """`call{.uni} (rets), callee, (args){, targets}` taken apart."""

    rets: tuple[A.Operand, ...]
    callee: str
    args: tuple[A.Operand, ...]
    targets: str | None  # flist (call table or .calltargets label) or fproto (.callprototype label)
    indirect: bool  # callee is a register holding a function address


def parse_call(ins: A.Instruction, regs: Callable[[str], object] | None = None) -> CallSite | None:
    if ins.opcode != "call":
        return None
    ops = list(ins.operands)
    rets: tuple = ()
    if ops and isinstance(ops[0], A.ParenList):
        rets = ops.pop(0).elements
    if not ops or not isinstance(ops[0], A.Sym):
        return None
    callee = ops.pop(0).name
    args: tuple = ()
    if ops and isinstance(ops[0], A.ParenList):
        args = ops.pop(0).elements
    targets = ops[0].name if ops and isinstance(ops[0], A.Sym) else None
    return CallSite(tuple(rets), callee, tuple(args), targets, indirect=targets is not None or callee.startswith("%"))


def address_taken(module: A.Module) -> frozenset[str]:
    """Functions whose address the module takes: an operand naming a function anywhere but in a
    call's callee position, or a variable initializer naming one (call tables, `generic(f)`)."""
    return _address_taken(module)


@lru_cache(maxsize=32)
def _address_taken(module: A.Module) -> frozenset[str]:
    names = {f.name for f in module.functions}
    out: set[str] = set()

    def scan(e) -> None:
        if isinstance(e, A.Sym) and e.name in names:
            out.add(e.name)
        elif isinstance(e, A.FuncExpr) and e.arg in names:
            out.add(e.arg)
        elif isinstance(e, (tuple, list)):
            for x in e:
                scan(x)
        elif isinstance(e, (A.Binary,)):
            scan(e.lhs)
            scan(e.rhs)
        elif isinstance(e, (A.Unary, A.Paren, A.Cast)):
            scan(getattr(e, "operand", getattr(e, "inner", None)))

    for fn in module.functions:
        for ins in fn.instructions():
            ops = ins.operands
            if ins.opcode == "call":
                call = parse_call(ins)
                ops = tuple(call.args) if call is not None else ()
            scan(ops)
    for decl in module.variables:
        for item in decl.items:
            scan(item.init)
    return frozenset(out)


def indirect_targets(module: A.Module, call: CallSite, target_lists: dict[str, list[str]]) -> list[str]:
    """The functions an indirect call may reach: the call table or `.calltargets` list it names;
    with a `.callprototype`, every function whose address the module takes (no other address can
    reach a register) and whose parameter and return counts fit the call."""
    if call.targets is not None and call.targets in target_lists:
        return list(dict.fromkeys(target_lists[call.targets]))
    table = next((d for d in module.variables for item in d.items if item.name == call.targets), None)
    if table is not None:
        out: list[str] = []

        def walk(e) -> None:
            if isinstance(e, tuple):
                for x in e:
                    walk(x)
            elif isinstance(e, A.Sym):
                out.append(e.name)
            elif isinstance(e, A.FuncExpr):
                out.append(e.arg)

        for item in table.items:
            if item.name == call.targets:
                walk(item.init)
        return list(dict.fromkeys(out))
    taken = address_taken(module)
    return [f.name for f in module.functions if f.name in taken and f.body is not None and f.kind == ".func"
            and len(f.params or ()) == len(call.args) and len(f.returns or ()) == len(call.rets)]


# ---------------------------------------------------------------------- memcpy and memset as PTX

LIBRARY_PTX = r"""
.version 8.0
.target sm_80
.address_size 64
// memcpy(dst, src, n): n bytes from src to dst, one byte at a time; returns dst
.func (.param .b64 ret) memcpy(.param .b64 dst, .param .b64 src, .param .b64 n)
{
    .reg .pred %p;
    .reg .b16 %v;
    .reg .b64 %d, %s, %n, %i, %a;
    ld.param.b64 %d, [dst];
    ld.param.b64 %s, [src];
    ld.param.b64 %n, [n];
    mov.b64 %i, 0;
LOOP:
    setp.ge.u64 %p, %i, %n;
    @%p bra DONE;
    add.s64 %a, %s, %i;
    ld.u8 %v, [%a];
    add.s64 %a, %d, %i;
    st.u8 [%a], %v;
    add.s64 %i, %i, 1;
    bra LOOP;
DONE:
    st.param.b64 [ret], %d;
    ret;
}
// memset(dst, c, n): n bytes of dst set to the low byte of c; returns dst
.func (.param .b64 ret) memset(.param .b64 dst, .param .b32 c, .param .b64 n)
{
    .reg .pred %p;
    .reg .b16 %v;
    .reg .b32 %c;
    .reg .b64 %d, %n, %i, %a;
    ld.param.b64 %d, [dst];
    ld.param.b32 %c, [c];
    cvt.u16.u32 %v, %c;
    ld.param.b64 %n, [n];
    mov.b64 %i, 0;
LOOP:
    setp.ge.u64 %p, %i, %n;
    @%p bra DONE;
    add.s64 %a, %d, %i;
    st.u8 [%a], %v;
    add.s64 %i, %i, 1;
    bra LOOP;
DONE:
    st.param.b64 [ret], %d;
    ret;
}
"""


@lru_cache(maxsize=1)
def _library() -> A.Module:
    from ptx_parser import parse

    return parse(LIBRARY_PTX, "<volta call library>")


def library_function(name: str) -> A.Function | None:
    """The PTX body Volta supplies for an external function (memcpy, memset), if any."""
    lib = _library()
    return next((f for f in lib.functions if f.name == name and f.body is not None), None)


# ---------------------------------------------------------------------- the runtime's functions

#: CUDA's default device heap (cudaLimitMallocHeapSize, 8 MiB): malloc returns NULL beyond it.
HEAP_LIMIT = 8 << 20
#: Longest string read by printf (%s, the format) or __assertfail before it is called unterminated.
MAX_STRING = 4096


@dataclass
class HeapBlock:
    alloc: int  # index in GlobalMemory.allocations
    size: int
    freed: bool = False


class CallState:
    """Per-machine state of the runtime functions: the device heap and what printf printed."""

    def __init__(self) -> None:
        self.heap: dict[int, HeapBlock] = {}  # base address -> block
        self.heap_used = 0
        self.printed: list[tuple[tuple[int, int, int], tuple[int, int, int], str]] = []


def _state(m: "Machine") -> CallState:
    st = getattr(m, "call_state", None)
    if st is None:
        st = m.call_state = CallState()
    return st


def _param_addr(b: "Batch", op: A.Operand, ins: A.Instruction) -> int:
    if not isinstance(op, A.Sym) or op.name not in b.var_addr:
        raise Unsupported(f"{ins.name}: argument {op!r} is not a .param variable", ins)
    space, off = b.var_addr[op.name]
    if space != ".local":
        raise Unsupported(f"{ins.name}: argument {op.name} in {space}", ins)
    return off


def _read_arg(b: "Batch", call: CallSite, i: int, nbytes: int, lanes: np.ndarray, ins: A.Instruction) -> np.ndarray:
    """Argument i of the call as unsigned integers per lane (read from its .param variable)."""
    off = _param_addr(b, call.args[i], ins)
    raw = b.memory.read(".local", lanes, np.full(lanes.size, off, np.uint64), nbytes, ins)
    return np.ascontiguousarray(raw).view({4: np.uint32, 8: np.uint64}[nbytes]).reshape(-1)


def _write_ret(b: "Batch", call: CallSite, values: np.ndarray, nbytes: int, lanes: np.ndarray,
               ins: A.Instruction) -> None:
    if not call.rets:
        return
    off = _param_addr(b, call.rets[0], ins)
    data = np.ascontiguousarray(values.astype({4: np.uint32, 8: np.uint64}[nbytes])).view(np.uint8).reshape(-1, nbytes)
    b.memory.write(".local", lanes, np.full(lanes.size, off, np.uint64), data, ins)


def _string(b: "Batch", lane: int, addr: int, ins: A.Instruction, what: str) -> str:
    """The NUL-terminated string at generic address `addr`, read byte by byte as lane `lane`."""
    if addr == 0:
        return "(null)"
    out = bytearray()
    one = np.array([lane])
    for k in range(MAX_STRING):
        c = int(b.memory.read(".generic", one, np.array([addr + k], np.uint64), 1, ins)[0, 0])
        if c == 0:
            return out.decode("utf-8", "replace")
        out.append(c)
    raise UndefinedBehavior(f"{what} at 0x{addr:x} has no terminating NUL within {MAX_STRING} bytes", ins)


def _who(b: "Batch", lane: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    cta = tuple(int(v) for v in b.ctas[int(b.cta_of_lane[lane])])
    return cta, (int(b.tid[0][lane]), int(b.tid[1][lane]), int(b.tid[2][lane]))


_CONVERSION = re.compile(r"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?(hh|h|ll|l|z|j|t|L)?([diouxXcsfFeEgGaApn%])")


def _vprintf(m: "Machine", b: "Batch", call: CallSite, lanes: np.ndarray, ins: A.Instruction) -> None:
    """vprintf(format, args): CUDA's printf. The arguments are packed in a buffer, each at its own
    size's alignment (ints 4 bytes; long, pointers and doubles 8). The format and every argument
    byte are read (so a bad pointer or an unwritten argument is seen); returns the number of
    arguments, -1 for a NULL format (CUDA C++ Programming Guide, formatted output)."""
    fmts = _read_arg(b, call, 0, 8, lanes, ins)
    bufs = _read_arg(b, call, 1, 8, lanes, ins)
    st = _state(m)
    ret = np.zeros(lanes.size, np.int64)
    for i, lane in enumerate(lanes.tolist()):
        fmt_addr, buf = int(fmts[i]), int(bufs[i])
        if fmt_addr == 0:
            ret[i] = -1
            continue
        fmt = _string(b, lane, fmt_addr, ins, "printf format string")
        pos, count = 0, 0

        def arg(size: int) -> bytes:
            nonlocal pos
            pos = -(-pos // size) * size
            raw = b.memory.read(".generic", np.array([lane]), np.array([buf + pos], np.uint64), size, ins)
            pos += size
            return bytes(raw[0])

        def piece(mt: re.Match) -> str:
            nonlocal count
            flags, width, prec, length, conv = mt.groups()
            if conv == "%":
                return "%"
            if width == "*":
                width = str(struct.unpack("<i", arg(4))[0])
                count += 1
            if prec == "*":
                prec = str(struct.unpack("<i", arg(4))[0])
                count += 1
            spec = "%" + (flags or "") + (width or "") + ("." + prec if prec is not None else "")
            count += 1
            if conv in "fFeEgGaA":
                v = struct.unpack("<d", arg(8))[0]
                return (spec + ("e" if conv in "aA" else conv)) % v
            if conv in "sp" or length in ("l", "ll", "z", "j", "t"):
                raw = int.from_bytes(arg(8), "little")
            else:
                raw = int.from_bytes(arg(4), "little")
            if conv == "s":
                return (spec + "s") % _string(b, lane, raw, ins, "printf %s argument")
            if conv == "p":
                return f"0x{raw:x}"
            if conv == "c":
                return (spec + "c") % chr(raw & 0xFF)
            if conv == "n":
                raise Unsupported("printf %n", ins)
            bits = 64 if length in ("l", "ll", "z", "j", "t") else 32
            if conv in "di" and raw >> (bits - 1):
                raw -= 1 << bits
            return (spec + conv.replace("i", "d")) % raw

        text = _CONVERSION.sub(piece, fmt)
        ret[i] = count
        if len(st.printed) < 10000:
            st.printed.append((*_who(b, lane), text))
    _write_ret(b, call, ret.astype(np.uint32), 4, lanes, ins)


def _malloc(m: "Machine", b: "Batch", call: CallSite, lanes: np.ndarray, ins: A.Instruction) -> None:
    """malloc(size): a new device-heap block of `size` bytes per thread, 16-byte aligned, with its
    own bounds; NULL for size 0 or once the 8 MiB default heap is used up."""
    sizes = _read_arg(b, call, 0, 8, lanes, ins)
    st = _state(m)
    out = np.zeros(lanes.size, np.uint64)
    for i, lane in enumerate(lanes.tolist()):
        size = int(sizes[i])
        if size == 0 or st.heap_used + size > HEAP_LIMIT:
            continue
        cta, tid = _who(b, lane)
        alloc = m.glob.allocate(f"malloc#{len(st.heap)} (CTA {cta} thread {tid}, {size} bytes)", size, align=16)
        st.heap[alloc.base] = HeapBlock(len(m.glob.allocations) - 1, size)
        st.heap_used += size
        out[i] = alloc.base
    _write_ret(b, call, out, 8, lanes, ins)


def _free(m: "Machine", b: "Batch", call: CallSite, lanes: np.ndarray, ins: A.Instruction) -> None:
    """free(ptr): NULL is ignored; a pointer malloc did not return, or one already freed, is
    undefined behaviour; afterwards every access to the block faults."""
    ptrs = _read_arg(b, call, 0, 8, lanes, ins)
    st = _state(m)
    for i, lane in enumerate(lanes.tolist()):
        p = int(ptrs[i])
        if p == 0:
            continue
        blk = st.heap.get(p)
        if blk is None or blk.freed:
            raise UndefinedBehavior(f"free(0x{p:x}): " + ("the block was freed already" if blk is not None else
                                    "not a pointer malloc returned"), ins, lane)
        blk.freed = True
        m.glob.allocations[blk.alloc].freed = True
        m.glob.freed_blocks += 1


def _assertfail(m: "Machine", b: "Batch", call: CallSite, lanes: np.ndarray, ins: A.Instruction) -> None:
    """__assertfail(message, file, line, function, charSize): a failed device assert; the kernel
    traps after printing the message."""
    lane = int(lanes[0])
    msg, file, func = (_string(b, lane, int(_read_arg(b, call, k, 8, lanes[:1], ins)[0]), ins, "assert string")
                       for k in (0, 1, 3))
    line = int(_read_arg(b, call, 2, 4, lanes[:1], ins)[0])
    cta, tid = _who(b, lane)
    raise Trap(f"assertion `{msg}` failed in {func} at {file}:{line} (CTA {cta} thread {tid}; "
               f"{lanes.size} thread(s) of this group)", ins, [int(x) for x in lanes])


#: name -> (effect summary, (parameter bytes...), return bytes or 0)
EXTERNALS: dict[str, tuple[Callable, tuple[int, ...], int]] = {
    "vprintf": (_vprintf, (8, 8), 4),
    "malloc": (_malloc, (8,), 8),
    "free": (_free, (8,), 0),
    "__assertfail": (_assertfail, (8, 8, 4, 8, 8), 0),
}


def _call(m: "Machine", b: "Batch", g: "Group", ins: A.Instruction, mask: np.ndarray) -> bool:
    """A `call` the loader left in place (see the module docstring)."""
    call = parse_call(ins)
    if call is None:
        raise Unsupported(f"{ins.name}: call form", ins)
    if not mask.any():
        g.pc += 1
        return True
    lanes = np.nonzero(mask)[0]
    if call.indirect:
        ptr = np.broadcast_to(b.ctx.read(A.Sym(call.callee), ".u64"), (b.n,))[lanes]
        bad = int(ptr[0])
        names = {a: name for name, (sp, a) in b.var_addr.items() if sp == ".func"}
        what = ("a null function pointer" if bad == 0 else
                f"0x{bad:x}, the address of {names[bad]}, whose signature does not fit the call" if bad in names else
                f"0x{bad:x}, which is no function's address")
        raise UndefinedBehavior(f"indirect call through {call.callee} = {what} (PTX 9.7.12.5)", ins, int(lanes[0]))
    summary = EXTERNALS.get(call.callee)
    fn = _module_function(b, call.callee)
    if summary is None or (fn is not None and fn.body is not None):
        if fn is not None and fn.body is not None:
            raise Unsupported(f"call to {call.callee} (recursion, a call chain deeper than 8, or .reg parameters "
                              "are not modelled)", ins)
        known = ", ".join(sorted(EXTERNALS) + ["memcpy", "memset"])
        raise Unsupported(f"call to external function {call.callee} (no body in this module; effect summaries "
                          f"exist for {known})", ins)
    impl, params, _ret = summary
    if len(call.args) != len(params):
        raise Unsupported(f"call to {call.callee} with {len(call.args)} argument(s); expected {len(params)}", ins)
    b.ctx.begin(mask, ins)
    impl(m, b, call, lanes, ins)
    g.pc += 1
    return True


def _module_function(b: "Batch", name: str) -> A.Function | None:
    try:
        return b.prog.module.function(name)
    except KeyError:
        return None


UNIT = Unit("calls", {"call": _call}, "calls the loader could not inline: device-runtime functions "
                                      "(printf, malloc/free, assert) by effect summaries")

__all__ = ["CallSite", "parse_call", "indirect_targets", "address_taken", "library_function", "EXTERNALS", "UNIT",
           "HEAP_LIMIT", "CallState"]
