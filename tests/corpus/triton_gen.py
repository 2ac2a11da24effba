"""Compile the Triton corpus kernels ahead of time (no GPU) into PTX files.

``generate_triton()`` returns the cached files, running ``python -m tests.corpus.triton_gen
OUTDIR`` in a subprocess when the cache is cold: the subprocess isolates Triton's environment
(ptxas path, cache dir, no interpreter mode) from the test process.
"""
from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.corpus.common import (
    CORPUS_PKG_DIR,
    REPO_ROOT,
    CorpusFile,
    cache_root,
    content_hash,
    generation_lock,
    load_manifest,
    read_target,
    write_manifest,
)

_SOURCES = (CORPUS_PKG_DIR / "triton_kernels.py", Path(__file__).resolve())


def _triton_version() -> str:
    try:
        return importlib.metadata.version("triton")
    except importlib.metadata.PackageNotFoundError as exc:
        raise FileNotFoundError("triton is not installed") from exc


def generate_triton() -> list[CorpusFile]:
    """The Triton part of the corpus, generated once per content hash."""
    key = content_hash(_SOURCES, [_triton_version()])
    out_dir = cache_root() / f"triton-{key}"
    cached = load_manifest(out_dir)
    if cached is not None:
        return cached
    with generation_lock(out_dir):
        cached = load_manifest(out_dir)
        return cached if cached is not None else _generate_in_subprocess(out_dir)


def _generate_in_subprocess(out_dir: Path) -> list[CorpusFile]:
    env = dict(os.environ)
    env.pop("TRITON_INTERPRET", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, "-m", "tests.corpus.triton_gen", str(out_dir)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"Triton corpus generation failed:\n{proc.stderr[-4000:]}")
    files = load_manifest(out_dir)
    if files is None:
        raise RuntimeError(f"Triton corpus generation left no manifest in {out_dir}")
    return files


def _compile_all(out_dir: Path) -> list[CorpusFile]:
    """Runs inside the subprocess: compile every (kernel, cap) pair to PTX."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from tests.corpus.triton_kernels import SPECS

    files: list[CorpusFile] = []
    for spec in SPECS:
        names = list(spec.signature)
        attrs = {(names.index(p),): [["tt.divisibility", 16]] for p in spec.divisible}
        for cap in spec.caps:
            src = ASTSource(spec.fn, spec.signature, spec.constexprs, attrs)
            kernel = triton.compile(
                src,
                target=GPUTarget("cuda", cap, 32),
                options={"ptx_version": 90, "num_warps": spec.num_warps,
                         "num_stages": spec.num_stages, **dict(spec.options)},
            )
            text = kernel.asm["ptx"]
            arch = read_target(text)
            path = out_dir / f"{spec.name}.{arch}.ptx"
            path.write_text(text)
            files.append(CorpusFile(path, "triton", arch,
                                    f"{spec.description}; num_warps={spec.num_warps}"))
    return files


def _main(argv: list[str]) -> int:
    import triton

    out_dir = Path(argv[0])
    # Triton's bundled ptxas (CUDA 12.9) rejects .version 9.0 for sm_80/sm_89; the Blackwell
    # one accepts every target used here.
    bin_dir = Path(triton.__file__).parent / "backends" / "nvidia" / "bin"
    os.environ["TRITON_PTXAS_PATH"] = str(bin_dir / "ptxas-blackwell")
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    with tempfile.TemporaryDirectory(prefix="volta-triton-cache-") as tmp:
        os.environ["TRITON_CACHE_DIR"] = tmp
        files = _compile_all(out_dir)
    write_manifest(out_dir, files)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
