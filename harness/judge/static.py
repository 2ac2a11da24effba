"""The static gate: what a candidate's PTX may contain, judged against the contract's Triton PTX.

Every rule compares the candidate with the *reference* (Triton's own PTX for the contract and
target, harness.compile): the candidate may do what the reference does, plus anything that cannot
carry state or information between launches or from the timer into the results.

- entry name and parameters: the kernel the harness launches is the reference's entry; its
  parameters must carry the contract's arguments (harness.emulate.check_signature);
- target: the reference's, or a plain (not arch-specific) target of a capability it can run
  (PTX ISA 12, "PTX Module Directives: .target": code for sm_XY runs on later capabilities; the
  `a` targets are not forward compatible);
- no `.global` data the reference does not declare identically: writable module state survives
  between launches and can cache results keyed on input pointers (harness-integrity class 8);
- no timer or placement special register the reference does not read (PTX ISA 10: %clock,
  %clock64, %globaltimer, %smid, %nsmid, %warpid, %nwarpid, %gridid, %pm0..7): a kernel could
  behave differently when timed (class 9);
- no call to a function the candidate does not define and the reference does not call
  (device-side launches through cudaLaunchDeviceV2, vprintf, ...), no indirect call;
- no tensor-core instruction whose operands have less precision than the reference's, or than
  the contract's inputs when the reference has none (class 6); a conversion to a floating type
  the reference never converts to is flagged for a person.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterator

from ptx_parser import ast as A
from symexec.opcodes import SCHEDULE_DEPENDENT

from .. import dtypes as _dt
from ..compile import CompiledPTX
from ..contract import Contract
from ..emulate import check_signature
from .report import Problem, Reason, Severity

#: Special registers whose value depends on time or placement (PTX ISA 10), plus the
#: performance-monitor counters %pm0..%pm7 (and their 64-bit forms).
FORBIDDEN_SPECIAL = SCHEDULE_DEPENDENT | {f"%pm{i}" for i in range(8)} | {f"%pm{i}_64" for i in range(8)}

#: (exponent bits, fraction bits) of each tensor-core operand format (PTX ISA 5.2.5, 9.7.14-16).
FORMAT_BITS: dict[str, tuple[int, int]] = {
    "f64": (11, 52), "f32": (8, 23), "tf32": (8, 10), "f16": (5, 10), "bf16": (8, 7),
    "e4m3": (4, 3), "e5m2": (5, 2), "e3m2": (3, 2), "e2m3": (2, 3), "e2m1": (2, 1),
}
#: tcgen05.mma .kind -> the operand formats it may carry (the instruction descriptor picks one).
_TCGEN05_KINDS: dict[str, tuple[str, ...]] = {
    "kind::tf32": ("tf32",), "kind::f16": ("f16", "bf16"), "kind::f8f6f4": ("e4m3", "e5m2", "e3m2", "e2m3", "e2m1"),
    "kind::mxf8f6f4": ("e4m3", "e5m2", "e3m2", "e2m3", "e2m1"), "kind::mxf4": ("e2m1",),
    "kind::mxf4nvf4": ("e2m1",), "kind::i8": ("s8",),
}
_INT_FORMATS = {"s8", "u8", "s4", "u4", "b1"}
_CONTRACT_FORMAT = {"fp64": "f64", "fp32": "f32", "fp16": "f16", "bf16": "bf16", "fp8e4m3": "e4m3", "fp8e5m2": "e5m2"}
_FLOAT_TYPES = {".f16", ".f16x2", ".bf16", ".bf16x2", ".tf32", ".f32", ".f64", ".e4m3x2", ".e5m2x2", ".e2m1x2",
                ".e2m3x2", ".e3m2x2", ".e4m3x4", ".e5m2x4"}
_SM = re.compile(r"^sm_(\d+)([af]?)$")


@dataclass(frozen=True)
class MmaUse:
    """One tensor-core instruction: the formats its A/B operands may have and its accumulator's."""

    operands: tuple[str, ...]
    accumulator: str | None
    where: str


@dataclass
class PtxFacts:
    """What the gate compares, read off one module's kernel."""

    target: str | None
    entry: str
    specials: dict[str, str] = field(default_factory=dict)  # register -> first PTX line reading it
    callees: dict[str, str] = field(default_factory=dict)  # called name -> line
    indirect_calls: list[str] = field(default_factory=list)
    globals: dict[str, A.VarDecl] = field(default_factory=dict)
    mma: list[MmaUse] = field(default_factory=list)
    float_conversions: dict[str, str] = field(default_factory=dict)  # destination type -> line


def _statements(block: A.Block | None) -> Iterator[A.Instruction | A.VarDecl]:
    if block is None:
        return
    for s in block.statements:
        if isinstance(s, A.Block):
            yield from _statements(s)
        elif isinstance(s, (A.Instruction, A.VarDecl)):
            yield s


def _syms(ops) -> Iterator[A.Sym]:
    for o in ops:
        if isinstance(o, A.Sym):
            yield o
        elif isinstance(o, (A.Vector, A.ParenList)):
            yield from _syms(o.elements)
        elif isinstance(o, A.Negated):
            yield o.operand
        elif isinstance(o, A.Pair):
            yield from _syms((o.first, o.second))
        elif isinstance(o, A.Address) and isinstance(o.base, A.Sym):
            yield o.base


def _where(ins: A.Instruction | A.VarDecl) -> str:
    return str(ins.span) if ins.span is not None else "?"


def _mma_use(ins: A.Instruction) -> MmaUse | None:
    """The operand formats of mma/wgmma.mma_async/tcgen05.mma (types: D, A, B[, C] for mma;
    D, A, B for wgmma; the .kind for tcgen05)."""
    types = [t.lstrip(".") for t in ins.types]
    if ins.opcode == "mma" or (ins.opcode == "wgmma" and ".mma_async" in ins.modifiers):
        if len(types) < 3:
            return None
        return MmaUse(tuple(dict.fromkeys(types[1:3])), types[0], _where(ins))
    if ins.opcode == "tcgen05" and ".mma" in ins.modifiers:
        kinds = [m.lstrip(".") for m in ins.modifiers if m.startswith(".kind::")]
        formats = tuple(f for k in kinds for f in _TCGEN05_KINDS.get(k, (k,)))
        return MmaUse(formats or ("?",), "f32", _where(ins))
    return None


def facts(module: A.Module, entry: str) -> PtxFacts:
    """The facts of ``entry`` in ``module`` (and of the functions it may call in the module)."""
    fn = module.function(entry)
    out = PtxFacts(module.arch, entry)
    for v in module.variables:
        if v.space == ".global":
            for item in v.items:
                out.globals[item.name] = v
    defined = {f.name for f in module.functions if f.body is not None}
    bodies = [fn] + [f for f in module.functions if f.body is not None and f.name != entry and not f.is_kernel]
    for f in bodies:
        for s in _statements(f.body):
            if isinstance(s, A.VarDecl):
                if s.space == ".global":
                    for item in s.items:
                        out.globals[item.name] = s
                continue
            for sym in _syms(s.operands):
                if sym.name in FORBIDDEN_SPECIAL:
                    out.specials.setdefault(sym.name, _where(s))
            if s.opcode == "call":
                target = next((o for o in s.operands if isinstance(o, A.Sym)), None)
                if target is None or target.name.startswith("%"):
                    out.indirect_calls.append(_where(s))
                elif target.name not in defined:
                    out.callees.setdefault(target.name, _where(s))
            use = _mma_use(s)
            if use is not None:
                out.mma.append(use)
            if s.opcode == "cvt" and s.types and s.types[0] in _FLOAT_TYPES:
                out.float_conversions.setdefault(s.types[0], _where(s))
    return out


def _dominates(a: str, b: str) -> bool:
    """Format ``a`` has at least ``b``'s range and precision."""
    if a == b:
        return True
    if a in FORMAT_BITS and b in FORMAT_BITS:
        return FORMAT_BITS[a][0] >= FORMAT_BITS[b][0] and FORMAT_BITS[a][1] >= FORMAT_BITS[b][1]
    return False


def _allowed_formats(contract: Contract, ref: PtxFacts) -> tuple[set[str], set[str]]:
    """(operand formats, accumulator formats) a candidate's tensor-core instructions must dominate
    one of: the reference's, or the contract's floating inputs (accumulating in fp32) when the
    reference has no tensor-core instruction."""
    if ref.mma:
        return ({f for u in ref.mma for f in u.operands}, {u.accumulator for u in ref.mma if u.accumulator})
    inputs = {_CONTRACT_FORMAT[_dt.canonical(t.dtype)] for t in contract.tensors
              if t.is_input and _dt.canonical(t.dtype) in _CONTRACT_FORMAT}
    return inputs or {"f32"}, {"f32"}


def _specials(cand: PtxFacts, ref: PtxFacts) -> list[Problem]:
    return [Problem(Reason.SPECIAL_REGISTER, f"reads {reg}, which the reference does not", where=line)
            for reg, line in sorted(cand.specials.items()) if reg not in ref.specials]


def _calls(cand: PtxFacts, ref: PtxFacts) -> list[Problem]:
    out = [Problem(Reason.FOREIGN_CALL, f"calls {name}, which the candidate does not define and the reference "
                   "does not call", where=line)
           for name, line in sorted(cand.callees.items()) if name not in ref.callees]
    if cand.indirect_calls and not ref.indirect_calls:
        out.append(Problem(Reason.FOREIGN_CALL, "indirect call through a register (the callee cannot be checked)",
                           where=cand.indirect_calls[0]))
    return out


def _global_data(cand: PtxFacts, ref: PtxFacts) -> list[Problem]:
    out = []
    for name, decl in sorted(cand.globals.items()):
        mine = ref.globals.get(name)
        if mine is None or mine != decl:
            what = "declares" if mine is None else "declares differently from the reference"
            out.append(Problem(Reason.GLOBAL_DATA, f"{what} .global variable '{name}' (state that outlives a "
                               "launch)", where=_where(decl)))
    return out


def _precision(contract: Contract, cand: PtxFacts, ref: PtxFacts) -> list[Problem]:
    operands, accumulators = _allowed_formats(contract, ref)
    out = []
    for use in cand.mma:
        ok = all(f not in _INT_FORMATS or f in operands for f in use.operands) and any(
            _dominates(f, a) for f in use.operands for a in operands)
        if not ok:
            out.append(Problem(Reason.PRECISION_DOWNGRADE, f"tensor-core operands {'/'.join(use.operands)}; the "
                               f"reference's precision is {'/'.join(sorted(operands))}", where=use.where))
        elif use.accumulator and not any(_dominates(use.accumulator, a) for a in accumulators):
            out.append(Problem(Reason.PRECISION_DOWNGRADE, f"accumulates in {use.accumulator}; the reference in "
                               f"{'/'.join(sorted(accumulators))}", where=use.where))
    for ty, line in sorted(cand.float_conversions.items()):
        if ty not in ref.float_conversions:
            out.append(Problem(Reason.NARROWING_CONVERSION, f"converts to {ty}, which the reference never does",
                               Severity.FLAG, line))
    return out


def _target(cand: str | None, ref: str) -> list[Problem]:
    if cand == ref:
        return []
    mc, mr = _SM.match(cand or ""), _SM.match(ref)
    if mc and mr and not mc.group(2) and int(mc.group(1)) <= int(mr.group(1)):
        return []
    return [Problem(Reason.TARGET, f".target {cand or '(none)'} does not run as {ref} (the contract's target; a "
                    f"plain sm_XY of a capability up to {ref} would)")]


def _block_directives(kernel: A.Function, block: tuple[int, int, int]) -> list[Problem]:
    """.reqntid must be the launch's block, .maxntid at least it (PTX ISA 11.4.2-3): the driver
    refuses the launch otherwise."""
    threads = block[0] * block[1] * block[2]
    where = str(kernel.span) if kernel.span else None
    out = []
    req = kernel.directive(".reqntid")
    if req is not None and req.values and _product(req.values) != threads:
        out.append(Problem(Reason.LAUNCH_CONFIG, f".reqntid {', '.join(map(str, req.values))} but the harness launches "
                           f"{threads} threads per block {block}", where=where))
    mx = kernel.directive(".maxntid")
    if mx is not None and mx.values and _product(mx.values) < threads:
        out.append(Problem(Reason.LAUNCH_CONFIG, f".maxntid {', '.join(map(str, mx.values))} is below the {threads} "
                           f"threads per block the harness launches", where=where))
    return out


def _product(values: tuple[int, ...]) -> int:
    n = 1
    for v in values:
        n *= v
    return n


def gate(contract: Contract, module: A.Module, reference: CompiledPTX, ref_module: A.Module,
         block: tuple[int, int, int]) -> tuple[list[Problem], A.Function | None]:
    """Every problem of the static gate, and the kernel to launch (None when there is none);
    ``block``: the block the harness launches it with (harness.judge.launch)."""
    kernel = next((k for k in module.kernels if k.name == reference.entry), None)
    if kernel is None:
        names = ", ".join(k.name for k in module.kernels) or "none"
        return [Problem(Reason.ENTRY_NAME, f"no .entry named {reference.entry} (the contract's kernel); "
                        f"the module's kernels: {names}")], None
    problems = _target(module.arch, reference.target) + _block_directives(kernel, block)
    try:
        check_signature(contract, reference, kernel)
    except ValueError as e:
        problems.append(Problem(Reason.PARAMETERS, str(e), where=str(kernel.span) if kernel.span else None))
    cand, ref = facts(module, kernel.name), facts(ref_module, reference.entry)
    problems += _global_data(cand, ref) + _specials(cand, ref) + _calls(cand, ref) + _precision(contract, cand, ref)
    return problems, kernel
