"""The launch configuration a candidate runs with (grid, block, dynamic shared memory).

This is the one place the harness decides it. Today every candidate runs with the contract's
grid and the block and dynamic shared memory of Triton's build for the contract: a candidate is a
drop-in replacement for Triton's kernel.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..compile import CompiledPTX
from ..contract import Contract


@dataclass(frozen=True)
class LaunchConfig:
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    dynamic_shared: int
    source: str  # where it came from


def launch_config(contract: Contract, reference: CompiledPTX, instance: str) -> LaunchConfig:
    """The candidate's launch at ``instance``.

    CALL SITE for a candidate's own launch header (``// volta-launch: grid=(cdiv(M, 4), 1, 1)
    block=(128, 1, 1)``, harness.candidate.candidate_launch, written in another branch and not on
    main yet): when it lands, read the header here and fall back to the contract's launch."""
    r = contract.resolve(instance)
    return LaunchConfig(r.grid, (reference.threads_per_block, 1, 1), reference.shared, "contract")
