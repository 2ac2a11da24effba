"""The diagnosis ladder: why is the current best kernel slow? Each level is tried only when the one
below cannot explain it, and the level that did, with its evidence, goes with every change.

1. pattern triage (:func:`triage`): the library's known fixes whose precondition holds in the PTX
   (the executable rules of taic_agent.rules) and learned patterns (changes that passed every gate
   and were faster in earlier runs, recognised by the instructions they removed and added), minus
   the ideas that already failed for this contract; with a profile, a fix must also address the
   profile's bottleneck;
2. profiling diagnosis (:func:`profile_bottleneck`): the condensed Nsight Compute profile of the
   harness names the bottleneck (bandwidth, latency, barrier, occupancy, bank conflicts, compute,
   issue); unavailable without a GPU with counters;
3. IR attribution (taic_agent.irmap): the hottest kernel line (profile hot instructions mapped
   through .loc, else the most PTX instructions) and the lowering stage that adds its cost; it
   explains when the line's operation has a known cause;
4. compiler-source escalation (taic_agent.escalate): the narrow question about that step,
   answered from Triton's installed sources (and by the model, when there is one).
"""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

import ptx_parser

from . import escalate as _escalate
from . import irmap
from .records import Diagnosis, Judged, Level
from .rules import RULES, Kernel, Site, applicable


class Bottleneck(str, enum.Enum):
    MEMORY_BANDWIDTH = "memory_bandwidth"
    MEMORY_LATENCY = "memory_latency"
    BARRIER = "barrier"
    OCCUPANCY = "occupancy"
    BANK_CONFLICTS = "bank_conflicts"
    COMPUTE = "compute"
    ISSUE = "issue"


@dataclass(frozen=True)
class Match:
    """A library pattern that applies: its key, title, metric, sites and how often it validated."""

    key: str
    title: str
    metric: str
    kind: str
    sites: tuple[Site, ...]
    rule: str | None
    validated: int = 0
    best_speedup: float = 0.0
    symptoms: tuple[str, ...] = ()

    def evidence(self) -> str:
        where = ", ".join(str(s) for s in self.sites[:3]) + (f" (+{len(self.sites) - 3})" if len(self.sites) > 3 else "")
        seen = f"; validated {self.validated}x, best {self.best_speedup:.2f}x" if self.validated else ""
        return f"{self.key}: {where}{seen}"


def instruction_names(kernel: Kernel) -> Counter:
    return Counter(i.name for i in kernel.fn.instructions())


def signature(parent: Kernel, child: Kernel) -> dict[str, list[str]]:
    """What a change did, as instruction names it removed and added (a learned pattern's key)."""
    a, b = instruction_names(parent), instruction_names(child)
    return {"removed": sorted(n for n in a if n not in b), "added": sorted(n for n in b if n not in a)}


def _learned_applies(sig: dict[str, list[str]], names: Counter) -> list[Site]:
    removed, added = sig.get("removed", []), sig.get("added", [])
    if not removed or not all(n in names for n in removed) or any(n in names for n in added):
        return []
    return [Site(None, f"holds {', '.join(removed[:3])}" + (" ..." if len(removed) > 3 else ""))]


def triage(kernel: Kernel, learned: list[dict[str, Any]], failed: set[str],
           bottleneck: Bottleneck | None = None) -> list[Match]:
    """Library patterns that apply to ``kernel``, best first (validated before, then by prior
    speedup), without the ideas in ``failed``."""
    stats = {p["key"]: p for p in learned}
    out = []
    for key, sites in applicable(kernel).items():
        rule = RULES[key]
        k = f"rule:{key}"
        if k in failed or (bottleneck is not None and bottleneck.value not in rule.symptoms):
            continue
        st = stats.get(k, {})
        out.append(Match(k, rule.title, rule.metric, rule.kind.value, tuple(sites), key, st.get("validated", 0),
                         st.get("best_speedup") or 0.0, rule.symptoms))
    names = instruction_names(kernel)
    for p in learned:
        if p["key"].startswith("rule:") or p["key"] in failed:
            continue
        sites = _learned_applies(p.get("signature") or {}, names)
        if sites:
            out.append(Match(p["key"], p["title"], p["metric"], p["kind"], tuple(sites), None, p["validated"],
                             p["best_speedup"] or 0.0))
    out.sort(key=lambda m: (-m.validated, -m.best_speedup, m.key))
    return out


def profile_bottleneck(metrics: dict[str, float]) -> tuple[Bottleneck, list[str]] | None:
    """The bottleneck the profile shows, with the numbers that show it; None without a clear one."""
    if not metrics:
        return None
    stalls = sorted(((k[6:], v) for k, v in metrics.items() if k.startswith("stall_")), key=lambda kv: -kv[1])
    top = stalls[0][0] if stalls else ""
    ev = []
    dram, sm = metrics.get("dram_pct"), metrics.get("sm_pct")
    if dram is not None:
        ev.append(f"DRAM {dram:.0f}% of peak")
    if sm is not None:
        ev.append(f"SM {sm:.0f}% of peak")
    if stalls:
        ev.append("top stalls " + ", ".join(f"{k} {v:.2f}" for k, v in stalls[:3]))
    occ, theo = metrics.get("achieved_occupancy"), metrics.get("theoretical_occupancy")
    if occ is not None:
        ev.append(f"achieved occupancy {occ:.0f}%" + (f" of {theo:.0f}%" if theo is not None else ""))
    conflicts = metrics.get("bank_conflicts_ld", 0.0) + metrics.get("bank_conflicts_st", 0.0)
    shared = metrics.get("shared_loads", 0.0) + metrics.get("shared_stores", 0.0)
    if dram is not None and dram >= 70:
        return Bottleneck.MEMORY_BANDWIDTH, ev
    if top == "barrier":
        return Bottleneck.BARRIER, ev
    if shared and conflicts > 0.5 * shared:
        return Bottleneck.BANK_CONFLICTS, ev + [f"{conflicts:.0f} bank conflicts for {shared:.0f} shared accesses"]
    if top in ("long_scoreboard", "lg_throttle") and (dram is None or dram < 70):
        return Bottleneck.MEMORY_LATENCY, ev
    if occ is not None and theo and occ < 0.5 * theo:
        return Bottleneck.OCCUPANCY, ev
    if (sm is not None and sm >= 70) or top in ("math_pipe_throttle", "tex_throttle"):
        return Bottleneck.COMPUTE, ev
    if top in ("wait", "not_selected", "no_instruction", "branch_resolving", "dispatch_stall"):
        return Bottleneck.ISSUE, ev
    return None


Ask = Callable[[str, list[str]], "str | None"]


@dataclass
class LadderInput:
    kernel: Kernel
    judged: Judged | None  # the current best's report (its profile, on a GPU)
    ir_paths: dict[str, str]  # Triton's stages for the contract (harness.compile keeps them)
    failed: set[str] = field(default_factory=set)
    learned: list[dict[str, Any]] = field(default_factory=list)
    ptx: str | None = None
    ask: Ask | None = None  # a model's answer to the narrow compiler question


@dataclass
class Climb:
    diagnosis: Diagnosis
    matches: list[Match]
    bottleneck: Bottleneck | None = None
    attribution: irmap.Attribution | None = None
    escalation: _escalate.Escalation | None = None


def diagnose(inp: LadderInput) -> Climb:
    climbed: list[str] = []
    metrics = inp.judged.profile_metrics if inp.judged else {}
    prof = profile_bottleneck(metrics)
    bottleneck = prof[0] if prof else None

    matches = triage(inp.kernel, inp.learned, inp.failed, bottleneck)
    if matches:
        ev = tuple(m.evidence() for m in matches)
        why = f"known fixes apply ({', '.join(m.key for m in matches)})"
        if bottleneck is not None:
            why += f" and address the profile's {bottleneck.value}"
        return Climb(Diagnosis(Level.PATTERN, why, ev, tuple(m.key for m in matches)), matches, bottleneck)
    climbed.append(f"{Level.PATTERN.title}: no library pattern applies that has not failed"
                   + (f" and addresses {bottleneck.value}" if bottleneck else ""))

    if prof is not None:
        b, ev = prof
        return Climb(Diagnosis(Level.PROFILE, b.value, tuple(ev), climbed=tuple(climbed)), [], b)
    climbed.append(f"{Level.PROFILE.title}: " + ("no profile (no GPU counters on this machine)" if not metrics
                                                 else "the profile shows no clear bottleneck"))

    attr = irmap.attribute(inp.ir_paths, inp.ptx)
    hot = attr.hottest(list(_hot_source_lines(inp, attr)))
    if hot is None:
        climbed.append(f"{Level.IR.title}: no .loc information to line the stages up"
                       + (f" (missing: {', '.join(attr.missing)})" if attr.missing else ""))
        return Climb(Diagnosis(Level.IR, "unknown", tuple(climbed[-1:]), climbed=tuple(climbed)), [], None, attr)
    a, b, d = hot.growth()
    ev = [f"kernel line {hot.line} `{hot.source[:70]}`: " + ", ".join(
        f"{irmap.TITLES[s]} {hot.counts.get(s, 0)}" for s in irmap.STAGES) + f" of {attr.totals.get('ptx', 0)} PTX",
        f"the {irmap.TITLES.get(a, a)} -> {irmap.TITLES.get(b, b)} step adds {d}" if d else "no stage grows it"]
    if attr.layouts:
        ev.append("TTGIR layouts: " + "; ".join(attr.layouts[:2]))
    cause = hot.cause()
    if cause is not None and d:
        op, text = cause
        return Climb(Diagnosis(Level.IR, f"line {hot.line}: {op} ({text})", tuple(ev), climbed=tuple(climbed)),
                     [], None, attr)
    climbed.append(f"{Level.IR.title}: line {hot.line} holds no operation with a known cost")

    ops = hot.ops.get("ttgir") or hot.ops.get("ttir") or Counter()
    op = ops.most_common(1)[0][0] if ops else "?"
    esc = _escalate.escalate(op, hot.line, hot.source, a or "ttgir", b or "llir", d)
    answer = esc.answer
    if inp.ask is not None:
        answer = inp.ask(esc.question, [str(e) for e in esc.excerpts]) or answer
    ev += [str(e) for e in esc.excerpts[:8]] + esc.notes
    return Climb(Diagnosis(Level.COMPILER, f"line {hot.line}: {op} at {a}->{b}", tuple(ev), climbed=tuple(climbed),
                           question=esc.question, answer=answer), [], None, attr, esc)


def _hot_source_lines(inp: LadderInput, attr: irmap.Attribution) -> list[int]:
    if not inp.judged or not inp.judged.hot_lines or not inp.ptx:
        return []
    try:
        _, where = irmap.ptx_lines(inp.ptx, attr.kernel_file)
    except ptx_parser.ParseError:  # an accepted candidate parses; be safe all the same
        return []
    return [where[ln] for ln in inp.judged.hot_lines if ln in where]
