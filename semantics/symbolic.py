"""The meaning of PTX instructions as terms (semantics.terms): what a register holds for every input.

Check mode's equivalence shadow (symexec/check/termshadow.py) calls `build` for an instruction whose
operands include data-dependent values. It passes the operands in the order the instruction's
handler reads them (semantics/ptx: registers and immediates, never address operands), each an
`Arg`: per lane a term id, or CONCRETE where the value is the same for every input (then its bits,
as read, are the value). `build` returns one term array per register the handler writes, in the
order it writes them; CONCRETE where the result does not depend on data (the machine's bits are
the value). Memory (ld/st/atom, asynchronous copies) is the shadow's business; `ldmatrix_sources`
and the fragment layouts of mma come from the handlers' own layout functions (semantics/ptx/mma.py).

Anything without a term meaning here raises `Unsupported` naming the instruction: the shadow then
gives the written registers opaque values that remember why, and an output that depends on one is
reported `unsupported` with that reason (never guessed).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ptx_parser import ast as A
from semantics.errors import Unsupported
from semantics.ptx.core import rounding, tinfo
from semantics.ptx.mma import (_BYTE_IDS, _ELEM, _SUB_BYTE, _THREAD_IDS_A, _THREAD_IDS_B, _fragment_index, _parse_mma,
                               _parse_scaled, a_layout, b_layout, c_layout, scale_lanes)
from semantics.terms import (CONCRETE, NO_MODS, PRED, SORTS, Kind, Mods, Op, TermStore, bits_sort, float_sort, mods,
                             mods_id, sort_of_type, sort_widths)

__all__ = ["Arg", "Builder", "build", "ldmatrix_sources", "SYMBOLIC_OPCODES"]


@dataclass
class Arg:
    """One operand as read: term ids (n,) with CONCRETE where `bits` is the value; `width` is the
    register's (or the immediate's type's) width in bits."""

    ids: np.ndarray
    bits: np.ndarray
    width: int

    def full(self, n: int) -> "Arg":
        return Arg(np.broadcast_to(self.ids, (n,)), np.broadcast_to(self.bits, (n,)), self.width)


def _mask(width: int) -> np.uint64:
    return np.uint64((1 << width) - 1) if width < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)


#: Builder.extract of at most this many terms takes the scalar path (numpy's per-call overhead dominates)
_FEW = 16


class Builder:
    """Vectorised term construction for one instruction over n lanes (with simplification of bit
    slicing: an extract of a concatenation is the part, a float read of a float is itself)."""

    def __init__(self, store: TermStore, n: int) -> None:
        self.T = store
        self.n = n

    # ------------------------------------------------------------------ operands
    def sym(self, *args: Arg) -> np.ndarray:
        """Lanes where any of `args` depends on data."""
        m = np.zeros(self.n, bool)
        for a in args:
            m |= np.broadcast_to(a.ids, (self.n,)) != CONCRETE
        return m

    def value(self, a: Arg, sort: int, lanes: np.ndarray) -> np.ndarray:
        """Terms of `a` read as `sort` on `lanes` (constants where `a` is concrete); CONCRETE elsewhere."""
        ids = np.broadcast_to(a.ids, (self.n,))
        out = np.full(self.n, CONCRETE, np.int64)
        sym = lanes & (ids != CONCRETE)
        con = lanes & (ids == CONCRETE)
        if con.any():
            w = SORTS[sort].width
            bits = np.broadcast_to(a.bits, (self.n,))[con]
            if bits.dtype == np.bool_:
                bits = bits.astype(np.uint64)
            out[con] = self.T.const(sort, bits.astype(np.uint64) & _mask(w))
        if sym.any():
            out[sym] = self.coerce(ids[sym], sort)
        return out

    def coerce(self, ids: np.ndarray, sort: int) -> np.ndarray:
        """Terms `ids` read as `sort` (PTX operand rules: low bits of a wider register, zero
        extension of a narrower one, a float read of bits)."""
        T = self.T
        if ids.size == 0:
            return ids
        want = SORTS[sort]
        have = T.sort[ids]
        out = ids.copy()
        if (have == sort).all():  # the common case: every term is of the sort read (no np.unique)
            return out
        for s in np.unique(have).tolist():
            sel = have == s
            got = SORTS[s]
            if s == sort:
                continue
            if want.kind is Kind.PRED or got.kind is Kind.PRED:
                if want.kind is Kind.PRED and got.kind is not Kind.PRED:  # a register read as .pred: != 0
                    zero = T.const(s, 0)
                    out[sel] = T.make(Op.CMP, PRED, mods_id(Mods(cmp="ne")), [ids[sel], zero])
                    continue
                raise Unsupported(f"a predicate read as .{want}")
            x = ids[sel]
            if got.width > want.width:
                x = self.extract(x, 0, want.width)
            elif got.width < want.width:
                x = self.concat([T.const(bits_sort(want.width - got.width), 0), x])
            if want.kind is Kind.FLOAT:
                x = self.as_float(x, want.fmt)
            out[sel] = x
        return out

    def as_float(self, ids: np.ndarray, fmt: str) -> np.ndarray:
        """The bits of `ids` read as float format `fmt` (no conversion)."""
        T = self.T
        sort = float_sort(fmt)
        out = ids.copy()
        s = T.sort[ids]
        op = T.op[ids]
        todo = s != sort
        if not todo.any():
            return out
        fl = todo & (op == Op.FLOAT)
        if fl.any():  # the float read of a float's bits: the float itself
            child = T.kid(ids[fl], 0)
            same = T.sort[child] == sort
            idx = np.nonzero(fl)[0][same]
            out[idx] = child[same]
            todo[idx] = False
        cn = todo & (op == Op.CONST)
        if cn.any():
            out[cn] = T.const(sort, T.aux[ids[cn]])
            todo &= ~cn
        it = todo & (op == Op.ITE) & (sort_widths()[s] == SORTS[sort].width)
        if it.any():  # selp.b32 of float bits read as a float: the selection of the floats
            x = ids[it]
            out[it] = T.make(Op.ITE, sort, NO_MODS, [T.kid(x, 0), self.as_float(T.kid(x, 1), fmt),
                                                       self.as_float(T.kid(x, 2), fmt)])
            todo &= ~it
        if todo.any():
            out[todo] = T.make(Op.FLOAT, sort, NO_MODS, [ids[todo]])
        return out

    def extract(self, ids: np.ndarray, lo: int, width: int) -> np.ndarray:
        """Bits [lo, lo+width) of each term."""
        T = self.T
        ids = np.asarray(ids, np.int64)
        if ids.size == 0:
            return ids.copy()
        if ids.size <= _FEW:  # a few terms: each one's _extract1 (what the arrays below compute for it), in
            # the order they call it (distinct ids ascending): the same nodes, made in the same order
            got = {i: self._extract1(i, lo, width) for i in sorted(set(ids.tolist()))}
            return np.array([got[i] for i in ids.reshape(-1).tolist()], np.int64)
        out = np.full(ids.size, -1, np.int64)
        widths = sort_widths()[T.sort[ids]]
        op = T.op[ids]
        whole = (lo == 0) & (widths == width)
        out[whole] = ids[whole]
        # a concatenation of equal parts, one part asked for (the halves of a packed register)
        cat = ~whole & (op == Op.CONCAT)
        if cat.any():
            c = ids[cat]
            nk = T.nkids[c].astype(np.int64)
            part = widths[cat] // np.maximum(nk, 1)
            k0 = T.kid(c, 0)
            ok = (part == width) & (lo % width == 0) & (sort_widths()[T.sort[k0]] == part) & (nk * part == widths[cat])
            if ok.any():  # every part that wide, not only the first (8 | 4 | 12 bits: bits 0-7 are not the 12-bit part)
                okk = np.nonzero(ok)[0]
                for jj in range(1, int(nk[okk].max())):
                    has = okk[nk[okk] > jj]
                    w = sort_widths()[T.sort[T._kids.a[T._off.a[c[has]] + jj]]]
                    ok[has[w != part[has]]] = False
            if ok.any():
                sel = np.nonzero(cat)[0][ok]
                j = nk[ok] - 1 - lo // width
                out[sel] = T._kids.a[T._off.a[ids[sel]] + j]
        rest = out < 0
        if rest.any():
            uniq, inv = np.unique(ids[rest], return_inverse=True)
            res = np.array([self._extract1(int(i), lo, width) for i in uniq.tolist()], dtype=np.int64)
            out[rest] = res[inv.reshape(-1)]
        return out

    def _extract1(self, i: int, lo: int, width: int) -> int:
        T = self.T
        key = (i, lo, width)
        memo = T.__dict__.setdefault("_extract_memo", {})
        got = memo.get(key)
        if got is not None:
            return got
        s = SORTS[int(T._sort.a[i])]
        op = int(T._op.a[i])  # the columns themselves (T.op, T.sort_of make a view per call)
        if lo == 0 and width == s.width:
            r = i
        elif op == Op.CONST:
            v = (int(T.aux[i]) & 0xFFFFFFFFFFFFFFFF) >> lo
            r = int(T.const(bits_sort(width), np.uint64(v) & _mask(width))[0])
        elif op == Op.CONCAT:
            kids = T.kids(i)
            widths = [T.sort_of(k).width for k in kids]
            pos = s.width
            parts = []
            for k, w in zip(kids, widths):  # high to low
                pos -= w
                a, b = max(lo, pos), min(lo + width, pos + w)
                if a < b:
                    parts.append(self._extract1(k, a - pos, b - a))
            r = parts[0] if len(parts) == 1 else self._concat1(tuple(parts))
        elif op == Op.EXTRACT:
            m = mods(int(T._aux.a[i]))
            r = self._extract1(int(T._kids.a[T._off.a[i]]), m.lo + lo, width)
        elif op in (Op.SHR, Op.SHL, Op.AND, Op.OR) and self._shifted(i, lo, width) is not None:
            r = self._shifted(i, lo, width)
        elif op in (Op.OR, Op.XOR, Op.IADD) and self._one_side(i, lo, width) is not None:
            r = self._one_side(i, lo, width)
        elif op in (Op.AND, Op.OR, Op.XOR, Op.NOT):  # bitwise operations commute with slicing
            kids = [self._extract1(k, lo, width) for k in T.kids(i)]
            if all(int(T.op[k]) == Op.CONST for k in kids):
                vals = [int(T.aux[k]) & ((1 << width) - 1) for k in kids]
                v = (vals[0] & vals[1]) if op == Op.AND else (vals[0] | vals[1]) if op == Op.OR else \
                    (vals[0] ^ vals[1]) if op == Op.XOR else ~vals[0]
                r = int(T.const(bits_sort(width), np.uint64(v & ((1 << width) - 1)))[0])
            else:
                r = T.make1(op, bits_sort(width), NO_MODS, kids)
        elif op == Op.CVT and self._cvt_int(i) and lo + width <= T.sort_of(T.kids(i)[0]).width:
            r = self._extract1(T.kids(i)[0], lo, width)  # a widening keeps the low bits
        else:
            r = T.make1(int(Op.EXTRACT), bits_sort(width), mods_id(Mods(lo=lo, width=width)), (i,))
        memo[key] = r
        return r

    def _cvt_int(self, i: int) -> bool:
        m = self.T.node(i).mods
        return len(m.elems) == 2 and all(t[0] in "bus" and t[1:].isdigit() for t in m.elems)

    def zero_bits(self, i: int) -> int:
        """Bits of term i known to be zero for every input (a conservative mask)."""
        T = self.T
        memo = T.__dict__.setdefault("_zero_memo", {})
        got = memo.get(i)
        if got is not None:
            return got
        s = T.sort_of(i)
        w = s.width
        full = (1 << w) - 1
        op = int(T.op[i])
        kids = T.kids(i)
        z = 0
        if op == Op.CONST:
            z = ~int(T.aux[i]) & full
        elif op in (Op.SHL, Op.SHR) and int(T.op[kids[1]]) == Op.CONST and not T.node(i).mods.signed:
            c = min(int(T.aux[kids[1]]) & 0xFFFFFFFF, w)
            inner = self.zero_bits(kids[0])
            z = ((inner << c) | ((1 << c) - 1)) & full if op == Op.SHL else \
                ((inner >> c) | (full ^ (full >> c))) & full
        elif op == Op.AND:
            z = self.zero_bits(kids[0]) | self.zero_bits(kids[1])
        elif op in (Op.OR, Op.XOR):
            z = self.zero_bits(kids[0]) & self.zero_bits(kids[1])
        elif op == Op.CONCAT:
            pos = w
            for k in kids:
                kw = T.sort_of(k).width
                pos -= kw
                z |= self.zero_bits(k) << pos
        elif op == Op.EXTRACT:
            m = T.node(i).mods
            z = (self.zero_bits(kids[0]) >> m.lo) & full
        elif op == Op.CVT and self._cvt_int(i):
            dst, src = T.node(i).mods.elems
            sw = T.sort_of(kids[0]).width
            z = self.zero_bits(kids[0]) & ((1 << min(sw, w)) - 1)
            if w > sw and src[0] != "s":  # zero extension
                z |= full ^ ((1 << sw) - 1)
        memo[i] = z
        return z

    def _one_side(self, i: int, lo: int, width: int) -> int | None:
        """A slice of a | b, a ^ b (or a + b) where one operand is zero over the slice (and, for a
        sum, below it: no carry comes in): the other operand's slice."""
        T = self.T
        a, b = T.kids(i)
        span = ((1 << width) - 1) << lo
        below = (1 << (lo + width)) - 1 if int(T.op[i]) == Op.IADD else span
        if self.zero_bits(b) & below == below:
            return self._extract1(a, lo, width)
        if self.zero_bits(a) & below == below:
            return self._extract1(b, lo, width)
        return None

    def _shifted(self, i: int, lo: int, width: int) -> int | None:
        """A slice of a shift or mask by a constant, as a slice of the operand (or zero):
        (x >> c)[lo:lo+w] = x[lo+c : lo+c+w]; (x << c)[lo:...] = x[lo-c : ...]; (x & m) where m is
        all ones (zeros) over the slice is x's slice (zero)."""
        T = self.T
        x, c = T.kids(i)
        if int(T.op[c]) != Op.CONST:
            return None
        op = int(T.op[i])
        xw = T.sort_of(x).width
        cv = int(T.aux[c]) & ((1 << T.sort_of(c).width) - 1)
        if op == Op.SHR:
            return self._extract1(x, lo + cv, width) if lo + cv + width <= xw else None
        if op == Op.SHL:
            if lo + width <= cv:
                return int(T.const(bits_sort(width), 0)[0])
            return self._extract1(x, lo - cv, width) if lo >= cv else None
        field = (cv >> lo) & ((1 << width) - 1)
        full = (1 << width) - 1
        if op == Op.AND:
            if field == full:
                return self._extract1(x, lo, width)
            if field == 0:
                return int(T.const(bits_sort(width), 0)[0])
        if op == Op.OR and field == 0:
            return self._extract1(x, lo, width)
        return None

    def concat(self, parts: list[np.ndarray]) -> np.ndarray:
        """Bits of parts[0] (high) ... parts[-1] (low) side by side."""
        T = self.T
        m = max(np.size(p) for p in parts)
        P = np.stack([np.broadcast_to(np.asarray(p, np.int64), (m,)) for p in parts], axis=1)
        if m <= _FEW:
            return self._concat_few(P)
        ops = T.op[P]
        plain = ~((ops == Op.CONCAT) | (ops == Op.EXTRACT)).any(axis=1) & ~(ops == Op.CONST).all(axis=1)
        out = np.full(m, -1, np.int64)
        if plain.any():  # nothing to flatten or merge: one node per row, in one call
            sub = P[plain]
            width = sort_widths()[T.sort[sub]].sum(axis=1)
            for w in np.unique(width).tolist():
                sel = np.nonzero(plain)[0][width == w]
                out[sel] = T.make(Op.CONCAT, bits_sort(w), NO_MODS, P[sel])
        rest = ~plain
        if rest.any():
            uniq, inv = np.unique(P[rest], axis=0, return_inverse=True)
            res = np.array([self._concat1(tuple(r)) for r in uniq.tolist()], dtype=np.int64)
            out[rest] = res[inv.reshape(-1)]
        return out

    def _concat_few(self, P: np.ndarray) -> np.ndarray:
        """concat of a few rows (P: (m, k)) in Python ints: the nodes the array path makes, in its order
        (the plain rows' CONCATs per width ascending, in one make each; then _concat1 of the other
        distinct rows in ascending order, as np.unique(axis=0) gives them)."""
        T = self.T
        opa = T._op.a
        rows = [tuple(r) for r in P.tolist()]
        got: dict[tuple, int] = {}
        plain: dict[int, list[tuple]] = {}
        rest: set[tuple] = set()
        for r in rows:
            ops = [int(opa[p]) for p in r]
            if any(o == Op.CONCAT or o == Op.EXTRACT for o in ops) or all(o == Op.CONST for o in ops):
                rest.add(r)
            else:
                plain.setdefault(sum(SORTS[int(T._sort.a[p])].width for p in r), []).append(r)
        for w in sorted(plain):
            rs = plain[w]
            for r, i in zip(rs, T.make(Op.CONCAT, bits_sort(w), NO_MODS, np.array(rs, np.int64)).tolist()):
                got[r] = i
        for r in sorted(rest):
            got[r] = self._concat1(r)
        return np.array([got[r] for r in rows], np.int64)

    def _concat1(self, parts: tuple[int, ...]) -> int:
        T = self.T
        flat: list[int] = []
        for p in parts:  # nested concatenations flatten
            if int(T.op[p]) == Op.CONCAT:
                flat.extend(T.kids(p))
            else:
                flat.append(p)
        merged: list[int] = []
        mq = None
        for p in flat:  # adjacent slices of one term merge: [x[31:16], x[15:0]] -> x
            mp = self._slice(p)
            if merged:
                q = merged[-1]
                if mq is not None and mp is not None and mq[0] == mp[0] and mq[1] == mp[1] + mp[2]:
                    merged[-1] = q = self._extract1(mq[0], mp[1], mq[2] + mp[2])
                    mq = self._slice(q)
                    continue
            merged.append(p)
            mq = mp
        if len(merged) == 1:
            return merged[0]
        width = sum(T.sort_of(p).width for p in merged)
        if width <= 64 and all(int(T.op[p]) == Op.CONST for p in merged):  # (a CONST holds 64 bits)
            v = 0
            for p in merged:
                w = T.sort_of(p).width
                v = (v << w) | (int(T.aux[p]) & ((1 << w) - 1))
            return int(T.const(bits_sort(width), np.uint64(v))[0])
        return T.make1(int(Op.CONCAT), bits_sort(width), NO_MODS, merged)

    def _slice(self, p: int) -> tuple[int, int, int] | None:
        """(term, lo, width) when p is a slice of a term (the whole term counts as one)."""
        T = self.T
        op = int(T._op.a[p])  # the column itself (T.op makes a view per call)
        if op == Op.EXTRACT:
            m = mods(int(T._aux.a[p]))
            return int(T._kids.a[T._off.a[p]]), m.lo, m.width
        if op == Op.CONST:
            return None
        return p, 0, SORTS[int(T._sort.a[p])].width

    # ------------------------------------------------------------------ nodes
    def node(self, op: Op, sort: int, m: Mods | int, kids: list[np.ndarray], lanes: np.ndarray) -> np.ndarray:
        out = np.full(self.n, CONCRETE, np.int64)
        if lanes.any():
            aux = m if isinstance(m, int) else mods_id(m)
            out[lanes] = self.T.make(op, sort, aux, [np.broadcast_to(k, (self.n,))[lanes] for k in kids])
        return out

    def lanewise(self, args: list[Arg], sorts: list[int], fn) -> np.ndarray:
        """fn(*operand terms) on the lanes where any operand depends on data; CONCRETE elsewhere."""
        lanes = self.sym(*args)
        out = np.full(self.n, CONCRETE, np.int64)
        if not lanes.any():
            return out
        vals = [self.value(a, s, lanes)[lanes] for a, s in zip(args, sorts)]
        out[lanes] = fn(*vals)
        return out

    def make(self, op: Op, sort: int, m: Mods | int, *kids: np.ndarray) -> np.ndarray:
        aux = m if isinstance(m, int) else mods_id(m)
        return self.T.make(op, sort, aux, list(kids))


# ---------------------------------------------------------------------- dispatch

_RULES: dict[str, object] = {}  # opcode -> rule(ins, args, builder, ctx) -> terms per written register


@dataclass
class BuildContext:
    """What a rule may need besides the operands: the executing lanes, a shuffle's source lanes."""

    mask: np.ndarray
    permute: np.ndarray | None = None


def rule(*opcodes: str):
    def deco(fn):
        for op in opcodes:
            _RULES[op] = fn
        return fn
    return deco


def build(ins: A.Instruction, args: list[Arg], store: TermStore, ctx: BuildContext) -> list[np.ndarray]:
    """Terms of the registers `ins` writes, in write order (see the module docstring)."""
    fn = _RULES.get(ins.opcode)
    if fn is None:
        raise Unsupported(f"{ins.name}: no term meaning (data-dependent operand)", ins)
    n = ctx.mask.size
    B = Builder(store, n)
    try:
        return fn(ins, [a.full(n) for a in args], B, ctx)
    except Unsupported as e:
        if e.ins is None:
            e.ins = ins
        raise


#: Opcodes with a term meaning (the shadow handles ld/st/atom/red/ldmatrix and async copies itself).
SYMBOLIC_OPCODES = _RULES


def _need(ins: A.Instruction, args: list[Arg], k: int) -> None:
    if len(args) != k:
        raise Unsupported(f"{ins.name}: {len(args)} operand reads where {k} were expected", ins)


def _fmods(ins: A.Instruction, **kw) -> Mods:
    return Mods(rnd=rounding(ins, "rn"), ftz=".ftz" in ins.modifiers, sat=".sat" in ins.modifiers,
                relu=".relu" in ins.modifiers, **kw)


def _packed(B: Builder, t, args: list[Arg], fn) -> list[np.ndarray]:
    """Apply an element operation to both halves of packed (x2) operands: low half is element 0."""
    half = t.width // 2
    esort = float_sort(t.fmt.name)
    rsort = bits_sort(t.width)

    def on(*vals):
        lo = [B.as_float(B.extract(v, 0, half), t.fmt.name) for v in vals]
        hi = [B.as_float(B.extract(v, half, half), t.fmt.name) for v in vals]
        return B.concat([fn(esort, *hi), fn(esort, *lo)])

    return [B.lanewise(args, [rsort] * len(args), on)]


_FBIN = {"add": Op.FADD, "sub": Op.FSUB, "mul": Op.FMUL, "div": Op.FDIV, "min": Op.FMIN, "max": Op.FMAX,
         "copysign": Op.FCOPYSIGN}
_IBIN = {"add": Op.IADD, "sub": Op.ISUB, "and": Op.AND, "or": Op.OR, "xor": Op.XOR, "min": Op.IMIN, "max": Op.IMAX}


@rule("add", "sub", "mul", "fma", "mad", "div", "min", "max", "copysign")
def _arith(ins, args, B: Builder, ctx):
    op = ins.opcode
    if len(ins.types) == 2 and op in ("add", "sub", "fma") and ins.types[0] == ".f32":
        return _mixed(ins, args, B)
    t = tinfo(ins.types[-1])
    if t.kind == "f":
        return _float_arith(ins, args, B, t)
    return _int_arith(ins, args, B, t)


def _float_arith(ins, args, B: Builder, t):
    op = ins.opcode
    bad = ins.modifiers & {".NaN", ".xorsign.abs", ".abs", ".xorsign"}
    if bad:
        raise Unsupported(f"{ins.name}: {' '.join(sorted(bad))} has no term meaning", ins)
    approx = "approx" if ".approx" in ins.modifiers else "full" if ".full" in ins.modifiers else None
    m = _fmods(ins, approx=approx) if op in ("add", "sub", "mul", "fma", "mad", "div") else \
        Mods(ftz=".ftz" in ins.modifiers)
    aux = mods_id(m)
    if op in ("fma", "mad"):
        _need(ins, args, 3)

        def fn(sort, a, b, c):
            return B.make(Op.FFMA, sort, aux, a, b, c)
    elif op in ("min", "max") and len(args) == 3:
        def fn(sort, a, b, c):
            return B.make(_FBIN[op], sort, aux, B.make(_FBIN[op], sort, aux, a, b), c)
    else:
        _need(ins, args, 2)

        def fn(sort, a, b):
            return B.make(_FBIN[op], sort, aux, a, b)
    if t.lanes == 2:
        return _packed(B, t, args, fn)
    sort = float_sort(t.fmt.name)
    return [B.lanewise(args, [sort] * len(args), lambda *v: fn(sort, *v))]


def _mixed(ins, args, B: Builder):
    """add/sub/fma.f32.{f16,bf16}: the narrow sources widened exactly, one f32 rounding."""
    narrow = ins.types[1].lstrip(".")
    k = 2 if ins.opcode == "fma" else 1
    f32 = float_sort("f32")
    sorts = [float_sort(narrow) if i < k else f32 for i in range(len(args))]
    aux = mods_id(_fmods(ins))
    cvt = mods_id(Mods(elems=("f32", narrow)))
    op = {"add": Op.FADD, "sub": Op.FSUB, "fma": Op.FFMA}[ins.opcode]

    def fn(*v):
        wide = [B.make(Op.CVT, f32, cvt, x) if i < k else x for i, x in enumerate(v)]
        return B.make(op, f32, aux, *wide)

    return [B.lanewise(args, sorts, fn)]


def _int_arith(ins, args, B: Builder, t):
    op = ins.opcode
    if ins.modifiers & {".sat", ".cc", ".relu"} or t.lanes == 2:
        raise Unsupported(f"{ins.name}: saturating, carry or SIMD integer arithmetic on data", ins)
    w = t.width
    s = bits_sort(w)
    signed = t.kind == "s"
    if op in ("add", "sub", "min", "max"):
        _need(ins, args, 3 if op in ("min", "max") and len(args) == 3 else 2)
        aux = mods_id(Mods(signed=signed))

        def fn(a, b, *c):
            r = B.make(_IBIN[op], s, aux, a, b)
            return B.make(_IBIN[op], s, aux, r, c[0]) if c else r
        return [B.lanewise(args, [s] * len(args), fn)]
    if op in ("mul", "mad"):
        mode = next((m[1:] for m in (".lo", ".hi", ".wide") if m in ins.modifiers), None)
        if mode is None:
            raise Unsupported(f"{ins.name}", ins)
        rs = bits_sort(2 * w) if mode == "wide" else s
        aux = mods_id(Mods(signed=signed, mode=mode))
        add = mods_id(Mods(signed=signed))
        if op == "mul":
            _need(ins, args, 2)
            return [B.lanewise(args, [s, s], lambda a, b: B.make(Op.IMUL, rs, aux, a, b))]
        _need(ins, args, 3)
        return [B.lanewise(args, [s, s, rs], lambda a, b, c: B.make(Op.IADD, rs, add, B.make(Op.IMUL, rs, aux, a, b), c))]
    raise Unsupported(f"{ins.name}: integer {op} on data", ins)


@rule("neg", "abs")
def _neg_abs(ins, args, B: Builder, ctx):
    _need(ins, args, 1)
    t = tinfo(ins.types[-1])
    if t.kind == "f":
        op = Op.FNEG if ins.opcode == "neg" else Op.FABS
        aux = mods_id(Mods(ftz=".ftz" in ins.modifiers))
        if t.lanes == 2:
            return _packed(B, t, args, lambda sort, a: B.make(op, sort, aux, a))
        s = float_sort(t.fmt.name)
        return [B.lanewise(args, [s], lambda a: B.make(op, s, aux, a))]
    s = bits_sort(t.width)
    op = Op.INEG if ins.opcode == "neg" else Op.IABS
    return [B.lanewise(args, [s], lambda a: B.make(op, s, NO_MODS, a))]


_SPECIAL = {"rcp": Op.FRCP, "sqrt": Op.FSQRT, "rsqrt": Op.FRSQRT, "ex2": Op.FEX2, "lg2": Op.FLG2, "sin": Op.FSIN,
            "cos": Op.FCOS, "tanh": Op.FTANH}


@rule("rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh")
def _special(ins, args, B: Builder, ctx):
    _need(ins, args, 1)
    t = tinfo(ins.types[-1])
    approx = ".approx" in ins.modifiers
    m = Mods(approx="approx" if approx else None, rnd=None if approx else rounding(ins, None),
             ftz=".ftz" in ins.modifiers)
    aux = mods_id(m)
    op = _SPECIAL[ins.opcode]
    if t.lanes == 2:
        return _packed(B, t, args, lambda sort, a: B.make(op, sort, aux, a))
    s = float_sort(t.fmt.name)
    return [B.lanewise(args, [s], lambda a: B.make(op, s, aux, a))]


@rule("and", "or", "xor")
def _logic(ins, args, B: Builder, ctx):
    _need(ins, args, 2)
    t = tinfo(ins.types[-1])
    if t.kind == "pred":
        op = {"and": Op.PAND, "or": Op.POR, "xor": Op.PXOR}[ins.opcode]
        return [B.lanewise(args, [PRED, PRED], lambda a, b: B.make(op, PRED, NO_MODS, a, b))]
    s = bits_sort(t.width)
    op = _IBIN[ins.opcode]
    return [B.lanewise(args, [s, s], lambda a, b: B.make(op, s, NO_MODS, a, b))]


@rule("not")
def _not(ins, args, B: Builder, ctx):
    _need(ins, args, 1)
    t = tinfo(ins.types[-1])
    if t.kind == "pred":
        return [B.lanewise(args, [PRED], lambda a: B.make(Op.PNOT, PRED, NO_MODS, a))]
    s = bits_sort(t.width)
    return [B.lanewise(args, [s], lambda a: B.make(Op.NOT, s, NO_MODS, a))]


@rule("shl", "shr")
def _shift(ins, args, B: Builder, ctx):
    _need(ins, args, 2)
    t = tinfo(ins.types[-1])
    s = bits_sort(t.width)
    op = Op.SHL if ins.opcode == "shl" else Op.SHR
    aux = mods_id(Mods(signed=t.kind == "s" and op == Op.SHR))
    return [B.lanewise(args, [s, bits_sort(32)], lambda a, b: B.make(op, s, aux, a, b))]


@rule("bfe")
def _bfe(ins, args, B: Builder, ctx):
    _need(ins, args, 3)
    t = tinfo(ins.types[-1])
    s = bits_sort(t.width)
    aux = mods_id(Mods(signed=t.kind == "s"))
    u32 = bits_sort(32)
    return [B.lanewise(args, [s, u32, u32], lambda a, b, c: B.make(Op.BFE, s, aux, a, b, c))]


@rule("popc")
def _popc(ins, args, B: Builder, ctx):
    _need(ins, args, 1)
    t = tinfo(ins.types[-1])
    return [B.lanewise(args, [bits_sort(t.width)], lambda a: B.make(Op.POPC, bits_sort(32), NO_MODS, a))]


@rule("prmt")
def _prmt(ins, args, B: Builder, ctx):
    """prmt.b32 d, a, b, c with a concrete selector: bytes of {b, a} picked by c's nibbles (9.7.9.7)."""
    _need(ins, args, 3)
    if ins.modifiers - {".b32"}:
        raise Unsupported(f"{ins.name}: prmt modes on data", ins)
    a, b, c = args
    if (np.broadcast_to(c.ids, (B.n,)) != CONCRETE).any():
        raise Unsupported(f"{ins.name}: data-dependent byte selector", ins)
    lanes = B.sym(a, b)
    out = np.full(B.n, CONCRETE, np.int64)
    if not lanes.any():
        return [out]
    s32 = bits_sort(32)
    av, bv = B.value(a, s32, lanes), B.value(b, s32, lanes)
    sel = np.broadcast_to(c.bits, (B.n,)).astype(np.int64)
    for code in np.unique(sel[lanes]).tolist():
        L = lanes & (sel == code)
        parts = []
        for k in (3, 2, 1, 0):  # result byte 3 (high) first
            nib = (code >> (4 * k)) & 0xF
            if nib & 8:
                raise Unsupported(f"{ins.name}: sign-replicating selector on data", ins)
            src = av[L] if nib < 4 else bv[L]
            parts.append(B.extract(src, 8 * (nib & 3), 8))
        out[L] = B.concat(parts)
    return [out]


@rule("setp")
def _setp(ins, args, B: Builder, ctx):
    t = tinfo(ins.types[-1])
    mods = {m.lstrip(".") for m in ins.modifiers - set(ins.types)}
    cmp = next(m for m in mods if m not in ("and", "or", "xor", "ftz"))
    boolop = next((m for m in mods if m in ("and", "or", "xor")), None)
    s = float_sort(t.fmt.name) if t.kind == "f" else bits_sort(t.width)
    aux = mods_id(Mods(cmp=cmp, signed=t.kind == "s", ftz="ftz" in mods))
    neg = isinstance(ins.operands[3], A.Negated) if boolop else False
    _need(ins, args, 3 if boolop else 2)
    pair = isinstance(ins.operands[0], A.Pair)
    sorts = [s, s] + ([PRED] if boolop else [])

    def combine(p, c, negate_p=False):
        if negate_p:
            p = B.make(Op.PNOT, PRED, NO_MODS, p)
        if boolop is None:
            return p
        if neg:
            c = B.make(Op.PNOT, PRED, NO_MODS, c)
        return B.make({"and": Op.PAND, "or": Op.POR, "xor": Op.PXOR}[boolop], PRED, NO_MODS, p, c)

    def first(a, b, *c):
        return combine(B.make(Op.CMP, PRED, aux, a, b), c[0] if c else None)

    out = [B.lanewise(args, sorts, first)]
    if pair:
        out.append(B.lanewise(args, sorts, lambda a, b, *c: combine(B.make(Op.CMP, PRED, aux, a, b),
                                                                     c[0] if c else None, True)))
    return out


@rule("selp")
def _selp(ins, args, B: Builder, ctx):
    _need(ins, args, 3)
    t = tinfo(ins.types[-1])
    s = sort_of_type(t.name)
    neg = isinstance(ins.operands[3], A.Negated)

    def fn(a, b, c):
        return B.make(Op.ITE, s, NO_MODS, B.make(Op.PNOT, PRED, NO_MODS, c) if neg else c, a, b)
    return [B.lanewise(args, [s, s, PRED], fn)]


@rule("mov")
def _mov(ins, args, B: Builder, ctx):
    t = tinfo(ins.types[-1])
    dst, src = ins.operands[0], ins.operands[1]
    if isinstance(src, A.Vector):  # pack: element 0 in the low bits
        w = t.width // len(src.elements)
        _need(ins, args, len(src.elements))
        s = bits_sort(w)
        return [B.lanewise(args, [s] * len(args), lambda *parts: B.concat(list(reversed(parts))))]
    _need(ins, args, 1)
    if isinstance(dst, A.Vector):  # unpack
        w = t.width // len(dst.elements)
        outs = []
        for i, p in enumerate(dst.elements):
            if isinstance(p, A.Sink):
                continue
            outs.append(B.lanewise(args, [bits_sort(t.width)], lambda v, i=i: B.extract(v, i * w, w)))
        return outs
    a = args[0]
    lanes = B.sym(a)
    out = np.full(B.n, CONCRETE, np.int64)
    if lanes.any():
        ids = a.ids[lanes]
        widths = sort_widths()[B.T.sort[ids]]
        same = widths == t.width  # a copy keeps the term (and its sort)
        r = ids.copy()
        if (~same).any():
            r[~same] = B.coerce(ids[~same], sort_of_type(t.name))
        out[lanes] = r
    return [out]


_CVT_MODS = {".rn", ".rz", ".rm", ".rp", ".rna", ".rni", ".rzi", ".rmi", ".rpi", ".ftz", ".sat", ".relu",
             ".satfinite"}


@rule("cvt")
def _cvt(ins, args, B: Builder, ctx):
    if len(ins.types) != 2:
        raise Unsupported(f"{ins.name}", ins)
    dt, st = tinfo(ins.types[0]), tinfo(ins.types[1])
    mods = ins.modifiers
    m = Mods(rnd=rounding(ins, None), ftz=".ftz" in mods, sat=".sat" in mods, relu=".relu" in mods,
             mode="satfinite" if ".satfinite" in mods else None, elems=(dt.name, st.name))
    aux = mods_id(m)
    if dt.lanes == 2 and st.name == "f32":  # cvt.rn.f16x2.f32 d, a, b: a in the upper half
        _need(ins, args, 2)
        es = float_sort(dt.fmt.name)
        f32 = float_sort("f32")
        eaux = mods_id(Mods(rnd=m.rnd, relu=m.relu, mode=m.mode, elems=(dt.fmt.name, "f32")))
        return [B.lanewise(args, [f32, f32], lambda a, b: B.concat([B.make(Op.CVT, es, eaux, a),
                                                                    B.make(Op.CVT, es, eaux, b)]))]
    if dt.lanes > 1 or st.lanes > 1:
        if dt.lanes == 2 and st.lanes == 2:
            _need(ins, args, 1)
            half_s, half_d = st.width // 2, dt.width // 2
            if st.fmt.bits != half_s or dt.fmt.bits != half_d:
                raise Unsupported(f"{ins.name}: packed sub-byte formats on data", ins)
            es, ds = st.fmt.name, float_sort(dt.fmt.name)
            eaux = mods_id(Mods(rnd=m.rnd, relu=m.relu, mode=m.mode, elems=(dt.fmt.name, es)))

            def fn(v):
                lo = B.as_float(B.extract(v, 0, half_s), es)
                hi = B.as_float(B.extract(v, half_s, half_s), es)
                return B.concat([B.make(Op.CVT, ds, eaux, hi), B.make(Op.CVT, ds, eaux, lo)])
            return [B.lanewise(args, [bits_sort(st.width)], fn)]
        raise Unsupported(f"{ins.name}", ins)
    _need(ins, args, 1)
    ss = sort_of_type(st.name)
    ds = sort_of_type(dt.name)
    return [B.lanewise(args, [ss], lambda a: B.make(Op.CVT, ds, aux, a))]


@rule("shfl")
def _shfl(ins, args, B: Builder, ctx):
    """shfl.sync: lane l's result is lane src[l]'s operand (the source lanes come from the handler)."""
    _need(ins, args, 4)
    if ctx.permute is None:
        raise Unsupported(f"{ins.name}: source lanes unknown", ins)
    for a in args[1:]:
        if (a.ids != CONCRETE).any():
            raise Unsupported(f"{ins.name}: data-dependent lane or mask operand", ins)
    a = args[0]
    out = np.asarray(a.ids)[ctx.permute].astype(np.int64)
    outs = [out]
    if isinstance(ins.operands[0], A.Pair):
        outs.append(np.full(B.n, CONCRETE, np.int64))
    return outs


_REDUX = {".add": Op.IADD, ".min": Op.IMIN, ".max": Op.IMAX, ".and": Op.AND, ".or": Op.OR, ".xor": Op.XOR}


@rule("redux")
def _redux(ins, args, B: Builder, ctx):
    """redux.sync: every lane of a warp gets the reduction of the active lanes' values (9.7.13.11);
    the terms are a balanced tree over the lanes in order (exact for integers, a min/max for floats)."""
    _need(ins, args, 2)
    if (args[0].ids != CONCRETE).any():
        raise Unsupported(f"{ins.name}: data-dependent membermask", ins)
    if ins.modifiers & {".abs", ".NaN"}:
        raise Unsupported(f"{ins.name}: .abs/.NaN on data", ins)
    op = next(_REDUX[m] for m in _REDUX if m in ins.modifiers)
    t = tinfo(ins.types[-1])
    if t.kind == "f":
        if op not in (Op.IMIN, Op.IMAX):
            raise Unsupported(f"{ins.name}", ins)
        op = Op.FMIN if op == Op.IMIN else Op.FMAX
        s = float_sort(t.fmt.name)
        aux = NO_MODS
    else:
        s = bits_sort(t.width)
        aux = mods_id(Mods(signed=t.kind == "s"))
    v = args[1]
    act = ctx.mask.reshape(-1, 32)
    warps = np.nonzero(act.any(axis=1) & (np.asarray(v.ids).reshape(-1, 32) != CONCRETE).any(axis=1))[0]
    out = np.full(B.n, CONCRETE, np.int64)
    if warps.size == 0:
        return [out]
    allv = B.value(v, s, np.ones(B.n, bool)).reshape(-1, 32)
    for w in warps.tolist():
        vals = allv[w][act[w]]
        while vals.size > 1:
            k = vals.size // 2
            pair = B.make(op, s, aux, vals[:k], vals[k:2 * k])
            vals = np.concatenate([pair, vals[2 * k:]])
        out.reshape(-1, 32)[w] = vals[0]
    return [out]


@rule("mma")
def _mma(ins, args, B: Builder, ctx):
    """mma.sync (9.7.14.5.14): each accumulator element is c + sum_k a[row, k] * b[k, col] (one
    MMA node: how the hardware orders and rounds the sum is unspecified), with the fragment layouts
    of semantics/ptx/mma.py."""
    if ".block_scale" in ins.modifiers:
        return _mma_block_scale(ins, args, B, ctx)
    (m, n, k), d, a, b, c, rnd = _parse_mma(ins)
    abits, bbits = _ELEM[a][0], _ELEM[b][0]
    if abits >= 64 or c == "f64":
        raise Unsupported(f"{ins.name}: .f64 mma on data", ins)
    pa, pb = 32 // abits, 32 // bbits
    rega, regb = m * k // 32 // pa, k * n // 32 // pb
    cbits = 16 if c == "f16" else 32
    pc = 2 if c == "f16" else 1
    nc = m * n // 32
    _need(ins, args, rega + regb + nc // pc)
    act = ctx.mask.reshape(-1, 32)
    warps = np.nonzero(act.all(axis=1))[0]
    anysym = np.zeros(act.shape[0], bool)
    for x in args:
        anysym |= (np.asarray(x.ids).reshape(-1, 32) != CONCRETE).any(axis=1)
    warps = warps[anysym[warps]]
    outs = [np.full(B.n, CONCRETE, np.int64) for _ in range(nc // pc)]
    if warps.size == 0:
        return outs
    W = warps.size
    everyone = np.ones(B.n, bool)

    def elem_sort(ty: str) -> int:  # accumulators (f16/f32/s32) are not in _ELEM's multiplicand table
        if ty == "s32":
            return bits_sort(32)
        bits, kind = _ELEM.get(ty, (32, "f"))
        return float_sort(ty) if kind == "f" else bits_sort(bits)

    def regs(sub: list[Arg]) -> np.ndarray:  # (W, 32, nregs) term ids of 32-bit registers
        cols = [B.value(x, bits_sort(32), everyone).reshape(-1, 32)[warps] for x in sub]
        return np.stack(cols, axis=2)

    def elems(R: np.ndarray, bits: int, ty: str) -> np.ndarray:  # (W, 32, nregs, p)
        if ty in _SUB_BYTE:  # a 4/6-bit element in its 8-bit container (.kind::f8f6f4)
            return _container_elems(B, R, ty)
        p = 32 // bits
        flat = R.reshape(-1)
        parts = [B.extract(flat, j * bits, bits) for j in range(p)]
        es = elem_sort(ty)
        if SORTS[es].kind is Kind.FLOAT:
            parts = [B.as_float(x, ty) for x in parts]
        return np.stack(parts, axis=1).reshape(*R.shape, p)

    Ar = regs(args[:rega])
    Br = regs(args[rega:rega + regb])
    Cr = regs(args[rega + regb:])
    ar, ac = a_layout(m, rega, pa)
    br, bc = b_layout(regb, pb)
    cr, cc = c_layout(m)
    A_ = np.zeros((W, m, k), np.int64)
    A_[:, ar, ac] = elems(Ar, abits, a)
    B_ = np.zeros((W, k, n), np.int64)
    B_[:, br, bc] = elems(Br, bbits, b)
    C_ = np.zeros((W, m, n), np.int64)
    C_[:, cr, cc] = elems(Cr, cbits, c).reshape(W, 32, nc)
    acc = float_sort(c) if c in ("f16", "f32") else bits_sort(32)
    aux = mods_id(Mods(elems=(a, b, c), sat=".satfinite" in ins.modifiers))
    kids = np.concatenate([C_.reshape(W, m, n, 1),
                           np.broadcast_to(A_[:, :, None, :], (W, m, n, k)),
                           np.broadcast_to(B_.transpose(0, 2, 1)[:, None, :, :], (W, m, n, k))], axis=3)
    D = B.T.make(Op.MMA, acc, aux, kids.reshape(W * m * n, 1 + 2 * k)).reshape(W, m, n)
    Dl = D[:, cr, cc]  # (W, 32, nc)
    if pc == 2:
        Dl = Dl.reshape(W, 32, nc // 2, 2)
        packed = B.concat([Dl[..., 1].reshape(-1), Dl[..., 0].reshape(-1)]).reshape(W, 32, nc // 2)
    else:
        packed = Dl
    for r in range(nc // pc):
        o = outs[r].reshape(-1, 32)
        o[warps] = packed[:, :, r]
    return outs


#: Where a 4/6-bit element sits in its 8-bit container (mma.sync .kind::f8f6f4 / .kind::mxf8f6f4, 9.7.14.5.14:
#: ".e2m1 resides in central 4 bits", ".e3m2 or .e2m3 ... in the lower 6 bits"; semantics.mxformats
#: from_container8): (first bit, bits). Padding bits are not read (MODEL there).
_CONTAINER8 = {"e2m1": (2, 4), "e2m3": (0, 6), "e3m2": (0, 6)}


def _container_elems(B: Builder, R: np.ndarray, ty: str) -> np.ndarray:
    """(W, 32, nregs, 4) float terms of the four 8-bit containers of each register, low byte first."""
    lo, width = _CONTAINER8.get(ty, (0, 8))
    flat = R.reshape(-1)
    parts = [B.as_float(B.extract(flat, 8 * j + lo, width), ty) for j in range(4)]
    return np.stack(parts, axis=1).reshape(*R.shape, 4)


def _packed4_elems(B: Builder, R: np.ndarray, ty: str) -> np.ndarray:
    """(W, 32, nregs, 8) float terms of eight packed 4-bit elements per register, low bits first (m16n8k64)."""
    flat = R.reshape(-1)
    parts = [B.as_float(B.extract(flat, 4 * j, 4), ty) for j in range(8)]
    return np.stack(parts, axis=1).reshape(*R.shape, 8)


def _mma_block_scale(ins, args, B: Builder, ctx):
    """mma.sync ... .kind::{mxf8f6f4,mxf4,mxf4nvf4}.block_scale (9.7.14.5.14; block scaling 9.7.14.3):
    D = C + sum_k (A[i, k] * SF_A[i, k / chunk]) * (B[k, j] * SF_B[j, k / chunk]). Each scaled element is a
    SCALE node (x * 2^(s - 127), exact in f64) of the element's float term and the ue8m0 scale byte the
    handler reads (semantics/ptx/mma.py mma_block_scale: the same selectors, lanes `scale_lanes` and bytes),
    and each accumulator element one MMA node over them (f64 operands, f32 accumulator): the handler's
    float64 model, evaluated bit for bit by semantics.termeval. ue4m3 scale factors (.kind::mxf4nvf4
    .scale_vec::4X .ue4m3) are SCALE nodes x * ue4m3(s) alike.

    Operands in the handler's read order: byte-id-a, thread-id-a, byte-id-b, thread-id-b, scale-a-data,
    scale-b-data, then A, B and C's registers."""
    f = _parse_scaled(ins)
    m, n, k = f.shape
    p = 32 // f.elem_bits
    rega, regb = m * k // 32 // p, k * n // 32 // p
    _need(ins, args, 6 + rega + regb + 4)
    act = ctx.mask.reshape(-1, 32)
    warps = np.nonzero(act.all(axis=1))[0]
    anysym = np.zeros(act.shape[0], bool)
    for x in args:
        anysym |= (np.broadcast_to(np.asarray(x.ids), (B.n,)).reshape(-1, 32) != CONCRETE).any(axis=1)
    warps = warps[anysym[warps]]
    outs = [np.full(B.n, CONCRETE, np.int64) for _ in range(4)]
    if warps.size == 0:
        return outs
    W = warps.size

    def sel(a: Arg, what: str, valid: tuple[int, ...]) -> np.ndarray:  # (W,) one value per warp
        if (np.broadcast_to(np.asarray(a.ids), (B.n,)) != CONCRETE).any():
            raise Unsupported(f"{ins.name}: data-dependent {what}", ins)
        v = (np.broadcast_to(np.asarray(a.bits).astype(np.uint64), (B.n,)) & np.uint64(0xFFFF)).astype(np.int64)
        v = v.reshape(-1, 32)[warps]
        if (v != v[:, :1]).any() or not np.isin(v[:, 0], valid).all():
            raise Unsupported(f"{ins.name}: {what} differs between the lanes of a warp or is not valid "
                              "(9.7.14.3 Table 37)", ins)
        return v[:, 0]

    byte_a = sel(args[0], "byte-id-a", _BYTE_IDS[f.vec])
    tid_a = sel(args[1], "thread-id-a", _THREAD_IDS_A)
    byte_b = sel(args[2], "byte-id-b", _BYTE_IDS[f.vec])
    tid_b = sel(args[3], "thread-id-b", _THREAD_IDS_B)
    everyone = np.ones(B.n, bool)
    b32 = bits_sort(32)

    def regs(sub: list[Arg]) -> np.ndarray:  # (W, 32, nregs) term ids of 32-bit registers
        return np.stack([B.value(x, b32, everyone).reshape(-1, 32)[warps] for x in sub], axis=2)

    def scales(a: Arg, lanes: np.ndarray, byte_id: np.ndarray) -> np.ndarray:
        """(W, L, vec) scale bytes: bytes byte_id .. byte_id + vec - 1 of lanes `lanes` (W, L)."""
        R = B.value(a, b32, everyone).reshape(-1, 32)[warps]
        picked = R[np.arange(W)[:, None], lanes]  # (W, L)
        out = np.zeros((*picked.shape, f.vec), np.int64)
        for v in range(f.vec):
            byte = byte_id + v
            for bv in np.unique(byte).tolist():
                w = byte == bv
                out[w, :, v] = B.extract(picked[w].reshape(-1), 8 * bv, 8).reshape(-1, picked.shape[1])
        return out

    la, lb = scale_lanes(tid_a, tid_b)  # (W, 16), (W, 8)
    SA = scales(args[4], la, byte_a)  # (W, m, vec)
    SB = scales(args[5], lb, byte_b)  # (W, n, vec)
    Ar = regs(args[6:6 + rega])
    Br = regs(args[6 + rega:6 + rega + regb])
    Cr = regs(args[6 + rega + regb:])
    unpack = _container_elems if f.elem_bits == 8 else _packed4_elems
    ar, ac = a_layout(m, rega, p)
    br, bc = b_layout(regb, p)
    cr, cc = c_layout(m)
    A_ = np.zeros((W, m, k), np.int64)
    A_[:, ar, ac] = unpack(B, Ar, f.atype)
    B_ = np.zeros((W, k, n), np.int64)
    B_[:, br, bc] = unpack(B, Br, f.btype)
    C_ = np.zeros((W, m, n), np.int64)
    C_[:, cr, cc] = B.as_float(Cr.reshape(-1), "f32").reshape(W, 32, 4)
    f64 = float_sort("f64")
    SAk = np.repeat(SA, f.chunk, axis=2)  # (W, m, k): the scale of A[i, k] is SF_A[i, k / chunk]
    SBk = np.repeat(SB, f.chunk, axis=2).transpose(0, 2, 1)  # (W, k, n)
    As = B.T.make(Op.SCALE, f64, mods_id(Mods(elems=(f.atype, f.stype.value))),
                  [A_.reshape(-1), SAk.reshape(-1)]).reshape(W, m, k)
    Bs = B.T.make(Op.SCALE, f64, mods_id(Mods(elems=(f.btype, f.stype.value))),
                  [B_.reshape(-1), SBk.reshape(-1)]).reshape(W, k, n)
    aux = mods_id(Mods(elems=("f64", "f64", "f32")))
    kids = np.concatenate([C_.reshape(W, m, n, 1),
                           np.broadcast_to(As[:, :, None, :], (W, m, n, k)),
                           np.broadcast_to(Bs.transpose(0, 2, 1)[:, None, :, :], (W, m, n, k))], axis=3)
    D = B.T.make(Op.MMA, float_sort("f32"), aux, kids.reshape(W * m * n, 1 + 2 * k)).reshape(W, m, n)
    Dl = D[:, cr, cc]  # (W, 32, 4)
    for r in range(4):
        outs[r].reshape(-1, 32)[warps] = Dl[:, :, r]
    return outs


def ldmatrix_sources(ins: A.Instruction) -> tuple[int, np.ndarray]:
    """ldmatrix.m8n8.{x1,x2,x4}{.trans}.b16 (9.7.14.5.15): (count, src) where src[l, q, j] is the
    byte offset, in the 16-byte rows loaded by the warp's address lanes 0..8*count-1 laid end to end,
    of element j (2 bytes) of destination register q of lane l."""
    count = next(v for m, v in ((".x1", 1), (".x2", 2), (".x4", 4)) if m in ins.modifiers)
    r, c = _fragment_index(".trans" in ins.modifiers)  # (32, 2): row, col of lane l's element j
    q = np.arange(count)[None, :, None]
    src = ((8 * q + r[:, None, :]) * 16 + 2 * c[:, None, :])  # row 8q + r of the address lanes
    return count, src


