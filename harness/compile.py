"""Ahead-of-time compilation of a contract instance to PTX, for any supported target, no GPU needed.

The Triton signature, constexprs and divisibility attributes come from
:meth:`harness.contract.Contract.triton_signature`, i.e. exactly what a real launch with 16-byte
aligned pointers would specialise on, so the PTX is the code a real run executes.  Results are
cached by a content hash (kernel source, signature, constexprs, attrs, options, target, PTX
version, Triton version) under ``$VOLTA_CACHE_DIR`` (default ``~/.cache/volta/aot``), with the
intermediate ttir/ttgir/llir kept beside the PTX.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterator

from harness.contract import ARCHES, Contract, ContractError, kernel_parameters

#: Accepted spellings of each target; the value is Triton's compute capability.
ARCH_ALIASES: dict[str, int] = {
    "sm_80": 80, "sm_89": 89, "sm_90": 90, "sm_90a": 90,
    "sm_100": 100, "sm_100a": 100, "sm_120": 120, "sm_120a": 120,
}
DEFAULT_PTX_VERSION = 90
STAGES = ("ttir", "ttgir", "llir", "ptx")


class ArchError(ValueError):
    """An unknown target architecture."""


@dataclass
class PtxParam:
    """One parameter of the PTX ``.entry``: its PTX name and type, and the contract argument it
    carries (None for the hidden trailing parameters Triton appends, e.g. scratch pointers)."""

    name: str
    ptx_type: str
    arg: str | None
    is_pointer: bool


@dataclass
class CompiledPTX:
    """The result of compiling one contract instance for one target."""

    contract: str
    instance: str
    cap: int
    target: str                 # the .target of the PTX, e.g. "sm_90a"
    ptx_version: int
    entry: str
    params: list[PtxParam]
    shared: int                 # bytes of dynamic shared memory Triton requests
    num_warps: int
    threads_per_block: int
    grid: tuple[int, int, int]
    ptx: str
    key: str
    paths: dict[str, str] = field(default_factory=dict)

    @property
    def ptxas_arch(self) -> str:
        """The ``-arch`` value for ptxas (the PTX's own .target)."""
        return self.target

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("ptx")
        return d


def parse_arch(arch: str | int) -> int:
    """Compute capability for ``arch`` ("sm_90a", "sm_100", 89, "120", ...)."""
    key = str(arch).strip().lower()
    if key.isdigit():
        key = f"sm_{key}"
    if key not in ARCH_ALIASES:
        raise ArchError(f"unknown arch {arch!r}; known: {', '.join(sorted(ARCH_ALIASES, key=ARCH_ALIASES.get))}")
    return ARCH_ALIASES[key]


def cache_dir() -> Path:
    env = os.environ.get("VOLTA_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "volta" / "aot"


_ENTRY_RE = re.compile(r"\.entry\s+([A-Za-z_$][\w$]*)\s*\((.*?)\)", re.S)
_PARAM_RE = re.compile(r"\.param\s+\.(\w+)\s*((?:\.ptr[^,\n]*?)?)\s*([A-Za-z_$][\w$]*)\s*(?:,|$)", re.M)
_TARGET_RE = re.compile(r"^\s*\.target\s+(\w+)", re.M)


def ptx_entry(ptx: str) -> tuple[str, list[tuple[str, str, bool]]]:
    """Entry name and (name, type, is_pointer) of each parameter of the (single) ``.entry``
    (PTX ISA, "Kernel Function Parameters": ``.param .type [.ptr ...] name``)."""
    m = _ENTRY_RE.search(ptx)
    if not m:
        raise ValueError("no .entry in PTX")
    params = [(p.group(3), p.group(1), bool(p.group(2))) for p in _PARAM_RE.finditer(m.group(2))]
    return m.group(1), params


def _ptxas_path() -> str:
    import triton
    return str(Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "ptxas-blackwell")


@contextlib.contextmanager
def _triton_ptxas() -> Iterator[None]:
    """Point Triton at its CUDA-13 ptxas (the 12.x one rejects ``.version 9.0``)."""
    old = os.environ.get("TRITON_PTXAS_PATH")
    os.environ["TRITON_PTXAS_PATH"] = _ptxas_path()
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("TRITON_PTXAS_PATH", None)
        else:
            os.environ["TRITON_PTXAS_PATH"] = old


def _kernel_source(contract: Contract) -> str:
    kernel = contract.kernel
    key = getattr(kernel, "cache_key", None)  # JITFunction: source + dependencies' hashes
    if isinstance(key, str):
        return key
    import inspect
    return inspect.getsource(getattr(kernel, "fn", kernel))


def compile_options(contract: Contract, ptx_version: int) -> dict[str, Any]:
    """Triton options: the contract's warps/stages, FMA fusion on (Triton's launch default), the
    PTX ISA version, then the contract's own extra options."""
    return {"num_warps": contract.num_warps, "num_stages": contract.num_stages,
            "enable_fp_fusion": True, "ptx_version": ptx_version, **contract.options}


def cache_key(contract: Contract, cap: int, instance: str, ptx_version: int) -> str:
    import triton
    sig, consts, attrs = contract.triton_signature(instance)
    options = compile_options(contract, ptx_version)
    blob = json.dumps({
        "src": _kernel_source(contract), "sig": sig,
        "consts": {k: repr(v) for k, v in sorted(consts.items())},
        "attrs": sorted((list(k), v) for k, v in attrs.items()),
        "options": {k: repr(v) for k, v in sorted(options.items())},
        "cap": cap, "triton": triton.__version__,
    }, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def compile_contract(contract: Contract, arch: str | int = "sm_90a", instance: str = "verify",
                     ptx_version: int = DEFAULT_PTX_VERSION, cache: bool = True,
                     directory: str | os.PathLike[str] | None = None) -> CompiledPTX:
    """Compile ``contract`` at ``instance`` for ``arch``; cached unless ``cache=False``."""
    cap = parse_arch(arch)
    assert cap in ARCHES
    if cap < contract.min_arch:
        raise ContractError(contract.name, "min_arch",
                            f"needs sm_{contract.min_arch} or newer; cannot compile for sm_{cap}")
    resolved = contract.resolve(instance)
    key = cache_key(contract, cap, instance, ptx_version)
    base = Path(directory) if directory is not None else cache_dir()
    out = base / key[:2] / key
    meta_path = out / "meta.json"
    if cache and meta_path.exists():
        try:
            meta = json.loads(meta_path.read_text())
            meta["params"] = [PtxParam(**p) for p in meta["params"]]
            meta["grid"] = tuple(meta["grid"])
            ptx = Path(meta["paths"]["ptx"]).read_text()
            return CompiledPTX(ptx=ptx, **meta)
        except (OSError, KeyError, TypeError, ValueError):
            pass  # a damaged entry: compile again
    result, asm = _compile(contract, cap, instance, ptx_version, key)
    result.grid = resolved.grid
    if cache:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=".tmp-"))
        stem = contract.name
        for stage in STAGES:
            (tmp / f"{stem}.{stage}").write_text(asm[stage])
        result.paths = {stage: str(out / f"{stem}.{stage}") for stage in STAGES}
        (tmp / "meta.json").write_text(json.dumps(result.to_json(), indent=1))
        try:
            os.replace(tmp, out)
        except OSError:  # another process won the race; use its copy
            shutil.rmtree(tmp, ignore_errors=True)
    return result


def _compile(contract: Contract, cap: int, instance: str, ptx_version: int,
             key: str) -> tuple[CompiledPTX, dict[str, str]]:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    sig, consts, attrs = contract.triton_signature(instance)
    options = compile_options(contract, ptx_version)
    src = ASTSource(fn=contract.kernel, signature=sig, constexprs=consts, attrs=attrs)
    with _triton_ptxas():
        try:
            k = triton.compile(src, target=GPUTarget("cuda", cap, 32), options=options)
        except Exception as e:  # Triton compile errors are long; keep the first lines
            first = "\n".join(str(e).strip().splitlines()[-6:])
            raise ContractError(contract.name, "kernel", f"Triton failed for sm_{cap}: {type(e).__name__}: {first}") from None
    asm = {stage: k.asm[stage] if isinstance(k.asm[stage], str) else k.asm[stage].decode() for stage in STAGES}
    ptx = asm["ptx"]
    entry, raw = ptx_entry(ptx)
    runtime = [n for n, c in kernel_parameters(contract.kernel) if not c and sig.get(n) != "constexpr"]
    params = [PtxParam(name, ty, runtime[i] if i < len(runtime) else None, is_ptr)
              for i, (name, ty, is_ptr) in enumerate(raw)]
    tm = _TARGET_RE.search(ptx)
    target = tm.group(1) if tm else f"sm_{cap}"
    md = k.metadata
    result = CompiledPTX(
        contract=contract.name, instance=instance, cap=cap, target=target, ptx_version=ptx_version,
        entry=entry, params=params, shared=int(getattr(md, "shared", 0)),
        num_warps=int(getattr(md, "num_warps", contract.num_warps)),
        threads_per_block=32 * int(getattr(md, "num_warps", contract.num_warps)),
        grid=(1, 1, 1), ptx=ptx, key=key)
    return result, asm
