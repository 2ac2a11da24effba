"""The interface instruction handlers run against, the handler registry and type helpers.

`Exec` is what one instruction sees: the lanes that execute it (a boolean mask over the thread
slots of a group of CTAs; lanes are laid out warp by warp, 32 per warp) and operations to read and
write operands and memory. The executor (symexec) implements it for concrete values; values are
numpy arrays of raw bits, one element per lane, or 0-d arrays when uniform across lanes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ptx_parser import ast as A
from semantics.errors import Unsupported
from semantics.formats import FloatFormat, get_format

__all__ = ["Exec", "HANDLERS", "handler", "TypeInfo", "tinfo", "Unsupported", "check_mods", "UINT"]

UINT = {1: np.bool_, 8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


@dataclass(frozen=True)
class TypeInfo:
    """A PTX fundamental type (PTX 5.2.1): kind b/u/s/f/pred, width in bits, float format."""

    name: str
    kind: str
    width: int
    fmt: FloatFormat | None = None
    lanes: int = 1  # 2 for .f16x2/.bf16x2, 4 for .e4m3x4 ...

    @property
    def signed(self) -> bool:
        return self.kind == "s"

    @property
    def dtype(self):
        return UINT[self.width]


_FLOAT_NAMES = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "f64": 64, "e4m3": 8, "e5m2": 8,
                "e2m1": 4, "e2m3": 8, "e3m2": 8}


def tinfo(t: str) -> TypeInfo:
    name = t.lstrip(".")
    cached = _TYPES.get(name)
    if cached is not None:
        return cached
    if name == "pred":
        info = TypeInfo(name, "pred", 1)
    elif name[0] in "bus" and name[1:].isdigit():
        info = TypeInfo(name, name[0], int(name[1:]))
    elif name in _FLOAT_NAMES:
        w = _FLOAT_NAMES[name]
        info = TypeInfo(name, "f", 32 if name == "tf32" else w, get_format(name))
    elif "x" in name and name.split("x")[0] in _FLOAT_NAMES:
        base, n = name.split("x")
        w = _FLOAT_NAMES[base] * int(n)
        info = TypeInfo(name, "f", max(8, w), get_format(base), int(n))
    elif name in ("u16x2", "s16x2", "u8x4", "s8x4"):
        base, n = name.split("x")
        info = TypeInfo(name, base[0], 32, None, int(n))
    else:
        raise Unsupported(f"type .{name}")
    _TYPES[name] = info
    return info


_TYPES: dict[str, TypeInfo] = {}


class Exec(ABC):
    """One instruction's view of the machine (implemented by symexec)."""

    n: int  # lanes in the group arrays
    mask: np.ndarray  # bool (n,): lanes executing this instruction (guard applied)
    #: elect.sync's leader: the lowest active lane, or the highest (check mode; the manual leaves it open)
    elect_highest: bool = False

    @abstractmethod
    def read(self, op: A.Operand, ty: str) -> np.ndarray:
        """Operand bits as the unsigned dtype of `ty`'s width (bool for .pred); shape () or (n,)."""

    @abstractmethod
    def write(self, op: A.Operand, value: np.ndarray, ty: str) -> None:
        """Write `value` (bits of `ty`) to a destination operand on the executing lanes."""

    @abstractmethod
    def address(self, op: A.Operand) -> tuple[str | None, np.ndarray]:
        """Effective address of an address operand; the space of a named variable if known."""

    @abstractmethod
    def load(self, space: str, addrs: np.ndarray, nbytes: int, ins: A.Instruction) -> np.ndarray:
        """(n, nbytes) uint8 read on the executing lanes (other rows are zero)."""

    @abstractmethod
    def store(self, space: str, addrs: np.ndarray, data: np.ndarray, ins: A.Instruction) -> None:
        """Write (n, nbytes) uint8 rows on the executing lanes."""

    @abstractmethod
    def atomic(self, space: str, addrs: np.ndarray, nbytes: int, update: Callable[[np.ndarray, np.ndarray], np.ndarray],
               operand: np.ndarray, ins: A.Instruction) -> np.ndarray:
        """Read-modify-write per executing lane, in lane order; returns the old values (n,)."""

    @abstractmethod
    def special(self, name: str, component: str | None) -> np.ndarray:
        """A special register (PTX 10), e.g. %tid.x, %laneid."""

    @abstractmethod
    def generic_base(self, space: str) -> int:
        """Where a state-space window starts in the generic address space (cvta)."""

    @abstractmethod
    def in_space(self, space: str, generic: np.ndarray) -> np.ndarray:
        """isspacep: whether generic addresses fall in a space's window."""

    def lane_source(self, src: np.ndarray) -> None:
        """Cross-lane data movement: lane l's result is lane src[l]'s operand (shfl). Lets the
        checker track value identity across lanes; no effect on values."""

    def store_sources(self, lane: np.ndarray, reg: np.ndarray, byte: np.ndarray) -> None:
        """A warp-collective store (stmatrix) writes, at stored byte j of lane l, byte `byte[l, j]`
        of source register `reg[l, j]` (the instruction's register operands in order) of lane
        `lane[l, j]`. Lets the checker keep value identity through the store; no effect on values."""

    def note_undefined(self, lanes: np.ndarray, what: str, ins: A.Instruction) -> None:
        """Lanes where the result is undefined by the manual (e.g. integer division by zero)."""


Handler = Callable[[A.Instruction, Exec], None]
HANDLERS: dict[str, Handler] = {}


def handler(*opcodes: str) -> Callable[[Handler], Handler]:
    def deco(fn: Handler) -> Handler:
        for op in opcodes:
            HANDLERS[op] = fn
        return fn

    return deco


def check_mods(ins: A.Instruction, allowed: frozenset[str] | set[str]) -> None:
    """Refuse modifiers a handler does not model (never guess their meaning)."""
    extra = ins.modifiers - allowed - set(ins.types)
    if extra:
        raise Unsupported(f"{ins.name}: modifier(s) {' '.join(sorted(extra))}", ins)


def one_type(ins: A.Instruction) -> TypeInfo:
    if len(ins.types) != 1:
        raise Unsupported(f"{ins.name}: expected one type modifier", ins)
    return tinfo(ins.types[0])


def rounding(ins: A.Instruction, default: str | None = "rn") -> str | None:
    for r in ("rn", "rz", "rm", "rp", "rna", "rni", "rzi", "rmi", "rpi"):
        if "." + r in ins.modifiers:
            return r
    return default
