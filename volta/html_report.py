"""`volta check --html FILE`: one self-contained page (inline CSS, no script, no network, no server).

For every file: the verdict; each finding with its sites; a race as a timeline of its two threads
(a column each, in the order the emulator ran them): their accesses, and the barrier/mbarrier
arrivals and completions and fences each took part in between them, so the missing (or wrong)
synchronisation is visible; and, side by side, the PTX and the CUDA/Triton source lines of each
site with a few lines of context. Then notes and assumptions. Elements carry data-* attributes
(data-thread, data-time, data-kind, data-pane) that say what they show.
"""

from __future__ import annotations

import re
import time
from functools import lru_cache
from html import escape
from pathlib import Path

from .results import CheckResult

_LOC = re.compile(r"^(?P<file>.*?):(?P<line>\d+)(?::(?P<col>\d+))?$")
_CONTEXT = 3

_CSS = """
:root { --bad: #b3261e; --ok: #1b6e2a; --undecided: #8a6100; --input: #6b2f8f; --sync: #1f5fa8; --muted: #5f6368; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px auto; max-width: 1200px;
       padding: 0 16px; color: #202124; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
code, pre, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 12.5px; }
.meta { color: var(--muted); }
.verdict { display: inline-block; padding: 1px 8px; border-radius: 10px; color: #fff; font-weight: 600; }
.v-0 { background: var(--ok); } .v-1 { background: var(--bad); } .v-2 { background: var(--input); }
.v-3 { background: var(--undecided); }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid #eee; vertical-align: top; }
.finding { border-left: 4px solid var(--bad); padding: 4px 12px; margin: 12px 0; background: #fdf6f5; }
.timeline { display: grid; grid-template-columns: 90px 1fr 1fr; gap: 4px 12px; margin: 10px 0; }
.timeline .head { font-weight: 600; padding: 4px 8px; background: #f1f3f4; border-radius: 4px; }
.timeline .time { color: var(--muted); text-align: right; padding: 6px 0; }
.event { padding: 6px 8px; border-radius: 4px; border: 1px solid #ddd; background: #fff; }
.event.access { border-color: var(--bad); background: #fde8e6; font-weight: 600; }
.event.arrive, .event.complete, .event.fence { border-color: var(--sync); background: #e8f0fb; }
.event .where { display: block; font-weight: 400; color: var(--muted); }
.gap { grid-column: 2 / span 2; color: var(--bad); font-style: italic; padding: 2px 8px; }
.code { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; margin: 8px 0 16px; }
.pane { border: 1px solid #ddd; border-radius: 4px; overflow: auto; }
.pane h4 { margin: 0; padding: 4px 8px; background: #f1f3f4; font-size: 12.5px; font-weight: 600; }
.pane pre { margin: 0; padding: 4px 0; }
.pane .ln { display: block; padding: 0 8px; white-space: pre; }
.pane .ln.hit { background: #fde8e6; font-weight: 600; }
.pane .missing { padding: 8px; color: var(--muted); }
ul { margin: 4px 0; padding-left: 22px; }
"""


def _excerpt(where: str | None) -> tuple[str, int, list[tuple[int, str]]] | None:
    """(file, line, [(number, text)]) around `file:line:col`, or None when it cannot be read."""
    m = _LOC.match(where or "")
    if m is None:
        return None
    lines = _read(m.group("file"))
    if lines is None:
        return m.group("file"), int(m.group("line")), []
    n = int(m.group("line"))
    lo, hi = max(1, n - _CONTEXT), min(len(lines), n + _CONTEXT)
    return m.group("file"), n, [(i, lines[i - 1]) for i in range(lo, hi + 1)]


@lru_cache(maxsize=64)
def _read(file: str) -> list[str] | None:
    try:
        return Path(file).read_text(errors="replace").splitlines()
    except OSError:
        return None


def _pane(kind: str, where: str | None) -> str:
    got = _excerpt(where)
    if got is None:
        return (f'<div class="pane" data-pane="{kind}"><h4>{kind}</h4>'
                f'<div class="missing">no {"source line (.loc)" if kind == "source" else "line"}</div></div>')
    file, n, lines = got
    body = "".join(f'<span class="ln{" hit" if i == n else ""}" data-line="{i}">{i:>5}  {escape(t)}</span>'
                   for i, t in lines) or f'<div class="missing">{escape(file)} cannot be read here</div>'
    return (f'<div class="pane" data-pane="{kind}"><h4>{kind}: {escape(file)}:{n}</h4><pre>{body}</pre></div>')


def _code(site) -> str:
    return f'<div class="code">{_pane("ptx", site.ptx)}{_pane("source", site.source)}</div>'


def _timeline(f) -> str:
    events = f.details.get("timeline") or []
    if not events or len(f.sites) < 2:
        return ""
    a, b = f.sites[0], f.sites[1]
    cells = ['<div class="head">step</div>',
             f'<div class="head" data-thread="0">CTA {a.cta} thread {a.thread}</div>',
             f'<div class="head" data-thread="1">CTA {b.cta} thread {b.thread}</div>']
    accesses = [e["time"] for e in events if e["kind"] == "access"]
    for e in events:
        where = " ".join(x for x in (e.get("ptx"), f'[{e["source"]}]' if e.get("source") else None) if x)
        cell = (f'<div class="event {escape(e["kind"])}" data-thread="{e["thread"]}" data-time="{e["time"]}" '
                f'data-kind="{escape(e["kind"])}" style="grid-column: {2 + e["thread"]}">'
                f'{escape(e["instruction"])} {escape(e["text"])}<span class="where mono">{escape(where)}</span></div>')
        cells.append(f'<div class="time mono" style="grid-column: 1">{e["time"]}</div>')
        cells.append(cell)
        if e["kind"] == "access" and e["time"] == min(accesses) and len(accesses) == 2:
            why = f.message.split(": ", 1)[-1]
            cells.append(f'<div class="gap" data-gap>not ordered before the other access: {escape(why)}</div>')
    return (f'<h3>timeline ({len(events)} steps, in the order the emulator ran them)</h3>'
            f'<div class="timeline" data-finding="race">{"".join(cells)}</div>')


def _finding(f) -> str:
    sites = "".join(f"<tr><td>CTA {s.cta}</td><td>thread {s.thread}</td><td>{escape(s.access or '')}</td>"
                    f"<td class=mono>{escape(s.instruction)}</td><td class=mono>{escape(s.ptx)}</td>"
                    f"<td class=mono>{escape(s.source or '')}</td></tr>" for s in f.sites)
    table = (f"<table><tr><th>CTA</th><th>thread</th><th>access</th><th>instruction</th><th>PTX</th>"
             f"<th>source</th></tr>{sites}</table>") if sites else ""
    code = "".join(_code(s) for s in f.sites[:2])
    return (f'<div class="finding" data-kind="{f.kind.value}"><b>{escape(f.kind.value)}</b>: {escape(f.message)}'
            f"{table}{_timeline(f)}{code}</div>")


def _file(i: int, r: CheckResult) -> str:
    code = int(r.exit_code)
    head = (f'<h2 id="f{i}"><span class="verdict v-{code}">{escape(r.verdict.split(":")[0])}</span> '
            f'{escape(r.kernel)}</h2>')
    if r.report is None:
        return f'<section data-file="{escape(str(r.path))}">{head}<pre>{escape(str(r.error))}</pre></section>'
    rep = r.report
    parts = [head, f'<p class="mono">{escape(rep.verdict)}</p>']
    parts += [_finding(f) for f in rep.findings]
    if rep.notes:
        parts.append("<h3>notes</h3><ul>" + "".join(f"<li>{escape(n)}</li>" for n in rep.notes) + "</ul>")
    if rep.assumptions:
        parts.append("<h3>assumptions the verdict relies on</h3><ul>"
                     + "".join(f"<li>{escape(a)}</li>" for a in rep.assumptions) + "</ul>")
    return f'<section data-file="{escape(str(r.path))}">{"".join(parts)}</section>'


def render(results: list[CheckResult], invocation: dict | None = None) -> str:
    """The whole page."""
    inv = invocation or {}
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(inv.get("started", time.time())))
    rows = "".join(f'<tr><td><a href="#f{i}">{escape(str(r.path))}</a></td>'
                   f'<td><span class="verdict v-{int(r.exit_code)}">{escape(r.verdict.split(":")[0])}</span></td>'
                   f"<td>{r.seconds:.1f} s</td></tr>" for i, r in enumerate(results))
    command = " ".join(inv.get("argv", []))
    exit_code = inv.get("exit_code")
    return ("<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
            "<meta name=viewport content='width=device-width, initial-scale=1'>"
            f"<title>volta check: {len(results)} file(s)</title><style>{_CSS}</style></head><body>"
            f"<h1>volta check</h1><p class=meta>{escape(when)} · <span class=mono>{escape(command)}</span>"
            + (f" · exit {exit_code}" if exit_code is not None else "") + "</p>"
            f"<table data-summary><tr><th>file</th><th>verdict</th><th>time</th></tr>{rows}</table>"
            + "".join(_file(i, r) for i, r in enumerate(results)) + "</body></html>")


__all__ = ["render"]
