"""Independent re-derivations of the wgmma layouts for the tests (not used by the emulator): a
generic evaluator of the CuTe-style canonical layouts of PTX 9.7.15.5.1.2.1.3, the swizzle
written with explicit bits, and the m16n8 fragment tables (9.7.15.5.1.1) written as loops."""

from __future__ import annotations

import numpy as np


def _size(shape) -> int:
    return shape if isinstance(shape, int) else int(np.prod([_size(s) for s in shape]))


def cute_eval(shape, stride, idx: int) -> int:
    """Offset of linear index `idx` in a (nested) shape:stride layout, colexicographic order."""
    if isinstance(shape, int):
        return idx * stride
    total = 0
    for s, d in zip(shape, stride):
        n = _size(s)
        total += cute_eval(s, d, idx % n)
        idx //= n
    return total


def canonical_table(mn_major: bool, width: int, t: int, lbo: int, sbo: int, m: int = 64, k: int = 8):
    """The manual's canonical layout row for (major-ness, swizzle width) in element units."""
    if not mn_major:
        if width == 0:
            return ((8, m), (t, 2 * k)), ((t, sbo), (1, lbo))
        return ((8, m), (t, 2 * k)), ((width // 16 * t, sbo), (1, t))
    if width == 0:
        return ((t, 1, m), (8, k)), ((1, t, sbo), (t, lbo))
    return ((t, width // 16, m), (8, k)), ((1, t, lbo), (width // 16 * t, sbo))


def swizzle_bits(addr: int, width: int) -> int:
    """Swizzle<B,4,3> written with explicit bits: 16-byte chunk c of an 8*width-byte block, row r
    of it: chunk c XOR (r mod width/16)."""
    if width == 0:
        return addr
    chunks = width // 16
    chunk = (addr >> 4) & (chunks - 1)
    row = (addr >> 7) & (chunks - 1)
    return addr - chunk * 16 + (chunk ^ row) * 16


def d_table(n: int) -> dict[tuple[int, int], tuple[int, int]]:
    """(row, col) -> (thread, element) by the m16n8 accumulator layout, per warp and 8-column block."""
    out = {}
    for w in range(4):
        for lane in range(32):
            g, t = lane // 4, lane % 4
            for nb in range(n // 8):
                for e, (dr, dc) in enumerate([(0, 0), (0, 1), (8, 0), (8, 1)]):
                    out[(16 * w + g + dr, 8 * nb + 2 * t + dc)] = (32 * w + lane, 4 * nb + e)
    return out


def a_table(bits: int) -> dict[tuple[int, int], tuple[int, int]]:
    out = {}
    for w in range(4):
        for lane in range(32):
            g, t = lane // 4, lane % 4
            if bits == 16:  # m16n8k16 A: a0,a1 (g,2t..) a2,a3 (g+8,2t..) a4,a5 (g,2t+8..) a6,a7 (g+8,2t+8..)
                cells = [(g, 2 * t), (g, 2 * t + 1), (g + 8, 2 * t), (g + 8, 2 * t + 1),
                         (g, 2 * t + 8), (g, 2 * t + 9), (g + 8, 2 * t + 8), (g + 8, 2 * t + 9)]
            elif bits == 32:  # m16n8k8 tf32 A: a0 (g,t) a1 (g+8,t) a2 (g,t+4) a3 (g+8,t+4)
                cells = [(g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4)]
            else:  # m16n8k32 8-bit A: 4 consecutive columns per register
                cells = [(g + 8 * ((i // 4) % 2), 16 * (i // 8) + 4 * t + i % 4) for i in range(16)]
            for e, (r, c) in enumerate(cells):
                out[(16 * w + r, c)] = (32 * w + lane, e)
    return out
