"""The PTX test corpus for Volta's front end.

Three origins of PTX text:

* ``triton``      - small Triton kernels (``triton_kernels.py``) compiled ahead of time, no GPU,
                    for compute capabilities 80, 89, 90, 100 and 120 (``triton_gen.py``);
* ``nvcc``        - CUDA sources under ``cuda/`` compiled by the local ``nvcc -ptx`` in several
                    flavours (plain, ``-lineinfo``, ``-G``) (``nvcc_gen.py``);
* ``handwritten`` - committed edge-case files under ``handwritten/``.

Files under ``bad/`` are malformed on purpose; their first line says where the parser must
stop: ``// expect-error: LINE:COL SUBSTRING``.

Generated files are cached on disk, keyed by a hash of everything that determines them (the
generator sources, the CUDA sources, the Triton and nvcc versions), in ``$VOLTA_CORPUS_DIR`` or
``<repo>/.cache/corpus``.  ``build_corpus()`` is the single entry point used by the tests and by
``bench/parse.py``.
"""
from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

from tests.corpus.common import (
    CORPUS_PKG_DIR,
    CorpusFile,
    cache_root,
    read_target,
)

__all__ = [
    "CorpusFile",
    "BadFile",
    "build_corpus",
    "handwritten_files",
    "bad_files",
    "cache_root",
    "read_target",
]

HANDWRITTEN_DIR = CORPUS_PKG_DIR / "handwritten"
BAD_DIR = CORPUS_PKG_DIR / "bad"

_EXPECT_RE = re.compile(r"^//\s*expect-error:\s*(\d+):(\d+)\s*(.*?)\s*$")


@dataclasses.dataclass(frozen=True)
class BadFile:
    """A malformed PTX file and where the parser must report the error."""

    path: Path
    line: int
    col: int
    message_substring: str


def handwritten_files() -> list[CorpusFile]:
    """The committed hand-written edge cases (no generation, no cache)."""
    out: list[CorpusFile] = []
    for path in sorted(HANDWRITTEN_DIR.glob("*.ptx")):
        text = path.read_text()
        first = text.splitlines()[0] if text else ""
        desc = first[2:].strip() if first.startswith("//") else path.stem
        out.append(CorpusFile(path, "handwritten", read_target(text), desc))
    return out


def bad_files() -> list[BadFile]:
    """The committed malformed files with their expected error position."""
    out: list[BadFile] = []
    for path in sorted(BAD_DIR.glob("*.ptx")):
        first = path.read_text().splitlines()[0]
        m = _EXPECT_RE.match(first)
        if m is None:
            raise ValueError(f"{path}: first line must be '// expect-error: LINE:COL text'")
        out.append(BadFile(path, int(m.group(1)), int(m.group(2)), m.group(3)))
    return out


def build_corpus(origins: tuple[str, ...] = ("triton", "nvcc", "handwritten")) -> list[CorpusFile]:
    """Every corpus file, generating (or reusing the cached) Triton and nvcc output.

    Generation is skipped for an origin whose tool is missing only if the environment variable
    ``VOLTA_CORPUS_ALLOW_MISSING=1`` is set; otherwise a missing tool is an error.
    """
    files: list[CorpusFile] = []
    allow_missing = os.environ.get("VOLTA_CORPUS_ALLOW_MISSING") == "1"
    if "triton" in origins:
        from tests.corpus.triton_gen import generate_triton

        try:
            files += generate_triton()
        except FileNotFoundError:
            if not allow_missing:
                raise
    if "nvcc" in origins:
        from tests.corpus.nvcc_gen import generate_nvcc

        try:
            files += generate_nvcc()
        except FileNotFoundError:
            if not allow_missing:
                raise
    if "handwritten" in origins:
        files += handwritten_files()
    return files
