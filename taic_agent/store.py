"""The candidate store: one SQLite file (stdlib sqlite3) with every session, run, candidate, plan,
model call, remembered idea and learned pattern.

- a *session* is one ``volta agent optimize`` (its configuration, its budget); it holds 1..N
  independent *runs* (best-of-N);
- a *candidate* is one PTX text a run produced, with its lineage (parent, round, origin, the plan
  and the changes it implements), the harness report (JSON), verdict, the loop's decision and why,
  the measured speedup and where it came from, and the certificate once the equivalence gate
  gives one;
- a *call* is one model request and answer under a deterministic key (run/round/role/index): a
  resumed session finds the answers it already paid for and does not ask again;
- *ideas* are the changes that failed (or validated) per contract and target, so a failed idea is
  not retried, in this session or a later one;
- *patterns* are the library's learned entries: changes that passed every gate and were faster.

Every write commits at once, so an interrupted session loses at most the call or evaluation in
flight. One connection, guarded by a lock (helpers record calls from threads).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .budget import Spend
from .records import Judged

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY, created REAL, contract TEXT, arch TEXT, generator TEXT, config TEXT,
    status TEXT DEFAULT 'running', best_run TEXT);
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY, session TEXT, idx INTEGER, seed INTEGER, status TEXT DEFAULT 'running',
    stop TEXT, why TEXT, best INTEGER, rounds INTEGER DEFAULT 0, started REAL, finished REAL);
CREATE TABLE IF NOT EXISTS candidates (
    id INTEGER PRIMARY KEY AUTOINCREMENT, run TEXT, round INTEGER, parent INTEGER, name TEXT,
    origin TEXT, helper INTEGER, plan INTEGER, changes TEXT, sha256 TEXT, ptx TEXT,
    verdict TEXT, reasons TEXT, rejected_at TEXT, decision TEXT, why TEXT,
    speedup REAL, speedup_low REAL, speedup_high REAL, timing_source TEXT,
    report TEXT, certificate TEXT, created REAL);
CREATE UNIQUE INDEX IF NOT EXISTS candidates_name ON candidates(run, name);
CREATE INDEX IF NOT EXISTS candidates_sha ON candidates(sha256);
CREATE TABLE IF NOT EXISTS plans (
    id INTEGER PRIMARY KEY AUTOINCREMENT, run TEXT, round INTEGER, level INTEGER, bottleneck TEXT,
    plan TEXT, created REAL, UNIQUE (run, round));
CREATE TABLE IF NOT EXISTS calls (
    key TEXT PRIMARY KEY, session TEXT, run TEXT, role TEXT, model TEXT, request TEXT, answer TEXT,
    error TEXT, prompt_tokens INTEGER, completion_tokens INTEGER, usd REAL, seconds REAL, created REAL);
CREATE TABLE IF NOT EXISTS ideas (
    contract TEXT, arch TEXT, key TEXT, title TEXT, status TEXT, why TEXT, run TEXT, round INTEGER,
    candidate INTEGER, created REAL, PRIMARY KEY (contract, arch, key));
CREATE TABLE IF NOT EXISTS patterns (
    key TEXT, source TEXT, run TEXT, round INTEGER, title TEXT, kind TEXT, metric TEXT, contract TEXT,
    signature TEXT, speedup REAL, evidence TEXT, created REAL, PRIMARY KEY (key, source));
"""


@dataclass(frozen=True)
class Call:
    key: str
    answer: str | None
    error: str | None
    prompt_tokens: int
    completion_tokens: int
    usd: float


def default_path() -> Path:
    """``$VOLTA_AGENT_STORE``, else ``.volta/agent.sqlite`` under the current directory."""
    env = os.environ.get("VOLTA_AGENT_STORE")
    return Path(env) if env else Path(".volta") / "agent.sqlite"


class Store:
    def __init__(self, path: str | os.PathLike[str] = ":memory:") -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        self._lock = threading.Lock()
        with self._lock:
            self._db.executescript(SCHEMA)

    def close(self) -> None:
        self._db.close()

    def _exec(self, sql: str, args: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        with self._lock:
            return self._db.execute(sql, args)

    def _rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(r) for r in self._db.execute(sql, args).fetchall()]

    def _row(self, sql: str, args: tuple[Any, ...] = ()) -> dict[str, Any] | None:
        rows = self._rows(sql, args)
        return rows[0] if rows else None

    # -- sessions and runs ------------------------------------------------------------------------

    def new_session(self, contract: str, arch: str, generator: str, config: dict[str, Any]) -> str:
        sid = time.strftime("%Y%m%d-%H%M%S") + "-" + os.urandom(2).hex()
        self._exec("INSERT INTO sessions (id, created, contract, arch, generator, config) VALUES (?,?,?,?,?,?)",
                   (sid, time.time(), contract, arch, generator, json.dumps(config, sort_keys=True)))
        return sid

    def session(self, sid: str) -> dict[str, Any] | None:
        row = self._row("SELECT * FROM sessions WHERE id = ?", (sid,))
        if row is not None:
            row["config"] = json.loads(row["config"])
        return row

    def sessions(self) -> list[dict[str, Any]]:
        return self._rows("SELECT id, created, contract, arch, generator, status, best_run FROM sessions "
                          "ORDER BY created")

    def finish_session(self, sid: str, status: str, best_run: str | None) -> None:
        self._exec("UPDATE sessions SET status = ?, best_run = ? WHERE id = ?", (status, best_run, sid))

    def run_id(self, sid: str, index: int) -> str:
        return f"{sid}.{index + 1}"

    def open_run(self, sid: str, index: int, seed: int) -> str:
        rid = self.run_id(sid, index)
        self._exec("INSERT OR IGNORE INTO runs (id, session, idx, seed, started) VALUES (?,?,?,?,?)",
                   (rid, sid, index, seed, time.time()))
        return rid

    def run(self, rid: str) -> dict[str, Any] | None:
        return self._row("SELECT * FROM runs WHERE id = ?", (rid,))

    def runs(self, sid: str) -> list[dict[str, Any]]:
        return self._rows("SELECT * FROM runs WHERE session = ? ORDER BY idx", (sid,))

    def finish_run(self, rid: str, stop: str, why: str, best: int | None, rounds: int) -> None:
        self._exec("UPDATE runs SET status = 'done', stop = ?, why = ?, best = ?, rounds = ?, finished = ? "
                   "WHERE id = ?", (stop, why, best, rounds, time.time(), rid))

    # -- candidates -------------------------------------------------------------------------------

    def add_candidate(self, run: str, round_: int, parent: int | None, name: str, origin: str, helper: int | None,
                      plan: int | None, changes: tuple[str, ...], ptx: str | None, sha: str | None,
                      judged: Judged | None, decision: str, why: str, timing_source: str = "") -> int:
        old = self._row("SELECT id FROM candidates WHERE run = ? AND name = ?", (run, name))
        if old is not None:  # a resumed run replays its candidates: keep the first record
            return int(old["id"])
        sp = judged.speedup if judged else None
        cur = self._exec(
            "INSERT INTO candidates (run, round, parent, name, origin, helper, plan, changes, sha256, ptx, verdict, "
            "reasons, rejected_at, decision, why, speedup, speedup_low, speedup_high, timing_source, report, "
            "certificate, created) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (run, round_, parent, name, origin, helper, plan, json.dumps(list(changes)), sha, ptx,
             judged.verdict if judged else None, " ".join(judged.reasons) if judged else None,
             judged.rejected_at if judged else None, decision, why,
             sp.speedup if sp else None, sp.low if sp else None, sp.high if sp else None,
             timing_source or (sp.source if sp else None),
             json.dumps(judged.report_json) if judged else None,
             json.dumps(judged.certificate) if judged and judged.certificate is not None else None, time.time()))
        return int(cur.lastrowid)

    def set_measurement(self, cid: int, speedup: float, low: float, high: float, source: str) -> None:
        self._exec("UPDATE candidates SET speedup = ?, speedup_low = ?, speedup_high = ?, timing_source = ? "
                   "WHERE id = ?", (speedup, low, high, source, cid))

    def set_decision(self, cid: int, decision: str, why: str) -> None:
        self._exec("UPDATE candidates SET decision = ?, why = ? WHERE id = ?", (decision, why, cid))

    def candidates(self, run: str | None = None, session: str | None = None) -> list[dict[str, Any]]:
        if run is not None:
            rows = self._rows("SELECT * FROM candidates WHERE run = ? ORDER BY id", (run,))
        else:
            rows = self._rows("SELECT * FROM candidates WHERE run IN (SELECT id FROM runs WHERE session = ?) "
                              "ORDER BY id", (session,))
        for r in rows:
            r["changes"] = json.loads(r["changes"] or "[]")
        return rows

    def candidate(self, cid: int) -> dict[str, Any] | None:
        row = self._row("SELECT * FROM candidates WHERE id = ?", (cid,))
        if row is not None:
            row["changes"] = json.loads(row["changes"] or "[]")
        return row

    def judged(self, session: str, sha: str) -> Judged | None:
        """The harness report of these bytes from earlier in the session (resume, best-of-N)."""
        row = self._row("SELECT report FROM candidates WHERE sha256 = ? AND report IS NOT NULL AND run IN "
                        "(SELECT id FROM runs WHERE session = ?) ORDER BY id LIMIT 1", (sha, session))
        return Judged.from_json(json.loads(row["report"])) if row else None

    # -- plans ------------------------------------------------------------------------------------

    def add_plan(self, run: str, round_: int, level: int, bottleneck: str, plan: dict[str, Any]) -> int:
        old = self._row("SELECT id FROM plans WHERE run = ? AND round = ?", (run, round_))
        if old is not None:
            return int(old["id"])
        cur = self._exec("INSERT INTO plans (run, round, level, bottleneck, plan, created) VALUES (?,?,?,?,?,?)",
                         (run, round_, level, bottleneck, json.dumps(plan), time.time()))
        return int(cur.lastrowid)

    def plans(self, run: str) -> list[dict[str, Any]]:
        rows = self._rows("SELECT * FROM plans WHERE run = ? ORDER BY id", (run,))
        for r in rows:
            r["plan"] = json.loads(r["plan"])
        return rows

    # -- model calls ------------------------------------------------------------------------------

    def call(self, key: str) -> Call | None:
        row = self._row("SELECT * FROM calls WHERE key = ?", (key,))
        if row is None:
            return None
        return Call(key, row["answer"], row["error"], row["prompt_tokens"] or 0, row["completion_tokens"] or 0,
                    row["usd"] or 0.0)

    def add_call(self, key: str, session: str, run: str, role: str, model: str, request: Any, answer: str | None,
                 error: str | None, prompt_tokens: int, completion_tokens: int, usd: float, seconds: float) -> None:
        self._exec("INSERT OR REPLACE INTO calls (key, session, run, role, model, request, answer, error, "
                   "prompt_tokens, completion_tokens, usd, seconds, created) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                   (key, session, run, role, model, json.dumps(request), answer, error, prompt_tokens,
                    completion_tokens, usd, seconds, time.time()))

    def calls(self, session: str) -> list[dict[str, Any]]:
        return self._rows("SELECT key, run, role, model, error, prompt_tokens, completion_tokens, usd, seconds "
                          "FROM calls WHERE session = ? ORDER BY created", (session,))

    def spent(self, session: str) -> Spend:
        row = self._row("SELECT COALESCE(SUM(usd), 0) AS usd, COALESCE(SUM(prompt_tokens + completion_tokens), 0) "
                        "AS tokens, COUNT(*) AS calls FROM calls WHERE session = ? AND answer IS NOT NULL",
                        (session,))
        assert row is not None
        return Spend(float(row["usd"]), int(row["tokens"]), int(row["calls"]))

    # -- ideas ------------------------------------------------------------------------------------

    def remember(self, contract: str, arch: str, key: str, title: str, status: str, why: str, run: str,
                 round_: int, candidate: int | None) -> None:
        """Record an idea's outcome; a validated idea stays validated."""
        old = self._row("SELECT status FROM ideas WHERE contract = ? AND arch = ? AND key = ?", (contract, arch, key))
        if old is not None and old["status"] == "validated" and status != "validated":
            return
        self._exec("INSERT OR REPLACE INTO ideas (contract, arch, key, title, status, why, run, round, candidate, "
                   "created) VALUES (?,?,?,?,?,?,?,?,?,?)",
                   (contract, arch, key, title, status, why, run, round_, candidate, time.time()))

    def ideas(self, contract: str, arch: str, run: str | None = None, before_round: int = 0) -> dict[str, dict[str, Any]]:
        """The remembered ideas; with ``run``, only those of that run's rounds before ``before_round``
        (and every other run's), so that a resumed run sees what it saw the first time."""
        rows = self._rows("SELECT * FROM ideas WHERE contract = ? AND arch = ? ORDER BY created", (contract, arch))
        return {r["key"]: r for r in rows if run is None or r["run"] != run or r["round"] < before_round}

    # -- learned patterns -------------------------------------------------------------------------

    def learn(self, key: str, source: str, run: str, round_: int, title: str, kind: str, metric: str, contract: str,
              signature: dict[str, Any], speedup: float, evidence: str) -> None:
        """A change that passed every gate and was faster (``source``: the candidate that showed it)."""
        self._exec("INSERT OR IGNORE INTO patterns (key, source, run, round, title, kind, metric, contract, signature, "
                   "speedup, evidence, created) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                   (key, source, run, round_, title, kind, metric, contract, json.dumps(signature), speedup, evidence,
                    time.time()))

    def patterns(self, run: str | None = None, before_round: int = 0) -> list[dict[str, Any]]:
        """Learned patterns, one per key: how often they validated and their best speedup (visibility
        as for :meth:`ideas`)."""
        rows = [r for r in self._rows("SELECT * FROM patterns ORDER BY created")
                if run is None or r["run"] != run or r["round"] < before_round]
        out: dict[str, dict[str, Any]] = {}
        for r in rows:
            p = out.setdefault(r["key"], {**r, "signature": json.loads(r["signature"] or "{}"), "validated": 0,
                                          "best_speedup": 0.0, "sources": []})
            p["validated"] += 1
            p["best_speedup"] = max(p["best_speedup"], r["speedup"] or 0.0)
            p["sources"].append(r["source"])
        return sorted(out.values(), key=lambda p: (-p["validated"], -p["best_speedup"]))
