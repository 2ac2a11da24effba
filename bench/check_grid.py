"""Time `check_kernel` with grid="enumerate" vs grid="symbolic" as the grid grows.

    .venv/bin/python bench/check_grid.py [--ctas 1,4,16,64,256] [--arch sm_80]

relu: N = 1024*G (BLOCK 1024); softmax: M = G rows; gemm_fp16: fixed 32x32x32 tiles, M = 32*G,
N = 32, K = 72 (one dimension of the verify instance scaled).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ptx_parser  # noqa: E402
from harness.compile import compile_contract  # noqa: E402
from harness.contract import cdiv  # noqa: E402
from harness.emulate import launch_for  # noqa: E402
from harness.suite import get  # noqa: E402
from symexec import load_program  # noqa: E402
from symexec.check import check_kernel  # noqa: E402


def contract_for(name: str, g: int):
    c = get(name)
    if name == "relu":
        dims = {"N": 1024 * g}
    elif name == "softmax":
        dims = {"M": g}
    else:
        c = dataclasses.replace(c, constexprs={"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32},
                                grid=lambda d: (cdiv(d["M"], 32), cdiv(d["N"], 32), 1))
        dims = {"M": 32 * g, "N": 32, "K": 72}
    return dataclasses.replace(c, instances={**c.instances, "verify": {**c.instances["verify"], **dims}})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ctas", default="1,4,16,64,256")
    ap.add_argument("--arch", default="sm_80")
    ap.add_argument("--kernels", default="relu,softmax,gemm_fp16")
    args = ap.parse_args()
    print(f"{'kernel':10} {'CTAs':>5} {'enumerate s':>12} {'symbolic s':>11}  method / verdicts")
    for name in args.kernels.split(","):
        for g in (int(x) for x in args.ctas.split(",")):
            c = contract_for(name, g)
            comp = compile_contract(c, args.arch)
            prog = load_program(ptx_parser.parse(comp.ptx, f"{name}.ptx"), comp.entry)
            launch = launch_for(c, comp, c.make_inputs("verify", "normal", 0), "verify")
            times, verdicts = [], []
            for mode in ("enumerate", "symbolic"):
                t = time.perf_counter()
                r = check_kernel(prog, launch, grid=mode)
                times.append(time.perf_counter() - t)
                verdicts.append(r.verdict)
            print(f"{name:10} {launch.num_ctas:5d} {times[0]:12.2f} {times[1]:11.2f}  {r.stats.get('grid_method')} "
                  f"/ {verdicts[0]}, {verdicts[1]}", flush=True)


if __name__ == "__main__":
    main()
