"""Memory spaces of a launch: global allocations, per-CTA shared windows, per-thread local memory.

Every access is vectorised over the lanes that perform it: `read(space, lanes, addrs, nbytes)`
returns a (k, nbytes) uint8 array. Generic addresses (PTX 5.1.x, `cvta`) are laid out as windows:
global allocations live at GLOBAL_BASE and up, the shared window at SHARED_BASE, the local window
at LOCAL_BASE, the kernel parameters at PARAM_BASE (`cvta.param`, PTX 9.7.9.20; read-only). An
address outside every allocation or window raises MemoryFault (out of bounds), never reads garbage.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ptx_parser import ast as A

from .errors import MemoryFault
from .events import Buffer, MemoryAccess, MemSpace, Proxy
from .opcodes import Scope, is_atomic, order, strength
from .paged import PagedArray, byte_fill, gather_rows, scatter_rows_at

GLOBAL_BASE = 0x7F00_0000_0000
SHARED_BASE = 0x1000_0000_0000
LOCAL_BASE = 0x2000_0000_0000
PARAM_BASE = 0x3000_0000_0000
FUNCTION_BASE = 0x4000_0000_0000  # function addresses (indirect calls); no memory lives there
WINDOW = 1 << 32
GUARD = 4096  # unmapped bytes between allocations: small overruns fault


@dataclass
class Allocation:
    name: str
    base: int
    store: PagedArray  # uint8, pages made on first touch
    readonly: bool = False
    freed: bool = False  # a device-heap block after free(): every access faults

    @property
    def size(self) -> int:
        return self.store.size

    @property
    def end(self) -> int:
        return self.base + self.size

    @property
    def data(self) -> np.ndarray:
        """Every byte, as one array (materialises the untouched pages: for results, not for runs)."""
        return self.store.dense()


class GlobalMemory:
    """Global (and .const) allocations addressed by absolute 64-bit addresses."""

    def __init__(self) -> None:
        self.allocations: list[Allocation] = []
        self._next = GLOBAL_BASE
        self._bases = np.zeros(0, dtype=np.uint64)
        self.freed_blocks = 0  # device-heap blocks freed so far (symexec.calls)

    def allocate(self, name: str, nbytes: int, align: int = 256, data=None,
                 readonly: bool = False) -> Allocation:
        """data: a numpy array or a paged.BufferSource (its bytes are read page by page, on first touch,
        and never written: the run's writes go to its own pages); None: zeros."""
        base = -(-self._next // align) * align
        fill = byte_fill(data if data is not None else np.zeros(0, np.uint8))
        alloc = Allocation(name, base, PagedArray(max(nbytes, 0), np.uint8, fill), readonly)
        self.allocations.append(alloc)
        self._next = base + max(nbytes, 1) + GUARD
        self._bases = np.array([a.base for a in self.allocations], dtype=np.uint64)
        return alloc

    def by_name(self, name: str) -> Allocation:
        for a in self.allocations:
            if a.name == name:
                return a
        raise KeyError(name)

    def locate(self, addrs: np.ndarray, nbytes: int) -> tuple[np.ndarray, np.ndarray]:
        """(allocation index, offset) per address; index -1 where out of bounds."""
        addrs = addrs.astype(np.uint64, copy=False)
        idx = np.searchsorted(self._bases, addrs, side="right").astype(np.int64) - 1
        ok = idx >= 0
        off = np.zeros(addrs.shape, dtype=np.int64)
        if self.allocations:
            sizes = np.array([a.size for a in self.allocations], dtype=np.int64)
            safe = np.where(ok, idx, 0)
            off = (addrs - self._bases[safe]).astype(np.int64)
            ok &= (off >= 0) & (off + nbytes <= sizes[safe])
        idx[~ok] = -1
        return idx, off


#: (opcode, modifiers) -> (strength, order, atomic) of an instruction's accesses (opcodes.strength, order,
#: is_atomic: functions of those two fields only)
_SEMANTICS: dict[tuple[str, frozenset], tuple[Scope, object, bool]] = {}


def _semantics(ins: A.Instruction | None) -> tuple[Scope, object, bool]:
    if ins is None:
        return strength(None), order(None), is_atomic(None)
    key = (ins.opcode, ins.modifiers)
    got = _SEMANTICS.get(key)
    if got is None:
        got = _SEMANTICS[key] = (strength(ins), order(ins), is_atomic(ins))
    return got


class Memory:
    """All spaces of one batch of CTAs. `cta_of_lane[l]` is the batch slot of lane l's CTA.

    Every access is told to the batch's observers as a MemoryAccess event (none in a plain run);
    the instruction, pc and proxy of the access come from `source`, the batch's instruction
    context (an asynchronous operation completing later runs in a nested context naming it)."""

    def __init__(self, glob: GlobalMemory, n_lanes: int, cta_of_lane: np.ndarray, n_ctas: int,
                 shared_bytes: int, local_bytes: int, params: bytes, param_offsets: dict[str, int],
                 batch_id: int = 0, observers: list | None = None) -> None:
        self.glob = glob
        self.cta_of_lane = cta_of_lane
        self.shared_bytes = shared_bytes
        self.shared = np.zeros(max(1, n_ctas * shared_bytes), dtype=np.uint8)
        self.local_bytes = local_bytes
        self.local = np.zeros(max(1, n_lanes * local_bytes), dtype=np.uint8)
        self.params = np.frombuffer(params, dtype=np.uint8).copy()
        self.param_offsets = param_offsets
        self.batch_id = batch_id
        self.observers = observers if observers is not None else []
        self.source = None  # the batch's GroupExec (ins, pc, proxy, async op of the current access)
        self._buffers = {MemSpace.SHARED: Buffer(MemSpace.SHARED, batch_id),
                         MemSpace.LOCAL: Buffer(MemSpace.LOCAL, batch_id), MemSpace.PARAM: Buffer(MemSpace.PARAM)}

    def _tell(self, write: bool, buffer: Buffer, size: int, lanes: np.ndarray, first: np.ndarray, nbytes: int) -> None:
        """Tell the observers of an access of rows of `nbytes` bytes at offsets `first`."""
        src = self.source
        ins = src.ins if src is not None else None
        atomic = getattr(src, "async_atomic", False)  # an asynchronous reduction's element updates
        scope, order_, is_atomic_ = _semantics(ins)
        ev = MemoryAccess(write, buffer, size, lanes, first[:, None] + np.arange(nbytes), ins,
                          src.pc if src is not None else -1, Scope.GPU if atomic else scope, order_,
                          atomic or is_atomic_, getattr(src, "proxy", Proxy.GENERIC), getattr(src, "async_op", None),
                          consecutive=True)  # (every row is consecutive bytes)
        for o in self.observers:
            o.on_access(ev)

    # ------------------------------------------------------------------ address resolution
    def _flat(self, space: str, lanes: np.ndarray, addrs: np.ndarray, nbytes: int,
              ins: A.Instruction | None, write: bool) -> tuple[object, np.ndarray, np.ndarray]:
        """Translate to (buffer key, buffer, flat byte offsets of the first byte) for one space."""
        if space == ".generic":
            raise AssertionError("generic addresses are split before _flat")
        if space == ".shared":
            a = addrs.astype(np.int64)
            bad = (a < 0) | (a + nbytes > self.shared_bytes)
            if bad.any():
                self._fault("shared memory access out of bounds", ins, lanes, addrs, bad, space)
            return self._buffers[MemSpace.SHARED], self.shared, self.cta_of_lane[lanes].astype(np.int64) * self.shared_bytes + a
        if space == ".local":
            a = addrs.astype(np.int64)
            bad = (a < 0) | (a + nbytes > self.local_bytes)
            if bad.any():
                self._fault("local memory access out of bounds", ins, lanes, addrs, bad, space)
            return self._buffers[MemSpace.LOCAL], self.local, lanes.astype(np.int64) * self.local_bytes + a
        if space == ".param":
            a = addrs.astype(np.int64)
            bad = (a < 0) | (a + nbytes > self.params.size)
            if bad.any() or write:
                self._fault("parameter access out of bounds" if not write else "store to kernel parameter",
                            ins, lanes, addrs, bad | write, space)
            return self._buffers[MemSpace.PARAM], self.params, a
        # .global / .const
        idx, off = self.glob.locate(addrs, nbytes)
        bad = idx < 0
        if bad.any():
            self._fault("global memory access out of bounds", ins, lanes, addrs, bad, space)
        if self.glob.freed_blocks:
            gone = np.array([self.glob.allocations[int(i)].freed for i in idx.tolist()], dtype=bool)
            if gone.any():
                self._fault("access to a device-heap block after free()", ins, lanes, addrs, gone, space)
        first = int(idx[0]) if idx.size else 0
        if idx.size and (idx == first).all():
            alloc = self.glob.allocations[first]
            if write and alloc.readonly:
                self._fault("store to read-only memory", ins, lanes, addrs, np.ones_like(bad), space)
            return Buffer(MemSpace.GLOBAL, first), alloc.store, off
        return None, None, idx  # type: ignore[return-value]  # several allocations: handled by caller

    @staticmethod
    def _fault(msg: str, ins, lanes, addrs, bad, space) -> None:
        sel = np.nonzero(bad)[0]
        e = MemoryFault(msg, ins, [int(lanes[i]) for i in sel[:8]], [int(addrs[i]) for i in sel[:8]], space)
        e.all_lanes = [int(x) for x in lanes[sel]]
        raise e

    def _split_generic(self, addrs: np.ndarray) -> dict[str, np.ndarray]:
        a = addrs.astype(np.uint64)
        sh = (a >= SHARED_BASE) & (a < SHARED_BASE + WINDOW)
        lo = (a >= LOCAL_BASE) & (a < LOCAL_BASE + WINDOW)
        pa = (a >= PARAM_BASE) & (a < PARAM_BASE + WINDOW)
        return {".shared": sh, ".local": lo, ".param": pa, ".global": ~(sh | lo | pa)}

    @staticmethod
    def to_window(space: str, addrs: np.ndarray) -> np.ndarray:
        base = {".shared": SHARED_BASE, ".local": LOCAL_BASE, ".param": PARAM_BASE}.get(space, 0)
        return (addrs.astype(np.uint64) - np.uint64(base)) if base else addrs

    # ------------------------------------------------------------------ access
    def read(self, space: str, lanes: np.ndarray, addrs: np.ndarray, nbytes: int,
             ins: A.Instruction | None = None) -> np.ndarray:
        if space == ".generic":
            out = np.zeros((lanes.size, nbytes), dtype=np.uint8)
            for sp, sel in self._split_generic(addrs).items():
                if sel.any():
                    out[sel] = self.read(sp, lanes[sel], self.to_window(sp, addrs[sel]), nbytes, ins)
            return out
        key, buf, off = self._flat(space, lanes, addrs, nbytes, ins, False)
        if buf is None:  # lanes spread over several allocations
            out = np.zeros((lanes.size, nbytes), dtype=np.uint8)
            idx, o = self.glob.locate(addrs, nbytes)
            for i in np.unique(idx):
                sel = idx == i
                data = self.glob.allocations[int(i)].store
                first = o[sel]
                out[sel] = data.rows(first, nbytes)
                if self.observers:
                    self._tell(False, Buffer(MemSpace.GLOBAL, int(i)), data.size, lanes[sel], first, nbytes)
            return out
        if self.observers:
            self._tell(False, key, buf.size, lanes, off, nbytes)
        return _rows(buf, off, nbytes)

    def write(self, space: str, lanes: np.ndarray, addrs: np.ndarray, data: np.ndarray,
              ins: A.Instruction | None = None) -> None:
        nbytes = data.shape[1]
        if space == ".generic":
            for sp, sel in self._split_generic(addrs).items():
                if sel.any():
                    self.write(sp, lanes[sel], self.to_window(sp, addrs[sel]), data[sel], ins)
            return
        key, buf, off = self._flat(space, lanes, addrs, nbytes, ins, True)
        if buf is None:
            idx, o = self.glob.locate(addrs, nbytes)
            for i in np.unique(idx):
                sel = idx == i
                alloc = self.glob.allocations[int(i)]
                if alloc.readonly:
                    self._fault("store to read-only memory", ins, lanes, addrs, sel, space)
                first = o[sel]
                if self.observers:
                    self._tell(True, Buffer(MemSpace.GLOBAL, int(i)), alloc.size, lanes[sel], first, nbytes)
                alloc.store.set_rows(first, data[sel])
            return
        if self.observers:
            self._tell(True, key, buf.size, lanes, off, nbytes)
        _set_rows(buf, off, data)


def _rows(buf: np.ndarray | PagedArray, first: np.ndarray, nbytes: int) -> np.ndarray:
    """(k, nbytes): the bytes of rows at byte offsets `first` of a buffer (words where aligned: paged)."""
    if isinstance(buf, PagedArray):
        return buf.rows(first, nbytes)
    return gather_rows(buf, first, nbytes)


def _set_rows(buf: np.ndarray | PagedArray, first: np.ndarray, data: np.ndarray) -> None:
    if isinstance(buf, PagedArray):
        buf.set_rows(first, data)
    else:
        scatter_rows_at(buf, first, data)


_WORD = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}  # bytes -> the unsigned word of that width


def scatter_rows(dst: np.ndarray, rows: np.ndarray, src: np.ndarray) -> None:
    """dst[rows] = src for a (m, k) array of bytes (a load's bytes per lane). numpy's fancy assignment of
    rows of a few bytes each runs its inner loop per row (~20-60 us for 2048 rows of a 16384-lane batch);
    with k in 1, 2, 4, 8 each row is one word, assigned as one element (~3 us). The same bytes either way."""
    k = dst.shape[1] if dst.ndim == 2 else 0
    w = _WORD.get(k)
    if w is not None and dst.dtype == np.uint8 and dst.flags.c_contiguous and src.dtype == np.uint8 \
            and src.shape == (np.size(rows), k):
        dst.view(w).reshape(-1)[rows] = np.ascontiguousarray(src).view(w).reshape(-1)
        return
    dst[rows] = src


def to_bytes(values: np.ndarray, nbytes: int) -> np.ndarray:
    """(k,) uint values of width 8*nbytes -> (k, nbytes) little-endian bytes."""
    dt = _WORD[nbytes]
    v = np.ascontiguousarray(values.astype(dt, copy=False))
    return v.view(np.uint8).reshape(-1, nbytes)


def from_bytes(data: np.ndarray) -> np.ndarray:
    """(k, nbytes) bytes -> (k,) uint values."""
    nbytes = data.shape[1]
    dt = _WORD[nbytes]
    return np.ascontiguousarray(data).view(dt).reshape(-1)
