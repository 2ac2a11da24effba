"""What `volta parse` reports about a module: kernels, instruction counts, opcodes, modifiers."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field

from ptx_parser import ast as A


@dataclass
class FunctionSummary:
    name: str
    kind: str  # "entry" or "func"
    params: int
    instructions: int
    directives: dict[str, list[int]] = field(default_factory=dict)


@dataclass
class ModuleSummary:
    file: str
    version: str | None
    target: list[str]
    address_size: int | None
    functions: list[FunctionSummary]
    instructions: int
    opcodes: dict[str, int]
    modifiers: dict[str, int]
    sections: list[str]
    source_files: dict[int, str]

    @property
    def kernels(self) -> list[FunctionSummary]:
        return [f for f in self.functions if f.kind == "entry"]

    def to_json(self) -> dict:
        d = asdict(self)
        d["ok"] = True
        d["kernels"] = [f.name for f in self.kernels]
        return d


def summarize(module: A.Module) -> ModuleSummary:
    opcodes: Counter[str] = Counter()
    modifiers: Counter[str] = Counter()
    functions: list[FunctionSummary] = []
    total = 0
    for fn in module.functions:
        if fn.body is None:
            continue
        ins = fn.instructions()
        total += len(ins)
        for i in ins:
            opcodes[i.opcode] += 1
            modifiers.update(i.modifiers)
        functions.append(FunctionSummary(
            fn.name, fn.kind.lstrip("."), len(fn.params or ()), len(ins),
            {d.name: list(d.values) for d in fn.directives if d.name != ".pragma"},
        ))
    return ModuleSummary(
        file=module.filename,
        version=module.version,
        target=list(module.target),
        address_size=module.address_size,
        functions=functions,
        instructions=total,
        opcodes=dict(opcodes.most_common()),
        modifiers=dict(modifiers.most_common()),
        sections=[s.name for s in module.sections],
        source_files=module.files,
    )
