"""The term DAG: one hash-consed node per distinct expression over a launch's tensor elements.

Check mode's equivalence shadow (symexec/check/termshadow.py) gives every data-dependent register and
memory byte a term id beside its bits; the proofs (proofs/) read the terms of the outputs. A node
is an operation (`Op`), a result sort (`Sort`: a float format, a bit-vector width or a predicate),
an integer `aux` (the operation's modifiers as an interned `Mods` record, a constant's bits, or an
input's buffer and element) and its children's ids. Equal (op, sort, aux, children) get one id, so
two kernels that compute the same expression the same way get the same id, and comparing them is
comparing integers.

Nodes keep the full machine meaning of the instruction (format, rounding, flush-to-zero,
saturation): `semantics.termeval` evaluates a term bit for bit as the emulator computes it, and
the proofs decide which of those details matter (real arithmetic ignores rounding; the precision
check reads it).

Storage is columnar (numpy arrays grown by doubling) and interning is vectorised over the lanes of
one instruction: `make` takes one row of children per lane, removes duplicate rows, looks the
distinct rows up by a 64-bit structural hash (verified against the stored columns, so a hash
collision can only cost time, never merge two different terms) and appends the new ones. The hash
index is itself numpy (`_HashIndex`: open addressing over node ids, each node's hash a column), 16 to
24 bytes per node where a Python dict of int keys took over 100: a FlashAttention pair at S = 512
makes tens of millions of nodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from semantics.formats import FloatFormat, get_format


def _no_huge_pages() -> None:
    """Tell NumPy not to advise transparent huge pages for its arrays (it does for every array of 4 MiB or
    more where the kernel's THP mode is `madvise`, as on the 2-core development machine). The term store and
    the executor make and free thousands of such temporaries per run (batches of rows, their hashes,
    probes); each came back as fresh huge pages the kernel zeroed 2 MiB at a time. FlashAttention vs naive
    at S = 512, one process each, load ~5: 43.9 s user + 10.6 s sys with the advice, 42.1 + 4.6 without
    (bench/results/i11fa-2026-12-06s39). A hint only: no value changes. Process-wide, as NumPy keeps it."""
    set_advice = getattr(getattr(np, "_core", None), "multiarray", None)
    set_advice = getattr(set_advice, "_set_madvise_hugepage", None)
    if set_advice is not None:
        set_advice(False)


_no_huge_pages()

__all__ = ["Kind", "Sort", "Op", "Mods", "TermStore", "Node", "CONCRETE", "sort_id", "SORTS", "PRED",
           "bits_sort", "float_sort", "sort_of_type", "sort_widths"]

#: A register or byte whose value is the same for every input of the launch: the machine's bits.
CONCRETE = -1


class Kind(IntEnum):
    BITS = 0  # a bit-vector (integers, packed pairs, bit patterns)
    FLOAT = 1  # a value of a float format
    PRED = 2  # a predicate


@dataclass(frozen=True)
class Sort:
    kind: Kind
    width: int  # bits of the register or container
    fmt: str | None = None  # float format name (semantics.formats) for FLOAT

    @property
    def format(self) -> FloatFormat:
        assert self.fmt is not None, self
        return get_format(self.fmt)

    def __str__(self) -> str:
        return self.fmt if self.kind is Kind.FLOAT else "pred" if self.kind is Kind.PRED else f"b{self.width}"


SORTS: list[Sort] = []
_SORT_IDS: dict[Sort, int] = {}


def sort_id(s: Sort) -> int:
    got = _SORT_IDS.get(s)
    if got is None:
        got = _SORT_IDS[s] = len(SORTS)
        SORTS.append(s)
    return got


PRED = sort_id(Sort(Kind.PRED, 1))
_WIDTHS = np.zeros(0, np.int64)


def sort_widths() -> np.ndarray:
    """Bits of every sort id so far (index with a node's sort column)."""
    global _WIDTHS
    if _WIDTHS.size != len(SORTS):
        _WIDTHS = np.array([s.width for s in SORTS], dtype=np.int64)
    return _WIDTHS


def bits_sort(width: int) -> int:
    return sort_id(Sort(Kind.BITS, width))


def float_sort(fmt: str) -> int:
    f = get_format(fmt)
    return sort_id(Sort(Kind.FLOAT, f.bits, f.name))


def sort_of_type(ty: str) -> int:
    """The sort a PTX scalar type reads a register as: .f32 -> f32, .u16/.s16/.b16 -> b16, .pred."""
    name = ty.lstrip(".")
    if name == "pred":
        return PRED
    if name[0] in "bus" and name[1:].isdigit():
        return bits_sort(int(name[1:]))
    return float_sort(name)


class Op(IntEnum):
    # leaves
    CONST = 0  # aux: the bits (two's complement in int64)
    INPUT = 1  # aux: buffer number << 40 | element index (TermStore.input_name)
    OPAQUE = 2  # a value no expression describes (an atomic's old value, a timer): aux a fresh number
    # floating point (the node's sort is the format; children read as that format unless stated)
    FADD = 10
    FSUB = 11
    FMUL = 12
    FFMA = 13
    FNEG = 14
    FABS = 15
    FMIN = 16
    FMAX = 17
    FDIV = 18
    FRCP = 19
    FSQRT = 20
    FRSQRT = 21
    FEX2 = 22
    FLG2 = 23
    FSIN = 24
    FCOS = 25
    FTANH = 26
    FCOPYSIGN = 27  # copysign(a, b): |b| with a's sign (PTX 9.7.4.x operand order)
    CVT = 30  # numeric conversion from the child's sort to the node's (aux: rounding, sat, relu, ftz, signedness)
    FLOAT = 31  # the child's bits read as the node's float format (no conversion)
    MMA = 32  # c + sum_i a_i * b_i: children (c, a_0..a_k-1, b_0..b_k-1), aux: element formats
    # x * scale(s), exact: children (x, a float of its element format; s, the 8-bit code of a block scale
    # factor: ue8m0, 2^(s - 127) with 0xFF NaN; or ue4m3, the 7-bit non-negative e4m3 with 0x7F NaN, PTX 5.2.3);
    # sort f64 (holds every such product of the mx element formats exactly); aux elems (x's format, "ue8m0" or
    # "ue4m3"). The operands of a block-scaled mma (9.7.14.3).
    SCALE = 33
    # bit-vectors (children are read as bits of their width)
    AND = 40
    OR = 41
    XOR = 42
    NOT = 43
    SHL = 44
    SHR = 45  # aux signed: arithmetic
    IADD = 46
    ISUB = 47
    IMUL = 48  # aux: lo/hi/wide
    INEG = 49
    IMIN = 50
    IMAX = 51
    IABS = 52
    BFE = 53  # bfe a, pos, len (aux signed)
    CONCAT = 54  # children high to low
    EXTRACT = 55  # aux lo, width
    POPC = 56
    # predicates and selection
    CMP = 60  # aux: comparison (eq, lt, ...), children's sort decides float/int
    PAND = 61
    POR = 62
    PXOR = 63
    PNOT = 64
    ITE = 65  # (pred, then, else)


#: Float operations whose result is rounded to the node's format (the precision check reads them).
ROUNDING = frozenset({Op.FADD, Op.FSUB, Op.FMUL, Op.FFMA, Op.FDIV, Op.FRCP, Op.FSQRT, Op.FRSQRT, Op.FEX2,
                      Op.FLG2, Op.FSIN, Op.FCOS, Op.FTANH, Op.MMA})
#: Operations whose first two children commute exactly (bit for bit): sorted when interned.
COMMUTATIVE = frozenset({Op.FADD, Op.FMUL, Op.FMIN, Op.FMAX, Op.AND, Op.OR, Op.XOR, Op.IADD, Op.IMIN, Op.IMAX,
                         Op.PAND, Op.POR, Op.PXOR})
_COMMUTATIVE_INT = frozenset(int(o) for o in COMMUTATIVE)


@dataclass(frozen=True)
class Mods:
    """The modifiers an operation's meaning depends on (interned: a node's aux is its index)."""

    rnd: str | None = None  # rn, rz, rm, rp, rna; rni, rzi, ... for integral rounding
    ftz: bool = False
    sat: bool = False
    relu: bool = False
    approx: str | None = None  # "approx" / "full" for div, ex2, ...
    cmp: str | None = None  # setp comparison
    signed: bool = False
    mode: str | None = None  # integer mul: lo, hi, wide; atomic: "atomic"
    lo: int = 0  # EXTRACT: first bit
    width: int = 0  # EXTRACT: bits
    elems: tuple[str, ...] = ()  # MMA: (a format, b format, accumulate format); SCALE: (x format, scale type)

    def describe(self) -> str:
        parts = [p for p in (self.rnd, self.approx, self.cmp, self.mode) if p]
        parts += [n for n, on in (("ftz", self.ftz), ("sat", self.sat), ("relu", self.relu)) if on]
        if self.width:
            parts.append(f"[{self.lo + self.width - 1}:{self.lo}]")
        if self.elems:
            parts.append("x".join(self.elems))
        return ".".join(parts)


_MODS: list[Mods] = []
_MODS_IDS: dict[Mods, int] = {}


def mods_id(m: Mods) -> int:
    got = _MODS_IDS.get(m)
    if got is None:
        got = _MODS_IDS[m] = len(_MODS)
        _MODS.append(m)
    return got


def mods(i: int) -> Mods:
    return _MODS[int(i)]


NO_MODS = mods_id(Mods())

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLD = np.uint64(0x9E3779B97F4A7C15)


_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)


def _mix(h: np.ndarray, v: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser of (h ^ v) + golden, on one new array (in place after the first xor:
    unsigned overflow wraps, no warning state to enter)."""
    x = np.bitwise_xor(h, v.astype(np.uint64, copy=False))
    x += _GOLD
    x ^= x >> _S30
    x *= _M1
    x ^= x >> _S27
    x *= _M2
    x ^= x >> _S31
    return x


_M64 = (1 << 64) - 1
_M1I, _M2I, _GOLDI = int(_M1), int(_M2), int(_GOLD)


def _mix1(h: int, v: int) -> int:
    """_mix of one value, in Python ints (the same bits: v is taken modulo 2^64 like its uint64 view)."""
    x = ((h ^ (v & _M64)) + _GOLDI) & _M64
    x ^= x >> 30
    x = (x * _M1I) & _M64
    x ^= x >> 27
    x = (x * _M2I) & _M64
    return x ^ (x >> 31)


def _rows(op: Op, sort, aux, kids) -> tuple[np.ndarray, np.ndarray]:
    """The rows (sort, aux, kids...) of `make`'s arguments, commutative operands sorted, and their
    structural hashes."""
    # the rows' columns assigned into one array (a third of np.stack + np.concatenate's time for 16384 rows)
    if isinstance(kids, list):
        m = max([np.size(k) for k in kids] + [np.size(sort), np.size(aux), 1])
        rows = np.empty((m, 2 + len(kids)), np.int64)
        for j, k in enumerate(kids):
            rows[:, 2 + j] = np.broadcast_to(np.asarray(k, dtype=np.int64), (m,))
    else:
        K = np.asarray(kids, dtype=np.int64)
        m = K.shape[0]
        rows = np.empty((m, 2 + K.shape[1]), np.int64)
        rows[:, 2:] = K
    if op in COMMUTATIVE and rows.shape[1] >= 4:
        a, b = rows[:, 2].copy(), rows[:, 3].copy()
        np.minimum(a, b, out=rows[:, 2])  # the two operands sorted (np.sort along an axis of 2 runs per row)
        np.maximum(a, b, out=rows[:, 3])
    rows[:, 0] = np.broadcast_to(np.asarray(sort, dtype=np.int64), (m,))
    rows[:, 1] = np.broadcast_to(np.asarray(aux, dtype=np.int64), (m,))
    h = np.full(m, np.uint64(int(op) * 0x100000001B3 + 7), np.uint64)
    for j in range(rows.shape[1]):
        h = _mix(h, rows[:, j].view(np.uint64))
    return rows, h


#: Node ids (and so child ids, kept as int32) stay below 2^31: 2^31 nodes would be over 100 GiB.
_MAX_NODES = (1 << 31) - 1


def _distinct(h: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(distinct hashes sorted, a row holding each, each row's index into them): np.unique's
    return_index/return_inverse without its stable sort (any row of a hash will do)."""
    order = np.argsort(h)
    hs = h[order]
    new = np.empty(h.size, bool)
    new[0] = True
    np.not_equal(hs[1:], hs[:-1], out=new[1:])
    starts = np.nonzero(new)[0]
    inv = np.empty(h.size, np.int64)
    inv[order] = np.cumsum(new) - 1
    return hs[starts], order[starts], inv


class _Column:
    """A growable 1-d numpy array."""

    def __init__(self, dtype, capacity: int = 1024) -> None:
        self.a = np.zeros(capacity, dtype=dtype)
        self.n = 0

    def append(self, value: int) -> int:
        """extend([value]) for one scalar (no array made)."""
        start = self.n
        if start == self.a.size:
            self._room(start + 1)
        self.a[start] = value
        self.n = start + 1
        return start

    def extend(self, values: np.ndarray) -> int:
        start = self.n
        end = start + len(values)
        if end > self.a.size:
            self._room(end)
        self.a[start:end] = values
        self.n = end
        return start

    @property
    def view(self) -> np.ndarray:
        return self.a[:self.n]

    def _room(self, end: int) -> None:
        """Capacity for `end` entries (at least double): a zeroed copy. np.zeros of a large block is calloc's
        fresh mapping, whose pages the kernel provides (zeroed) when first written: the spare capacity costs no
        memory until used. Up to 2026-12-06 (stop 38) the array grew in place by ndarray.resize, which keeps the
        written pages (realloc remaps a large block) but zero-fills the new part itself, so every column held
        its whole capacity: FlashAttention vs naive at S = 512 (28.8 M nodes) peaked at 2710 MiB that way, 2552
        this way (bench/results/i11fa-2026-12-06s39). A copy also leaves any view taken earlier seeing the old
        memory, as it must."""
        size = max(end, 2 * self.a.size)
        grown = np.zeros(size, dtype=self.a.dtype)
        grown[:self.n] = self.a[:self.n]
        self.a = grown


class _HashIndex:
    """Structural hash -> node id, for the first node of each hash: linear probing in a numpy table of
    node ids (-1 empty) kept at most a quarter full (`_FILL`); the hashes themselves live in a per-node
    column, so a slot costs 4 bytes. Lookups and inserts are vectorised over a batch of distinct hashes.

    Half full rather than 2/3: a miss probes 1.5-2.5 slots on average instead of 2.5-5 (each probe of an
    occupied slot is two random reads, the table's and the hash column's), and a rehash places its
    entries in fewer rounds. The FlashAttention pair at S = 512 (28.8 M nodes) ends in the same 2^26
    slots either way; a micro-benchmark inserting 28 M hashes in batches of 16384, each looked up
    first, went 18.9 -> 13.5 s CPU. A quarter rather than half (equiv-2026-12-04y): 12 M hashes in batches
    of 4096, each looked up first, 4.87 -> 3.85 s CPU; at 28.8 M nodes the table is 2^27 slots (512 MiB)
    instead of 2^26."""

    _EMPTY = -1
    _FILL = 4  # the table has at least _FILL slots per entry

    def __init__(self, capacity: int = 1 << 12) -> None:
        self.table = np.full(capacity, self._EMPTY, np.int32)  # ids < 2^31: far beyond any memory cap
        self.hashes = _Column(np.uint64, capacity)  # node id -> its structural hash
        self.count = 0

    def __len__(self) -> int:
        return self.count

    def lookup(self, h: np.ndarray) -> np.ndarray:
        """The id stored for each hash, -1 where none."""
        return self._probe(h, None)

    def lookup_stops(self, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """lookup(h), and for each hash not found the empty slot its probe stopped at: `insert` can
        start there (every slot from the hash's home to it is taken) while the table is unchanged."""
        stops = np.full(h.size, -1, np.int64)
        return self._probe(h, stops), stops

    def _probe(self, h: np.ndarray, stops: np.ndarray | None) -> np.ndarray:
        out = np.full(h.size, -1, np.int64)
        mask = np.uint64(self.table.size - 1)
        todo = np.arange(h.size)
        slot = (h & mask).astype(np.int64)
        hashes = self.hashes.a
        while todo.size:
            ids = self.table[slot]
            empty = ids == self._EMPTY
            if stops is not None:
                stops[todo[empty]] = slot[empty]
            match = ~empty
            match[match] = hashes[ids[match]] == h[todo[match]]
            out[todo[match]] = ids[match]
            go = ~(empty | match)
            todo, slot = todo[go], (slot[go] + 1) & int(mask)
        return out

    def lookup1(self, h: int) -> tuple[int, int]:
        """lookup_stops of one hash (a Python int): (id or -1, the empty slot its probe stopped at or -1)."""
        table, hashes = self.table, self.hashes.a
        mask = table.size - 1
        slot = h & mask
        while True:
            i = int(table[slot])
            if i == self._EMPTY:
                return -1, slot
            if int(hashes[i]) == h:
                return i, -1
            slot = (slot + 1) & mask

    def insert1(self, i: int, h: int, stop: int) -> None:
        """insert of one node (its hash recorded, not present); `stop` as lookup1 gave it."""
        if self._FILL * (self.count + 1) > self.table.size:
            self._grow(self.count + 1)
            stop = -1
        table = self.table
        if stop < 0:
            mask = table.size - 1
            stop = h & mask
            while int(table[stop]) != self._EMPTY:
                stop = (stop + 1) & mask
        table[stop] = i
        self.count += 1

    def record(self, h: np.ndarray) -> None:
        """Store the hashes of the nodes just appended to the store, in id order."""
        self.hashes.extend(h)

    def insert(self, ids: np.ndarray, h: np.ndarray, stops: np.ndarray | None = None) -> None:
        """Index nodes `ids` (their hashes recorded, none of them present). `stops`: where lookup_stops
        found each one missing, with no insert since; each probe then goes on from there (several new ids
        may have stopped at one slot: one lands, the others probe on) instead of walking its cluster again."""
        if self._FILL * (self.count + ids.size) > self.table.size:
            self._grow(self.count + ids.size)
            stops = None  # a new table: homes again
        self._place(ids, h, stops)
        self.count += ids.size

    def _place(self, ids: np.ndarray, h: np.ndarray, start: np.ndarray | None = None) -> None:
        mask = self.table.size - 1
        slot = (h & np.uint64(mask)).view(np.int64) if start is None else start  # below 2^63: the same value
        ids = ids.astype(np.int32, copy=False)
        while ids.size:
            free = self.table[slot] == self._EMPTY
            fs, fi = slot[free], ids[free]
            self.table[fs] = fi  # several ids for one free slot: one of them lands (no sort needed)
            won = np.zeros(ids.size, bool)
            won[free] = self.table[fs] == fi  # ids are distinct: exactly the one that landed
            ids, slot = ids[~won], (slot[~won] + 1) & mask

    #: Slots read, or entries placed, per step of a rehash (`_grow`): its temporaries are a few bytes per entry of a
    #: step. Placed all at once, the entries' ids, hashes, homes and probe masks were ~40 bytes per entry at
    #: once: FlashAttention vs naive at S = 512 peaked in the last rehash (16.7 M entries), 3115 MiB against
    #: 2681 MiB before and after it (bench/results/i11fa-2026-12-06s39).
    _REHASH_STEP = 1 << 21

    def _grow(self, need: int) -> None:
        cap = self.table.size
        while self._FILL * need > cap:
            cap *= 2
        step = self._REHASH_STEP
        old = np.concatenate([t[t != self._EMPTY] for t in
                              (self.table[s:s + step] for s in range(0, self.table.size, step))])
        try:  # in place where nothing else refers to the table: the pages it has are reused, not faulted in again
            self.table.resize(cap, refcheck=True)
        except ValueError:
            self.table = np.empty(cap, np.int32)
        self.table.fill(self._EMPTY)
        # in steps (linear probing places entries in any order: each lands in the first free slot from its home)
        for s in range(0, old.size, step):
            ids = old[s:s + step]
            self._place(ids, self.hashes.a[ids])


@dataclass(frozen=True)
class Node:
    """One node, for inspection: `store.node(i)`."""

    id: int
    op: Op
    sort: Sort
    aux: int
    kids: tuple[int, ...]

    @property
    def mods(self) -> Mods:
        return mods(self.aux)


class TermStore:
    """The hash-consed DAG of one equivalence question (both kernels' terms share it)."""

    def __init__(self) -> None:
        self._op = _Column(np.uint8)
        self._sort = _Column(np.uint8)
        self._aux = _Column(np.int64)
        self._off = _Column(np.int64)
        self._nk = _Column(np.int16)
        self._kids = _Column(np.int32, 4096)  # child ids: int32 like the hash index's (ids < 2^31)
        self._shape = _Column(np.uint64)  # shape hash per node (_shapes_of)
        self._index = _HashIndex()  # structural hash -> id (the first node of that hash)
        self._spill: dict[tuple, int] = {}  # full keys of rows whose hash collided with another row
        self.inputs: list[str] = []  # buffer names of INPUT leaves (aux >> 40)
        self._input_no: dict[str, int] = {}
        self._opaque = 0

    # ------------------------------------------------------------------ columns
    def __len__(self) -> int:
        return self._op.n

    @property
    def op(self) -> np.ndarray:
        return self._op.view

    @property
    def sort(self) -> np.ndarray:
        return self._sort.view

    @property
    def aux(self) -> np.ndarray:
        return self._aux.view

    @property
    def shape(self) -> np.ndarray:
        """Per node, a hash of its structure with input elements forgotten (see _shapes_of)."""
        return self._shape.view

    @property
    def nkids(self) -> np.ndarray:
        return self._nk.view

    def kid(self, ids: np.ndarray, j: int) -> np.ndarray:
        """The j-th child of each id (ids must all have more than j children)."""
        return self._kids.a[self._off.a[ids] + j].astype(np.int64)

    def kid_columns(self, ids: np.ndarray, k: int) -> list[np.ndarray]:
        """[kid(ids, 0), ..., kid(ids, k - 1)] with the offsets gathered once (ids must all have at
        least k children)."""
        off = self._off.a[ids]
        kids = self._kids.a
        return [kids[off + j].astype(np.int64) for j in range(k)]

    def node_keys(self) -> np.ndarray:
        """Per node, its operation, sort and arity in one int32 (op | sort << 8 | nkids << 16): one
        gather compares all three (proofs/instances.py tests them for every node of every member).
        Computed on demand, not kept: 4 bytes per node while the caller holds it."""
        key = self.nkids.astype(np.int32)
        key <<= 8
        key |= self.sort
        key <<= 8
        key |= self.op
        return key

    def kids(self, i: int) -> tuple[int, ...]:
        o, k = int(self._off.a[i]), int(self._nk.a[i])
        return tuple(self._kids.a[o:o + k].tolist())  # Python ints (tolist: no per-element int())

    def node(self, i: int) -> Node:
        i = int(i)
        return Node(i, Op(int(self._op.a[i])), SORTS[int(self._sort.a[i])], int(self._aux.a[i]), self.kids(i))

    def sort_of(self, i: int) -> Sort:
        return SORTS[int(self._sort.a[int(i)])]

    # ------------------------------------------------------------------ interning
    def make(self, op: Op, sort: int | np.ndarray, aux: int | np.ndarray, kids: list[np.ndarray] | np.ndarray
             ) -> np.ndarray:
        """Ids of nodes (op, sort, aux, kids row), one per row; kids is (m, k) or a list of k (m,)
        arrays (broadcast together with sort and aux)."""
        if np.size(sort) == 1 and np.size(aux) == 1:  # one row: the scalar path (make1)
            if isinstance(kids, list):
                one = self._make_one(op, sort, aux, kids) if all(np.size(k) == 1 for k in kids) else None
            else:
                K = np.asarray(kids)
                one = self._make_one(op, sort, aux, list(K[0])) if K.ndim == 2 and K.shape[0] == 1 else None
            if one is not None:
                return np.array([one], np.int64)
        rows, h = _rows(op, sort, aux, kids)
        m = rows.shape[0]
        if m == 0:
            return np.zeros(0, np.int64)
        if m == 1:
            return self._intern(int(op), rows, h)
        uh, first, inv = _distinct(h)
        dup = np.nonzero(first[inv] != np.arange(m))[0]  # rows standing in for another of their hash
        if dup.size and not (rows[dup] == rows[first[inv[dup]]]).all():  # one hash, two rows: by content
            uniq, inv = np.unique(rows, axis=0, return_inverse=True)
            return self._intern(int(op), uniq, None)[inv.reshape(-1)]
        return self._intern(int(op), rows.take(first, axis=0), uh)[inv]  # (take: row fancy indexing is ~4x slower)

    @staticmethod
    def _scalar(x) -> int | None:
        """A size-1 argument of make as the int64 its row holds (None: a Python int out of int64's range,
        left to the array path)."""
        if hasattr(x, "item"):
            v = x.item() if np.ndim(x) == 0 else x.reshape(-1)[0].item()
            if isinstance(v, bool):
                return int(v)
            if not isinstance(v, int):
                return None  # a float array: the array path converts it as it does
            return v - (1 << 64) if v >= (1 << 63) else v  # an unsigned view: the same 64 bits
        v = int(x)
        return v if -(1 << 63) <= v < (1 << 63) else None

    def _make_one(self, op: Op, sort, aux, kids: list) -> int | None:
        vals = [self._scalar(sort), self._scalar(aux)] + [self._scalar(k) for k in kids]
        if any(v is None for v in vals):
            return None
        return self.make1(int(op), vals[0], vals[1], vals[2:])

    def make1(self, op: int, sort: int, aux: int, kids: list[int] | tuple[int, ...]) -> int:
        """make(op, sort, aux, kids) of one row, in Python ints (no arrays for the row): the same id, hash and
        columns as the array path (tests/equivalence/test_terms_make1.py). aux in int64's range."""
        k = len(kids)
        if k >= 2 and op in _COMMUTATIVE_INT and kids[0] > kids[1]:
            kids = [kids[1], kids[0], *kids[2:]]
        h = _mix1(_mix1(op * 0x100000001B3 + 7, sort), aux)
        for c in kids:
            h = _mix1(h, c)
        index = self._index
        found, stop = index.lookup1(h)
        if found >= 0:  # verify: a hash collision must never merge two different terms
            o = int(self._off.a[found])
            if int(self._op.a[found]) == op and int(self._sort.a[found]) == sort and int(self._aux.a[found]) == aux \
                    and int(self._nk.a[found]) == k and self._kids.a[o:o + k].tolist() == list(kids):
                return found
            return self._spill_row(op, np.array([sort, aux, *kids], np.int64), np.uint64(h))
        i = self._op.n
        if i + 1 > _MAX_NODES:  # child ids are stored as int32
            raise MemoryError(f"term store: more than {_MAX_NODES} nodes")
        self._op.append(op)
        self._sort.append(sort)
        self._aux.append(aux)
        self._nk.append(k)
        koff = self._kids.n
        for c in kids:
            self._kids.append(c)
        self._off.append(koff)
        # _shapes_of's hash of this row
        sh = self._shape.a
        g = _mix1(_mix1(op * 0x9E3779B1 + 11, sort), aux >> 40 if op == Op.INPUT else aux)
        ks = [int(sh[c]) for c in kids]
        if k >= 2 and op in _COMMUTATIVE_INT and ks[0] > ks[1]:
            ks[0], ks[1] = ks[1], ks[0]
        for v in ks:
            g = _mix1(g, v)
        self._shape.append(g)
        index.hashes.append(h)
        index.insert1(i, h, stop)
        return i

    def find(self, op: Op, sort: int | np.ndarray, aux: int | np.ndarray, kids: list[np.ndarray] | np.ndarray
             ) -> np.ndarray:
        """Ids of the nodes `make` would return for these rows where they exist already, -1 where not
        (nothing is added)."""
        rows, h = _rows(op, sort, aux, kids)
        if rows.shape[0] == 0:
            return np.zeros(0, np.int64)
        found = self._index.lookup(h)
        hit = found >= 0
        if hit.any():
            same = self._same_rows(int(op), found[hit], rows[hit])
            if not same.all():  # the hash's first node is another row: the row may be in the spill table
                bad = np.nonzero(hit)[0][~same]
                for b in bad.tolist():
                    found[b] = self._spill.get((int(op), *rows[b].tolist()), -1)
        return found

    def _same_rows(self, op: int, f: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Whether stored nodes f are exactly rows (sort, aux, kids...) of op."""
        same = (self._op.a[f] == op) & (self._sort.a[f] == rows[:, 0]) & (self._aux.a[f] == rows[:, 1]) \
            & (self._nk.a[f] == rows.shape[1] - 2)
        off = self._off.a[f] if rows.shape[1] > 2 else None  # gathered once for every child
        for j in range(rows.shape[1] - 2):
            idx = np.nonzero(same)[0]
            same[idx] = self._kids.a[off[idx] + j] == rows[idx, 2 + j]
        return same

    def _intern(self, op: int, rows: np.ndarray, h: np.ndarray | None) -> np.ndarray:
        """Ids of distinct rows (sort, aux, kids...) of one op; h their structural hashes."""
        if h is None:
            h = np.full(rows.shape[0], np.uint64(op * 0x100000001B3 + 7), np.uint64)
            for j in range(rows.shape[1]):
                h = _mix(h, rows[:, j].view(np.uint64))
        found, stops = self._index.lookup_stops(h)
        hit = found >= 0
        if hit.any():  # verify: a hash collision must never merge two different terms
            same = self._same_rows(op, found[hit], rows.compress(hit, axis=0))
            if not same.all():
                bad = np.nonzero(hit)[0][~same]
                found[bad] = -1
                hit[bad] = False
                for b in bad.tolist():  # collided rows live in the spill table, keyed by their full row
                    found[b] = self._spill_row(op, rows[b], h[b])
                    hit[b] = True
        new = np.nonzero(~hit)[0]
        if new.size:
            start = self._op.n
            if start + new.size > _MAX_NODES:  # child ids are stored as int32
                raise MemoryError(f"term store: more than {_MAX_NODES} nodes")
            sub = rows.take(new, axis=0)
            self._op.extend(np.full(new.size, op, np.uint8))
            self._sort.extend(sub[:, 0].astype(np.uint8))
            self._aux.extend(sub[:, 1])
            k = rows.shape[1] - 2
            self._nk.extend(np.full(new.size, k, np.int16))
            koff = self._kids.extend(sub[:, 2:].reshape(-1)) if k else self._kids.n
            self._off.extend(koff + k * np.arange(new.size, dtype=np.int64))
            self._shape.extend(self._shapes_of(op, sub))
            ids = start + np.arange(new.size, dtype=np.int64)
            found[new] = ids
            self._index.record(h[new])
            self._index.insert(ids, h[new], stops[new])
        return found

    def _shapes_of(self, op: int, rows: np.ndarray) -> np.ndarray:
        """Shape hashes of new rows: the structure with every input leaf's element forgotten (its
        buffer and sort kept), commutative operands unordered. Equal terms, equal shapes; equal
        shapes are only a hint (proofs/instances.py checks what it relies on)."""
        aux = rows[:, 1] >> np.int64(40) if op == Op.INPUT else rows[:, 1]
        h = _mix(np.full(rows.shape[0], np.uint64(op * 0x9E3779B1 + 11), np.uint64), rows[:, 0].view(np.uint64))
        h = _mix(h, aux.view(np.uint64))
        ks = self._shape.a[rows[:, 2:]]
        if op in _COMMUTATIVE_INT and ks.shape[1] >= 2:
            ks = ks.copy()
            ks[:, :2] = np.sort(ks[:, :2], axis=1)
        for j in range(ks.shape[1]):
            h = _mix(h, ks[:, j])
        return h

    def _spill_row(self, op: int, row: np.ndarray, h: np.uint64) -> int:
        key = (op, *row.tolist())
        got = self._spill.get(key)
        if got is not None:
            return got
        i = self._op.n
        k = row.size - 2
        self._op.extend(np.array([op], np.uint8))
        self._sort.extend(np.array([row[0]], np.uint8))
        self._aux.extend(np.array([row[1]], np.int64))
        self._nk.extend(np.array([k], np.int16))
        self._off.extend(np.array([self._kids.extend(row[2:]) if k else self._kids.n], np.int64))
        self._shape.extend(self._shapes_of(op, row[None, :]))
        self._index.record(np.array([h], np.uint64))  # its hash column (not indexed)
        self._spill[key] = i
        return i

    # ------------------------------------------------------------------ leaves
    def const(self, sort: int | np.ndarray, bits: np.ndarray | int) -> np.ndarray:
        b = np.asarray(bits)
        if b.dtype == np.bool_:
            b = b.astype(np.int64)
        v = b.astype(np.uint64).view(np.int64) if b.dtype.kind == "u" else b.astype(np.int64)
        return self.make(Op.CONST, sort, v.reshape(-1) if v.ndim else v, [])

    def input(self, buffer: str, elements: np.ndarray, sort: int) -> np.ndarray:
        """INPUT leaves of `elements` of input buffer `buffer` (read as `sort`)."""
        no = self._input_no.get(buffer)
        if no is None:
            no = self._input_no[buffer] = len(self.inputs)
            self.inputs.append(buffer)
        e = np.asarray(elements, dtype=np.int64).reshape(-1)
        return self.make(Op.INPUT, sort, (np.int64(no) << np.int64(40)) | e, [])

    def input_name(self, aux: int) -> tuple[str, int]:
        return self.inputs[int(aux) >> 40], int(aux) & ((1 << 40) - 1)

    def opaque(self, sort: int, count: int) -> np.ndarray:
        """`count` fresh leaves equal to nothing else."""
        first = self._opaque
        self._opaque += count
        return self.make(Op.OPAQUE, sort, np.arange(first, first + count, dtype=np.int64), [])

    # ------------------------------------------------------------------ printing
    def show(self, i: int, depth: int = 6, limit: int = 400) -> str:
        """A readable rendering of term i (subterms beyond `depth` shown as #id)."""
        out = self._show(int(i), depth)
        return out if len(out) <= limit else out[:limit - 3] + "..."

    def _show(self, i: int, depth: int) -> str:
        n = self.node(i)
        if n.op is Op.CONST:
            return _const_text(n.aux, n.sort)
        if n.op is Op.INPUT:
            buf, e = self.input_name(n.aux)
            return f"{buf}[{e}]"
        if n.op is Op.OPAQUE:
            return f"?{n.aux}"
        if depth <= 0:
            return f"#{i}"
        name = n.op.name.lower()
        extra = n.mods.describe() if n.op not in (Op.CONST, Op.INPUT, Op.OPAQUE) else ""
        args = ", ".join(self._show(k, depth - 1) for k in n.kids)
        return f"{name}{'.' + extra if extra else ''}.{n.sort}({args})"


def _const_text(aux: int, sort: Sort) -> str:
    bits = int(aux) & ((1 << 64) - 1)
    if sort.kind is Kind.FLOAT:
        from semantics.formats import decode

        v = float(decode(np.asarray([bits], dtype=np.uint64).astype(sort.format.dtype), sort.format)[0])
        return repr(v)
    if sort.kind is Kind.PRED:
        return "true" if bits else "false"
    return hex(bits & ((1 << sort.width) - 1)) if sort.width < 64 else hex(bits)
