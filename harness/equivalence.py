"""A contract's kernels as equivalence questions: the candidate PTX and Triton's own build, each with
the contract's launch, over the same symbolic tensors (inputs and inouts are INPUT leaves, outputs
start from the contract's sentinel bytes), plus what a witness search needs: the contract's input
distributions and its tolerances."""

from __future__ import annotations

from typing import Any

import numpy as np

import ptx_parser
from proofs.prove import KernelUnderTest
from semantics.terms import bits_sort, float_sort
from symexec import load_program
from symexec.check.termshadow import GlobalInfo

from . import dtypes as _dt
from .compile import compile_contract
from .contract import Contract
from .emulate import from_device, launch_for

__all__ = ["buffer_infos", "triton_kernel", "contract_kernel", "element_format", "contract_inputs", "contract_scale",
           "contract_draws", "contract_tolerance"]

_FORMATS = {"fp32": "f32", "fp16": "f16", "bf16": "bf16", "fp64": "f64", "fp8e4m3": "e4m3", "fp8e5m2": "e5m2"}


def element_format(dtype_name: str) -> tuple[int, int]:
    """(sort id, bytes) of one element of a contract dtype."""
    d = _dt.dtype(dtype_name)
    fmt = _FORMATS.get(_dt.canonical(dtype_name))
    return (float_sort(fmt) if fmt else bits_sort(d.bits)), d.bits // 8


def buffer_infos(contract: Contract) -> dict[str, GlobalInfo]:
    out = {}
    for t in contract.tensors:
        sort, eb = element_format(t.dtype)
        out[t.name] = GlobalInfo(t.name, sort, eb, t.is_input)
    return out  # Triton's global scratch is no output: its bytes are followed, not compared


def triton_kernel(contract: Contract, arch: str, instance: str = "verify", label: str = "reference"
                  ) -> KernelUnderTest:
    """Triton's build of the contract for `arch`, launched as the contract says."""
    compiled = compile_contract(contract, arch, instance)
    module = ptx_parser.parse(compiled.ptx, f"{contract.name}.{compiled.target}.ptx")
    prog = load_program(module, compiled.entry)
    launch = launch_for(contract, compiled, contract.make_inputs(instance, "normal", 0, lazy=True), instance)
    return KernelUnderTest(label, prog, launch, buffer_infos(contract))


def contract_kernel(contract: Contract, module, arch: str, instance: str = "verify", entry: str | None = None,
                    label: str = "candidate", source=None) -> KernelUnderTest:
    """A candidate PTX module for the contract: its parameters checked against the contract's, the
    launch of Triton's build for `arch`, or the grid/block/shared memory of the candidate's
    `// volta-launch:` header in `source` (harness/candidate.py)."""
    from .candidate import contract_launch

    cl = contract_launch(contract, module, source=source, instance=instance, entry=entry, arch=arch, lazy=True)
    launch = cl.launch
    k = module.function(launch.kernel) if launch.kernel else module.kernels[0]
    return KernelUnderTest(label, load_program(module, k.name), launch, buffer_infos(contract))


def contract_inputs(contract: Contract, instance: str, distribution: str, seed: int,
                    positive: bool = False) -> dict[str, Any]:
    """Device buffers of the input tensors of one draw (the same for both kernels of a witness
    search); `positive`: |x| + 1/2 of the floating inputs (sums without cancellation, where a
    narrower accumulation loses the most)."""
    return _device(contract, _draw_arrays(contract, instance, distribution, seed, positive))


def _device(contract: Contract, arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    from .emulate import device_buffer

    dtypes = {t.name: t.dtype for t in contract.tensors}
    return {name: device_buffer(a, dtypes[name]) for name, a in arrays.items()}


def _draw_arrays(contract: Contract, instance: str, distribution: str, seed: int,
                 positive: bool) -> dict[str, np.ndarray]:
    arrays = contract.make_inputs(instance, distribution, seed)
    out = {}
    for t in contract.tensors:
        if not t.is_input:
            continue
        a = arrays[t.name]
        if positive and _dt.dtype(t.dtype).is_float:
            a = _dt.quantize(np.abs(np.asarray(a, np.float64)) + 0.5, t.dtype)
        out[t.name] = a
    return out


def contract_scale(contract: Contract, instance: str, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The magnitude the contract judges each output's errors against on these inputs, flat by element
    (Contract.abs_scale: its reference on |inputs|), or {} where it judges against |reference|."""
    scale = contract.abs_scale(arrays, instance)
    return {} if scale is None else {k: np.asarray(v, np.float64).reshape(-1) for k, v in scale.items()}


def contract_draws(contract: Contract, instance: str = "verify", count: int = 12) -> list:
    """Input draws for a witness search: the contract's distributions over a few seeds, and
    positive inputs (see contract_inputs)."""
    from proofs.witness import Draw

    dists = list(contract.distributions_for())
    plan: list[tuple[str, int, bool]] = [("normal" if "normal" in dists else dists[0], 0, False),
                                         (dists[0], 1, True)]
    plan += [(d, 0, False) for d in dists if d != "normal"]
    plan += [(dists[0], s, s % 2 == 1) for s in range(2, 8)]
    draws = []
    for dist, seed, positive in plan[:count]:
        label = f"contract inputs: distribution {dist}, seed {seed}" + (", then |x| + 1/2" if positive else "")
        arrays = _draw_arrays(contract, instance, dist, seed, positive)
        draws.append(Draw(label, _device(contract, arrays), contract_scale(contract, instance, arrays)))
    return draws


def contract_tolerance(contract: Contract, name: str):
    """The (rtol, atol) the contract allows for output tensor `name` (proofs.witness.Tolerance)."""
    from proofs.witness import Tolerance

    t = next((t for t in contract.tensors if t.name == name), None)
    if t is None:
        return Tolerance(0.0, 0.0)
    return Tolerance(*contract.tolerance_for(t.dtype))


def decode_output(contract: Contract, name: str, raw: np.ndarray, instance: str) -> np.ndarray:
    t = next(t for t in contract.tensors if t.name == name)
    return from_device(raw, t.dtype, contract.resolve(instance).shapes[name])
