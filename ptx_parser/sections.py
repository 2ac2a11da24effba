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
_HEADER = re.compile(r"\.section\s+(\.?[A-Za-z0-9_.$]+)\s*(\{)?")
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
        if header is None or header.group(2) is None:
            raise ParseError("expected section name and '{' after '.section'", filename, line, col,
                             source_line(text, line))
        close = _find_close(text, header.end())
        if close < 0:
            raise ParseError("unterminated '.section' block: expected '}'", filename, line, col,
                             source_line(text, line))
        body = text[header.end():close]
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


def _parse_entries(body: str, filename: str, text: str, base: int) -> list[SectionEntry]:
    entries: list[SectionEntry] = []
    offset = base
    for raw in body.split("\n"):
        stmt = raw.split("//", 1)[0].strip()
        here = offset
        offset += len(raw) + 1
        while stmt:
            lab = _LABEL.match(stmt)
            if lab is not None and not stmt.startswith("."):
                entries.append(SectionEntry(label=lab.group(1)))
                stmt = lab.group(2).strip()
                continue
            data = _DATA.match(stmt)
            if data is None:
                line, col = _pos(text, here + max(0, raw.find(stmt)))
                raise ParseError(f"expected a data directive or label in section, got '{stmt}'",
                                 filename, line, col, source_line(text, line))
            values = tuple(v.strip() for v in data.group(2).split(",")) if data.group(2) else ()
            entries.append(SectionEntry(directive=data.group(1), values=values))
            break
    return entries
