"""The kernel suite: every module ``harness/suite/kernels/<name>.py`` exposes a ``CONTRACT``.

``all_contracts()`` imports each module once (sorted by name) and returns their contracts;
``get(name)`` looks one up by contract name.  A module that fails to import or lacks a
``CONTRACT`` is reported as a :class:`SuiteError` naming the module.
"""
from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from harness.contract import Contract

from . import kernels as _kernels_pkg


class SuiteError(LookupError):
    """Unknown kernel name, or a broken kernel module."""

    def __str__(self) -> str:  # LookupError would repr() the message
        return str(self.args[0]) if self.args else ""


def module_names() -> list[str]:
    """Names of the kernel modules, sorted."""
    return sorted(m.name for m in pkgutil.iter_modules(_kernels_pkg.__path__) if not m.name.startswith("_"))


@lru_cache(maxsize=None)
def _load(module: str) -> Contract:
    try:
        mod = importlib.import_module(f"{_kernels_pkg.__name__}.{module}")
    except Exception as e:  # surface which module is broken, not a bare traceback
        raise SuiteError(f"kernel module '{module}' failed to import: {type(e).__name__}: {e}") from e
    contract = getattr(mod, "CONTRACT", None)
    if not isinstance(contract, Contract):
        raise SuiteError(f"kernel module '{module}' has no CONTRACT of type Contract")
    return contract


def all_contracts() -> list[Contract]:
    """Every contract in the suite, sorted by contract name; names are unique."""
    contracts = [_load(m) for m in module_names()]
    seen: dict[str, str] = {}
    for m, c in zip(module_names(), contracts):
        if c.name in seen:
            raise SuiteError(f"contract name '{c.name}' is defined by both '{seen[c.name]}' and '{m}'")
        seen[c.name] = m
    return sorted(contracts, key=lambda c: c.name)


def names() -> list[str]:
    return [c.name for c in all_contracts()]


def get(name: str) -> Contract:
    """The contract called ``name``; :class:`SuiteError` listing the known names otherwise."""
    for c in all_contracts():
        if c.name == name:
            return c
    raise SuiteError(f"unknown kernel '{name}'; known: {', '.join(names())}")
