"""The tensor memory accelerator: tensor copies through tensor maps, and tensor-map objects.

Tensor copies (PTX 9.7.9.25.5), tile mode only:
- `cp.async.bulk.tensor.Nd.shared::{cta,cluster}.global{.tile}.mbarrier::complete_tx::bytes
  {.cta_group::1}{.L2::cache_hint} [dst], [tmap, {c..}], [mbar]{, policy}`: the box is read from
  global memory at issue (the latest point is any time before completion) and lands in shared memory
  just before the mbarrier phase it completes its transaction bytes on; the count is the whole box,
  its out-of-bounds elements included (they are written, as fill). Through the async proxy.
- `cp.async.bulk.tensor.Nd.global.shared::cta{.tile}.bulk_group [tmap, {c..}], [src]` and
  `cp.reduce.async.bulk.tensor.Nd.global.shared::cta.redOp{.tile}.bulk_group`: performed whole when
  the issuing thread's `cp.async.bulk.wait_group{.read}` covers their bulk async-group (or at the end
  of the kernel), like `cp.async.bulk` stores (symexec.async_copy); out-of-bounds elements are not
  written. The reduction's element type is the tensor map's (9.7.9.25.5.3 table).
- `cp.async.bulk.prefetch.tensor.Nd.L2.global{.tile}`: a hint, no effect.
Refused as unsupported, named: im2col and gather4/scatter4 modes, `.multicast::cluster` and
`.cta_group::2` (clusters of several CTAs are not modelled), and the tensor-map features that
symexec.tensormap does not model.

The tensor map (symexec.tensormap) is read in the tensormap proxy from where the operand's generic
address points: a kernel parameter (`.param`, through `cvta.param`), `.const` or `.global` memory.
Its 128 bytes there must be the tag of a known object: a launch map (Launch.tensor_maps) or one
built on the device, whose fields `tensormap.replace` (9.7.9.26) edits in global or shared::cta
memory and `tensormap.cp_fenceproxy` (9.7.13.16) copies to global memory. Plain stores that copy all
128 bytes of a known object copy it; any other bytes are unknown, and a copy through them is
unsupported, never guessed. A zero-filled object that tensormap.replace edits starts with every
field unset (symexec.tensormap.ZERO_DEFAULTED names the ones taken as encoding 0).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

import numpy as np

from ptx_parser import ast as A
from semantics.errors import UndefinedBehavior, Unsupported
from semantics.ptx.core import tinfo

from . import asyncops
from . import mbarrier as MB
from .async_copy import AsyncCopyUnit, BulkOp, _check, _in_global, _in_shared, _shared_offsets
from .events import Completion, CopyLayout, Fence, FenceKind, Proxy, Stream
from .machine import Group
from .memory import LOCAL_BASE, PARAM_BASE, SHARED_BASE, WINDOW, from_bytes, to_bytes
from .tensormap import (TENSOR_MAP_ALIGN, TENSOR_MAP_BYTES, MapField, MapFields, OobFill, Registry, TensorMap,
                        TensorMapError, UnsetField, is_param_ident, shared_addresses, tag_bytes, tag_ident, tile,
                        unmodelled)
from .tensormap import ElementType as ET
from .units import Unit

if TYPE_CHECKING:  # pragma: no cover
    from .machine import Batch, Machine

UNIT_NAME = "tma"
SHARED_ALIGN = 128  # the shared side of a tensor copy (CUDA C++ Programming Guide, TMA alignment table)
_DIMS = {".1d": 1, ".2d": 2, ".3d": 3, ".4d": 4, ".5d": 5}
_NOT_TILE = {".im2col": "im2col mode (PTX 5.5.4)", ".im2col::w": "im2col::w mode (PTX 5.5.5)",
             ".im2col::w::128": "im2col::w::128 mode (PTX 5.5.5)", ".im2col_no_offs": "im2col_no_offs mode",
             ".tile::gather4": "tile::gather4 mode (PTX 5.5.3.4)",
             ".tile::scatter4": "tile::scatter4 mode (PTX 5.5.3.4)"}

_REGISTRIES: "weakref.WeakKeyDictionary[Machine, Registry]" = weakref.WeakKeyDictionary()


def registry(machine: "Machine") -> Registry:
    """The device-built tensor-map objects of one machine's run (global memory outlives batches)."""
    reg = _REGISTRIES.get(machine)
    if reg is None:
        reg = _REGISTRIES[machine] = Registry()
    return reg


# ---------------------------------------------------------------------- tensor-map objects in memory


def _object_fields(machine: "Machine", raw: np.ndarray, where: str, ins: A.Instruction) -> MapFields | None:
    """The fields of the object whose 128 bytes are `raw`; an empty MapFields for zero bytes; None
    for bytes that hold no object Volta knows."""
    ident = tag_ident(raw)
    if ident is None:
        return MapFields() if not np.any(raw) else None
    if is_param_ident(ident):
        tm = _launch_map(machine, ident, where, ins)
        return MapFields.of(tm, tm.address(machine.addresses))
    fields = registry(machine).objects.get(ident)
    if fields is None:
        raise Unsupported(f"{ins.name}: the tensor map at {where} is an object of another run", ins)
    return fields


def _launch_map(machine: "Machine", ident: int, where: str, ins: A.Instruction) -> TensorMap:
    tm = machine.launch.tensor_maps.get(ident - 1)
    if tm is None:
        raise Unsupported(f"{ins.name}: the bytes at {where} name kernel parameter {ident - 1}, which is not a "
                          "tensor map of this launch", ins)
    return tm


def _resolve(machine: "Machine", raw: np.ndarray, where: str, ins: A.Instruction) -> tuple[TensorMap, int]:
    """The tensor map (and its global address) whose object's bytes are `raw`."""
    ident = tag_ident(raw)
    if ident is None:
        if not np.any(raw):
            raise Unsupported(f"{ins.name}: the tensor map at {where} is 128 zero bytes (no tensor map was "
                              "written there)", ins)
        raise Unsupported(f"{ins.name}: the 128 bytes at {where} hold no tensor map Volta knows (they were written "
                          "by stores that are not a copy of a whole tensor-map object; a CUtensorMap's encoding "
                          "is not documented)", ins)
    if is_param_ident(ident):
        tm = _launch_map(machine, ident, where, ins)
        return tm, tm.address(machine.addresses)
    fields = registry(machine).objects.get(ident)
    if fields is None:
        raise Unsupported(f"{ins.name}: the tensor map at {where} is an object of another run", ins)
    try:
        tm = fields.tensor_map()
    except UnsetField as e:
        raise Unsupported(f"{ins.name}: tensor map built on the device at {where}: {e}", ins) from None
    except TensorMapError as e:
        raise UndefinedBehavior(f"{ins.name}: tensor map built on the device at {where} is invalid: {e}", ins) from None
    return tm, tm.offset


def _map_location(batch: "Batch", ins: A.Instruction, operand: A.Operand, lanes: np.ndarray
                  ) -> tuple[list[str], np.ndarray]:
    """(state space, address in it) of the tensorMap operand for each lane: a generic address in a
    register, or a `.param`/`.const`/`.global` variable (9.7.9.25.5.2)."""
    if not isinstance(operand, A.Sym):
        raise Unsupported(f"{ins.name}: tensor-map operand {operand!r}", ins)
    space, a = batch.ctx.address(A.Address(operand))
    addrs = np.broadcast_to(np.asarray(a, dtype=np.uint64), (batch.n,))[lanes].copy()
    if space is not None:
        if space not in (".param", ".const", ".global"):
            raise UndefinedBehavior(f"{ins.name}: the tensor map must be in .param, .const or .global memory, "
                                    f"not {space}", ins)
        return [".global" if space == ".const" else space] * lanes.size, addrs
    spaces = []
    for i, g in enumerate(addrs):
        g = int(g)
        if SHARED_BASE <= g < SHARED_BASE + WINDOW or LOCAL_BASE <= g < LOCAL_BASE + WINDOW:
            raise UndefinedBehavior(f"{ins.name}: the tensor map's generic address 0x{g:x} is in shared or local "
                                    "memory; it must be in .param, .const or .global memory (9.7.9.25.5.2)", ins)
        if PARAM_BASE <= g < PARAM_BASE + WINDOW:
            spaces.append(".param")
            addrs[i] = np.uint64(g - PARAM_BASE)
        else:
            spaces.append(".global")
    return spaces, addrs


def _describe(space: str, addr: int, batch: "Batch") -> str:
    if space == ".param":
        for p in batch.prog.params:
            if batch.memory.param_offsets.get(p.name) == addr:
                return f"kernel parameter {p.name}"
        return f".param offset {addr}"
    return f"{space} address 0x{addr:x}"


def _read_map(machine: "Machine", batch: "Batch", ins: A.Instruction, op, lane: np.ndarray, space: str,
              addr: int) -> tuple[TensorMap, int]:
    """Read the tensor map object at (space, addr) through the tensormap proxy and resolve it."""
    where = _describe(space, addr, batch)
    if addr % TENSOR_MAP_ALIGN:
        raise UndefinedBehavior(f"{ins.name}: the tensor map at {where} is not {TENSOR_MAP_ALIGN}-byte aligned "
                                "(cuTensorMapEncodeTiled)", ins)
    with asyncops.performing(batch, op, ins, lane, proxy=Proxy.TENSORMAP):
        raw = batch.memory.read(space, lane, np.array([addr], dtype=np.uint64), TENSOR_MAP_BYTES, ins)[0]
    tm, base = _resolve(machine, raw, where, ins)
    why = unmodelled(tm)
    if why is not None:
        raise Unsupported(f"{ins.name}: {why}", ins)
    return tm, base


# ---------------------------------------------------------------------- tensor copies (9.7.9.25.5)


def _form(ins: A.Instruction, allowed: set[str]) -> int:
    """Check the modifiers of a tensor copy; returns its dimensionality."""
    mods = ins.modifiers
    for m, what in _NOT_TILE.items():
        if m in mods:
            raise Unsupported(f"{ins.name}: {what}", ins)
    if ".multicast::cluster" in mods:
        raise Unsupported(f"{ins.name}: .multicast::cluster (clusters of several CTAs are not modelled)", ins)
    if ".cta_group::2" in mods:
        raise Unsupported(f"{ins.name}: .cta_group::2 (CTA pairs are not modelled)", ins)
    dims = [d for m, d in _DIMS.items() if m in mods]
    if len(dims) != 1:
        raise Unsupported(f"{ins.name}: expected one of .1d to .5d", ins)
    _check(ins, allowed | {m for m in mods if m in _DIMS})
    return dims[0]


def _operands(ins: A.Instruction) -> list[A.Operand]:
    ops = list(ins.operands)
    if ".L2::cache_hint" in ins.modifiers:
        if not ops:
            raise Unsupported(f"{ins.name}: .L2::cache_hint without a cache-policy operand", ins)
        ops.pop()  # the cache policy: a performance hint
    return ops


def _coords(batch: "Batch", ins: A.Instruction, ta: A.Operand, rank: int, lanes: np.ndarray
            ) -> tuple[A.Operand, np.ndarray]:
    """The tensor-map operand and the (k, rank) s32 tensor coordinates of `[tmap, {c0, ..}]`."""
    if not isinstance(ta, A.TensorAddress) or len(ta.rest) != 1 or not isinstance(ta.rest[0], A.Vector):
        raise Unsupported(f"{ins.name}: expected a [tensorMap, {{coordinates}}] operand", ins)
    els = ta.rest[0].elements
    if len(els) != rank:
        raise UndefinedBehavior(f"{ins.name}: {len(els)} tensor coordinates for a {rank}d copy", ins)
    # registers hold bits: reinterpret them as .s32
    cols = [np.broadcast_to(np.asarray(batch.ctx.read(e, ".s32")), (batch.n,))[lanes].astype(np.uint32)
            .view(np.int32).astype(np.int64) for e in els]
    return ta.tensor, np.stack(cols, axis=1) if cols else np.zeros((lanes.size, 0), dtype=np.int64)


def _check_box(ins: A.Instruction, tm: TensorMap, rank: int, coords: np.ndarray) -> None:
    """The copy's rank is the map's; the box starts 16-byte aligned (5.5.3.1: "The address of the
    bounding box must also be aligned to 16 bytes"; the global address and strides are, so the
    innermost coordinate decides)."""
    if tm.rank != rank:
        raise UndefinedBehavior(f"{ins.name}: a {rank}d copy through a rank-{tm.rank} tensor map", ins)
    if (int(coords[0]) * tm.elem_bytes) % 16:
        raise UndefinedBehavior(f"{ins.name}: tensor coordinate {int(coords[0])} of dimension 0 puts the box at a "
                                f"{int(coords[0]) * tm.elem_bytes}-byte offset, not 16-byte aligned (PTX 5.5.3.1)",
                                ins)


def _shared_start(batch: "Batch", ins: A.Instruction, lane: np.ndarray, start: int, tm: TensorMap) -> np.ndarray:
    """Shared addresses of the box's elements, checked to lie in shared memory (a fault at issue)."""
    if start % SHARED_ALIGN:
        raise UndefinedBehavior(f"{ins.name}: shared memory address 0x{start:x} is not {SHARED_ALIGN}-byte aligned",
                                ins)
    n = tm.box_bytes() // tm.elem_bytes
    sh = shared_addresses(tm, start, n)
    lo, hi = int(sh.min()), int(sh.max()) + tm.elem_bytes
    _in_shared(batch, ins, lane, np.array([lo]), hi - lo)
    return sh


def _chunks(tm: TensorMap, inside: np.ndarray) -> tuple[int, np.ndarray]:
    """Elements per 16-byte cell and which cells lie wholly inside the tensor (a row of the box is a
    whole number of cells without interleave; a cell never straddles two rows)."""
    f = 16 // tm.elem_bytes if tm.elem_bytes < 16 else 1
    return f, inside.reshape(-1, f).all(axis=1)


def _global_order(t, f: int, whole: np.ndarray) -> np.ndarray:
    """The box's bytes (indices into its shared-memory image, (cells, 16) flattened) in the order a
    copy touches them in global memory: the cells wholly inside the tensor, then the inside elements
    of the other cells; out-of-bounds elements are not touched (zero-filled on load, not written on
    store: 9.7.9.25.5.2, tiled mode 5.5.3). `_gather` and `_scatter` move bytes in this order, and
    observers that follow bytes are told it (CopyLayout)."""
    eb = t.elem_bytes
    in_whole = np.repeat(whole, f)
    part = t.inside & ~in_whole
    byte = np.arange(eb, dtype=np.int64)
    first = (np.nonzero(in_whole)[0][:, None] * eb + byte).reshape(-1)
    rest = (np.nonzero(part)[0][:, None] * eb + byte).reshape(-1)
    return np.concatenate([first, rest])


def _load_source(t, order: np.ndarray) -> np.ndarray:
    """For each byte of the box's shared image: its index among the bytes read (`order`), -1 for
    a zero fill."""
    source = np.full(t.n * t.elem_bytes, -1, dtype=np.int64)
    source[order] = np.arange(order.size, dtype=np.int64)
    return source


def _gather(batch: "Batch", ins: A.Instruction, lane: int, base: int, t, f: int, whole: np.ndarray,
            source: np.ndarray) -> np.ndarray:
    """The box's bytes as (cells, 16): inside elements read from global memory (in `_global_order`,
    whose inverse is `source`), the rest zero."""
    eb, cells = t.elem_bytes, t.n // f
    mem = batch.memory
    addrs = (np.int64(base) + t.offsets).astype(np.uint64)
    got = []
    if whole.any():
        first = addrs.reshape(cells, f)[whole, 0]
        got.append(mem.read(".global", np.full(first.size, lane), first, f * eb, ins).reshape(-1))
    part = t.inside.reshape(cells, f) & ~whole[:, None]
    if part.any():
        sel = np.nonzero(part.reshape(-1))[0]
        got.append(mem.read(".global", np.full(sel.size, lane), addrs[sel], eb, ins).reshape(-1))
    out = np.zeros(t.n * eb, dtype=np.uint8)
    if got:
        filled = source >= 0
        out[filled] = np.concatenate(got)[source[filled]]
    return out.reshape(cells, f * eb)


def _scatter(batch: "Batch", ins: A.Instruction, lane: int, base: int, t, f: int, whole: np.ndarray,
             data: np.ndarray, order: np.ndarray) -> None:
    """Write the inside elements of (cells, 16) `data` to global memory, in `order` (`_global_order`;
    outside ones are skipped)."""
    eb, cells = t.elem_bytes, t.n // f
    mem = batch.memory
    addrs = (np.int64(base) + t.offsets).astype(np.uint64)
    moved = data.reshape(-1)[order]
    n_whole = int(whole.sum()) * f * eb
    if whole.any():
        first = addrs.reshape(cells, f)[whole, 0]
        mem.write(".global", np.full(first.size, lane), first, moved[:n_whole].reshape(-1, f * eb), ins)
    part = t.inside.reshape(cells, f) & ~whole[:, None]
    if part.any():
        sel = np.nonzero(part.reshape(-1))[0]
        mem.write(".global", np.full(sel.size, lane), addrs[sel], moved[n_whole:].reshape(-1, eb), ins)


def tensor_copy(machine: "Machine", batch: "Batch", u: AsyncCopyUnit, ins: A.Instruction, mask: np.ndarray) -> None:
    """cp.async.bulk.tensor in either direction (9.7.9.25.5.2)."""
    pos = tuple(p for p in ins.positional if p.startswith((".shared", ".global")))
    if pos in ((".shared::cluster", ".global"), (".shared::cta", ".global")):
        _load(machine, batch, ins, mask, pos)
    elif pos == (".global", ".shared::cta"):
        _store(machine, batch, u, ins, mask, None)
    else:
        raise Unsupported(f"{ins.name}: direction {' '.join(pos)}", ins)


def _load(machine: "Machine", batch: "Batch", ins: A.Instruction, mask: np.ndarray, pos: tuple[str, ...]) -> None:
    rank = _form(ins, {".async", ".bulk", ".tensor", ".tile", ".mbarrier::complete_tx::bytes", ".cta_group::1",
                       ".L2::cache_hint", *pos})
    if ".mbarrier::complete_tx::bytes" not in ins.modifiers:
        raise Unsupported(f"{ins.name}: a global -> shared tensor copy completes through .mbarrier::complete_tx::bytes",
                          ins)
    ops = _operands(ins)
    if len(ops) != 3:
        raise Unsupported(f"{ins.name}: {len(ins.operands)} operands", ins)
    lanes = np.nonzero(mask)[0]
    dst = _shared_offsets(machine, batch, ins, ops[0], lanes)
    tmap, coords = _coords(batch, ins, ops[1], rank, lanes)
    spaces, where = _map_location(batch, ins, tmap, lanes)
    keys = MB.shared_keys(machine, batch, ins, ops[2], lanes)
    mu = MB.unit(batch)
    for i in range(lanes.size):
        li = lanes[i:i + 1]
        lane = int(lanes[i])
        op = asyncops.issue(batch, UNIT_NAME, ins, li, Completion.MBARRIER)
        tm, base = _read_map(machine, batch, ins, op, li, spaces[i], int(where[i]))
        _check_box(ins, tm, rank, coords[i])
        t = tile(tm, coords[i])
        if tm.oob_fill is OobFill.NAN_REQUEST_ZERO_FMA and not t.inside.all():
            raise Unsupported(f"{ins.name}: out-of-bounds elements with OOB-NaN fill (its bit pattern is not "
                              "documented, PTX 5.5.3.3)", ins)
        sh = _shared_start(batch, ins, li, int(dst[i]), tm)
        f, whole = _chunks(tm, t.inside)
        source = _load_source(t, _global_order(t, f, whole))
        if op is not None:
            batch.emit(CopyLayout(op, lane, source))
        with asyncops.performing(batch, op, ins, li):  # the source is read at issue (latest: any time)
            data = _gather(batch, ins, lane, base, t, f, whole, source)
        cells = sh[::f].astype(np.int64)

        def land(li=li, cells=cells, data=data, op=op, pc=batch.ctx.pc) -> None:
            with asyncops.performing(batch, op, ins, li, pc):
                batch.memory.write(".shared", np.repeat(li, cells.size), cells, data, ins)

        mu.track((int(keys[i, 0]), int(keys[i, 1])), tm.box_bytes(), land, ins, op, dest=li.tobytes() + cells.tobytes())


# ---------------------------------------------------------------------- stores and reductions to global


_RED_TYPES = {".add": {ET.UINT32, ET.INT32, ET.UINT64, ET.FLOAT32, ET.FLOAT16, ET.BFLOAT16},
              ".min": {ET.UINT32, ET.INT32, ET.UINT64, ET.INT64, ET.FLOAT16, ET.BFLOAT16},
              ".max": {ET.UINT32, ET.INT32, ET.UINT64, ET.INT64, ET.FLOAT16, ET.BFLOAT16},
              ".inc": {ET.UINT32}, ".dec": {ET.UINT32},
              ".and": {ET.UINT32, ET.INT32, ET.UINT64, ET.INT64}, ".or": {ET.UINT32, ET.INT32, ET.UINT64, ET.INT64},
              ".xor": {ET.UINT32, ET.INT32, ET.UINT64, ET.INT64}}


def _reduction(red: str, et: ET, ins: A.Instruction):
    """new = f(old, src) on element bits for `.redOp` and the tensor map's element type (9.7.9.25.5.3):
    `.add` on floats rounds to nearest even; `.min`/`.max` on .f16/.bf16 are not modelled."""
    from semantics import floatops as F
    from semantics.ptx.memory import _update

    if et not in _RED_TYPES[red]:
        raise UndefinedBehavior(f"{ins.name}: {red} on a tensor map of {et.value} elements is not a valid combination "
                                "(9.7.9.25.5.3)", ins)
    if et.is_float:
        if red != ".add":
            raise Unsupported(f"{ins.name}: {red} on {et.value} elements", ins)
        fmt = et.info.ptx_type[1:]
        return lambda old, src: F.add(old, src, fmt, "rn")
    ty = et.info.ptx_type if red not in (".and", ".or", ".xor") else f".b{et.info.bits}"
    fn = _update(red[1:], tinfo(ty))
    return lambda old, src: fn(old, src)


def tensor_reduce(machine: "Machine", batch: "Batch", u: AsyncCopyUnit, ins: A.Instruction, mask: np.ndarray) -> None:
    """cp.reduce.async.bulk.tensor.Nd.global.shared::cta.redOp{.tile}.bulk_group (9.7.9.25.5.3)."""
    red = [m for m in ins.modifiers if m in _RED_TYPES]
    if len(red) != 1:
        raise Unsupported(f"{ins.name}: expected one reduction operation", ins)
    pos = tuple(p for p in ins.positional if p.startswith((".shared", ".global")))
    if pos != (".global", ".shared::cta"):
        raise Unsupported(f"{ins.name}: direction {' '.join(pos)}", ins)
    _store(machine, batch, u, ins, mask, red[0])


def _store(machine: "Machine", batch: "Batch", u: AsyncCopyUnit, ins: A.Instruction, mask: np.ndarray,
           red: str | None) -> None:
    extra = {".reduce", red} if red is not None else set()
    rank = _form(ins, {".async", ".bulk", ".tensor", ".tile", ".bulk_group", ".L2::cache_hint", ".global",
                       ".shared::cta", *extra})
    if ".bulk_group" not in ins.modifiers:
        raise Unsupported(f"{ins.name}: a shared -> global tensor copy completes through .bulk_group", ins)
    ops = _operands(ins)
    if len(ops) != 2:
        raise Unsupported(f"{ins.name}: {len(ins.operands)} operands", ins)
    lanes = np.nonzero(mask)[0]
    tmap, coords = _coords(batch, ins, ops[0], rank, lanes)
    src = _shared_offsets(machine, batch, ins, ops[1], lanes)
    spaces, where = _map_location(batch, ins, tmap, lanes)
    for i in range(lanes.size):
        li = lanes[i:i + 1]
        lane = int(lanes[i])
        # two operations for observers, as bulk stores: the reads (the tensor map and the source),
        # which `cp.async.bulk.wait_group.read` completes, and the destination writes (9.7.9.25.6.2)
        reads = asyncops.issue(batch, UNIT_NAME, ins, li, Completion.BULK_GROUP, stream=Stream.BULK_READS)
        writes = asyncops.issue(batch, UNIT_NAME, ins, li, Completion.BULK_GROUP, stream=Stream.BULK_WRITES)
        tm, base = _read_map(machine, batch, ins, reads, li, spaces[i], int(where[i]))
        _check_box(ins, tm, rank, coords[i])
        if (coords[i] < 0).any():
            raise UndefinedBehavior(f"{ins.name}: tensor coordinates {tuple(int(c) for c in coords[i])}: a "
                                    ".global.shared::cta copy needs non-negative coordinates (9.7.9.25.5.1)", ins)
        fn = _reduction(red, tm.dtype, ins) if red is not None else None
        t = tile(tm, coords[i])
        sh = _shared_start(batch, ins, li, int(src[i]), tm)
        f, whole = _chunks(tm, t.inside)
        order = _global_order(t, f, whole)
        if writes is not None and fn is None:
            batch.emit(CopyLayout(writes, lane, order, reads))
        cells = sh[::f].astype(np.int64)
        inside = (np.int64(base) + t.offsets[t.inside]).astype(np.uint64)
        if inside.size:
            _in_global(batch, ins, np.repeat(li, inside.size), inside, tm.elem_bytes)

        def perform(li=li, lane=lane, base=base, t=t, f=f, whole=whole, cells=cells, fn=fn, reads=reads,
                    writes=writes, order=order, pc=batch.ctx.pc) -> None:
            with asyncops.performing(batch, reads, ins, li, pc):
                data = batch.memory.read(".shared", np.repeat(li, cells.size), cells, f * t.elem_bytes, ins)
            with asyncops.performing(batch, writes, ins, li, pc, atomic=fn is not None):  # reductions:
                # element-wise .relaxed.gpu atomics (9.7.9.25.5.2)
                if fn is None:
                    _scatter(batch, ins, lane, base, t, f, whole, data, order)
                else:  # a read-modify-write of the destination
                    _reduce_into(batch, ins, lane, base, t, data, fn)

        u.bulk_ops.append(BulkOp(ins, lane, int(u.bulk_committed[lane]), perform, batch.ctx.pc, reads, writes))


def _reduce_into(batch: "Batch", ins: A.Instruction, lane: int, base: int, t, data: np.ndarray, fn) -> None:
    eb = t.elem_bytes
    sel = np.nonzero(t.inside)[0]
    if not sel.size:
        return
    addrs = (np.int64(base) + t.offsets[sel]).astype(np.uint64)
    lanes = np.full(sel.size, lane)
    src = from_bytes(np.ascontiguousarray(data.reshape(-1, eb)[sel]))
    old = from_bytes(batch.memory.read(".global", lanes, addrs, eb, ins))
    new = np.asarray(fn(old, src)).astype(old.dtype)
    batch.memory.write(".global", lanes, addrs, to_bytes(new, eb), ins)


def tensor_prefetch(machine: "Machine", batch: "Batch", ins: A.Instruction, mask: np.ndarray) -> None:
    """cp.async.bulk.prefetch.tensor.Nd.L2.global{.tile}{.L2::cache_hint} (9.7.9.25.5.4): a hint."""
    _form(ins, {".async", ".bulk", ".prefetch", ".tensor", ".L2", ".global", ".tile", ".L2::cache_hint"})
    if ".L2" not in ins.modifiers:
        raise Unsupported(f"{ins.name}: prefetch to .L2 only", ins)


# ---------------------------------------------------------------------- tensormap.replace, cp_fenceproxy

_FIELDS = {f.value: f for f in MapField}
# Table 33: the valid new_val encodings of the .field3 fields
_FIELD3_VALID = {MapField.ELEMTYPE: range(16), MapField.INTERLEAVE_LAYOUT: range(3), MapField.SWIZZLE_MODE: range(5),
                 MapField.SWIZZLE_ATOMICITY: range(4), MapField.FILL_MODE: range(2)}


def tensormap(machine: "Machine", batch: "Batch", g: Group, ins: A.Instruction, mask: np.ndarray) -> bool:
    if mask.any():
        batch.ctx.begin(mask, ins)
        if ".replace" in ins.modifiers:
            _replace(machine, batch, ins, mask)
        elif ".cp_fenceproxy" in ins.modifiers:
            _cp_fenceproxy(machine, batch, ins, mask)
        else:
            raise Unsupported(f"{ins.name}", ins)
    g.pc += 1
    return True


def _object_address(batch: "Batch", ins: A.Instruction, op: A.Operand, lanes: np.ndarray, space: str | None
                    ) -> tuple[list[str], np.ndarray]:
    _, a = batch.ctx.address(op)
    addrs = np.broadcast_to(np.asarray(a, dtype=np.uint64), (batch.n,))[lanes].copy()
    if space == ".global":
        return [".global"] * lanes.size, addrs
    if space == ".shared::cta":
        return [".shared"] * lanes.size, addrs
    spaces = []
    for i, v in enumerate(addrs):
        v = int(v)
        if SHARED_BASE <= v < SHARED_BASE + WINDOW:
            spaces.append(".shared")
            addrs[i] = np.uint64(v - SHARED_BASE)
        elif LOCAL_BASE <= v < LOCAL_BASE + WINDOW or PARAM_BASE <= v < PARAM_BASE + WINDOW:
            raise UndefinedBehavior(f"{ins.name}: generic address 0x{v:x} is not in the .global or .shared::cta "
                                    "window (9.7.9.26)", ins)
        else:
            spaces.append(".global")
    return spaces, addrs


def _replace(machine: "Machine", batch: "Batch", ins: A.Instruction, mask: np.ndarray) -> None:
    """tensormap.replace.tile.field{.ss}.b1024.type [addr], {ord,} new_val (9.7.9.26): a weak write of
    the whole 128-byte object (the object after the replacement gets a new tag)."""
    fields = [f for m, f in _FIELDS.items() if m in ins.modifiers]
    spaces = [m for m in ins.positional if m in (".global", ".shared::cta")]
    if len(fields) != 1:
        raise Unsupported(f"{ins.name}: expected one tensor-map field", ins)
    f = fields[0]
    ty = ".b64" if f.wide else ".b32"
    if ".tile" not in ins.modifiers:
        raise Unsupported(f"{ins.name}: only .tile mode exists", ins)
    _check(ins, {".replace", ".tile", ".b1024", f.value, ty, *spaces})
    if ".b1024" not in ins.modifiers or ins.types[-1:] != (ty,):
        raise UndefinedBehavior(f"{ins.name}: {f.value} takes a {ty} value in a .b1024 object (9.7.9.26)", ins)
    want = 3 if f.per_dimension else 2
    if len(ins.operands) != want:
        raise Unsupported(f"{ins.name}: {len(ins.operands)} operands; {f.value} takes {want}", ins)
    ordinal = 0
    if f.per_dimension:
        o = ins.operands[1]
        if not isinstance(o, A.IntLit):
            raise UndefinedBehavior(f"{ins.name}: the ordinal must be an immediate (9.7.9.26)", ins)
        ordinal = int(o.value)
        limit = 4 if f is MapField.GLOBAL_STRIDE else 5
        if not 0 <= ordinal < limit:
            raise UndefinedBehavior(f"{ins.name}: ordinal {ordinal} of {f.value} is outside 0..{limit - 1}", ins)
    val_op = ins.operands[-1]
    if f in _FIELD3_VALID and not isinstance(val_op, A.IntLit):
        raise UndefinedBehavior(f"{ins.name}: the new value of {f.value} must be an immediate (9.7.9.26)", ins)
    lanes = np.nonzero(mask)[0]
    values = np.broadcast_to(np.asarray(batch.ctx.read(val_op, ty)), (batch.n,))[lanes].astype(np.uint64)
    where_sp, addrs = _object_address(batch, ins, ins.operands[0], lanes, spaces[0] if spaces else None)
    reg = registry(machine)
    for i in range(lanes.size):
        li = lanes[i:i + 1]
        v = int(values[i])
        if f in _FIELD3_VALID and v not in _FIELD3_VALID[f]:
            raise UndefinedBehavior(f"{ins.name}: {v} is not a valid {f.value} value (9.7.9.26 Table 33)", ins)
        if f is MapField.RANK and not 0 <= v <= 4:
            raise UndefinedBehavior(f"{ins.name}: .rank takes the rank minus one, 0 to 4; got {v}", ins)
        sp, a = where_sp[i], np.array([addrs[i]], dtype=np.uint64)
        raw = batch.memory.read(sp, li, a, TENSOR_MAP_BYTES, ins)[0]
        old = _object_fields(machine, raw, _describe(sp, int(addrs[i]), batch), ins)
        if old is None:
            continue  # unknown bytes stay unknown: using them as a tensor map is unsupported
        ident = reg.add(old.set(f, v, ordinal))
        batch.memory.write(sp, li, a, np.frombuffer(tag_bytes(ident), dtype=np.uint8)[None, :], ins)


def _cp_fenceproxy(machine: "Machine", batch: "Batch", ins: A.Instruction, mask: np.ndarray) -> None:
    """tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.scope.sync.aligned
    [dst], [src], 128 (9.7.13.16): the warp copies the 128-byte object from shared to global memory
    in the generic proxy, then a release proxy fence towards the tensormap proxy on dst."""
    scopes = [m for m in (".cta", ".cluster", ".gpu", ".sys") if m in ins.modifiers]
    _check(ins, {".cp_fenceproxy", ".global", ".shared::cta", ".tensormap::generic", ".release", ".sync", ".aligned",
                 *scopes})
    if ins.positional[:2] != (".global", ".shared::cta") or len(scopes) != 1 or \
            not {".tensormap::generic", ".release", ".sync", ".aligned"} <= ins.modifiers:
        raise Unsupported(f"{ins.name}", ins)
    if len(ins.operands) != 3 or not isinstance(ins.operands[2], A.IntLit) or ins.operands[2].value != TENSOR_MAP_BYTES:
        raise UndefinedBehavior(f"{ins.name}: the size operand must be the immediate 128 (9.7.13.16)", ins)
    lanes = np.nonzero(mask)[0]
    _, d = batch.ctx.address(ins.operands[0])
    _, s = batch.ctx.address(ins.operands[1])
    dst = np.broadcast_to(np.asarray(d, dtype=np.uint64), (batch.n,))[lanes]
    src = np.broadcast_to(np.asarray(s, dtype=np.uint64), (batch.n,))[lanes]
    for w in np.unique(lanes // 32):
        mine = lanes // 32 == w
        warp = np.arange(32 * w, 32 * w + 32)
        if (batch.alive[warp] & ~mask[warp]).any():
            raise UndefinedBehavior(f"{ins.name}: .aligned needs every thread of the warp (warp slot {int(w)})", ins)
        if np.unique(dst[mine]).size != 1 or np.unique(src[mine]).size != 1:
            raise UndefinedBehavior(f"{ins.name}: the threads of warp slot {int(w)} give different addresses", ins)
        first = lanes[mine][:1]
        data = batch.memory.read(".shared", first, src[mine][:1], TENSOR_MAP_BYTES, ins)
        batch.memory.write(".global", first, dst[mine][:1], data, ins)
        if batch.observers:
            batch.emit(Fence(lanes[mine], FenceKind.PROXY, ins, Proxy.TENSORMAP, ".global"))


UNIT = Unit(UNIT_NAME, {"tensormap": tensormap},
            "tensor-map objects: tensormap.replace and tensormap.cp_fenceproxy (PTX 9.7.9.26, 9.7.13.16); the tensor "
            "copies themselves run through async_copy")

