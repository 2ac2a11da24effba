"""The race detector's window pass as it was on main 68842e4 (stop 46), before session 47's exact speed-ups
(bench/results/ovh47b-2026-12-07s47): `ordered`, `_BufferState.entries`, `RaceDetector._state`, `_step`,
`_merged_pairs`, `_test`, `_push_reads` verbatim (`_state` makes a `BufferBefore`, the buffer state with the old
`entries`), and `_ordered` calling the old `ordered`, as subclasses of today's classes; every other part is shared.
The test oracle of tests/check/test_overhead_s47.py: findings, counts, witnesses and kept state must be equal."""

# flake8: noqa  (kept verbatim)
from __future__ import annotations

import numpy as np

from symexec.check import races
from symexec.check.races import (ATOMIC, CELL, GPAGE, GRANULE, READ, WRITE, RacePair, SAME_INSTRUCTION_REASONS,
                                 _BufferState, _CONTIGUOUS, _Found, _after, _cells, _contiguous, _fits,
                                 _row_granules, _row_max, _row_min, _starts, _table_at, _then, every, lexsort3,
                                 same_instruction_code, some, why)
from symexec.check.hb import Clocks
from symexec.check.races import Records
from symexec.events import MemSpace


def ordered(clocks: Clocks, R: Records, a: np.ndarray, b: np.ndarray, tensor_memory: bool) -> np.ndarray:
    """Is access a (record ids) ordered before the later access b? The clock of b that decides: the
    tcgen05 clock in tensor memory (9.7.16.6); across proxies the proxy-fenced clock (8.9.5: base
    causality with a proxy fence on the path; the tensormap proxy has its own); otherwise the base
    clock. A thread's own entries (its epoch, its streams' observed counts) complete its clock
    (hb.Clocks.ordered, evaluated here on the records)."""
    if a.size == 0:
        return np.zeros(0, bool)
    # (ndarray.take: the gather of fancy indexing by an integer array, the same values and errors, ~2x
    # faster on the detector's sorted record ids)
    col_a, epoch_a, slot_a = R["col"].take(a), R["epoch"].take(a), R["slot"].take(a)
    cross = None
    if tensor_memory:
        bases = R["tbase"].take(b)
    else:
        # an async-proxy read whose completion b is ordered after has been performed: no fence needed
        # (the implicit fence of completion, 9.7.9.25.2 and 9.7.15.4, taken for the reads of every
        # asynchronous operation); a generic access followed by an async one, or an async write
        # followed by a generic access, needs the proxy-fenced clock
        pa, pb = R["proxy"].take(a), R["proxy"].take(b)
        if (pa != pb).any():
            cross = (pa != pb) & ~((pa != 0) & (R["kind"].take(a) == READ))
            bases = np.where(cross, R["pbase"].take(b), R["base"].take(b))
        else:
            bases = R["base"].take(b)
    table = clocks.table
    ok = _table_at(table, bases, np.minimum(col_a, table.shape[1] - 1)) >= epoch_a
    # a's column is b's own when a is b's thread or one of its streams: b's own entry for it counts
    # (asked of the pairs the clocks do not order only: most pairs of a race-free kernel are ordered)
    i = np.zeros(0, np.int64) if tensor_memory else np.nonzero(~ok)[0]
    if i.size:
        i = i[(slot_a[i] >= 0) & (R["thread"][a[i]] == R["thread"][b[i]])]
        if i.size:
            bi, si = b[i], slot_a[i].astype(np.int64)
            own = R["cown"][bi, si]
            if cross is not None:
                own = np.where(cross[i], R["pown"][bi, si], own)
            ok[i] = own >= epoch_a[i]
    # one agent's accesses are in its operation's order (a reused column: the new operation's issuer
    # observed the old one complete)
    agent = slot_a < 0
    if agent.any():
        j = np.nonzero(agent & ~ok)[0]
        ok[j] = R["hbrow"][a[j]] == R["hbrow"][b[j]]
    return ok


class BufferBefore(_BufferState):
    def entries(self, flat: np.ndarray) -> tuple[np.ndarray, np.ndarray] | np.ndarray:
        """An access's bytes (k, nbytes, padded) as granule keys: (keys (m,), row of each key), or
        the rows' granules (k,) that would fit them when some row splits its pages' granules."""
        if self.cells:
            c = _cells(flat)
            if c is None:
                return _row_granules(flat, CELL)
            k, n = c.shape
            return (c * CELL).reshape(-1), np.repeat(np.arange(k), n)
        k, nb = flat.shape
        if every(_contiguous(flat)):  # rows of consecutive ascending bytes: the first is the least, the last the most
            lo, hi = flat[:, 0] // GPAGE, flat[:, -1] // GPAGE
        else:
            lo, hi = _row_min(flat) // GPAGE, _row_max(flat) // GPAGE
        g = self.gran[lo].astype(np.int64)
        if not every(g) or not every(self.gran[hi]) or self._middle_untouched(lo, hi):
            # pages touched the first time take the rows' granules
            self._first_touch(flat, lo, hi)
            g = self.gran[lo].astype(np.int64)
        if some(hi != lo):  # rows over several pages: those pages must have one granule
            mixed = False
            for i in np.nonzero(hi != lo)[0].tolist():
                pages = self.gran[np.arange(lo[i], hi[i] + 1)]
                if (pages != pages[0]).any():
                    g[i] = int(pages.min())
                    mixed = True
            if mixed:
                return g  # refine every page of such a row to its finest
        g0 = int(g[0])
        if every(g == g0):
            fits = _fits(flat, g0)
            if every(fits):
                first = flat[:, ::g0]
                return first.reshape(-1), np.repeat(np.arange(k), first.shape[1])
            return np.where(fits, g, _row_granules(flat, g0))
        keys, rows = [], []
        bad = np.zeros(k, bool)
        for gg in np.unique(g).tolist():
            sel = np.nonzero(g == gg)[0]
            f = flat[sel]
            ok = _fits(f, gg)
            bad[sel[~ok]] = True
            first = f[:, ::gg]
            keys.append(first.reshape(-1))
            rows.append(np.repeat(sel, first.shape[1]))
        if bad.any():
            return np.where(bad, _row_granules(flat, GRANULE), g)
        keys, rows = np.concatenate(keys), np.concatenate(rows)
        o = np.argsort(rows, kind="stable")
        return keys[o], rows[o]


class DetectorBefore(races.RaceDetector):
    def _state(self, e: Event) -> _BufferState:
        st = self._buffers.get(e.buffer)
        if st is None:
            cells = e.buffer.space is MemSpace.TMEM and _cells(e.flat) is not None
            stride = self.shared_bytes if e.buffer.space is MemSpace.SHARED else 0
            st = self._buffers[e.buffer] = BufferBefore(e.buffer, e.size, len(self._buffers),
                                                        CELL if cells else GRANULE, cells, stride)
        return st

    def _step(self, buf, events: list[Event], ids: list[np.ndarray]) -> None:
        st = self._state(events[0])
        if st.small:
            st.dense()
        while True:
            byte_l, rec_l = [], []
            refined = False
            for e, r in zip(events, ids):
                flat, consecutive = st.padded(e.flat, e.consecutive)
                if consecutive:  # known: entries and _fits need not compare its bytes
                    _CONTIGUOUS[0], _CONTIGUOUS[1] = flat, np.ones(flat.shape[0], bool)
                got = st.entries(flat)
                while not isinstance(got, tuple):  # the access splits its pages' granules: finer ones from now on
                    self._refine(st, flat, got)
                    refined = True
                    got = st.entries(flat)
                if refined:  # the keys of the accesses before it may be stale: the pass only refines
                    continue
                keys, rows = got
                byte_l.append(keys)
                rec_l.append(r[rows])
            if not refined:
                break
            # another pass: its keys are those of the granules now kept (refining only ever splits granules,
            # each new one starting with the state of the one it lies in, so splitting the pages of all the
            # window's accesses in one pass ends in the granules and state that one access at a time gave)
        if any(e.kind != READ for e in events):
            st.written = True
        byte = np.concatenate(byte_l) if len(byte_l) > 1 else byte_l[0]
        rec = np.concatenate(rec_l) if len(rec_l) > 1 else rec_l[0]
        R = self.R
        order = lexsort3(R["lane"].take(rec), R["time"].take(rec), byte)  # stable: ties in event order
        byte, rec = byte.take(order), rec.take(order)
        kind = R["kind"].take(rec)
        ev = R["ev"].take(rec)
        w = kind != READ
        # lanes of one instruction writing one byte
        same = (byte[1:] == byte[:-1]) & (ev[1:] == ev[:-1]) & w[1:] & w[:-1]
        if same.any():
            self._same_instruction(st, byte, rec, np.nonzero(same)[0])
            # one event's writes of one byte are one access (its first lane's); atomics stay
            dup = np.zeros(byte.size, bool)
            ww = kind == WRITE
            dup[1:] = same & ww[1:] & ww[:-1]
            keep = np.flatnonzero(~dup)
            byte, rec, kind = byte.take(keep), rec.take(keep), kind.take(keep)
        if (kind == ATOMIC).any() or st.atomic:
            self._atomics(st, byte, rec, kind)  # first: a byte's first atomic takes the plain accesses kept so far
        self._pairs(st, byte, rec, kind)

    def _merged_pairs(self, st: _BufferState, byte: np.ndarray, rec: np.ndarray, kind: np.ndarray) -> None:
        """_pairs of any window: the accesses the bytes keep merged with the window's, one sequence per byte."""
        ub = byte.take(np.flatnonzero(_starts(byte)))  # `byte` is sorted
        W = st.lastw[ub]
        # the bytes' kept accesses, oldest first: the latest write, then (for bytes written now) the reads since
        wi = np.flatnonzero(W >= 0)
        pb, pr, pm = [ub.take(wi)], [W.take(wi)], [np.ones(wi.size, np.int64)]
        wb = byte.take(np.flatnonzero(kind != READ))
        wb = wb[_starts(wb)] if wb.size else wb
        if wb.size:
            heads = st.rhead[wb]
            if (heads >= 0).any():
                rb, rr, rm = self._reads(wb, heads)
                pb.append(rb)
                pr.append(rr)
                pm.append(rm)
        kb = np.concatenate(pb)
        nk = kb.size
        # one sequence per byte: kept accesses first (in their order), then the new ones
        allb = np.concatenate([kb, byte])
        allr = np.concatenate(pr + [rec])
        mult = np.concatenate(pm + [np.ones(byte.size, np.int64)])
        isnew = np.zeros(nk + byte.size, bool)
        isnew[nk:] = True
        o = np.argsort(allb, kind="stable")
        allb, allr, isnew, mult = allb.take(o), allr.take(o), isnew.take(o), mult.take(o)
        allk = self.R["kind"].take(allr)
        n = allb.size
        pos = np.arange(n)
        start = np.nonzero(_starts(allb))[0]
        ends = _then(start[1:], n)
        lens = ends - start
        group_start = np.repeat(start, lens)
        group_end = np.repeat(ends, lens)
        is_w = allk != READ
        lw = np.where(is_w, pos, -1)
        lw_incl = np.maximum.accumulate(lw)
        prev_w = _after(-1, lw_incl[:-1])
        prev_w = np.where(prev_w >= group_start, prev_w, -1)
        # (positions of a mask by flatnonzero, then take: pos[mask] is flatnonzero(mask), and a boolean
        # index of a few hundred thousand mixed entries costs several times nonzero + take)
        sel1 = np.flatnonzero((prev_w >= 0) & isnew)
        self._test(st, allb, allr, prev_w.take(sel1), sel1, 0, None)
        if wb.size:
            nw = np.where(is_w, pos, n)
            next_w = _then(np.minimum.accumulate(nw[::-1])[::-1][1:], n)
            a2 = np.flatnonzero((~is_w) & (next_w < group_end))
            b2 = next_w.take(a2)
            keep2 = np.flatnonzero(isnew.take(b2))  # (a kept read, a kept write) pairs were tested when they happened
            a2 = a2.take(keep2)
            self._test(st, allb, allr, a2, b2.take(keep2), 1, mult.take(a2))
        # the state: each byte's last write, and the reads after it (a kept write stays as it is)
        last = ends - 1
        lastw_pos = np.maximum.accumulate(np.where(is_w & isnew, pos, -1))[last]
        has_w = lastw_pos >= start
        gb = allb[start]
        if has_w.any():
            st.lastw[gb[has_w]] = allr[lastw_pos[has_w]]
            st.rhead[gb[has_w]] = -1
        newread = np.flatnonzero(isnew & ~is_w & (pos > np.repeat(np.where(has_w, lastw_pos, -1), lens)))
        if newread.size:
            self._push_reads(st, allb.take(newread), allr.take(newread))

    def _test(self, st: _BufferState, allb, allr, a_pos, b_pos, category: int, mult: np.ndarray | None) -> None:
        """Record the unordered ones of pairs (a earlier, b); `mult`: how many identical reads each
        kept read a stands for (counted as conflicting byte pairs)."""
        if a_pos.size == 0:
            return
        R = self.R
        a, b = allr.take(a_pos), allr.take(b_pos)
        # one event's bytes are one access (an atomic is logged once); accesses of two events made
        # in one step (asynchronous operations performed together) are compared like any others
        keep = R["ev"].take(a) != R["ev"].take(b)
        ka, kb = R["kind"].take(a), R["kind"].take(b)
        both_atomic = (ka == ATOMIC) & (kb == ATOMIC)
        same_cta = (R["row"].take(a) // self.threads) == (R["row"].take(b) // self.threads)
        sa, sb = R["strong"].take(a), R["strong"].take(b)
        # morally strong (PTX 8.7): both strong, scopes covering both threads, and the same bytes
        cand = keep & ~both_atomic
        strong = (sa > 0) & (sb > 0)
        j = np.nonzero(strong & cand)[0]  # (plain accesses are not strong: most pairs have none)
        if j.size:
            aj, bj = a[j], b[j]
            cand[j] = ~((same_cta[j] | ((sa[j] >= 3) & (sb[j] >= 3)))
                        & (R["start"][aj] == R["start"][bj]) & (R["size"][aj] == R["size"][bj]))
        if not cand.any():
            return
        if not every(cand):
            c = np.flatnonzero(cand)
            a_pos, b_pos, a, b, same_cta = a_pos.take(c), b_pos.take(c), a.take(c), b.take(c), same_cta.take(c)
            if mult is not None:
                mult = mult.take(c)
        ok = self._ordered(st, a, b, same_cta)
        bad = np.nonzero(~ok)[0]
        if bad.size == 0:
            return
        scale = st.scale(allb[a_pos])
        # the witness of each pair of instructions: the first bad pair in the order of the batch
        # formulation (prev-write pairs by the later access, then read/next-write pairs by the read)
        at = b if category == 0 else a
        for j in bad.tolist():
            ia, ib = int(a[j]), int(b[j])
            key = (int(R["pc"][ia]), int(R["pc"][ib]), bool(same_cta[j]))
            pos_rec = int(at[j])
            skey = (category, int(allb[a_pos[j]]), int(R["time"][pos_rec]), int(R["lane"][pos_rec]))
            m = int(scale[j]) * (1 if mult is None else int(mult[j]))
            x = int(allb[a_pos[j]])
            got = st.found.get(key)
            lo, hi = st.raw(x), st.top(x)
            if got is not None:
                got.pair.count += m
                lo, hi = min(lo, got.pair.byte), max(hi, got.pair.last)
                got.pair.byte, got.pair.last = lo, hi
                if skey >= st.found_key[key]:
                    continue
                count = got.pair.count
            else:
                count = m
            reason = why(self.clocks, R, ia, ib, st.buffer.space) if same_cta[j] else \
                "different CTAs, no inter-CTA synchronisation"
            pair = RacePair(st.buffer, lo, self._site(ia), self._site(ib), reason, count=count, last=hi)
            st.found[key] = _Found(key, pair)
            st.found_key[key] = skey

    def _push_reads(self, st: _BufferState, byte: np.ndarray, rec: np.ndarray) -> None:
        """Append reads (sorted by byte, in order within a byte) to their bytes' lists; a read identical
        to the one before it (a thread polling one byte with no synchronisation in between) only adds
        to that one's count."""
        R = self.R
        k = byte.size
        first = _starts(byte)
        heads = st.rhead[byte]
        prev_rec = _after(-1, rec[:-1])
        head_rec = self._node_rec[np.maximum(heads, 0)] if self._nodes else np.zeros(k, np.int64)
        prev_rec = np.where(first, np.where(heads >= 0, head_rec, -1), prev_rec)
        eq = prev_rec >= 0
        if eq.any():
            p = np.maximum(prev_rec, 0)
            for name in self._SAME_READ:
                col = R[name]
                eq &= col.take(rec) == col.take(p)
        fresh = ~eq
        nf = int(fresh.sum())
        need = self._nodes + nf
        self._node_room(need)
        fi = np.flatnonzero(fresh)
        ids = np.full(k, -1, np.int64)
        ids[fi] = np.arange(self._nodes, need, dtype=np.int64)
        # the node each read belongs to: its own, or the last fresh one before it in its byte, or the head
        pos = np.where(fresh, np.arange(k), -1)
        lastf = np.maximum.accumulate(pos)
        gstart = np.maximum.accumulate(np.where(first, np.arange(k), 0))
        owner = np.where(lastf >= gstart, ids.take(np.maximum(lastf, 0)), heads)
        # a fresh node's predecessor: the byte's previous node (fresh one before it, or the head)
        before = _after(-1, owner[:-1])
        prev = np.where(first, heads, before)
        self._node_rec[self._nodes:need] = rec.take(fi)
        self._node_prev[self._nodes:need] = prev.take(fi)
        self._node_mult[self._nodes:need] = 1
        self._nodes = need
        if nf < k:
            np.add.at(self._node_mult, owner[eq], 1)
        ends = np.flatnonzero(_then(first[1:], True))  # each byte's last read
        st.rhead[byte.take(ends)] = owner.take(ends)

    def _ordered(self, st, a: np.ndarray, b: np.ndarray, same_cta: np.ndarray) -> np.ndarray:
        """RaceDetector._ordered with the `ordered` above."""
        if every(same_cta):
            ok = ordered(self.clocks, self.R, a, b, st.buffer.space is MemSpace.TMEM)
        else:
            ok = np.zeros(a.size, bool)
            if same_cta.any():
                s = np.nonzero(same_cta)[0]
                ok[s] = ordered(self.clocks, self.R, a[s], b[s], st.buffer.space is MemSpace.TMEM)
        if self.edges:
            for j in np.nonzero(~ok & ~same_cta)[0]:
                ok[j] = races.cross_ordered(self.clocks, self.edges, self._where(int(a[j])), self._where(int(b[j])))
        return ok
