"""Rule-based PTX rewrites: the executable part of the pattern library.

Each :class:`Rule` finds where it applies in a kernel (:class:`Site` s with PTX lines) and rewrites
the parsed module; the result is printed with ``ptx_parser.printer`` (leading ``//`` header lines,
such as a ``// volta-launch:`` header, are kept). A rule only adds what its precondition makes
safe, but a rewrite is never trusted: every result goes through the harness like a model's.

Rules:

- ``nc-loads``: global loads of buffers the kernel only reads go through the non-coherent
  read-only path (``ld.global.nc``, PTX ISA 9.7.9.9). Precondition: the address derives only from
  parameters of input tensors and no store, reduction or atomic of the kernel derives from them.
- ``streaming-stores``: stores to output buffers the kernel never reads get the streaming cache
  operator (``st.global.cs``, evict-first; 9.7.9.1 Table 31, 9.7.9.11).
- ``l2-prefetch``: global loads inside a loop fetch 256 bytes into L2 (``.L2::256B``, a
  performance hint only; 9.7.9.8).
- ``unroll-2``: a loop whose body is straight-line code (one label, one backward conditional
  branch at the end) runs two iterations per trip; the copy checks the exit condition in between,
  so the dynamic instruction sequence is the original's plus one branch per trip.
- ``vectorize``: adjacent scalar 32-bit global loads (stores) of consecutive addresses off one base
  register become one ``.v2``/``.v4`` access (9.7.9.8: the address must be aligned to the vector's
  size). Precondition: a known-alignment analysis proves the base aligned (pointer parameters are
  16-byte aligned, as Triton specialises them).

Cache operators and prefetch sizes are hints (9.7.9.1: "treated as performance hints only"), so
the first three never change what a kernel computes; unrolling and vectorisation do not either.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Callable, Iterable

import ptx_parser
from ptx_parser import ast as A
from ptx_parser.printer import print_module

from .records import ChangeKind

UNKNOWN = "?"  # a value of unknown origin (loaded from memory)
_NO_DEST = {"st", "red", "bra", "call", "ret", "exit", "bar", "barrier", "membar", "fence", "prefetch", "prefetchu",
            "trap", "brkpt", "cp", "mbarrier", "wgmma", "tcgen05", "griddepcontrol", "setmaxnreg", "elect"}
_LOAD_OPS = {"ld", "ldu", "atom", "shfl", "tex", "tld4", "suld", "ldmatrix"}  # results of unknown origin
_ORDERING = {".volatile", ".relaxed", ".acquire", ".release", ".mmio", ".weak"}
_CACHE_OPS = {".ca", ".cg", ".cs", ".lu", ".cv", ".wb", ".wt", ".nc"}
_PREFETCH = {".L2::64B", ".L2::128B", ".L2::256B"}
_VECTORS = (".v2", ".v4", ".v8")
_NC_TYPES = {".b8", ".b16", ".b32", ".b64", ".b128", ".u8", ".u16", ".u32", ".u64", ".s8", ".s16", ".s32", ".s64",
             ".f32", ".f64"}
_WORD_TYPES = {".b32", ".f32", ".u32", ".s32"}
_LAUNCH = re.compile(r"^\s*//\s*volta-launch\s*:")


class RuleError(ValueError):
    """A rule cannot read this PTX (it does not parse, or has no single kernel)."""


@dataclass(frozen=True)
class Site:
    line: int | None
    what: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.what}" if self.line else self.what


@dataclass(frozen=True)
class Kernel:
    """What a rule reads: the module, its kernel and the role of each parameter (``in``, ``out``,
    ``inout`` for tensors, ``scalar``, ``hidden`` for Triton's trailing scratch pointers)."""

    module: A.Module
    fn: A.Function
    roles: dict[str, str]
    header: tuple[str, ...] = ()  # leading // lines of the source, kept when printing
    grid: str | None = None  # the contract's grid as `// volta-launch:` text, "(M, 1, 1)" (None: unknown)

    @staticmethod
    def parse(ptx: str, roles_by_index: list[str], name: str = "candidate.ptx", grid: str | None = None) -> "Kernel":
        try:
            module = ptx_parser.parse(ptx, name)
        except ptx_parser.ParseError as e:
            raise RuleError(f"the PTX does not parse: {e.message} at {e.location}") from None
        kernels = [f for f in module.items if isinstance(f, A.Function) and f.is_kernel and f.body is not None]
        if len(kernels) != 1:
            raise RuleError(f"expected one .entry with a body, found {len(kernels)}")
        fn = kernels[0]
        roles = {p.name: (roles_by_index[i] if i < len(roles_by_index) else "hidden")
                 for i, p in enumerate(fn.params or ())}
        header = []
        for line in ptx.splitlines():
            if line.lstrip().startswith("//"):
                header.append(line.rstrip())
            elif line.strip():
                break
        return Kernel(module, fn, roles, tuple(header), grid)

    def params_with(self, *roles: str) -> set[str]:
        return {n for n, r in self.roles.items() if r in roles}

    def text(self, fn: A.Function, launch: str | None = None) -> str:
        """The module with ``fn`` for the kernel; ``launch``: a new `// volta-launch:` line, which
        replaces the header's (or is added first)."""
        items = tuple(fn if it is self.fn else it for it in self.module.items)
        body = print_module(dataclasses.replace(self.module, items=items))
        header = list(self.header)
        if launch is not None:
            at = next((i for i, h in enumerate(header) if _LAUNCH.match(h)), None)
            if at is None:
                header.insert(0, launch)
            else:
                header[at] = launch
        return ("\n".join(header) + "\n" if header else "") + body


def contract_roles(contract: object, reference: object) -> list[str]:
    """The role of each PTX parameter of the contract's Triton build, in order."""
    args = {a.name: a for a in getattr(contract, "args", ())}
    out = []
    for p in getattr(reference, "params", ()):
        a = args.get(p.arg) if p.arg else None
        out.append(getattr(a, "role", "scalar") if a is not None and hasattr(a, "role") else
                   ("scalar" if a is not None else "hidden"))
    return out


# ------------------------------------------------------------------------------- small AST helpers

def _syms(o: object) -> Iterable[str]:
    if isinstance(o, A.Sym):
        yield o.name
    elif isinstance(o, A.Vector):
        for e in o.elements:
            yield from _syms(e)
    elif isinstance(o, A.Pair):
        yield from _syms(o.first)
        yield from _syms(o.second)
    elif isinstance(o, A.Negated):
        yield from _syms(o.operand)
    elif isinstance(o, A.Address):
        if o.base is not None:
            yield o.base.name
    elif isinstance(o, (A.Binary, A.Unary, A.Paren, A.Cast)):
        for f in dataclasses.fields(o):
            yield from _syms(getattr(o, f.name))


def _dests(ins: A.Instruction) -> list[str]:
    if ins.opcode in _NO_DEST or not ins.operands or isinstance(ins.operands[0], (A.Address, A.IntLit)):
        return []
    return [n for n in _syms(ins.operands[0]) if n.startswith("%")]


def _address(ins: A.Instruction) -> A.Address | None:
    return next((o for o in ins.operands if isinstance(o, A.Address)), None)


def _offset(addr: A.Address) -> int | None:
    e = addr.offset
    if e is None:
        return 0
    if isinstance(e, A.IntLit):
        return e.value
    if isinstance(e, A.Unary) and e.op == "-" and isinstance(e.operand, A.IntLit):
        return -e.operand.value
    return None


def _line(ins: A.Instruction) -> int | None:
    return ins.span.line if ins.span else None


def _is_global(ins: A.Instruction) -> bool:
    return ".global" in ins.spaces


def _statements(fn: A.Function) -> list[object]:
    return list(fn.body.statements) if fn.body else []


def _map_instructions(fn: A.Function, f: Callable[[A.Instruction], A.Instruction]) -> A.Function:
    def block(b: A.Block) -> A.Block:
        out = []
        for s in b.statements:
            if isinstance(s, A.Instruction):
                out.append(f(s))
            elif isinstance(s, A.Block):
                out.append(block(s))
            else:
                out.append(s)
        return dataclasses.replace(b, statements=tuple(out))

    return dataclasses.replace(fn, body=block(fn.body)) if fn.body else fn


def with_modifier(ins: A.Instruction, mod: str, after: str | None = None, before: tuple[str, ...] = ()) -> A.Instruction:
    """``ins`` with ``mod`` spelled right after ``after`` (or right before the first of ``before``)."""
    order = list(ins.order or ())
    if after is not None and after in order:
        order.insert(order.index(after) + 1, mod)
    else:
        at = next((i for i, m in enumerate(order) if m in before or m in ins.types), len(order))
        order.insert(at, mod)
    return dataclasses.replace(ins, modifiers=ins.modifiers | {mod}, order=tuple(order))


# ------------------------------------------------------------------------------------ data flow

def param_sources(fn: A.Function) -> dict[str, frozenset[str]]:
    """For each register, the parameters its value may derive from (flow-insensitive, to a fixpoint);
    ``?`` when it may come from memory or an unmodelled instruction."""
    params = {p.name for p in fn.params or ()}
    src: dict[str, frozenset[str]] = {}
    instrs = fn.instructions()
    changed = True
    while changed:
        changed = False
        for ins in instrs:
            dests = _dests(ins)
            if not dests:
                continue
            addr = _address(ins)
            if ins.opcode == "ld" and ".param" in ins.spaces and addr is not None and addr.base is not None:
                val = frozenset({addr.base.name}) if addr.base.name in params else frozenset({UNKNOWN})
            elif ins.opcode in _LOAD_OPS or addr is not None:
                val = frozenset({UNKNOWN})
            else:
                val = frozenset()
                for o in ins.operands[1:]:
                    for n in _syms(o):
                        if n in src:
                            val |= src[n]
                        elif not n.startswith("%") and n not in params:
                            val |= {f"var:{n}"}  # a variable's address (shared, global)
            for d in dests:
                new = src.get(d, frozenset()) | val
                if new != src.get(d):
                    src[d] = new
                    changed = True
    return src


def _buffers(ins: A.Instruction, src: dict[str, frozenset[str]], pointers: set[str]) -> frozenset[str] | None:
    """The pointer parameters ``ins``'s address derives from; None when it may derive from anything
    else (a loaded value, a variable)."""
    addr = _address(ins)
    if addr is None or addr.base is None:
        return None
    s = src.get(addr.base.name, frozenset())
    if UNKNOWN in s or any(x.startswith("var:") for x in s):
        return None
    bufs = s & pointers
    return frozenset(bufs) if bufs else None


def _writes_global(ins: A.Instruction) -> bool:
    return (ins.opcode in ("st", "red", "atom") and (_is_global(ins) or not ins.spaces)) or (
        ins.opcode == "cp" and ".global" in ins.positional[:1])


KNOWN_TOP = 1 << 20  # alignment cap (bytes)


def _pow2(v: int) -> int:
    if v == 0:
        return KNOWN_TOP
    return min(v & -v, KNOWN_TOP)


def known_alignment(fn: A.Function, kernel: Kernel, pointer_align: int = 16) -> dict[str, int]:
    """For each register, a power of two its value is always a multiple of (flow-insensitive
    greatest fixpoint; unknown instructions give 1). Pointer parameters are ``pointer_align``."""
    pointers = kernel.params_with("in", "out", "inout")
    instrs = fn.instructions()
    defined = {d for ins in instrs for d in _dests(ins)}
    al: dict[str, int] = {d: KNOWN_TOP for d in defined}

    def val(o: object) -> int:
        if isinstance(o, A.IntLit):
            return _pow2(abs(o.value))
        if isinstance(o, A.Sym):
            return al.get(o.name, 1)
        return 1

    changed = True
    while changed:
        changed = False
        for ins in instrs:
            dests = _dests(ins)
            if len(dests) != 1:
                for d in dests:
                    if al.get(d) != 1:
                        al[d], changed = 1, True
                continue
            ops, op = ins.operands, ins.opcode
            a = _address(ins)
            if op == "ld" and ".param" in ins.spaces and a is not None and a.base is not None:
                v = pointer_align if a.base.name in pointers else 1
            elif not all(t[1] in "sub" for t in ins.types):
                v = 1  # floating point: not an address
            elif op in ("mov", "cvta", "cvt") and len(ops) == 2:
                v = val(ops[1])  # widening or narrowing keeps the low bits
            elif op in ("add", "sub", "or") and len(ops) == 3:
                v = min(val(ops[1]), val(ops[2]))
            elif op == "mul" and len(ops) == 3 and (".lo" in ins.modifiers or ".wide" in ins.modifiers):
                v = min(val(ops[1]) * val(ops[2]), KNOWN_TOP)
            elif op == "mad" and len(ops) == 4 and (".lo" in ins.modifiers or ".wide" in ins.modifiers):
                v = min(min(val(ops[1]) * val(ops[2]), KNOWN_TOP), val(ops[3]))
            elif op == "shl" and len(ops) == 3 and isinstance(ops[2], A.IntLit):
                v = min(val(ops[1]) << ops[2].value, KNOWN_TOP)
            elif op == "and" and len(ops) == 3:
                v = max(val(ops[1]), val(ops[2]))
            else:
                v = 1
            d = dests[0]
            new = min(al.get(d, KNOWN_TOP), v)
            if new != al.get(d):
                al[d], changed = new, True
    return al


# ---------------------------------------------------------------------------------------- rules

@dataclass(frozen=True)
class Rule:
    key: str
    title: str
    kind: ChangeKind
    metric: str  # the profile metric it should move (harness.judge.profile.METRICS labels)
    expected: str
    symptoms: tuple[str, ...]  # bottleneck classes (taic_agent.ladder.Bottleneck values) it addresses
    manual: str
    find: Callable[[Kernel], list[Site]]
    rewrite: Callable[[Kernel], A.Function]
    launch: Callable[[Kernel], str] | None = None  # the new `// volta-launch:` line of a global rewrite

    def apply(self, kernel: Kernel) -> str | None:
        """The rewritten PTX, or None when the rule does not apply."""
        if not self.find(kernel):
            return None
        return kernel.text(self.rewrite(kernel), self.launch(kernel) if self.launch else None)


def _nc_candidates(k: Kernel) -> set[int]:
    src = param_sources(k.fn)
    pointers = k.params_with("in", "out", "inout", "hidden")
    written: set[str] = set()
    for ins in k.fn.instructions():
        if _writes_global(ins):
            b = _buffers(ins, src, pointers)
            if b is None:
                return set()  # a store to an unknown place: nothing is provably read-only
            written |= b
    inputs = k.params_with("in")
    out = set()
    for ins in k.fn.instructions():
        if ins.opcode != "ld" or not _is_global(ins) or ins.modifiers & (_ORDERING | _CACHE_OPS):
            continue
        if any(m.startswith(".L1::") or m.startswith(".L2::evict") or m == ".L2::cache_hint" for m in ins.modifiers):
            continue
        if not set(ins.types) <= _NC_TYPES:
            continue
        b = _buffers(ins, src, pointers)
        if b and b <= inputs and not (b & written):
            out.add(id(ins))
    return out


def _find_nc(k: Kernel) -> list[Site]:
    ids = _nc_candidates(k)
    return [Site(_line(i), f"{i.name} of a read-only input") for i in k.fn.instructions() if id(i) in ids]


def _rewrite_nc(k: Kernel) -> A.Function:
    ids = _nc_candidates(k)
    return _map_instructions(k.fn, lambda i: with_modifier(i, ".nc", after=".global") if id(i) in ids else i)


def _cs_candidates(k: Kernel) -> set[int]:
    src = param_sources(k.fn)
    pointers = k.params_with("in", "out", "inout", "hidden")
    read: set[str] = set()
    for ins in k.fn.instructions():
        if ins.opcode in ("ld", "atom", "red", "cp") and ".param" not in ins.spaces:
            b = _buffers(ins, src, pointers)
            if b is None and ins.opcode != "cp":
                if _is_global(ins) or not ins.spaces:
                    return set()
                continue
            read |= b or frozenset()
    outputs = k.params_with("out")
    out = set()
    for ins in k.fn.instructions():
        if ins.opcode != "st" or not _is_global(ins) or ins.modifiers & (_ORDERING | _CACHE_OPS):
            continue
        if any(m.startswith(".L1::") or m.startswith(".L2::") for m in ins.modifiers):
            continue
        b = _buffers(ins, src, pointers)
        if b and b <= outputs and not (b & read):
            out.add(id(ins))
    return out


def _find_cs(k: Kernel) -> list[Site]:
    ids = _cs_candidates(k)
    return [Site(_line(i), f"{i.name} to an output written once") for i in k.fn.instructions() if id(i) in ids]


def _rewrite_cs(k: Kernel) -> A.Function:
    ids = _cs_candidates(k)
    return _map_instructions(k.fn, lambda i: with_modifier(i, ".cs", after=".global") if id(i) in ids else i)


@dataclass(frozen=True)
class Loop:
    head: int  # index of the label statement in the body
    branch: int  # index of the backward branch
    label: str


def straight_loops(fn: A.Function) -> list[Loop]:
    """Loops ``L: <straight-line code> @p bra L;`` at the top level of the body (no other label
    that a branch targets, no other branch, call, return or exit inside)."""
    stmts = _statements(fn)
    targets = {o.name for i in fn.instructions() if i.opcode == "bra" for o in i.operands if isinstance(o, A.Sym)}
    out = []
    for j, s in enumerate(stmts):
        if not (isinstance(s, A.Instruction) and s.opcode == "bra" and s.guard is not None and s.operands
                and isinstance(s.operands[0], A.Sym)):
            continue
        label = s.operands[0].name
        head = next((h for h in range(j - 1, -1, -1) if isinstance(stmts[h], A.Label) and stmts[h].name == label),
                    None)
        if head is None:
            continue
        body = stmts[head + 1:j]
        if any(isinstance(x, A.Block) or (isinstance(x, A.Label) and x.name in targets) or
               (isinstance(x, A.Instruction) and x.opcode in ("bra", "call", "ret", "exit", "brx")) for x in body):
            continue
        out.append(Loop(head, j, label))
    return out


def _find_prefetch(k: Kernel) -> list[Site]:
    return [Site(_line(i), f"{i.name} in the loop at {lp.label}") for lp, i in _loop_loads(k)]


def _loop_loads(k: Kernel) -> list[tuple[Loop, A.Instruction]]:
    stmts = _statements(k.fn)
    out = []
    for lp in straight_loops(k.fn):
        for s in stmts[lp.head + 1:lp.branch]:
            if (isinstance(s, A.Instruction) and s.opcode == "ld" and _is_global(s)
                    and not s.modifiers & (_PREFETCH | {".volatile", ".relaxed", ".acquire", ".mmio"})):
                out.append((lp, s))
    return out


def _rewrite_prefetch(k: Kernel) -> A.Function:
    ids = {id(i) for _, i in _loop_loads(k)}
    return _map_instructions(k.fn, lambda i: with_modifier(i, ".L2::256B", before=_VECTORS) if id(i) in ids else i)


def _fresh_label(taken: set[str], base: str) -> str:
    n = 0
    while f"{base}_u{n}" in taken:
        n += 1
    taken.add(f"{base}_u{n}")
    return f"{base}_u{n}"


def _find_unroll(k: Kernel) -> list[Site]:
    stmts = _statements(k.fn)
    return [Site(_line(stmts[lp.branch]), f"loop {lp.label} ({lp.branch - lp.head - 1} statements)")
            for lp in straight_loops(k.fn)]


def _rewrite_unroll(k: Kernel) -> A.Function:
    stmts = _statements(k.fn)
    taken = {s.name for s in stmts if isinstance(s, A.Label)}
    loops = {lp.branch: lp for lp in straight_loops(k.fn)}
    out: list[object] = []
    for j, s in enumerate(stmts):
        lp = loops.get(j)
        if lp is None:
            out.append(s)
            continue
        assert isinstance(s, A.Instruction) and s.guard is not None
        exit_label = _fresh_label(taken, lp.label)
        leave = dataclasses.replace(s, guard=A.Guard(s.guard.pred, not s.guard.negated),
                                    operands=(A.Sym(exit_label),) + s.operands[1:])
        copy = [A.Label(_fresh_label(taken, x.name)) if isinstance(x, A.Label) else x for x in stmts[lp.head + 1:j]]
        out += [leave] + copy + [s, A.Label(exit_label)]
    return dataclasses.replace(k.fn, body=dataclasses.replace(k.fn.body, statements=tuple(out)))


def _vector_groups(k: Kernel) -> list[tuple[int, int, int]]:
    """(first statement index, count, width) of adjacent scalar 32-bit global accesses of
    consecutive words off one base whose alignment is proved."""
    stmts = _statements(k.fn)
    al = known_alignment(k.fn, k)
    idx = [i for i, s in enumerate(stmts) if isinstance(s, A.Instruction)]
    groups = []
    used: set[int] = set()

    def key(s: A.Instruction) -> tuple | None:
        if s.opcode not in ("ld", "st") or not _is_global(s) or set(s.modifiers) & set(_VECTORS):
            return None
        if len(s.types) != 1 or s.types[0] not in _WORD_TYPES or s.modifiers & {".volatile", ".relaxed", ".acquire",
                                                                                  ".release", ".mmio"}:
            return None
        a = _address(s)
        if a is None or a.base is None or a.suffix is not None or _offset(a) is None:
            return None
        val = s.operands[0] if s.opcode == "ld" else s.operands[1]
        if not isinstance(val, A.Sym):
            return None
        return (s.opcode, s.modifiers, s.order, s.guard, a.base.name)

    pos = 0
    while pos < len(idx):
        i = idx[pos]
        s = stmts[i]
        k0 = key(s) if isinstance(s, A.Instruction) else None
        if k0 is None or i in used:
            pos += 1
            continue
        run = [i]
        q = pos + 1
        while q < len(idx) and len(run) < 4:
            t = stmts[idx[q]]
            between = stmts[run[-1] + 1:idx[q]]
            if any(not isinstance(x, A.Loc) for x in between) or key(t) != k0:
                break
            if _offset(_address(t)) != _offset(_address(stmts[run[-1]])) + 4:
                break
            run.append(idx[q])
            q += 1
        base_al = al.get(k0[4], 1)
        off0 = _offset(_address(s))
        for width in (4, 2):
            if len(run) >= width and off0 % (4 * width) == 0 and base_al >= 4 * width:
                vals = [stmts[r].operands[0 if s.opcode == "ld" else 1].name for r in run[:width]]
                if s.opcode == "ld" and (len(set(vals)) != width or k0[4] in vals):
                    continue
                groups.append((run[0], width, width))
                used.update(run[:width])
                break
        pos += 1
    return [(g[0], g[1], g[2]) for g in groups]


def _find_vectorize(k: Kernel) -> list[Site]:
    stmts = _statements(k.fn)
    return [Site(_line(stmts[i]), f"{n} scalar {stmts[i].name} of consecutive words -> .v{n}")
            for i, n, _ in _vector_groups(k)]


def _rewrite_vectorize(k: Kernel) -> A.Function:
    stmts = _statements(k.fn)
    groups = {i: n for i, n, _ in _vector_groups(k)}
    out: list[object] = []
    skip: set[int] = set()
    for i, s in enumerate(stmts):
        if i in skip:
            continue
        n = groups.get(i)
        if n is None:
            out.append(s)
            continue
        assert isinstance(s, A.Instruction)
        members = [i]
        j = i + 1
        while len(members) < n:
            if isinstance(stmts[j], A.Instruction):
                members.append(j)
            else:
                out.append(stmts[j])  # a .loc between them
            skip.add(j)
            j += 1
        slot = 0 if s.opcode == "ld" else 1
        vec = A.Vector(tuple(stmts[m].operands[slot] for m in members))
        ops = list(s.operands)
        ops[slot] = vec
        out.append(with_modifier(dataclasses.replace(s, operands=tuple(ops)), f".v{n}", before=_VECTORS))
    return dataclasses.replace(k.fn, body=dataclasses.replace(k.fn.body, statements=tuple(out)))


RULES: dict[str, Rule] = {r.key: r for r in (
    Rule("nc-loads", "read-only inputs through the non-coherent cache (ld.global.nc)", ChangeKind.LOCAL,
         "stall_long_scoreboard", "fewer cycles waiting on global loads; L1/texture path for read-only data",
         ("memory_latency", "memory_bandwidth"), "9.7.9.9", _find_nc, _rewrite_nc),
    Rule("streaming-stores", "streaming stores for outputs written once (st.global.cs)", ChangeKind.LOCAL,
         "dram_pct", "less cache pollution by output lines; DRAM throughput closer to peak",
         ("memory_bandwidth",), "9.7.9.1, 9.7.9.11", _find_cs, _rewrite_cs),
    Rule("l2-prefetch", "256-byte L2 prefetch on loads in loops (.L2::256B)", ChangeKind.LOCAL,
         "stall_long_scoreboard", "fewer long-scoreboard stalls on streaming loads in a loop",
         ("memory_latency",), "9.7.9.8", _find_prefetch, _rewrite_prefetch),
    Rule("unroll-2", "unroll a straight-line loop by two", ChangeKind.LOCAL,
         "stall_branch_resolving", "fewer branches and loop-control instructions per element; more loads in flight",
         ("memory_latency", "issue"), "9.7.8.1 (bra)", _find_unroll, _rewrite_unroll),
    Rule("vectorize", "merge adjacent scalar 32-bit global accesses into .v2/.v4", ChangeKind.LOCAL,
         "global_loads", "fewer LDG/STG instructions for the same bytes",
         ("memory_bandwidth", "issue"), "9.7.9.8 (vector operands, alignment)", _find_vectorize, _rewrite_vectorize),
)}


def applicable(kernel: Kernel) -> dict[str, list[Site]]:
    """Every rule that applies to ``kernel``, with its sites."""
    out = {}
    for key, rule in RULES.items():
        sites = rule.find(kernel)
        if sites:
            out[key] = sites
    return out


def apply_all(ptx: str, roles: list[str], keys: Iterable[str], name: str = "candidate.ptx",
              grid: str | None = None) -> tuple[str, list[str]]:
    """Apply the rules ``keys`` in order (each to the previous result); the text and the keys that
    applied. ``grid``: the contract's grid as header text (for rules that change the launch)."""
    done = []
    for key in keys:
        k = Kernel.parse(ptx, roles, name, grid)
        new = RULES[key].apply(k)
        if new is not None:
            ptx, done = new, done + [key]
    return ptx, done



def _register_global_rules() -> None:
    from . import rowwarp

    rule = Rule("one-row-per-warp", "one warp per row (32-thread CTAs), the cross-warp reduction moved to warp "
                "shuffles and registers", ChangeKind.GLOBAL, "shared_loads",
                "no shared-memory round trip or CTA barrier per row; 32-thread CTAs, more of them resident",
                ("barrier", "occupancy", "issue", "memory_latency"), "9.7.9.6 (shfl.sync), 9.7.13.1 (bar.sync), "
                "11.4.3 (.reqntid)", rowwarp.find, rowwarp.rewrite, rowwarp.launch)
    RULES[rule.key] = rule


_register_global_rules()
