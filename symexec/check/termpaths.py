"""Both paths of a data-dependent branch with memory effects, merged into if-then-else terms.

Check mode explores a data-dependent forward branch whose paths store (or load, or fence) both ways,
with every lane, one path after the other (symexec.check.policy, `BranchDecision.BOTH_PATHS`): the
race and bounds checks see every access of both paths. For the equivalence shadow (termshadow.py)
each path must also compute what a thread taking it computes, from the state at the branch, and the
state after the join must be what the input's choice leaves. `Exploration` does that around the
machine's two runs:

- at the branch it keeps the registers (bits and terms) and, per lane, the condition under which the
  lane takes the branch: the predicate's term, or a constant where it does not depend on data;
- the fall-through path runs first (`first_group`); each byte a path writes keeps its contents at the
  branch (bits, term, store counts) and its writer's condition. When the taken path starts, the
  fall-through path's results are put aside and memory and registers are set back to the branch;
- at the join (the machine's `Reconverged`), every chunk of memory written on either path (a global
  buffer's element, else an aligned word) becomes if-then-else(condition, taken path's value,
  fall-through path's value), a chunk written on one path only keeping its contents at the branch on
  the other (a store under a condition: ite(c, v, previous contents)); every register either path
  wrote becomes if-then-else per lane. The bits are those of the path the launch's input takes, so
  that the concrete run goes on as that input's.

A byte's value after the join is one if-then-else of one condition only when every lane that writes it
on either path takes its branch under that same condition (the same term: all threads of a CTA
testing its row's label); a byte written by lanes with different conditions, or read on a path after
a lane with another condition wrote it there, depends on several choices at once and is not merged:
the exploration stops with a fatal gap naming the branch (the verdict is `unsupported`). So does
anything else the two sequential runs do not model: another group running between or inside the
paths (a barrier on a path, a divergent warp parked elsewhere), a nested exploration, an
asynchronous unit writing on a path, a lane dropped on a path by an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ptx_parser import ast as A
from semantics.symbolic import Arg, Builder
from semantics.terms import CONCRETE, NO_MODS, PRED, Op, bits_sort

from ..events import Buffer, MemoryAccess

_UNWRITTEN = -1  # a byte no path of the exploration wrote (its code)
FALL, TAKEN = 0, 1


@dataclass
class _Before:
    """Contents at the branch of the bytes the paths wrote (first write of each), and their writers."""

    flats: list[np.ndarray] = field(default_factory=list)
    bits: list[np.ndarray] = field(default_factory=list)
    term: list[np.ndarray] = field(default_factory=list)
    pos: list[np.ndarray] = field(default_factory=list)
    stores: list[np.ndarray] = field(default_factory=list)
    atomics: list[np.ndarray] = field(default_factory=list)
    writer: list[np.ndarray] = field(default_factory=list)
    written: list[list[np.ndarray]] = field(default_factory=lambda: [[], []])  # per side: bytes written
    code: dict[int, int] = field(default_factory=dict)  # byte -> cond << 2 | input's choice << 1 | side


@dataclass
class _Side:
    """One path's final contents of the bytes it wrote (sorted) and its registers."""

    flats: dict[Buffer, np.ndarray] = field(default_factory=dict)
    values: dict[Buffer, tuple] = field(default_factory=dict)  # bits, term, pos, stores, atomics, writer
    regs: dict[str, np.ndarray] | None = None  # machine bits
    terms: dict[str, np.ndarray] | None = None
    exact: dict[str, np.ndarray] | None = None


class Exploration:
    """One data-dependent branch explored both ways, seen by the term shadow (module docstring)."""

    def __init__(self, sh, b, g, ins: A.Instruction, lanes: np.ndarray, cond: np.ndarray, taken: np.ndarray) -> None:
        self.sh = sh
        self.b = b
        self.ins = ins
        self.pc = g.pc
        self.lanes = lanes  # the group's lanes at the branch
        self.cond = cond  # per lane: term of "this lane takes the branch" (CONCRETE off `lanes`)
        self.taken = taken  # per lane: whether the launch's input takes it
        self.path = g.path
        self.join = None  # the machine's Join (set when the paths are made)
        self.side = FALL
        self.before = {}  # Buffer -> _Before
        self.fall = _Side()
        self.regs = dict(b.regs)
        self.terms = dict(sh.regs)
        self.exact = dict(sh.exact)
        self.merges = {pc: list(v) for pc, v in sh.merges.items()}

    # ------------------------------------------------------------------ groups
    def side_of(self, g) -> int | None:
        """FALL / TAKEN for a group on one of the paths, None for any other group."""
        d = len(self.path)
        if len(g.path) <= d or g.path[:d] != self.path or g.explore <= 0:
            return None
        return g.path[d] & 1

    def stopped(self, why: str) -> None:
        """Something the sequential paths do not model: a fatal gap naming the branch."""
        self.sh.gap(f"data-dependent branch {self.ins.name}: its paths could not be merged ({why})", self.ins,
                    fatal=True)
        self.sh.exploring = None

    def running(self, g) -> None:
        """The machine runs group `g` now (before its first instruction)."""
        if self.join is None:
            return
        side = self.side_of(g)
        if side is None or side == self.side:  # other lanes: their accesses are checked as they come
            return
        if side == FALL:
            self.stopped("the fall-through path runs again after the taken path began")
            return
        for o in self.b.groups:
            if o.status != "done" and self.side_of(o) == FALL and not (o.status == "parked" and o.joins
                                                                       and o.joins[-1] is self.join):
                self.stopped("the fall-through path waits (a barrier or a divergent warp) while the taken path runs")
                return
        self._switch()

    # ------------------------------------------------------------------ memory
    def on_write(self, ev: MemoryAccess, mem) -> bool:
        """A store of one path: keep the bytes' contents at the branch. False: stopped."""
        if ev.op is not None:
            self.stopped(f"an asynchronous unit writes on a path ({ev.op.ins.name})")
            return False
        sh = self.sh
        flat = ev.flat
        k, nb = flat.shape
        rows = np.repeat(ev.lanes, nb)
        bytes_ = flat.reshape(-1)
        cond = self.cond[rows]
        if (cond == CONCRETE).any():
            self.stopped("a lane outside the branching group writes on a path")
            return False
        code = (cond << 2) | (self.taken[rows].astype(np.int64) << 1) | self.side
        bf = self.before.get(ev.buffer)
        if bf is None:
            bf = self.before[ev.buffer] = _Before()
        prev = np.fromiter((bf.code.get(x, _UNWRITTEN) for x in bytes_.tolist()), np.int64, bytes_.size)
        clash = (prev != _UNWRITTEN) & ((prev >> 2) != cond)
        uniq, first = np.unique(bytes_, return_index=True)
        if clash.any() or _clash_within(bytes_, cond):
            self.stopped("lanes that branch under different conditions write the same bytes")
            return False
        new = prev[first] == _UNWRITTEN
        if new.any():
            keep = uniq[new]
            bf.flats.append(keep)
            bf.bits.append(sh._concrete_bytes(ev.buffer, keep))
            term, pos = sh._read_bytes(ev.buffer, mem, keep)
            bf.term.append(term.copy())
            bf.pos.append(pos.copy())
            if mem.stores is not None:
                bf.stores.append(mem.stores[keep].copy())
                bf.atomics.append(mem.atomics[keep].copy())
                bf.writer.append(mem.writer[keep].copy())
        bf.code.update(zip(bytes_.tolist(), code.tolist()))
        bf.written[self.side].append(uniq)
        return True

    def on_read(self, ev: MemoryAccess) -> None:
        """A load on a path of bytes this path wrote: only by lanes of the writer's condition."""
        bf = self.before.get(ev.buffer)
        if bf is None or not bf.code:
            return
        flat = ev.flat
        nb = flat.shape[1]
        bytes_ = flat.reshape(-1).tolist()
        code = np.fromiter((bf.code.get(x, _UNWRITTEN) for x in bytes_), np.int64, len(bytes_))
        mine = (code != _UNWRITTEN) & ((code & 1) == self.side)
        if mine.any() and ((code[mine] >> 2) != self.cond[np.repeat(ev.lanes, nb)][mine]).any():
            self.stopped("a lane reads bytes that a lane branching under another condition wrote on the path")

    def _final(self, buf: Buffer, mem, flats: np.ndarray) -> tuple:
        sh = self.sh
        term, pos = sh._read_bytes(buf, mem, flats)
        st = mem.stores
        return (sh._concrete_bytes(buf, flats).copy(), term.copy(), pos.copy(),
                None if st is None else mem.stores[flats].copy(), None if st is None else mem.atomics[flats].copy(),
                None if st is None else mem.writer[flats].copy())

    def _restore(self, buf: Buffer, mem, flats: np.ndarray) -> None:
        """Put bytes `flats` back to their contents at the branch."""
        bf = self.before[buf]
        allf = np.concatenate(bf.flats)  # each byte once: saved at its first write
        order = np.argsort(allf, kind="stable")
        idx = order[np.searchsorted(allf, flats, sorter=order)]
        self.sh._set_concrete(buf, flats, np.concatenate(bf.bits)[idx])
        mem.term[flats] = np.concatenate(bf.term)[idx]
        mem.pos[flats] = np.concatenate(bf.pos)[idx]
        if mem.stores is not None:
            mem.stores[flats] = np.concatenate(bf.stores)[idx]
            mem.atomics[flats] = np.concatenate(bf.atomics)[idx]
            mem.writer[flats] = np.concatenate(bf.writer)[idx]

    def _put_aside(self, side: _Side, which: int) -> None:
        sh = self.sh
        for buf, bf in self.before.items():
            if not bf.written[which]:
                continue
            mem = sh.mem[buf]
            flats = np.unique(np.concatenate(bf.written[which]))
            side.flats[buf] = flats
            side.values[buf] = self._final(buf, mem, flats)
            self._restore(buf, mem, flats)
        side.regs, side.terms, side.exact = dict(self.b.regs), dict(sh.regs), dict(sh.exact)

    def _pending_merges_changed(self) -> bool:
        now = self.sh.merges
        return set(now) != set(self.merges) or any(len(now[p]) != len(self.merges[p]) for p in now)

    def _switch(self) -> None:
        """The fall-through path is done: put its results aside, set everything back to the branch."""
        if self._pending_merges_changed():
            self.stopped("a register-only region on the fall-through path did not reconverge on it")
            return
        self._put_aside(self.fall, FALL)
        b, sh = self.b, self.sh
        lanes = self.lanes  # other lanes may have run meanwhile: theirs stay
        for now, then in ((b.regs, self.regs), (sh.regs, self.terms), (sh.exact, self.exact)):
            for name in set(now) | set(then):
                new, old = now.get(name), then.get(name)
                if new is old:
                    continue
                if old is None:  # first written on the path: unset there again
                    old = np.zeros((), new.dtype) if now is b.regs else np.int64(CONCRETE)
                if new is None:
                    new = np.zeros((), old.dtype) if now is b.regs else np.int64(CONCRETE)
                now[name] = np.where(lanes, old, new)
        self.side = TAKEN

    # ------------------------------------------------------------------ the join
    def merge(self) -> None:
        """Both paths reached the join (Reconverged): memory and registers become if-then-else terms."""
        if self.side != TAKEN:
            self.stopped("the taken path never ran")
            return
        if self._pending_merges_changed():
            self.stopped("a register-only region on the taken path did not reconverge on it")
            return
        taken = _Side()
        self._put_aside(taken, TAKEN)
        for buf in self.before:
            if not self._merge_memory(buf, self.fall, taken):
                return
        self._merge_registers(self.fall, taken)

    def _merge_memory(self, buf: Buffer, fall: _Side, taken: _Side) -> bool:
        sh = self.sh
        mem = sh.mem[buf]
        bf = self.before[buf]
        parts = [s.flats[buf] for s in (fall, taken) if buf in s.flats]
        if not parts:
            return True
        written = np.unique(np.concatenate(parts))
        info = sh._global_info(buf)
        if info is not None:
            width, sort = info.elem_bytes, info.sort
        else:
            width = 4 if mem.term.size % 4 == 0 else 1
            sort = bits_sort(8 * width)
        chunks = np.unique(written // width)
        flat = chunks[:, None] * width + np.arange(width)  # (m, width)
        m = chunks.size
        code = np.fromiter((bf.code.get(x, _UNWRITTEN) for x in flat.reshape(-1).tolist()), np.int64,
                           flat.size).reshape(m, width)
        any_w = code != _UNWRITTEN
        row_code = np.where(any_w, code, np.iinfo(np.int64).min).max(axis=1)
        cond = row_code >> 2
        if (any_w & ((code >> 2) != cond[:, None])).any():
            self.stopped("lanes that branch under different conditions write one element")
            return False
        takes = ((row_code >> 1) & 1).astype(bool)  # the launch's input takes the branch
        # each side's bytes: its final contents where it wrote them, the contents at the branch elsewhere
        pre_term, pre_pos = sh._read_bytes(buf, mem, flat)
        pre_bits = sh._concrete_bytes(buf, flat)
        sides = []
        for s in (fall, taken):
            term, pos, bits = pre_term.copy(), pre_pos.copy(), pre_bits.copy()
            stores = mem.stores[flat].copy() if mem.stores is not None else None
            atomics = mem.atomics[flat].copy() if mem.stores is not None else None
            writer = mem.writer[flat].copy() if mem.stores is not None else None
            wf = s.flats.get(buf)
            if wf is not None:
                hit = np.isin(flat, wf)
                at = np.searchsorted(wf, flat[hit])
                v = s.values[buf]
                bits[hit], term[hit], pos[hit] = v[0][at], v[1][at], v[2][at]
                if stores is not None:
                    stores[hit], atomics[hit], writer[hit] = v[3][at], v[4][at], v[5][at]
            sides.append((sh._assemble(term, pos, bits, sort), term, pos, bits, stores, atomics, writer))
        (f_ids, f_term, f_pos, f_bits, f_st, f_at, f_wr), (t_ids, t_term, t_pos, t_bits, t_st, t_at, t_wr) = sides
        fixed = sh.T.op[cond] == Op.CONST
        sure = fixed & (sh.T.aux[cond] & 1).astype(bool)
        pick_t = np.where(fixed, sure, takes)
        # a lane whose choice does not depend on data, or both paths leaving the same value: that value
        out = np.where(fixed & sure, t_ids, np.where(fixed, f_ids, CONCRETE))
        same = ~fixed & (t_ids == f_ids) & ((t_ids != CONCRETE) | (t_bits == f_bits).all(axis=1))
        out[same] = t_ids[same]
        both = ~fixed & ~same
        if both.any():  # if-then-else of the sort of a value that is a term (bits where neither is)
            sym = np.where(t_ids[both] != CONCRETE, t_ids[both], f_ids[both])
            sorts = np.where(sym != CONCRETE, sh.T.sort[np.maximum(sym, 0)], sort)
            res = np.empty(sym.size, np.int64)
            for srt in np.unique(sorts).tolist():
                sel = sorts == srt
                ones = np.ones(int(sel.sum()), bool)
                B = Builder(sh.T, int(sel.sum()))
                tv = B.value(Arg(t_ids[both][sel], _word(t_bits[both][sel]), 8 * width), srt, ones)
                fv = B.value(Arg(f_ids[both][sel], _word(f_bits[both][sel]), 8 * width), srt, ones)
                res[sel] = sh.T.make(Op.ITE, srt, NO_MODS, [cond[both][sel], tv, fv])
            out[both] = res
        mem.term[flat] = out[:, None]
        mem.pos[flat] = np.where(out == CONCRETE, 0, 1)[:, None] * np.arange(width, dtype=np.uint8)[None, :]
        sh._set_concrete(buf, flat, np.where(pick_t[:, None], t_bits, f_bits))
        if mem.stores is not None:
            mem.stores[flat] = np.maximum(f_st, t_st)
            mem.atomics[flat] = np.maximum(f_at, t_at)
            mem.writer[flat] = np.where(pick_t[:, None], np.where(t_wr >= 0, t_wr, f_wr), np.where(f_wr >= 0, f_wr, t_wr))
        return True

    def _merge_registers(self, fall: _Side, taken: _Side) -> None:
        sh, b = self.sh, self.b
        n = b.n
        lanes = self.lanes
        regs, terms, exact = dict(taken.regs), dict(taken.terms), dict(taken.exact)
        names = {k for s in (fall, taken) for d in (s.regs, s.terms) for k in d
                 if d.get(k) is not (self.regs if d is s.regs else self.terms).get(k)}
        fixed = np.zeros(n, bool)
        fixed[lanes] = sh.T.op[self.cond[lanes]] == Op.CONST
        sure = np.zeros(n, bool)
        sure[fixed] = (sh.T.aux[self.cond[fixed]] & 1).astype(bool)
        for name in sorted(names):
            decl = b.prog.reg(name)
            width = decl.width if decl is not None else 32
            dt = bool if width == 1 else np.dtype(f"uint{max(8, width)}")
            fb = np.broadcast_to(fall.regs.get(name, np.zeros((), dt)), (n,))
            tb = np.broadcast_to(taken.regs.get(name, np.zeros((), dt)), (n,))
            ft = np.broadcast_to(fall.terms.get(name, np.int64(CONCRETE)), (n,))
            tt = np.broadcast_to(taken.terms.get(name, np.int64(CONCRETE)), (n,))
            pick = np.where(fixed, sure, self.taken)  # the path each lane's value comes from
            regs[name] = np.where(lanes & ~pick, fb, tb).astype(tb.dtype)
            differ = lanes & ~fixed & ((ft != tt) | ((ft == CONCRETE) & (tt == CONCRETE) & (fb != tb)))
            out = np.where(lanes & ~pick, ft, tt).copy()
            if differ.any():
                k = int(differ.sum())
                sym = np.where(tt[differ] != CONCRETE, tt[differ], ft[differ])
                sort = np.where(sym != CONCRETE, sh.T.sort[np.maximum(sym, 0)],
                                PRED if width == 1 else bits_sort(width))
                res = np.empty(k, np.int64)
                for s in np.unique(sort).tolist():
                    sel = sort == s
                    ones = np.ones(int(sel.sum()), bool)
                    Bs = Builder(sh.T, int(sel.sum()))
                    tv = Bs.value(Arg(tt[differ][sel], tb[differ][sel], width), s, ones)
                    fv = Bs.value(Arg(ft[differ][sel], fb[differ][sel], width), s, ones)
                    res[sel] = sh.T.make(Op.ITE, s, NO_MODS, [self.cond[differ][sel], tv, fv])
                out[differ] = res
            terms[name] = out
            e = exact.get(name)
            if e is not None or fall.exact.get(name) is not None:
                fe = np.broadcast_to(fall.exact.get(name, np.int64(CONCRETE)), (n,))
                te = np.broadcast_to(taken.exact.get(name, np.int64(CONCRETE)), (n,))
                keep = np.where(lanes & ~pick, fe, te)
                keep = np.where(differ | (lanes & (fe != te)), np.int64(CONCRETE), keep)
                if (keep == CONCRETE).all():
                    exact.pop(name, None)
                else:
                    exact[name] = keep
        b.regs.clear()
        b.regs.update(regs)
        sh.regs = terms
        sh.exact = exact


def _clash_within(bytes_: np.ndarray, cond: np.ndarray) -> bool:
    """Does one access write a byte from lanes of two conditions?"""
    order = np.lexsort((cond, bytes_))
    b, c = bytes_[order], cond[order]
    return bool(((b[1:] == b[:-1]) & (c[1:] != c[:-1])).any())


def _word(bits: np.ndarray) -> np.ndarray:
    """(m, w) little-endian bytes -> (m,) unsigned values."""
    w = bits.shape[1]
    out = np.zeros(bits.shape[0], np.uint64)
    for j in range(w):
        out |= bits[:, j].astype(np.uint64) << np.uint64(8 * j)
    return out


__all__ = ["Exploration", "FALL", "TAKEN"]
