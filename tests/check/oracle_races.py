"""The batch race pass that symexec.check.races replaced, kept as the oracle of
tests/check/test_race_detector.py: every access is logged during the run, and one pass over the
whole log finds the races at the end.

It follows main's pass (issue 12: the same-value rule of same_value.py, one pair per dynamic
instruction and reason, regions' last bytes, read-modify-write chains in sync_edges). One deliberate
change from the original: the atomic-vs-plain pass tests a byte's atomics against the
plain accesses from the latest plain write before its first atomic on (that write and the reads
since, every plain access after it), without a cap: an earlier plain access is ordered before that
write or raced with it (a pair the nearest-write pass reports); the original took the first 64
plain accesses of the byte. Likewise an atomic is not tested against an earlier plain access ordered
before a later plain write that comes before the atomic (if that write happens before the atomic,
so does the access; if not, the byte's race is found through the write): the streaming detector
drops such accesses (RaceDetector._not_before), so the one pair a byte reports is chosen among the
same candidates.

Data races in a recorded execution (PTX 8.x memory model, data race = two conflicting accesses,
at least one a write, not ordered by happens-before and not morally strong).

Every byte's accesses are ordered by time. It is enough to test each access against the latest
earlier write of the byte, and each read against the next write: if every such pair is ordered,
so is every conflicting pair (happens-before is transitive); if one is not, that pair is a race.
Several lanes of one CTA writing the same byte in one instruction are a race unless the values
are provably equal (their term numbers agree, see shadow.py): Triton stores replicated values this
way, from every lane of a warp after a butterfly reduction and from every warp of a replicated
layout. Two CTAs writing the same bytes always race (nothing orders them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from symexec.events import MemSpace
from symexec.check.hb import SLOTS, Clocks
from symexec.check.same_value import equal_defined_values
from symexec.check.races import ACQUIRE, ATOMIC, READ, RELEASE, WRITE, Event


#: how a reason starts when the accesses are ordered and only a proxy fence is missing
ORDERED_BUT = "ordered (by synchronisation or program order),"


@dataclass
class RacePair:
    buffer: object
    byte: int
    a_event: int
    a_lane: int
    b_event: int
    b_lane: int
    reason: str
    benign: bool = False  # equal up to floating-point rounding: a note, not a race
    count: int = 1  # conflicting byte pairs between the same two instructions
    last: int = -1  # the highest conflicting byte between them (-1: `byte` only)

    @property
    def proxy_only(self) -> bool:
        """Ordered by synchronisation; only a proxy fence is missing."""
        return self.reason.startswith(ORDERED_BUT)


def _ordered(clocks: Clocks, c, a: np.ndarray, b: np.ndarray, tensor_memory: bool) -> np.ndarray:
    """Is access a ordered before the later access b? The clock of b that decides: the tcgen05
    clock in tensor memory (9.7.16.6); across proxies the proxy-fenced clock (8.9.5: base causality
    with a proxy fence on the path; the tensormap proxy has its own); otherwise the base clock."""
    if "proxy" not in c:  # only plain accesses of threads
        return clocks.ordered(c["row"][a], c["epoch"][a], c["row"][b], c["base"][b], None)
    if tensor_memory:
        bases, owns = c["tbase"][b], np.full((SLOTS, b.size), -1, np.int32)
    else:
        # an async-proxy read whose completion b is ordered after has been performed: no fence needed
        # (the implicit fence of completion, 9.7.9.25.2 and 9.7.15.4, taken for the reads of every
        # asynchronous operation); a generic access followed by an async one, or an async write
        # followed by a generic access, needs the proxy-fenced clock
        cross = (c["proxy"][a] != c["proxy"][b]) & ~((c["proxy"][a] != 0) & (c["kind"][a] == READ))
        bases = np.where(cross, c["pbase"][b], c["base"][b]) if cross.any() else c["base"][b]
        owns = None
        if "cown" in c:
            owns = (np.where(cross[:, None], c["pown"][b], c["cown"][b]) if cross.any() else c["cown"][b]).T
    return clocks.ordered(c["hbrow"][a], c["epoch"][a], c["hbrow"][b], bases, owns,
                          (c["col"][a], c["thread"][a], c["slot"][a], c["thread"][b]))


def _why(clocks: Clocks, c, a: int, b: int, buf) -> str:
    """Why same-CTA accesses a (earlier) and b are not ordered, in words."""
    ai, bi = np.array([a]), np.array([b])
    if buf.space is MemSpace.TMEM:
        return ("tensor-memory accesses of tcgen05 operations not ordered by a completion the threads observe "
                "(tcgen05.commit -> mbarrier wait, tcgen05.wait::ld/st) or by tcgen05.fence::before/after_thread_sync "
                "around a thread synchronisation (PTX 9.7.16.6)")
    if "proxy" in c and c["proxy"][a] != c["proxy"][b] and not (c["proxy"][a] != 0 and c["kind"][a] == READ):
        base_ordered = clocks.ordered(c["hbrow"][ai], c["epoch"][ai], c["hbrow"][bi], c["base"][bi],
                                      c["cown"][bi].T if "cown" in c else None)[0]
        tmap = 2 in (int(c["proxy"][a]), int(c["proxy"][b]))
        other, fence = ("tensormap", "fence.proxy.tensormap::generic") if tmap else ("async", "fence.proxy.async")
        if base_ordered:
            return (f"{ORDERED_BUT} but the accesses use different proxies (generic "
                    f"and {other}) and no {fence} lies between them (PTX 8.6, 8.9.5 proxy-preserved causality)")
        return "not ordered by any barrier or synchronisation"
    return "not ordered by any barrier or synchronisation"


class Columns:
    """Per-byte columns of a buffer's accesses, reordered and filtered lazily (a column is gathered
    only when a test reads it). Every column but "byte" holds one value per lane of an access: it is
    kept once per lane (`per_lane`, a row per lane), and an entry's value is its lane's (`lane_of`:
    the entry's row there), not repeated for each of the lane's bytes."""

    def __init__(self, byte: np.ndarray, lane_of: np.ndarray, per_lane: dict[str, np.ndarray],
                 index: np.ndarray | None = None, granule: int = 1) -> None:
        self._byte = byte
        self._lane_of = lane_of
        self._per_lane = per_lane
        self._index = index
        self._rows: np.ndarray | None = None
        self._cache: dict[str, np.ndarray] = {}
        self.granule = granule  # bytes per "byte" entry (tensor-memory cells: 4)

    def __getitem__(self, key: str) -> np.ndarray:
        v = self._cache.get(key)
        if v is None:
            if key == "byte":
                v = self._byte if self._index is None else self._byte[self._index]
            else:
                if self._rows is None:
                    self._rows = self._lane_of if self._index is None else self._lane_of[self._index]
                v = self._per_lane[key][self._rows]
            self._cache[key] = v
        return v

    def __contains__(self, key: str) -> bool:
        return key == "byte" or key in self._per_lane

    def take(self, idx: np.ndarray) -> "Columns":
        idx = np.nonzero(idx)[0] if idx.dtype == bool else idx
        return Columns(self._byte, self._lane_of, self._per_lane, idx if self._index is None else self._index[idx],
                       self.granule)


_PLAIN_COLUMNS = ("time", "ev", "pc", "lane", "kind", "strong", "row", "base", "epoch", "hash", "real",
                  "start", "size", "undef")
_ASYNC_COLUMNS = ("hbrow", "pbase", "tbase", "proxy", "col", "thread", "slot")


CELL = 4  # tensor memory is accessed in 32-bit cells (9.7.16.2)


def _cells(events: list[Event], idx: list[int]) -> dict[int, np.ndarray] | None:
    """Tensor-memory accesses as cell indices (k, cells) per event, or None when some access is not
    whole cells or the low halves of cells (.pack::16b): then bytes are compared."""
    out = {}
    for i in idx:
        f = events[i].flat
        c = f // CELL
        nb = f.shape[1]
        if nb % CELL == 0 and all((c[:, ::CELL] == c[:, j::CELL]).all() for j in range(1, CELL)):
            out[i] = c[:, ::CELL]
        elif nb % 2 == 0 and (c[:, ::2] == c[:, 1::2]).all():
            out[i] = c[:, ::2]
        else:
            return None
    return out


def _entries(events: list[Event], idx: list[int], clocks: Clocks) -> Columns:
    extended = any(events[i].owns is not None or events[i].hbrows is not None or events[i].proxy for i in idx)
    cells = _cells(events, idx) if events[idx[0]].buffer.space is MemSpace.TMEM else None
    cols = {k: [] for k in _PLAIN_COLUMNS + (_ASYNC_COLUMNS if extended else ())}  # per lane
    byte: list[np.ndarray] = []  # per entry: (lane, byte) of every access
    owns_c: list[np.ndarray] = []
    owns_p: list[np.ndarray] = []
    with_owns = extended
    for e_i in idx:
        e = events[e_i]
        flat = e.flat if cells is None else cells[e_i]  # with cells, "byte" is a cell index
        k, nb = flat.shape
        byte.append(flat.reshape(-1))
        cols["time"].append(np.full(k, e.time, np.int64))
        cols["ev"].append(np.full(k, e_i, np.int64))
        cols["pc"].append(np.full(k, e.pc, np.int64))
        cols["start"].append(flat[:, 0])
        cols["size"].append(np.full(k, nb, np.int64))
        cols["lane"].append(e.lanes)
        cols["kind"].append(np.full(k, e.kind, np.int8))
        cols["strong"].append(np.full(k, e.strong, np.int8))
        cols["row"].append(e.rows)
        cols["base"].append(e.bases[0])
        if extended:
            cols["hbrow"].append(e.hb)
            _, col, thread, slot = clocks.decode(e.hb)
            cols["col"].append(col)
            cols["thread"].append(thread)
            cols["slot"].append(slot)
            cols["pbase"].append(e.bases[1])
            cols["tbase"].append(e.tbases if e.tbases is not None else np.zeros(k, np.int32))
            cols["proxy"].append(np.full(k, e.proxy, np.int8))
        if with_owns:
            ow = np.full((2, SLOTS, k), -1, np.int32)
            if e.owns is not None:
                ow[:, :e.owns.shape[1]] = e.owns
            elif e.hbrows is None:
                ow[0, 0] = e.epochs  # a thread's own entry is its epoch
            owns_c.append(ow[0])
            owns_p.append(ow[1])
        cols["epoch"].append(e.epochs)
        cols["hash"].append(e.hashes if e.hashes is not None else np.zeros(k, np.uint64))
        cols["real"].append(e.real if e.real is not None else np.zeros(k, np.uint64))
        cols["undef"].append(e.undef if e.undef is not None else np.zeros(k, bool))
    out = {k: np.concatenate(v) for k, v in cols.items()}
    if owns_c:  # own entries beyond the epoch (streams, agents)
        out["cown"] = np.concatenate(owns_c, axis=1).T  # (lanes, SLOTS)
        out["pown"] = np.concatenate(owns_p, axis=1).T
    else:
        out["hbrow"] = out["row"]
    # a lane's bytes are consecutive entries: entry -> its lane's row
    lane_of = np.repeat(np.arange(out["size"].size), out["size"])
    return Columns(np.concatenate(byte), lane_of, out, granule=CELL if cells is not None else 1)


@dataclass
class SyncEdge:
    """A release write W by one CTA read by an acquire R of another (PTX 8.9.4 synchronizes-with)."""

    w_row: int
    w_epoch: int
    w_base: int
    w_time: int
    r_row: int
    r_epoch: int
    r_base: int
    r_time: int


#: Longest chain of read-modify-writes followed back from an acquire read (a grid barrier's counter
#: is updated once per CTA).
MAX_RMW_CHAIN = 4096


def sync_edges(events: list[Event], threads: int) -> list[SyncEdge]:
    """Cross-CTA release -> acquire edges: an acquire read's value comes from the latest write of
    its bytes in this execution, and through it from every write before an unbroken chain of atomic
    read-modify-writes ending there (observation order, PTX 8.9.2); each release among them by
    another CTA synchronises with the read (8.9.4). A grid barrier is this pattern: every CTA's
    atom.add.release on one counter, then ld.acquire polls of it."""
    if not any(e.sem & RELEASE for e in events) or not any(e.sem & ACQUIRE for e in events):
        return []
    edges: list[SyncEdge] = []
    last: dict = {}  # (buffer, byte) -> the writes it was last observed through: [(event, lane), ...]
    for i, e in enumerate(events):
        if e.sem & ACQUIRE and e.kind in (READ, ATOMIC):
            for j in range(e.lanes.size):
                for wi, wj in last.get((e.buffer, int(e.flat[j][0])), ()):
                    W = events[wi]
                    if W.sem & RELEASE and W.rows[wj] // threads != e.rows[j] // threads:
                        edges.append(SyncEdge(int(W.hb[wj]), int(W.epochs[wj]), int(W.bases[0][wj]), W.time,
                                              int(e.hb[j]), int(e.epochs[j]), int(e.bases[0][j]), e.time))
        if e.kind != READ:
            for j in range(e.lanes.size):
                for byte in e.flat[j]:
                    key = (e.buffer, int(byte))
                    chain = last.get(key, ()) if e.kind == ATOMIC else ()
                    last[key] = (*chain[-MAX_RMW_CHAIN + 1:], (i, j))
    return edges


def _cross_ordered(clocks: Clocks, threads: int, edges: list[SyncEdge], x, y) -> bool:
    """Is access x (row, epoch, base, time) of one CTA ordered before y of another through an edge:
    x before the release in its CTA, the acquire before y in its CTA."""
    xr, xe, xb, xt = x
    yr, ye, yb, yt = y
    cta = lambda r: int(clocks.cta_of(np.array([r]))[0])  # noqa: E731
    for ed in edges:
        if cta(ed.w_row) != cta(xr) or cta(ed.r_row) != cta(yr):
            continue
        if not (xt <= ed.w_time < ed.r_time <= yt):
            continue
        none = np.full((SLOTS, 1), -1, np.int32)  # own entries unknown here: only the same row counts
        before_w = (xr == ed.w_row) or bool(clocks.ordered(np.array([xr]), np.array([xe]), np.array([ed.w_row]),
                                                            np.array([ed.w_base]), none)[0])
        after_r = (yr == ed.r_row) or bool(clocks.ordered(np.array([ed.r_row]), np.array([ed.r_epoch]),
                                                           np.array([yr]), np.array([yb]), none)[0])
        if before_w and after_r:
            return True
    return False


def find_races(events: list[Event], clocks: Clocks, threads: int, limit: int = 20,
               stats: dict | None = None) -> list[RacePair]:
    """stats (optional): counts what the verdict relies on ("same_value": byte pairs the same-value
    rule accepted)."""
    edges = sync_edges(events, threads)
    by_buffer: dict[object, list[int]] = {}
    for i, e in enumerate(events):
        by_buffer.setdefault(e.buffer, []).append(i)
    races: list[RacePair] = []
    for buf, idx in by_buffer.items():
        if not any(events[i].kind != READ for i in idx):
            continue
        c = _entries(events, idx, clocks)
        order = np.lexsort((c["lane"], c["time"], c["byte"]))
        c = c.take(order)
        races += _same_instruction_writes(buf, c, limit, threads, stats)
        c = _collapse_same_event_writes(c)
        races += _merge_by_instructions(events, _ordered_pairs(buf, c, clocks, threads, edges)
                                        + _atomic_vs_plain(buf, c, clocks, threads, edges))
        if len(races) >= limit:
            break
    return races[:limit]


def _merge_by_instructions(events: list[Event], pairs: list[RacePair]) -> list[RacePair]:
    """One finding per pair of instructions in one buffer: the pairs found per byte by the
    atomic-vs-plain pass (an mbarrier object's 8 bytes) join the ordered-pairs pass's pair of the same
    instructions. The reason kept is the most severe (not ordered at all before only a missing proxy
    fence); the counts add up."""
    out: dict[tuple[int, int], RacePair] = {}
    for p in pairs:
        key = (events[p.a_event].pc, events[p.b_event].pc)
        if key not in out:
            out[key] = p
            continue
        kept = out[key]
        if kept.proxy_only and not p.proxy_only:
            p.count += kept.count
            p.byte, p.last = min(p.byte, kept.byte), max(p.last, kept.last, p.byte, kept.byte)
            out[key] = p
        else:
            kept.count += p.count
            kept.byte, kept.last = min(p.byte, kept.byte), max(p.last, kept.last, p.byte, kept.byte)
    return list(out.values())


def _same_instruction_writes(buf, c, limit: int, threads: int, stats: dict | None = None) -> list[RacePair]:
    """Lanes of one instruction writing one byte: allowed only by the same-value rule (same_value.py).
    One pair per dynamic instruction and reason, counting its byte pairs and the bytes they span."""
    w = c["kind"] != READ
    same = (c["byte"][1:] == c["byte"][:-1]) & (c["ev"][1:] == c["ev"][:-1]) & w[1:] & w[:-1]
    js = np.nonzero(same)[0]
    both_atomic = (c["kind"][js] == ATOMIC) & (c["kind"][js + 1] == ATOMIC)
    js = js[~both_atomic]
    ok = equal_defined_values(c, js, js + 1)
    if stats is not None:
        stats["same_value"] = stats.get("same_value", 0) + int(ok.sum())
    a = js[~ok]
    if a.size == 0:
        return []
    b = a + 1
    same_warp = c["row"][a] // 32 == c["row"][b] // 32
    same_cta = c["row"][a] // threads == c["row"][b] // threads
    undefined = c["undef"][a] | c["undef"][b]
    equal = (c["hash"][a] == c["hash"][b]) & ~undefined
    benign = same_warp & (c["real"][a] == c["real"][b]) & ~undefined
    code = np.select([benign, undefined & same_warp, same_warp, same_cta & equal, same_cta], [0, 1, 2, 3, 4], 5)
    reasons = ["lanes write values that are equal in real arithmetic but may differ by rounding; which lane's value "
               "lands is unspecified",
               "lanes write values read from memory no thread wrote (not defined values)",
               "lanes of one warp write values that are not provably equal",
               "two warps write the same value to the same bytes in one instruction: nothing orders their stores (the "
               "same-value rule covers the lanes of one warp only)",
               "two warps write the same bytes in one instruction without synchronisation",
               "two CTAs write the same bytes without inter-CTA synchronisation"]
    keys = c["ev"][a] * 8 + code
    _, first, counts = np.unique(keys, return_index=True, return_counts=True)
    out = []
    for i, n in zip(first[:limit].tolist(), counts[:limit].tolist()):
        sel = keys == keys[i]
        ja, jb = int(a[i]), int(b[i])
        out.append(RacePair(buf, int(c["byte"][ja]) * c.granule, int(c["ev"][ja]), int(c["lane"][ja]),
                            int(c["ev"][jb]), int(c["lane"][jb]), reasons[int(code[i])], bool(benign[i]), int(n),
                            int(c["byte"][a[sel]].max()) * c.granule))
    return out


def _collapse_same_event_writes(c):
    w = c["kind"] == WRITE  # atomics stay: each lane's atomic is its own access
    dup = np.zeros(c["byte"].size, bool)
    dup[1:] = (c["byte"][1:] == c["byte"][:-1]) & (c["ev"][1:] == c["ev"][:-1]) & w[1:] & w[:-1]
    keep = ~dup
    return c.take(keep)


def _atomic_vs_plain(buf, c, clocks: Clocks, threads: int, edges: list[SyncEdge]) -> list[RacePair]:
    """Bytes touched by atomics and by plain accesses: atomic-atomic pairs are exempt, which breaks
    the nearest-write argument, so each plain access of such a byte is tested against the nearest
    atomic before and after it of every thread (an mbarrier's many polls and its inval)."""
    atomic = c["kind"] == ATOMIC
    if not atomic.any():
        return []
    out: list[RacePair] = []
    bytes_with_atomic = np.unique(c["byte"][atomic])
    plain_bytes = np.unique(c["byte"][~atomic])
    # every such byte, with no cap: the pairs found here are per byte and join one finding per pair of
    # instructions afterwards (_merge_by_instructions), whose count is the sum over all of them
    # c is sorted by byte (then time): a byte's entries are one run of it, found by bisection (the
    # indices np.nonzero(c["byte"] == byte) gives, without a pass over the whole buffer per byte)
    byte_col, kind, time, ev = c["byte"], c["kind"], c["time"], c["ev"]
    both = np.intersect1d(bytes_with_atomic, plain_bytes)
    runs = zip(both, np.searchsorted(byte_col, both, "left"), np.searchsorted(byte_col, both, "right"))
    for byte, lo, hi in runs:
        idx = np.arange(lo, hi)  # in time order
        at = idx[kind[idx] == ATOMIC]
        pl = idx[kind[idx] != ATOMIC]
        # (changed, see the module docstring) before the byte's first atomic, only its latest plain
        # write and the reads since count
        before = pl[pl < at[0]]
        w = before[kind[before] == WRITE]
        if w.size:
            pl = pl[pl >= w[-1]]
        # per plain access and per thread (or agent) issuing atomics, only its last atomic before and
        # its first after matter: its other atomics are ordered with those by program order
        aa_l, pp_l = [], []
        rows = c["hbrow"][at]
        for r in np.unique(rows):
            ar = at[rows == r]
            pos = np.searchsorted(time[ar], time[pl], side="left")
            for j, ps in ((pos - 1, pos - 1 >= 0), (pos, pos < ar.size)):
                aa_l.append(ar[np.clip(j, 0, ar.size - 1)][ps])
                pp_l.append(pl[ps])
        aa, pp = np.concatenate(aa_l), np.concatenate(pp_l)
        # (changed, see the module docstring) an atomic after a plain access that is ordered before a
        # later plain write of the byte (made before the atomic, in another event) is not tested against it
        writes = pl[kind[pl] == WRITE]
        if writes.size:
            ok = np.ones(aa.size, bool)
            for j in np.nonzero(time[aa] > time[pp])[0]:
                p_, q_ = pp[j], aa[j]
                ws = writes[(time[writes] > time[p_]) & (time[writes] < time[q_])
                            & (ev[writes] != ev[p_])]
                ok[j] = not any(_hb(clocks, c, threads, edges, buf, p_, w_) for w_ in ws)
            aa, pp = aa[ok], pp[ok]
        first = np.where(time[aa] <= time[pp], aa, pp)
        second = np.where(time[aa] <= time[pp], pp, aa)
        keep = (ev[first] != ev[second]) & (c["hbrow"][first] != c["hbrow"][second])
        strong = (c["strong"][first] > 0) & (c["strong"][second] > 0) & (c["start"][first] == c["start"][second]) \
            & (c["size"][first] == c["size"][second])
        first, second = first[keep & ~strong], second[keep & ~strong]
        if first.size == 0:
            continue
        same_cta = (c["row"][first] // threads) == (c["row"][second] // threads)
        ordered = np.zeros(first.size, bool)
        if same_cta.any():
            s_ = np.nonzero(same_cta)[0]
            ordered[s_] = _ordered(clocks, c, first[s_], second[s_], buf.space is MemSpace.TMEM)
        if edges:
            for j in np.nonzero(~ordered & ~same_cta)[0]:
                ordered[j] = _cross_ordered(clocks, threads, edges, _site(c, first[j]), _site(c, second[j]))
        for j in np.nonzero(~ordered)[0][:1]:
            ia, ib = first[j], second[j]
            reason = _why(clocks, c, ia, ib, buf) if same_cta[j] else "different CTAs, no inter-CTA synchronisation"
            out.append(RacePair(buf, int(byte) * c.granule, int(ev[ia]), int(c["lane"][ia]), int(ev[ib]),
                                int(c["lane"][ib]), reason))
    return out


def _hb(clocks: Clocks, c, threads: int, edges: list[SyncEdge], buf, a: int, b: int) -> bool:
    """Is entry a (earlier) ordered before entry b: in one CTA by the clocks, across CTAs through an edge."""
    if c["row"][a] // threads == c["row"][b] // threads:
        return bool(_ordered(clocks, c, np.array([a]), np.array([b]), buf.space is MemSpace.TMEM)[0])
    return bool(edges) and _cross_ordered(clocks, threads, edges, _site(c, a), _site(c, b))


def _site(c, i) -> tuple[int, int, int, int]:
    return int(c["hbrow"][i]), int(c["epoch"][i]), int(c["base"][i]), int(c["time"][i])


def _ordered_pairs(buf, c, clocks: Clocks, threads: int, edges: list[SyncEdge]) -> list[RacePair]:
    n = c["byte"].size
    if n < 2:
        return []
    pos = np.arange(n)
    start = np.r_[0, np.nonzero(c["byte"][1:] != c["byte"][:-1])[0] + 1]
    group_start = np.repeat(start, np.diff(np.r_[start, n]))
    is_w = c["kind"] != READ
    # latest write strictly before each entry (within its byte)
    lw = np.where(is_w, pos, -1)
    lw_incl = np.maximum.accumulate(lw)
    prev_w = np.r_[-1, lw_incl[:-1]]
    prev_w = np.where(prev_w >= group_start, prev_w, -1)
    # a read and a write of one event at one byte are one atomic access; skip same-time pairs
    a1 = prev_w[prev_w >= 0]
    b1 = pos[prev_w >= 0]
    # next write strictly after each read
    nw = np.where(is_w, pos, n)
    nw_incl = np.minimum.accumulate(nw[::-1])[::-1]
    next_w = np.r_[nw_incl[1:], n]
    group_end = np.repeat(np.r_[start[1:], n], np.diff(np.r_[start, n]))
    sel = (~is_w) & (next_w < group_end)
    a2 = pos[sel]
    b2 = next_w[sel]
    a = np.r_[a1, a2]
    b = np.r_[b1, b2]
    if a.size == 0:
        return []
    # one event's bytes are one access (an atomic is logged once); accesses of two events made in
    # one step (asynchronous operations performed together) are compared like any others
    keep = c["ev"][a] != c["ev"][b]
    a, b = a[keep], b[keep]
    both_atomic = (c["kind"][a] == ATOMIC) & (c["kind"][b] == ATOMIC)
    same_cta = (c["row"][a] // threads) == (c["row"][b] // threads)
    # morally strong (PTX 8.7): both strong, scopes covering both threads, and the same bytes
    strong_ok = ((c["strong"][a] > 0) & (c["strong"][b] > 0) & (same_cta | ((c["strong"][a] >= 3) & (c["strong"][b] >= 3)))
                 & (c["start"][a] == c["start"][b]) & (c["size"][a] == c["size"][b]))
    cand = ~both_atomic & ~strong_ok
    a, b = a[cand], b[cand]
    if a.size == 0:
        return []
    same_cta = (c["row"][a] // threads) == (c["row"][b] // threads)
    ordered = np.zeros(a.size, bool)
    if same_cta.any():
        s = np.nonzero(same_cta)[0]
        ordered[s] = _ordered(clocks, c, a[s], b[s], buf.space is MemSpace.TMEM)
    if edges:
        for j in np.nonzero(~ordered & ~same_cta)[0]:
            ordered[j] = _cross_ordered(clocks, threads, edges, _site(c, a[j]), _site(c, b[j]))
    bad = np.nonzero(~ordered)[0]
    out = []
    seen: dict = {}
    for j in bad:
        ia, ib = a[j], b[j]
        key = (int(c["pc"][ia]), int(c["pc"][ib]), bool(same_cta[j]))  # one finding per pair of instructions
        if key in seen:
            seen[key].count += 1
            x = int(c["byte"][ia]) * c.granule  # the span covers the first pair's byte too (its last is -1)
            seen[key].last = max(seen[key].last, seen[key].byte, x)
            seen[key].byte = min(seen[key].byte, x)
            continue
        reason = _why(clocks, c, ia, ib, buf) if same_cta[j] else "different CTAs, no inter-CTA synchronisation"
        pair = RacePair(buf, int(c["byte"][ia]) * c.granule, int(c["ev"][ia]), int(c["lane"][ia]),
                        int(c["ev"][ib]), int(c["lane"][ib]), reason)
        seen[key] = pair
        out.append(pair)
    return out
