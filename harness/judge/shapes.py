"""Shapes a candidate's author never saw: problem sizes near a known instance that keep the PTX valid.

A PTX is compiled for one specialisation of the contract (constexprs, Triton's divisibility and
equal-to-one specialisation of the integer arguments, harness.contract.Contract.triton_signature);
any size with the same specialisation must run correctly on it. :func:`unseen_shapes` perturbs a
random subset of the dimensions of a base instance (keeping multiples of 16 multiples of 16) and
keeps a sample when the contract resolves, the specialisation is the base's, it is neither the
verify nor the bench instance, and Triton's own PTX for the contract computes the reference's
answer there on the CPU emulator (so dimensions the contract ties together, like a convolution's
output size, stay consistent). Seeds make the draw reproducible; the harness draws a fresh seed
per evaluation.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache

import numpy as np

from ..contract import Contract, ContractError

#: Instance names the harness adds for unseen shapes.
UNSEEN = "unseen"


def with_instance(contract: Contract, name: str, dims: dict[str, int]) -> Contract:
    """``contract`` with one more instance ``name`` of ``dims``."""
    if contract.instances.get(name) == dims:
        return contract
    return dataclasses.replace(contract, instances={**contract.instances, name: dict(dims)})


def input_elements(contract: Contract, instance: str) -> int:
    r = contract.resolve(instance)
    return sum(int(np.prod(r.shapes[t.name], dtype=np.int64)) for t in contract.tensors)


def _perturb(dims: dict[str, int], rng: np.random.Generator) -> dict[str, int]:
    out = dict(dims)
    keys = [k for k in dims if rng.random() < 0.5] or [list(dims)[int(rng.integers(len(dims)))]]
    for k in keys:
        v = dims[k]
        step = 16 if v % 16 == 0 else 1
        lo, hi = max(1, v // (2 * step)), max(2, (2 * v) // step)
        out[k] = int(rng.integers(lo, hi + 1)) * step
    return out


@lru_cache(maxsize=256)
def _reference_passes(contract_name: str, arch: str, dims: tuple[tuple[str, int], ...]) -> bool:
    from .. import suite
    from ..emulate import emulate

    c = with_instance(suite.get(contract_name), UNSEEN, dict(dims))
    try:
        return emulate(c, arch, UNSEEN, distribution=c.distributions_for()[0], seed=1).ok
    except Exception:  # a size the reference or the kernel cannot take: not a valid sample
        return False


def unseen_shapes(contract: Contract, arch: str, count: int, seed: int, base: str = "verify",
                  max_elements: int = 1 << 20, attempts: int = 200) -> list[dict[str, int]]:
    """Up to ``count`` new sizes (see the module docstring); fewer when none are found in
    ``attempts`` draws. ``contract`` must be a suite contract (the check runs Triton's PTX for it)."""
    rng = np.random.default_rng(seed)
    base_dims = dict(contract.instances[base])
    want = contract.triton_signature(base)
    known = [dict(v) for v in contract.instances.values()]
    out: list[dict[str, int]] = []
    for _ in range(attempts):
        if len(out) >= count:
            break
        dims = _perturb(base_dims, rng)
        if dims in known or dims in out:
            continue
        try:
            c = with_instance(contract, UNSEEN, dims)
            if c.triton_signature(UNSEEN) != want or input_elements(c, UNSEEN) > max_elements:
                continue
        except ContractError:
            continue
        if _reference_passes(contract.name, arch, tuple(sorted(dims.items()))):
            out.append(dims)
    return out
