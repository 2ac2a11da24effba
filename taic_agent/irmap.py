"""IR attribution: Triton's stages (TTIR, TTGIR, LLVM IR) and the PTX lined up by the Triton source
line each operation comes from, to find which line costs the most instructions and which lowering
stage adds them.

Locations: MLIR's ``loc(...)`` (``#locN = loc("file":line:col)``, names ``loc("x"(#locM))``,
call sites ``loc(callsite(#callee at #caller))`` resolved to the caller in the kernel's file),
LLVM's ``!dbg !N`` -> ``!DILocation(line: L, ..., inlinedAt: !M)`` (the outermost frame), and
PTX's ``.loc file line col [, inlined_at f l c]`` (PTX ISA 11.2, the outermost frame). Lines of
other files (Triton's standard library) count for the kernel line that called them.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import ptx_parser
from ptx_parser import ast as A

STAGES = ("ttir", "ttgir", "llir", "ptx")
TITLES = {"ttir": "TTIR", "ttgir": "TTGIR", "llir": "LLVM IR", "ptx": "PTX"}

#: What a TTIR/TTGIR operation on a hot line usually costs, and the knob that changes it (level 3
#: can explain the cost when the hot line's operations are here; otherwise the ladder escalates).
OP_CAUSES: dict[str, str] = {  # in order of priority when a line holds several
    "tt.dot": "the MMA lowering: instruction shape (mma.sync or wgmma) and the software pipeline (num_stages)",
    "tt.reduce": "a reduction across the block: shuffles inside each warp, then shared memory and a barrier "
                 "across warps (the layout's warpsPerCTA); fewer warps per row, or one row per warp, removes the "
                 "cross-warp step",
    "ttg.convert_layout": "a layout conversion through shared memory that the TTGIR passes inserted",
    "tt.atomic_rmw": "global atomics (serialised per address)",
    "math.exp": "exp lowered to ex2.approx with a scaling multiply",
    "math.exp2": "ex2.approx",
    "arith.divf": "fp32 division (div.full / div.rn with a slow path)",
    "math.rsqrt": "rsqrt.approx",
    "tt.load": "global loads: the vector width is the blocked layout's sizePerThread times the element size; masks "
               "split vectors; read-only data can take the non-coherent path",
    "tt.store": "global stores: vector width from the layout; outputs written once can be streamed (.cs)",
}

_MLIR_LOCDEF = re.compile(r"^(#loc\d*)\s*=\s*loc\((.*)\)\s*$")
_MLIR_FILELOC = re.compile(r'^"([^"]+)":(\d+):(\d+)$')
_MLIR_NAMED = re.compile(r'^"[^"]*"\((#loc\d*)\)$')
_MLIR_CALLSITE = re.compile(r"^callsite\((#loc\d*) at (#loc\d*)\)$")
_MLIR_OP = re.compile(r'^\s*(?:%[^=]+=\s*)?"?([a-z_]+\.[a-z_.0-9]+)"?')
_MLIR_TRAILING_LOC = re.compile(r"loc\((#loc\d*|\"[^\"]+\":\d+:\d+)\)\s*$")
_LL_DILOC = re.compile(r"^!(\d+)\s*=\s*(?:distinct\s+)?!DILocation\(line:\s*(\d+)[^)]*?(?:inlinedAt:\s*!(\d+))?[^)]*\)")
_LL_SCOPE_FILE = re.compile(r"scope:\s*!(\d+)")
_LL_DBG = re.compile(r"!dbg !(\d+)")
_LL_OP = re.compile(r"^\s*(?:%[\w.]+\s*=\s*)?(?:tail\s+)?([a-z_]+)")


@dataclass
class LineRow:
    line: int
    source: str
    counts: dict[str, int] = field(default_factory=dict)  # stage -> operations
    ops: dict[str, Counter] = field(default_factory=dict)  # stage -> op name -> count

    def growth(self) -> tuple[str, str, int]:
        """The consecutive stages (from, to) between which this line grows the most, and by how much."""
        best = ("", "", 0)
        for a, b in zip(STAGES, STAGES[1:]):
            d = self.counts.get(b, 0) - self.counts.get(a, 0)
            if d > best[2]:
                best = (a, b, d)
        return best

    def cause(self) -> tuple[str, str] | None:
        """A known cause among the line's TTIR/TTGIR operations (op, cause)."""
        present = set(self.ops.get("ttgir", Counter())) | set(self.ops.get("ttir", Counter()))
        return next(((op, cause) for op, cause in OP_CAUSES.items() if op in present), None)


@dataclass
class Attribution:
    kernel_file: str
    rows: dict[int, LineRow]
    totals: dict[str, int]
    layouts: list[str] = field(default_factory=list)  # TTGIR layout definitions
    missing: list[str] = field(default_factory=list)  # stages that could not be read

    def hottest(self, ptx_lines: list[int] | None = None) -> LineRow | None:
        """The source line with the most PTX instructions (or the first of ``ptx_lines``' source
        lines, the profile's hot instructions mapped through .loc)."""
        if ptx_lines:
            for ln in ptx_lines:
                if ln in self.rows:
                    return self.rows[ln]
        rows = [r for r in self.rows.values() if r.counts.get("ptx")]
        return max(rows, key=lambda r: r.counts.get("ptx", 0), default=None)

    def table(self, top: int = 6) -> str:
        rows = sorted(self.rows.values(), key=lambda r: -r.counts.get("ptx", 0))[:top]
        head = "line  " + "  ".join(f"{TITLES[s]:>7}" for s in STAGES) + "  source"
        out = [head]
        for r in rows:
            out.append(f"{r.line:4d}  " + "  ".join(f"{r.counts.get(s, 0):7d}" for s in STAGES) + f"  {r.source[:60]}")
        return "\n".join(out)


def _mlir(text: str, kernel_file: str) -> tuple[dict[int, Counter], list[str]]:
    defs: dict[str, str] = {}
    for line in text.splitlines():
        m = _MLIR_LOCDEF.match(line)
        if m:
            defs[m.group(1)] = m.group(2)
    memo: dict[str, int | None] = {}

    def resolve(body: str, depth: int = 0) -> int | None:
        if depth > 50:
            return None
        body = body.strip()
        if body.startswith("#loc"):
            if body not in memo:
                memo[body] = None
                memo[body] = resolve(defs.get(body, "unknown"), depth + 1)
            return memo[body]
        m = _MLIR_FILELOC.match(body)
        if m:
            return int(m.group(2)) if Path(m.group(1)).name == Path(kernel_file).name else None
        m = _MLIR_NAMED.match(body)
        if m:
            return resolve(m.group(1), depth + 1)
        m = _MLIR_CALLSITE.match(body)
        if m:
            return resolve(m.group(2), depth + 1)  # the caller's line in the kernel
        if body.startswith("fused["):
            return next((x for x in (resolve(p, depth + 1) for p in body[6:-1].split(",")) if x), None)
        return None

    out: dict[int, Counter] = {}
    layouts = [ln.strip() for ln in text.splitlines() if re.match(r"^#(blocked|shared|mma|linear|slice)\d*\s*=", ln)]
    regions: list[str] = []  # ops with a region (tt.reduce, scf.for): their loc closes the region
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        lm = _MLIR_TRAILING_LOC.search(line)
        om = _MLIR_OP.match(line)
        if om and not lm and line.rstrip().endswith("{"):
            regions.append(om.group(1))
            continue
        if line.lstrip().startswith("}") and lm and regions:
            op = regions.pop()
        elif om and lm:
            op = om.group(1)
        else:
            continue
        if op.startswith(("tt.func", "builtin.module")):
            continue
        ln = resolve(lm.group(1))
        if ln is not None:
            out.setdefault(ln, Counter())[op] += 1
    return out, layouts


def _llir(text: str) -> dict[int, Counter]:
    locs: dict[str, tuple[int, str | None]] = {}
    for line in text.splitlines():
        m = _LL_DILOC.match(line)
        if m:
            locs[m.group(1)] = (int(m.group(2)), m.group(3))

    def outer(n: str, depth: int = 0) -> int | None:
        if n not in locs or depth > 50:
            return None
        line, parent = locs[n]
        return outer(parent, depth + 1) if parent else line

    out: dict[int, Counter] = {}
    for line in text.splitlines():
        if not line.startswith((" ", "\t")):
            continue
        d = _LL_DBG.search(line)
        o = _LL_OP.match(line)
        if d and o:
            ln = outer(d.group(1))
            if ln is not None:
                out.setdefault(ln, Counter())[o.group(1)] += 1
    return out


def ptx_lines(ptx: str | A.Module, kernel_file: str) -> tuple[dict[int, Counter], dict[int, int]]:
    """Instructions per kernel source line, and each PTX line's source line."""
    module = ptx if isinstance(ptx, A.Module) else ptx_parser.parse(ptx)
    files = {it.index: it.name for it in module.items if isinstance(it, A.FileEntry)}
    out: dict[int, Counter] = {}
    where: dict[int, int] = {}
    for fn in module.items:
        if not isinstance(fn, A.Function):
            continue
        for ins in fn.instructions():
            loc = ins.loc
            if loc is None:
                continue
            f, ln = loc.file, loc.line
            for key, vals in loc.extra:
                if key == "inlined_at" and len(vals) >= 2 and all(isinstance(v, int) for v in vals[:2]):
                    f, ln = vals[0], vals[1]
            if Path(files.get(f, "")).name != Path(kernel_file).name or ln <= 0:
                continue
            out.setdefault(ln, Counter())[ins.opcode] += 1
            if ins.span:
                where[ins.span.line] = ln
    return out, where


def attribute(paths: dict[str, str], candidate_ptx: str | None = None) -> Attribution:
    """Line up Triton's stages (``paths``: stage -> file, as harness.compile keeps them) and the
    candidate's PTX (default: Triton's) by the kernel's source lines."""
    texts: dict[str, str] = {}
    missing = []
    for stage in STAGES:
        p = paths.get(stage)
        try:
            texts[stage] = Path(p).read_text() if p else ""
        except OSError:
            texts[stage] = ""
        if not texts[stage]:
            missing.append(stage)
    if candidate_ptx is not None:
        texts["ptx"] = candidate_ptx
    kernel_file = ""
    m = re.search(r'#loc\s*=\s*loc\("([^"]+)"', texts.get("ttir", ""))
    if m:
        kernel_file = m.group(1)
    per_stage: dict[str, dict[int, Counter]] = {}
    layouts: list[str] = []
    for stage in ("ttir", "ttgir"):
        per_stage[stage], lay = _mlir(texts[stage], kernel_file) if texts[stage] else ({}, [])
        if stage == "ttgir":
            layouts = lay
    per_stage["llir"] = _llir(texts["llir"]) if texts["llir"] else {}
    try:
        per_stage["ptx"] = ptx_lines(texts["ptx"], kernel_file)[0] if texts["ptx"] else {}
    except ptx_parser.ParseError:
        per_stage["ptx"], missing = {}, missing + ["ptx (does not parse)"]
    try:
        source = Path(kernel_file).read_text().splitlines() if kernel_file else []
    except OSError:
        source = []
    rows: dict[int, LineRow] = {}
    for stage, lines in per_stage.items():
        for ln, ops in lines.items():
            row = rows.setdefault(ln, LineRow(ln, source[ln - 1].strip() if 0 < ln <= len(source) else ""))
            row.counts[stage] = sum(ops.values())
            row.ops[stage] = ops
    totals = {s: sum(sum(c.values()) for c in per_stage[s].values()) for s in STAGES}
    return Attribution(kernel_file, rows, totals, layouts, missing)
