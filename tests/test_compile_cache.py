"""Compile caches never hand one checkout the PTX built from another: the `.file` paths in Triton's
PTX (and so the source lines of every witness) name the kernel source that was compiled.

Two checkouts are the same kernel source at two paths; the test loads a suite kernel module from a
copy in a temporary folder and compiles it into the same cache as the repository's own."""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

import pytest

pytest.importorskip("triton")

from harness.compile import compile_contract  # noqa: E402
from harness.suite import get  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
_FILE = re.compile(r'^\s*\.file\s+\d+\s+"([^"]+)"', re.M)


def _copy_of_relu(tmp_path: Path):
    src = ROOT / "harness" / "suite" / "kernels" / "relu.py"
    other = tmp_path / "other_checkout" / "harness" / "suite" / "kernels"
    other.mkdir(parents=True)
    shutil.copy(src, other / "relu.py")
    spec = importlib.util.spec_from_file_location("other_checkout_relu", other / "relu.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CONTRACT, other / "relu.py"


def test_source_paths_name_the_compiled_checkout(tmp_path, monkeypatch):
    monkeypatch.setenv("VOLTA_CACHE_DIR", str(tmp_path / "cache"))
    ours = compile_contract(get("relu"), "sm_80", "verify")
    assert str(ROOT / "harness" / "suite" / "kernels" / "relu.py") in _FILE.findall(ours.ptx)
    contract, path = _copy_of_relu(tmp_path)
    theirs = compile_contract(contract, "sm_80", "verify")
    assert _FILE.findall(theirs.ptx) == [str(path)], _FILE.findall(theirs.ptx)
    assert theirs.key != ours.key
    # and the repository's own build is still its own, from the cache
    again = compile_contract(get("relu"), "sm_80", "verify")
    assert again.ptx == ours.ptx
