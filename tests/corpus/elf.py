"""Just enough ELF64 reading to compare two cubins section by section.

Two PTX texts that differ only in spelling (whitespace, modifier order, comments) must assemble
to the same machine code; only the sections that embed the PTX text itself, or map SASS back to
PTX line numbers, may differ (``DEBUG_PTX_SECTIONS``).
"""
from __future__ import annotations

import re
import struct

_SHT_SYMTAB = 2
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


def elf_sections(data: bytes) -> dict[str, bytes]:
    """Section name -> contents (zeros for NOBITS sections such as .nv.shared.*)."""
    headers = _headers(data)
    (shstrndx,) = struct.unpack_from("<H", data, 0x3E)
    str_off = headers[shstrndx][2]
    out: dict[str, bytes] = {}
    for name, typ, off, size, _link in headers:
        key = _cstr(data, str_off + name).decode("ascii", "replace")
        out[key] = b"\0" * size if typ == _SHT_NOBITS else data[off:off + size]
    return out


def symbols(data: bytes) -> list[tuple[bytes, int, int, int, int, int]]:
    """Symbol table rows (name, info, other, section index, value, size), names resolved and
    the layout-dependent parts of names replaced by ``#``."""
    rows = []
    headers = _headers(data)
    for _name, typ, off, size, link in headers:
        if typ != _SHT_SYMTAB:
            continue
        strtab = headers[link][2]
        for at in range(off, off + size, 24):
            st_name, info, other, shndx, value, sz = struct.unpack_from("<IBBHQQ", data, at)
            name = _cstr(data, strtab + st_name)
            for pattern, repl in _LAYOUT_NAMES:
                name = pattern.sub(repl, name)
            rows.append((name, info, other, shndx, value, sz))
    return rows


def code_sections(data: bytes) -> dict[str, object]:
    """What carries meaning: every section but the PTX-text debug ones, with the symbol and
    string tables compared as resolved symbols (their byte layout can follow the PTX layout);
    section names are the keys, so the section-name table is not compared as bytes."""
    out: dict[str, object] = {
        k: v for k, v in elf_sections(data).items()
        if not any(tag in k for tag in DEBUG_PTX_SECTIONS)
        and k not in (".strtab", ".symtab", ".shstrtab")
    }
    out["<symbols>"] = symbols(data)
    return out
