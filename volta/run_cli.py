"""`volta run`: execute a PTX kernel on the CPU emulator, on a contract's inputs or a launch spec.

Exit codes: 0 ran (and, with a contract, matched the reference), 1 a mismatch or an execution error
the kernel caused, 2 bad input, 3 unsupported or stopped at a limit.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
import numpy as np
from rich.console import Console

from .inputs import contract_launch, parse_ptx, spec_launch
from .progress import MemorySize, RunProgress, address_space_ceiling
from .results import BadInput, strict_json, writable

EXIT_OK, EXIT_BUG, EXIT_BAD_INPUT, EXIT_UNDECIDED = 0, 1, 2, 3


class _Stop(Exception):
    """An answer other than a result: its exit code, message and JSON verdict."""

    def __init__(self, code: int, message: str, verdict: str) -> None:
        super().__init__(message)
        self.code, self.message, self.verdict = code, message, verdict


@click.command("run", epilog="""\b
Exit codes: 0 ran (and matched the contract's reference), 1 a mismatch or an
error the kernel caused, 2 bad input, 3 unsupported or stopped at a limit.
The launch: --contract NAME, or --launch spec.json (format: README, "volta check").""")
@click.argument("kernel", type=click.Path(dir_okay=False, path_type=Path), metavar="KERNEL.ptx")
@click.option("--contract", "contract_name", metavar="NAME",
              help="Suite contract the kernel implements (volta suite list): its inputs, launch and float64 "
                   "reference. Needs the 'triton' extra.")
@click.option("--launch", "launch_path", type=click.Path(dir_okay=False, path_type=Path), metavar="SPEC.json",
              help="JSON launch spec for PTX without a contract (grid, block, buffers, params; see the README).")
@click.option("--instance", default="verify", show_default=True, type=click.Choice(["verify", "bench"]),
              help="With --contract: the instance whose sizes make the launch.")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0),
              help="With --contract: seed of the generated inputs.")
@click.option("--distribution", default="normal", show_default=True, metavar="NAME",
              help="With --contract: the input distribution, one of the contract's (volta suite show NAME lists "
                   "them; every float contract has normal, large, tiny, special, cancel).")
@click.option("--entry", default=None, metavar="KERNEL", help="Kernel to run when the module has several.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=600.0, show_default=True,
              help="Seconds of emulation before giving up (exit 3; it says where it was).")
@click.option("--max-memory", type=MemorySize(), default=None, metavar="SIZE",
              help="Memory ceiling for the process (e.g. 8G): past it the run stops (exit 3).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON on stdout (bad input too).")
@click.option("--dump", type=click.Path(dir_okay=False, path_type=Path), default=None, metavar="FILE.npz",
              help="Write the buffers after the run to this .npz file, each with its dtype and shape (never "
                   "overwrites).")
@click.option("--dynamic-shared", type=click.IntRange(min=0), default=None, metavar="BYTES",
              help="Dynamic shared memory bytes (default: the spec's, or what Triton's build of the contract "
                   "requests).")
@click.option("-q", "--quiet", is_flag=True, help="No progress display.")
def run_cmd(kernel: Path, contract_name: str | None, launch_path: Path | None, instance: str, seed: int,
            distribution: str, entry: str | None, timeout: float, max_memory: int | None, as_json: bool,
            dump: Path | None, dynamic_shared: int | None, quiet: bool) -> None:
    """Run KERNEL.ptx on the CPU emulator; with a contract, compare its outputs with the reference."""
    err = Console(stderr=True, emoji=False, highlight=False, soft_wrap=True)
    try:
        result, lines, code = _run(kernel, contract_name, launch_path, instance, seed, distribution, entry, timeout,
                                   max_memory, dump, dynamic_shared, RunProgress(err, enabled=not quiet))
    except BadInput as e:
        _answer(as_json, err, EXIT_BAD_INPUT, e.text(), {"verdict": "bad_input", "error": e.to_json()})
    except _Stop as e:
        _answer(as_json, err, e.code, e.message, {"verdict": e.verdict, "error": {"message": e.message}})
    if as_json:
        click.echo(json.dumps(strict_json(result), indent=2))
    else:
        click.echo(f"{kernel}: ran {result['steps']} instruction-group steps in {result['batches']} CTA batch(es)")
        for line in lines:
            click.echo("  " + line)
    sys.exit(code)


def _answer(as_json: bool, err: Console, code: int, text: str, payload: dict):
    if as_json:
        click.echo(json.dumps(strict_json({**payload, "exit_code": code}), indent=2))
    err.print(text, markup=False)
    sys.exit(code)


def _run(kernel: Path, contract_name, launch_path, instance, seed, distribution, entry, timeout, max_memory, dump,
         dynamic_shared, bar: RunProgress):
    from symexec import ExecError, LaunchError, Machine, MemoryLimit, TimeLimit, Unsupported, load_program, run_limits

    import tcgen05  # noqa: F401  (plugs the tensor-core unit into the machine)

    if (contract_name is None) == (launch_path is None):
        raise BadInput("give exactly one of --contract NAME or --launch spec.json")
    writable(dump, "--dump")
    module = parse_ptx(kernel)
    contract = arrays = None
    if launch_path is not None:
        launch, _ = spec_launch(kernel, module, launch_path, entry)
    else:
        contract, launch, arrays, _ = contract_launch(contract_name, module, kernel, instance, seed, distribution,
                                                      entry)
    if dynamic_shared is not None:
        launch.dynamic_shared_bytes = dynamic_shared
    try:
        prog = load_program(module, launch.kernel)
        with bar, address_space_ceiling(max_memory), run_limits(timeout, max_memory, bar.start(kernel.name)):
            machine = Machine(prog, launch)
            glob, stats = machine.run(), machine.stats
    except LaunchError as e:
        raise BadInput(str(e)) from None
    except Unsupported as e:
        raise _Stop(EXIT_UNDECIDED, str(e), "unsupported") from None
    except (TimeLimit, MemoryLimit) as e:
        where = f" ({e.ins.name} at {e.ins.span})" if e.ins is not None and e.ins.span and str(e.ins.span) \
            not in e.message else ""
        raise _Stop(EXIT_UNDECIDED, f"undecided: {e.message}{where}", "inconclusive") from None
    except MemoryError:
        why = f"memory limit of {max_memory / 2**20:.0f} MiB reached" if max_memory else "out of memory"
        raise _Stop(EXIT_UNDECIDED, f"undecided: {kernel}: {why} while emulating this launch", "inconclusive") \
            from None
    except ExecError as e:
        where = f" at {e.ins.span}" if getattr(e, "ins", None) is not None and e.ins.span else ""
        raise _Stop(EXIT_BUG, f"error: {e.message if hasattr(e, 'message') else e}{where}", "error") from None
    result: dict = {"kernel": str(kernel), "steps": stats.steps, "batches": stats.batches}
    code = EXIT_OK
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
        outputs = {a.name: _typed(a.data, launch.buffers[a.name]) for a in glob.allocations
                   if a.name in launch.buffers}
        lines = [f"{name}: {arr.dtype}{list(arr.shape)}, {arr.nbytes} bytes, sha1 {_digest(arr)}"
                 for name, arr in outputs.items()]
    calls = getattr(machine, "call_state", None)
    printed = calls.printed if calls is not None else []  # device printf (vprintf), in execution order
    if printed:
        result["printf"] = [{"cta": cta, "thread": t, "text": text} for cta, t, text in printed]
        lines.append(f"printf output ({len(printed)} call(s)):")
        lines += [f"  CTA {cta} thread {t}: {text.rstrip(chr(10))}" for cta, t, text in printed[:50]]
        if len(printed) > 50:
            lines.append(f"  ... {len(printed) - 50} more (--json has them all)")
    if dump is not None:
        try:
            np.savez(dump, **outputs)
        except OSError as e:
            raise BadInput(f"--dump {dump}: cannot write: {e.strerror}") from None
    return result, lines, code


def _typed(data: np.ndarray, like) -> np.ndarray:
    """A buffer's bytes after the run with the dtype and shape of the launch's buffer."""
    if isinstance(like, np.ndarray):
        return np.asarray(data).view(like.dtype).reshape(like.shape)
    return np.asarray(data)


def _digest(arr: np.ndarray) -> str:
    import hashlib

    return hashlib.sha1(np.ascontiguousarray(arr).tobytes()).hexdigest()[:12]
