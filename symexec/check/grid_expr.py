"""Bit-vector expressions over %ctaid for the symbolic grid (grid_shadow.py builds them, grid.py
turns them into Z3 terms): `("k", w, v)` constants, `("c", 32, axis)` the CTA id, `("p", w, id)` per-lane
placeholders, operations `(op, w, args...)`, modulo 2^w as PTX integer arithmetic (9.7.1)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TOP = "top"
CMP = {"eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge", "lo": "lt", "ls": "le",
        "hi": "gt", "hs": "ge"}


def K(v: int, w: int) -> tuple:
    return ("k", w, int(v) & ((1 << w) - 1)) if w else ("b", 0, bool(v))


def width(e: tuple) -> int:
    return e[1]


def adapt(e: tuple, w: int, signed: bool = False) -> tuple:
    """Resize a bit-vector expression (zero/sign extension or truncation to the low bits)."""
    ew = e[1]
    if ew == w:
        return e
    if e[0] == "k":
        v = e[2]
        if signed and ew < w and v >> (ew - 1):
            v -= 1 << ew
        return K(v, w)
    if ew > w:
        return ("trunc", w, e)
    return ("sext" if signed else "zext", w, e)


@dataclass
class Sv:
    """expr + off (off: concrete per-lane array at the expression's width, or None)."""

    expr: tuple
    off: np.ndarray | None = None
