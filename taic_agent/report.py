"""A session's report, read back from the store: per run its stop reason, rounds, plans (the
diagnosis level and evidence of every change) and candidates (lineage, verdict, first rejecting
reason, decision and why, speedup and where it came from), the remembered ideas, the learned
patterns and the spend. :func:`session_report` gives JSON; :func:`render` prints it with rich."""

from __future__ import annotations

from typing import Any

from .store import Store

_DECISION_STYLE = {"start": "cyan", "survived": "green", "not_faster": "yellow", "untimed": "blue",
                   "rejected": "red", "undecided": "yellow", "duplicate": "dim", "malformed": "magenta",
                   "repaired": "dim"}


def _candidate(c: dict[str, Any], names: dict[int, str]) -> dict[str, Any]:
    return {"id": c["id"], "name": c["name"], "round": c["round"], "origin": c["origin"],
            "parent": names.get(c["parent"]) if c["parent"] is not None else None, "changes": c["changes"],
            "sha256": c["sha256"], "verdict": c["verdict"], "rejected_at": c["rejected_at"] or None,
            "reasons": (c["reasons"] or "").split(), "decision": c["decision"], "why": c["why"],
            "speedup": None if c["speedup"] is None else {"value": c["speedup"], "low": c["speedup_low"],
                                                          "high": c["speedup_high"], "source": c["timing_source"]},
            "certificate": c["certificate"]}


def session_report(store: Store, session: str, run: str | None = None) -> dict[str, Any]:
    s = store.session(session)
    if s is None:
        raise KeyError(session)
    runs = []
    for r in store.runs(session):
        if run is not None and r["id"] != run:
            continue
        cands = store.candidates(run=r["id"])
        names = {c["id"]: c["name"] for c in cands}
        runs.append({"run": r["id"], "status": r["status"], "stop": r["stop"], "why": r["why"], "rounds": r["rounds"],
                     "best": names.get(r["best"]), "plans": [{"round": p["round"], **p["plan"]} for p in
                                                             store.plans(r["id"])],
                     "candidates": [_candidate(c, names) for c in cands]})
    spent = store.spent(session)
    config = {k: v for k, v in s["config"].items() if k != "start_ptx"}
    best = next((x for x in runs if x["run"] == s["best_run"]), None)
    best_cand = next((c for c in best["candidates"] if c["name"] == best["best"]), None) if best else None
    return {"session": session, "contract": s["contract"], "arch": s["arch"], "generator": s["generator"],
            "status": s["status"], "config": config, "best_run": s["best_run"], "best": best_cand,
            "spent": {"usd": round(spent.usd, 6), "tokens": spent.tokens, "calls": spent.calls}, "runs": runs,
            "ideas": [{"key": k, "status": v["status"], "why": v["why"], "title": v["title"]}
                      for k, v in store.ideas(s["contract"], s["arch"]).items()],
            "learned": [{"key": p["key"], "title": p["title"], "validated": p["validated"],
                         "best_speedup": p["best_speedup"], "signature": p["signature"]} for p in store.patterns()]}


def _speed(sp: dict[str, Any] | None) -> str:
    if not sp:
        return ""
    return f"{sp['value']:.3f}x [{sp['low']:.3f}, {sp['high']:.3f}]"


def render(rep: dict[str, Any], console: Any, candidates: bool = True) -> None:
    from rich.markup import escape
    from rich.table import Table

    cfg = rep["config"]
    console.print(f"[bold]session {rep['session']}[/]: {rep['contract']} on {rep['arch']}, generator "
                  f"{escape(rep['generator'])}, {len(rep['runs'])} run(s), status {rep['status']}")
    budget = [f"${cfg['budget_usd']}" if cfg.get("budget_usd") is not None else "",
              f"{cfg['budget_tokens']} tokens" if cfg.get("budget_tokens") is not None else ""]
    sp = rep["spent"]
    console.print(f"  spent ${sp['usd']:.4f}, {sp['tokens']} tokens in {sp['calls']} call(s)"
                  + (f" of a budget of {' and '.join(b for b in budget if b)}" if any(budget) else ""))
    for r in rep["runs"]:
        console.print(f"\n[bold]run {r['run']}[/]: stopped ({r['stop'] or r['status']}) after {r['rounds']} "
                      f"round(s): {escape(r['why'] or '')}; best {r['best'] or '-'}")
        for p in r["plans"]:
            d = p["diagnosis"]
            console.print(f"  round {p['round']}: [bold]{escape(d['level_name'])}[/] (level {d['level']}): "
                          f"{escape(p['bottleneck'] or d['bottleneck'])}")
            for c in d.get("climbed", []):
                console.print(f"    climbed past {escape(c)}", style="dim")
            for e in d.get("evidence", [])[:4]:
                console.print(f"    evidence: {escape(str(e))[:160]}", style="dim")
            for ch in p["changes"]:
                console.print(f"    change {escape(ch['key'])}: {escape(ch['title'])} [{ch['kind']}] -> moves "
                              f"{escape(ch['metric'])}")
            if p.get("dropped_as_failed_before"):
                console.print(f"    dropped (failed before): {', '.join(p['dropped_as_failed_before'])}")
        if not candidates:
            continue
        t = Table(show_lines=False, expand=False)
        for col in ("candidate", "origin", "parent", "changes", "verdict", "decision", "speedup", "why"):
            t.add_column(col, overflow="fold")
        for c in r["candidates"]:
            style = _DECISION_STYLE.get(c["decision"], "")
            verdict = (c["verdict"] or "-") + (f" @{c['rejected_at']}" if c["rejected_at"] else "")
            changes = ", ".join(k.split(":", 1)[-1] for k in c["changes"])
            t.add_row(c["name"], c["origin"], c["parent"] or "", escape(changes), escape(verdict),
                      f"[{style}]{c['decision']}[/]",
                      _speed(c["speedup"]), escape((c["why"] or "")[:140]))
        console.print(t)
    if rep["ideas"]:
        console.print("\n[bold]ideas remembered[/] (not retried when failed):")
        for i in rep["ideas"]:
            console.print(f"  {i['status']:9s} {escape(i['key'])}: {escape((i['why'] or '')[:140])}")
    if rep["learned"]:
        console.print("[bold]pattern library, learned[/]: " + ", ".join(
            f"{escape(p['key'])} ({p['validated']}x, best {p['best_speedup']:.2f}x)" for p in rep["learned"]))
    b = rep["best"]
    if b:
        sp_txt = _speed(b["speedup"]) or "untimed (no GPU: the harness times only on a GPU)"
        console.print(f"\n[bold]best[/]: {b['name']} of run {rep['best_run']}: {sp_txt}; sha256 {b['sha256'][:16]}"
                      + (f" ({b['speedup']['source']})" if b["speedup"] else ""))
