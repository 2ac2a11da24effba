"""Assembling a candidate: ptxas for the contract's target, its resource report, and a line-annotated
twin whose machine code maps back to PTX lines.

The cubin that is timed is exactly ``ptxas -arch=TARGET`` of the candidate's bytes (its sha256 is
recorded beside the PTX's). The sanitizer and profiler lanes run a *twin*: the same text with a
``.loc`` naming the candidate's own line before every instruction, assembled with ``-lineinfo``;
:func:`same_code` checks that the twin's machine code is the plain cubin's, and :func:`line_map`
reads the SASS-offset -> PTX-line table back with ``nvdisasm -g``.

Tools are found as ``$VOLTA_PTXAS`` / ``$VOLTA_NVDISASM``, then on PATH (the CUDA toolkit that
matches the driver), then the copies Triton ships.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ptx_parser import ast as A


class ToolMissing(RuntimeError):
    pass


def tool(name: str) -> str:
    """Path of ``ptxas`` or ``nvdisasm``."""
    env = os.environ.get(f"VOLTA_{name.upper()}")
    if env:
        return env
    found = shutil.which(name)
    if found:
        return found
    try:
        import triton
    except ImportError:  # pragma: no cover - triton is a dependency
        triton = None
    if triton is not None:
        base = Path(triton.__file__).parent / "backends" / "nvidia" / "bin"
        for cand in ((f"{name}-blackwell", name) if name == "ptxas" else (name,)):
            if (base / cand).is_file():
                return str(base / cand)
    raise ToolMissing(f"{name} not found (set VOLTA_{name.upper()}, put the CUDA toolkit on PATH, or install triton)")


@dataclass(frozen=True)
class Resources:
    """ptxas -v for the entry (PTX ISA: "ptxas" resource usage lines)."""

    registers: int = 0
    shared_bytes: int = 0  # static shared memory
    stack_frame: int = 0
    spill_stores: int = 0
    spill_loads: int = 0
    barriers: int = 0
    constant_bytes: int = 0


@dataclass
class Assembled:
    ok: bool
    target: str
    cubin: bytes = b""
    cubin_sha256: str = ""
    resources: Resources = field(default_factory=Resources)
    log: str = ""
    ptxas: str = ""
    version: str = ""


_USED = re.compile(r"Used (\d+) registers(?:, used (\d+) barriers)?(?:, (\d+) bytes smem)?(?:, (\d+) bytes cmem\[0\])?")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_SMEM = re.compile(r"(\d+) bytes smem")


def parse_resources(log: str, entry: str) -> Resources:
    """The resource lines of ``entry`` in a ``ptxas -v`` log."""
    section = log
    start = log.find(f"Compiling entry function '{entry}'")
    if start >= 0:
        nxt = log.find("Compiling entry function", start + 1)
        section = log[start:nxt if nxt >= 0 else len(log)]
    regs = barriers = smem = cmem = frame = st = ld = 0
    m = _USED.search(section)
    if m:
        regs, barriers = int(m.group(1)), int(m.group(2) or 0)
        smem, cmem = int(m.group(3) or 0), int(m.group(4) or 0)
    elif _SMEM.search(section):
        smem = int(_SMEM.search(section).group(1))
    f = _FRAME.search(section)
    if f:
        frame, st, ld = (int(x) for x in f.groups())
    return Resources(regs, smem, frame, st, ld, barriers, cmem)


def version(ptxas: str) -> str:
    try:
        out = subprocess.run([ptxas, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return "?"
    m = re.search(r"release ([\d.]+), V([\d.]+)", out)
    return m.group(2) if m else out.strip().splitlines()[-1] if out.strip() else "?"


def assemble(ptx: str, target: str, entry: str, lineinfo: bool = False, timeout: float = 120.0) -> Assembled:
    """``ptxas -v -arch=target`` of the text; never raises for bad PTX (``ok`` is False, ``log`` says why)."""
    ptxas = tool("ptxas")
    with tempfile.TemporaryDirectory(prefix="volta-judge-") as tmp:
        src, out = Path(tmp) / "candidate.ptx", Path(tmp) / "candidate.cubin"
        src.write_bytes(ptx.encode("utf-8"))  # the bytes whose sha256 the report carries
        cmd = [ptxas, "-v", f"-arch={target}", str(src), "-o", str(out)] + (["-lineinfo"] if lineinfo else [])
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return Assembled(False, target, log=f"ptxas ran past {timeout:.0f} s", ptxas=ptxas)
        log = (proc.stdout + proc.stderr).replace(str(src), "candidate.ptx")
        if proc.returncode != 0 or not out.is_file():
            return Assembled(False, target, log=log.strip(), ptxas=ptxas, version=version(ptxas))
        cubin = out.read_bytes()
    return Assembled(True, target, cubin, hashlib.sha256(cubin).hexdigest(), parse_resources(log, entry), log.strip(),
                     ptxas, version(ptxas))


# ---------------------------------------------------------------------------------------- line info

LINE_FILE = "candidate.ptx"
_LOC = re.compile(r"\.loc\s")


def _split_column(line: str, ins: A.Instruction) -> int:
    """0-based column where ``ins`` (with its guard) starts on ``line``."""
    col = max(ins.span.col - 1, 0)
    if ins.guard is not None:
        at = line.rfind("@", 0, col)
        if at >= 0:
            col = at
    return col


def annotate(ptx: str, module: A.Module, name: str = LINE_FILE) -> str:
    """The twin text: existing ``.loc`` lines dropped, ``.file K "name"`` declared, and ``.loc K L C``
    before every instruction (L, C: its line and column in ``ptx``). Line numbers of the twin itself
    do not matter: the .loc carry the candidate's."""
    lines = ptx.splitlines()
    starts: dict[int, list[A.Instruction]] = {}
    for fn in module.functions:
        for ins in fn.instructions():
            if ins.span is not None:
                starts.setdefault(ins.span.line, []).append(ins)
    index = max(module.files, default=0) + 1
    out: list[str] = []
    declared = False
    for n, text in enumerate(lines, start=1):
        stripped = text.lstrip()
        if _LOC.match(stripped) and n not in starts:  # not ".local": a stack depot lives there
            continue
        if n in starts:
            rest = text
            pieces: list[str] = []
            for ins in sorted(starts[n], key=lambda i: i.span.col, reverse=True):
                col = _split_column(rest, ins)
                pieces.append(f".loc {index} {n} {ins.span.col}\n" + rest[col:])
                rest = rest[:col]
            head = rest if rest.strip() else ""
            out.append((head + "\n" if head else "") + "\n".join(reversed(pieces)))
        else:
            out.append(text)
        if not declared and stripped.startswith(".address_size"):
            out.append(f'.file {index} "{name}"')
            declared = True
    if not declared:
        raise ValueError("the PTX has no .address_size directive to declare the line file after")
    return "\n".join(out) + "\n"


_LINE = re.compile(r'//## File "([^"]+)", line (\d+)')
_ADDR = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*$")


@dataclass(frozen=True)
class SassLine:
    offset: int
    sass: str
    ptx_line: int | None


def disassemble(cubin: bytes, line_info: bool) -> list[SassLine]:
    """Every SASS instruction of the cubin with its offset (and, with ``line_info``, the
    ``LINE_FILE`` line of the last ``//## File`` annotation before it)."""
    nvdisasm = tool("nvdisasm")
    with tempfile.TemporaryDirectory(prefix="volta-judge-") as tmp:
        path = Path(tmp) / "k.cubin"
        path.write_bytes(cubin)
        proc = subprocess.run([nvdisasm, "-c", *(["-g"] if line_info else []), str(path)], capture_output=True,
                              text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"nvdisasm failed: {proc.stderr.strip()[:300]}")
    out, current = [], None
    for text in proc.stdout.splitlines():
        m = _LINE.search(text)
        if m:
            current = int(m.group(2)) if Path(m.group(1)).name == LINE_FILE else None
            continue
        a = _ADDR.match(text)
        if a:
            out.append(SassLine(int(a.group(1), 16), a.group(2), current))
    return out


def line_map(twin_cubin: bytes) -> dict[int, int]:
    """SASS offset -> candidate PTX line, from the twin's line table."""
    return {s.offset: s.ptx_line for s in disassemble(twin_cubin, True) if s.ptx_line is not None}


def same_code(plain: bytes, twin: bytes) -> bool:
    """The two cubins hold the same instructions at the same offsets."""
    strip = lambda c: [(s.offset, s.sass) for s in disassemble(c, False)]  # noqa: E731
    return strip(plain) == strip(twin)
