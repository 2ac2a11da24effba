"""The launch configuration a candidate runs with (grid, block, dynamic shared memory).

This is the one place the harness decides it: a candidate whose PTX has a `// volta-launch:`
header (harness/candidate.py: grid, block and shared memory as expressions over the contract's
dims) runs with that shape at every instance and trial size; any other candidate with the
contract's grid and the block and dynamic shared memory of Triton's build for the contract, as a
drop-in replacement for Triton's kernel.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..candidate import header_shape, read_header
from ..compile import CompiledPTX
from ..contract import Contract


@dataclass(frozen=True)
class LaunchConfig:
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    dynamic_shared: int
    source: str  # where it came from


def launch_config(contract: Contract, reference: CompiledPTX, instance: str, ptx: str | None = None) -> LaunchConfig:
    """The candidate's launch at ``instance``: from the `// volta-launch:` header of ``ptx`` (the
    candidate's text) when it has one, else the contract's. A malformed header raises
    harness.candidate.LaunchHeaderError (a ValueError naming its line)."""
    header = read_header(ptx) if ptx is not None else None
    if header is not None:
        shape = header_shape(header, contract, contract.resolve(instance).dims)
        return LaunchConfig(shape.grid, shape.block, shape.dynamic_shared_bytes, f"header ({header.text})")
    r = contract.resolve(instance)
    return LaunchConfig(r.grid, (reference.threads_per_block, 1, 1), reference.shared, "contract")
