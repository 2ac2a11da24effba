"""What `volta check` and `volta run` read: the PTX file, the kernel, and its launch.

The launch comes from, in this order: `--contract NAME` (a suite contract: Triton's build gives the
threads and shared memory, the contract the arguments), `--launch spec.json`, a `// launch: {...}`
line in the first 40 lines of the PTX file, or a `KERNEL.json` file beside it. The kernel is
`--entry`, else the file's `// entry:` line, else the spec's `"kernel"`, else the module's only
kernel. Everything wrong here is `BadInput` (exit 2) naming the place.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ptx_parser import ParseError, parse_file
from ptx_parser import ast as A

from .results import BadInput, require_extra

_HEADER = re.compile(r"^\s*//\s*(expect|verdict|launch|why|twin|entry)\s*:\s*(.*?)\s*$")


def header(path: Path) -> dict[str, str]:
    """`// expect: race`, `// verdict: race_free: for the launch's input only`, `// launch: {json}`,
    `// why: ...` lines at the top of a .ptx file."""
    out: dict[str, str] = {}
    for line in path.read_text(errors="replace").splitlines()[:40]:
        m = _HEADER.match(line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def parse_ptx(path: Path) -> A.Module:
    try:
        return parse_file(path)
    except ParseError as e:
        raise BadInput(e.message, str(e.filename), e.line, e.col, detail=str(e)) from None
    except IsADirectoryError:
        raise BadInput(f"{path}: is a folder, not a PTX file", str(path)) from None
    except OSError as e:
        raise BadInput(f"{path}: cannot read file: {e.strerror}", str(path)) from None
    except UnicodeDecodeError as e:
        raise BadInput(f"{path}: not a text file ({e.reason} at byte {e.start})", str(path)) from None


def kernel_of(module: A.Module, name: str | None, path: Path) -> A.Function:
    """The kernel `name` of the module (or its only kernel)."""
    kernels = module.kernels
    names = ", ".join(k.name for k in kernels) or "none"
    if name is None:
        if len(kernels) == 1:
            return kernels[0]
        if not kernels:
            raise BadInput(f"{path}: no kernel (.entry) in the module", str(path))
        raise BadInput(f"{path}: the module has {len(kernels)} kernels ({names}); choose one with --entry",
                       str(path))
    found = next((k for k in kernels if k.name == name), None)
    if found is None:
        funcs = [f.name for f in module.functions if f.name == name]
        what = f"'{name}' is a .func, not a kernel" if funcs else f"no kernel named '{name}'"
        raise BadInput(f"{path}: {what} (kernels: {names})", str(path))
    return found


def raw_spec(path: Path, spec_path: Path | None, hdr: dict[str, str]) -> tuple[object, str]:
    """(decoded launch spec, where it came from) for a PTX file without a contract."""
    from symexec.launch import LaunchError, read_launch_spec

    try:
        if spec_path is not None:
            return read_launch_spec(spec_path), str(spec_path)
        if "launch" in hdr:
            try:
                return json.loads(hdr["launch"]), f"{path} launch header"
            except json.JSONDecodeError as e:
                raise BadInput(f"{path}: '// launch:' header is not valid JSON: {e.msg} (col {e.colno})",
                               str(path)) from None
        sidecar = path.with_suffix(".json")
        if sidecar.exists():
            return read_launch_spec(sidecar), str(sidecar)
    except LaunchError as e:
        raise BadInput(str(e)) from None
    raise BadInput(f"{path}: no launch given (use --contract NAME, --launch spec.json, a '// launch: {{...}}' "
                   f"line in the file's first 40 lines or {sidecar.name} beside it)", str(path))


def spec_launch(path: Path, module: A.Module, spec_path: Path | None, entry: str | None):
    """(Launch, kernel) from a launch spec, validated against the kernel's parameters."""
    from symexec.launch import LaunchError, check_launch_bounds, spec_to_launch

    hdr = header(path)
    spec, where = raw_spec(path, spec_path, hdr)
    named = spec.get("kernel") if isinstance(spec, dict) and isinstance(spec.get("kernel"), str) else None
    fn = kernel_of(module, entry or hdr.get("entry") or named, path)
    try:
        launch = spec_to_launch(spec, where, fn.params or ())
        check_launch_bounds(fn, launch)
    except LaunchError as e:
        raise BadInput(str(e)) from None
    launch.kernel = fn.name
    return launch, fn


def contract_launch(name: str, module: A.Module, path: Path, instance: str, seed: int, distribution: str,
                    entry: str | None, arch: str | None = None, lazy: bool = False):
    """The contract's launch for the kernel of ``module``: buffers from its input generators,
    parameters checked against the kernel's, threads and shared memory from Triton's build for
    ``arch`` (default: the suite target nearest the PTX's own ``.target``), or grid, block and shared
    memory from a candidate's `// volta-launch:` header in ``path`` (harness/candidate.py). lazy:
    buffers are made page by page where the run touches them (the checker). Returns (contract,
    launch, host arrays, compiled reference build)."""
    require_extra("triton", "--contract")
    from harness import suite
    from harness.candidate import contract_launch as candidate_contract_launch
    from harness.compile import ArchError
    from harness.contract import ContractError

    try:
        contract = suite.get(name)
    except suite.SuiteError as e:
        raise BadInput(str(e)) from None
    if distribution not in contract.distributions_for():
        raise BadInput(f"--distribution {distribution}: contract {name} draws its inputs from "
                       f"{', '.join(contract.distributions_for())}")
    fn = kernel_of(module, entry, path)
    try:
        cl = candidate_contract_launch(contract, module, source=path, instance=instance, seed=seed,
                                       distribution=distribution, entry=fn.name, arch=arch, lazy=lazy)
    except (ArchError, ContractError, ValueError) as e:
        raise BadInput(str(e)) from None
    return contract, cl.launch, cl.arrays, cl.compiled


__all__ = ["header", "parse_ptx", "kernel_of", "raw_spec", "spec_launch", "contract_launch"]
