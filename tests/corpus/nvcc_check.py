"""The nvcc check corpus: CUDA kernels under ``cuda/check/`` with the verdict `volta check` owes them.

Each ``.cu`` file holds one ``extern "C"`` kernel and a header::

    // one line saying what the kernel does
    // expect: VERDICT            (race_free, race, out_of_bounds, trap, bad_input, ...)
    // expect-G: VERDICT          (optional: the -G build's verdict when it differs)
    // why: the reason, in the terms of the source
    // launch: {...}              (a launch spec; "@name.key" stands for key of cuda/check/name.json)

Every kernel is compiled by the local ``nvcc -ptx -arch=sm_80`` at ``-O3 -lineinfo`` (flavour
``O3``) and at ``-G`` (flavour ``G``, device debug). The PTX is written with the header (expect,
why, launch) in front, so ``volta check FILE`` and ``volta regress DIR`` take the launch and the
expectation from the file itself. Output is cached by content hash under the corpus cache
(``nvcc-check-<hash>/``), like the rest of the corpus.
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import re
import subprocess
from pathlib import Path

from tests.corpus.common import CORPUS_PKG_DIR, cache_root, content_hash, generation_lock, tool_path

CHECK_DIR = CORPUS_PKG_DIR / "cuda" / "check"
ARCH = "sm_80"
FLAVOURS: dict[str, tuple[str, ...]] = {"O3": ("-O3", "-lineinfo"), "G": ("-G",)}

_HEADER = re.compile(r"^//\s*(expect|expect-G|why|launch)\s*:\s*(.*?)\s*$")
_REF = re.compile(r'"@(\w+)\.(\w+)"')


@dataclasses.dataclass(frozen=True)
class CheckCase:
    """One compiled kernel of the check corpus and the verdict it must get."""

    stem: str
    flavour: str
    path: Path
    expect: str
    why: str

    @property
    def test_id(self) -> str:
        return f"{self.stem}.{self.flavour}"


@dataclasses.dataclass(frozen=True)
class Source:
    path: Path
    description: str
    expect: dict[str, str]  # flavour -> verdict
    why: str
    launch: str  # JSON text with references resolved


def _resolve(text: str, path: Path) -> str:
    def value(m: re.Match[str]) -> str:
        data = json.loads((CHECK_DIR / f"{m.group(1)}.json").read_text())
        if m.group(2) not in data:
            raise ValueError(f"{path.name}: {m.group(1)}.json has no key {m.group(2)!r}")
        return json.dumps(data[m.group(2)])

    return _REF.sub(value, text)


def read_source(path: Path) -> Source:
    """The header of one ``.cu`` file (ValueError when a field is missing)."""
    lines = path.read_text().splitlines()
    fields: dict[str, str] = {}
    for line in lines[:12]:
        m = _HEADER.match(line)
        if m:
            fields[m.group(1)] = m.group(2)
    missing = {"expect", "why", "launch"} - set(fields)
    if missing or not lines[0].startswith("//"):
        raise ValueError(f"{path}: header lacks {sorted(missing) or 'a first description line'}")
    launch = _resolve(fields["launch"], path)
    json.loads(launch)  # a broken spec is an error of the corpus, found here
    expect = {f: fields.get(f"expect-{f}", fields["expect"]) for f in FLAVOURS}
    return Source(path, lines[0][2:].strip(), expect, fields["why"], launch)


def sources() -> list[Source]:
    return [read_source(p) for p in sorted(CHECK_DIR.glob("*.cu"))]


def _compile(nvcc: str, out_dir: Path, src: Source, flavour: str) -> CheckCase:
    stem = src.path.stem
    out = out_dir / f"{stem}.{flavour}.ptx"
    raw = out_dir / f"{stem}.{flavour}.raw.ptx"
    cmd = [nvcc, "-ptx", f"-arch={ARCH}", *FLAVOURS[flavour], "-o", str(raw), str(src.path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr[-4000:]}")
    head = [f"// {src.description} [nvcc {' '.join(FLAVOURS[flavour])}, {ARCH}]",
            f"// source: tests/corpus/cuda/check/{src.path.name}",
            f"// expect: {src.expect[flavour]}", f"// why: {src.why}", f"// launch: {src.launch}"]
    out.write_text("\n".join(head) + "\n" + raw.read_text())
    raw.unlink()
    return CheckCase(stem, flavour, out, src.expect[flavour], src.why)


def generate_check_corpus() -> list[CheckCase]:
    """Every kernel of ``cuda/check`` in both flavours, compiled once per content hash."""
    nvcc = tool_path("nvcc")
    srcs = sources()
    version = subprocess.run([nvcc, "--version"], capture_output=True, text=True, check=True).stdout
    files = [s.path for s in srcs] + sorted(CHECK_DIR.glob("*.json")) + [Path(__file__).resolve()]
    out_dir = cache_root() / f"nvcc-check-{content_hash(files, [version.strip().splitlines()[-1]])}"
    manifest = out_dir / "manifest.json"

    def load() -> list[CheckCase] | None:
        if not manifest.is_file():
            return None
        rows = json.loads(manifest.read_text())
        cases = [CheckCase(r["stem"], r["flavour"], out_dir / r["file"], r["expect"], r["why"]) for r in rows]
        return cases if all(c.path.is_file() for c in cases) else None

    cached = load()
    if cached is not None:
        return cached
    with generation_lock(out_dir):
        cached = load()
        if cached is not None:
            return cached
        jobs = [(s, f) for s in srcs for f in FLAVOURS]
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            cases = list(pool.map(lambda job: _compile(nvcc, out_dir, *job), jobs))
        rows = [{"stem": c.stem, "flavour": c.flavour, "file": c.path.name, "expect": c.expect, "why": c.why}
                for c in cases]
        tmp = out_dir / "manifest.json.tmp"
        tmp.write_text(json.dumps(rows, indent=1))
        tmp.replace(manifest)
    return cases
