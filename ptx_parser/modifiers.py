"""Classification of instruction modifiers.

ptxas accepts most modifiers of an instruction in any order (tcgen05.ld.32x32b.x2.sync.aligned.b32
and tcgen05.ld.sync.aligned.32x32b.x2.b32 are the same instruction), so the AST keeps them as a set.
Two kinds keep their order because the order carries meaning: fundamental types (PTX 5.2.1;
`cvt.f32.f16` converts f16 to f32) and state spaces (PTX 5.1; `cp.async.bulk.global.shared::cta`
copies shared to global, the reverse spelling copies global to shared), and matrix layouts
(`mma...row.col`: the first names A's layout, the second B's; PTX 9.7.14.5).
"""

from __future__ import annotations

import re

_INT_TYPES = {f".{k}{w}" for k in "bsu" for w in (8, 16, 32, 64)} | {".b128", ".s4", ".u4", ".s2", ".u2", ".b1"}
_FLOAT_TYPES = {
    ".f16", ".f16x2", ".bf16", ".bf16x2", ".tf32", ".f32", ".f64",
    ".e4m3", ".e5m2", ".e4m3x2", ".e5m2x2", ".e4m3x4", ".e5m2x4",
    ".e2m1", ".e2m1x2", ".e2m1x4", ".e2m3", ".e3m2", ".e2m3x2", ".e3m2x2", ".e2m3x4", ".e3m2x4",
    ".ue8m0", ".ue8m0x2", ".ue4m3", ".ue4m3x2", ".f32x2", ".f64x2",
}
_PACKED_INT = {".s16x2", ".u16x2", ".s8x4", ".u8x4", ".s32x2"}
TYPES = frozenset(_INT_TYPES | _FLOAT_TYPES | _PACKED_INT | {".pred"})

# State spaces, including the `::` sub-spaces of PTX 8.x (5.1, 9.7.9.x).
_SPACE_RE = re.compile(r"^\.(global|shared|local|const|param|generic|tex)(::[a-z_]+)?$")


def is_type(mod: str) -> bool:
    return mod in TYPES


def is_space(mod: str) -> bool:
    return _SPACE_RE.match(mod) is not None


_LAYOUTS = frozenset({".row", ".col"})


def is_positional(mod: str) -> bool:
    """Modifiers other than types whose relative order carries meaning."""
    return mod in _LAYOUTS or _SPACE_RE.match(mod) is not None


def split_modifiers(mods: list[str]) -> tuple[frozenset[str], tuple[str, ...], tuple[str, ...]]:
    """(all modifiers as a set, ordered types, ordered positional modifiers)."""
    types = tuple(m for m in mods if m in TYPES)
    positional = tuple(m for m in mods if m in _LAYOUTS or _SPACE_RE.match(m))
    return frozenset(mods), types, positional
