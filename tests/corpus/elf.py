"""Just enough ELF64 reading to compare two cubins section by section.

Two PTX texts that differ only in spelling (whitespace, modifier order, comments) must assemble
to the same machine code; only the sections that embed the PTX text itself, or map SASS back to
PTX line numbers, may differ (``DEBUG_PTX_SECTIONS``).
"""
from __future__ import annotations

import re
import struct

_SHT_SYMTAB = 2
_SHT_STRTAB = 3
_SHT_NOBITS = 8
# Names that follow the PTX text's layout rather than its meaning: ptxas names block-scope
# .shared variables after their source line (`$__tslot__15`), and with -c the embedded PTX
# text section after a hash of the text (`.nv_debug_ptx_txt.945251739`).
_LAYOUT_NAMES = (
    (re.compile(rb"^(\$__.+__)\d+$"), rb"\1#"),
    (re.compile(rb"^(\.nv_debug_ptx_txt)\.\d+$"), rb"\1.#"),
)

#: Section names whose content depends on the PTX text's layout, not on its meaning.
DEBUG_PTX_SECTIONS = ("nv_debug_ptx_txt", "nv_debug_line_sass")


class ElfError(ValueError):
    """The bytes are not a 64-bit little-endian ELF file."""


def _headers(data: bytes) -> list[tuple[int, int, int, int, int]]:
    """(name offset, type, file offset, size, link) of every section header."""
    if len(data) < 0x40 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ElfError("not an ELF64 little-endian file")
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, _ = struct.unpack_from("<HHH", data, 0x3A)
    out = []
    for i in range(shnum):
        name, typ, _flags, _addr, off, size, link = struct.unpack_from(
            "<IIQQQQI", data, shoff + i * shentsize)
        out.append((name, typ, off, size, link))
    return out


def _cstr(data: bytes, at: int) -> bytes:
    return data[at:data.index(b"\0", at)]


def _named_headers(data: bytes) -> list[tuple[str, int, int, int, int]]:
    """(section name, type, file offset, size, link) of every section."""
    headers = _headers(data)
    (shstrndx,) = struct.unpack_from("<H", data, 0x3E)
    str_off = headers[shstrndx][2]
    return [(_cstr(data, str_off + name).decode("ascii", "replace"), typ, off, size, link)
            for name, typ, off, size, link in headers]


def elf_sections(data: bytes) -> dict[str, bytes]:
    """Section name -> contents (zeros for NOBITS sections such as .nv.shared.*)."""
    return {name: b"\0" * size if typ == _SHT_NOBITS else data[off:off + size]
            for name, typ, off, size, _link in _named_headers(data)}


def _symbols(data: bytes, off: int, size: int, strtab: int) -> list[tuple]:
    rows = []
    for at in range(off, off + size, 24):
        st_name, info, other, shndx, value, sz = struct.unpack_from("<IBBHQQ", data, at)
        name = _cstr(data, strtab + st_name)
        for pattern, repl in _LAYOUT_NAMES:
            name = pattern.sub(repl, name)
        rows.append((name, info, other, shndx, value, sz))
    return rows


def code_sections(data: bytes) -> dict[str, object]:
    """What carries meaning: every section but the PTX-text debug ones.  Symbol tables are
    compared as resolved symbols with layout-dependent name parts replaced by ``#``, string
    tables not at all (their byte layout can follow the PTX layout; the names they hold are
    compared through the symbols and the section names)."""
    headers = _named_headers(data)
    out: dict[str, object] = {}
    for name, typ, off, size, link in headers:
        if any(tag in name for tag in DEBUG_PTX_SECTIONS) or typ == _SHT_STRTAB:
            continue
        if typ == _SHT_SYMTAB or name.endswith(".symtab"):  # also Blackwell's .nv.merc.symtab
            out[name] = _symbols(data, off, size, headers[link][2])
        else:
            out[name] = b"\0" * size if typ == _SHT_NOBITS else data[off:off + size]
    return out
