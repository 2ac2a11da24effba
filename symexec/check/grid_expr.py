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
        if e[0] in ("sext", "zext") and e[2][1] == w:
            return e[2]  # the low w bits of an extended w-bit value are that value (cvt.u32.u64 of cvt.s64.s32)
        return ("trunc", w, e)
    return ("sext" if signed else "zext", w, e)


@dataclass
class Sv:
    """expr + off (off: concrete per-lane array at the expression's width, or None)."""

    expr: tuple
    off: np.ndarray | None = None


def leaves(e, tags: tuple) -> bool:
    """Does expression `e` contain a leaf with one of `tags` ("c", "t", "s", "g", "p", ...)?"""
    return isinstance(e, tuple) and bool(e) and (e[0] in tags or any(leaves(x, tags) for x in e[2:]))


def substitute(e, tag: str, ident, value: int):
    """`e` with the leaf (tag, w, ident) replaced by the constant `value` at the leaf's width, and
    folded where that leaves constants (simplify)."""
    return replace_leaf(e, tag, ident, K(value, 64))


def replace_leaf(e, tag: str, ident, by: tuple):
    """`e` with the leaf (tag, w, ident) replaced by the expression `by` (at the leaf's width)."""
    if not isinstance(e, tuple) or not e:
        return e
    if e[0] == tag and e[2] == ident:
        return adapt(by, e[1])
    if not any(isinstance(x, tuple) for x in e[2:]):
        return e
    return simplify(e[:2] + tuple(replace_leaf(x, tag, ident, by) if isinstance(x, tuple) else x for x in e[2:]))


# ("d", w, (loop, register)): a summarised loop's per-period step of a register while its period runs
# (grid_shadow.Shadow.begin_loop), replaced by the step's expression once the period closes (loops.py);
# ("v", w, (loop, register)): a register recomputed every period, its value at the start of periods t >= 1 (only ever
# the else-branch of an ite on t == 0), replaced by its end-of-period value at t - 1 once the period closes
_LEAVES = ("c", "p", "q", "t", "s", "g", "d", "v")


def simplify(e):
    """One level of folding: an operation on constants is its value; x+0, x-0, x|0, x^0, x*1 are x;
    x*0 and x&0 are 0 (so that a loop's expression at t = 0 is again the expression of the run); an ite with
    equal branches is that branch, and a recomputed register's ite(t == 0, start, v) at t = 0 its start."""
    if not isinstance(e, tuple) or not e or e[0] in ("k", "b") + _LEAVES:
        return e
    args = [x for x in e[2:] if isinstance(x, tuple)]
    if e[0] in ("ite", "bite") and args[1] == args[2]:  # (a decided choice is kept: dropping the other branch
        return args[1]  # would drop its lane columns, which an access's rows still list)
    if e[0] == "ite" and args[0] == ("b", 0, True) and args[2][0] == "v":  # a recomputed register at t = 0: its
        return args[1]  # start (the leaf v, for t >= 1, names no lane column)
    if args and all(a[0] in ("k", "b") for a in args):
        v = evaluate(e, {})
        return ("b", 0, bool(v)) if e[1] == 0 else K(int(v), e[1])
    if len(args) == 2 and e[0] in ("add", "sub", "or", "xor", "mul", "and", "shl", "lshr"):
        x, y = args
        zero = lambda a: a[0] == "k" and a[2] == 0  # noqa: E731
        one = lambda a: a[0] == "k" and a[2] == 1  # noqa: E731
        if e[0] in ("add", "or", "xor") and zero(x):
            return y
        if e[0] in ("add", "sub", "or", "xor", "shl", "lshr") and zero(y):
            return x
        if e[0] in ("mul", "and") and (zero(x) or zero(y)):
            return K(0, e[1])
        if e[0] == "mul" and one(x):
            return y
        if e[0] == "mul" and one(y):
            return x
    return e


def _mask(w: int) -> int:
    return (1 << w) - 1


def _o(x) -> np.ndarray:
    """As an object array (Python ints: exact at any width)."""
    return np.asarray(x, dtype=object)


def _where(c, x, y) -> np.ndarray:
    """np.where on object arrays (Python ints stay exact)."""
    c, x, y = np.broadcast_arrays(np.asarray(c, dtype=bool), _o(x), _o(y))
    if c.ndim == 0:
        return _o(x) if bool(c) else _o(y)
    out = np.array(y, dtype=object, copy=True)
    out[c] = x[c]
    return out


def _signed(v, w: int):
    """Values of width w as signed Python ints (object arrays)."""
    v = _o(v)
    return _where(_o(v >> (w - 1)) & 1 == 1, _o(v - (1 << w)), v)


def leaf_keys(e) -> set[tuple]:
    """The env keys (tag, ident) that `evaluate(e, env)` reads."""
    out: set[tuple] = set()
    todo = [e]
    while todo:
        x = todo.pop()
        if x[0] in _LEAVES:
            out.add((x[0], x[2]))
        else:
            todo.extend(y for y in x[2:] if isinstance(y, tuple))
    return out


def evaluate(e, env: dict):
    """The value of bit-vector expression `e` per lane (numpy broadcasting), with the semantics of
    grid.py's Z3 terms (modulo 2^w; division by zero as SMT-LIB defines it). `env` maps leaves
    (tag, ident) to values: ("c", axis) the CTA id, ("p", id) placeholders, ("t", id) a loop's
    iteration, ("s", name)/("g", axis) sizes and grid. Values are Python ints in object arrays (exact
    at any width); booleans are bool arrays."""
    tag, w = e[0], e[1]
    if tag == "k":
        return _o(e[2])
    if tag == "b":
        return np.asarray(bool(e[2]))
    if tag in _LEAVES:
        v = np.asarray(env[(tag, e[2])]).astype(np.uint64).astype(object)
        return _o(v & _mask(w))
    a = [evaluate(x, env) for x in e[2:] if isinstance(x, tuple)]
    m = _mask(w) if w else 0
    if tag in ("add", "sub", "mul", "and", "or", "xor"):
        x, y = a
        r = {"add": lambda: x + y, "sub": lambda: x - y, "mul": lambda: x * y, "and": lambda: x & y,
             "or": lambda: x | y, "xor": lambda: x ^ y}[tag]()
        return _o(_o(r) & m)
    if tag in ("shl", "lshr", "ashr"):
        x, y = a
        big = _o(y) >= w
        s = _o(np.minimum(_o(y), w - 1))
        if tag == "shl":
            return _where(big, 0, _o(_o(x << s) & m))
        if tag == "lshr":
            return _where(big, 0, _o(x >> s))
        return _o(_o(_signed(x, w) >> s) & m)
    if tag in ("udiv", "urem"):
        x, y = a
        zero = _o(y) == 0
        safe = _where(zero, 1, y)
        if tag == "udiv":
            return _where(zero, m, _o(x // safe))
        return _where(zero, x, _o(x % safe))
    if tag in ("sdiv", "srem"):
        x, y = a
        sx, sy = _signed(x, w), _signed(y, w)
        zero = sy == 0
        safe = _where(zero, 1, sy)
        q = _o(np.vectorize(lambda p, d: abs(p) // abs(d) * (1 if (p >= 0) == (d > 0) else -1),
                            otypes=[object])(sx, safe))
        if tag == "sdiv":
            return _where(zero, _where(sx < 0, 1, m), _o(q & m))
        return _where(zero, x, _o(_o(sx - q * safe) & m))
    if tag in ("smin", "smax", "umin", "umax"):
        x, y = a
        lt = (_signed(x, w) < _signed(y, w)) if tag[0] == "s" else (_o(x) < _o(y))
        return _where(lt, x, y) if tag[1:] == "min" else _where(lt, y, x)
    if tag == "zext":
        return a[0]
    if tag == "sext":
        return _o(_signed(a[0], e[2][1]) & m)
    if tag == "high":
        return _o(_o(a[0] >> w) & m)
    if tag == "trunc":
        return _o(a[0] & m)
    if tag == "ite":
        return _where(a[0], a[1], a[2])
    if tag == "bite":
        return _where(a[0], a[1], a[2]).astype(bool)
    if tag == "not":
        return ~np.asarray(a[0], dtype=bool)
    if tag in ("band", "bor", "bxor"):
        x, y = np.asarray(a[0], dtype=bool), np.asarray(a[1], dtype=bool)
        return {"band": x & y, "bor": x | y, "bxor": x ^ y}[tag]
    if tag == "cmp":
        op = e[2]
        x, y = a
        iw = e[3][1]
        if op[0] == "s":
            x, y, op = _signed(x, iw), _signed(y, iw), op[1:]
        elif op[0] == "u":
            op = op[1:]
        x, y = _o(x), _o(y)
        return np.asarray({"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[op],
                          dtype=bool)
    raise KeyError(tag)
