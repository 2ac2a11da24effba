"""Warp-level data exchange: shfl.sync, vote.sync, redux.sync, match.sync, activemask, elect.sync
(PTX 9.7.9.6, 9.7.13.9-9.7.13.13). Lanes are laid out 32 per warp, so a (n,) value reshapes to
(warps, 32)."""

from __future__ import annotations

import numpy as np

from ptx_parser import ast as A
from semantics import fspecial as FS
from semantics.errors import UndefinedBehavior, Unsupported

from .core import Exec, check_mods, handler, tinfo


def _full(x: Exec, v: np.ndarray) -> np.ndarray:
    return np.broadcast_to(np.asarray(v), (x.n,))


def _lane_bits(x: Exec) -> np.ndarray:
    return (np.uint32(1) << (np.arange(x.n, dtype=np.uint32) % 32)).astype(np.uint32)


def _check_members(ins: A.Instruction, x: Exec, members: np.ndarray) -> None:
    """Every executing lane must be in membermask, and every member must execute with it
    (a member on another divergent path would have to be waited for)."""
    m = _full(x, members).astype(np.uint32)
    bit = _lane_bits(x)
    in_mask = (m & bit) != 0
    if (x.mask & ~in_mask).any():
        lane = int(np.nonzero(x.mask & ~in_mask)[0][0])
        raise UndefinedBehavior(f"{ins.name}: lane {lane % 32} of warp {lane // 32} is not in membermask", ins)
    warps = x.mask.reshape(-1, 32)
    active_bits = (warps * (np.uint32(1) << np.arange(32, dtype=np.uint32))).sum(axis=1, dtype=np.uint64)
    # per warp with an executing lane, the membermask of its first executing lane (all warps at once)
    member = m.reshape(-1, 32)[np.arange(warps.shape[0]), np.argmax(warps, axis=1)].astype(np.uint64)
    bad = warps.any(axis=1) & ((member & ~active_bits & np.uint64(0xFFFFFFFF)) != 0)
    if bad.any():
        w = int(np.nonzero(bad)[0][0])
        raise Unsupported(f"{ins.name}: membermask 0x{int(member[w]):08x} names lanes that are not executing "
                          f"with warp {w} here (divergent warp-synchronous code)", ins)


@handler("shfl")
def shfl(ins: A.Instruction, x: Exec) -> None:
    check_mods(ins, {".sync", ".up", ".down", ".bfly", ".idx"})
    if ".sync" not in ins.modifiers:
        raise Unsupported(f"{ins.name}: shfl without .sync", ins)
    mode = next(m for m in (".up", ".down", ".bfly", ".idx") if m in ins.modifiers)
    dst = ins.operands[0]
    a = _full(x, x.read(ins.operands[1], ".b32"))
    b = _full(x, x.read(ins.operands[2], ".u32")).astype(np.int64) & 31
    c = _full(x, x.read(ins.operands[3], ".u32")).astype(np.int64)
    _check_members(ins, x, x.read(ins.operands[4], ".u32"))
    lane = np.arange(x.n, dtype=np.int64) % 32
    cval, seg = c & 31, (c >> 8) & 31
    max_lane = (lane & seg) | (cval & ~seg)
    min_lane = lane & seg
    if mode == ".up":
        j = lane - b
        ok = j >= max_lane
    elif mode == ".down":
        j = lane + b
        ok = j <= max_lane
    elif mode == ".bfly":
        j = lane ^ b
        ok = j <= max_lane
    else:
        j = min_lane | (b & ~seg)
        ok = j <= max_lane
    j = np.where(ok, j, lane)
    src = (np.arange(x.n) // 32) * 32 + j
    reads_inactive = x.mask & ok & ~x.mask[src]
    if reads_inactive.any():
        lane_ = int(np.nonzero(reads_inactive)[0][0])
        raise UndefinedBehavior(f"{ins.name}: lane {lane_ % 32} reads lane {int(j[lane_])}, which is not "
                                f"executing the shuffle", ins)
    d = a[src]
    x.lane_source(src)
    if isinstance(dst, A.Pair):
        x.write(dst.first, d, ".b32")
        x.write(dst.second, ok, ".pred")
    else:
        x.write(dst, d, ".b32")


@handler("vote")
def vote(ins: A.Instruction, x: Exec) -> None:
    check_mods(ins, {".sync", ".all", ".any", ".uni", ".ballot"})
    if ".sync" not in ins.modifiers:
        raise Unsupported(f"{ins.name}: vote without .sync", ins)
    _check_members(ins, x, x.read(ins.operands[2], ".u32"))
    src = ins.operands[1]
    p = _full(x, x.read(src.operand if isinstance(src, A.Negated) else src, ".pred")).astype(bool)
    if isinstance(src, A.Negated):
        p = ~p
    act = x.mask.reshape(-1, 32)
    pw = p.reshape(-1, 32) & act
    if ".ballot" in ins.modifiers:
        bits = (pw * (np.uint64(1) << np.arange(32, dtype=np.uint64))).sum(axis=1).astype(np.uint32)
        x.write(ins.operands[0], np.repeat(bits, 32), ".b32")
        return
    if ".all" in ins.modifiers:
        r = (pw == act).all(axis=1)
    elif ".any" in ins.modifiers:
        r = pw.any(axis=1)
    else:
        r = (pw == act).all(axis=1) | ~pw.any(axis=1)
    x.write(ins.operands[0], np.repeat(r, 32), ".pred")


@handler("activemask")
def activemask(ins: A.Instruction, x: Exec) -> None:
    check_mods(ins, set())
    act = x.mask.reshape(-1, 32)
    bits = (act * (np.uint64(1) << np.arange(32, dtype=np.uint64))).sum(axis=1).astype(np.uint32)
    x.write(ins.operands[0], np.repeat(bits, 32), ".b32")


@handler("elect")
def elect(ins: A.Instruction, x: Exec) -> None:
    """elect.sync d|p, membermask (9.7.13.14): one active member lane is elected, the same one for
    the same membermask every time; which one the manual leaves open. The emulator elects the
    lowest; check mode the highest (Exec.elect_highest), so that code relying on lane 0 being the
    leader is not proved by accident."""
    check_mods(ins, {".sync"})
    members = _full(x, x.read(ins.operands[1], ".u32")).astype(np.uint32)
    _check_members(ins, x, members)
    act = x.mask.reshape(-1, 32)
    if x.elect_highest:
        first = 31 - np.argmax(act[:, ::-1], axis=1)
    else:
        first = np.argmax(act, axis=1)
    leader = np.zeros_like(act)
    leader[np.arange(act.shape[0]), first] = act.any(axis=1)
    lane_ids = np.repeat(first, 32).astype(np.uint32)
    dst = ins.operands[0]
    if isinstance(dst, A.Pair):
        if not isinstance(dst.first, A.Sink):
            x.write(dst.first, lane_ids, ".b32")
        x.write(dst.second, leader.reshape(-1), ".pred")
    else:
        x.write(dst, leader.reshape(-1), ".pred")


@handler("redux")
def redux(ins: A.Instruction, x: Exec) -> None:
    ops = {".add", ".min", ".max", ".and", ".or", ".xor"}
    check_mods(ins, ops | {".sync", ".abs", ".NaN"})
    op = next(m for m in ops if m in ins.modifiers)
    t = tinfo(ins.types[-1])
    _check_members(ins, x, x.read(ins.operands[2], ".u32"))
    v = _full(x, x.read(ins.operands[1], t.name)).reshape(-1, 32)
    act = x.mask.reshape(-1, 32)
    out = np.zeros(v.shape[0], dtype=t.dtype)
    if t.kind == "f":
        # a left fold over each warp's active lanes in lane order, every warp at once: lane j joins the
        # accumulator of the warps where it is active and follows their first active lane (fmin/fmax are
        # elementwise); a warp with one active lane keeps that lane's value as it is
        fn = FS.fmin if op == ".min" else FS.fmax
        live = act.any(axis=1)
        first = np.argmax(act, axis=1)
        acc = v[np.arange(v.shape[0]), first].astype(t.dtype)
        for j in range(1, 32):
            join = act[:, j] & (j > first)
            if join.any():
                acc = np.where(join, fn(acc, v[:, j].astype(t.dtype), t.fmt, nan=".NaN" in ins.modifiers,
                                        abs_=".abs" in ins.modifiers), acc).astype(t.dtype)
        out[live] = acc[live]
        x.write(ins.operands[0], np.repeat(out, 32), t.name)
        return
    for w in np.nonzero(act.any(axis=1))[0]:
        vals = v[w][act[w]]
        sv = vals.astype(np.int64) if t.signed else vals.astype(np.uint64)
        if t.signed:
            sv = np.where(sv >= 1 << (t.width - 1), sv - (1 << t.width), sv)
        if op == ".add":
            r = int(sv.sum()) & ((1 << t.width) - 1)
        elif op == ".min":
            r = int(sv.min()) & ((1 << t.width) - 1)
        elif op == ".max":
            r = int(sv.max()) & ((1 << t.width) - 1)
        else:
            r = int(np.bitwise_and.reduce(vals) if op == ".and" else
                    np.bitwise_or.reduce(vals) if op == ".or" else np.bitwise_xor.reduce(vals))
        out[w] = r
    x.write(ins.operands[0], np.repeat(out, 32), t.name)


@handler("match")
def match(ins: A.Instruction, x: Exec) -> None:
    check_mods(ins, {".sync", ".any", ".all"})
    t = tinfo(ins.types[-1])
    _check_members(ins, x, x.read(ins.operands[2], ".u32"))
    v = _full(x, x.read(ins.operands[1], t.name)).reshape(-1, 32)
    act = x.mask.reshape(-1, 32)
    res = np.zeros(v.shape, dtype=np.uint32)
    allp = np.zeros(v.shape, dtype=bool)
    for w in np.nonzero(act.any(axis=1))[0]:
        same = (v[w][:, None] == v[w][None, :]) & act[w][None, :]
        bits = (same * (np.uint64(1) << np.arange(32, dtype=np.uint64))).sum(axis=1).astype(np.uint32)
        active_bits = np.uint32(int((act[w] * (1 << np.arange(32, dtype=np.uint64))).sum()))
        if ".all" in ins.modifiers:
            everyone = bits == active_bits
            res[w] = np.where(everyone, active_bits, 0)
            allp[w] = everyone
        else:
            res[w] = bits
    dst = ins.operands[0]
    if isinstance(dst, A.Pair):
        x.write(dst.first, res.reshape(-1), ".b32")
        x.write(dst.second, allp.reshape(-1), ".pred")
    else:
        x.write(dst, res.reshape(-1), ".b32")


@handler("setmaxnreg")
def setmaxnreg(ins: A.Instruction, x: Exec) -> None:
    """setmaxnreg.{inc,dec}.sync.aligned.u32 imm (PTX ISA, setmaxnreg): the warp releases or requests
    registers of its per-thread maximum (24 to 256, a multiple of 8). PTX registers are virtual, so
    no register value changes: no effect on values."""
    check_mods(ins, {".inc", ".dec", ".sync", ".aligned", ".u32"})
    if len(ins.modifiers & {".inc", ".dec"}) != 1 or not {".sync", ".aligned", ".u32"} <= ins.modifiers:
        raise Unsupported(f"{ins.name}", ins)
    op = ins.operands[0] if len(ins.operands) == 1 else None
    if not isinstance(op, A.IntLit) or not (24 <= op.value <= 256 and op.value % 8 == 0):
        raise UndefinedBehavior(f"{ins.name}: the register count must be an immediate multiple of 8 in [24, 256]", ins)
