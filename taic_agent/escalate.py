"""Compiler-source escalation: a narrow question about one lowering step, answered from Triton's own
sources as installed here.

What an installed Triton holds (and so what this level can read): the Python compilation pipeline
(``triton/backends/nvidia/compiler.py``: ``make_ttir``, ``make_ttgir``, ``make_llir``,
``make_ptx``, which list every pass in order and the options each reads) and the TableGen
declarations of passes and operations (``triton/include/**/Passes.td``, ``*Ops.td``: each pass's
name, summary and description). The C++ implementations of the passes and of the conversion
patterns (``lib/...``) are compiled into ``libtriton.so`` and not installed, so the answer names
the pass, its declared purpose and the option that controls it, never the code of its rewrite.
The LLVM IR -> PTX step is LLVM's NVPTX back end, whose sources are not part of Triton at all.

Without a model the answer is the evidence itself (pipeline lines and pass declarations with
file:line); with one, the question and that evidence are one narrow call (taic_agent.generators).
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from pathlib import Path

#: The stage function that produces each stage (the step *into* it).
STAGE_FUNCTION = {"ttir": "make_ttir", "ttgir": "make_ttgir", "llir": "make_llir", "ptx": "make_ptx"}
#: Words to look for in pass declarations, per operation.
OP_WORDS: dict[str, tuple[str, ...]] = {
    "tt.reduce": ("reduc", "thread locality", "shared memory", "barrier"),
    "tt.load": ("coalesc", "vector", "load"),
    "tt.store": ("coalesc", "vector", "store"),
    "tt.dot": ("matmul", "mma", "pipelin", "dot operand"),
    "ttg.convert_layout": ("layout conversion", "convert_layout", "remove layout"),
    "math.exp": ("exp", "fast math", "approx"),
    "arith.divf": ("div", "fast math", "approx"),
}
NOT_INSTALLED = ("the C++ pass and conversion-pattern sources (lib/...) are compiled into libtriton.so and not "
                 "installed; this answer rests on the Python pipeline and the TableGen declarations")


@dataclass(frozen=True)
class Excerpt:
    file: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.text}"


@dataclass
class Escalation:
    question: str
    excerpts: list[Excerpt] = field(default_factory=list)
    options: list[str] = field(default_factory=list)  # compile options the step reads
    notes: list[str] = field(default_factory=list)
    answer: str = ""


def _triton_root() -> Path | None:
    try:
        import triton
    except ImportError:
        return None
    return Path(triton.__file__).parent


def _rel(path: Path, root: Path) -> str:
    try:
        return "triton/" + str(path.relative_to(root))
    except ValueError:
        return str(path)


def pipeline(stage: str) -> tuple[list[Excerpt], list[str]]:
    """The passes (file:line) of the step that produces ``stage`` and the options it reads."""
    root = _triton_root()
    fname = STAGE_FUNCTION.get(stage)
    if root is None or fname is None:
        return [], []
    try:
        from triton.backends.nvidia import compiler
    except ImportError:
        return [], []
    fn = getattr(compiler.CUDABackend, fname, None)
    if fn is None:
        return [], []
    lines, start = inspect.getsourcelines(fn)
    path = _rel(Path(inspect.getsourcefile(fn) or ""), root)
    out, opts = [], set()
    for i, text in enumerate(lines):
        if "passes." in text or "llvm." in text and "(" in text:
            out.append(Excerpt(path, start + i, text.strip()))
        opts.update(re.findall(r"\b(?:options|opt)\.(\w+)", text))
    return out, sorted(opts)


_PASS = re.compile(r'^def\s+(\w+)\s*:\s*Pass<"([^"]+)"')


def pass_declarations(words: tuple[str, ...], limit: int = 6) -> list[Excerpt]:
    """Pass declarations (name and summary, file:line) whose text mentions one of ``words``."""
    root = _triton_root()
    if root is None:
        return []
    found: list[tuple[int, Excerpt]] = []
    for td in sorted((root / "include").rglob("Passes.td")) if (root / "include").is_dir() else []:
        text = td.read_text(errors="replace").splitlines()
        i = 0
        while i < len(text):
            m = _PASS.match(text[i])
            if not m:
                i += 1
                continue
            j = i + 1
            while j < len(text) and not _PASS.match(text[j]):
                j += 1
            block = " ".join(text[i:j]).lower()
            score = sum(block.count(w) for w in words)
            if score:
                summary = re.search(r'let summary = "([^"]*)"', " ".join(text[i:j]))
                found.append((score, Excerpt(_rel(td, root), i + 1,
                                             f"{m.group(1)} ({m.group(2)}): {summary.group(1) if summary else ''}")))
            i = j
    found.sort(key=lambda t: -t[0])
    return [e for _, e in found[:limit]]


def escalate(op: str, source_line: int, source: str, from_stage: str, to_stage: str, grows_by: int) -> Escalation:
    """The narrow question for one hot line and the evidence from Triton's installed sources."""
    from .irmap import TITLES

    q = (f"Which Triton pass turns `{op}` on kernel line {source_line} (`{source[:80]}`) into {grows_by} more "
         f"operations between {TITLES.get(from_stage, from_stage)} and {TITLES.get(to_stage, to_stage)}, and which "
         "compile option or source change controls it?")
    esc = Escalation(q)
    if _triton_root() is None:
        esc.notes.append("Triton is not installed: no sources to read")
        return esc
    if to_stage == "ptx":
        esc.notes.append("LLVM IR -> PTX is LLVM's NVPTX back end: its sources are not part of Triton")
    steps, esc.options = pipeline(to_stage)
    esc.excerpts += steps
    words = OP_WORDS.get(op, (op.split(".")[-1],))
    esc.excerpts += pass_declarations(words)
    esc.notes.append(NOT_INSTALLED)
    decls = [e for e in esc.excerpts if e.file.endswith(".td")]
    esc.answer = (f"the step into {TITLES.get(to_stage, to_stage)} runs {len(steps)} pass calls "
                  f"(reads options: {', '.join(esc.options) or 'none'}); pass declarations that mention "
                  f"{'/'.join(words)}: " + ("; ".join(e.text for e in decls) if decls else "none"))
    return esc
