"""Kernel contracts, the Triton reference kernels of the suite, and the evaluation harness.

``harness.evaluate(contract, ptx, ...) -> Report`` (harness.judge.pipeline) judges a candidate PTX;
it is imported on first use so that ``import harness.contract`` stays light.
"""

from typing import Any

_LAZY = {"evaluate": "harness.judge.pipeline", "evaluate_many": "harness.judge.pipeline",
         "EvalOptions": "harness.judge.pipeline", "Report": "harness.judge.report"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'harness' has no attribute {name!r}")
