"""``one-row-per-warp``: Triton's row reductions with one warp per row and no cross-warp stage.

Triton lowers a reduction over a row spread across W warps (T = 32 W threads, ``.reqntid T``) to:
each thread's partial, a butterfly of five ``shfl.sync.bfly`` (offsets 16 .. 1, PTX ISA 9.7.9.6)
per warp, then the cross-warp stage: every warp stores its partial to ``global_smem[warp]``,
``bar.sync 0`` (9.7.13.1), thread t loads ``global_smem[t % W]`` and a butterfly of log2(W) steps
combines the W partials in every thread. The rewrite launches 32 threads per row (``.reqntid 32``
and the candidate's ``// volta-launch:`` header with ``block=(32, 1, 1)``, the contract's grid;
harness/candidate.py), and the stage goes away: the reduction runs on shuffles and registers only.
Two strategies, tried in this order:

- **re-stride** (a kernel with one chunk loop, rowsum): thread t owns column
  ``(4 t) & (4T - 4)`` of each chunk and loads ``.v4`` words at ``+ 4T j`` (j < V), each masked by
  ``< N``; the loop steps by ``4T V``. The mask becomes 124, the offsets ``128 j`` and the step
  ``128 V``: one warp visits the same vectors under the same masks, and its butterfly already
  holds the row, so the stage's result is the butterfly's (a ``mov``). A thread now gets other
  elements, so its partial must be a fold of the combining operation over its elements and the
  operation's identity (:func:`_check_partials`); only the order of the terms changes.
- **replicate** (any other kernel of the shape, e.g. the row kept in registers by softmax, rmsnorm
  and layernorm): lane l runs what threads l + 32 v (v < W) ran, instruction by instruction, with
  its own copy of every register that depends on the thread (``%r_w1_<N>``, ...; copy v reads
  ``%tid.x + 32 v``). Copy v's shuffles are warp v's. The stage becomes the W copies' partials
  combined in registers in the stage's butterfly order, so the kernel computes bit for bit what
  Triton's does. The price is W times the registers.

A shape is recognised exactly or not at all: :func:`match` raises RuleError naming the first thing
neither strategy recognises. Refused, for example: special registers that name a thread other than
``%tid.x`` (``%ntid``, ``%laneid``, ...), a branch, barrier or return under a thread-dependent
predicate, shared memory outside the stage, atomics and reductions (a thread count changes how
often they happen), calls, a shuffle other than a constant full-warp butterfly, a barrier with a
thread count, and a stage whose butterflies or combining operations differ from the above.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
from dataclasses import dataclass

from ptx_parser import ast as A

from .rules import Kernel, RuleError, Site, _address, _dests, _line, _offset, _statements, _syms, straight_loops

WARP = 32
# associative and commutative, so reordering the terms is sound (up to floating-point rounding for add)
_COMBINE = {"add", "min", "max", "and", "or", "xor"}
# special registers that name a thread or its place; only %tid.x in one `mov` is understood
_THREAD_SPECIALS = ("%tid", "%ntid", "%laneid", "%warpid", "%nwarpid", "%lanemask", "%cluster_ctarank",
                    "%cluster_nctarank")
_PURE = {"mov", "add", "sub", "and", "or", "xor", "shl", "shr", "mul", "mad", "cvt", "cvta", "setp", "selp"}


class Form(enum.Enum):
    """What a thread-dependent value is."""

    TID = "tid"  # %tid.x
    TID4 = "4*tid"
    COL = "column"  # col + (n) + constant, in elements
    COLPRED = "column mask"  # column < N
    ADDR = "element address"  # &x[row, column]
    WARP8 = "tid >> 3"
    WSLOT = "4 * warp"
    RSLOT = "4 * (tid % W)"
    WADDR = "shared slot of the warp"
    RADDR = "shared slot read"
    LEADER = "tid == 0"


@dataclass(frozen=True)
class Value:
    form: Form
    offset: int = 0  # COL / ADDR: elements past col (+ n when chunked)
    chunked: bool = False  # COL / ADDR: the loop's chunk base n was added


@dataclass(frozen=True)
class Stage:
    """One cross-warp stage: the statements it removes and the mov that replaces its last one."""

    removed: tuple[int, ...]
    last: int
    result: str  # the register the stage defines
    source: str  # the warp's whole reduction
    op: A.Instruction  # the combining instruction (for the mov's type)
    line: int | None
    tree: tuple[A.Instruction, ...] = ()  # the warp's butterfly that gives ``source``
    tree_input: str = ""  # the thread's partial the butterfly starts from


class Strategy(enum.Enum):
    RESTRIDE = "re-stride the chunk loop"
    REPLICATE = "each lane runs the W threads lane + 32 * v"


@dataclass(frozen=True)
class Shape:
    threads: int
    strategy: Strategy
    rescale: dict[int, A.Instruction]  # RESTRIDE: statement index -> the instruction with one-warp constants
    stages: tuple[Stage, ...]
    sites: tuple[Site, ...]
    grid: str
    varying: frozenset[str] = frozenset()  # REPLICATE: registers each virtual thread has its own of


def _refuse(why: str, ins: A.Instruction | None = None) -> RuleError:
    where = f" (line {_line(ins)}: {ins.name})" if ins is not None and _line(ins) else ""
    return RuleError(f"one-row-per-warp: {why}{where}")


def _imm(o: object) -> int | None:
    if isinstance(o, A.IntLit):
        return o.value
    if isinstance(o, A.Unary) and o.op == "-" and isinstance(o.operand, A.IntLit):
        return -o.operand.value
    return None


def _reg(o: object) -> str | None:
    return o.name if isinstance(o, A.Sym) and o.component is None else None


def _special(o: object) -> str | None:
    return o.name + (o.component or "") if isinstance(o, A.Sym) and o.name.startswith("%") and (
        o.component or any(o.name.startswith(s) for s in _THREAD_SPECIALS)) else None


def _with_operand(ins: A.Instruction, i: int, value: int) -> A.Instruction:
    ops = list(ins.operands)
    ops[i] = A.IntLit(value)
    return dataclasses.replace(ins, operands=tuple(ops))


def _grid(k: Kernel, threads: int) -> str:
    from harness.candidate import LaunchHeaderError, parse_header

    launch = [h for h in k.header if "volta-launch" in h]
    if not launch:
        if k.grid is None:
            raise _refuse("the contract's grid is not known as a header expression")
        return k.grid
    try:
        header = parse_header("\n".join(launch))
    except LaunchHeaderError as e:
        raise _refuse(f"the launch header cannot be read: {e}") from None
    assert header is not None
    block = [ast.unparse(b) for b in header.block] + ["1"] * (3 - len(header.block))
    if block != [str(threads), "1", "1"]:
        raise _refuse(f"the launch header's block ({', '.join(block)}) is not the kernel's .reqntid {threads}")
    return "(" + ", ".join(ast.unparse(g) for g in header.grid) + ")"


def _threads(k: Kernel) -> int:
    d = k.fn.directive(".reqntid")
    if k.fn.directive(".maxntid") is not None:
        raise _refuse(".maxntid: the block size is not fixed")
    if d is None or not d.values or any(v != 1 for v in d.values[1:]):
        raise _refuse("no one-dimensional .reqntid")
    t = d.values[0]
    if t <= WARP or t % WARP or t & (t - 1):
        raise _refuse(f".reqntid {t}: not a power-of-two number of warps above one")
    return t


def _sources(ins: A.Instruction) -> set[str]:
    """The names ``ins`` reads (operands, address bases, the guard)."""
    srcs = [x for o in (ins.operands[1:] if _dests(ins) else ins.operands) for x in _syms(o)]
    if ins.guard is not None:
        srcs.append(ins.guard.pred)
    return set(srcs)


@dataclass(frozen=True)
class _Flow:
    t: int
    w: int
    stmts: list
    at: dict[int, int]
    instrs: list[A.Instruction]
    defs: dict[str, list[A.Instruction]]
    uses: dict[str, list[A.Instruction]]


def _flow(k: Kernel) -> _Flow:
    t = _threads(k)
    stmts = _statements(k.fn)
    if any(isinstance(s, A.Block) for s in stmts):
        raise _refuse("nested blocks")
    instrs = [s for s in stmts if isinstance(s, A.Instruction)]
    defs: dict[str, list[A.Instruction]] = {}
    uses: dict[str, list[A.Instruction]] = {}
    for ins in instrs:
        for d in _dests(ins):
            defs.setdefault(d, []).append(ins)
        for n in _sources(ins):
            uses.setdefault(n, []).append(ins)
    return _Flow(t, t // WARP, stmts, {id(s): i for i, s in enumerate(stmts)}, instrs, defs, uses)


def match(k: Kernel) -> Shape:
    """The row-reduction shape of ``k`` (the chunk loop re-strided when it has Triton's looped
    shape, else replication), or RuleError naming what neither strategy recognises."""
    f = _flow(k)
    try:
        return match_restride(k, f)
    except RuleError as e:
        try:
            return _match_replicate(k, f)
        except RuleError as e2:
            raise _refuse(f"{str(e).removeprefix('one-row-per-warp: ')}; and not replicable: "
                          f"{str(e2).removeprefix('one-row-per-warp: ')}") from None


def match_restride(k: Kernel, f: _Flow | None = None) -> Shape:
    """The re-stride strategy alone (RuleError when Triton's looped shape is not recognised)."""
    f = f or _flow(k)
    t, w, stmts, at, instrs, defs, uses = f.t, f.w, f.stmts, f.at, f.instrs, f.defs, f.uses
    _no_counted_effects(instrs)
    loops = straight_loops(k.fn)
    if len(loops) != 1:
        raise _refuse(f"{len(loops)} straight-line chunk loops (one expected)")
    loop = loops[0]
    back = stmts[loop.branch]
    assert isinstance(back, A.Instruction) and back.guard is not None
    cond = defs.get(back.guard.pred, [])
    if len(cond) != 1 or cond[0].opcode != "setp" or ".lt" not in cond[0].modifiers or back.guard.negated:
        raise _refuse("the chunk loop's exit is not `setp.lt n, N; @p bra`", back)
    n = _reg(cond[0].operands[1])
    steps = [i for i in defs.get(n or "", []) if loop.head < at[id(i)] < loop.branch]
    if n is None or len(steps) != 1 or steps[0].opcode != "add" or _reg(steps[0].operands[1]) != n \
            or _imm(steps[0].operands[2]) is None:
        raise _refuse("the chunk loop's induction is not `add n, n, S`", cond[0])
    step_ins = steps[0]
    step = _imm(step_ins.operands[2])
    assert step is not None
    if step <= 0 or step % (4 * t):
        raise _refuse(f"the loop step {step} is not a multiple of 4 * {t} elements", step_ins)
    vectors = step // (4 * t)

    values: dict[str, Value] = {}
    rescale: dict[int, A.Instruction] = {at[id(step_ins)]: _with_operand(step_ins, 2, step // t * WARP)}
    tid_movs = 0

    def val(o: object) -> Value | None:
        r = o.base.name if isinstance(o, A.Address) and o.base is not None else _reg(o)
        return values.get(r) if r else None

    def inside(ins: A.Instruction) -> bool:
        return loop.head < at[id(ins)] < loop.branch

    indexed = _thread_dependent(instrs, through_data=False)
    for ins in instrs:  # forward: every value derived from %tid.x gets its form, or the shape is refused
        if (_sources(ins) & indexed) - set(values):
            raise _refuse("a thread-dependent value read before its definition", ins)
        specials = [s for o in ins.operands for s in ([_special(o)] if _special(o) else [])]
        thread_specials = [s for s in specials if s.startswith(_THREAD_SPECIALS)]
        ops, dests = ins.operands, _dests(ins)
        args = [val(o) for o in (ops[1:] if dests else ops)]
        guard = values.get(ins.guard.pred) if ins.guard else None
        if thread_specials:
            if thread_specials == ["%tid.x"] and ins.opcode == "mov" and len(ops) == 2 and len(dests) == 1:
                tid_movs += 1
                values[dests[0]] = Value(Form.TID)
                continue
            raise _refuse(f"{', '.join(thread_specials)} is read", ins)
        if not any(args) and guard is None:
            continue
        form = _form(ins, args, guard, t, w, n, inside(ins))
        if isinstance(form, str):
            raise _refuse(form, ins)
        if form is None:  # an accepted use (a load, a shared access, the leader's store)
            continue
        value, replaced = form
        if len(dests) != 1 or len(defs[dests[0]]) != 1:
            raise _refuse("a thread-dependent register is assigned twice", ins)
        values[dests[0]] = value
        if replaced is not None:
            rescale[at[id(ins)]] = replaced
    if tid_movs != 1:
        raise _refuse(f"{tid_movs} reads of %tid.x (one expected)")

    loads = [i for i in instrs if i.opcode == "ld" and val(_address(i).base if _address(i) else None) is not None
             and val(_address(i).base).form is Form.ADDR]
    offsets = sorted(val(_address(i).base).offset for i in loads)
    if offsets != [4 * t * j for j in range(vectors)]:
        raise _refuse(f"the loads cover chunk offsets {offsets}, not 0, {4 * t}, ... below the step {step}")

    stages = tuple(_stage(stmts, at, defs, uses, ins, w) for ins in instrs
                   if ins.opcode == "st" and ".shared" in ins.spaces)
    if not stages:
        raise _refuse("no cross-warp stage")
    if [i for i in instrs if i.opcode in ("ld", "st", "atom", "red") and ".shared" in i.spaces
            and at[id(i)] not in {r for s in stages for r in s.removed}]:
        raise _refuse("shared memory used outside the cross-warp stages")
    loaded = {d for i in loads for d in _dests(i)}
    for st in stages:
        _check_partials(instrs, defs, uses, st, loaded)
    for ins in instrs:  # a remaining bar.sync 0 waits for the one warp; a thread count would be wrong
        if ins.opcode in ("bar", "barrier") and (len(ins.operands) != 1 or ".arrive" in ins.modifiers
                                                 or ".red" in ins.modifiers):
            raise _refuse("a barrier with a thread count, or arrive/red", ins)
    mask_at = next(at[id(i)] for i in instrs if i.opcode == "and" and _reg(i.operands[0]) in values
                   and values[_reg(i.operands[0])].form is Form.COL)
    sites = (Site(_line(stmts[mask_at]), f"{w} warps per row -> 1: column mask {4 * t - 4} -> {4 * WARP - 4}"),
             Site(_line(step_ins), f"chunk step {step} -> {step // t * WARP} elements"),
             *(Site(s.line, f"cross-warp stage of {w} partials through shared memory -> warp shuffles only")
               for s in stages))
    return Shape(t, Strategy.RESTRIDE, rescale, stages, sites, _grid(k, t))


_LOAD_LIKE = {"ld", "ldu", "shfl", "atom", "vote", "match", "redux"}


def _thread_dependent(instrs: list[A.Instruction], through_data: bool) -> set[str]:
    """Registers that depend on the thread, to a fixpoint. ``through_data``: also what lane-varying
    operations (shuffles, shared loads) give and what loads through thread-dependent addresses
    return (the registers each replicated thread needs its own of); else only what is computed from
    %tid.x (the index values re-striding recognises)."""
    out: set[str] = set()
    changed = True
    while changed:
        changed = False
        for ins in instrs:
            ds = set(_dests(ins))
            if not ds or ds <= out or (not through_data and ins.opcode in _LOAD_LIKE):
                continue
            if (_sources(ins) & out or any(_special(o) == "%tid.x" for o in ins.operands)
                    or (through_data and (ins.opcode in _LANE_VARYING or ".shared" in ins.spaces))):
                out |= ds
                changed = True
    return out
# the identity of each combining operation, as the 32-bit pattern of a literal or register holding it
_IDENTITY = {("add", ".f32"): {0}, ("max", ".f32"): {0xFF800000}, ("min", ".f32"): {0x7F800000},
             ("add", ".s32"): {0}, ("add", ".u32"): {0}}


def _literal_bits(o: object) -> int | None:
    if isinstance(o, A.FloatLit) and o.width == 32 and o.bits is not None:
        return o.bits
    v = _imm(o)
    return v & 0xFFFFFFFF if v is not None else None


def _check_partials(instrs: list[A.Instruction], defs: dict, uses: dict, st: Stage, loaded: set[str]) -> None:
    """Re-striding gives each thread other elements, so the thread's partial must not depend on which
    elements it got: it must be the combining operation folded over loaded elements and its identity
    (an accumulator, a masked-out default), nothing else. A greatest fixpoint: a register is a fold
    value when every definition is the identity, a copy of a fold value, the combining operation of
    two, or a loaded element; and nothing but the fold and the warp's butterfly may read one."""
    op = st.op
    key = (op.opcode, op.types[0] if op.types else "")
    if key not in _IDENTITY or len(op.types) != 1:
        raise _refuse(f"{op.name}: no identity known for re-striding its partials", op)
    ident = _IDENTITY[key]
    same = (op.opcode, op.types, op.modifiers)
    holds_identity = {r for r, ds in defs.items() if ds and all(
        d.opcode == "mov" and len(d.operands) == 2 and _literal_bits(d.operands[1]) in ident and d.guard is None
        for d in ds)}
    fold = {r for r, ds in defs.items() if any(
        (i.opcode, i.types, i.modifiers) == same or i.opcode == "mov" or r in loaded for i in ds)} - holds_identity

    def ok(r: str, d: A.Instruction) -> bool:
        if r in loaded and d.opcode == "ld":
            return True
        if d.opcode == "mov" and len(d.operands) == 2:
            src = d.operands[1]
            return _literal_bits(src) in ident or _reg(src) in holds_identity or _reg(src) in fold
        if (d.opcode, d.types, d.modifiers) == same and len(d.operands) == 3 and d.guard is None:
            return all(_reg(x) in fold for x in d.operands[1:])
        return False

    changed = True
    while changed:
        changed = False
        for r in sorted(fold):
            if not all(ok(r, d) for d in defs[r]):
                fold.discard(r)
                changed = True
    if st.tree_input not in fold:
        raise _refuse(f"the warp's partial {st.tree_input} is not the {op.name} of loaded elements and its "
                      "identity, so it depends on which elements the thread got")
    tree = set(map(id, st.tree))
    for r in fold:
        for u in uses.get(r, []):
            if id(u) not in tree and not (_dests(u) and set(_dests(u)) <= fold):
                raise _refuse(f"{r}, a fold of the thread's elements, is read outside the fold", u)


def _form(ins: A.Instruction, args: list[Value | None], guard: Value | None, t: int, w: int, n: str,
          in_loop: bool) -> tuple[Value, A.Instruction | None] | str | None:
    """The form of the value ``ins`` computes from thread-dependent ``args`` (address operands by
    their base) under a thread-dependent ``guard``, with the instruction rewritten for one warp (or
    None when it stays); None for an accepted use; or why it is refused."""
    op, ops = ins.opcode, ins.operands
    a = args[0] if args else None
    b = args[1] if len(args) > 1 else None
    imm = _imm(ops[2]) if len(ops) > 2 else None
    forms = [x.form if x else None for x in args]
    if op == "shl" and forms[:1] == [Form.TID] and imm == 2 and ins.guard is None:
        return Value(Form.TID4), None
    if op == "shr" and forms[:1] == [Form.TID] and imm == 3 and ".u32" in ins.types:
        return Value(Form.WARP8), None
    if op == "and" and forms[:1] == [Form.TID4] and imm == 4 * t - 4:
        return Value(Form.COL), _with_operand(ins, 2, 4 * WARP - 4)
    if op == "and" and forms[:1] == [Form.TID4] and imm == 4 * w - 4:
        return Value(Form.RSLOT), None
    if op == "and" and forms[:1] == [Form.WARP8] and imm == 4 * w - 4:
        return Value(Form.WSLOT), None
    if op == "add" and ins.types in ((".s32",), (".u32",)) and len(ops) == 3 and ins.guard is None:
        if a is not None and b is not None:
            return "two thread-dependent terms"
        x, other = (a, ops[2]) if a is not None else (b, ops[1])
        if x.form in (Form.WSLOT, Form.RSLOT) and _reg(other) is not None:
            return Value(Form.WADDR if x.form is Form.WSLOT else Form.RADDR), None
        if x.form is Form.COL and _reg(other) == n and not x.chunked and in_loop:
            return Value(Form.COL, x.offset, True), None
        k = _imm(other)
        if x.form is Form.COL and k is not None and k > 0 and k % (4 * t) == 0 and in_loop:
            return Value(Form.COL, x.offset + k, x.chunked), _with_operand(ins, 1 if a is None else 2,
                                                                           k // t * WARP)
        return f"an unrecognised sum with a {x.form.value}"
    if op == "add" and ins.types in ((".s64",), (".u64",)) and a is not None and a.form is Form.ADDR:
        k = _imm(ops[2])
        if k is not None and k > 0 and k % (16 * t) == 0 and ins.guard is None:
            return Value(Form.ADDR, a.offset + k // 4, a.chunked), _with_operand(ins, 2, k // t * WARP)
        return "an unrecognised address offset"
    if op == "mad" and ".wide" in ins.modifiers and forms == [Form.COL, None, None] and _imm(ops[2]) == 4 \
            and _reg(ops[3]) is not None and ins.guard is None:
        if not args[0].chunked:
            return "an address of a column outside the chunk loop"
        return Value(Form.ADDR, args[0].offset, True), None
    if op == "setp" and ".lt" in ins.modifiers and a is not None and a.form is Form.COL and b is None \
            and a.chunked and len(ops) == 3:
        return Value(Form.COLPRED, a.offset, True), None
    if op == "setp" and ".eq" in ins.modifiers and forms[:1] == [Form.TID] and _imm(ops[2]) == 0 and len(ops) == 3:
        return Value(Form.LEADER), None
    if guard is not None and op not in ("ld", "st"):
        return f"an instruction guarded by a {guard.form.value}"
    addr = _address(ins)
    if op == "ld" and ".global" in ins.spaces and ".v4" in ins.modifiers and len(ins.types) == 1 \
            and ins.types[0] in (".b32", ".f32") and addr is not None and _offset(addr) == 0 and not any(args[1:]):
        av = args[0]
        if av is None or av.form is not Form.ADDR or not in_loop:
            return "a load whose address is not a column of the chunk"
        if guard is None or guard.form is not Form.COLPRED or guard.offset != av.offset or ins.guard.negated:
            return "a load of the chunk not masked by its own column < N"
        return None
    if op == "st" and ".global" in ins.spaces and guard is not None and guard.form is Form.LEADER \
            and not ins.guard.negated and not any(args):
        return None  # thread 0 stores the row's result
    if op in ("st", "ld") and ".shared" in ins.spaces and guard is None:
        return None  # checked by _stage
    return "an unrecognised use of a thread-dependent value"


def _chain(start: str, offsets: list[int], forward: bool, defs: dict, uses: dict) -> tuple[list[A.Instruction], str,
                                                                                           A.Instruction] | None:
    """A butterfly ``x = op(x, shfl.bfly(x, o))`` over ``offsets`` from ``start`` (forward) or ending
    in ``start`` (backward): its instructions, the other end's register and the combining op."""
    out: list[A.Instruction] = []
    cur, combine = start, None
    for o in offsets:
        if forward:
            sh = [u for u in uses.get(cur, []) if u.opcode == "shfl"]
            if len(sh) != 1:
                return None
            shfl = sh[0]
            comb = [u for u in uses.get(_reg(shfl.operands[0]) or "", []) if u.opcode in _COMBINE]
            if len(comb) != 1 or len(uses.get(cur, [])) != 2 or comb[0] not in uses.get(cur, []):
                return None
            c = comb[0]
        else:
            d = defs.get(cur, [])
            if len(d) != 1 or d[0].opcode not in _COMBINE or len(d[0].operands) != 3:
                return None
            c = d[0]
            srcs = [_reg(x) for x in c.operands[1:]]
            sh = [s for s in srcs if s and len(defs.get(s, [])) == 1 and defs[s][0].opcode == "shfl"]
            if len(sh) != 1:
                return None
            shfl = defs[sh[0]][0]
            other = [s for s in srcs if s != sh[0]]
            if len(other) != 1 or _reg(shfl.operands[1]) != other[0]:
                return None
        if not (".bfly" in shfl.modifiers and ".sync" in shfl.modifiers and len(shfl.operands) == 5
                and _imm(shfl.operands[2]) == o and _imm(shfl.operands[3]) == 31 and _imm(shfl.operands[4]) == -1
                and shfl.guard is None and c.guard is None):
            return None
        if combine is not None and (c.opcode, c.types, c.modifiers) != (combine.opcode, combine.types,
                                                                         combine.modifiers):
            return None
        combine = c
        out += [shfl, c]
        cur = _reg(c.operands[0]) if forward else _reg(shfl.operands[1])
        if cur is None:
            return None
    assert combine is not None
    return out, cur, combine


def _def1(defs: dict, reg: str | None) -> A.Instruction | None:
    d = defs.get(reg or "", [])
    return d[0] if len(d) == 1 else None


def _slot(defs: dict, reg: str, w: int) -> Form | None:
    """WADDR for ``global_smem + ((tid >> 3) & (4W - 4))`` (the warp's slot), RADDR for
    ``global_smem + ((tid << 2) & (4W - 4))`` (slot tid % W), else None."""
    add = _def1(defs, reg)
    if add is None or add.opcode != "add" or add.types not in ((".s32",), (".u32",)) or add.guard is not None:
        return None
    parts = [_def1(defs, _reg(o)) for o in add.operands[1:]]
    if any(p is None for p in parts):
        return None
    base = [p for p in parts if p.opcode == "mov" and isinstance(p.operands[1], A.Sym)
            and not p.operands[1].name.startswith("%")]
    index = [p for p in parts if p not in base]
    if len(base) != 1 or len(index) != 1 or index[0].opcode != "and" or _imm(index[0].operands[2]) != 4 * w - 4:
        return None
    inner = _def1(defs, _reg(index[0].operands[1]))
    tid = _def1(defs, _reg(inner.operands[1])) if inner is not None else None
    if tid is None or tid.opcode != "mov" or _special(tid.operands[1]) != "%tid.x":
        return None
    if inner.opcode == "shr" and _imm(inner.operands[2]) == 3:
        return Form.WADDR
    if inner.opcode == "shl" and _imm(inner.operands[2]) == 2:
        return Form.RADDR
    return None


def _stage(stmts: list, at: dict[int, int], defs: dict, uses: dict, store: A.Instruction, w: int) -> Stage:
    addr = _address(store)
    if not (len(store.operands) == 2 and addr is not None and _offset(addr) == 0 and store.guard is None
            and addr.base is not None and _slot(defs, addr.base.name, w) is Form.WADDR
            and store.types in ((".b32",), (".f32",))):
        raise _refuse("a shared store that is not a warp's partial to its slot", store)
    partial = _reg(store.operands[1])
    tree = _chain(partial or "", [1, 2, 4, 8, 16], False, defs, uses) if partial else None
    if tree is None:
        raise _refuse("the stored partial is not a full warp butterfly", store)
    tree_instrs, tree_input, combine = tree
    i = at[id(store)]
    bar = next((j for j in range(i + 1, len(stmts)) if isinstance(stmts[j], A.Instruction)), None)
    if bar is None or stmts[bar].opcode not in ("bar", "barrier") or _imm(stmts[bar].operands[0]) != 0 \
            or len(stmts[bar].operands) != 1:
        raise _refuse("the partials' store is not followed by bar.sync 0", store)
    load = next((j for j in range(bar + 1, len(stmts)) if isinstance(stmts[j], A.Instruction)
                 and ".shared" in stmts[j].spaces), None)
    ld = stmts[load] if load is not None else None
    la = _address(ld) if ld is not None else None
    if ld is None or ld.opcode != "ld" or la is None or la.base is None or _offset(la) != 0 or ld.guard is not None \
            or _slot(defs, la.base.name, w) is not Form.RADDR or ld.types != store.types:
        raise _refuse("no load of the W partials after the barrier", store)
    if any(isinstance(s, A.Label) for s in stmts[i:load]) or any(
            isinstance(s, A.Instruction) and s.opcode in ("bra", "brx", "ret", "exit") for s in stmts[i:load]):
        raise _refuse("control flow inside the cross-warp stage", store)
    second = _chain(_reg(ld.operands[0]) or "", [w >> (s + 1) for s in range(w.bit_length() - 1)], True, defs, uses)
    if second is None:
        raise _refuse(f"the W partials are not combined by a {w}-lane butterfly", ld)
    chain, result, op = second
    if (op.opcode, op.types, op.modifiers) != (combine.opcode, combine.types, combine.modifiers):
        raise _refuse(f"the stage combines with {op.name}, the warp with {combine.name}", op)
    removed = [i, bar, load] + [at[id(c)] for c in chain]
    return Stage(tuple(sorted(removed)), max(removed), result, partial or "", op, _line(store), tuple(tree_instrs),
                 tree_input)


def _no_counted_effects(instrs: list[A.Instruction]) -> None:
    """Refuse what a thread count changes even where it does not depend on the thread: atomics and
    reductions (T threads add T times), calls, asynchronous copies, indirect branches."""
    for ins in instrs:
        if ins.opcode in ("call", "atom", "red", "brx") or (ins.opcode == "cp" and ".async" in ins.modifiers):
            raise _refuse(f"{ins.opcode} in the kernel", ins)


_LANE_VARYING = {"shfl", "vote", "activemask", "match", "redux"}


def _match_replicate(k: Kernel, f: _Flow) -> Shape:
    """Replication: lane l runs what threads l + 32 v (v < W) ran, each with its own copy of every
    register that depends on the thread; the shuffles of copy v are those of warp v. Refused: any
    branch, barrier or return under a thread-dependent predicate, shared memory outside the
    cross-warp stages, atomics, calls, special registers that name a thread other than %tid.x."""
    t, w, stmts, at, instrs, defs, uses = f.t, f.w, f.stmts, f.at, f.instrs, f.defs, f.uses
    tid_reads = 0
    for ins in instrs:
        specials = [x for o in ins.operands if (x := _special(o)) and x.startswith(_THREAD_SPECIALS)]
        if specials and not (specials == ["%tid.x"] and ins.opcode == "mov" and len(ins.operands) == 2):
            raise _refuse(f"{', '.join(specials)} is read", ins)
        tid_reads += len(specials)
    _no_counted_effects(instrs)
    if tid_reads == 0:
        raise _refuse("%tid.x is never read")
    varying = _thread_dependent(instrs, through_data=True)
    for ins in instrs:
        if ins.opcode in ("bra", "ret", "exit", "bar", "barrier", "trap") and _sources(ins) & varying:
            raise _refuse("control flow or a barrier under a thread-dependent predicate", ins)
        if ins.opcode in ("bar", "barrier") and len(ins.operands) != 1:
            raise _refuse("a barrier with a thread count", ins)
        if ins.opcode == "shfl" and not (".bfly" in ins.modifiers and len(ins.operands) == 5 and
                                         _imm(ins.operands[2]) in (1, 2, 4, 8, 16) and _imm(ins.operands[3]) == 31
                                         and _imm(ins.operands[4]) == -1):
            raise _refuse("a shuffle other than a full-warp butterfly of a constant offset", ins)
    stages = tuple(_stage(stmts, at, defs, uses, ins, w) for ins in instrs
                   if ins.opcode == "st" and ".shared" in ins.spaces)
    if not stages:
        raise _refuse("no cross-warp stage")
    removed = {r for st in stages for r in st.removed}
    if [i for i in instrs if (".shared" in i.spaces or i.opcode == "ldmatrix") and at[id(i)] not in removed]:
        raise _refuse("shared memory used outside the cross-warp stages")
    tid_at = next(i for i in instrs if i.opcode == "mov" and _special(i.operands[1]) == "%tid.x")
    sites = (Site(_line(tid_at), f"{w} warps per row -> 1: lane l runs threads l + 32 * v, v < {w}, with their own "
                                 "registers (the kernel keeps the row in registers: no chunk loop to re-stride)"),
             *(Site(st.line, f"cross-warp stage of {w} partials through shared memory -> registers and warp "
                             "shuffles only") for st in stages))
    return Shape(t, Strategy.REPLICATE, {}, stages, sites, _grid(k, t), frozenset(varying))


def _rename(o: object, f) -> object:
    if isinstance(o, A.Sym):
        return A.Sym(f(o.name), o.component) if o.component is None else o
    if isinstance(o, A.Vector):
        return A.Vector(tuple(_rename(e, f) for e in o.elements))
    if isinstance(o, A.Pair):
        return A.Pair(_rename(o.first, f), _rename(o.second, f))
    if isinstance(o, A.Negated):
        return A.Negated(_rename(o.operand, f))
    if isinstance(o, A.Address) and o.base is not None:
        return dataclasses.replace(o, base=_rename(o.base, f))
    return o


def _copy_names(stmts: list, w: int) -> tuple[dict[str, list[str]], list[A.VarDecl]]:
    """For each declared register, its names in copies 1..W-1, and the declarations of those names
    (``%r<273>`` -> ``%r_w1_<273>``, ...)."""
    taken = {it.name for s in stmts if isinstance(s, A.VarDecl) for it in s.items}
    names: dict[str, list[str]] = {}
    decls: list[A.VarDecl] = []
    for s in stmts:
        if not (isinstance(s, A.VarDecl) and s.space == ".reg"):
            continue
        for v in range(1, w):
            items = []
            for it in s.items:
                new = f"{it.name}_w{v}_"
                if new in taken:
                    raise _refuse(f"a register named {new} exists")
                items.append(dataclasses.replace(it, name=new))
                if it.range is None:
                    names.setdefault(it.name, []).append(new)
                else:
                    for i in range(it.range):
                        names.setdefault(f"{it.name}{i}", []).append(f"{new}{i}")
            decls.append(dataclasses.replace(s, items=tuple(items)))
    return names, decls


def _rewrite_replicate(k: Kernel, shape: Shape) -> list[object]:
    stmts = _statements(k.fn)
    w = shape.threads // WARP
    names, decls = _copy_names(stmts, w)
    varying = shape.varying
    dropped = {j for s in shape.stages for j in s.removed}
    dead = _dead(stmts, dropped, {s.source for s in shape.stages})
    lasts = {s.last: s for s in shape.stages}
    last_decl = max(j for j, s in enumerate(stmts) if isinstance(s, A.VarDecl) and s.space == ".reg")
    taken = {it.name for s in stmts if isinstance(s, A.VarDecl) for it in s.items}
    temp = next(f"%vw{n}_" for n in range(100) if f"%vw{n}_" not in taken)
    temps: list[str] = []

    def name(v: int):
        def f(n: str) -> str:
            if v == 0 or n not in varying:
                return n
            if n not in names:
                raise _refuse(f"register {n} is not declared with .reg")
            return names[n][v - 1]
        return f

    def copy(ins: A.Instruction, v: int) -> list[A.Instruction]:
        f = name(v)
        new = dataclasses.replace(ins, operands=tuple(_rename(o, f) for o in ins.operands),
                                  guard=dataclasses.replace(ins.guard, pred=f(ins.guard.pred)) if ins.guard else None)
        if v and any(_special(o) == "%tid.x" for o in ins.operands):  # virtual thread lane + 32 v
            d = new.operands[0]
            return [new, A.Instruction("add", frozenset({".u32"}), (".u32",), (), (d, d, A.IntLit(WARP * v)),
                                       order=(".u32",))]
        return [new]

    def combine(st: Stage) -> list[A.Instruction]:
        """The W partials combined in the order of the stage's butterfly (lane 0's; every lane's is
        the same value, the operation being commutative), into every copy's result."""
        out: list[A.Instruction] = []
        memo: dict[tuple[int, int], str] = {}
        offsets = [w >> (s + 1) for s in range(w.bit_length() - 1)]

        def value(step: int, r: int) -> str:
            if step == 0:
                return name(r)(st.source)
            if (step, r) not in memo:
                o = offsets[step - 1]
                a, b = value(step - 1, r), value(step - 1, r ^ o)
                d = name(0)(st.result) if step == len(offsets) and r == 0 else f"{temp}{len(temps)}"
                if d != name(0)(st.result):
                    temps.append(d)
                out.append(dataclasses.replace(st.op, operands=(A.Sym(d), A.Sym(a), A.Sym(b)), guard=None))
                memo[(step, r)] = d
            return memo[(step, r)]

        value(len(offsets), 0)
        for v in range(1, w):
            out.append(dataclasses.replace(st.op, opcode="mov", operands=(A.Sym(name(v)(st.result)),
                                                                          A.Sym(name(0)(st.result))),
                                           modifiers=frozenset(st.op.types), order=st.op.types, guard=None))
        return out

    out: list[object] = []
    for j, s in enumerate(stmts):
        if j in lasts:
            out += combine(lasts[j])
        elif j in dropped or j in dead:
            continue
        elif isinstance(s, A.Instruction) and ((set(_dests(s)) | _sources(s)) & varying
                                               or any(_special(o) == "%tid.x" for o in s.operands)):
            for v in range(w):
                out += copy(s, v)
        else:
            out.append(s)
        if j == last_decl:
            out += decls
            out.append(_TEMPS)  # replaced below, once the temporaries are counted
    at = out.index(_TEMPS)
    src_decl = next(s for s in stmts if isinstance(s, A.VarDecl) and s.space == ".reg" and any(
        it.range is not None and shape.stages[0].source.startswith(it.name) and
        shape.stages[0].source[len(it.name):].isdigit() for it in s.items))
    out[at:at + 1] = [dataclasses.replace(src_decl, items=(A.VarItem(temp, len(temps), (), None),))] if temps else []
    return out


_TEMPS = object()


def _dead(stmts: list, dropped: set[int], kept: set[str]) -> set[int]:
    """Pure instructions whose results nobody reads once ``dropped`` is gone (and were read before);
    the registers ``kept`` are read by what replaces them."""
    def readers(skip: set[int]) -> dict[str, int]:
        out: dict[str, int] = {}
        for j, s in enumerate(stmts):
            if j in skip or not isinstance(s, A.Instruction):
                continue
            srcs = [x for o in (s.operands[1:] if _dests(s) else s.operands) for x in _syms(o)]
            if s.guard is not None:
                srcs.append(s.guard.pred)
            for x in srcs:
                out[x] = out.get(x, 0) + 1
        return out

    before = readers(set())
    gone = set(dropped)
    while True:
        now = readers(gone)
        more = {j for j, s in enumerate(stmts) if j not in gone and isinstance(s, A.Instruction)
                and s.opcode in _PURE and s.guard is None and _dests(s)
                and all(before.get(d) and not now.get(d) and d not in kept for d in _dests(s))}
        if not more:
            return gone - set(dropped)
        gone |= more


def find(k: Kernel) -> list[Site]:
    try:
        return list(match(k).sites)
    except RuleError:
        return []


def rewrite(k: Kernel) -> A.Function:
    shape = match(k)
    stmts = _statements(k.fn)
    if shape.strategy is Strategy.REPLICATE:
        return _finish(k, _rewrite_replicate(k, shape))
    dropped = {j for s in shape.stages for j in s.removed}
    dead = _dead(stmts, dropped, {s.source for s in shape.stages})
    lasts = {s.last: s for s in shape.stages}
    out: list[object] = []
    for j, s in enumerate(stmts):
        if j in lasts:
            st = lasts[j]
            out.append(dataclasses.replace(st.op, opcode="mov", operands=(A.Sym(st.result), A.Sym(st.source)),
                                           modifiers=frozenset(st.op.types), order=st.op.types, guard=None))
        elif j in dropped or j in dead:
            continue
        else:
            out.append(shape.rescale.get(j, s))
    return _finish(k, out)


def _finish(k: Kernel, out: list[object]) -> A.Function:
    directives = tuple(dataclasses.replace(d, values=(WARP,) + d.values[1:]) if d.name == ".reqntid" else d
                       for d in k.fn.directives)
    return dataclasses.replace(k.fn, directives=directives,
                               body=dataclasses.replace(k.fn.body, statements=tuple(out)))


def launch(k: Kernel) -> str:
    return f"// volta-launch: grid={match(k).grid} block=({WARP}, 1, 1) shared=0"
