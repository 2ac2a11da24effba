"""Errors shared by the instruction semantics and the executor."""

from __future__ import annotations

from ptx_parser import ast as A


def where(ins: A.Instruction | None, module: A.Module | None = None) -> str:
    """`file:line:col` of the PTX instruction, plus its source line from `.loc` when known."""
    if ins is None or ins.span is None:
        return "<unknown location>"
    text = str(ins.span)
    if module is not None and ins.loc is not None:
        from ptx_parser import source_location

        src = source_location(module, ins)
        if src is not None:
            text += f" (source {src})"
    return text


class ExecError(Exception):
    """Base class: an execution stopped with a located reason."""

    def __init__(self, message: str, ins: A.Instruction | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.ins = ins


class Unsupported(ExecError):
    """An instruction, modifier or feature without modelled semantics. Never guessed."""

    def __init__(self, what: str, ins: A.Instruction | None = None) -> None:
        super().__init__(what, ins)
        self.what = what

    def __str__(self) -> str:
        loc = where(self.ins) if self.ins is not None else ""
        return f"unsupported: {self.what}" + (f" at {loc}" if loc else "")


class OutsideFormat(Unsupported):
    """An operand value the instruction's format does not define (a ue4m3 scale byte with bit 7 set:
    "a register ... must be declared with .b8 type having MSB bit padded with zero", PTX 5.2.3). The
    run stops like any `Unsupported`; the concrete tests that draw their own inputs (proofs.differential,
    proofs.witness) skip such a draw instead, since the proof assumes the format (its verdict says so)."""


class UndefinedBehavior(ExecError):
    """The program did something the PTX manual leaves undefined (e.g. non-uniform bra.uni).
    `lane`: a thread slot of the executing batch that shows it, when one does."""

    def __init__(self, message: str, ins: A.Instruction | None = None, lane: int | None = None) -> None:
        super().__init__(message, ins)
        self.lane = lane

    def __str__(self) -> str:
        return f"{self.message} at {where(self.ins)}"
