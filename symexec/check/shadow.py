"""Shadow values for checking: what each register and memory byte *depends on*, per lane.

Two facts travel with every value in check mode:
- a taint byte: bit DATA when the value depends on input tensor data, bit SCHED when it depends on
  the schedule (a value another CTA wrote, an atomic's old value, a timer: another run of the same
  input may see another), bit UNINIT when it was computed from shared memory that no thread had
  written, bit UNDEF when from local memory the thread never wrote (neither is a defined value),
  bit STALE when its bits may not be its value (read after a loop summary skipped iterations that
  write global memory: state.py `SkippedWrites`; exec.py audits where such a value may go);
- a term hash: a 64-bit value number of the expression that computed it. Values that do not depend
  on data are numbered by their concrete bits (they are the same for every input of the launch);
  data-dependent ones by (operation, operand numbers), operands of commutative operations sorted,
  so that `a + b` on one lane and `b + a` on another get the same number. Equal numbers mean the
  same expression, hence equal values for every input: this is how several lanes writing one
  address in one instruction are proved to write the same value (Triton's reductions do this).
  Cross-lane instructions whose result cannot be numbered lane-locally get fresh numbers, so no
  equality is ever claimed for them without reason.
- a real-arithmetic hash: the number of the value read as a real-number expression, where sums
  are flattened (the hash of a sum is the sum of its terms' hashes, so association and order do
  not matter) and fma(a, b, c) = a*b + c. Lanes whose values agree here but not bit for bit
  computed the same real quantity with different roundings (e.g. a reduction whose first step the
  compiler contracted into an fma on one operand): their writes to one address land a value that
  is correct up to rounding, which is reported as a note, not as a race.
"""

from __future__ import annotations

import enum
import functools
import hashlib
from dataclasses import dataclass

import numpy as np

from ..memory import scatter_rows
from ..opcodes import LaneScope, facts, value_guarded
from ..paged import PageLayout, PagedArray, constant, element_indices
from .terms import LoadRecord, OpRecord, TermLog

DATA = np.uint8(1)
UNINIT = np.uint8(2)
SCHED = np.uint8(4)
UNDEF = np.uint8(8)  # read from a thread's local memory before anything was written there
STALE = np.uint8(16)  # bits that may not be the value: may only flow where bits do not matter (exec.py audit)
DEP = np.uint8(DATA | SCHED)  # depends on something other than the launch's fixed values

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)

# Which instructions commute their first two operands, which are warp-collective (a lane's result
# is a function of the whole warp's operands and of the memory they name: numbered from all of
# them, the lane and the destination index, so that two warps doing the same thing on the same
# values get the same numbers and no two lanes do), which of those give every lane the same value,
# and which depend on several warps' registers (fresh numbers, no equality ever claimed): the
# opcode table, symexec.opcodes.


def some(a) -> bool:
    """Is some element of `a` nonzero? `a.any()` costs a Python-level call into numpy's reduction
    machinery (about 3 us on a few hundred lanes); np.count_nonzero is one C call (about 0.6 us),
    and check mode asks this a few times per instruction."""
    return np.count_nonzero(a) != 0


def every(a) -> bool:
    """Is every element of `a` nonzero (as `a.all()`, at count_nonzero's cost)? (An array's own
    `size` attribute: np.size is a Python-level call, 0.5 us of a 1.2 us test.)"""
    if type(a) is np.ndarray:
        return np.count_nonzero(a) == a.size
    return np.count_nonzero(a) == np.size(a)


# Row reductions over a short last axis (a load's bytes per lane: 1 to 16 of them). numpy's reduce along
# an axis of a few elements runs its inner loop once per row: on a 16384-lane batch x 4 bytes,
# np.bitwise_or.reduce(a, axis=1) and b.any(axis=1) take ~0.4 ms, reading each row as one 4-byte integer
# ~0.025 ms. The results are the same arrays, so numbers, taints and terms do not change.
_ROW_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
# Past this many words a row (a bulk copy's or a tensor row's bytes: 4096 of them, 512 words) is reduced by
# one numpy reduction along the axis instead of a Python loop over its words (gemm_fp16 sm_100a: 1632 tests
# of 4096-byte rows, 9.9 s in the loop). Word-wise or/and, so the same results.
_LOOP_WORDS = 8
_ROW_ONES = {k: t(int.from_bytes(b"\x01" * k, "little")) for k, t in _ROW_UINT.items()}


def _as_words(a: np.ndarray) -> np.ndarray | None:
    """A (m, k) array of 1-byte elements as (m, k / w) unsigned words of w = min(k, 8) bytes; None
    when k is not 1, 2, 4 or a multiple of 8."""
    m, k = a.shape
    w = min(k, 8)
    if w not in _ROW_UINT or k % w:
        return None
    return np.ascontiguousarray(a).view(_ROW_UINT[w]).reshape(m, k // w)


def rows_any(b: np.ndarray) -> np.ndarray:
    """b.any(axis=1) for a (m, k) bool array."""
    v = _as_words(b) if b.ndim == 2 and b.dtype == np.bool_ else None
    if v is None:
        return b.any(axis=1)
    if v.shape[1] > _LOOP_WORDS:
        return np.bitwise_or.reduce(v, axis=1) != 0
    out = v[:, 0] != 0
    for j in range(1, v.shape[1]):
        out |= v[:, j] != 0
    return out


def rows_all(b: np.ndarray) -> np.ndarray:
    """b.all(axis=1) for a (m, k) bool array (a True byte is 1)."""
    v = _as_words(b) if b.ndim == 2 and b.dtype == np.bool_ else None
    if v is None:
        return b.all(axis=1)
    ones = _ROW_ONES[v.itemsize]
    if v.shape[1] > _LOOP_WORDS:
        return (v == ones).all(axis=1)
    out = v[:, 0] == ones
    for j in range(1, v.shape[1]):
        out &= v[:, j] == ones
    return out


def rows_or(a: np.ndarray) -> np.ndarray:
    """np.bitwise_or.reduce(a, axis=1) for a (m, k) uint8 array (k > 0)."""
    v = _as_words(a) if a.ndim == 2 and a.dtype == np.uint8 else None
    if v is None:
        return np.bitwise_or.reduce(a, axis=1)
    if v.shape[1] > _LOOP_WORDS:
        w = np.bitwise_or.reduce(v, axis=1)
    else:
        w = v[:, 0].copy()
        for j in range(1, v.shape[1]):
            w |= v[:, j]
    shift = 8 * v.itemsize // 2
    while shift >= 8:  # fold the word's bytes onto its low byte
        w |= w >> w.dtype.type(shift)
        shift //= 2
    return w.astype(np.uint8)  # the low byte (astype to a narrower unsigned type keeps it)


def splitmix(x: np.ndarray) -> np.ndarray:
    return _splitmix_owned(np.array(x, dtype=np.uint64))


_U64 = 0xFFFFFFFFFFFFFFFF
_M1_INT, _M2_INT = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def _splitmix_int(x: int) -> int:
    """splitmix64's finaliser on one 64-bit Python int (the same bits as the array form): a scalar
    costs a few integer operations instead of numpy's per-call overhead and overflow state."""
    x = ((x ^ (x >> 30)) * _M1_INT) & _U64
    x = ((x ^ (x >> 27)) * _M2_INT) & _U64
    return x ^ (x >> 31)


#: splitmix64's constants (shifts 30, 27, 31, multipliers M1, M2) and mix's step
#: (multiplier STEP, shift 32) as
#: arrays of one shape, per shape of a lane vector: a numpy scalar operand costs its ufunc call
#: ~0.1 us of scalar conversion, which is a quarter of a call on a few hundred lanes (2.7 -> 2.1 us
#: per splitmix on 256 lanes). The same bits either way.
_SHAPED: dict[tuple, tuple[np.ndarray, ...]] = {}
_SCRATCH: dict[tuple, np.ndarray] = {}  # per shape of _SHAPED: mix's scratch words
_SHAPED_MAX = 1 << 14  # lanes: beyond it the arithmetic, not the call, is the cost


def _constants(shape: tuple) -> tuple | None:
    got = _SHAPED.get(shape)
    if got is None:
        if len(shape) != 1 or shape[0] > _SHAPED_MAX or len(_SHAPED) >= 64:
            return None
        got = _SHAPED[shape] = tuple(np.full(shape, v, np.uint64)
                                      for v in (30, _M1, 27, _M2, 31, _STEP_INT, 32))
        for a in got:
            a.flags.writeable = False
    return got


def _splitmix_owned(x: np.ndarray, c: tuple | None = None, tmp: np.ndarray | None = None) -> np.ndarray:
    """splitmix64's finaliser, in place on an array the caller owns; `c`: _constants' tuple for its
    shape (or _SCALARS), `tmp`: a scratch array of its shape for the shifts (fewer allocations)."""
    if x.ndim == 0:
        v = _splitmix_int(int(x))
        return np.asarray(np.uint64(v))
    s30, m1, s27, m2, s31 = (c or _constants(x.shape) or _SCALARS)[:5]
    if tmp is not None and tmp.shape == x.shape:
        x ^= np.right_shift(x, s30, out=tmp)
        x *= m1
        x ^= np.right_shift(x, s27, out=tmp)
        x *= m2
        x ^= np.right_shift(x, s31, out=tmp)
        return x
    x ^= x >> s30
    x *= m1
    x ^= x >> s27
    x *= m2
    x ^= x >> s31
    return x


_POWERS: np.ndarray = np.zeros(0, np.uint64)


def row_number(key: int, H: np.ndarray) -> np.ndarray:
    """One number per row of byte numbers H (k, nbytes), order-sensitive: the value a store of those
    bytes holds. Wide rows (asynchronous operations move kilobytes) are combined with a polynomial
    in one vectorised pass instead of one mix per byte."""
    nb = H.shape[1]
    if nb <= 2:
        return mix(key, *[H[:, i] for i in range(nb)])
    global _POWERS
    if _POWERS.size < nb:
        _POWERS = splitmix(np.arange(1, 2 * nb + 1, dtype=np.uint64)) | np.uint64(1)
    # sum of H[:, i] * POWERS[i] mod 2^64 as one integer matrix-vector product (numpy's integer matmul
    # wraps like the ufuncs; the sum along a short last axis runs its inner loop once per row: 8.5 vs
    # 1.8 us on 256 x 4)
    poly = H.astype(np.uint64, copy=False) @ _POWERS[:nb]
    return mix(key, poly, np.uint64(nb))


def _bytes_number(th: np.ndarray, tp: np.ndarray) -> np.ndarray:
    """The number of a value read from bytes of several values (or parts of one): of its bytes'
    numbers `th` and position codes `tp` (k, nb), mix(BYTES, row_number(BYTES, th), row_number(BYTES, tp)),
    both row numbers from one call (row_number is row by row)."""
    k = th.shape[0]
    both = row_number(BYTES_KEY, np.concatenate((th, tp.astype(np.uint64)), axis=0))
    return mix(BYTES_KEY, both[:k], both[k:])


def mix(key: int, *parts: np.ndarray) -> np.ndarray:
    """The number of (key, part, part, ...): parts are combined one by one into a 64-bit state,
    s = step(s) ^ part from s = key, and the state is finished with splitmix64's finaliser.

    step(x) = y ^ (y >> 32), y = x * STEP (an odd constant), is a bijection of 64-bit words (an odd
    multiplier is invertible mod 2^64 and an xorshift is invertible), so for one prefix distinct last
    parts give distinct states, and the finaliser is a bijection too: two part tuples of one length
    get one number only where step(s) ^ p = step(s') ^ p' for different prefix states s, s', i.e.
    where p ^ p' hits step(s) ^ step(s'), which the multiply (carries upwards) and the xorshift (high
    bits downwards) make a pseudo-random 64-bit word even for prefixes that differ in a few low bits
    (lane numbers, write indices): ~2^-64 per pair, as for the splitmix chain this replaces
    (s = splitmix(s ^ part) + golden per part), at 4 numpy calls per array part instead of 11. Numbers
    are only ever compared for equality (races.same_instruction_code, Tracker._leaves), never
    printed, so reports do not depend on which combine it is.

    Leading scalar parts are combined as Python ints; from the first array part on, in place on one
    array. The int and array forms compute the same bits (a constant's number must not depend on
    whether its bits came as an immediate or as a register's lanes)."""
    return _mix_from(key & _U64, parts)


_STEP_INT = 0xD6E8FEB86659FD93
_STEP, _S32 = np.uint64(_STEP_INT), np.uint64(32)
_SCALARS = (_S30, _M1, _S27, _M2, _S31, _STEP, _S32)  # _constants' values as numpy scalars


def _step_int(x: int) -> int:
    y = (x * _STEP_INT) & _U64
    return y ^ (y >> 32)


def _step(h: np.ndarray) -> np.ndarray:
    """step(h) of mix's combine, as a new array (h is not changed)."""
    c = _SHAPED.get(h.shape) or _constants(h.shape) or _SCALARS
    y = np.multiply(h, c[5])
    y ^= y >> c[6]
    return y


def _finish(s: np.ndarray) -> np.ndarray:
    """mix's last step, splitmix64's finaliser, in place on an array the caller owns."""
    return _splitmix_owned(s)


def _mix_from(h: int | np.ndarray, parts) -> np.ndarray:
    """mix's combine from state h (an int or an array; never changed in place): mix(key, a, b) is
    _mix_from(key, (a, b)); _mix_from(number, (k,)) numbers k under a number computed before."""
    i, n = 0, len(parts)
    if type(h) is not int and np.ndim(h) == 0:
        h = int(h) & _U64
    if type(h) is int:
        while i < n:  # leading scalars as Python ints
            p = parts[i]
            if type(p) is np.ndarray and p.ndim:
                break
            if not isinstance(p, (int, np.integer)) and np.ndim(p):
                break
            h = _step_int(h) ^ (int(p) & _U64)
            i += 1
        if i == n:
            return np.asarray(np.uint64(_splitmix_int(h)))
        p = parts[i]
        if type(p) is not np.ndarray or p.dtype != np.uint64:
            p = np.asarray(p, dtype=np.uint64)
        s = np.bitwise_xor(p, _step_int(h), dtype=np.uint64)  # a new array: ours
        owned = True
        i += 1
    elif i == n:
        s, owned = np.array(h, dtype=np.uint64), True
    else:
        s, owned = np.asarray(h, dtype=np.uint64), False
    c = _SHAPED.get(s.shape) or _constants(s.shape) or _SCALARS
    # the shifted words go to a scratch array of the lane shape (out=): the same ufunc calls without
    # allocating a temporary for each shift (used only inside this call, never returned)
    tmp = _SCRATCH.get(s.shape) if c is not _SCALARS else None
    if tmp is None and c is not _SCALARS:
        tmp = _SCRATCH[s.shape] = np.empty(s.shape, np.uint64)
    for p in parts[i:]:
        if type(p) is not np.ndarray or p.dtype != np.uint64:
            p = np.asarray(p, dtype=np.uint64)
        if owned:
            y = np.multiply(s, c[5], out=s)
        else:
            y, owned = np.multiply(s, c[5]), True  # a new array: ours
        if tmp is not None:
            y ^= np.right_shift(y, c[6], out=tmp)
        else:
            y ^= y >> c[6]
        if p.shape == y.shape or p.ndim == 0:
            y ^= p
            s = y
        else:  # a part of a larger shape: broadcast
            s = np.bitwise_xor(y, p)
            c, tmp = _SCALARS, None
    return _splitmix_owned(s, c, tmp)


#: product_numbers' (2, 1) leading states per (key, k, rkey): a kernel has a few product instructions, each
#: numbered on every pass (~1.5 us to build from Python ints per call; the same words). Cleared when full.
_PRODUCT_FIRST: dict[tuple, np.ndarray] = {}


def product_numbers(key: int, k: int, a: np.ndarray, b: np.ndarray, c: np.ndarray | None, rkey: int,
                    x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mix(key, k, min(a, b), max(a, b)[, c]), mix(rkey, min(x, y), max(x, y))) of (n,) arrays, both in one
    pass over (2, n) arrays: a commutative product's number and its real-arithmetic number
    (Tracker._result, Tracker._real), with half the ufunc calls (numpy's cost per call is most of a
    call on a few hundred lanes). The same bits as the two mix calls (tests/check/test_mix.py): mix
    is elementwise, and each row starts from its own state after the leading scalars (the first
    array part p gives p ^ step(h), as in _mix_from)."""
    n = a.shape[0]
    s = np.empty((2, n), np.uint64)
    hi = np.empty((2, n), np.uint64)
    # each row's min and max written in place (4 calls; stacking the operands first took 6 more)
    np.minimum(a, b, out=s[0])
    np.minimum(x, y, out=s[1])
    np.maximum(a, b, out=hi[0])
    np.maximum(x, y, out=hi[1])
    first = _PRODUCT_FIRST.get((key, k, rkey))
    if first is None:
        if len(_PRODUCT_FIRST) >= 1 << 12:
            _PRODUCT_FIRST.clear()
        first = _PRODUCT_FIRST[(key, k, rkey)] = np.array(
            [[_step_int(_step_int(key & _U64) ^ (int(k) & _U64))], [_step_int(rkey & _U64)]], np.uint64)
        first.flags.writeable = False
    got = _PAIR_PASS.get(n)
    if got is None:
        cs = _pair_constants(n)
        got = (_SCALARS, None, _SCALARS, None) if cs is None else (cs, cs[7], _constants((n,)), cs[7][0])
        if cs is not None:  # (only shapes _pair_constants keeps: a bounded table)
            _PAIR_PASS[n] = got
    cs, tmp, c1, tmp1 = got
    s ^= first
    s *= cs[5]
    s ^= s >> cs[6] if tmp is None else np.right_shift(s, cs[6], out=tmp)
    s ^= hi
    if c is not None:  # the number's third part (fma's addend); the real number has two
        s0 = s[0]
        s0 *= c1[5]
        s0 ^= s0 >> c1[6] if tmp1 is None else np.right_shift(s0, c1[6], out=tmp1)
        s0 ^= c
    _splitmix_owned(s, cs, tmp)
    return s[0], s[1]


#: _constants' arrays of shape (2, n) and a (2, n) scratch array, per n (product_numbers' pass): a numpy
#: scalar operand costs its ufunc call a scalar conversion, as for _constants (the same bits either way)
_PAIR_SHAPED: dict[int, tuple[np.ndarray, ...]] = {}
#: per n, product_numbers' (2, n) constants and scratch, the (n,) constants and the scratch's first row (one lookup)
_PAIR_PASS: dict[int, tuple] = {}


def _pair_constants(n: int) -> tuple | None:
    got = _PAIR_SHAPED.get(n)
    if got is None:
        if 2 * n > _SHAPED_MAX or len(_PAIR_SHAPED) >= 64 or _constants((n,)) is None:
            return None
        consts = tuple(np.full((2, n), v, np.uint64) for v in (30, _M1, 27, _M2, 31, _STEP_INT, 32))
        for a in consts:
            a.flags.writeable = False
        got = _PAIR_SHAPED[n] = consts + (np.empty((2, n), np.uint64),)
    return got


def _spread(x, shape: tuple, owned: bool = False) -> np.ndarray:
    """np.broadcast_to(x, shape), a read-only view of x. A 0-d array x of a 1-D shape that is read-only,
    or that the caller owns (`owned`: made read-only here), as a zero-stride view made by ndarray's
    constructor (~0.6 us; broadcast_to's Python-level path ~2.3 us)."""
    if type(x) is np.ndarray and x.ndim == 0 and len(shape) == 1 and (owned or not x.flags.writeable):
        x.flags.writeable = False  # (a view of a read-only array is read-only, as broadcast_to's)
        return np.ndarray(shape, x.dtype, x, 0, (0,))
    return np.broadcast_to(x, shape)


_UNSIGNED_SCALARS = (np.uint8, np.uint16, np.uint32, np.uint64)
#: one value's number per 64-bit pattern (read-only 0-d arrays): a constant's number is a function of
#: its bits, and a kernel numbers a few constants (immediates, a predicated-off load's fill, uniform
#: registers) many times. Cleared when full.
_CONST_NUMBERS: dict[int, np.ndarray] = {}
_CONST_NUMBERS_MAX = 1 << 12


def const_number(value) -> np.ndarray:
    """The number of a value that does not depend on data: its bits. One value (a scalar or a 0-d
    array): the same number, read-only, from `_CONST_NUMBERS`."""
    if type(value) in _UNSIGNED_SCALARS:  # (int of an unsigned scalar: its astype(uint64) bits)
        v = int(value)
    else:
        a = np.asarray(value)
        if a.ndim:
            return mix(CONST_KEY, a.astype(np.uint64))
        v = int(a.astype(np.uint64))
    got = _CONST_NUMBERS.get(v)
    if got is None:
        if len(_CONST_NUMBERS) >= _CONST_NUMBERS_MAX:
            _CONST_NUMBERS.clear()
        got = _CONST_NUMBERS[v] = mix(CONST_KEY, np.uint64(v))
        got.flags.writeable = False
    return got


@functools.lru_cache(maxsize=None)
def key_of(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


CONST_KEY = key_of("const")
INPUT_KEY = key_of("input")
UNINIT_KEY = key_of("uninit")
BYTES_KEY = key_of("bytes")
RMUL_KEY = key_of("rmul")


class MemShadow:
    """Per-byte shadow of one buffer: term hash, position code (byte index | log2 width << 4),
    taint. Paged (symexec.paged): a byte's shadow exists once the byte is touched, so a buffer's
    shadow costs what the run touches, not the buffer's size."""

    def __init__(self, size: int, taint: int, key: int, salt: int, buffer: object = None) -> None:
        self.buffer = buffer  # the Buffer it shadows (input bytes name it in the term log)
        self.size = size

        def numbered(pages: np.ndarray) -> np.ndarray:  # an untouched byte is numbered by its position
            return mix(key, np.uint64(salt), element_indices(pages).astype(np.uint64))

        self.key, self.salt = key, salt  # an untouched byte's number: mix(key, salt, its offset)
        # the four are indexed together: one page lookup for all (and for another observer's shadow of
        # the same buffer that takes this layout: the equivalence shadow's, termshadow._Mem)
        self.layout = layout = PageLayout(size)
        self.cta = PagedArray(size, np.int32, constant(-1, np.int32), layout)  # CTA slot that last wrote each byte
        self.hash = PagedArray(size, np.uint64, numbered, layout)
        self.pos = PagedArray(size, np.uint8, constant(0xFF, np.uint8), layout)
        self.taint = PagedArray(size, np.uint8, constant(taint, np.uint8), layout)


@dataclass(frozen=True)
class Choice:
    """A data-dependent choice between register values (Tracker.taint_lanes): where it is made, the
    registers it reads (predicate, the region's or instruction's operands, its destinations) and
    whether it reads a special register."""

    pc: int
    reads: frozenset[str]
    special: bool


class Collective(enum.Enum):
    """Whose inputs a collective instruction's result depends on (LaneScope in symexec.opcodes); a lane-local
    instruction has none."""

    WARP = enum.auto()  # its warp's lanes (LaneScope WARP / WARP_UNIFORM: mma, match, vote, redux, ...)
    OPAQUE = enum.auto()  # every lane of the instruction (LaneScope MULTI_WARP: wgmma, tcgen05)


class RealRule(enum.Enum):
    """How Tracker._real makes a result's real-arithmetic number from its inputs' (the module docstring:
    sums flattened, fma(a, b, c) = a*b + c); NONE: the result's exact number."""

    NONE = enum.auto()
    ADD = enum.auto()  # add, 2 inputs: x + y
    SUB = enum.auto()  # sub, 2 inputs: x - y
    FMA = enum.auto()  # floating fma / mad, 3 inputs: x*y + z
    MUL = enum.auto()  # floating mul, 2 inputs: x*y
    NEG = enum.auto()  # neg, 1 input: -x
    MOVE = enum.auto()  # floating mov / cvt, 1 input: x


@dataclass(frozen=True, slots=True)
class _Plan:
    """What the tracker's rules read of one static instruction, decided from its opcode, modifiers and
    types once (Tracker.begin) instead of at every dynamic result: a kernel's loop runs the same few
    instructions thousands of times (dion_update: 8224 fma results). Every field is a function of the
    instruction alone, so the numbers are the same bits as when each rule read the instruction."""

    ins: object  # the instruction (keeps its id, the cache's key, from being reused)
    key: int  # key_of(ins.name): its results' numbers' key
    opcode: str
    collective: Collective | None  # None: lane-local
    uniform: bool  # LaneScope.WARP_UNIFORM
    commutative: bool  # symexec.opcodes: the first two operands commute
    symmetric: bool  # every operand order is the same result (max(a, b, c))
    real: RealRule
    real_inputs: int  # the number of inputs `real` applies to
    product_inputs: int  # a floating product (_real_product) with this many inputs (mul 2, fma / mad 3); 0: none
    f32x2: bool  # an .f32x2 type: pairwise on packed halves (sm_100)
    value_guarded: bool  # symexec.opcodes.value_guarded: a guarded register-only instruction (CheckedExec.begin)


def _make_plan(ins) -> _Plan:
    op = ins.opcode
    f = facts(op)
    lanes = f.lanes
    if op == "tcgen05" and ".ld" in ins.modifiers:
        lanes = LaneScope.LANE  # each lane's registers are the tensor-memory cells it reads
    collective = Collective.WARP if lanes in (LaneScope.WARP, LaneScope.WARP_UNIFORM) else \
        Collective.OPAQUE if lanes is LaneScope.MULTI_WARP else None
    floaty = any(ty.startswith(".f") or ty.startswith(".bf") for ty in ins.types)
    real, n = {"add": (RealRule.ADD, 2), "sub": (RealRule.SUB, 2), "neg": (RealRule.NEG, 1)}.get(op, (RealRule.NONE, -1))
    if floaty and op in ("fma", "mad"):
        real, n = RealRule.FMA, 3
    elif floaty and op == "mul":
        real, n = RealRule.MUL, 2
    elif floaty and op in ("mov", "cvt"):
        real, n = RealRule.MOVE, 1
    product = (2 if op == "mul" else 3) if floaty and op in ("fma", "mad", "mul") else 0
    return _Plan(ins, key_of(ins.name), op, collective, f.lanes is LaneScope.WARP_UNIFORM,
                 bool(f.commutative), bool(f.symmetric), real, n, product, any(t == ".f32x2" for t in ins.types),
                 value_guarded(ins))


#: id(instruction) -> its _Plan (the plan holds the instruction: an id is not reused while cached); cleared when full
_PLANS: dict[int, _Plan] = {}
_PLANS_MAX = 1 << 14


def plan_of(ins) -> _Plan:
    got = _PLANS.get(id(ins))
    if got is None or got.ins is not ins:
        if len(_PLANS) >= _PLANS_MAX:
            _PLANS.clear()
        got = _PLANS[id(ins)] = _make_plan(ins)
    return got


class Tracker:
    """Register and memory shadows for one batch, fed by GroupExec's read/write hooks.

    A value that does not depend on data is numbered by its bits, so its number is a function of the
    register's contents: such registers keep no numbers (`reg_hash` has no entry, or None) and no
    taint, and the number is computed only when a data-dependent instruction uses it (most of a
    kernel is address arithmetic on values that do not depend on data)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.reg_hash: dict[str, np.ndarray | None] = {}
        self.reg_real: dict[str, np.ndarray | None] = {}
        self.reg_taint: dict[str, np.ndarray | None] = {}
        # 64-bit registers holding two 32-bit elements (mov.b64 {a, b}; .f32x2 arithmetic, sm_100):
        # name -> (hashes, taints, real numbers), each (n, 2), so that the halves keep their own numbers
        self.reg_parts: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self.mem: dict[object, MemShadow] = {}
        self.counter = 0
        self.control = np.uint8(0)  # inside a data-dependent branch region: taint of its predicates
        self.explore = np.uint8(0)  # on one of two explored paths: taint of the predicates chosen
        self.terms: TermLog | None = None  # how data-dependent values were computed (terms.py), if asked
        # False: taints only. A data-dependent value's number is then `_unnumbered` (zeros, read-only),
        # never computed: for a run that reads no numbers (CheckState.numbered), where they were about a
        # third of the tracker's time (the FlashAttention pair's equivalence runs)
        self.numbered = True
        self.pc = -1
        # (taint, every(taint)) of the result _result numbered last (on_write_reg clears it first): _real's
        # test of the same array, without a second count (one C call and its wrapper per result)
        self.taint_every: tuple[np.ndarray, bool] | None = None
        self._zeros = np.zeros(n, dtype=np.uint8)
        self._unnumbered = np.zeros(n, dtype=np.uint64)
        self._unnumbered.flags.writeable = False
        self._all = np.arange(n)
        self._shape = (n,)
        self.begin(None)

    # -------------------------------------------------------------- per instruction
    def begin(self, ins) -> None:
        self.ins = ins
        self.plan = None if ins is None else plan_of(ins)
        # per input operand: its number (None: numbered by its bits, in_bits), real number, width, taint
        self.in_hash: list[np.ndarray | None] = []
        self.in_bits: list[np.ndarray | None] = []
        self.in_real: list[np.ndarray | None] = []
        self.in_width: list[int] = []
        self._in_taint: np.ndarray | None = None  # (n,) union of the inputs' taints; None: none
        self.in_parts: list[tuple | None] = []  # per input: its packed halves' shadows, if known
        self.in_taints: list[np.ndarray | None] = []
        self.in_value: list[np.ndarray] = []  # operand bits (kept only while recording terms)
        self.addr_taint = self._zeros
        self.loaded: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # (hash, pos, taint) per byte
        self.loaded_lanes: np.ndarray | None = None  # lanes whose bytes `loaded` holds
        self.load_cursor = 0
        self.load_elements: _LoadElements | None = None  # the load's elements, numbered together (_element)
        self.write_index = 0
        self.permute: np.ndarray | None = None
        self.store_map: tuple | None = None  # (lane, register, byte) per stored byte: a permuting store
        self.collective: Collective | None = None
        self.warp_key: np.ndarray | None = None  # step(its collective's lane numbers): _collective
        self.coll_taint: np.ndarray | bool | None = None  # a collective's result taint (False: none)
        # (the number _result gave, the real-arithmetic product of inputs 0 and 1 computed with it): _real
        self.product: tuple[np.ndarray, np.ndarray] | None = None
        self.address_mode = False
        if ins is not None:
            self.collective = self.plan.collective

    _PER_INSTRUCTION = ("ins", "plan", "pc", "in_hash", "in_bits", "in_real", "in_width", "_in_taint", "in_parts", "in_taints",
                        "in_value", "addr_taint", "loaded", "loaded_lanes", "load_cursor", "load_elements",
                        "write_index", "permute", "store_map", "collective", "warp_key", "coll_taint", "product", "address_mode")

    def save(self) -> tuple:
        """The per-instruction state (restore() puts it back after a nested instruction)."""
        return tuple(getattr(self, k) for k in self._PER_INSTRUCTION)

    def restore(self, saved: tuple) -> None:
        for k, v in zip(self._PER_INSTRUCTION, saved):
            setattr(self, k, v)

    @property
    def in_taint(self) -> np.ndarray:
        """(n,) taint of the instruction's inputs (read-only)."""
        return self._zeros if self._in_taint is None else self._in_taint

    @in_taint.setter
    def in_taint(self, value: np.ndarray) -> None:
        self._in_taint = self._lanes(value).astype(np.uint8)

    @property
    def tainted(self) -> bool:
        """Does some input of the instruction depend on data?"""
        return self._in_taint is not None and some(self._in_taint)

    def _lanes(self, x) -> np.ndarray:
        """x as an (n,) array: itself when it is one (np.broadcast_to's cost is per call)."""
        if type(x) is np.ndarray and x.shape == self._shape:
            return x
        return _spread(x, self._shape)

    def hash_in(self, i: int) -> np.ndarray:
        """(n,) number of input i."""
        h = self.in_hash[i]
        if h is None:
            bits = self.in_bits[i]
            if type(bits) is np.ndarray and bits.shape == self._shape and np.count_nonzero(bits != bits[0]) == 0:
                bits = bits[0]  # one value on every lane (a uniform register): numbered once, the same number
            h = self.in_hash[i] = _spread(const_number(bits), self._shape, owned=True)
        return h

    def real_in(self, i: int) -> np.ndarray:
        r = self.in_real[i]
        return self.hash_in(i) if r is None else r

    def taint_in(self, i: int) -> np.ndarray:
        t = self.in_taints[i]
        return self._zeros if t is None else self._lanes(t)

    # -------------------------------------------------------------- registers
    def on_read_reg(self, name: str, value: np.ndarray, width: int) -> None:
        h = self.reg_hash.get(name)
        if h is None:  # numbered by its bits, untainted
            self._input(None, None, width, None, value)
            return
        self._input(h, self.reg_taint.get(name), width, self.reg_real.get(name), value,
                    self.reg_parts.get(name) if width == 64 else None)

    def on_read_const(self, value: np.ndarray, width: int) -> None:
        self._input(None, None, width, None, value)

    def on_read_volatile(self, value: np.ndarray, width: int) -> None:
        """A value that another execution could see differently (a timer): schedule-dependent,
        numbered freshly."""
        self.counter += 1
        h = mix(key_of("volatile"), np.uint64(self.counter), np.arange(self.n, dtype=np.uint64))
        self._input(h, np.full(self.n, SCHED, np.uint8), width, h, value)

    def _input(self, h: np.ndarray | None, t: np.ndarray | None, width: int, r: np.ndarray | None,
               bits: np.ndarray | None = None, parts: tuple | None = None) -> None:
        """An operand: its number (None: numbered by `bits`), taint, width, real number, bits."""
        if self.address_mode:
            if t is not None:
                self.addr_taint = self.addr_taint | self._lanes(t)
            return
        if self.terms is not None:
            self.in_value.append(np.broadcast_to(np.asarray(bits if bits is not None else 0).astype(np.uint64),
                                                 (self.n,)))
        shape = self._shape  # (self._lanes, inlined: a few calls per operand of every instruction)
        self.in_hash.append(None if h is None else h if type(h) is np.ndarray and h.shape == shape
                            else _spread(h, shape))
        self.in_bits.append(bits)
        self.in_real.append(None if r is None else r if type(r) is np.ndarray and r.shape == shape
                            else _spread(r, shape))
        self.in_width.append(width)
        self.in_taints.append(t)
        if t is not None:
            cur = self._in_taint
            if cur is None:
                # a register's (n,) uint8 taint is never changed in place (a write gives the register a new
                # array; _in_taint is only ever replaced): the union starts as that array, not a copy
                self._in_taint = t if type(t) is np.ndarray and t.shape == shape and t.dtype == np.uint8 \
                    else self._lanes(t).astype(np.uint8)
            elif t is not cur:  # (x | x is x: a register read twice, or a taint shared by two registers)
                self._in_taint = cur | t
        self.in_parts.append(parts)

    # ---- packed pairs (two 32-bit elements in a 64-bit register)
    def _is_pack(self, width: int) -> bool:
        """mov.b64 d, {a, b}: the destination's halves are the two inputs."""
        return width == 64 and self.ins is not None and self.plan.opcode == "mov" and self.in_width == [32, 32] \
            and self.loaded is None and self.collective is None and not self.control

    def _is_unpack(self, width: int) -> bool:
        """mov.b64 {a, b}, d with d's halves known."""
        return width == 32 and self.ins is not None and self.plan.opcode == "mov" and self.in_width == [64] \
            and self.in_parts and self.in_parts[0] is not None and self.loaded is None and not self.control

    def _is_pairwise(self, width: int) -> bool:
        """An .f32x2 operation (sm_100): each half of the result comes from the same half of each input."""
        return width == 64 and self.ins is not None and self.plan.f32x2 \
            and self.in_width and all(w == 64 for w in self.in_width) and self.loaded is None \
            and self.collective is None and not self.control

    def _halves(self, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(hash, taint, real) (n, 2) of the halves of input i (derived from the whole if unknown)."""
        p = self.in_parts[i]
        if p is not None:
            return p
        h, t = self.hash_in(i), self.taint_in(i)
        halves = np.stack([mix(key_of("half"), np.uint64(e), h) for e in (0, 1)], axis=1)
        return halves, np.stack([t, t], axis=1), halves

    def _pair_result(self, value: np.ndarray, width: int):
        """(hash, taint, real, parts) of a packed result, or None if it is not one."""
        if self._is_pack(width):
            H = np.stack([self.hash_in(i) for i in range(2)], axis=1)
            T = np.stack([self.taint_in(i) for i in range(2)], axis=1).astype(np.uint8)
            R = np.stack([self.real_in(i) for i in range(2)], axis=1)
            self.write_index += 1
        elif self._is_pairwise(width):
            ins_h, ins_b, ins_t, ins_r = self.in_hash, self.in_bits, self._in_taint, self.in_real
            halves = [self._halves(i) for i in range(len(ins_h))]
            out = []
            v = self._lanes(value).astype(np.uint64)
            for e in (0, 1):  # evaluate each half as its own instruction on the inputs' halves
                self.in_hash = [hh[:, e] for hh, _, _ in halves]
                self.in_bits = [None] * len(halves)
                self.in_real = [rr[:, e] for _, _, rr in halves]
                self.in_taint = np.bitwise_or.reduce(np.stack([tt[:, e] for _, tt, _ in halves]), axis=0)
                k = self.write_index
                half = (v >> np.uint64(32 * e)) & np.uint64(0xFFFFFFFF)
                h, t = self._result(half, 32)
                h = np.broadcast_to(const_number(half) if h is None else h, (self.n,))
                t = self._zeros if t is None else t
                self.write_index = k
                out.append((h, t, self._real(h, t)))
            self.in_hash, self.in_bits, self._in_taint, self.in_real = ins_h, ins_b, ins_t, ins_r
            self.write_index += 1
            H = np.stack([o[0] for o in out], axis=1)
            T = np.stack([np.broadcast_to(o[1], (self.n,)) for o in out], axis=1).astype(np.uint8)
            R = np.stack([o[2] for o in out], axis=1)
        else:
            return None
        h = mix(key_of("pair"), H[:, 0], H[:, 1])
        r = mix(key_of("pair"), R[:, 0], R[:, 1])
        return h, (T[:, 0] | T[:, 1]).astype(np.uint8), r, (H, T, R)

    def on_write_reg(self, name: str, value: np.ndarray, width: int, mask: np.ndarray, full: bool,
                     old: np.ndarray | None = None) -> None:
        """Register `name` gets `value` on lanes `mask` (all when `full`); `old`: its bits before."""
        parts = None
        it = self._in_taint
        tainted = it is not None and np.count_nonzero(it) != 0  # (self.tainted, inlined)
        self.taint_every = None
        # (a packed pair, _is_pack or _is_pairwise, is a 64-bit result: no other width is one)
        pair = self._pair_result(value, width) if width == 64 and (tainted or self.control) else None
        if pair is not None:
            h, t, r, parts = pair
        elif tainted and width == 32 and self._is_unpack(width):  # (_is_unpack: a 32-bit half only)
            k = self.write_index
            self.write_index += 1
            H, T, R = self.in_parts[0]
            h, t, r = H[:, k], T[:, k], R[:, k]
        else:
            h, t = self._result(np.asarray(value), width, tainted)
            r = None if h is None else self._real(h, t)
        if parts is not None:
            self._parts(name, parts, mask, full)
        elif self.reg_parts:  # (_parts without halves: the written lanes lose theirs)
            self.reg_parts.pop(name, None)
        if full:
            self.reg_hash[name], self.reg_taint[name], self.reg_real[name] = h, t, r
            return
        old_h = self.reg_hash.get(name)
        if h is None and old_h is None:
            self.reg_hash[name] = self.reg_real[name] = self.reg_taint[name] = None  # bits on every lane
            return
        bits = np.zeros((), np.uint64) if old is None else old
        if h is None:
            h = r = const_number(value) if self.numbered else self._unnumbered
            t = self._zeros
        if old_h is None:
            old_h = old_r = const_number(bits) if self.numbered else self._unnumbered
            old_t = self._zeros
        else:
            old_t, old_r = self.reg_taint.get(name), self.reg_real.get(name)
            old_t = self._zeros if old_t is None else old_t
            old_r = old_h if old_r is None else old_r
        if not self.numbered:
            self.reg_hash[name] = self.reg_real[name] = self._unnumbered
        else:
            hh = self.reg_hash[name] = np.where(mask, h, old_h)
            # (a load's or an untainted result's real number is its number, on both sides: the same array)
            self.reg_real[name] = hh if r is h and old_r is old_h else np.where(mask, r, old_r)
        self.reg_taint[name] = np.where(mask, self._zeros if t is None else t, old_t).astype(np.uint8, copy=False)

    def _parts(self, name: str, parts: tuple | None, mask: np.ndarray, full: bool) -> None:
        old = self.reg_parts.get(name)
        if parts is None:
            if old is not None:  # lanes written now lose their halves' numbers
                del self.reg_parts[name]
            return
        if full or old is None:
            if not full:  # the other lanes' halves are unknown: derive them from nothing known
                return
            self.reg_parts[name] = parts
            return
        m = mask[:, None]
        self.reg_parts[name] = tuple(np.where(m, new, o) for new, o in zip(parts, old))

    def _real(self, h: np.ndarray, t: np.ndarray | None) -> np.ndarray:
        """Real-arithmetic number of the value just written (see the module docstring)."""
        ins = self.ins
        known = self.taint_every
        every_t = known[1] if known is not None and known[0] is t else None  # _result's every(t), if it was t
        if ins is None or self.loaded is not None or self.collective is not None or t is None \
                or not self.numbered or not (every_t or some(t)):
            return h
        if self.permute is not None:
            return np.where(t != 0, self.real_in(0)[self.permute], h) if self.in_real else h
        plan = self.plan
        rule = plan.real
        if rule is RealRule.NONE or len(self.in_real) != plan.real_inputs:
            return h
        # (the operands are (n,) arrays, real_in: numpy's integer array arithmetic wraps mod 2^64 without
        # the overflow warning of its scalars, so no np.errstate is needed around it)
        if rule is RealRule.FMA:
            r = self._product(h) + self.real_in(2)
        elif rule is RealRule.ADD:
            r = self.real_in(0) + self.real_in(1)
        elif rule is RealRule.SUB:
            r = self.real_in(0) - self.real_in(1)
        elif rule is RealRule.MUL:
            r = self._product(h)
        elif rule is RealRule.NEG:
            r = np.uint64(0) - self.real_in(0)
        else:  # RealRule.MOVE
            r = self.real_in(0)
        if np.shape(r) == self._shape and (every(t) if every_t is None else every_t):
            return r  # the common case: every lane depends on data, so none keeps its bits' number
        return np.where(self._lanes(t) != 0, r, h)

    def _real_product(self) -> bool:
        """Is the instruction a floating-point product whose real number _real makes from inputs 0 and 1
        (fma / mad with 3 inputs, mul with 2)?"""
        if self.ins is None:
            return False
        n = self.plan.product_inputs
        return n != 0 and len(self.in_real) == n and len(self.in_hash) == n

    def _product(self, h: np.ndarray) -> np.ndarray:
        """mix(RMUL, min(x, y), max(x, y)) of inputs 0 and 1's real numbers: the one _result computed
        with number h, or computed now."""
        got = self.product
        if got is not None and got[0] is h:
            return got[1]
        x, y = self.real_in(0), self.real_in(1)
        return mix(RMUL_KEY, np.minimum(x, y), np.maximum(x, y))

    def _numbered(self, h: np.ndarray, taint: np.ndarray, value: np.ndarray, every_t: bool | None = None) -> np.ndarray:
        """`h` on tainted lanes, the bits' number on the others; `every_t`: every(taint), if known."""
        if every(taint) if every_t is None else every_t:
            return h
        v = self._lanes(value)
        if type(v) is np.ndarray and v.shape == self._shape and np.shape(taint) == self._shape:
            u = v[taint == 0]
            if np.count_nonzero(u != u[0]) == 0:
                # one value on every untainted lane (a predicated-off load's fill, a guard's constant):
                # its number once, on mix's int path (the same bits as the array path's, test_mix)
                return np.where(taint != 0, h, const_number(u[0]))
        return np.where(taint != 0, h, const_number(v))

    def _result(self, value: np.ndarray, width: int, tainted: bool | None = None) -> tuple[np.ndarray | None, np.ndarray | None]:
        """(number, taint) of the instruction's next result; (None, None): it does not depend on data
        (numbered by its bits). `tainted`: self.tainted, if the caller asked it already."""
        k = self.write_index
        self.write_index += 1
        if self.control:  # implicit flow: which value is written depends on data
            if not self.numbered:
                return self._unnumbered, np.full(self.n, self.control, np.uint8) | self.in_taint
            self.counter += 1
            h = mix(key_of("control"), np.uint64(self.counter), np.arange(self.n, dtype=np.uint64), np.uint64(k))
            return h, np.full(self.n, self.control, np.uint8) | self.in_taint
        if self.collective is not None:
            return self._collective(value, k)
        if self.loaded is not None:  # a load: the k-th destination takes the next `width` bytes
            bh, bp, bt = self.loaded
            nb = max(1, width // 8)
            lo = self.load_cursor
            self.load_cursor += nb
            if self.terms is None and self.numbered and nb in _ROW_UINT and bh.shape[1] > nb \
                    and bh.shape[1] % nb == 0 and lo % nb == 0:  # a vector load: its elements together
                got = self.load_elements
                if got is None or got.nb != nb or got.loaded is not self.loaded:
                    got = self.load_elements = _LoadElements(bh, bp, bt, nb)
                    got.loaded = self.loaded
                return self._element_of(got, lo // nb, value)
            return self._element(bh[:, lo:lo + nb], bp[:, lo:lo + nb], bt[:, lo:lo + nb], value, width)
        if not (self.tainted if tainted is None else tainted):
            return None, None
        taint = self._in_taint.copy()
        if self.permute is not None:  # shfl: lane l's result is lane src[l]'s input
            src = self.permute
            taint = taint[src]
            if not some(taint):
                return None, None
            if not self.numbered:
                return self._unnumbered, taint.astype(np.uint8)
            return np.asarray(self._numbered(self.hash_in(0)[src], taint, value), np.uint64), taint.astype(np.uint8)
        if not self.numbered:
            return self._unnumbered, taint
        plan = self.plan
        if plan is not None and plan.opcode == "mov" and len(self.in_hash) == 1 and self.in_width[0] == width:
            return np.asarray(self.hash_in(0), np.uint64), taint  # the same bits: the same number
        parts = [x if x is not None else self.hash_in(i) for i, x in enumerate(self.in_hash)]
        key = plan.key if plan is not None else key_of("?")
        product = None
        if self._real_product():
            # a floating-point product (fma / mad / mul): its number and the real number _real makes of it,
            # together (product_numbers: the same bits as the two mixes)
            m, product = product_numbers(key, k, parts[0], parts[1], parts[2] if len(parts) == 3 else None,
                                         RMUL_KEY, self.real_in(0), self.real_in(1))
        else:
            if plan is not None and plan.symmetric and len(parts) >= 2:  # max(a, b, c): any order of the inputs
                parts = list(np.sort(np.stack(parts), axis=0))
            elif plan is not None and plan.commutative and len(parts) >= 2:
                a, b = parts[0], parts[1]
                parts[0], parts[1] = np.minimum(a, b), np.maximum(a, b)
            m = mix(key, np.uint64(k), *parts)
        every_t = np.count_nonzero(taint) == taint.size  # (every(taint): taint is an (n,) array)
        self.taint_every = (taint, every_t)  # for _real, on the taint this returns
        h = m if every_t else self._numbered(m, taint, value, every_t)
        self.product = None if product is None else (h, product)
        if self.terms is not None and len(self.in_value) == len(self.in_hash):
            sel = np.nonzero(taint)[0]
            self.terms.op(OpRecord(self.pc, k, width, h[sel], tuple(self.hash_in(i)[sel] for i in range(len(self.in_hash))),
                                   tuple(self.taint_in(i)[sel] for i in range(len(self.in_hash))),
                                   tuple(x[sel] for x in self.in_value), tuple(self.in_width)))
        return h, taint

    def _collective(self, value: np.ndarray, k: int) -> tuple[np.ndarray | None, np.ndarray | None]:
        """Numbers for warp-collective (or opaque multi-warp) results (LaneScope in symexec.opcodes)."""
        taint = self.coll_taint
        if taint is None:  # the same for every result of the instruction: its inputs are all read
            taint = self.in_taint.copy()
            if self.loaded is not None:
                taint |= rows_or(self.loaded[2])
            if not some(taint):
                taint = False
            # a warp-collective result depends on the whole warp's inputs; a multi-warp one (wgmma,
            # tcgen05) on all of the instruction's
            elif self.collective is Collective.OPAQUE:
                taint = np.full(self.n, np.bitwise_or.reduce(taint), np.uint8)
            else:
                taint = _warp_or(taint)
            self.coll_taint = taint
        if taint is False:
            return None, None
        if not self.numbered:
            return self._unnumbered, taint
        if self.collective is Collective.OPAQUE:
            self.counter += 1
            fresh = mix(key_of("fresh"), np.uint64(self.counter), np.arange(self.n, dtype=np.uint64), np.uint64(k))
            return self._numbered(fresh, taint, value), taint
        if self.warp_key is None:  # mix(collective, warp number, lane) once per instruction
            cols = [self.hash_in(i) for i in range(len(self.in_hash))]
            if self.loaded is not None:
                cols += [self.loaded[0][:, i] for i in range(self.loaded[0].shape[1])]
                cols += [self.loaded[1][:, i].astype(np.uint64) for i in range(self.loaded[1].shape[1])]
            per_lane = mix(self.plan.key if self.ins is not None else key_of("?"), *cols) if cols else \
                np.zeros(self.n, np.uint64)
            warp = row_number(key_of("warp"), per_lane.reshape(-1, 32))
            uniform = self.ins is not None and self.plan.uniform
            lane = np.zeros(self.n, np.uint64) if uniform else np.arange(self.n, dtype=np.uint64) % np.uint64(32)
            # kept stepped: result k's number _mix_from(w, (k,)) is finish(step(w) ^ k)
            self.warp_key = _step(mix(key_of("collective"), np.repeat(warp, 32), lane))
        h = _finish(self.warp_key ^ np.uint64(k))
        return self._numbered(h, taint, value), taint

    def _element_of(self, got: "_LoadElements", j: int, value):
        """_element of element j of a vector load, from the numbers of all of its elements at once
        (the same per lane: every step of _element is a function of the lane's row of bytes)."""
        if got.plain:  # every lane depends on data and read one whole value: the steps below give these
            return got.first[:, j].copy(), got.taint[:, j].copy()
        if got.untainted:  # no element of any lane depends on data: each is numbered by its bits
            return None, None
        taint = got.taint[:, j]
        if not some(taint):
            return None, None
        taint = taint.copy()  # its own array, as _element's
        # the tainted lanes' numbers as _element makes them (the first byte's where whole, else from the bytes;
        # every element's at once); _numbered numbers the untainted lanes by their bits
        h = got.numbers()[:, j].copy()
        return self._numbered(h, taint, value), taint

    def _element(self, bh, bp, bt, value, width):
        taint = rows_or(bt) if bt.shape[1] else np.zeros(self.n, np.uint8)
        if not some(taint):
            return None, None
        if not self.numbered:
            return self._unnumbered, taint.astype(np.uint8)
        nb = bh.shape[1]
        expect = _expected_positions(nb)
        # only the tainted lanes are numbered by their bytes: _numbered numbers the others (those the
        # load left out among them, in a batch where a few warps are active) by their bits
        lanes = None if every(taint) else np.nonzero(taint)[0]
        th, tp = (bh, bp) if lanes is None else (bh[lanes], bp[lanes])
        whole = rows_all(th == th[:, :1]) & rows_all(tp == expect)
        ht = th[:, 0].copy()
        part = ~whole  # bytes of several values, or parts of one: numbered by all of them
        if part.any():
            ht[part] = _bytes_number(th[part], tp[part])
        if lanes is None:
            h = ht
        else:
            h = np.zeros(self.n, np.uint64)
            h[lanes] = ht
        h = self._numbered(h, taint, value)
        if self.terms is not None:
            sel = np.nonzero(part)[0] if lanes is None else lanes[part]
            if sel.size:
                self.terms.load(LoadRecord(h[sel], bh[sel], bp[sel], width))
        return h, taint.astype(np.uint8)

    def taint_registers(self, names, taint: int = int(DATA)) -> None:
        """After two explored paths merge, registers either wrote depend on the choice (`taint`: the
        branch predicate's)."""
        for name in names:
            self.reg_parts.pop(name, None)
            self.counter += 1
            self.reg_taint[name] = np.full(self.n, taint, np.uint8)
            self.reg_hash[name] = mix(key_of("merged"), np.uint64(self.counter), np.arange(self.n, dtype=np.uint64))
            self.reg_real[name] = self.reg_hash[name]

    def guard_taint(self, pred: str, mask: np.ndarray) -> int:
        """The DEP bits of predicate `pred` on any lane of `mask` (0: the guard is decided alike for
        every input)."""
        t = self.reg_taint.get(pred)
        if t is None:
            return 0
        t = self._lanes(t)[mask]
        return (int(np.bitwise_or.reduce(t)) if t.size else 0) & int(DEP)

    def taint_lanes(self, names, taint: int, lanes: np.ndarray, regs: dict, choice: "Choice") -> None:
        """Registers `names` on `lanes` depend on a data-dependent choice that did not write them
        there (an implicit flow: a false guard, a branch around a register-only region). Their bits
        stay, but which value they hold depends on data: those lanes take `taint`, and numbers that
        are a function of everything the choice reads (its predicate, the registers the region names,
        their own old value): the value is that function of them, the same code on every lane, so
        equal numbers still mean equal values for every input (a replicated reduction after a
        special-case branch stays one value), where keeping the old number would claim equality with
        what the lane held before. `regs`: the batch's register bits."""
        if self.numbered:
            parts = [self.number_of(r, regs) for r in sorted(choice.reads)]
            if choice.special:  # the region reads %tid, %laneid, %clock...: distinct per lane
                parts.append(np.arange(self.n, dtype=np.uint64))
            key = mix(key_of("implicit"), np.full(self.n, choice.pc, np.uint64), *parts)
        for name in names:
            old_h = self.reg_hash.get(name)
            old_t = self.reg_taint.get(name) if old_h is not None else None
            old_t = self._zeros if old_t is None else self._lanes(old_t)
            self.reg_parts.pop(name, None)
            if self.numbered:
                fresh = mix(key_of(f"implicit {name}"), key)
                self.reg_hash[name] = np.where(lanes, fresh, self.number_of(name, regs))
                old_r = self.reg_real.get(name) if old_h is not None else None
                self.reg_real[name] = np.where(lanes, fresh, self.reg_hash[name] if old_r is None else old_r)
            else:
                self.reg_hash[name] = self.reg_real[name] = self._unnumbered
            self.reg_taint[name] = np.where(lanes, old_t | np.uint8(taint), old_t).astype(np.uint8)

    def number_of(self, name: str, regs: dict) -> np.ndarray:
        """(n,) number of register `name` now (its bits' number when it keeps none)."""
        h = self.reg_hash.get(name)
        if h is not None:
            return self._lanes(h)
        bits = regs.get(name)
        return const_number(np.zeros(self.n, np.uint64) if bits is None
                            else np.broadcast_to(np.asarray(bits).astype(np.uint64), self._shape))

    # -------------------------------------------------------------- memory
    def shadow(self, key, size: int, taint: int, init_key: int, salt: int) -> MemShadow:
        s = self.mem.get(key)
        if s is None:
            s = self.mem[key] = MemShadow(size, taint, init_key, salt, key)
        return s

    def _read_taint(self, shadow: MemShadow, flat: np.ndarray, ctas: np.ndarray | None, volatile: bool,
                    stale: bool = False) -> np.ndarray:
        """Taint of bytes `flat` (k, nbytes) read by CTAs `ctas`: what another CTA wrote, and what an
        atomic returns, depend on the schedule. `stale`: STALE besides (state.py `stale_reads`)."""
        taint = shadow.taint[flat]
        if stale:
            taint = taint | STALE
        if ctas is not None:
            writer = shadow.cta[flat]
            differs = writer != ctas[:, None]
            if some(differs):  # (most reads see bytes their own CTA wrote: nothing to add)
                other = differs & (writer >= 0)  # (-1: never written, no other CTA's)
                if some(other):
                    taint = taint | np.where(other, SCHED, np.uint8(0)).astype(np.uint8)
        if volatile:
            taint = taint | SCHED
        return taint

    def on_load_summary(self, shadow: MemShadow, flat: np.ndarray, lanes: np.ndarray,
                        ctas: np.ndarray | None = None, stale: bool = False) -> None:
        """Bytes `flat` (k, nbytes) read by `lanes` for an operation that computes its results
        (tcgen05.mma, whose tensor-memory writes take only the taint of what it read, state._computed): kept as
        the one-summary-byte-per-lane form `on_load` falls back to, without the (batch lanes x bytes)
        arrays (a 64 KiB accumulator read by one thread of a 16384-lane batch was 8 GiB of them)."""
        taint = self._read_taint(shadow, flat, ctas, False, stale)
        h = shadow.hash[flat]
        self._leaves(shadow, flat, h, shadow.pos[flat], taint)
        bh = np.zeros(self.n, np.uint64)
        bt = np.zeros(self.n, np.uint8)
        np.bitwise_xor.at(bh, lanes, np.bitwise_xor.reduce(h, axis=1))
        np.bitwise_or.at(bt, lanes, np.bitwise_or.reduce(taint, axis=1))
        m = np.zeros(self.n, bool)
        m[lanes] = True
        self._fold(bh, bt, m)

    def _leaves(self, shadow: MemShadow, flat: np.ndarray, h: np.ndarray, pos: np.ndarray, taint: np.ndarray) -> None:
        """Input bytes read as they were (whole, numbered as the input's own): the term log's leaves."""
        if self.terms is not None and (taint & DATA).any():
            first = (pos == 0xFF) & (h == mix(shadow.key, np.uint64(shadow.salt), flat.astype(np.uint64)))
            self.terms.leaf(h[first], shadow.buffer, flat[first])

    def _fold(self, h: np.ndarray, t: np.ndarray, m: np.ndarray) -> None:
        """The loads of this instruction so far become one summary byte per lane, with this read's
        per-lane number `h` and taint `t` (lanes `m`) folded in."""
        if self.loaded is not None:
            oh, _, ot = self.loaded
            h = mix(key_of("loads"), np.bitwise_xor.reduce(oh, axis=1), h)
            t = t | rows_or(ot)
            m = m | self.loaded_lanes
        self.loaded = (h[:, None], np.full((self.n, 1), 0xFF, np.uint8), t[:, None].astype(np.uint8))
        self.loaded_lanes = m

    def on_load(self, shadow: MemShadow, flat: np.ndarray, lanes: np.ndarray, nbytes: int,
                ctas: np.ndarray | None = None, volatile: bool = False, stale: bool = False) -> None:
        """Bytes `flat` (k, nbytes) of `shadow` were read by `lanes` (of CTAs `ctas`).

        What another CTA wrote, and what an atomic returns, depend on the schedule: such values
        count as data (another schedule could read something else)."""
        taint = self._read_taint(shadow, flat, ctas, volatile, stale)
        if not self.numbered:  # the bytes' taints only: numbers and positions stay unread
            self._load_taint(taint, lanes, nbytes)
            return
        h, p = shadow.hash[flat], shadow.pos[flat]
        if lanes.size == self.n and every(lanes == self._all):  # every lane: the gathered rows as they are
            bh, bp, bt = h, p, taint
        else:
            bh = np.zeros((self.n, nbytes), np.uint64)
            bp = np.zeros((self.n, nbytes), np.uint8)
            bt = np.zeros((self.n, nbytes), np.uint8)
            bh[lanes] = h
            scatter_rows(bp, lanes, p)
            scatter_rows(bt, lanes, taint)
        self._leaves(shadow, flat, h, p, taint)
        m = np.zeros(self.n, bool)
        m[lanes] = True
        if self.loaded is None:
            self.loaded = (bh, bp, bt)
            self.loaded_lanes = m
            return
        oh, op, ot = self.loaded
        if oh.shape[1] == nbytes and not (self.loaded_lanes & m).any():
            # several windows (generic addresses), each lane reads once: merge row-wise
            self.loaded = (np.where(m[:, None], bh, oh), np.where(m[:, None], bp, op), np.where(m[:, None], bt, ot))
            self.loaded_lanes |= m
        else:  # a lane reads several operands (wgmma, tcgen05.mma): one summary byte per lane
            self._fold(np.bitwise_xor.reduce(bh, axis=1), rows_or(bt), m)

    def _load_taint(self, taint: np.ndarray, lanes: np.ndarray, nbytes: int) -> None:
        """on_load without numbers (`numbered` False): `loaded` holds the bytes' taints, its number
        and position columns read-only zeros (nothing reads them in such a run; _element and
        _collective do not number, _fold's xor of zeros is zeros)."""
        if lanes.size == self.n and every(lanes == self._all):
            bt = taint
        else:
            bt = np.zeros((self.n, nbytes), np.uint8)
            scatter_rows(bt, lanes, taint)
        m = np.zeros(self.n, bool)
        m[lanes] = True
        if self.loaded is None or self.loaded[2].shape[1] != nbytes or (self.loaded_lanes & m).any():
            if self.loaded is not None:  # a lane reads several operands: one summary byte per lane
                self._fold(np.zeros(self.n, np.uint64), rows_or(bt), m)
                return
            self.loaded_lanes = m
        else:  # several windows (generic addresses), each lane reads once: merge row-wise
            bt = np.where(m[:, None], bt, self.loaded[2])
            self.loaded_lanes = self.loaded_lanes | m
        zeros = np.broadcast_to(np.uint64(0), bt.shape)
        self.loaded = (zeros, np.broadcast_to(np.uint8(0), bt.shape), bt)

    def on_store(self, shadow: MemShadow, flat: np.ndarray, lanes: np.ndarray, nbytes: int,
                 ctas: np.ndarray | None = None) -> np.ndarray:
        """Write shadows for bytes `flat` (k, nbytes); returns the stored values' hashes (k,)."""
        if ctas is not None:  # (as an int32 array of flat's shape: the assignment's fast path, the same values)
            shadow.cta[flat] = np.repeat(ctas.astype(np.int32)[:, None], nbytes, axis=1)
        if not self.numbered and self.store_map is None:  # taints only (the bytes' numbers stay stale: unread)
            t = self.in_taint[lanes] | self.control | self.explore
            shadow.taint[flat] = np.repeat(t[:, None], nbytes, axis=1)
            none = self._unnumbered[:lanes.size]  # (lanes are the batch's: at most n)
            return none, none
        widths = self.in_width
        if self.store_map is not None and self.in_hash:  # stmatrix: each byte from another lane's register
            src_lane, src_reg, src_byte = (m[lanes] for m in self.store_map)
            hashes = np.stack([self.hash_in(i) for i in range(len(self.in_hash))])
            taints = np.stack([self.taint_in(i) for i in range(len(self.in_hash))])
            H = hashes[src_reg, src_lane]
            P = (src_byte | (2 << 4)).astype(np.uint8)  # byte i of a 32-bit register value
            t = np.bitwise_or.reduce(taints[src_reg, src_lane], axis=1)
            t = t | self.control | self.explore
            shadow.hash[flat], shadow.pos[flat] = H, P
            shadow.taint[flat] = np.repeat(t[:, None], nbytes, axis=1)
            exact = row_number(key_of("value"), H)
            return exact, exact
        if widths and sum(max(1, w // 8) for w in widths) == nbytes:
            # byte j of an operand of nb bytes: its number, position code j | log2(nb) << 4
            H = np.empty((lanes.size, nbytes), np.uint64)
            col = 0
            for i, w in enumerate(widths):
                nb = max(1, w // 8)
                H[:, col:col + nb] = self.hash_in(i)[lanes][:, None]
                col += nb
            # every lane's row of position codes, as a whole array: numpy's fancy assignment of a broadcast row
            # takes a slower path than copying the row into place first (12 vs 6 us on 256 lanes x 16 bytes)
            P = np.empty((lanes.size, nbytes), np.uint8)
            P[:] = _store_positions(tuple(widths))
        else:
            h = mix(key_of("store"), *[self.hash_in(i)[lanes] for i in range(len(self.in_hash))]) \
                if self.in_hash else np.zeros(lanes.size, np.uint64)
            H = np.repeat(h[:, None], nbytes, axis=1)
            P = np.full((lanes.size, nbytes), 0xFF, np.uint8)
        t = self.in_taint[lanes] | self.control | self.explore
        shadow.hash[flat] = H
        shadow.pos[flat] = P
        shadow.taint[flat] = np.repeat(t[:, None], nbytes, axis=1)
        exact = row_number(key_of("value"), H)
        real = mix(key_of("value"), *[self.real_in(i)[lanes] for i in range(len(self.in_real))]) \
            if self.in_real else exact
        return exact, real


@functools.lru_cache(maxsize=None)
def _expected_positions(nb: int) -> np.ndarray:
    """The position codes of the bytes of one whole nb-byte value, in order (byte index | log2 nb << 4)."""
    out = np.arange(nb, dtype=np.uint8) | np.uint8(int(np.log2(max(1, nb))) << 4)
    out.flags.writeable = False
    return out


@functools.lru_cache(maxsize=None)
def _store_positions(widths: tuple[int, ...]) -> np.ndarray:
    """The position codes of a store's bytes, operand after operand (`_expected_positions` of each operand's
    bytes): one row, read-only."""
    out = np.concatenate([_expected_positions(max(1, w // 8)) for w in widths])
    out.flags.writeable = False
    return out


class _LoadElements:
    """The bytes a vector load read (`loaded`: (n, m * nb) hash, pos, taint) as m elements of nb bytes
    (nb in 1, 2, 4, 8), per element and lane: its taint, whether its bytes are one whole value
    (`whole`: all the first byte's number, in position order) and its first byte's number; `numbers()`: each
    element's number as Tracker._element makes it from its bytes, for every element in one pass."""

    def __init__(self, bh: np.ndarray, bp: np.ndarray, bt: np.ndarray, nb: int) -> None:
        n, total = bh.shape
        m = total // nb
        self.n, self.m, self.nb, self.bh, self.bp = n, m, nb, bh, bp
        self.loaded = None  # set by the caller: the tuple these were made from
        self.taint = rows_or(np.ascontiguousarray(bt).reshape(n * m, nb)).reshape(n, m)
        self.first = bh.reshape(n, m, nb)[:, :, 0]
        self._whole: np.ndarray | None = None
        self._numbers: np.ndarray | None = None
        self.untainted = bool(not some(self.taint))
        # every element of every lane tainted and one whole value (a load of data stored whole, the common
        # case): Tracker._element_of's number of element j is then its first byte's number on every lane
        # (no lane is numbered by its bytes, none by its bits), decided once for the m elements
        self.plain = bool(n > 0 and not self.untainted and every(self.taint) and self._all_whole())

    def _all_whole(self) -> bool:
        """every(whole), as two whole-array tests (positions, then numbers) instead of per-element rows."""
        if np.count_nonzero(self.bp != _expected_row(self.nb, self.m)) != 0:
            return False
        if self.nb == 1:
            return True
        h3 = self.bh.reshape(self.n, self.m, self.nb)
        return np.count_nonzero(h3 != h3[:, :, :1]) == 0

    @property
    def whole(self) -> np.ndarray:
        """(n, m): element j of a lane is one whole value (its bytes all its first byte's number, in
        position order)."""
        if self._whole is None:
            n, m, nb = self.n, self.m, self.nb
            h3 = self.bh.reshape(n, m, nb)
            same = (h3 == h3[:, :, :1]).reshape(n * m, nb)
            pos = (self.bp.reshape(n * m, nb) == _expected_positions(nb))
            self._whole = (rows_all(same) & rows_all(pos)).reshape(n, m)
        return self._whole

    def numbers(self) -> np.ndarray:
        """(n, m): each element's number from its bytes, as Tracker._element gives it to a tainted lane: its
        first byte's number where it is whole, else _bytes_number of its bytes (row by row, so one call over
        every such element is the same bits as one call per element)."""
        if self._numbers is None:
            out = self.first.copy()
            part = ~self.whole
            if some(part):
                n, m, nb = self.n, self.m, self.nb
                rows = part.reshape(-1)
                out[part] = _bytes_number(self.bh.reshape(n * m, nb)[rows], self.bp.reshape(n * m, nb)[rows])
            self._numbers = out
        return self._numbers


@functools.lru_cache(maxsize=None)
def _expected_row(nb: int, m: int) -> np.ndarray:
    """The position codes of m whole nb-byte values side by side (a vector load's row of bytes)."""
    out = np.tile(_expected_positions(nb), m)
    out.flags.writeable = False
    return out


def _warp_or(t: np.ndarray) -> np.ndarray:
    w = np.broadcast_to(t, (t.size,)).reshape(-1, 32)
    return np.repeat(np.bitwise_or.reduce(w, axis=1), 32).astype(np.uint8)
