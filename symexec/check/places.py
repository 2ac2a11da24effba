"""Addresses in the user's terms, for witnesses: the buffer or shared variable and the element.

    x[12]                                   a global buffer's element (its dtype from the launch)
    out[1, 12]                              ... of a buffer with a 2-d shape
    x[1000], one past the end of x (1000 elements)
    y[-1], 1 element before the start of y (64 elements)
    buf[3] (0xc)                            a shared variable's element (its declared type), and the
                                            CTA-relative shared-memory offset
"""

from __future__ import annotations

import numpy as np

from ..events import MemSpace

def _geometry(source, nbytes: int) -> tuple[int, tuple[int, ...]]:
    """(element bytes, shape) of a launch buffer: a numpy array, a lazy tensor's device bytes
    (harness.emulate.DeviceBytes) or raw bytes."""
    if isinstance(source, np.ndarray):
        return max(1, source.dtype.itemsize), tuple(source.shape) or (1,)
    es = getattr(source, "elem_bytes", None)
    shape = getattr(getattr(source, "tensor", None), "shape", None)
    if es and shape is not None:
        return int(es), tuple(int(s) for s in shape) or (1,)
    return 1, (nbytes,)


def _index(flat: int, shape: tuple[int, ...]) -> str:
    if len(shape) <= 1 or not 0 <= flat < int(np.prod(shape)):
        return str(flat)
    return ", ".join(str(int(i)) for i in np.unravel_index(flat, shape))


def element(name: str, offset: int, size: int, esize: int, shape: tuple[int, ...], prefix: str = "") -> str:
    """Byte `offset` of an array `name` of `size` bytes with `esize`-byte elements (may be outside it)."""
    n = size // esize if esize else size
    k, within = divmod(offset, esize)
    part = f" (byte {within} of it)" if within else ""
    if 0 <= offset < size:
        return f"{prefix}{name}[{_index(k, shape)}]{part}"
    if offset >= size:
        past = k - n + 1
        how = "one past the end" if past == 1 else f"{past} elements past the end"
        return f"{prefix}{name}[{k}]{part}, {how} of {name} ({n} elements)"
    return f"{prefix}{name}[{k}]{part}, {-k} element{'s' if -k > 1 else ''} before the start of {name} ({n} elements)"


def global_place(m, addr: int) -> str | None:
    """A global address as a launch buffer's element (the nearest buffer when it is outside all of
    them); None when no launch buffer is near (a module variable, or nothing at all)."""
    allocs = [a for a in m.glob.allocations if a.name in m.launch.buffers]
    if not allocs:
        return None
    inside = next((a for a in allocs if a.base <= addr < a.end), None)
    if inside is None:
        before = max((a for a in allocs if a.end <= addr), key=lambda a: a.end, default=None)
        after = min((a for a in allocs if a.base > addr), key=lambda a: a.base, default=None)
        if before is not None and (after is None or addr - before.end < after.base - addr):
            inside = before
        else:
            inside = after
    if inside is None:
        return None
    esize, shape = _geometry(m.launch.buffers[inside.name], inside.size)
    return element(inside.name, addr - inside.base, inside.size, esize, shape)


def shared_place(m, offset: int) -> str | None:
    """A CTA-relative shared-memory offset as a shared variable's element, or None."""
    from ..program import _elem_size

    per = max(1, m.prog.shared_size() + m.launch.dynamic_shared_bytes)
    shared = [v for v in m.prog.variables.values() if v.space == ".shared"]
    var = next((v for v in shared if v.offset <= offset < v.offset + (v.size if not v.extern else per)), None)
    if var is None:
        ends = [v for v in shared if v.offset <= offset]
        var = max(ends, key=lambda v: v.offset, default=None)
        if var is None:
            return None
    try:
        esize = _elem_size(var.decl)
    except Exception:  # an untyped declaration: bytes
        esize = 1
    size = var.size if not var.extern else max(0, per - var.offset)
    return f"{element(var.name, offset - var.offset, size, esize, (max(1, size // esize),))} (0x{offset:x})"


def describe(m, space: MemSpace, offset: int) -> str | None:
    """A place in `space` (global: an absolute address; shared: CTA-relative) in the user's terms."""
    if space is MemSpace.GLOBAL:
        return global_place(m, offset)
    if space is MemSpace.SHARED:
        return shared_place(m, offset)
    return None


__all__ = ["element", "global_place", "shared_place", "describe"]
