"""libdevice routines recognised in a term, read as the function they approximate.

Triton lowers `tl.log` to libdevice's `__nv_logf` (CUDA's libdevice, inlined): subnormal inputs are
scaled by 2^23, the exponent is split off with integer arithmetic on the float's bits (x = m 2^n, m
in [2/3, 4/3)), log(m) is a degree-10 minimax polynomial in m - 1, a non-finite or negative input
goes through fma(x, inf, inf) and 0 gives -inf. A kernel that writes `lg2.approx(x) * ln 2` (CUDA's
`__logf`) computes an approximation of the same function, ln x. The real-arithmetic reading already
takes approximate instructions as the exact functions they approximate (ex2.approx as exp2); here
`__nv_logf(x)` is read the same way, as ln x, written `log2(x) * RN_f32(ln 2)` (the form of `__logf`, so
that both meet): an assumption printed with the verdict (LOGF_ASSUMPTION).

The match is structural and exact: the term, rendered as a tree (operation, full modifiers, sort,
constants' bits; the children of commutative operations in a canonical order) with the argument x
written `X`, must be libdevice's sequence as Triton's sm_80 build emits it (libdevice_logf.txt, rendered
from Triton's PTX for contract cross_entropy_zloss). Any other term is not recognised
and keeps its own normal form (uninterpreted where it has no real meaning): no verdict is made
`verified` by a routine that differs in one constant or operation.
"""

from __future__ import annotations

from semantics.terms import COMMUTATIVE, Op, TermStore, mods

__all__ = ["logf_argument", "LOGF_ASSUMPTION", "LN2_F32"]

#: RN_f32(ln 2) (0x3F317218), the factor of `__logf` and of libdevice's exponent term.
LN2_F32 = 0x3F317218
LOGF_ASSUMPTION = ("libdevice's __nv_logf(x) (Triton's tl.log: exponent split and minimax polynomial) is read as "
                   "the function it approximates, ln x = log2(x) * ln 2, with ln 2 as its float rounding "
                   "RN_f32(ln 2) (the form of lg2.approx(x) * 0f3F317218)")
_MAX_NODES = 400  # a rendering larger than libdevice's routine is not it


def _render(T: TermStore, i: int, x: int, budget: list[int]) -> str | None:
    if i == x:
        return "X"
    budget[0] -= 1
    if budget[0] < 0:
        return None
    op = Op(int(T.op[i]))
    sort = str(T.sort_of(i))
    if op is Op.CONST:
        return f"c.{sort}.{int(T.aux[i]) & ((1 << 64) - 1):x}"
    if op in (Op.INPUT, Op.OPAQUE):
        return None  # the routine reads nothing but x
    kids = []
    for k in T.kids(i):
        r = _render(T, int(k), x, budget)
        if r is None:
            return None
        kids.append(r)
    if op in COMMUTATIVE:  # operand order of an exactly commutative operation is the store's choice
        kids[:2] = sorted(kids[:2])
    return f"{op.name}[{mods(int(T.aux[i]))!r}].{sort}({','.join(kids)})"


def logf_argument(T: TermStore, i: int) -> int | None:
    """x when term i is __nv_logf(x) (module docstring), else None."""
    if int(T.op[i]) != Op.ITE:
        return None
    try:  # ite(x' == 0, -inf, ...) with x' = ite(x < 2^-126, x * 2^23, x)
        xs = int(T.kids(int(T.kids(i)[0]))[0])
        if int(T.op[xs]) != Op.ITE:
            return None
        x = int(T.kids(xs)[2])
    except IndexError:
        return None
    got = _render(T, i, x, [_MAX_NODES])
    return x if got is not None and got == _template() else None


_TEMPLATE: list[str] = []


def _template() -> str:
    """LOGF_TEMPLATE: libdevice_logf.txt beside this file, as _render renders a term (read once)."""
    if not _TEMPLATE:
        from pathlib import Path

        _TEMPLATE.append((Path(__file__).with_name("libdevice_logf.txt")).read_text().strip())
    return _TEMPLATE[0]
