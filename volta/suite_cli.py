"""``volta suite``: list the kernel suite, show a contract, emit a kernel's PTX for a target.

Attach with ``main.add_command(suite)``.  Bad input (unknown kernel or arch, an arch below the
kernel's minimum, an existing output file) prints one line to stderr and exits 2.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

EXIT_BAD_INPUT = 2


def _fail(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_BAD_INPUT)


def _require_triton() -> None:
    from .results import BadInput, require_extra

    try:
        require_extra("triton", "the kernel suite")
    except BadInput as e:
        _fail(str(e))


def _contract(name: str) -> Any:
    _require_triton()
    from harness import suite as registry
    try:
        return registry.get(name)
    except registry.SuiteError as e:
        _fail(str(e))


def _fmt(v: Any) -> str:
    if callable(v):
        return "<computed>"
    return str(v)


def describe(contract: Any) -> dict[str, Any]:
    """A JSON-able description of a contract with every instance resolved."""
    from harness.contract import Tensor
    args = []
    for a in contract.args:
        if isinstance(a, Tensor):
            args.append({"name": a.name, "kind": "tensor", "dtype": a.dtype, "shape": list(a.shape), "role": a.role})
        else:
            args.append({"name": a.name, "kind": "scalar", "dtype": a.dtype, "value": _fmt(a.value)})
    instances = {}
    for inst in contract.instances:
        r = contract.resolve(inst)
        instances[inst] = {"dims": r.dims, "grid": list(r.grid), "block": list(r.block),
                           "constexprs": {k: _fmt(v) for k, v in r.constexprs.items()},
                           "scalars": r.scalars, "shapes": {k: list(v) for k, v in r.shapes.items()}}
    tol = {t.dtype: list(contract.tolerance_for(t.dtype)) for t in contract.tensors if t.is_output}
    return {"name": contract.name, "description": contract.description, "kernel": contract.kernel_name,
            "args": args, "num_warps": contract.num_warps, "num_stages": contract.num_stages,
            "threads_per_block": contract.threads_per_block, "min_arch": f"sm_{contract.min_arch}",
            "instances": instances, "tolerance": tol,
            "input_domain": {k: _fmt(v) for k, v in contract.input_domain.items()},
            "distributions": list(contract.distributions_for()),
            "scale_by_abs_reference": contract.scale_by_abs_reference}


@click.group("suite")
def suite() -> None:
    """The kernel suite: Triton kernels with contracts and float64 references (needs the 'triton' extra)."""


@suite.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
def list_cmd(as_json: bool) -> None:
    """List every kernel in the suite."""
    _require_triton()
    from harness import suite as registry
    try:
        contracts = registry.all_contracts()
    except registry.SuiteError as e:
        _fail(str(e))
    if as_json:
        click.echo(json.dumps([{"name": c.name, "description": c.description, "min_arch": c.min_arch,
                                "verify": c.instances["verify"], "bench": c.instances["bench"]}
                               for c in contracts], indent=1))
        return
    width = max(len(c.name) for c in contracts)
    for c in contracts:
        arch = f"sm_{c.min_arch}+"
        click.echo(f"{c.name:<{width}}  {arch:<7} {c.description}")


@suite.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the description as JSON.")
def show_cmd(name: str, as_json: bool) -> None:
    """Show the contract of kernel NAME: arguments, instances, grid, tolerances."""
    d = describe(_contract(name))
    if as_json:
        click.echo(json.dumps(d, indent=1))
        return
    click.echo(f"{d['name']}: {d['description']}")
    click.echo(f"  kernel     {d['kernel']}  (num_warps={d['num_warps']}, {d['threads_per_block']} threads, "
               f"num_stages={d['num_stages']}, min arch {d['min_arch']})")
    click.echo("  arguments")
    for a in d["args"]:
        if a["kind"] == "tensor":
            shape = ", ".join(str(s) for s in a["shape"])
            click.echo(f"    {a['role']:<6} {a['name']:<12} {a['dtype']}[{shape}]")
        else:
            click.echo(f"    scalar {a['name']:<12} {a['dtype']} = {a['value']}")
    for inst, r in d["instances"].items():
        dims = " ".join(f"{k}={v}" for k, v in r["dims"].items())
        consts = " ".join(f"{k}={v}" for k, v in r["constexprs"].items())
        click.echo(f"  {inst:<10} {dims}")
        scalars = " ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in r["scalars"].items())
        click.echo(f"             grid={tuple(r['grid'])} block={tuple(r['block'])} {consts}")
        click.echo(f"             scalars: {scalars}")
    tol = ", ".join(f"{k}: rtol={v[0]:g} atol={v[1]:g}" for k, v in d["tolerance"].items())
    click.echo(f"  tolerance  {tol}" + ("  (scaled by reference on |inputs|)" if d["scale_by_abs_reference"] else ""))
    click.echo(f"  inputs     distributions: {', '.join(d['distributions'])}")
    for k, v in d["input_domain"].items():
        click.echo(f"             {k}: {v}")


@suite.command("ptx")
@click.argument("name")
@click.option("--arch", default="sm_90a", show_default=True,
              help="Target: sm_80, sm_89, sm_90a, sm_100a or sm_120 (a/no-a spellings accepted).")
@click.option("--instance", type=click.Choice(["verify", "bench"]), default="verify", show_default=True,
              help="The contract instance to compile (verify: small sizes with the bench build's tiles; bench: the "
                   "timed sizes).")
@click.option("--ptx-version", default=90, show_default=True, help="PTX ISA version x 10 (90 = .version 9.0).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write here instead of stdout.")
@click.option("--force", is_flag=True, help="Overwrite an existing output file.")
def ptx_cmd(name: str, arch: str, instance: str, ptx_version: int, output: Path | None, force: bool) -> None:
    """Compile kernel NAME ahead of time (no GPU needed) and print or write its PTX."""
    contract = _contract(name)
    from harness.compile import ArchError, compile_contract
    from harness.contract import ContractError
    if output is not None and output.exists() and not force:
        _fail(f"{output} exists; pass --force to overwrite")
    try:
        result = compile_contract(contract, arch=arch, instance=instance, ptx_version=ptx_version)
    except (ArchError, ContractError) as e:
        _fail(str(e))
    if output is None:
        click.echo(result.ptx, nl=False)
        return
    try:
        output.write_text(result.ptx)
    except OSError as e:
        _fail(f"cannot write {output}: {e.strerror}")
    params = ", ".join(f"{p.arg or 'hidden'}:{p.ptx_type}" for p in result.params)
    click.echo(f"wrote {output}: .entry {result.entry} .target {result.target} ({params}); "
               f"{result.threads_per_block} threads, {result.shared} B shared, grid {result.grid}", err=True)
