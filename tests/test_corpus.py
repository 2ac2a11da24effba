"""The parser against the PTX corpus (Triton AOT, nvcc, hand-written; see tests/corpus).

For every corpus file:

* ``parse`` succeeds and ``parse(print_module(parse(x))) == parse(x)``;
* every instruction's span points at its spelled opcode;
* (slow) ptxas accepts the original (a check of the corpus itself) and the printed text, and
  both assemble to the same machine code: every cubin section except the ones that embed the
  PTX text or map SASS to PTX lines is identical (symbol tables compared by resolved name,
  see ``tests/corpus/elf.py``).

Malformed files under ``tests/corpus/bad`` must raise ``ParseError`` at the stated line:col,
and ptxas must reject them too.  ``KNOWN_GAPS`` turns a test id into a strict xfail.
"""
from __future__ import annotations

import functools
import re
from collections import Counter
import shutil
import sys
from pathlib import Path

# `tests.corpus` is imported as a package from the repository root; `python -m pytest` puts the
# root on sys.path, a bare `pytest` does not.
_REPO_ROOT = str(Path(__file__).resolve().parents[1])
if _REPO_ROOT not in sys.path:
    sys.path.insert(0, _REPO_ROOT)

import pytest

from ptx_parser import ParseError, parse, print_module
from tests.corpus import BadFile, CorpusFile, bad_files, build_corpus
from tests.corpus.common import run_ptxas
from tests.corpus.elf import code_sections

HAVE_PTXAS = shutil.which("ptxas") is not None
CORPUS: list[CorpusFile] = build_corpus()
BAD: list[BadFile] = bad_files()

#: Known parser gaps (test id -> reason); each becomes a strict xfail so a fix is noticed.
KNOWN_GAPS: dict[str, str] = {}


def _params(items: list, ids: list[str]) -> list:
    return [
        pytest.param(item, id=i, marks=pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[i]))
        if i in KNOWN_GAPS else pytest.param(item, id=i)
        for item, i in zip(items, ids)
    ]


CORPUS_PARAMS = _params(CORPUS, [cf.test_id for cf in CORPUS])
BAD_PARAMS = _params(BAD, [f"bad/{b.path.name}" for b in BAD])


@functools.lru_cache(maxsize=None)
def _parsed(path: str):
    text = open(path).read()
    return text, parse(text, path)


@pytest.mark.parametrize("cf", CORPUS_PARAMS)
def test_parse_print_roundtrip(cf: CorpusFile) -> None:
    text, module = _parsed(str(cf.path))
    printed = print_module(module)
    assert isinstance(printed, str) and printed.strip()
    reparsed = parse(printed, f"<printed {cf.path.name}>")
    assert reparsed == module
    # Printing is a fixed point after one round: the printer is deterministic.
    assert print_module(reparsed) == printed


_COMMENT_RE = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)
_STRING_RE = re.compile(r'"[^"\n]*"')
_DOTTED_WORD_RE = re.compile(r"(?<![\w$%])\.[A-Za-z_]\w*(?:::\w+)*")


def _dotted_words(text: str) -> Counter[str]:
    """Every directive and modifier (`.entry`, `.global`, `.shared::cta`...) outside comments
    and strings, with multiplicity."""
    text = _STRING_RE.sub('""', _COMMENT_RE.sub(" ", text))
    return Counter(_DOTTED_WORD_RE.findall(text))


@pytest.mark.parametrize("cf", CORPUS_PARAMS)
def test_printer_keeps_every_directive_and_modifier(cf: CorpusFile) -> None:
    """Nothing ptxas might ignore is dropped or invented by the printer (a `.pragma`, a
    `.maxnreg`, a cache hint): the printed text spells the same directives and modifiers."""
    text, module = _parsed(str(cf.path))
    before, after = _dotted_words(text), _dotted_words(print_module(module))
    assert before == after, (dict(before - after), dict(after - before))


_GUARD_RE = re.compile(r"@!?[%$\w]+\s+")


@pytest.mark.parametrize("cf", CORPUS_PARAMS)
def test_instruction_spans_point_at_the_instruction(cf: CorpusFile) -> None:
    """Every instruction's span names this file and the place its (guard and) opcode is
    spelled, with the modifiers in the spelling order; the module reports the file's target."""
    text, module = _parsed(str(cf.path))
    assert module.arch == cf.arch
    lines = text.split("\n")
    count = 0
    for function in module.functions:
        for ins in function.instructions():
            assert ins.span is not None and ins.span.file == str(cf.path)
            at = lines[ins.span.line - 1][ins.span.col - 1:]
            at = _GUARD_RE.sub("", at, count=1) if at.startswith("@") else at
            assert at.startswith(ins.name), (ins.span, ins.name, at[:60])
            count += 1
    assert count > 0


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_PTXAS, reason="ptxas not on PATH")
@pytest.mark.parametrize("cf", CORPUS_PARAMS)
def test_printed_ptx_assembles_identically(cf: CorpusFile) -> None:
    original = run_ptxas(cf.path.read_text(), cf.arch)
    assert original.accepted, f"corpus file rejected by ptxas:\n{original.stderr}"
    _, module = _parsed(str(cf.path))
    printed = run_ptxas(print_module(module), cf.arch)
    assert printed.accepted, f"printed PTX rejected by ptxas:\n{printed.stderr}"
    before, after = code_sections(original.cubin), code_sections(printed.cubin)
    assert sorted(before) == sorted(after)
    differing = [name for name in before if before[name] != after[name]]
    assert not differing, f"machine code differs in sections {differing}"


@pytest.mark.parametrize("bad", BAD_PARAMS)
def test_bad_file_error_position(bad: BadFile) -> None:
    text = bad.path.read_text()
    with pytest.raises(ParseError) as info:
        parse(text, bad.path.name)
    err = info.value
    assert (err.line, err.col) == (bad.line, bad.col), str(err)
    assert bad.message_substring in err.message
    assert err.filename == bad.path.name
    rendered = str(err)
    assert rendered.startswith(f"{bad.path.name}:{bad.line}:{bad.col}: error: ")
    # The offending source line is quoted, with a caret under the column.
    lines = rendered.splitlines()
    source_line = text.splitlines()[bad.line - 1]
    assert any(l.strip() == source_line.strip() for l in lines[1:]), rendered
    assert lines[-1].strip() == "^"


def test_corpus_covers_what_it_promises() -> None:
    by_origin: dict[str, list[CorpusFile]] = {}
    for cf in CORPUS:
        by_origin.setdefault(cf.origin, []).append(cf)
    assert set(by_origin) == {"triton", "nvcc", "handwritten"}
    triton_archs = {cf.arch for cf in by_origin["triton"]}
    assert triton_archs == {"sm_80", "sm_89", "sm_90a", "sm_100a", "sm_120a"}

    def texts(origin: str, arch: str) -> list[str]:
        return [cf.path.read_text() for cf in by_origin[origin] if cf.arch == arch]

    assert any("tcgen05.mma" in t for t in texts("triton", "sm_100a"))
    assert any("wgmma.mma_async" in t for t in texts("triton", "sm_90a"))
    assert any("cp.async" in t for t in texts("triton", "sm_80"))
    nvcc = [cf.path.read_text() for cf in by_origin["nvcc"]]
    assert any("inlined_at" in t for t in nvcc)
    assert any(".section" in t and ".debug_info" in t for t in nvcc)
    assert any(re.search(r"generic\(\w+\)", t) for t in nvcc)
    assert any(".param .align 128 .b8" in t and "cp.async.bulk.tensor" in t for t in nvcc)
    # Each file's arch is the .target it declares.
    for cf in CORPUS:
        assert re.search(rf"^\s*\.target\s+{cf.arch}\b", cf.path.read_text(), re.MULTILINE)


@pytest.mark.skipif(not HAVE_PTXAS, reason="ptxas not on PATH")
def test_machine_code_comparison_sees_a_one_immediate_change() -> None:
    """The identical-machine-code check is not vacuous: changing one offset changes the code,
    while reformatting (comments, blank lines, spacing) does not."""
    from tests.corpus import HANDWRITTEN_DIR

    text = (HANDWRITTEN_DIR / "addresses.ptx").read_text()
    assert "[gtab+8]" in text
    base = code_sections(run_ptxas(text, "sm_80").cubin)
    changed = code_sections(run_ptxas(text.replace("[gtab+8]", "[gtab+12]"), "sm_80").cubin)
    reformatted = "// extra comment\n\n" + text.replace("\t", "  ").replace(", ", " ,  ")
    same = code_sections(run_ptxas(reformatted, "sm_80").cubin)
    assert base != changed
    assert base == same


@pytest.mark.skipif(not HAVE_PTXAS, reason="ptxas not on PATH")
@pytest.mark.parametrize("bad", BAD, ids=lambda b: f"bad/{b.path.name}")
def test_bad_file_is_rejected_by_ptxas(bad: BadFile) -> None:
    """The bad corpus is really bad: ptxas refuses every file too."""
    assert not run_ptxas(bad.path.read_text(), "sm_80").accepted
