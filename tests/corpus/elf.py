"""Just enough ELF64 reading to compare two cubins section by section.

Two PTX texts that differ only in spelling (whitespace, modifier order, comments) must assemble
to the same machine code; only the sections that embed the PTX text itself, or map SASS back to
PTX line numbers, may differ (``DEBUG_PTX_SECTIONS``).
"""
from __future__ import annotations

import struct

_SHT_NOBITS = 8

#: Section names whose content depends on the PTX text's layout, not on its meaning.
DEBUG_PTX_SECTIONS = ("nv_debug_ptx_txt", "nv_debug_line_sass")


class ElfError(ValueError):
    """The bytes are not a 64-bit little-endian ELF file."""


def elf_sections(data: bytes) -> dict[str, bytes]:
    """Section name -> contents (zeros for NOBITS sections such as .nv.shared.*)."""
    if len(data) < 0x40 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ElfError("not an ELF64 little-endian file")
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = []
    for i in range(shnum):
        name, typ, _flags, _addr, off, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        headers.append((name, typ, off, size))
    str_off = headers[shstrndx][2]
    out: dict[str, bytes] = {}
    for name, typ, off, size in headers:
        end = data.index(b"\0", str_off + name)
        key = data[str_off + name:end].decode("ascii", "replace")
        out[key] = b"\0" * size if typ == _SHT_NOBITS else data[off:off + size]
    return out


def code_sections(data: bytes) -> dict[str, bytes]:
    """The sections that carry meaning: everything but the PTX-text debug sections."""
    return {k: v for k, v in elf_sections(data).items()
            if not any(tag in k for tag in DEBUG_PTX_SECTIONS)}
