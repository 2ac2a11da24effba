"""Compile the CUDA sources under ``cuda/`` to PTX with the local ``nvcc -ptx``.

Each source is compiled for a few targets and in four flavours: ``plain`` (release),
``lineinfo`` (``-lineinfo``: ``.file``/``.loc`` directives), ``G`` (``-G``: device debug,
with DWARF ``.section`` blocks and ``.loc`` carrying ``function_name``/``inlined_at``) and
``rdc`` (``-rdc=true``: ``.extern``/``.visible``/``.weak`` functions and variables).
"""
from __future__ import annotations

import concurrent.futures
import subprocess
from pathlib import Path

from tests.corpus.common import (
    CORPUS_PKG_DIR,
    CorpusFile,
    cache_root,
    content_hash,
    generation_lock,
    load_manifest,
    tool_path,
    write_manifest,
)

CUDA_DIR = CORPUS_PKG_DIR / "cuda"

FLAVOUR_FLAGS: dict[str, tuple[str, ...]] = {
    "plain": (),
    "lineinfo": ("-lineinfo",),
    "G": ("-G",),
    "rdc": ("-rdc=true",),
}

#: (source stem, arch, flavour) triples that make up the nvcc part of the corpus.
BUILDS: tuple[tuple[str, str, str], ...] = (
    ("elementwise", "sm_80", "plain"),
    ("elementwise", "sm_90a", "lineinfo"),
    ("elementwise", "sm_120a", "plain"),
    ("elementwise", "sm_80", "G"),
    ("reduce_shared", "sm_80", "plain"),
    ("reduce_shared", "sm_89", "lineinfo"),
    ("reduce_shared", "sm_100a", "G"),
    ("device_call", "sm_80", "plain"),
    ("device_call", "sm_90a", "G"),
    ("device_call", "sm_100a", "lineinfo"),
    ("local_array", "sm_80", "plain"),
    ("local_array", "sm_90a", "lineinfo"),
    ("local_array", "sm_89", "G"),
    ("atomics", "sm_89", "plain"),
    ("atomics", "sm_90a", "plain"),
    ("atomics", "sm_100a", "lineinfo"),
    ("globals", "sm_80", "plain"),
    ("globals", "sm_90a", "G"),
    ("globals", "sm_120a", "lineinfo"),
    ("sm80_asm", "sm_80", "plain"),
    ("sm80_asm", "sm_80", "G"),
    ("sm80_asm", "sm_90a", "lineinfo"),
    ("sm90_asm", "sm_90a", "plain"),
    ("sm90_asm", "sm_90a", "lineinfo"),
    ("sm90_asm", "sm_90a", "G"),
    ("sm100_tcgen05", "sm_100a", "plain"),
    ("sm100_tcgen05", "sm_100a", "lineinfo"),
    ("sm100_tcgen05", "sm_100a", "G"),
    ("rdc_extern", "sm_90a", "rdc"),
    ("rdc_extern", "sm_80", "G"),
    ("device_call", "sm_89", "rdc"),
    ("cg_async", "sm_80", "plain"),
    ("cg_async", "sm_90a", "lineinfo"),
)


def _nvcc_version(nvcc: str) -> str:
    proc = subprocess.run([nvcc, "--version"], capture_output=True, text=True, check=True)
    return proc.stdout.strip().splitlines()[-1]


def _description(source: Path, flavour: str) -> str:
    first = source.read_text().splitlines()[0]
    text = first[2:].strip() if first.startswith("//") else source.stem
    return f"{text} [nvcc {flavour}]"


def _compile(nvcc: str, out_dir: Path, stem: str, arch: str, flavour: str) -> CorpusFile:
    source = CUDA_DIR / f"{stem}.cu"
    out = out_dir / f"{stem}.{arch}.{flavour}.ptx"
    cmd = [nvcc, "-ptx", f"-arch={arch}", *FLAVOUR_FLAGS[flavour], "-o", str(out), str(source)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr[-4000:]}")
    return CorpusFile(out, "nvcc", arch, _description(source, flavour))


def generate_nvcc() -> list[CorpusFile]:
    """The nvcc part of the corpus, generated once per content hash (two compiles at a time)."""
    nvcc = tool_path("nvcc")
    sources = sorted(CUDA_DIR.glob("*.cu"))
    key = content_hash([*sources, Path(__file__).resolve()], [_nvcc_version(nvcc)])
    out_dir = cache_root() / f"nvcc-{key}"
    cached = load_manifest(out_dir)
    if cached is not None:
        return cached
    with generation_lock(out_dir):
        cached = load_manifest(out_dir)
        if cached is not None:
            return cached
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            files = list(pool.map(lambda b: _compile(nvcc, out_dir, *b), BUILDS))
        write_manifest(out_dir, files)
    return files
