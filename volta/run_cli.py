"""`volta run`: execute a PTX kernel on the CPU emulator, on a contract's inputs or a launch spec."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
import numpy as np

from ptx_parser import ParseError, parse_file

EXIT_OK, EXIT_BUG, EXIT_BAD_INPUT, EXIT_UNDECIDED = 0, 1, 2, 3


def _fail(code: int, message: str) -> None:
    click.echo(message, err=True)
    sys.exit(code)


@click.command("run")
@click.argument("kernel", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--contract", "contract_name", help="Suite contract the kernel implements (volta suite list).")
@click.option("--launch", "launch_path", type=click.Path(dir_okay=False, path_type=Path),
              help="JSON launch spec for PTX without a contract (format: symexec/launch.py).")
@click.option("--instance", default="verify", show_default=True, type=click.Choice(["verify", "bench"]))
@click.option("--seed", default=0, show_default=True, help="Seed of the generated inputs.")
@click.option("--distribution", default="normal", show_default=True,
              help="Input distribution (normal, large, tiny, zeros_ones, cancel, ...).")
@click.option("--entry", default=None, help="Kernel to run when the module has several.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=600.0, show_default=True,
              help="Seconds of emulation before giving up (a loop that does not end?).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable result.")
@click.option("--dump", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the output buffers to this .npz file (never overwrites).")
@click.option("--dynamic-shared", type=int, default=None,
              help="Dynamic shared memory bytes (default: what Triton's kernel for the contract requests).")
def run_cmd(kernel: Path, contract_name: str | None, launch_path: Path | None, instance: str, seed: int,
            distribution: str, entry: str | None, timeout: float, as_json: bool, dump: Path | None,
            dynamic_shared: int | None) -> None:
    """Run KERNEL.ptx on the CPU emulator and compare with the contract's reference."""
    from symexec import (ExecError, LaunchError, TimeLimit, Unsupported, load_launch_spec, load_program, run_kernel,
                         time_limit)

    import tcgen05  # noqa: F401  (plugs the tensor-core unit into the machine)

    if (contract_name is None) == (launch_path is None):
        _fail(EXIT_BAD_INPUT, "error: give exactly one of --contract NAME or --launch spec.json")
    if dump is not None and dump.exists():
        _fail(EXIT_BAD_INPUT, f"error: {dump} exists; not overwriting it")
    try:
        module = parse_file(kernel)
    except ParseError as e:
        _fail(EXIT_BAD_INPUT, str(e))
    except OSError as e:
        _fail(EXIT_BAD_INPUT, f"{kernel}: error: cannot read file: {e.strerror}")
    try:
        if launch_path is not None:
            launch = load_launch_spec(launch_path)
            contract = arrays = None
        else:
            contract, launch, arrays, _ = _contract_launch(contract_name, module, instance, seed, distribution, entry)
        if dynamic_shared is not None:
            launch.dynamic_shared_bytes = dynamic_shared
        prog = load_program(module, entry or launch.kernel)
        with time_limit(timeout):
            glob, _, stats = run_kernel(prog, launch)
    except (LaunchError, ValueError, KeyError) as e:
        _fail(EXIT_BAD_INPUT, f"error: {e}")
    except Unsupported as e:
        _fail(EXIT_UNDECIDED, str(e))
    except TimeLimit as e:
        _fail(EXIT_UNDECIDED, f"undecided: {e.message}" + (f" at {e.ins.span}" if e.ins is not None and e.ins.span else ""))
    except MemoryError:
        _fail(EXIT_UNDECIDED, f"{kernel}: out of memory while emulating this launch")
    except ExecError as e:
        where = f" at {e.ins.span}" if getattr(e, "ins", None) is not None and e.ins.span else ""
        _fail(EXIT_BUG, f"error: {e.message if hasattr(e, 'message') else e}{where}")
    result: dict = {"kernel": str(kernel), "steps": stats.steps, "batches": stats.batches}
    code = EXIT_OK
    outputs: dict[str, np.ndarray] = {}
    if contract is not None:
        from harness.emulate import from_device

        r = contract.resolve(instance)
        outputs = {t.name: from_device(glob.by_name(t.name).data, t.dtype, r.shapes[t.name])
                   for t in contract.tensors if t.is_output}
        expected = contract.run_reference(arrays, instance)
        comps = contract.compare(outputs, expected, contract.abs_scale(arrays, instance))
        result["comparisons"] = [c.__dict__ for c in comps]
        result["ok"] = all(c.ok for c in comps)
        code = EXIT_OK if result["ok"] else EXIT_BUG
        lines = [str(c) for c in comps]
    else:
        outputs = {a.name: a.data for a in glob.allocations if a.name in launch.buffers}
        lines = [f"{name}: {arr.size} bytes, sha1 {_digest(arr)}" for name, arr in outputs.items()]
    if dump is not None:
        np.savez(dump, **outputs)
    if as_json:
        click.echo(json.dumps(result, indent=2, default=str))
    else:
        click.echo(f"{kernel}: ran {stats.steps} instruction-group steps in {stats.batches} CTA batch(es)")
        for line in lines:
            click.echo("  " + line)
    sys.exit(code)


def _digest(arr: np.ndarray) -> str:
    import hashlib

    return hashlib.sha1(arr.tobytes()).hexdigest()[:12]


def _contract_launch(name: str, module, instance: str, seed: int, distribution: str, entry: str | None,
                     arch: str | None = None, lazy: bool = False):
    """The contract's launch for the one kernel of ``module`` (or ``entry``): buffers from its input
    generators, parameters checked against the kernel's, threads and shared memory from Triton's
    build for ``arch`` (default: the suite target nearest the PTX's own ``.target``). lazy: the
    buffers are made page by page where the run touches them (the checker), not whole. Returns
    (contract, launch, host arrays, compiled reference build)."""
    from harness import suite
    from harness.emulate import check_signature, kernel_launch
    from harness.compile import compile_contract

    try:
        contract = suite.get(name)
    except suite.SuiteError as e:
        _fail(EXIT_BAD_INPUT, f"error: {e}")
    if arch is None:
        target = module.arch or "sm_90a"
        cap = int("".join(ch for ch in target[3:] if ch.isdigit()) or 90)
        arch = _nearest_arch(cap, contract.min_arch)
    compiled = compile_contract(contract, arch, instance)
    kernels = module.kernels if entry is None else [module.function(entry)]
    if len(kernels) != 1:
        raise ValueError(f"the module has {len(kernels)} kernels; choose one with --entry")
    k = kernels[0]
    check_signature(contract, compiled, k)
    arrays = contract.make_inputs(instance, distribution, seed, lazy=lazy)
    return contract, kernel_launch(contract, compiled, k, arrays, instance), arrays, compiled


def _nearest_arch(cap: int, min_arch: int) -> str:
    for a, name in ((120, "sm_120"), (100, "sm_100a"), (90, "sm_90a"), (89, "sm_89"), (80, "sm_80")):
        if cap >= a and a >= min_arch:
            return name
    return f"sm_{max(min_arch, 80)}"
