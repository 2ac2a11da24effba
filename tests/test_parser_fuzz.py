"""Fuzz the parser with mutated corpus PTX.

Each input is a small hand-written corpus file mutated one way (token deletion, token swap,
truncation, random bytes inserted, lines duplicated).  Whatever comes in, ``parse`` either
returns a module that survives a print/parse round trip, or raises ``ParseError`` whose
position lies inside the input and whose message is not empty.  Any other exception fails the
test, and so does an input that takes longer than ``HANG_SECONDS`` (a SIGALRM timer).

``VOLTA_FUZZ_EXAMPLES`` sets the number of examples per mutation kind (default 200);
``VOLTA_FUZZ_RANDOM=1`` draws fresh random inputs instead of the fixed CI sequence.
"""
from __future__ import annotations

import contextlib
import datetime
import os
import re
import signal
import sys
from pathlib import Path
from typing import Callable, Iterator

# `tests.corpus` is imported as a package from the repository root; `python -m pytest` puts the
# root on sys.path, a bare `pytest` does not.
_REPO_ROOT = str(Path(__file__).resolve().parents[1])
if _REPO_ROOT not in sys.path:
    sys.path.insert(0, _REPO_ROOT)

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ptx_parser import ParseError, parse, print_module
from tests.corpus import HANDWRITTEN_DIR

SEED_NAMES = ("predicates.ptx", "addresses.ptx", "branches.ptx", "literals_constexpr.ptx",
              "calls.ptx", "pragmas_scopes.ptx", "lexical.ptx", "tensor_coords.ptx",
              "debug_info.ptx", "section_comments.ptx")
SEEDS: tuple[str, ...] = tuple((HANDWRITTEN_DIR / n).read_text() for n in SEED_NAMES)

MAX_EXAMPLES = int(os.environ.get("VOLTA_FUZZ_EXAMPLES", "200"))
HANG_SECONDS = 10.0

# Comments, strings, words (registers, literals, directives, opcodes with modifiers), two-character
# operators, and single punctuation characters.
_TOKEN_RE = re.compile(
    r'//[^\n]*|/\*.*?\*/|"[^"\n]*"|[%$.\w][\w$.:]*|<<|>>|<=|>=|==|!=|&&|\|\||\S', re.DOTALL)


def _tokens(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _TOKEN_RE.finditer(text)]


class ParserHang(Exception):
    """The parser ran past HANG_SECONDS on one input."""


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    def on_alarm(signum: int, frame: object) -> None:
        raise ParserHang(f"parse did not finish within {seconds}s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def check_parser_total(text: str) -> None:
    """The property: a module that round-trips, or a well-located ParseError."""
    with _time_limit(HANG_SECONDS):
        try:
            module = parse(text, "fuzz.ptx")
        except ParseError as err:
            assert err.filename == "fuzz.ptx"
            assert isinstance(err.line, int) and isinstance(err.col, int)
            assert err.line >= 1 and err.col >= 1, (err.line, err.col)
            # Lines end at "\n" only (PTX manual 4.1); the position names a place in the
            # input, the end of input included.
            lines = text.split("\n")
            assert err.line <= len(lines), (err.line, len(lines))
            if err.line <= len(lines):
                assert err.col <= len(lines[err.line - 1]) + 1, (err.col, lines[err.line - 1])
            assert err.message and err.message.strip()
            assert str(err).startswith(f"fuzz.ptx:{err.line}:{err.col}: error: ")
            return
        printed = print_module(module)
        assert parse(printed, "printed.ptx") == module


def _seed() -> st.SearchStrategy[str]:
    return st.sampled_from(SEEDS)


@st.composite
def token_deletion(draw: Callable) -> str:
    text = draw(_seed())
    spans = _tokens(text)
    picks = draw(st.lists(st.integers(0, len(spans) - 1), min_size=1, max_size=3, unique=True))
    for i in sorted(picks, reverse=True):
        a, b = spans[i]
        text = text[:a] + text[b:]
    return text


@st.composite
def token_swap(draw: Callable) -> str:
    text = draw(_seed())
    spans = _tokens(text)
    i = draw(st.integers(0, len(spans) - 2))
    # Mostly near neighbours (plausible typos), sometimes far apart.
    j = draw(st.one_of(st.integers(i + 1, min(i + 3, len(spans) - 1)),
                       st.integers(i + 1, len(spans) - 1)))
    (a0, a1), (b0, b1) = spans[i], spans[j]
    return text[:a0] + text[b0:b1] + text[a1:b0] + text[a0:a1] + text[b1:]


@st.composite
def truncation(draw: Callable) -> str:
    text = draw(_seed())
    return text[: draw(st.integers(0, len(text)))]


@st.composite
def random_bytes(draw: Callable) -> str:
    text = draw(_seed())
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        junk = draw(st.one_of(
            st.binary(min_size=1, max_size=8).map(lambda b: b.decode("latin-1")),
            st.sampled_from(["\0", "\r", "\n", "\t", "{", "}", "[", "]", ";", ",", "|", "!",
                             "@", "_", "<", ">", "\"", "/*", "//", "0x", "0f", "0d", "%r",
                             ".", "::", "\u00e9", "\ufeff"]),
        ))
        text = text[:at] + junk + text[at:]
    return text


@st.composite
def duplicated_lines(draw: Callable) -> str:
    lines = draw(_seed()).splitlines(keepends=True)
    start = draw(st.integers(0, len(lines) - 1))
    stop = draw(st.integers(start + 1, min(start + 4, len(lines))))
    at = draw(st.integers(0, len(lines)))
    block = lines[start:stop]
    return "".join(lines[:at] + block + lines[at:])


_SEPARATORS = frozenset(";,{}[]()|!@<>")
_FILLERS = (" ", "\t", "\n", "\n\n", "\r\n", "/* c */", "/**/", "// c;{\n", "/* multi\nline */")


@st.composite
def whitespace_and_comments(draw: Callable) -> tuple[str, str]:
    """(seed, seed with whitespace/comments inserted next to punctuation tokens).

    Comments are whitespace and whitespace only separates tokens (PTX manual 4.1-4.2), so both
    texts must parse to equal modules."""
    text = draw(_seed())
    spans = _tokens(text)
    gaps = [spans[i][1] for i in range(len(spans) - 1)
            if text[spans[i][0]:spans[i][1]] in _SEPARATORS
            or text[spans[i + 1][0]:spans[i + 1][1]] in _SEPARATORS]
    picks = draw(st.lists(st.sampled_from(gaps), min_size=1, max_size=6, unique=True))
    out = text
    for at in sorted(picks, reverse=True):
        out = out[:at] + draw(st.sampled_from(_FILLERS)) + out[at:]
    return text, out


_FUZZ_SETTINGS = settings(
    max_examples=MAX_EXAMPLES,
    # A seed parses in a few ms; 5 s per input means pathological slowness (a true hang is
    # cut off by the SIGALRM limit, which the deadline alone cannot do).
    deadline=datetime.timedelta(seconds=5),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    # Deterministic in CI; VOLTA_FUZZ_RANDOM=1 explores new inputs on every run.
    derandomize=os.environ.get("VOLTA_FUZZ_RANDOM") != "1",
)


@_FUZZ_SETTINGS
@given(token_deletion())
def test_fuzz_token_deletion(text: str) -> None:
    check_parser_total(text)


@_FUZZ_SETTINGS
@given(token_swap())
def test_fuzz_token_swap(text: str) -> None:
    check_parser_total(text)


@_FUZZ_SETTINGS
@given(truncation())
def test_fuzz_truncation(text: str) -> None:
    check_parser_total(text)


@_FUZZ_SETTINGS
@given(random_bytes())
def test_fuzz_random_bytes(text: str) -> None:
    check_parser_total(text)


@_FUZZ_SETTINGS
@given(duplicated_lines())
def test_fuzz_duplicated_lines(text: str) -> None:
    check_parser_total(text)


@_FUZZ_SETTINGS
@given(whitespace_and_comments())
def test_fuzz_whitespace_and_comments_preserve_the_module(pair: tuple[str, str]) -> None:
    original, padded = pair
    with _time_limit(HANG_SECONDS):
        assert parse(padded, "padded.ptx") == parse(original, "seed.ptx")


@pytest.mark.parametrize("seed_name", SEED_NAMES)
def test_seed_files_parse(seed_name: str) -> None:
    """The unmutated seeds parse: the fuzz tests start from valid input."""
    check_parser_total((HANDWRITTEN_DIR / seed_name).read_text())
    parse((HANDWRITTEN_DIR / seed_name).read_text(), seed_name)


_NESTING_TEMPLATE = """.version 9.0
.target sm_80
.address_size 64
.visible .entry k()
{
\t.reg .b32 %r<3>;
\t<BODY>
\tret;
}
"""

_NESTING_KINDS: dict[str, Callable[[int], str]] = {
    "scopes": lambda n: "{" * n + "mov.u32 %r1, 1;" + "}" * n,
    "parens": lambda n: "mov.u32 %r1, " + "(" * n + "1" + ")" * n + ";",
    "unary": lambda n: "mov.u32 %r1, " + "-" * n + "1;",
    "sum_chain": lambda n: "mov.u32 %r1, " + " + ".join(["1"] * n) + ";",
}


@pytest.mark.parametrize("depth", [50, 300, 1000, 3000])
@pytest.mark.parametrize("kind", sorted(_NESTING_KINDS))
def test_deep_nesting(kind: str, depth: int) -> None:
    """Deeply nested scopes/expressions and long operator chains: a module that prints and
    compares, or a ParseError (e.g. "nested too deeply") -- never a RecursionError."""
    check_parser_total(_NESTING_TEMPLATE.replace("<BODY>", _NESTING_KINDS[kind](depth)))


def test_time_limit_interrupts() -> None:
    """The hang detector itself works."""
    with pytest.raises(ParserHang):
        with _time_limit(0.05):
            while True:
                pass
