"""Ahead-of-time compilation of a contract instance to PTX, for any supported target, no GPU needed.

The Triton signature, constexprs and divisibility attributes come from
:meth:`harness.contract.Contract.triton_signature`, i.e. exactly what a real launch with 16-byte
aligned pointers would specialise on, so the PTX is the code a real run executes.  Results are
cached by a content hash (kernel source and the file it is in, signature, constexprs, attrs,
options, target, PTX version, Triton version) under ``$VOLTA_CACHE_DIR`` (default
``~/.cache/volta/aot``), with the intermediate ttir/ttgir/llir kept beside the PTX; Triton's own
cache goes to ``$VOLTA_CACHE_DIR/triton/<source file hash>``. Keying on the file keeps the `.file`
paths of the PTX (and so the source lines of witnesses) in the checkout that asked.

A tensor-descriptor argument (:class:`harness.contract.TensorDesc`) is compiled with the signature
Triton's JIT gives a ``TensorDescriptor``, ``tensordesc<dtype[block]>`` (no divisibility
attributes), and becomes several PTX parameters (:class:`DescPart`); Triton's ``tensordesc_meta``
(the box and swizzle of each CUtensorMap) and global-scratch size are kept with the result.
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
from enum import Enum
from pathlib import Path
from typing import Any, Iterator

from harness.contract import ARCHES, Contract, ContractError, TensorDesc, kernel_parameters

#: Accepted spellings of each target; the value is Triton's compute capability.
ARCH_ALIASES: dict[str, int] = {
    "sm_80": 80, "sm_89": 89, "sm_90": 90, "sm_90a": 90,
    "sm_100": 100, "sm_100a": 100, "sm_120": 120, "sm_120a": 120,
}
DEFAULT_PTX_VERSION = 90
STAGES = ("ttir", "ttgir", "llir", "ptx")


class ArchError(ValueError):
    """An unknown target architecture."""


class DescPart(str, Enum):
    """Which part of a tensor-descriptor argument a PTX parameter carries. With TMA (Triton's
    ``tensordesc_meta`` non-empty) a descriptor of rank r is a CUtensorMap (``.param .align 64 .b8
    p[128]``), r ``.u32`` sizes and r ``.u64`` strides in elements, outermost first; without it
    (sm_80/sm_89) Triton passes the base pointer, r ``.u64`` sizes, r ``.u64`` strides, two
    ``.u8`` flags (NaN padding, round to tf32), then the r sizes and r strides again."""

    TENSOR_MAP = "tensor_map"
    BASE = "base"
    SHAPE = "shape"  # .u32 (after the map or the flags)
    STRIDE = "stride"  # .u64
    SHAPE64 = "shape64"  # the decomposed form's first copy
    STRIDE64 = "stride64"
    PADDING_NAN = "padding_nan"
    ROUND_TF32 = "round_tf32"


@dataclass
class PtxParam:
    """One parameter of the PTX ``.entry``: its PTX name and type (``b1024`` for a 128-byte
    ``.b8`` array), and the contract argument it carries (None for the hidden trailing parameters
    Triton appends, e.g. scratch pointers); ``part``/``index``: which piece of a tensor-descriptor
    argument it is (dimension ``index`` of a shape or stride)."""

    name: str
    ptx_type: str
    arg: str | None
    is_pointer: bool
    part: DescPart | None = None
    index: int = 0


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
    #: bytes of global scratch each program needs (Triton's hidden first pointer: device-side
    #: tensor descriptors live there) and their alignment; profile scratch bytes
    global_scratch_size: int = 0
    global_scratch_align: int = 1
    profile_scratch_size: int = 0
    #: Triton's ``tensordesc_meta``, one entry per descriptor argument that became a CUtensorMap:
    #: swizzle (CUtensorMapSwizzle), elem_size, elem_type (PTX .elemtype encoding), block_size
    #: (the box, outermost first), fp4_padded
    tensordesc: list[dict[str, Any]] = field(default_factory=list)

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
_PARAM_RE = re.compile(r"\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)\s*((?:\.ptr[^,\n]*?)?)\s*([A-Za-z_$][\w$]*)"
                       r"\s*(?:\[(\d+)\])?\s*(?:,|$)", re.M)
_TARGET_RE = re.compile(r"^\s*\.target\s+(\w+)", re.M)


def ptx_entry(ptx: str) -> tuple[str, list[tuple[str, str, bool]]]:
    """Entry name and (name, type, is_pointer) of each parameter of the (single) ``.entry``
    (PTX ISA, "Kernel Function Parameters": ``.param .type [.ptr ...] name``)."""
    m = _ENTRY_RE.search(ptx)
    if not m:
        raise ValueError("no .entry in PTX")
    params = [(p.group(3), _array_type(p.group(1), p.group(4)), bool(p.group(2)))
              for p in _PARAM_RE.finditer(m.group(2))]
    return m.group(1), params


def _array_type(ty: str, count: str | None) -> str:
    """``b8`` with ``[128]`` is ``b1024``: the parameter's width in bits."""
    if count is None:
        return ty
    return f"{ty[0]}{int(ty[1:]) * int(count)}" if ty[1:].isdigit() else ty


def _ptxas_path() -> str | None:
    """Triton's CUDA-13 ptxas where it ships one; else the CUDA toolkit's on PATH (a Triton that
    bundles only a 12.x ptxas, as on the GPU machine); None: Triton's own choice."""
    import triton
    bundled = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "ptxas-blackwell"
    return str(bundled) if bundled.is_file() else shutil.which("ptxas")


@contextlib.contextmanager
def _triton_env(contract: Contract) -> Iterator[None]:
    """Point Triton at a CUDA-13 ptxas (the 12.x one rejects ``.version 9.0``) and at a cache of
    its own for this kernel's source file: Triton's cache key ignores where the source lives, so a
    shared cache would hand this checkout PTX whose `.file` names another checkout's files."""
    where = hashlib.sha256(_source_file(contract).encode()).hexdigest()[:16]
    settings = {"TRITON_CACHE_DIR": str(cache_dir() / "triton" / where)}
    ptxas = _ptxas_path()
    if ptxas is not None:
        settings["TRITON_PTXAS_PATH"] = ptxas
    old = {k: os.environ.get(k) for k in settings}
    os.environ.update(settings)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _source_file(contract: Contract) -> str:
    """The file the kernel's source comes from (Triton writes it into the PTX's `.file` lines)."""
    import inspect

    fn = getattr(contract.kernel, "fn", contract.kernel)
    try:
        return str(Path(inspect.getsourcefile(fn) or "").resolve())
    except TypeError:  # not defined in a file
        return ""


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
        "src": _kernel_source(contract), "file": _source_file(contract), "sig": sig,
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
    bundled = _bundle().get(bundle_key(contract, cap, instance, ptx_version))
    if bundled is not None:
        return _from_meta(dict(bundled["meta"]), bundled["ptx"], instance, resolved.grid)
    key = cache_key(contract, cap, instance, ptx_version)
    base = Path(directory) if directory is not None else cache_dir()
    out = base / key[:2] / key
    meta_path = out / "meta.json"
    if cache and meta_path.exists():
        try:
            meta = json.loads(meta_path.read_text())
            if "tensordesc" not in meta:
                raise KeyError("tensordesc")  # written before descriptors were recorded: compile again
            ptx = Path(meta["paths"]["ptx"]).read_text()
            # the key is the specialisation: another instance that specialises alike shares the build
            return _from_meta(meta, ptx, instance, resolved.grid)
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


def _from_meta(meta: dict[str, Any], ptx: str, instance: str, grid: tuple[int, int, int]) -> CompiledPTX:
    meta["params"] = [PtxParam(**{**p, "part": DescPart(p["part"]) if p.get("part") else None}) for p in meta["params"]]
    meta.update(instance=instance, grid=tuple(grid))
    return CompiledPTX(ptx=ptx, **meta)


# ---------------------------------------------------------------------------------- reference bundles
#: A JSON(.gz) file of builds made elsewhere (``export_bundle``), consulted before compiling: the GPU
#: machine judges candidates against the same Triton PTX as the machine they were written on, even
#: where its own Triton differs or cannot compile for the target.
BUNDLE_ENV = "VOLTA_REFERENCE_BUNDLE"
_BUNDLES: dict[str, dict[str, Any]] = {}


def bundle_key(contract: Contract, cap: int, instance: str, ptx_version: int) -> str:
    """The specialisation of a build, independent of Triton's version: the kernel's source, the
    signature, constexprs and attributes a launch at ``instance`` specialises on, the options."""
    import inspect

    sig, consts, attrs = contract.triton_signature(instance)
    src = inspect.getsource(getattr(contract.kernel, "fn", contract.kernel))
    return json.dumps({"contract": contract.name, "cap": cap, "src": hashlib.sha256(src.encode()).hexdigest(),
                       "sig": sig, "consts": {k: repr(v) for k, v in sorted(consts.items())},
                       "attrs": sorted((list(k), v) for k, v in attrs.items()),
                       "options": {k: repr(v) for k, v in sorted(compile_options(contract, ptx_version).items())}},
                      sort_keys=True)


def _bundle() -> dict[str, Any]:
    path = os.environ.get(BUNDLE_ENV)
    if not path:
        return {}
    if path not in _BUNDLES:
        import gzip

        raw = Path(path).read_bytes()
        _BUNDLES[path] = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)["builds"]
    return _BUNDLES[path]


def export_bundle(contracts: list[Contract], arch: str | int, path: str | os.PathLike[str],
                  instances: tuple[str, ...] = ("verify", "bench")) -> int:
    """Write the builds of ``contracts`` at ``instances`` for ``arch`` to ``path`` (gzip JSON); the
    number of builds. Contracts the target cannot run are left out."""
    import gzip

    import triton

    cap = parse_arch(arch)
    builds: dict[str, Any] = {}
    for c in contracts:
        if cap < c.min_arch:
            continue
        for inst in instances:
            b = compile_contract(c, arch, inst)
            meta = b.to_json()
            meta.pop("paths", None)
            builds.setdefault(bundle_key(c, cap, inst, b.ptx_version), {"meta": meta, "ptx": b.ptx})
    blob = json.dumps({"triton": triton.__version__, "arch": str(arch), "builds": builds}).encode()
    Path(path).write_bytes(gzip.compress(blob))
    return len(builds)


def _compile(contract: Contract, cap: int, instance: str, ptx_version: int,
             key: str) -> tuple[CompiledPTX, dict[str, str]]:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    sig, consts, attrs = contract.triton_signature(instance)
    options = compile_options(contract, ptx_version)
    src = ASTSource(fn=contract.kernel, signature=sig, constexprs=consts, attrs=attrs)
    with _triton_env(contract):
        try:
            k = triton.compile(src, target=GPUTarget("cuda", cap, 32), options=options)
        except Exception as e:  # Triton compile errors are long; keep the first lines
            first = "\n".join(str(e).strip().splitlines()[-6:])
            raise ContractError(contract.name, "kernel", f"Triton failed for sm_{cap}: {type(e).__name__}: {first}") from None
    asm = {stage: k.asm[stage] if isinstance(k.asm[stage], str) else k.asm[stage].decode() for stage in STAGES}
    ptx = asm["ptx"]
    entry, raw = ptx_entry(ptx)
    md = k.metadata
    tensordesc = [dict(d) for d in (getattr(md, "tensordesc_meta", None) or [])]
    slots = _param_slots(contract, sig, contract.resolve(instance).blocks, bool(tensordesc))
    params = []
    for i, (name, ty, is_ptr) in enumerate(raw):
        arg, part, index = slots[i] if i < len(slots) else (None, None, 0)
        params.append(PtxParam(name, ty, arg, is_ptr, part, index))
    tm = _TARGET_RE.search(ptx)
    target = tm.group(1) if tm else f"sm_{cap}"
    result = CompiledPTX(
        contract=contract.name, instance=instance, cap=cap, target=target, ptx_version=ptx_version,
        entry=entry, params=params, shared=int(getattr(md, "shared", 0)),
        num_warps=int(getattr(md, "num_warps", contract.num_warps)),
        threads_per_block=32 * int(getattr(md, "num_warps", contract.num_warps)),
        grid=(1, 1, 1), ptx=ptx, key=key,
        global_scratch_size=int(getattr(md, "global_scratch_size", 0) or 0),
        global_scratch_align=int(getattr(md, "global_scratch_align", 1) or 1),
        profile_scratch_size=int(getattr(md, "profile_scratch_size", 0) or 0), tensordesc=tensordesc)
    return result, asm


def _param_slots(contract: Contract, sig: dict[str, str], blocks: dict[str, tuple[int, ...]],
                 tma: bool) -> list[tuple[str, DescPart | None, int]]:
    """(contract argument, descriptor part, dimension) of each PTX parameter before the hidden ones,
    in order: Triton expands a descriptor argument into several parameters (DescPart)."""
    descs = {a.name: a for a in contract.args if isinstance(a, TensorDesc)}
    slots: list[tuple[str, DescPart | None, int]] = []
    for n, c in kernel_parameters(contract.kernel):
        if c or sig.get(n) == "constexpr":
            continue
        if n not in descs:
            slots.append((n, None, 0))
            continue
        r = len(blocks[n])
        dims = lambda part: [(n, part, i) for i in range(r)]  # noqa: E731
        if tma:
            slots += [(n, DescPart.TENSOR_MAP, 0)] + dims(DescPart.SHAPE) + dims(DescPart.STRIDE)
        else:
            slots += ([(n, DescPart.BASE, 0)] + dims(DescPart.SHAPE64) + dims(DescPart.STRIDE64)
                      + [(n, DescPart.PADDING_NAN, 0), (n, DescPart.ROUND_TF32, 0)] + dims(DescPart.SHAPE)
                      + dims(DescPart.STRIDE))
    return slots
