"""One table of facts about PTX opcodes and special registers, read by the machine, the program
loader, the checker's shadows and the symbolic grid.

Each opcode has an `Effect` (what it may do beyond writing its destination registers), a
`LaneScope` (whose operands its result depends on) and whether its first two operands commute.
The questions the rest of Volta asks are derived from these facts in one place:
- `register_only`: registers in, registers out, lane-local (a data-dependent choice between such
  instructions changes values but not which memory is touched, Program.region_pure);
- `purity`: how an instruction bears on the machine's endless-loop fingerprint;
- `touches_memory_or_sync`: a data-dependent guard on it makes the access pattern input-dependent.
An opcode missing from the table is treated as having unknown effects (never as pure).

Memory order and scope of an access (PTX 8.4 morally strong operations, 8.7 release/acquire
patterns) are derived here too, so that the memory's access events carry them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum, IntEnum, IntFlag

from ptx_parser import ast as A


class Effect(Enum):
    NONE = "none"  # registers only
    LOAD = "load"  # reads memory another thread may change
    STORE = "store"
    ATOMIC = "atomic"
    SYNC = "sync"  # barriers, mbarriers, fences, warp synchronisation
    ASYNC = "async"  # issues or completes asynchronous operations (cp.async, wgmma, tcgen05)
    CONTROL = "control"  # branches, calls
    EXIT = "exit"  # leaves the kernel (exit, ret, trap)
    HINT = "hint"  # performance hints with no value (prefetch, nanosleep, setmaxnreg, ...)
    OTHER = "other"  # not modelled in detail: assume anything


class LaneScope(Enum):
    LANE = "lane"  # a lane's result depends on its own operands only
    PERMUTE = "permute"  # a lane's result is another lane's operand (shfl, PTX 9.7.8.6)
    WARP = "warp"  # a function of the whole warp's operands (match, mma, ldmatrix, ...)
    WARP_UNIFORM = "warp_uniform"  # ... and the same on every lane of the warp (vote, redux, activemask)
    MULTI_WARP = "multi_warp"  # depends on several warps' registers (wgmma, tcgen05): opaque results


@dataclass(frozen=True)
class OpcodeFacts:
    effect: Effect
    lanes: LaneScope = LaneScope.LANE
    commutative: bool = False  # the first two source operands commute (fma/mad: the factors)
    symmetric: bool = False  # every source operand commutes with every other (3-input min/max, 9.7.3.10-11)
    memory_result: bool = False  # destination values come from memory or an asynchronous unit


_E, _L = Effect, LaneScope


def _facts(effect: Effect, names: str, **kw) -> dict[str, OpcodeFacts]:
    return {n: OpcodeFacts(effect, **kw) for n in names.split()}


OPCODES: dict[str, OpcodeFacts] = {
    # arithmetic, logic, data movement between registers (PTX 9.7.1-9.7.9)
    **_facts(_E.NONE, "sub subc mul24 mad24 madc div rem abs neg sad popc clz bfind fns brev bfe bfi bmsk szext "
                      "dp4a dp2a not cnot lop3 shf shl shr prmt mov cvt cvta setp selp slct set testp copysign rcp "
                      "sqrt rsqrt sin cos lg2 ex2 tanh isspacep"),
    **_facts(_E.NONE, "add addc mul mad fma and or xor", commutative=True),
    **_facts(_E.NONE, "min max", commutative=True, symmetric=True),
    # memory (9.7.9.8-9.7.9.16, 9.7.13.4-5)
    **_facts(_E.LOAD, "ld ldu tex tld4 suld", memory_result=True),
    **_facts(_E.STORE, "st sust"),
    **_facts(_E.ATOMIC, "atom", memory_result=True),
    **_facts(_E.ATOMIC, "red"),
    "ldmatrix": OpcodeFacts(_E.LOAD, _L.WARP, memory_result=True),
    "stmatrix": OpcodeFacts(_E.STORE, _L.WARP),
    # warp-level data movement and collectives (9.7.8.x, 9.7.13.9-13)
    **_facts(_E.NONE, "shfl", lanes=_L.PERMUTE),
    **_facts(_E.NONE, "match elect mma movmatrix", lanes=_L.WARP),
    **_facts(_E.NONE, "vote redux activemask", lanes=_L.WARP_UNIFORM),
    # synchronisation (9.7.13)
    **_facts(_E.SYNC, "bar barrier mbarrier fence membar griddepcontrol"),
    # asynchronous units (9.7.9.25, 9.7.15, 9.7.16)
    "cp": OpcodeFacts(_E.ASYNC, memory_result=True),
    "wgmma": OpcodeFacts(_E.ASYNC, _L.MULTI_WARP, memory_result=True),
    "tcgen05": OpcodeFacts(_E.ASYNC, _L.MULTI_WARP, memory_result=True),
    "tensormap": OpcodeFacts(_E.ASYNC),
    # control flow (9.7.12)
    **_facts(_E.CONTROL, "bra brx"),
    # a call the loader could not inline (symexec.calls): an external function's effects, a trap
    "call": OpcodeFacts(_E.OTHER, _L.LANE),
    **_facts(_E.EXIT, "exit ret trap"),
    **_facts(_E.HINT, "prefetch prefetchu applypriority createpolicy discard nanosleep pmevent setmaxnreg"),
}

_UNKNOWN = OpcodeFacts(Effect.OTHER, LaneScope.MULTI_WARP)

#: Opcodes that leave the kernel.
EXITS = frozenset(op for op, f in OPCODES.items() if f.effect is Effect.EXIT)
#: Barrier instructions: which threads arrive decides whether a barrier instance completes, and
#: with which count (bar/barrier 9.7.13.1, bar.warp.sync 9.7.13.2, mbarrier 9.7.13.15).
BARRIERS = frozenset({"bar", "barrier", "mbarrier"})
#: Instructions whose outcome depends on which threads execute them together: the barriers, and the
#: warp collectives (shfl/vote/match/redux/elect/activemask 9.7.8.6 and 9.7.13.9-13, mma/ldmatrix/
#: stmatrix/movmatrix .sync.aligned 9.7.14, wgmma/tcgen05 .sync.aligned 9.7.15-16): for the .sync
#: forms every thread of the membermask must execute the same instruction, so an input that splits a
#: warp between two paths is undefined behaviour that running each path with every lane never shows.
CONVERGENT = BARRIERS | frozenset(op for op, f in OPCODES.items() if f.lanes is not LaneScope.LANE)


def facts(opcode: str) -> OpcodeFacts:
    return OPCODES.get(opcode, _UNKNOWN)


def register_only(opcode: str) -> bool:
    """Only computes lane-local register values (no memory, synchronisation or control effect)."""
    f = facts(opcode)
    return f.effect is Effect.NONE and f.lanes is LaneScope.LANE


def value_guarded(ins: A.Instruction) -> bool:
    """A guarded register-only instruction (`@p mov r, 2048`): its guard chooses a register value, not an
    effect; with p computed from data the value written depends on data though the operands do not (an
    implicit flow: the machine's policy.on_value_guard and the checker's control taint both read this)."""
    return ins.guard is not None and ins.opcode != "bra" and register_only(ins.opcode)


_MEMORY_OR_SYNC = frozenset({Effect.LOAD, Effect.STORE, Effect.ATOMIC, Effect.SYNC, Effect.ASYNC, Effect.EXIT,
                             Effect.OTHER})


def region_neutral(opcode: str) -> bool:
    """May sit between a data-dependent branch and its reconvergence point without making the
    choice matter beyond register values: register-only instructions and the branches of the
    region itself."""
    return opcode == "bra" or register_only(opcode)


def touches_memory_or_sync(opcode: str) -> bool:
    """Accesses memory, synchronises, issues asynchronous work or exits: which lanes execute it
    decides the access pattern."""
    return facts(opcode).effect in _MEMORY_OR_SYNC


# ---------------------------------------------------------------------- special registers (PTX 10)

# Values that depend on timing or placement, not on the launch: another run may see others.
# %warpid/%nwarpid are physical warp ids (10.12), %smid/%nsmid the multiprocessor (10.19-20).
SCHEDULE_DEPENDENT = frozenset({"%clock", "%clock64", "%clock_hi", "%globaltimer", "%globaltimer_lo",
                                "%globaltimer_hi", "%smid", "%nsmid", "%warpid", "%nwarpid", "%gridid"})


def reads_schedule_dependent(ins: A.Instruction) -> bool:
    return any(isinstance(o, A.Sym) and o.name in SCHEDULE_DEPENDENT for o in _leaves(ins.operands))


def _leaves(ops):
    for o in ops:
        if isinstance(o, A.Vector):
            yield from _leaves(o.elements)
        elif isinstance(o, A.Negated):
            yield o.operand
        elif isinstance(o, A.Address):
            if o.base is not None:
                yield o.base
        else:
            yield o


# ---------------------------------------------------------------------- the endless-loop fingerprint


class Purity(IntEnum):
    """How an instruction bears on Machine's endless-loop detection (ordered: the window keeps the max)."""

    PURE = 0  # registers in, registers out
    READS = 1  # also reads memory another thread may change (a spin-wait may end)
    EFFECT = 2  # anything else: stores, atomics, synchronisation, asynchronous units, timers


_SPACE = re.compile(r"^\.(param|const)(::[a-z_]+)?$")


def purity(ins: A.Instruction) -> Purity:
    if reads_schedule_dependent(ins):
        return Purity.EFFECT
    if region_neutral(ins.opcode):
        return Purity.PURE
    if ins.opcode in ("ld", "ldu"):
        return Purity.PURE if any(_SPACE.match(m) for m in ins.modifiers) else Purity.READS
    return Purity.EFFECT


# ---------------------------------------------------------------------- order and scope of accesses


class Scope(IntEnum):
    """Scope of a strong operation (PTX 8.4); NONE for a weak one."""

    NONE = 0
    CTA = 1
    CLUSTER = 2
    GPU = 3
    SYS = 4


class Order(IntFlag):
    """Release/acquire semantics of a strong access (PTX 8.4: .release, .acquire, .acq_rel)."""

    NONE = 0
    RELEASE = 1
    ACQUIRE = 2


_SCOPES = {".cta": Scope.CTA, ".cluster": Scope.CLUSTER, ".gpu": Scope.GPU, ".sys": Scope.SYS}
_STRONG = frozenset({".relaxed", ".acquire", ".release", ".acq_rel", ".volatile", ".mmio"})


def order(ins: A.Instruction | None) -> Order:
    if ins is None:
        return Order.NONE
    m = ins.modifiers
    return (Order.RELEASE if (".release" in m or ".acq_rel" in m) else Order.NONE) | \
        (Order.ACQUIRE if (".acquire" in m or ".acq_rel" in m) else Order.NONE)


def strength(ins: A.Instruction | None) -> Scope:
    """Scope.NONE for a weak access; otherwise the scope of a strong one (PTX 8.4: atomics default
    to .gpu; .volatile is .relaxed.sys)."""
    if ins is None:
        return Scope.NONE
    if facts(ins.opcode).effect is Effect.ATOMIC:
        return max((_SCOPES.get(m, Scope.NONE) for m in ins.modifiers), default=Scope.NONE) or Scope.GPU
    if ins.modifiers & _STRONG:
        if ".volatile" in ins.modifiers:
            return Scope.SYS
        return max((_SCOPES.get(m, Scope.NONE) for m in ins.modifiers), default=Scope.NONE) or Scope.SYS
    return Scope.NONE


def is_atomic(ins: A.Instruction | None) -> bool:
    return ins is not None and facts(ins.opcode).effect is Effect.ATOMIC
