"""Map instructions to source lines through `.loc` and `.file` (PTX 11.2, 11.3).

nvcc may put `.file` after the functions that use it, so names are resolved against the whole
module, after parsing.
"""

from __future__ import annotations

from . import ast as A


def source_location(module: A.Module, ins: A.Instruction) -> A.SourceLoc | None:
    """The source file, line and column of an instruction, or None without `.loc`."""
    loc = ins.loc
    if loc is None:
        return None
    name = module.files.get(loc.file, f"<file {loc.file}>")
    return A.SourceLoc(name, loc.line, loc.col)
