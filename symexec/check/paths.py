"""Whether any input takes an explored path: the branch conditions as Z3 terms of the input bytes.

An explored path is a list of choices (a data-dependent branch, taken or not) made for a thread
(state.Decision). Its condition is the conjunction, for each choice, of "the branch predicate of
that thread equals the choice". The predicate's term comes from the term log of a replay of the
explored run (terms.py): instructions are translated to bit-vector (and IEEE floating-point) terms,
input bytes the run read become 8-bit variables named by buffer and offset, and everything the log
cannot explain (a value another path merged, a warp-collective result, an opcode not translated
here) becomes a fresh variable: the condition is then weaker than the real one, so `unsat` still
means no input takes the path, and `sat` only that one might (the model is replayed to see).

A finding is judged over its alternatives (every thread, or pair of threads, that showed it on an
explored path): pruned when every alternative is unsatisfiable, possible when one is satisfiable.
For a race every pair of threads whose accesses of the two instructions overlap is an alternative
(not only the pair the witness shows), so a pruned race has no feasible pair at all.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import z3

from ptx_parser import ast as A
from semantics.ptx.core import tinfo

from .canon import QUERIES as CANON_QUERIES, RLIMIT as CANON_RLIMIT, Key, free_consts, least_model
from .findings import Finding
from .reach import Judgement, Outcome
from .terms import LoadRecord, OpRecord, TermLog

if TYPE_CHECKING:  # pragma: no cover
    from ..launch import Launch
    from ..program import Program
    from .run import CheckRun
    from .state import CheckState

QUERY_MS = 2000  # one satisfiability question
BUDGET_S = 20.0  # all questions of one check
MAX_PAIRS = 4096  # conflicting thread pairs of one race judged (more: undecided)


class Terms:
    """Z3 terms of the numbers in a term log (cached; unknown numbers are fresh variables)."""

    def __init__(self, log: TermLog, prog: "Program", names: dict) -> None:
        self.log, self.prog, self.names = log, prog, names
        self.cache: dict[tuple[int, int], z3.BitVecRef] = {}
        self.inputs: dict[tuple[object, int], z3.BitVecRef] = {}  # (buffer, offset) -> its byte
        self.fresh = 0

    def byte(self, buffer: object, offset: int) -> z3.BitVecRef:
        v = self.inputs.get((buffer, offset))
        if v is None:
            v = self.inputs[(buffer, offset)] = z3.BitVec(f"{self.names.get(buffer, buffer)}[{offset}]", 8)
        return v

    def unknown(self, width: int) -> z3.BitVecRef:
        self.fresh += 1
        return z3.BitVec(f"?{self.fresh}", width)

    def of(self, number: int, width: int) -> z3.BitVecRef:
        key = (number, width)
        got = self.cache.get(key)
        if got is None:
            got = self.cache[key] = fit(self._build(number, width), width)
        return got

    def _build(self, number: int, width: int) -> z3.BitVecRef:
        found = self.log.find(number)
        if found is None:
            return self.unknown(width)
        kind, rec, row = found
        if kind == "leaf":
            return self.byte(*rec)
        if kind == "load":
            return self._load(rec, row)
        return self._op(rec, row)

    def _load(self, rec: LoadRecord, row: int) -> z3.BitVecRef:
        parts = []
        for h, pos in zip(rec.bytes_[row].tolist(), rec.pos[row].tolist()):
            found = self.log.find(int(h))
            if found is not None and found[0] == "leaf":
                parts.append(self.byte(*found[1]))
            elif pos != 0xFF and found is not None:  # byte (pos & 15) of a value of 2^(pos >> 4) bytes
                nb = 1 << (pos >> 4)
                whole = self.of(int(h), 8 * nb)
                i = pos & 15
                parts.append(z3.Extract(8 * i + 7, 8 * i, whole) if i < nb else self.unknown(8))
            else:
                parts.append(self.unknown(8))
        return z3.Concat(*reversed(parts)) if len(parts) > 1 else parts[0]  # little-endian

    def _operand(self, rec: OpRecord, row: int, i: int) -> z3.BitVecRef:
        w = rec.widths[i]
        if int(rec.taints[i][row]) == 0:
            return z3.BitVecVal(int(rec.values[i][row]) & ((1 << w) - 1), w)
        return self.of(int(rec.hashes[i][row]), w)

    def _op(self, rec: OpRecord, row: int) -> z3.BitVecRef:
        ins = self.prog.code[rec.pc]
        kids = [self._operand(rec, row, i) for i in range(len(rec.widths))]
        try:
            got = translate(ins, rec.k, kids)
        except (z3.Z3Exception, ValueError, KeyError, IndexError):
            got = None
        return got if got is not None else self.unknown(rec.width)


def fit(x: z3.BitVecRef, width: int) -> z3.BitVecRef:
    """x's low `width` bits, or x zero-extended to `width`."""
    w = x.size()
    if w == width:
        return x
    return z3.Extract(width - 1, 0, x) if w > width else z3.ZeroExt(width - w, x)


def _ext(x: z3.BitVecRef, width: int, signed: bool) -> z3.BitVecRef:
    w = x.size()
    if w >= width:
        return z3.Extract(width - 1, 0, x)
    return (z3.SignExt if signed else z3.ZeroExt)(width - w, x)


def _bit(c) -> z3.BitVecRef:
    return z3.If(c, z3.BitVecVal(1, 1), z3.BitVecVal(0, 1))


_FP = {32: z3.Float32(), 64: z3.Float64(), 16: z3.Float16()}
_RM = {".rn": z3.RNE(), ".rz": z3.RTZ(), ".rm": z3.RTN(), ".rp": z3.RTP()}
_BOOL = {".and": z3.And, ".or": z3.Or, ".xor": z3.Xor}


def _compare(op: str, a, b, kind: str):
    if kind == "f":
        fa, fb = a, b
        unordered = z3.Or(z3.fpIsNaN(fa), z3.fpIsNaN(fb))
        ordered = {"eq": z3.fpEQ, "ne": lambda x, y: z3.Not(z3.fpEQ(x, y)), "lt": z3.fpLT, "le": z3.fpLEQ,
                   "gt": z3.fpGT, "ge": z3.fpGEQ}
        if op == "num":
            return z3.Not(unordered)
        if op == "nan":
            return unordered
        if op.endswith("u") and op[:-1] in ordered:
            return z3.Or(ordered[op[:-1]](fa, fb), unordered)
        return z3.And(ordered[op](fa, fb), z3.Not(unordered))
    signed = kind == "s"
    op = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}.get(op, op)
    table = {"eq": lambda x, y: x == y, "ne": lambda x, y: x != y,
             "lt": (lambda x, y: x < y) if signed else z3.ULT, "le": (lambda x, y: x <= y) if signed else z3.ULE,
             "gt": (lambda x, y: x > y) if signed else z3.UGT, "ge": (lambda x, y: x >= y) if signed else z3.UGE}
    return table[op](a, b)


def translate(ins: A.Instruction, k: int, kids: list[z3.BitVecRef]) -> z3.BitVecRef | None:
    """The Z3 term of destination k of `ins` on operand terms `kids` (in reading order); None for
    what is not translated (the caller makes it a fresh variable)."""
    op, mods = ins.opcode, ins.modifiers
    if not ins.types or mods & {".sat", ".cc", ".ftz", ".approx", ".full"}:
        return None
    t = tinfo(ins.types[-1])
    w, kind = t.width, t.kind
    if op == "setp" and not mods & {".ftz"}:
        cmp = next(m.lstrip(".") for m in mods if m.lstrip(".") in
                   {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu", "ltu", "leu", "gtu",
                    "geu", "num", "nan"})
        a, b = (fit(x, w) for x in kids[:2])
        if kind == "f":
            if w not in _FP:
                return None
            a, b = z3.fpBVToFP(a, _FP[w]), z3.fpBVToFP(b, _FP[w])
        c = _compare(cmp, a, b, "f" if kind == "f" else ("s" if kind == "s" else "u"))
        if k == 1:
            c = z3.Not(c)
        boolop = next((m for m in mods if m in _BOOL), None)
        if boolop is not None:
            third = kids[2] == 1
            if isinstance(ins.operands[3], A.Negated):
                third = z3.Not(third)
            c = _BOOL[boolop](c, third)
        return _bit(c)
    if k != 0:
        return None
    if op == "selp":
        c = kids[2] == 1
        if isinstance(ins.operands[3], A.Negated):
            c = z3.Not(c)
        return z3.If(c, fit(kids[0], w), fit(kids[1], w))
    if op == "cvt":
        return _cvt(ins, mods, kids)
    if kind == "pred":
        a = [fit(x, 1) for x in kids]
        return {"and": lambda: a[0] & a[1], "or": lambda: a[0] | a[1], "xor": lambda: a[0] ^ a[1],
                "not": lambda: ~a[0], "mov": lambda: a[0]}.get(op, lambda: None)()
    if kind == "f":
        return _float(ins, op, mods, w, kids)
    return _int(ins, op, mods, t, kids)


def _cvt(ins: A.Instruction, mods: frozenset, kids: list) -> z3.BitVecRef | None:
    """cvt.dtype.atype between integer types: truncation, or sign/zero extension by the source
    type (PTX 9.7.9.21); float conversions and rounding/saturation modifiers: None."""
    if len(ins.types) != 2:
        return None
    dst, src = tinfo(ins.types[0]), tinfo(ins.types[1])
    if src.kind not in "bsu" or dst.kind not in "bsu" or mods - set(ins.types):
        return None
    return _ext(fit(kids[0], src.width), dst.width, src.kind == "s")


def _int(ins: A.Instruction, op: str, mods: frozenset, t, kids: list) -> z3.BitVecRef | None:
    """Integer and bit arithmetic of type t (PTX 9.7.1, 9.7.8)."""
    w, signed = t.width, t.kind == "s"
    a = [fit(x, w) for x in kids]
    unary = {"not": 1, "neg": 1, "mov": 1, "abs": 1}
    if op in ("add", "sub", "and", "or", "xor", "not", "neg", "mov", "min", "max", "abs") and len(a) == \
            unary.get(op, 2):
        if op in ("min", "max"):
            less = (lambda x, y: x < y) if signed else z3.ULT
            return z3.If(less(a[0], a[1]), a[0], a[1]) if op == "min" else z3.If(less(a[0], a[1]), a[1], a[0])
        return {"add": lambda: a[0] + a[1], "sub": lambda: a[0] - a[1], "and": lambda: a[0] & a[1],
                "or": lambda: a[0] | a[1], "xor": lambda: a[0] ^ a[1], "not": lambda: ~a[0], "neg": lambda: -a[0],
                "mov": lambda: a[0], "abs": lambda: z3.If(a[0] < 0, -a[0], a[0])}[op]()
    if op in ("shl", "shr") and len(kids) == 2:  # shift amounts beyond the width give 0 / the sign
        amount = fit(kids[1], 32)
        amount = _ext(amount, w, False) if w >= 32 else z3.If(z3.UGE(amount, w), z3.BitVecVal(w, w),
                                                                fit(amount, w))
        if op == "shl":
            return a[0] << amount
        return a[0] >> amount if signed else z3.LShR(a[0], amount)
    if op in ("mul", "mad") and len(kids) == (2 if op == "mul" else 3):
        if ".wide" in mods:
            prod = _ext(a[0], 2 * w, signed) * _ext(a[1], 2 * w, signed)
            return prod + fit(kids[2], 2 * w) if op == "mad" else prod
        if ".hi" in mods:
            prod = _ext(a[0], 2 * w, signed) * _ext(a[1], 2 * w, signed)
            hi = z3.Extract(2 * w - 1, w, prod)
            return hi + a[2] if op == "mad" else hi
        prod = a[0] * a[1]
        return prod + a[2] if op == "mad" else prod
    return None


def _float(ins: A.Instruction, op: str, mods: frozenset, w: int, kids: list) -> z3.BitVecRef | None:
    """add/sub/mul/fma/neg/abs/mov of f32/f64 with an explicit or default (.rn) rounding."""
    if w not in (32, 64) or op not in ("add", "sub", "mul", "fma", "neg", "abs", "mov"):
        return None
    rm = next((_RM[m] for m in mods if m in _RM), z3.RNE())
    f = [z3.fpBVToFP(fit(x, w), _FP[w]) for x in kids]
    if op == "add":
        r = z3.fpAdd(rm, f[0], f[1])
    elif op == "sub":
        r = z3.fpSub(rm, f[0], f[1])
    elif op == "mul":
        r = z3.fpMul(rm, f[0], f[1])
    elif op == "fma":
        r = z3.fpFMA(rm, f[0], f[1], f[2])
    elif op == "neg":
        r = z3.fpNeg(f[0])
    elif op == "abs":
        r = z3.fpAbs(f[0])
    else:
        return fit(kids[0], w)
    return z3.fpToIEEEBV(r)


# ---------------------------------------------------------------------- judging findings


class PathConditions:
    """Path conditions of one explored run (its decisions and term log)."""

    def __init__(self, state: "CheckState", prog: "Program", names: dict) -> None:
        self.state = state
        self.terms = Terms(state.terms or TermLog(), prog, names)
        self.deadline = time.monotonic() + BUDGET_S
        self.cache: dict[frozenset, tuple[z3.CheckSatResult, list]] = {}
        self.model: z3.ModelRef | None = None

    def literals(self, path: tuple[int, ...], row: int) -> list | None:
        """The conditions of `path` for the thread of clock row `row`; None when one is a
        contradiction on fixed values (the thread's predicate did not depend on data)."""
        out = []
        for e in path:
            d = self.state.decisions[e // 2]
            i = d.lane(row)
            if i is None:
                return None  # the thread was not in the branching group: it never took this path
            want = bool(e & 1)
            if int(d.taints[i]) == 0:
                if bool(d.taken[i]) != want:
                    return None
                continue
            pred = self.terms.of(int(d.hashes[i]), 1)
            if d.ins.guard.negated:
                pred = ~pred
            out.append(pred == (1 if want else 0))
        return out

    def check(self, sides: tuple[tuple[tuple[int, ...], int], ...]) -> z3.CheckSatResult:
        lits: list = []
        for side in sides:
            if len(sides) > 1 and self.check((side,)) == z3.unsat:  # each thread's own path first
                return z3.unsat
            got = self.literals(*side)
            if got is None:
                return z3.unsat
            lits += got
        key = frozenset(x.get_id() for x in lits)  # the cache holds the terms: their ids stay theirs
        if key in self.cache:
            return self.cache[key][0]
        if time.monotonic() > self.deadline:
            return z3.unknown
        s = z3.Solver()
        s.set("timeout", QUERY_MS)
        s.add(*lits)
        res = s.check()
        if res == z3.sat and self.model is None:
            self.model = s.model()
        self.cache[key] = (res, lits)
        return res


def race_alternatives(state: "CheckState", pcs: tuple[int, int, object]) -> list | None:
    """Every pair of (path, row) of threads whose accesses of the race's two instructions overlap
    in its buffer; None beyond MAX_PAIRS."""
    pa, pb, buf = pcs
    evs = [e for e in state.log or () if e.buffer == buf and e.pc in (pa, pb)]  # a terms run keeps the log
    by_byte: dict[int, list[tuple[int, int, int]]] = {}
    for ei, e in enumerate(evs):
        for j in range(e.lanes.size):
            for byte in np.unique(e.flat[j]).tolist():
                by_byte.setdefault(byte, []).append((ei, j, e.pc))
    out: set = set()
    for accs in by_byte.values():
        for x in accs:
            for y in accs:
                if x[2] == pa and y[2] == pb and (x[0], x[1]) != (y[0], y[1]):
                    ex, ey = evs[x[0]], evs[y[0]]
                    if ex.kind == 0 and ey.kind == 0:
                        continue  # two reads do not conflict
                    out.add(((ex.path, int(ex.rows[x[1]])), (ey.path, int(ey.rows[y[1]]))))
                    if len(out) > MAX_PAIRS:
                        return None
    return sorted(out)


@dataclass
class ModelInput:
    """An input a Z3 model describes: the launch's buffers with the model's bytes written in."""

    launch: "Launch"
    changes: list[str]  # `row[47] = 106 (launch: 105)`

    def describe(self) -> str:
        if not self.changes:
            return "the launch's own values (the model constrains no input it changes)"
        return ", ".join(self.changes[:6]) + (f" and {len(self.changes) - 6} more" if len(self.changes) > 6 else "")


def model_input(model: z3.ModelRef, terms: Terms, launch: "Launch", names: dict) -> ModelInput | None:
    """The launch with the input bytes a model gives; None when a buffer it changes is not held as
    an array (a contract's lazily generated inputs)."""
    by_buf: dict[str, dict[int, int]] = {}
    for (buf, off), var in terms.inputs.items():
        v = model.eval(var, model_completion=False)
        name = names.get(buf)
        if isinstance(v, z3.BitVecNumRef) and name is not None:
            by_buf.setdefault(name, {})[off] = v.as_long()
    buffers = dict(launch.buffers)
    changes = []
    for name, bytes_ in by_buf.items():
        arr = buffers.get(name)
        if not isinstance(arr, np.ndarray):
            return None
        new = np.array(arr, copy=True)
        raw = new.reshape(-1).view(np.uint8)
        item = new.dtype.itemsize
        for off, v in bytes_.items():
            if off < raw.size:
                raw[off] = v
        for elem in sorted({o // item for o in bytes_ if o < raw.size}):
            a, b = np.asarray(arr).reshape(-1)[elem], new.reshape(-1)[elem]
            if a.tobytes() != b.tobytes():
                changes.append(f"{name}[{elem}] = {b.item()} (launch: {a.item()})")
        buffers[name] = new
    return ModelInput(replace(launch, buffers=buffers), changes)


def judge_findings(findings: list[Finding], run: "CheckRun", prog: "Program", launch: "Launch") -> list[Judgement]:
    """Judge findings of the explored run `run` that the launch's input does not reach (reach.py)."""
    from .run import new_run, record_report

    t_run = new_run(prog, launch, run.ctas, terms=True)  # the same exploration, recording terms
    t_rep = record_report(t_run, prog, launch)
    by_key = {}
    for f in t_rep.findings:
        by_key.setdefault(f.key, f)
    allocs = t_run.machine.glob.allocations
    names = {}
    for buf in list(t_run.state.mem):
        if getattr(buf, "space", None) is not None and buf.space.value == "global" and buf.index < len(allocs):
            names[buf] = allocs[buf.index].name
    pc = PathConditions(t_run.state, prog, names)
    out = []
    for f in findings:
        g = by_key.get(f.key)
        if g is None or g.origin is None:
            out.append(Judgement(f, Outcome.UNKNOWN, "no explored path was recorded for it"))
            continue
        alts = list(g.origin.alternatives)
        if g.origin.race is not None:
            pairs = race_alternatives(t_run.state, g.origin.race)
            if pairs is None:
                out.append(Judgement(f, Outcome.UNKNOWN, f"more than {MAX_PAIRS} pairs of threads to decide"))
                continue
            alts = pairs
        if any(all(not p for p, _ in alt) for alt in alts):
            out.append(Judgement(f, Outcome.UNKNOWN, "seen on a path of the launch's input in the explored run, "
                                                     "not in its replay"))
            continue
        results = [pc.check(alt) for alt in alts]
        if all(r == z3.unsat for r in results):
            out.append(Judgement(f, Outcome.PRUNED, f"Z3: the branch conditions of all {len(alts)} thread(s)/pair(s) "
                                                    "are unsatisfiable"))
        elif any(r == z3.sat for r in results):
            i = next(i for i, r in enumerate(results) if r == z3.sat)
            out.append(_replay_model(f, pc, alts[i], prog, launch, run.ctas, names))
        else:
            out.append(Judgement(f, Outcome.UNKNOWN, "Z3 could not decide the branch conditions in time"))
    return out


def _least_input(s: z3.Solver, terms: Terms, names: dict) -> z3.ModelRef:
    """The model of `s` (sat) least over the input bytes its conditions mention, by buffer name and offset: the
    input a judgement names is then the same in every run (canon.py)."""
    used = free_consts(s.assertions())
    order = sorted(terms.inputs.items(), key=lambda kv: (str(names.get(kv[0][0], kv[0][0])), kv[0][1]))
    keys = [Key(var) for _, var in order if var.get_id() in used]
    return least_model(s, keys, CANON_QUERIES, CANON_RLIMIT, QUERY_MS)


def _replay_model(f: Finding, pc: PathConditions, alt, prog: "Program", launch: "Launch", ctas,
                  names: dict) -> Judgement:
    """A satisfiable path condition: run the model's input concretely; the finding is possible only
    if that run shows it (the condition may be weaker than the real one, see the module docstring)."""
    from .run import conclude, new_run, record_report

    s = z3.Solver()
    s.set("timeout", QUERY_MS)
    s.add(*sum((pc.literals(p, row) or [] for p, row in alt), []))
    if s.check() != z3.sat:
        return Judgement(f, Outcome.UNKNOWN, "Z3 could not give a model of the branch conditions")
    given = model_input(_least_input(s, pc.terms, names), pc.terms, launch, names)
    if given is None:
        return Judgement(f, Outcome.UNKNOWN, "the branch conditions are satisfiable, but the model's input could not "
                                             "be replayed (inputs not held as arrays)")
    r = new_run(prog, given.launch, ctas, concrete=True)
    rep = conclude(record_report(r, prog, given.launch), r.state)
    if any(g.key == f.key for g in rep.findings):
        return Judgement(f, Outcome.POSSIBLE, f"an input with {given.describe()} reaches it (replayed concretely)",
                         rep, given.describe(), given.launch)
    return Judgement(f, Outcome.UNKNOWN, f"the branch conditions allow an input with {given.describe()}, but "
                                         "replaying that input does not show it")


__all__ = ["judge_findings", "translate", "Terms", "PathConditions", "model_input", "ModelInput"]
