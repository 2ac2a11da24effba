"""One launch of a candidate in its own process, for compute-sanitizer and ncu to watch.

    python -m harness.judge.gpu_one REQUEST.pkl trial     # one numeric trial (the sanitizer lane)
    python -m harness.judge.gpu_one REQUEST.pkl profile   # one launch at the timed instance (ncu)

REQUEST.pkl holds (GpuRequest, Trial | None), written by harness.judge.sanitizer / .profile. Both
run the line-annotated twin cubin. Exit status: 0 when the launch completed, 1 otherwise.
"""

from __future__ import annotations

import pickle
import sys


def main(argv: list[str]) -> int:
    from .. import suite
    from .device import LaunchFailure

    if len(argv) != 2 or argv[1] not in ("trial", "profile"):
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[0], "rb") as f:
        request, trial = pickle.load(f)
    contract = suite.get(request.contract)
    try:
        if argv[1] == "trial":
            from .cuda import CudaDevice
            from .numeric import run_trial

            code = request.code(twin=True)
            device = CudaDevice()
            result = run_trial(device, device.load(code), code, contract, request.arch, trial, request.param_count,
                               rerun=False, guard=0)  # exact allocations: memcheck knows their bounds
            for p in result.problems:
                print(f"harness: {p}")
            return 1 if result.device_lost else 0
        from .baseline import device_inputs
        from .worker import GpuWorker

        worker = GpuWorker()
        sets = device_inputs(contract, request.timing_instance, 1, request.seed)
        worker.candidate_side(request, contract, request.timing_instance, sets, twin=True).launch(0)
        worker.cuda.sync("profiled launch")
        return 0
    except LaunchFailure as e:
        print(f"harness: launch failed: {e.message}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
