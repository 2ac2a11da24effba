"""Data races, decided while the kernel runs (PTX 8.x memory model: a data race is two conflicting
accesses, at least one a write, not ordered by happens-before and not morally strong).

Every byte's accesses are ordered by time (ties: by lane). It is enough to test each access
against the latest earlier write of the byte, and each read against the next write: if every such
pair is ordered, so is every conflicting pair (happens-before is transitive); if one is not, that
pair is a race. So each byte keeps only its latest write and the reads since (`RaceDetector`,
per buffer): an access is tested when it happens, against what the byte keeps, and the record of
the run does not grow with the run (the vector-clock epochs of FastTrack, with whole reads kept
for the findings' witnesses). The accesses of one instruction (one `time`) are tested together,
in the order the batch formulation had: by byte, then lane.

Several lanes of one instruction writing the same byte are a race unless the same-value rule
allows it (same_value.py: lanes of one warp, equal defined values): Triton stores replicated values
this way, from every lane of a warp after a butterfly reduction. One finding per dynamic
instruction and reason, counting its byte pairs.
Atomic-atomic pairs are exempt, which breaks the nearest-write argument: bytes touched by atomics
test each plain access against every thread's nearest atomic before and after it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import chain

import numpy as np

from ..events import AsyncOp, Buffer, MemSpace
from ..opcodes import Order
from ..paged import PagedArray, constant
from .hb import SLOTS, Clocks
from .same_value import equal_defined_values
from .shadow import every, rows_all, some

#: how a reason starts when the accesses are ordered and only a proxy fence is missing
ORDERED_BUT = "ordered (by synchronisation or program order),"

CELL = 4  # tensor memory is accessed in 32-bit cells (9.7.16.2)
WINDOW = 1 << 16  # byte accesses tested together (at least; whole instructions)
GRANULE = 16  # the coarsest granule of bytes a buffer is kept in (see _BufferState)
GPAGE = 256  # bytes per page of granules
#: Longest chain of read-modify-writes followed back from an acquire read (a grid barrier's counter
#: is updated once per CTA).
MAX_RMW_CHAIN = 4096
GC_EVERY = 1 << 20  # records made between two collections of those no byte refers to
GC_ALWAYS = False  # collect even when most records are live (tests)
DEFER_MAX_EVENTS = 4096  # reads of a global buffer not written yet kept aside at most (RaceDetector.flush)
#: A buffer of at most this many bytes keeps its per-byte state in plain arrays (4 bytes per byte for
#: each of `lastw` and `rhead`), not paged ones: a page-table lookup per index array was a few percent
#: of check mode on shared-memory kernels
DENSE_MAX = 1 << 19


READ, WRITE, ATOMIC = 0, 1, 2
RELEASE, ACQUIRE = int(Order.RELEASE), int(Order.ACQUIRE)


@dataclass
class Event:
    time: int
    pc: int
    kind: int
    strong: int
    buffer: Buffer
    lanes: np.ndarray
    flat: np.ndarray  # (k, nbytes) byte offsets in the buffer
    rows: np.ndarray  # the threads' clock rows (issuing threads of an asynchronous operation)
    bases: np.ndarray  # (2, k) int32 clock base ids: C and the proxy-fenced clock of the buffer's space
    epochs: np.ndarray
    hashes: np.ndarray | None = None  # stored values' numbers (writes)
    real: np.ndarray | None = None  # stored values' real-arithmetic numbers (writes)
    sem: int = 0  # RELEASE / ACQUIRE bits
    hbrows: np.ndarray | None = None  # happens-before rows of an asynchronous operation (hb.Clocks)
    tbases: np.ndarray | None = None  # tensor-memory clock base ids of tcgen05 agents
    owns: np.ndarray | None = None  # (2, slots, k) own clock entries (C, P) of the accessing threads when
    # they have streams (None: just the epoch)
    proxy: int = 0  # PROXY_CODE of the access
    op: AsyncOp | None = None
    size: int = 0  # bytes in the buffer
    path: tuple[int, ...] = ()  # explored choices that led to the access (Group.path)
    undef: np.ndarray | None = None  # per lane of a write: the value is not defined (same_value.py)
    seq: int = -1  # its number in the order the detector was given the accesses (RaceDetector.add)
    consecutive: bool = False  # every row of `flat` is consecutive ascending bytes (MemoryAccess.consecutive)

    @property
    def hb(self) -> np.ndarray:
        return self.rows if self.hbrows is None else self.hbrows



@dataclass(frozen=True)
class Site:
    """One side of a race: the access of one lane of one instruction."""

    pc: int
    lane: int  # thread slot of the batch
    row: int  # clock row of the thread (CTA slot * threads + thread)
    kind: int  # READ / WRITE / ATOMIC
    op: tuple | None = None  # (instruction, Completion) of the asynchronous operation it belongs to
    path: tuple[int, ...] = ()  # explored choices that led to the access (state.Decision ids)
    time: int = 0  # when it happened (the check state's clock)
    hbrow: int = -1  # its happens-before row (an asynchronous operation's agent, not its issuing thread)


@dataclass
class RacePair:
    buffer: object
    byte: int
    a: Site
    b: Site
    reason: str
    benign: bool = False  # equal up to floating-point rounding: a note, not a race
    count: int = 1  # conflicting byte pairs between the same two instructions
    last: int = -1  # the highest conflicting byte between them (-1: `byte` only)

    @property
    def proxy_only(self) -> bool:
        """Ordered by synchronisation; only a proxy fence is missing."""
        return self.reason.startswith(ORDERED_BUT)


# ---------------------------------------------------------------------------------- records

# thread rows, clock columns and record/node ids fit 32 bits (a clock table of 2^31 rows would be
# terabytes); times, event numbers and byte offsets keep 64
_FIELDS = (("time", np.int64), ("ev", np.int64), ("pc", np.int32), ("lane", np.int32), ("kind", np.int8),
           ("strong", np.int8), ("row", np.int32), ("hbrow", np.int32), ("base", np.int32), ("pbase", np.int32),
           ("tbase", np.int32), ("epoch", np.int32), ("proxy", np.int8), ("col", np.int32), ("thread", np.int32),
           ("slot", np.int8), ("hash", np.uint64), ("real", np.uint64), ("start", np.int64), ("size", np.int32),
           ("op", np.int32), ("sem", np.int8), ("undef", np.bool_), ("path", np.int32))


class Records:
    """The accesses that bytes still refer to, one per (instruction, lane): columns of numpy arrays
    (clock stamp, kind, strength, values stored); `cown`/`pown` (n, SLOTS) are the own clock entries
    (C and the proxy-fenced clock) of the accessing thread, -1 where it has none."""

    def __init__(self) -> None:
        self.n = 0
        # whether any record so far is strong / of a non-generic proxy / an asynchronous agent's (slot < 0) /
        # atomic: never reset (records are only appended, or dropped by `keep`), so False proves that no
        # record has it and the ordering and strength tests can skip the columns (RaceDetector._test, ordered)
        self.any_strong = self.any_proxy = self.any_agent = self.any_atomic = False
        self._cols = {k: np.empty(0, dt) for k, dt in _FIELDS}
        self._cols["cown"] = np.empty((0, SLOTS), np.int32)
        self._cols["pown"] = np.empty((0, SLOTS), np.int32)

    def __getitem__(self, key: str) -> np.ndarray:
        return self._cols[key]

    def append(self, k: int, **cols) -> np.ndarray:
        """k records; each column a (k,) array or a scalar for all."""
        need = self.n + k
        cap = self._cols["pc"].shape[0]
        if need > cap:
            # fourfold: a growth copies every column (mamba2_chunk_scan grew 8 times to 327,680 records
            # a run, ~3% of check mode, doubling); pages past `need` stay untouched until used
            new = max(need, 4 * cap, 1024)
            for name, arr in self._cols.items():
                grown = np.empty((new,) + arr.shape[1:], arr.dtype)
                grown[:self.n] = arr[:self.n]
                self._cols[name] = grown
        for name, v in cols.items():
            self._cols[name][self.n:need] = v
        self._seen(self.n, need)
        ids = np.arange(self.n, need, dtype=np.int64)
        self.n = need
        return ids

    def _seen(self, lo: int, hi: int) -> None:
        """Update the `any_*` flags with records lo..hi-1."""
        c = self._cols
        self.any_strong = self.any_strong or bool((c["strong"][lo:hi] > 0).any())
        self.any_proxy = self.any_proxy or bool((c["proxy"][lo:hi] != 0).any())
        self.any_agent = self.any_agent or bool((c["slot"][lo:hi] < 0).any())
        self.any_atomic = self.any_atomic or bool((c["kind"][lo:hi] == ATOMIC).any())

    def keep(self, live: np.ndarray, unmoved: int = 0) -> None:
        """Keep only records `live` (sorted unique ids): record live[i] becomes record i. `unmoved`: the
        first records are all kept (live[i] == i below it): only those after them move."""
        rest = live[unmoved:]
        for arr in self._cols.values():
            arr[unmoved:live.size] = arr[rest]
        self.n = int(live.size)


# ---------------------------------------------------------------------------------- ordering

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
    col_a, epoch_a = R["col"].take(a), R["epoch"].take(a)
    cross = None
    if tensor_memory:
        bases = R["tbase"].take(b)
    elif not R.any_proxy:  # every record generic (pa == pb below)
        bases = R["base"].take(b)
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
        slot_i = R["slot"][a[i]]
        i = i[(slot_i >= 0) & (R["thread"][a[i]] == R["thread"][b[i]])]
        if i.size:
            bi, si = b[i], R["slot"][a[i]].astype(np.int64)
            own = R["cown"][bi, si]
            if cross is not None:
                own = np.where(cross[i], R["pown"][bi, si], own)
            ok[i] = own >= epoch_a[i]
    # one agent's accesses are in its operation's order (a reused column: the new operation's issuer
    # observed the old one complete); no record is an agent's: no slot below 0
    if R.any_agent:
        agent = R["slot"].take(a) < 0
        if agent.any():
            j = np.nonzero(agent & ~ok)[0]
            ok[j] = R["hbrow"][a[j]] == R["hbrow"][b[j]]
    return ok


def _table_at(table: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """table[rows, cols] for cols < table.shape[1], by one flat take (2-D fancy indexing costs ~1.5x as
    much). The same values and errors: a row past the end is a flat index past the end; negative
    indices (never made here) go the 2-D way, which wraps them per axis."""
    if not table.flags.c_contiguous or (rows.size and (rows.min() < 0 or cols.min() < 0)):
        return table[rows, cols]
    flat = rows.astype(np.intp)
    flat *= table.shape[1]
    flat += cols
    return table.reshape(-1).take(flat)


def why(clocks: Clocks, R: Records, a: int, b: int, space: MemSpace) -> str:
    """Why same-CTA accesses a (earlier) and b are not ordered, in words."""
    if space is MemSpace.TMEM:
        return ("tensor-memory accesses of tcgen05 operations not ordered by a completion the threads observe "
                "(tcgen05.commit -> mbarrier wait, tcgen05.wait::ld/st) or by tcgen05.fence::before/after_thread_sync "
                "around a thread synchronisation (PTX 9.7.16.6)")
    pa, pb = int(R["proxy"][a]), int(R["proxy"][b])
    if pa != pb and not (pa != 0 and R["kind"][a] == READ):
        ai, bi = np.array([a]), np.array([b])
        base_ordered = clocks.ordered(R["hbrow"][ai], R["epoch"][ai], R["hbrow"][bi], R["base"][bi],
                                      R["cown"][bi].T)[0]
        tmap = 2 in (pa, pb)
        other, fence = ("tensormap", "fence.proxy.tensormap::generic") if tmap else ("async", "fence.proxy.async")
        if base_ordered:
            return (f"{ORDERED_BUT} but the accesses use different proxies (generic "
                    f"and {other}) and no {fence} lies between them (PTX 8.6, 8.9.5 proxy-preserved causality)")
    return "not ordered by any barrier or synchronisation"


#: Why lanes of one instruction writing one byte race (RaceDetector._same_instruction), by code.
SAME_INSTRUCTION_REASONS = (
    "lanes write values that are equal in real arithmetic but may differ by rounding; which lane's value lands is "
    "unspecified",
    "lanes write values read from memory no thread wrote (not defined values)",
    "lanes of one warp write values that are not provably equal",
    "two warps write the same value to the same bytes in one instruction: nothing orders their stores (the "
    "same-value rule covers the lanes of one warp only)",
    "two warps write the same bytes in one instruction without synchronisation",
    "two CTAs write the same bytes without inter-CTA synchronisation")
#: The code of "two warps write the same value ... in one instruction".
REPLICATED_STORE = 3


def same_instruction_code(R: Records, a: np.ndarray, b: np.ndarray, threads: int) -> np.ndarray:
    """Per pair of lanes of one instruction writing one byte that the same-value rule does not allow:
    the index of its reason in SAME_INSTRUCTION_REASONS (0, equal in real arithmetic within a warp:
    benign, a note)."""
    same_warp = R["row"][a] // 32 == R["row"][b] // 32
    same_cta = R["row"][a] // threads == R["row"][b] // threads
    undefined = R["undef"][a] | R["undef"][b]
    equal = (R["hash"][a] == R["hash"][b]) & ~undefined
    benign = same_warp & (R["real"][a] == R["real"][b]) & ~undefined
    return np.select([benign, undefined & same_warp, same_warp, same_cta & equal, same_cta], [0, 1, 2, 3, 4], 5)


# ---------------------------------------------------------------------------------- cross-CTA edges

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


def cross_ordered(clocks: Clocks, edges: list[SyncEdge], x: tuple, y: tuple) -> bool:
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


# ---------------------------------------------------------------------------------- per-buffer state

@dataclass
class _Found:
    """The finding of one pair of instructions, with the witness the batch order would pick first."""

    key: tuple
    pair: RacePair


@dataclass
class _AtomicByte:
    plain: list = field(default_factory=list)  # record ids of its plain accesses, in time order
    last: dict = field(default_factory=dict)  # hb row -> (record id, time) of that thread's latest atomic
    best: tuple | None = None  # (order key, RacePair): its one finding, the first in the batch order


class _BufferState:
    """What one buffer's bytes keep: the latest write (record id, -1 none) and the newest read node of
    the reads since (a list through `RaceDetector._node_prev`).

    Bytes are kept in granules, per page of GPAGE bytes: while every access to a page starts and ends
    on a multiple of its granule, the bytes of one granule see the same accesses in the same order,
    so the granule's first byte stands for all of them (a pair found there counts a granule's bytes);
    an access that splits a granule refines its pages (each new granule starts with the state of the
    old one it lies in). Tensor memory is compared in 32-bit cells (`cells`: a 16-bit half counts as
    its cell; no byte counts), and byte-exactly once an access is neither."""

    def __init__(self, buffer, size: int, order: int, granule: int, cells: bool, stride: int = 0) -> None:
        self.buffer = buffer
        self.order = order
        # shared memory holds the CTAs' windows side by side, `stride` bytes apart: kept `pad` apart
        # (a multiple of the coarsest granule), so that a window's alignment is the CTA's own
        self.stride = stride
        self.pad = -(-stride // GRANULE) * GRANULE if stride % GRANULE else 0
        if self.pad:
            size = -(-size // stride) * self.pad
        self.nbytes = size
        self.cells = cells  # tensor-memory cells (not byte-exact)
        # per page; 0: not accessed yet (its first access sets it)
        self.gran = PagedArray(-(-size // GPAGE), np.int8, constant(0 if granule == GRANULE else granule, np.int8))
        self.fine = granule < GRANULE  # some page may be finer than GRANULE
        self.lastw = PagedArray(size, np.int32, constant(-1, np.int32))  # record ids (Records: 32 bits)
        self.rhead = PagedArray(size, np.int32, constant(-1, np.int32))  # read node ids
        # made dense at its first tested access (`dense`); not tensor memory, whose cells are kept without
        # `gran` (the touched pages of a dense buffer are those with a granule: `_touched`)
        self.small = size <= DENSE_MAX and buffer.space is not MemSpace.TMEM
        self._dense = False
        self.synclast = None  # record of the last writing lane per byte, from the first release on
        self.chains: dict[int, tuple[int, ...]] = {}  # byte -> records of its atomic chain (_sync_edges)
        self.atomic: dict[int, _AtomicByte] = {}
        self.same: dict[tuple, RacePair] = {}  # (event, reason code) -> same-instruction writes, the first ones
        self.found: dict[tuple, _Found] = {}  # (pc a, pc b, same CTA) -> finding
        self.found_key: dict[tuple, tuple] = {}  # its batch-order sort key
        self.written = False

    def dense(self) -> None:
        """A small buffer (shared memory, most suite tensors) keeps its state in plain arrays from its
        first tested access on: indexed without the page table, the same values (dense() fills every
        page as its first touch would). Not before: a buffer whose reads are only kept aside (an input
        never written) costs nothing."""
        self.small = False
        self._dense = True
        # whole pages: a refinement copies a granule's state to its bytes up to the granule's end, past the
        # buffer's last byte where its size is not a multiple of the granule
        self.gran.dense(whole_pages=True)
        self.lastw.dense(whole_pages=True)
        self.rhead.dense(whole_pages=True)

    def _touched(self) -> np.ndarray:
        """The indices of the pages of a dense buffer that some tested access touched (those with a
        granule; every write of `lastw` and `rhead` is at a key of such a page, or past the end of its
        granule on that page): the others hold -1 throughout."""
        pages = np.nonzero(self.gran.dense(whole_pages=True))[0]
        return (pages[:, None] * GPAGE + np.arange(GPAGE)).reshape(-1)

    def kept(self, arr: PagedArray) -> np.ndarray:
        """The values `lastw` or `rhead` hold where they may hold something (the garbage collector's
        roots): a paged array's made pages, a dense one's touched pages (not the whole buffer)."""
        return arr.dense(whole_pages=True)[self._touched()] if self._dense else arr.materialised()

    def transform(self, arr: PagedArray, fn: "_Renumber") -> None:
        """`lastw` or `rhead` renumbered by fn (which keeps -1), in place: the made pages of a paged
        array; a dense one whole (its untouched pages hold -1 throughout, which stays)."""
        fn.update(arr.materialised())

    def scale(self, key: np.ndarray) -> np.ndarray:
        """Byte pairs a pair found at granule `key` stands for."""
        if self.cells:
            return np.ones(np.shape(key), np.int64)
        return self.gran[np.asarray(key) // GPAGE].astype(np.int64)

    def top(self, key: int) -> int:
        """The buffer offset of the last byte kept byte `key` stands for (a cell: its first byte)."""
        return self.raw(key) if self.cells else self.raw(key) + int(self.scale(key)) - 1

    def padded(self, flat: np.ndarray, consecutive: bool = False) -> tuple[np.ndarray, bool]:
        """flat (k, nb) with each CTA's window `pad` bytes apart instead of `stride`, and whether its rows
        are still consecutive ascending bytes. `consecutive`: flat's rows are (Event.consecutive): a row
        whose first and last byte lie in one window lies in it whole and moves by one offset, so they
        stay consecutive (the same array, from (k,) divisions instead of (k, nb) ones)."""
        if not self.pad:
            return flat, consecutive
        if consecutive:
            cta = flat[:, 0] // self.stride
            if every(cta == flat[:, -1] // self.stride):
                return flat + (cta * (self.pad - self.stride))[:, None], True
        cta = flat // self.stride
        return flat + cta * (self.pad - self.stride), False

    def raw(self, byte: int) -> int:
        """The buffer offset of kept byte `byte`."""
        if not self.pad:
            return byte
        return byte // self.pad * self.stride + byte % self.pad

    def entries(self, flat: np.ndarray, touch: bool = True) -> tuple[np.ndarray, np.ndarray] | np.ndarray | None:
        """An access's bytes (k, nbytes, padded) as granule keys: (keys (m,), row of each key), or
        the rows' granules (k,) that would fit them when some row splits its pages' granules.
        `touch` False: None, with nothing changed, where a page is touched the first time."""
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
            if not touch:
                return None
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
        contiguous = every(_contiguous(flat))
        for gg in np.unique(g).tolist():
            sel = np.flatnonzero(g == gg)
            if contiguous and gg > 1:  # _fits of the rows sel, without taking them whole
                ok = flat[sel, 0] % gg == 0 if nb % gg == 0 else np.zeros(sel.size, bool)
            else:
                ok = _fits(flat[sel], gg)
            bad[sel[~ok]] = True
            first = flat[sel, ::gg]
            keys.append(first.reshape(-1))
            rows.append(np.repeat(sel, first.shape[1]))
        if bad.any():
            return np.where(bad, _row_granules(flat, GRANULE), g)
        keys, rows = np.concatenate(keys), np.concatenate(rows)
        o = np.argsort(rows, kind="stable")
        return keys[o], rows[o]


    def _middle_untouched(self, lo: np.ndarray, hi: np.ndarray) -> bool:
        """Some row spans three pages or more and a page between its first and last is untouched (a
        bulk copy over pages whose neighbours were touched before): granule 0 must not reach `entries`."""
        wide = np.nonzero(hi - lo > 1)[0]
        return any(not self.gran[np.arange(lo[i] + 1, hi[i])].all() for i in wide.tolist())

    def _first_touch(self, flat: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
        fit = _row_granules(flat, GRANULE)
        pages, fits = [lo, hi], [fit, fit]
        wide = np.nonzero(hi - lo > 1)[0]
        if wide.size:  # the pages between a row's first and last
            n = hi[wide] - lo[wide] - 1
            starts = np.cumsum(n) - n
            pages.append(np.repeat(lo[wide] + 1 - starts, n) + np.arange(int(n.sum())))
            fits.append(np.repeat(fit[wide], n))
        pages, fits = np.concatenate(pages), np.concatenate(fits)
        new = self.gran[pages] == 0
        pages, fits = pages[new], fits[new]
        if pages.size:
            o = np.lexsort((fits, pages))  # per page its smallest granule first
            pages, fits = pages[o], fits[o]
            first = np.r_[True, pages[1:] != pages[:-1]]
            self.gran[pages[first]] = fits[first]


def _runs(events: list[Event], ids: list[np.ndarray]) -> list[tuple[list[Event], list[np.ndarray]]]:
    """The window's accesses of one buffer in their order, in runs of consecutive ones with rows of one width
    (RaceDetector._step takes a run's keys in one `entries`)."""
    runs: list[tuple[list[Event], list[np.ndarray]]] = []
    width = -1
    for e, r in zip(events, ids):
        if e.flat.shape[1] != width:
            runs.append(([], []))
            width = e.flat.shape[1]
        runs[-1][0].append(e)
        runs[-1][1].append(r)
    return runs


def _fits(flat: np.ndarray, g: int) -> np.ndarray:
    """(k,) whether each row's bytes are whole granules of g bytes."""
    if g == 1:
        return np.ones(flat.shape[0], bool)
    k, nb = flat.shape
    if nb % g:
        return np.zeros(k, bool)
    if every(_contiguous(flat)):  # rows s, s+1, ..., s+nb-1 (nb a multiple of g): whole granules iff g divides s
        return flat[:, 0] % g == 0
    first = flat[:, ::g]
    return rows_all((first % g) == 0) & rows_all((flat.reshape(k, -1, g) == first[:, :, None] + _STEP[:g]).reshape(k, nb))


def _starts(a: np.ndarray) -> np.ndarray:
    """np.r_[True, a[1:] != a[:-1]] of a non-empty 1-D array: where each run of equal elements starts
    (np.r_'s Python-level concatenation costs ~5 us a call more; the same array)."""
    out = np.empty(a.size, bool)
    out[0] = True
    np.not_equal(a[1:], a[:-1], out=out[1:])
    return out


#: below one True in this many positions, _last_at_or_before / _next_at_or_after repeat the True positions
#: (np.repeat copies runs; a ufunc's accumulate steps ~3 ns an element); the same array either way
SPARSE = 8


def _last_at_or_before(mask: np.ndarray) -> np.ndarray:
    """np.maximum.accumulate(np.where(mask, arange(n), -1)): per position the last True one at or before it
    (-1: none)."""
    n = mask.size
    w = np.flatnonzero(mask)
    if w.size * SPARSE > n:
        return np.maximum.accumulate(np.where(mask, np.arange(n), -1))
    vals = _after(-1, w)  # -1 up to the first True one, then each True one up to the next
    counts = np.empty(w.size + 1, np.int64)
    if w.size:
        counts[0] = w[0]
        np.subtract(w[1:], w[:-1], out=counts[1:-1])
        counts[-1] = n - w[-1]
    else:
        counts[0] = n
    return np.repeat(vals, counts)


def _next_at_or_after(mask: np.ndarray) -> np.ndarray:
    """np.minimum.accumulate(np.where(mask, arange(n), n)[::-1])[::-1]: per position the first True one at or
    after it (n: none)."""
    n = mask.size
    w = np.flatnonzero(mask)
    if w.size * SPARSE > n:
        return np.minimum.accumulate(np.where(mask, np.arange(n), n)[::-1])[::-1]
    vals = _then(w, n)  # each True one from the position after the one before, then n
    counts = np.empty(w.size + 1, np.int64)
    if w.size:
        counts[0] = w[0] + 1
        np.subtract(w[1:], w[:-1], out=counts[1:-1])
        counts[-1] = n - 1 - w[-1]
    else:
        counts[0] = n
    return np.repeat(vals, counts)


def _after(x, a: np.ndarray) -> np.ndarray:
    """np.r_[x, a] for a 1-D array a (of a dtype that holds x): x, then a."""
    out = np.empty(a.size + 1, a.dtype)
    out[0] = x
    out[1:] = a
    return out


def _then(a: np.ndarray, x) -> np.ndarray:
    """np.r_[a, x] for a 1-D array a (of a dtype that holds x): a, then x."""
    out = np.empty(a.size + 1, a.dtype)
    out[:-1] = a
    out[-1] = x
    return out


_CONTIGUOUS: list = [None, None]  # (flat, its rows' contiguity) of the last array asked: entries asks per granule


def _contiguous(flat: np.ndarray) -> np.ndarray:
    """(k,) whether each row of flat (k, nb) is consecutive ascending bytes."""
    if _CONTIGUOUS[0] is flat:
        return _CONTIGUOUS[1]
    k, nb = flat.shape
    out = rows_all(flat == flat[:, :1] + np.arange(nb, dtype=flat.dtype)) if nb > 1 else np.ones(k, bool)
    _CONTIGUOUS[0], _CONTIGUOUS[1] = flat, out
    return out


def _row_reduce(flat: np.ndarray, ufunc: np.ufunc) -> np.ndarray:
    """ufunc.reduce(flat, axis=1) of a (k, nb) array (np.minimum / np.maximum): column by column when rows
    are short (numpy's reduction along a short last axis runs its inner loop once per row: 12 us on
    512 x 2 bytes, 1.6 us this way)."""
    nb = flat.shape[1]
    if nb > 8 or nb == 0:
        return ufunc.reduce(flat, axis=1)
    out = flat[:, 0].copy()
    for j in range(1, nb):
        ufunc(out, flat[:, j], out=out)
    return out


def _row_min(flat: np.ndarray) -> np.ndarray:
    return _row_reduce(flat, np.minimum)


def _row_max(flat: np.ndarray) -> np.ndarray:
    return _row_reduce(flat, np.maximum)


def _row_granules(flat: np.ndarray, most: int) -> np.ndarray:
    """(k,) the largest granule (a power of two, at most `most`) each row's bytes are whole granules of."""
    out = np.ones(flat.shape[0], np.int64)
    g = most
    todo = np.ones(flat.shape[0], bool)
    while g > 1 and todo.any():
        ok = todo & _fits(flat, g)
        out[ok] = g
        todo &= ~ok
        g //= 2
    return out


class RaceDetector:
    """Streams the run's accesses (`add`, one `Event` per instruction, buffer and access kind) and
    tests each against what its bytes keep; `races()` gives the findings."""

    def __init__(self, clocks: Clocks, threads: int, limit: int = 20) -> None:
        self.clocks = clocks
        self.threads = threads
        self.limit = limit
        self.R = Records()
        self._buffers: dict[object, _BufferState] = {}
        self._pending: list[Event] = []
        self._pending_entries = 0
        self._ev = 0
        # read nodes: record, previous node of its byte, identical reads it stands for (32 bits each)
        self._node_rec = np.empty(0, np.int32)
        self._node_prev = np.empty(0, np.int32)
        self._node_mult = np.empty(0, np.int32)
        self._nodes = 0
        self._ops: dict[tuple, int] = {}
        self._op_list: list[tuple] = []
        self.edges: list[SyncEdge] = []
        self.same_value = 0  # byte pairs the same-value rule accepted (the verdict relies on it)
        self.left_out: set[int] = set()  # reason codes of same-instruction findings past `limit`
        self._paths: dict[tuple, int] = {}  # explored paths of accesses, numbered
        self._path_list: list[tuple] = []
        self._release_seen = False
        # buffers whose reads are tested as they come: written (or updated atomically), or with
        # DEFER_MAX_EVENTS reads kept aside (flush)
        self._tested: set = set()
        self._unwritten: dict[object, list[Event]] = {}  # reads of global buffers not written yet (flush)
        self.accesses = 0
        self._since_gc = 0
        self._gc_floor = 0  # records to make before the next collection, beyond GC_EVERY: the live count
        self.shared_bytes = 0  # bytes of shared memory per CTA (set per batch by the check state)

    # ------------------------------------------------------------------ input
    def add(self, e: Event) -> None:
        """An access; accesses are tested in windows of whole instructions (numpy's cost per call is
        paid once per window, not once per instruction)."""
        if self._pending_entries >= WINDOW and e.time != self._pending[-1].time:
            self.flush()
        e.seq = self._ev
        self._ev += 1
        self._pending.append(e)
        self._pending_entries += e.flat.size
        self.accesses += 1

    def _deferrable(self, e: Event) -> bool:
        """A thread's plain read of a global buffer that nothing has written yet (see flush)."""
        return e.kind == READ and e.sem == 0 and e.op is None and e.hbrows is None \
            and e.buffer.space is MemSpace.GLOBAL and e.buffer not in self._tested

    def flush(self) -> None:
        """Test the pending accesses against the bytes' state.

        A race needs a write: the plain reads of a global buffer that no access has written yet
        (a kernel's inputs) are kept aside (`_unwritten`) instead of tested, and are tested, in
        their order and before anything later, when a window has an access of the buffer that is
        not such a read (its first write or atomic, an acquire, an asynchronous copy's read). A
        buffer never written costs its reads nothing. Only threads' reads without acquire
        semantics are kept aside: their records (clock rows of threads, own entries, epochs) read
        the same then as now, and they make no synchronisation edge. A buffer with
        DEFER_MAX_EVENTS reads kept aside has them tested and its reads tested as they come from
        then on (an access kept aside costs more memory than its records)."""
        if not self._pending:
            return
        events, self._pending, self._pending_entries = self._pending, [], 0
        for e in events:
            if e.buffer not in self._buffers:  # buffers are numbered in the order of their first access
                self._state(e)
        self._tested.update(e.buffer for e in events if e.kind != READ)
        deferrable = [self._deferrable(e) for e in events]
        if self._unwritten or any(deferrable):
            # a buffer with any other access in this window has all of its accesses here tested,
            # after the reads it has kept aside: one buffer's accesses stay in their order
            now = {e.buffer for e, d in zip(events, deferrable) if not d}
            kept = []
            for e, d in zip(events, deferrable):
                if d and e.buffer not in now:
                    self._unwritten.setdefault(e.buffer, []).append(e)
                else:
                    kept.append(e)
            events = kept
            for buf in list(dict.fromkeys(e.buffer for e in events)):
                if buf in self._unwritten:
                    self._replay(self._unwritten.pop(buf))
            for buf in [b for b, reads in self._unwritten.items() if len(reads) >= DEFER_MAX_EVENTS]:
                self._replay(self._unwritten.pop(buf))
                self._tested.add(buf)
            if not events:
                return
        ids = self._record_all(events)
        if self._release_seen or any(e.sem & RELEASE for e in events):
            self._release_seen = True
            self._sync_edges(events, ids)
        by_buf: dict[object, list[int]] = {}
        for i, e in enumerate(events):
            by_buf.setdefault(e.buffer, []).append(i)
        for buf, idx in by_buf.items():
            self._step(buf, [events[i] for i in idx], [ids[i] for i in idx])
        self._since_gc += sum(i.size for i in ids)
        if self._since_gc > max(GC_EVERY, self._gc_floor):
            self._gc()

    def _replay(self, reads: list[Event]) -> None:
        """Test reads kept aside (one buffer's, in order) as they would have been: in windows of whole
        instructions."""
        lo = 0
        while lo < len(reads):
            hi, entries = lo, 0
            while hi < len(reads) and (entries < WINDOW or reads[hi].time == reads[hi - 1].time):
                entries += reads[hi].flat.size
                hi += 1
            window = reads[lo:hi]
            ids = self._record_all(window)
            self._step(window[0].buffer, window, ids)
            self._since_gc += sum(i.size for i in ids)
            lo = hi

    # ------------------------------------------------------------------ records
    def _op_id(self, e: Event) -> int:
        if e.op is None:
            return -1
        key = (id(e.op.ins), e.op.completion)
        got = self._ops.get(key)
        if got is None:
            got = self._ops[key] = len(self._op_list)
            self._op_list.append((e.op.ins, e.op.completion))
        return got

    def _path_id(self, path: tuple) -> int:
        got = self._paths.get(path)
        if got is None:
            got = self._paths[path] = len(self._path_list)
            self._path_list.append(path)
        return got

    def _record_all(self, events: list[Event]) -> list[np.ndarray]:
        """The records of a window's accesses, one per (event, lane), in event order; the record ids
        of each event. The columns are built for the whole window and appended once: an append per
        event cost a slice assignment per column (26) per event."""
        ks = [e.lanes.size for e in events]
        total = sum(ks)

        def per_event(values: list, dtype) -> np.ndarray | np.generic:
            v0 = values[0]
            if all(v == v0 for v in values):  # one value in the window (most columns): appended as a scalar
                return dtype(v0)
            return np.repeat(np.array(values, dtype), ks)

        def per_lane(arrays: list) -> np.ndarray:
            return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)

        def per_lane_or(values: list, default, dtype) -> np.ndarray:
            """Per-lane arrays of the events, `default` for an event that has none."""
            if all(v is None for v in values):
                return dtype(default)  # (a scalar: Records.append fills the column's new rows with it)
            return per_lane([np.full(k, default, dtype) if v is None else np.broadcast_to(v, (k,))
                             for v, k in zip(values, ks)])

        hb = per_lane([e.hb for e in events])
        _, col, thread, slot = self.clocks.decode(hb)
        # a thread's own entry is its epoch (C only); accesses whose threads have streams, or of an
        # asynchronous operation's agent, say their own entries (owns) or have none
        plain = [e.owns is None and e.hbrows is None for e in events]
        epochs = per_lane([e.epochs for e in events])
        if all(plain):
            # -1 throughout but C's own entry, the epoch: written into the appended rows (below), not
            # built as (total, SLOTS) arrays and copied
            cown = pown = np.int32(-1)
        else:
            cown = np.full((total, SLOTS), -1, np.int32)
            pown = np.full((total, SLOTS), -1, np.int32)
            off = 0
            for e, k in zip(events, ks):
                if e.owns is not None:
                    cown[off:off + k, :e.owns.shape[1]] = e.owns[0].T
                    pown[off:off + k, :e.owns.shape[1]] = e.owns[1].T
                elif e.hbrows is None:
                    cown[off:off + k, 0] = e.epochs
                off += k
        n0 = self.R.n
        cols = dict(
            time=per_event([e.time for e in events], np.int64),
            ev=per_event([e.seq for e in events], np.int64),
            pc=per_event([e.pc for e in events], np.int32), lane=per_lane([e.lanes for e in events]),
            kind=per_event([e.kind for e in events], np.int8), strong=per_event([e.strong for e in events], np.int8),
            row=per_lane([e.rows for e in events]), hbrow=hb,
            base=per_lane([e.bases[0] for e in events]), pbase=per_lane([e.bases[1] for e in events]),
            tbase=per_lane_or([e.tbases for e in events], 0, np.int32),
            epoch=epochs, proxy=per_event([e.proxy for e in events], np.int8),
            col=col, thread=thread, slot=slot,
            hash=per_lane_or([e.hashes for e in events], 0, np.uint64),
            real=per_lane_or([e.real for e in events], 0, np.uint64),
            start=per_lane([e.flat[:, 0] for e in events]), size=per_event([e.flat.shape[1] for e in events], np.int32),
            op=per_event([self._op_id(e) for e in events], np.int32), sem=per_event([e.sem for e in events], np.int8),
            cown=cown, pown=pown, undef=per_lane_or([e.undef for e in events], False, np.bool_),
            path=per_event([self._path_id(e.path) for e in events], np.int32))
        ids = self.R.append(total, **cols)
        if all(plain):
            self.R["cown"][n0:n0 + total, 0] = epochs
        cut = np.cumsum(ks)
        return [ids[a:b] for a, b in zip((0, *cut[:-1].tolist()), cut.tolist())]

    def _state(self, e: Event) -> _BufferState:
        st = self._buffers.get(e.buffer)
        if st is None:
            cells = e.buffer.space is MemSpace.TMEM and _cells(e.flat) is not None
            stride = self.shared_bytes if e.buffer.space is MemSpace.SHARED else 0
            st = self._buffers[e.buffer] = _BufferState(e.buffer, e.size, len(self._buffers),
                                                        CELL if cells else GRANULE, cells, stride)
        return st

    # ------------------------------------------------------------------ a window of accesses to one buffer
    def _step(self, buf, events: list[Event], ids: list[np.ndarray]) -> None:
        st = self._state(events[0])
        if st.small:
            st.dense()
        runs = _runs(events, ids) if not st.cells else [([e], [r]) for e, r in zip(events, ids)]
        while True:
            byte_l, rec_l = [], []
            refined = False
            for run, run_ids in runs:
                if len(run) > 1:
                    # the run's accesses as one (their rows stacked): the keys of each in turn, when none
                    # touches a page the first time or splits a granule (nothing changes then, so each
                    # access alone would find the same granules); else one by one, below
                    flat, consecutive = st.padded(np.concatenate([e.flat for e in run]),
                                                  all(e.consecutive for e in run))
                    if consecutive:
                        _CONTIGUOUS[0], _CONTIGUOUS[1] = flat, np.ones(flat.shape[0], bool)
                    got = st.entries(flat, touch=False)
                    if isinstance(got, tuple):
                        if not refined:
                            keys, rows = got
                            byte_l.append(keys)
                            rec_l.append(np.concatenate(run_ids)[rows])
                        continue
                for e, r in zip(run, run_ids):
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

    def _same_instruction(self, st: _BufferState, byte, rec, js: np.ndarray) -> None:
        """Lanes of one instruction writing one byte (entries js[i], js[i] + 1): allowed only by the
        same-value rule (same_value.py); otherwise one finding per dynamic instruction and reason,
        counting its byte pairs and the bytes they span."""
        R = self.R
        a, b = rec[js], rec[js + 1]
        both_atomic = (R["kind"][a] == ATOMIC) & (R["kind"][b] == ATOMIC)
        js, a, b = js[~both_atomic], a[~both_atomic], b[~both_atomic]
        ok = equal_defined_values(R, a, b)
        scale = st.scale(byte[js])
        self.same_value += int(scale[ok].sum())
        bad = np.nonzero(~ok)[0]
        if bad.size == 0:
            return
        code = same_instruction_code(R, a[bad], b[bad], self.threads)
        for j, c in zip(bad.tolist(), code.tolist()):
            ia, ib, x = int(a[j]), int(b[j]), int(byte[js[j]])
            key = (int(R["ev"][ia]), c)  # events are numbered in time order
            got = st.same.get(key)
            if got is None:
                if len(st.same) >= self.limit:
                    self.left_out.add(c)
                    continue  # the first `limit` dynamic instructions (reasons) only
                got = st.same[key] = RacePair(st.buffer, st.raw(x), self._site(ia), self._site(ib),
                                              SAME_INSTRUCTION_REASONS[c], c == 0, 0)
            got.count += int(scale[j])
            got.byte = min(got.byte, st.raw(x))
            got.last = max(got.last, st.top(x))

    def _pairs(self, st: _BufferState, byte: np.ndarray, rec: np.ndarray, kind: np.ndarray) -> None:
        """Test the window's accesses (sorted by byte, time, lane) against the latest earlier write of
        their byte and each read against the next write; keep each byte's latest write and reads since."""
        if (kind != READ).any():
            self._merged_pairs(st, byte, rec, kind)
        else:
            self._read_pairs(st, byte, rec)

    def _merged_pairs(self, st: _BufferState, byte: np.ndarray, rec: np.ndarray, kind: np.ndarray) -> None:
        """_pairs of any window: the accesses the bytes keep merged with the window's, one sequence per byte."""
        ub = byte.take(np.flatnonzero(_starts(byte)))  # `byte` is sorted
        W = st.lastw[ub]
        # the bytes' kept accesses, oldest first: the latest write, then (for bytes written now) the reads since
        wi = np.flatnonzero(W >= 0)
        pb, pr = [ub.take(wi)], [W.take(wi)]
        pm = None  # identical reads a kept read stands for (None: no kept read, all ones)
        wb = byte.take(np.flatnonzero(kind != READ))
        wb = wb[_starts(wb)] if wb.size else wb
        if wb.size:
            heads = st.rhead[wb]
            if (heads >= 0).any():
                rb, rr, rm = self._reads(wb, heads)
                pb.append(rb)
                pr.append(rr)
                pm = [np.ones(wi.size, np.int64), rm]
        kb = np.concatenate(pb)
        nk = kb.size
        # one sequence per byte: kept accesses first (in their order: a byte's write before its reads), then
        # the new ones
        o = np.argsort(np.concatenate([kb, byte]), kind="stable")
        allb = np.concatenate([kb, byte]).take(o)
        allr = np.concatenate(pr + [rec]).take(o)
        isnew = o >= nk
        mult = None if pm is None else np.concatenate(pm + [np.ones(byte.size, np.int64)]).take(o)
        is_w = self.R["kind"].take(allr) != READ
        n = allb.size
        pos = np.arange(n)
        start = np.flatnonzero(_starts(allb))
        ends = _then(start[1:], n)
        lens = ends - start
        # the latest write at or before each position (of its byte if at or after its byte's start)
        lw_incl = _last_at_or_before(is_w)
        prev_w = _after(-1, lw_incl[:-1])
        # (positions of a mask by flatnonzero, then take: pos[mask] is flatnonzero(mask), and a boolean
        # index of a few hundred thousand mixed entries costs several times nonzero + take)
        sel1 = np.flatnonzero((prev_w >= np.repeat(start, lens)) & isnew)
        self._test(st, allb, allr, prev_w.take(sel1), sel1, 0, None)
        if wb.size:
            group_end = np.repeat(ends, lens)
            next_w = _then(_next_at_or_after(is_w)[1:], n)
            within = next_w < group_end
            a2 = np.flatnonzero(~is_w & within)
            b2 = next_w.take(a2)
            keep2 = np.flatnonzero(isnew.take(b2))  # (a kept read, a kept write) pairs were tested when they happened
            a2 = a2.take(keep2)
            self._test(st, allb, allr, a2, b2.take(keep2), 1, None if mult is None else mult.take(a2))
            # the new reads after their byte's last write (a kept write is its byte's first entry, before them)
            newread = np.flatnonzero(isnew & ~is_w & ~within)
        else:  # every new entry a read, and no byte's latest write changes
            newread = np.flatnonzero(isnew)
        # the state: each byte's last write, and the reads after it (a kept write stays as it is: the last
        # write of a byte is new unless it is the byte's first entry, its kept write)
        lastw_pos = lw_incl.take(ends - 1)
        has_w = (lastw_pos >= start) & isnew.take(np.maximum(lastw_pos, 0))
        if has_w.any():
            gb = allb.take(start)
            st.lastw[gb[has_w]] = allr[lastw_pos[has_w]]
            st.rhead[gb[has_w]] = -1
        if newread.size:
            self._push_reads(st, allb.take(newread), allr.take(newread))

    def _read_pairs(self, st: _BufferState, byte: np.ndarray, rec: np.ndarray) -> None:
        """_pairs of a window of one buffer's reads only (sorted by byte, time, lane), without the merge with
        the kept accesses: the same calls. With no write in the window, the write before each read is its
        byte's kept latest write (the merge put it first in the byte's sequence, before the new reads; there
        are no read/next-write pairs), the pairs come in the order of `byte`, no byte's latest write changes
        and every read is pushed. `_test` reads the pairs' bytes and records at their positions in (allb,
        allr): here the pairs' writes first, then the reads."""
        w = st.lastw[byte]
        sel = np.flatnonzero(w >= 0)
        if sel.size:
            m = sel.size
            allb = np.concatenate([byte.take(sel), byte])
            allr = np.concatenate([w.take(sel), rec])
            self._test(st, allb, allr, np.arange(m), sel + m, 0, None)
        self._push_reads(st, byte, rec)

    def _test(self, st: _BufferState, allb, allr, a_pos, b_pos, category: int, mult: np.ndarray | None) -> None:
        """Record the unordered ones of pairs (a earlier, b); `mult`: how many identical reads each
        kept read a stands for (counted as conflicting byte pairs)."""
        if a_pos.size == 0:
            return
        R = self.R
        a, b = allr.take(a_pos), allr.take(b_pos)
        # one event's bytes are one access (an atomic is logged once); accesses of two events made
        # in one step (asynchronous operations performed together) are compared like any others
        cand = R["ev"].take(a) != R["ev"].take(b)
        if R.any_atomic:  # (else no pair is two atomics)
            cand &= ~((R["kind"].take(a) == ATOMIC) & (R["kind"].take(b) == ATOMIC))
        if R.any_strong:  # (else no pair is strong: plain accesses are not)
            # morally strong (PTX 8.7): both strong, scopes covering both threads, and the same bytes
            sa, sb = R["strong"].take(a), R["strong"].take(b)
            j = np.nonzero((sa > 0) & (sb > 0) & cand)[0]
            if j.size:
                aj, bj = a[j], b[j]
                cta_j = (R["row"][aj] // self.threads) == (R["row"][bj] // self.threads)
                cand[j] = ~((cta_j | ((sa[j] >= 3) & (sb[j] >= 3)))
                            & (R["start"][aj] == R["start"][bj]) & (R["size"][aj] == R["size"][bj]))
        if not cand.any():
            return
        if not every(cand):
            c = np.flatnonzero(cand)
            a_pos, b_pos, a, b = a_pos.take(c), b_pos.take(c), a.take(c), b.take(c)
            if mult is not None:
                mult = mult.take(c)
        same_cta = (R["row"].take(a) // self.threads) == (R["row"].take(b) // self.threads)
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

    # ------------------------------------------------------------------ reads since the last write
    def _reads(self, ub: np.ndarray, heads: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The kept reads of bytes `ub` (heads of their lists), oldest first per byte: bytes, record
        ids and how many identical reads each stands for."""
        bs, ns, depth = [], [], []
        cur = heads.copy()
        d = 0
        live = cur >= 0
        while live.any():
            idx = np.nonzero(live)[0]
            bs.append(ub[idx])
            ns.append(cur[idx])
            depth.append(np.full(idx.size, d))
            cur[idx] = self._node_prev[cur[idx]]
            live = cur >= 0
            d += 1
        b, nodes, dd = np.concatenate(bs), np.concatenate(ns), np.concatenate(depth)
        o = np.lexsort((-dd, b))  # by byte, the deepest (oldest) first
        nodes = nodes[o]
        return b[o], self._node_rec[nodes], self._node_mult[nodes]

    #: what makes two reads of one byte interchangeable for every later write (the ordering test,
    #: the strength exemption, the finding's key and witness)
    _SAME_READ = ("lane", "pc", "hbrow", "row", "epoch", "proxy", "strong", "start", "size")

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
        # equal in every _SAME_READ column, each compared on the reads equal in the ones before
        same = np.flatnonzero(prev_rec >= 0)
        r_, p_ = rec.take(same), prev_rec.take(same)
        for name in self._SAME_READ:
            if same.size == 0:
                break
            col = R[name]
            m = np.flatnonzero(col.take(r_) == col.take(p_))
            if m.size < same.size:
                same, r_, p_ = same.take(m), r_.take(m), p_.take(m)
        nf = k - same.size  # fresh reads: those not equal to the one before
        need = self._nodes + nf
        self._node_room(need)
        # the node each read belongs to: its own, or the last fresh one before it in its byte, or the head
        if nf == k:  # (every read fresh: each its own node)
            owner = np.arange(self._nodes, need, dtype=np.int64)
        else:
            eq = np.zeros(k, bool)
            eq[same] = True
            fresh = ~eq
            fi = np.flatnonzero(fresh)
            ids = np.full(k, -1, np.int64)
            ids[fi] = np.arange(self._nodes, need, dtype=np.int64)
            lastf = _last_at_or_before(fresh)
            starts = np.flatnonzero(first)
            gstart = np.repeat(starts, np.diff(starts, append=k))  # each read's byte's first read
            owner = np.where(lastf >= gstart, ids.take(np.maximum(lastf, 0)), heads)
        # a fresh node's predecessor: the byte's previous node (fresh one before it, or the head)
        before = _after(-1, owner[:-1])
        prev = np.where(first, heads, before)
        self._node_rec[self._nodes:need] = rec if nf == k else rec.take(fi)
        self._node_prev[self._nodes:need] = prev if nf == k else prev.take(fi)
        self._node_mult[self._nodes:need] = 1
        self._nodes = need
        if nf < k:
            np.add.at(self._node_mult, owner[eq], 1)
        ends = np.flatnonzero(_then(first[1:], True))  # each byte's last read
        st.rhead[byte.take(ends)] = owner.take(ends)

    def _node_room(self, need: int) -> None:
        """Room for `need` read nodes."""
        if need > self._node_rec.size:
            cap = max(need, 2 * self._node_rec.size, 4096)
            for name in ("_node_rec", "_node_prev", "_node_mult"):
                old = getattr(self, name)
                new = np.empty(cap, old.dtype)
                new[:self._nodes] = old[:self._nodes]
                setattr(self, name, new)

    # ------------------------------------------------------------------ atomics and plain accesses
    def _atomics(self, st: _BufferState, byte: np.ndarray, rec: np.ndarray, kind: np.ndarray) -> None:
        """Bytes touched by atomics: each plain access is tested against every thread's nearest atomic
        before it and after it (atomic-atomic pairs are exempt, so the latest write is not enough:
        an mbarrier's many polls and its inval). Called before `_pairs` updates the bytes' state."""
        R = self.R
        for x in np.unique(byte[kind == ATOMIC]).tolist():
            if x not in st.atomic:
                ab = st.atomic[x] = _AtomicByte()
                # the byte's plain accesses so far that can still race: its latest write, the reads since
                w = int(st.lastw[np.array([x])][0])
                if w >= 0 and R["kind"][w] != ATOMIC:
                    ab.plain.append(w)
                h = st.rhead[np.array([x])]
                if h[0] >= 0:
                    ab.plain += self._reads(np.array([x]), h)[1].tolist()
        touched = np.isin(byte, np.fromiter(st.atomic.keys(), np.int64, len(st.atomic)))
        if not touched.any():
            return
        xs, rs, ks = byte[touched], rec[touched], kind[touched]
        ts = R["time"][rs]
        cut = np.r_[0, np.nonzero((xs[1:] != xs[:-1]) | (ts[1:] != ts[:-1]))[0] + 1, xs.size]
        for lo, hi in zip(cut[:-1].tolist(), cut[1:].tolist()):  # one byte at one time
            ab = st.atomic[int(xs[lo])]
            t = int(ts[lo])
            gk, gr = ks[lo:hi], rs[lo:hi]
            plain = gr[gk != ATOMIC].tolist()
            atoms = gr[gk == ATOMIC]
            # each plain access and every thread's nearest atomic before it
            pairs = [(q, p, (row, 0)) for p in plain for row, (q, _) in ab.last.items()]
            if (gk == WRITE).any():  # a plain write: the latest write and the reads since, and (after an
                # atomic) the earlier plain accesses not ordered before the write
                w = np.nonzero(gk == WRITE)[0][-1]
                since = [r for r, kk in zip(gr[w:].tolist(), gk[w:].tolist()) if kk != ATOMIC]
                before = ab.plain + [r for r, kk in zip(gr[:w].tolist(), gk[:w].tolist()) if kk != ATOMIC]
                ab.plain = (self._not_before(st, before, int(gr[w])) if ab.last else []) + since
            else:
                ab.plain += plain
            if atoms.size:
                rows = R["hbrow"][atoms]
                if ab.plain:
                    urows, firsts = np.unique(rows, return_index=True)
                    for row, q in zip(urows.tolist(), atoms[firsts].tolist()):
                        # a thread's first atomic after each plain access since its previous atomic
                        since = ab.last.get(row, (-1, -1))[1]
                        pairs += [(q, p, (row, 1)) for p in ab.plain if R["time"][p] > since]
                for row, q in zip(rows.tolist(), atoms.tolist()):
                    ab.last[row] = (q, t)
            if pairs:
                self._atomic_pairs(st, int(xs[lo]), ab, pairs)

    def _not_before(self, st: _BufferState, plain: list, w: int) -> list:
        """Of an atomic byte's plain accesses `plain` (record ids, time order), those not ordered before
        its later plain write `w` by happens-before (or made in w's own event), which a later atomic
        must still be tested against. One ordered before w needs no test of its own: w is kept, and
        any atomic q after w is tested against it; if w happens before q, so does p (happens-before
        is transitive, PTX 8.9.4), and if not, the byte's race is found through w. Without this, a
        byte that was an mbarrier once (init .. inval, then reused as a data tile, as Triton lays out
        shared memory) kept every later plain access for ever: the state grew every loop iteration
        (loops.Canon never repeated) and each later atomic would be tested against all of them."""
        if not plain:
            return plain
        R = self.R
        p = np.array(plain, np.int64)
        wv = np.full(p.size, w, np.int64)
        same_cta = (R["row"][p] // self.threads) == (R["row"][w] // self.threads)
        gone = self._ordered(st, p, wv, same_cta) & (R["ev"][p] != R["ev"][w])
        return p[~gone].tolist()

    def _atomic_pairs(self, st: _BufferState, x: int, ab: _AtomicByte, pairs: list[tuple]) -> None:
        """Keep the byte's first unordered pair in the batch formulation's order: by the atomic's thread,
        nearest-before pairs before nearest-after ones, then by the plain access (time, lane)."""
        R = self.R
        q = np.array([p[0] for p in pairs], np.int64)
        p = np.array([p[1] for p in pairs], np.int64)
        qfirst = R["time"][q] <= R["time"][p]
        first, second = np.where(qfirst, q, p), np.where(qfirst, p, q)
        keep = (R["ev"][first] != R["ev"][second]) & (R["hbrow"][first] != R["hbrow"][second])
        strong = (R["strong"][first] > 0) & (R["strong"][second] > 0) & (R["start"][first] == R["start"][second]) \
            & (R["size"][first] == R["size"][second])
        sel = np.nonzero(keep & ~strong)[0]
        if sel.size == 0:
            return
        first, second = first[sel], second[sel]
        same_cta = (R["row"][first] // self.threads) == (R["row"][second] // self.threads)
        ok = self._ordered(st, first, second, same_cta)
        for j in np.nonzero(~ok)[0].tolist():
            plain = int(p[sel[j]])
            key = pairs[int(sel[j])][2] + (int(R["time"][plain]), int(R["lane"][plain]), int(R["ev"][plain]))
            if ab.best is not None and key >= ab.best[0]:
                continue
            ia, ib = int(first[j]), int(second[j])
            reason = why(self.clocks, R, ia, ib, st.buffer.space) if same_cta[j] else \
                "different CTAs, no inter-CTA synchronisation"
            ab.best = (key, RacePair(st.buffer, st.raw(x), self._site(ia), self._site(ib), reason,
                                     count=int(st.scale(x)), last=st.top(x)))

    # ------------------------------------------------------------------ cross-CTA synchronisation
    def _sync_edges(self, events: list[Event], ids: list[np.ndarray]) -> None:
        """Cross-CTA release -> acquire edges: an acquire read's value comes from the latest write of
        its bytes in this execution, and through it from every write before an unbroken chain of
        atomic read-modify-writes ending there (observation order, PTX 8.9.2); each release among
        them by another CTA synchronises with the read (8.9.4). A grid barrier is this pattern: every
        CTA's atom.add.release on one counter, then ld.acquire polls of it. Bytes keep their last
        writer (`synclast`) and, after atomics, the chain (`chains`, at most MAX_RMW_CHAIN long)."""
        R = self.R
        for e, r in zip(events, ids):
            st = self._state(e)
            if st.synclast is None:
                st.synclast = PagedArray(st.nbytes, np.int64, constant(-1, np.int64))
            if e.sem & ACQUIRE and e.kind in (READ, ATOMIC):
                first = e.flat[:, 0]
                src = st.synclast[first]
                for j in np.nonzero(src >= 0)[0].tolist():
                    for w in st.chains.get(int(first[j]), (int(src[j]),)):
                        if R["sem"][w] & RELEASE and R["row"][w] // self.threads != e.rows[j] // self.threads:
                            self.edges.append(SyncEdge(int(R["hbrow"][w]), int(R["epoch"][w]), int(R["base"][w]),
                                                       int(R["time"][w]), int(e.hb[j]), int(e.epochs[j]),
                                                       int(e.bases[0][j]), e.time))
            if e.kind == ATOMIC:
                for j in range(e.lanes.size):
                    rj = int(r[j])
                    for byte in e.flat[j].tolist():
                        prev = int(st.synclast[np.array([byte])][0])
                        chain = st.chains.get(byte, (prev,) if prev >= 0 else ())
                        st.chains[byte] = (*chain[-MAX_RMW_CHAIN + 1:], rj)
                        st.synclast[np.array([byte])] = rj
            elif e.kind != READ:
                flat = e.flat.reshape(-1)
                if st.chains:
                    for byte in np.unique(flat).tolist():
                        st.chains.pop(byte, None)
                st.synclast[flat] = np.repeat(r, e.flat.shape[1])

    # ------------------------------------------------------------------ helpers
    def _ordered(self, st: _BufferState, a: np.ndarray, b: np.ndarray, same_cta: np.ndarray) -> np.ndarray:
        """Per pair of records (a earlier, b): ordered by happens-before? In one CTA by the clocks,
        across CTAs through a release -> acquire edge."""
        if every(same_cta):  # (the common case: no subset to take)
            ok = ordered(self.clocks, self.R, a, b, st.buffer.space is MemSpace.TMEM)
        else:
            ok = np.zeros(a.size, bool)
            if same_cta.any():
                s = np.nonzero(same_cta)[0]
                ok[s] = ordered(self.clocks, self.R, a[s], b[s], st.buffer.space is MemSpace.TMEM)
        if self.edges:
            for j in np.nonzero(~ok & ~same_cta)[0]:
                ok[j] = cross_ordered(self.clocks, self.edges, self._where(int(a[j])), self._where(int(b[j])))
        return ok

    def _where(self, r: int) -> tuple[int, int, int, int]:
        R = self.R
        return int(R["hbrow"][r]), int(R["epoch"][r]), int(R["base"][r]), int(R["time"][r])

    def _site(self, r: int) -> Site:
        R = self.R
        op = int(R["op"][r])
        return Site(int(R["pc"][r]), int(R["lane"][r]), int(R["row"][r]), int(R["kind"][r]),
                    self._op_list[op] if op >= 0 else None, self._path_list[int(R["path"][r])], int(R["time"][r]),
                    int(R["hbrow"][r]))

    def _refine(self, st: _BufferState, flat: np.ndarray, fit: np.ndarray) -> None:
        """Rows of `flat` (padded bytes) whose granules they split (`fit`: the granule each row is whole
        granules of): their pages take finer granules, each new one starting with the state of the old
        one it lies in. Tensor memory kept in cells meets a part of a cell: byte-exact from now on."""
        if st.cells:
            st.cells = False  # cells become byte-exact granules of 4 (the keys stay)
        lo, hi = flat.min(axis=1) // GPAGE, flat.max(axis=1) // GPAGE
        want: dict[int, int] = {}
        for a, b, g in zip(lo.tolist(), hi.tolist(), fit.tolist()):
            for page in range(a, b + 1):
                want[page] = min(want.get(page, GRANULE), g)
        pages = np.fromiter(want, np.int64, len(want))
        new_g = np.fromiter(want.values(), np.int64, len(want))
        old_g = st.gran[pages].astype(np.int64)
        finer = new_g < old_g
        # the pages going from one granule to one finer granule together (pages are independent)
        for og, ng in sorted(set(zip(old_g[finer].tolist(), new_g[finer].tolist()))):
            group = pages[finer & (old_g == og) & (new_g == ng)]
            keys = (group[:, None] * GPAGE + np.arange(0, GPAGE, og, dtype=np.int64)).reshape(-1)
            keys = keys[keys < st.nbytes]
            w, h = st.lastw[keys], st.rhead[keys]
            has = np.flatnonzero(h >= 0)
            for j in range(ng, og, ng):
                st.lastw[keys + j] = w
                st.rhead[keys + j] = self._copied_heads(h, has)
            for x in (keys.tolist() if st.atomic else ()):
                ab = st.atomic.get(x)
                if ab is not None:
                    for j in range(0, og, ng):
                        best = None if ab.best is None else \
                            (ab.best[0], replace(ab.best[1], byte=st.raw(x + j), count=ng,
                                                          last=st.raw(x + j) + (0 if st.cells else ng - 1)))
                        st.atomic[x + j] = _AtomicByte(list(ab.plain), dict(ab.last), best)
            st.gran[group] = ng
            st.fine = True

    def _copied_heads(self, h: np.ndarray, has: np.ndarray) -> np.ndarray:
        """Read-list heads `h` (-1: none; `has`: where not) for a new granule: each a new node with the old
        head's record, predecessor and count. A new granule starts with the reads of the one it lies in, but
        its newest node must be its own: `_push_reads` counts an identical later read (a thread re-reading
        the same bytes) into the byte's newest node, and a node shared by several granules would count it
        once per granule (16 one-byte keys of a refined 16-byte read: 16 reads counted for one, so a later
        unordered write's byte-pair count was 1 + 15 x 16 = 241 instead of 31). Older nodes are never
        changed after they stop being the newest, so they stay shared."""
        if has.size == 0:
            return h
        old = h.take(has).astype(np.int64)
        n0 = self._nodes
        need = n0 + old.size
        self._node_room(need)
        self._node_rec[n0:need] = self._node_rec.take(old)
        self._node_prev[n0:need] = self._node_prev.take(old)
        self._node_mult[n0:need] = self._node_mult.take(old)
        self._nodes = need
        out = np.array(h, copy=True)
        out[has] = np.arange(n0, need, dtype=out.dtype)
        return out

    def _gc(self) -> None:
        """Drop the records and read nodes that no byte refers to any more."""
        self._since_gc = 0
        R = self.R
        holders = []
        for st in self._buffers.values():
            holders.append(st.kept(st.lastw))
        live_nodes = []
        for st in self._buffers.values():
            h = st.kept(st.rhead)
            cur = h[h >= 0]
            while cur.size:
                live_nodes.append(cur)
                cur = self._node_prev[cur]
                cur = cur[cur >= 0]
        nodes = _marked(live_nodes, self._nodes)
        # the atomic bytes' records, flat (their lists and dicts rebuilt from it after a renumbering)
        abs_ = [ab for st in self._buffers.values() for ab in st.atomic.values()]
        plain = np.fromiter(chain.from_iterable(ab.plain for ab in abs_), np.int64)
        last = np.fromiter((r for ab in abs_ for r, _ in ab.last.values()), np.int64)
        synced = [st.synclast.materialised() for st in self._buffers.values() if st.synclast is not None]
        chains = np.fromiter((r for st in self._buffers.values() for ch in st.chains.values() for r in ch), np.int64)
        live = _marked(holders + [self._node_rec[nodes], plain, last, chains] + synced, R.n)
        if not GC_ALWAYS:
            # a collection costs the live records and read nodes: the next one waits until as many
            # new records were made (amortised, as a heap that grows by doubling)
            self._gc_floor = live.size + nodes.size
            if live.size > R.n // 2:
                return  # mostly live: not worth it
        # (live and nodes are sorted: all of them kept is arange, nothing to renumber; ids below the
        # first dropped one keep their numbers, only those above move)
        moved, nodes_moved = live.size < R.n, nodes.size < self._nodes
        if moved:
            keep = _unmoved(live)
            remap = _Renumber(live, R.n, keep)
            R.keep(live, keep)
            for st in self._buffers.values():
                st.transform(st.lastw, remap)
                if st.synclast is not None:
                    remap.update(st.synclast.materialised())
                st.chains = {k: tuple(remap(np.array(ch, np.int64)).tolist()) for k, ch in st.chains.items()}
            # of the atomic bytes, only those holding an id that moves are rebuilt
            n_p = np.fromiter((len(ab.plain) for ab in abs_), np.int64, len(abs_))
            n_l = np.fromiter((len(ab.last) for ab in abs_), np.int64, len(abs_))
            end_p, end_l = np.cumsum(n_p), np.cumsum(n_l)
            moves_p, moves_l = np.r_[0, np.cumsum(plain >= keep)], np.r_[0, np.cumsum(last >= keep)]
            dirty = (moves_p[end_p] > moves_p[end_p - n_p]) | (moves_l[end_l] > moves_l[end_l - n_l])
            plain, last = remap(plain), remap(last)
            for k in np.flatnonzero(dirty).tolist():
                ab = abs_[k]
                ab.plain = plain[end_p[k] - n_p[k]:end_p[k]].tolist()
                ab.last = {row: (r, t) for (row, (_, t)), r in zip(ab.last.items(),
                                                                   last[end_l[k] - n_l[k]:end_l[k]].tolist())}
        if moved or nodes_moved:
            rec = self._node_rec[nodes] if nodes_moved else self._node_rec[:nodes.size]
            self._node_rec[:nodes.size] = remap(rec) if moved else rec
        if nodes_moved:
            node_remap = _Renumber(nodes, self._nodes, _unmoved(nodes))
            self._node_prev[:nodes.size] = node_remap(self._node_prev[nodes])
            self._node_mult[:nodes.size] = self._node_mult[nodes]
            self._nodes = nodes.size
            for st in self._buffers.values():
                st.transform(st.rhead, node_remap)

    # ------------------------------------------------------------------ result
    def replicated_stores_only(self) -> bool:
        """Whether every race found, those left out of `races()` included, is warps of one instruction
        storing one defined value to the same bytes (SAME_INSTRUCTION_REASONS[3]): whichever store
        lands, the bytes hold that value (an equivalence proof may read them so). Code 0 (lanes of one
        warp, values equal in real arithmetic) is no race."""
        self.flush()
        allowed = {0, REPLICATED_STORE}
        return self.left_out <= allowed and all(
            not st.found and all(ab.best is None for ab in st.atomic.values())
            and all(code in allowed for _, code in st.same) for st in self._buffers.values())

    def races(self) -> list[RacePair]:
        """The findings so far: per buffer (in the order of their first access), lanes of one
        instruction writing one byte, then one finding per pair of instructions."""
        self.flush()
        out: list[RacePair] = []
        for st in sorted(self._buffers.values(), key=lambda s: s.order):
            if not st.written:
                continue
            out += [replace(st.same[k]) for k in sorted(st.same)]
            ordered_found = [replace(st.found[k].pair) for k in sorted(st.found, key=lambda k: st.found_key[k])]
            atomic = [replace(ab.best[1]) for _, ab in sorted(st.atomic.items()) if ab.best is not None]
            # merged before the list is cut to the limit: the atomic-vs-plain pairs are one per byte, and
            # a finding's count is every conflicting byte pair of its two instructions
            out += _merge_by_instructions(ordered_found + atomic)
            if len(out) >= self.limit:
                break
        return out[:self.limit]


def lexsort3(c: np.ndarray, b: np.ndarray, a: np.ndarray) -> np.ndarray:
    """np.lexsort((c, b, a)) of three integer columns (a the primary key): one stable argsort of the
    key ((a - min) * nb + (b - min)) * nc + (c - min) when it fits in 62 bits (order-preserving and
    one-to-one, so the same permutation; 3-9x faster than lexsort on 5k-20k rows), else lexsort."""
    if a.size < 2:
        return np.arange(a.size)
    cols = []
    span = 1
    for x in (a, b, c):
        lo, hi = int(x.min()), int(x.max())
        if x.dtype.kind not in "iu" or lo < -(1 << 62) or hi >= 1 << 62:
            return np.lexsort((c, b, a))
        cols.append((x, lo, hi - lo + 1))
        span *= hi - lo + 1
    if span >= 1 << 62:
        return np.lexsort((c, b, a))
    (xa, la, _), (xb, lb, nb), (xc, lc, nc) = cols
    key = ((xa.astype(np.int64) - la) * nb + (xb.astype(np.int64) - lb)) * nc + (xc.astype(np.int64) - lc)
    return np.argsort(key, kind="stable")


def sorted_unique(a: np.ndarray) -> np.ndarray:
    """np.unique(a) of integers (sorted distinct values) by sorting: numpy 2.4's np.unique without return
    arrays hashes, ~6x slower on 4 M int64 with 1 M distinct (1.68 vs 0.25 s CPU); the same array."""
    a = np.sort(np.asarray(a).reshape(-1))
    if a.size > 1:
        keep = np.empty(a.size, bool)
        keep[0] = True
        np.not_equal(a[1:], a[:-1], out=keep[1:])
        a = a[keep]
    return a


def _marked(ids: list[np.ndarray], n: int) -> np.ndarray:
    """The distinct ids (>= 0, below n; -1: none) of arrays `ids`, sorted: sorted_unique of their
    concatenation, by marking a table of n instead of sorting (the garbage collector's roots: every
    byte's latest write, millions of entries on large buffers, of far fewer records)."""
    mark = np.zeros(n + 1, bool)
    for x in ids:
        mark[x + 1] = True  # -1 at 0
    return np.flatnonzero(mark[1:])


def _unmoved(kept: np.ndarray) -> int:
    """How many of the sorted distinct ids `kept` keep their number when they become 0, 1, ...: those
    before the first id that is not its own index (kept[i] >= i, equal until the first gap)."""
    if kept.size == 0 or kept[-1] == kept.size - 1:
        return int(kept.size)
    return int(np.argmax(kept != np.arange(kept.size)))


class _Renumber:
    """The map of ids (-1: none) when ids `kept` (sorted, unique, below n) become 0, 1, ... and the
    others go. `unmoved`: ids below it are all kept (_unmoved) and map to themselves: only the others
    are looked up."""

    def __init__(self, kept: np.ndarray, n: int, unmoved: int = 0) -> None:
        self.table = np.full(n + 1, -1, np.int64)
        self.table[kept] = np.arange(kept.size)
        self.n, self.unmoved = n, unmoved

    def __call__(self, x: np.ndarray) -> np.ndarray:
        out = np.array(x, np.int64)  # a copy, contiguous: its flat view is a view
        self.update(out)
        return out

    def update(self, x: np.ndarray) -> None:
        """x renumbered in place (x contiguous)."""
        flat = x.reshape(-1)
        hi = np.flatnonzero(flat >= self.unmoved)  # -1 and the unmoved ids stay
        flat[hi] = self.table.take(flat.take(hi))


def _merge_by_instructions(pairs: list[RacePair]) -> list[RacePair]:
    """One finding per pair of instructions in one buffer: the pairs found per byte by the
    atomic-vs-plain test (an mbarrier object's 8 bytes) join the nearest-write test's pair of the
    same instructions. The reason kept is the most severe (not ordered at all before only a missing
    proxy fence); the counts add up."""
    out: dict[tuple[int, int], RacePair] = {}
    for p in pairs:
        key = (p.a.pc, p.b.pc)
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


_STEP = np.arange(GRANULE, dtype=np.int64)


def _cells(flat: np.ndarray) -> np.ndarray | None:
    """A tensor-memory access as cell indices (k, cells), or None when it is neither whole cells nor
    the low halves of cells (.pack::16b)."""
    c = flat // CELL
    nb = flat.shape[1]
    if nb % CELL == 0 and all((c[:, ::CELL] == c[:, j::CELL]).all() for j in range(1, CELL)):
        return c[:, ::CELL]
    if nb % 2 == 0 and (c[:, ::2] == c[:, 1::2]).all():
        return c[:, ::2]
    return None


__all__ = ["RaceDetector", "RacePair", "Site", "Event", "ORDERED_BUT", "ordered", "why", "same_value"]
