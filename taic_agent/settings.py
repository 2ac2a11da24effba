"""The configuration of a session: the contract, the generator and its endpoint, the budget, the
loop's shape (runs, rounds, helpers, repairs, changes per plan, the gain that counts as faster),
the start, and the harness options the loop evaluates with. Stored with the session (JSON), so a
resumed session runs with what it started with."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from .budget import Price


@dataclass(frozen=True)
class Settings:
    contract: str
    model: str | None = None  # None or "rules": the rule-based generator
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    price: Price | None = None  # overrides the table
    budget_usd: float | None = None
    budget_tokens: int | None = None
    runs: int = 1
    arch: str = "sm_90a"
    rounds: int = 3
    helpers: int = 3
    repairs: int = 2
    max_changes: int = 3
    min_gain: float = 0.02
    patience: int = 2
    start: str = "triton"
    start_ptx: str | None = None
    temperature: float = 0.7
    max_tokens: int = 8192
    max_retries: int = 2  # the openai client's retries of a failed request
    seed: int = 0
    eval_seed: int | None = None
    verify_timeout: float = 300.0
    unseen: int = 2

    @property
    def uses_model(self) -> bool:
        return self.model not in (None, "", "rules")

    def to_json(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["price"] = dataclasses.asdict(self.price) if self.price else None
        d.pop("start_ptx")
        return d

    @staticmethod
    def from_json(d: dict[str, Any], start_ptx: str | None = None) -> "Settings":
        d = {k: v for k, v in d.items() if k != "start_ptx"}
        d["price"] = Price(**d["price"]) if d.get("price") else None
        return Settings(**{k: v for k, v in d.items() if k in {f.name for f in dataclasses.fields(Settings)}},
                        start_ptx=start_ptx)

    def eval_options(self) -> Any:
        """The harness options every candidate is judged with."""
        from harness.judge.pipeline import EvalOptions

        return EvalOptions(seed=self.eval_seed, unseen=self.unseen, verify_timeout=self.verify_timeout)
