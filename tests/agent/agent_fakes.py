"""Test doubles of the lowering loop: the timing source (speedups keyed by the candidate's hash,
since a CI machine has no GPU and the harness times nothing there) and helpers that build scripted
model answers from real PTX."""

from __future__ import annotations

import json
from pathlib import Path

from harness import suite
from harness.compile import compile_contract
from taic_agent.records import Judged, Measurement, sha256
from taic_agent.rules import apply_all, contract_roles

INTEGRITY = Path(__file__).resolve().parent.parent / "integrity"


class FakeTimer:
    """Speedup by sha256 of the PTX (default ``default``), with a +-``spread`` interval. Tests only:
    the loop's real timing is the harness's."""

    name = "fake timer (tests)"

    def __init__(self, speedups: dict[str, float] | None = None, default: float = 1.0, spread: float = 0.01) -> None:
        self.speedups = dict(speedups or {})
        self.default, self.spread = default, spread
        self.asked: list[str] = []

    def set(self, ptx: str, speedup: float) -> None:
        self.speedups[sha256(ptx)] = speedup

    def measure(self, sha: str, judged: Judged) -> Measurement | None:
        self.asked.append(sha)
        s = self.speedups.get(sha, self.default)
        return Measurement(s, s * (1 - self.spread), s * (1 + self.spread), self.name)


def triton_ptx(contract: str, arch: str = "sm_90a") -> str:
    return compile_contract(suite.get(contract), arch, "verify").ptx


def rewritten(contract: str, *rules: str, base: str | None = None) -> str:
    """The contract's Triton PTX (or ``base``) with ``rules`` applied: real, valid variants."""
    c = suite.get(contract)
    ref = compile_contract(c, "sm_90a", "verify")
    text, done = apply_all(base or ref.ptx, contract_roles(c, ref), rules)
    assert done == list(rules), f"rules {rules} did not all apply ({done})"
    return text


def ptx_answer(ptx: str, prose: str = "Here is the kernel.") -> str:
    return f"{prose}\n```ptx\n{ptx}```\n"


def plan_answer(*changes: tuple[str, str, str], bottleneck: str = "memory latency") -> str:
    return "```json\n" + json.dumps({"bottleneck": bottleneck, "changes": [
        {"title": t, "kind": k, "metric": m, "expected": "lower"} for t, k, m in changes]}) + "\n```"


def analysis_answer(cause: str, fix: str) -> str:
    return json.dumps({"cause": cause, "fix": fix})


def integrity_ptx(name: str) -> str:
    return (INTEGRITY / f"{name}.ptx").read_text()
