"""Shared pieces of the corpus generators: the file record, the cache and ptxas."""
from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Iterable, Iterator

CORPUS_PKG_DIR = Path(__file__).resolve().parent
REPO_ROOT = CORPUS_PKG_DIR.parent.parent

_TARGET_RE = re.compile(r"^\s*\.target\s+([A-Za-z0-9_]+)", re.MULTILINE)
_VERSION_RE = re.compile(r"^(\s*\.version\s+)(\d+)\.(\d+)", re.MULTILINE)

#: Highest PTX ISA version the local ptxas (CUDA 13.0) accepts.
MAX_PTX_VERSION = (9, 0)


@dataclasses.dataclass(frozen=True)
class CorpusFile:
    """One PTX file of the corpus.

    ``origin`` is ``triton``, ``nvcc`` or ``handwritten``; ``arch`` is the ``.target`` of the
    file (``sm_90a``...); ``description`` says what the file exercises.
    """

    path: Path
    origin: str
    arch: str
    description: str

    @property
    def test_id(self) -> str:
        """A stable, readable id for pytest parametrisation."""
        return f"{self.origin}/{self.path.name}"


def cache_root() -> Path:
    """Directory holding generated corpus files (``$VOLTA_CORPUS_DIR`` or ``.cache/corpus``)."""
    env = os.environ.get("VOLTA_CORPUS_DIR")
    return Path(env) if env else REPO_ROOT / ".cache" / "corpus"


def read_target(text: str) -> str:
    """The first ``.target`` name of a PTX text (``sm_80`` when there is none)."""
    m = _TARGET_RE.search(text)
    return m.group(1) if m else "sm_80"


def content_hash(paths: Iterable[Path], extra: Iterable[str] = ()) -> str:
    """A hash of file contents and extra strings (tool versions), short enough for a dir name."""
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(p.name.encode())
        h.update(b"\0")
        h.update(p.read_bytes())
        h.update(b"\0")
    for s in extra:
        h.update(s.encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


def load_manifest(directory: Path) -> list[CorpusFile] | None:
    """Files listed by a finished generation in ``directory`` (None if absent or incomplete)."""
    manifest = directory / "manifest.json"
    if not manifest.is_file():
        return None
    try:
        rows = json.loads(manifest.read_text())
    except json.JSONDecodeError:
        return None
    files = [CorpusFile(directory / r["name"], r["origin"], r["arch"], r["description"]) for r in rows]
    if not all(f.path.is_file() for f in files):
        return None
    return files


@contextlib.contextmanager
def generation_lock(out_dir: Path) -> Iterator[None]:
    """Serialise generation into ``out_dir`` across processes (e.g. pytest-xdist workers)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with open(out_dir.parent / f".{out_dir.name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def write_manifest(directory: Path, files: list[CorpusFile]) -> None:
    """Record a finished generation (written last, atomically, so partial runs are redone)."""
    rows = [
        {"name": f.path.name, "origin": f.origin, "arch": f.arch, "description": f.description}
        for f in files
    ]
    tmp = directory / "manifest.json.tmp"
    tmp.write_text(json.dumps(rows, indent=1))
    os.replace(tmp, directory / "manifest.json")


def for_local_ptxas(text: str) -> str:
    """Rewrite ``.version`` above what the local ptxas knows down to 9.0."""

    def fix(m: re.Match[str]) -> str:
        if (int(m.group(2)), int(m.group(3))) > MAX_PTX_VERSION:
            return f"{m.group(1)}{MAX_PTX_VERSION[0]}.{MAX_PTX_VERSION[1]}"
        return m.group(0)

    return _VERSION_RE.sub(fix, text, count=1)


def tool_path(name: str) -> str:
    """Absolute path of a CUDA tool on PATH; FileNotFoundError when missing."""
    path = shutil.which(name)
    if path is None:
        raise FileNotFoundError(f"{name} not found on PATH")
    return path


_EXTERN_FUNC_RE = re.compile(r"^\s*\.extern\s+\.func\b", re.MULTILINE)


def _relocatable_flag(text: str) -> list[str]:
    return ["-c"] if _EXTERN_FUNC_RE.search(text) else []


@dataclasses.dataclass(frozen=True)
class PtxasResult:
    """Outcome of one ptxas run: accepted or not, its messages, and the cubin bytes."""

    accepted: bool
    stderr: str
    cubin: bytes


def run_ptxas(text: str, arch: str, timeout: float = 120.0) -> PtxasResult:
    """Assemble PTX text with the local ptxas for ``arch`` (``.version`` capped at 9.0).

    Text that declares ``.extern`` functions (nvcc ``-rdc=true`` output) is assembled with
    ``-c`` (relocatable, compile-only) so calls to them resolve at link time; everything else in
    whole-program mode, where the cubin does not depend on PTX line numbers.  The input file
    always has the same name, so two runs on texts with the same meaning give cubins that can
    be compared section by section.
    """
    ptxas = tool_path("ptxas")
    with tempfile.TemporaryDirectory(prefix="volta-ptxas-") as tmp:
        src = Path(tmp) / "in.ptx"
        out = Path(tmp) / "out.cubin"
        src.write_text(for_local_ptxas(text))
        proc = subprocess.run(
            [ptxas, *_relocatable_flag(text), f"-arch={arch}", str(src), "-o", str(out)],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        ok = proc.returncode == 0 and out.is_file()
        cubin = out.read_bytes() if ok else b""
    return PtxasResult(ok, proc.stderr, cubin)
