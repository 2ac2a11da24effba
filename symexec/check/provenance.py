"""Which kernel pointer parameter a global address register is derived from, read off the program.

The grid shadow names the buffer of an access by where its lanes' concrete addresses fall in this
run's memory. An access that no lane performs in this run (its guard false everywhere: rmsnorm's last
column block when N is below it) has no such address: the address it would use lies past its buffer's
end, inside whatever buffer this run's layout placed next. For those, the buffer is the pointer
parameter the address register is computed from, found here by following the register's definitions
back through the program (every instruction that writes it, loops included) to `ld.param` of kernel
parameters (PTX ISA 5.1.6.1: kernel parameters are read with ld.param).

The answer is a set of parameter positions, or None when the address may also come from somewhere no
parameter explains: a pointer loaded from memory, a variable's address, a special register of 64
bits, a conversion from another state space (cvta, PTX ISA 9.7.9.16). 64-bit registers only are
followed: a narrower value cannot carry a 64-bit global pointer (it is an index or a mask).
"""

from __future__ import annotations

from semantics.errors import Unsupported
from semantics.ptx.memory import space_of

from ..program import Program, _dest_names, _operand_names

__all__ = ["PointerOrigins"]


class PointerOrigins:
    """Per program: register name -> the kernel parameter positions its 64-bit value may come from."""

    def __init__(self, prog: Program) -> None:
        self.prog = prog
        self._params = {p.name: i for i, p in enumerate(prog.params)}
        self._defs: dict[str, list[int]] = {}
        for pc, ins in enumerate(prog.code):
            if ins.operands:
                for name in _dest_names(ins.operands[0]):
                    self._defs.setdefault(name, []).append(pc)
        self._memo: dict[str, frozenset[int] | None] = {}

    def _wide(self, name: str) -> bool:
        d = self.prog.reg(name)
        return d is not None and d.width == 64

    def params_of(self, reg: str) -> frozenset[int] | None:
        """The parameter positions `reg` is computed from (through any arithmetic), or None if it may
        come from anything else that can hold a pointer."""
        if reg in self._memo:
            return self._memo[reg]
        found: set[int] = set()
        seen: set[str] = set()
        todo = [reg]
        got: frozenset[int] | None = None
        while todo:
            r = todo.pop()
            if r in seen:
                continue
            seen.add(r)
            if not self._wide(r):
                if self.prog.reg(r) is None:  # a special register or a variable's address
                    break
                continue
            defs = self._defs.get(r)
            if not defs:  # never written: undefined contents
                break
            unknown = False
            for pc in defs:
                ins = self.prog.code[pc]
                if ins.opcode == "ld" and _space(ins) == ".param":
                    base = ins.operands[1].base.name if getattr(ins.operands[1], "base", None) else None
                    if base in self._params:
                        found.add(self._params[base])
                        continue
                    unknown = True
                elif ins.opcode == "cvta" and _space(ins) == ".global":  # generic <-> global: one pointer
                    todo.extend(n for n in _operand_names(ins.operands[1:]) if self.prog.reg(n) is not None)
                elif ins.opcode in ("ld", "ldu", "atom", "cvta", "mapa", "shfl", "prmt", "call") or \
                        ins.opcode.startswith(("tex", "suld", "cp", "mbarrier", "tcgen05", "wgmma")):
                    unknown = True
                else:
                    for name in _operand_names(ins.operands[1:]):
                        if self.prog.reg(name) is None:  # a variable, a special register, a label
                            unknown = unknown or self._may_point(name)
                        else:
                            todo.append(name)
                if unknown:
                    break
            if unknown:
                break
        else:
            got = frozenset(found)
        self._memo[reg] = got
        return got

    def _may_point(self, name: str) -> bool:
        """A name that is not a register: a variable's address may be a pointer; %ctaid and the like,
        32-bit special registers, cannot; a 64-bit special (%clock64, %globaltimer) is no pointer either."""
        return name in self.prog.variables or not name.startswith("%")


def _space(ins) -> str | None:
    """The state space `ins` names (semantics.ptx.memory.space_of), None for one not modelled (.param::func)."""
    try:
        return space_of(ins)
    except Unsupported:
        return None
