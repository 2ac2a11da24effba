"""`.section` blocks (DWARF debug data, PTX 11.5), cut out of the text before the grammar runs.

nvcc -G emits tens of thousands of `.b8` lines in `.debug_info`; tokenising them through the LALR
parser would dominate parse time, and nothing in them affects the code. They are parsed here by a
line-oriented scanner and kept aside on the Module. Cut-out text is replaced by newlines so every
line and column the grammar reports stays correct.
"""

from __future__ import annotations

import re

from .ast import Section, SectionEntry, Span
from .errors import ParseError, source_line

# `.section` only ever starts a top-level statement; comments and strings are skipped so a
# `.section` inside them is not taken for one.
_SCAN = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"|\.section\b', re.S)
_HEADER = re.compile(r"\.section\s+(\.?[A-Za-z0-9_.$]+)((?:\s|//[^\n]*|/\*.*?\*/)*)(\{)?", re.S)
_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_LABEL = re.compile(r"^([A-Za-z_$%][A-Za-z0-9_$]*)\s*:\s*(.*)$")
_DATA = re.compile(r"^(\.[a-z0-9]+)\s+(.*?)\s*;?$")


def _pos(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col


def extract_sections(text: str, filename: str) -> tuple[str, list[tuple[int, Section]]]:
    """Return the text with sections blanked out, and the sections with their start offsets."""
    if ".section" not in text:
        return text, []
    pieces: list[str] = []
    sections: list[tuple[int, Section]] = []
    last = 0
    for m in _SCAN.finditer(text):
        if m.group(0) != ".section":
            continue
        start = m.start()
        header = _HEADER.match(text, start)
        line, col = _pos(text, start)
        if header is None or header.group(3) is None:
            raise ParseError("expected section name and '{' after '.section'", filename, line, col,
                             source_line(text, line))
        close = _find_close(text, header.end())
        if close < 0:
            raise ParseError("unterminated '.section' block: expected '}'", filename, line, col,
                             source_line(text, line))
        body = _BLOCK_COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text[header.end():close])
        entries = _parse_entries(body, filename, text, header.end())
        sections.append((start, Section(header.group(1), tuple(entries), Span(filename, line, col))))
        pieces.append(text[last:start])
        pieces.append("\n" * text.count("\n", start, close + 1))
        last = close + 1
    pieces.append(text[last:])
    return "".join(pieces), sections


def _find_close(text: str, pos: int) -> int:
    i = pos
    n = len(text)
    while i < n:
        c = text[i]
        if c == "}":
            return i
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        i += 1
    return -1


_VALUE = re.compile(r"^[A-Za-z0-9_$%.]+(\s*[-+*/]\s*[A-Za-z0-9_$%.()]+)*$")
_TOKEN = re.compile(r"(?P<label>[A-Za-z_$%][A-Za-z0-9_$]*)\s*:|(?P<dir>\.[bsu](?:8|16|32|64))(?![A-Za-z0-9_])")


def _parse_entries(body: str, filename: str, text: str, base: int) -> list[SectionEntry]:
    """Labels and data directives; a directive's comma-separated values may span lines."""
    body = re.sub(r"//[^\n]*", lambda m: " " * len(m.group(0)), body)
    entries: list[SectionEntry] = []
    pos = 0
    pending: str | None = None
    pending_at = 0

    def flush(end: int) -> None:
        nonlocal pending
        chunk = body[pending_at:end] if pending is not None else body[pos:end]
        if pending is None:
            if chunk.strip():
                off = pos + (len(chunk) - len(chunk.lstrip()))
                line, col = _pos(text, base + off)
                raise ParseError(f"expected a data directive or label in section, got '{chunk.strip()[:40]}'",
                                 filename, line, col, source_line(text, line))
            return
        values = tuple(v.strip() for v in chunk.strip().rstrip(";").split(",")) if chunk.strip() else ()
        if any(not v for v in values):
            line, col = _pos(text, base + pending_at)
            raise ParseError(f"expected a value after ',' in {pending}", filename, line, col, source_line(text, line))
        for v in values:  # one value is one token: a number, a label, or label arithmetic
            if not _VALUE.match(v):
                bad = v.split()[1] if len(v.split()) > 1 else v
                off = body.find(bad, pending_at)
                line, col = _pos(text, base + max(off, pending_at))
                raise ParseError(f"expected ',' or the next data directive in section, got '{bad[:40]}'",
                                 filename, line, col, source_line(text, line))
        entries.append(SectionEntry(directive=pending, values=values))
        pending = None

    for m in _TOKEN.finditer(body):
        flush(m.start())
        if m.group("label"):
            entries.append(SectionEntry(label=m.group("label")))
            pos = m.end()
        else:
            pending = m.group("dir")
            pending_at = m.end()
            pos = m.end()
    flush(len(body))
    return entries
