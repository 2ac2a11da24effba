"""Money and tokens: a price table per model and the budget a run may spend.

Prices are US dollars per million tokens (input, output). The built-in table holds a few list
prices as published by their vendors when it was written (:data:`PRICES_AS_OF`); endpoints differ
(discounts, self-hosted models cost nothing per token), so ``--price IN,OUT`` overrides it and a
dollar budget with a model the table does not know is refused rather than guessed.

Every model call first *reserves* its worst case (the prompt's estimated tokens plus the answer's
``max_tokens``); a call whose reservation does not fit in what is left is not made
(:class:`BudgetExhausted`), so a run never spends past its budget. The answer's reported usage is
then charged and the reservation released. Reservations are thread-safe: helpers call in parallel.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float
    source: str = "table"

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input_per_mtok + completion_tokens * self.output_per_mtok) / 1e6


PRICES_AS_OF = "2025-06"
#: List prices (USD per million input, output tokens); check your provider's.
PRICES: dict[str, Price] = {
    "gpt-4o": Price(2.50, 10.00),
    "gpt-4o-mini": Price(0.15, 0.60),
    "gpt-4.1": Price(2.00, 8.00),
    "gpt-4.1-mini": Price(0.40, 1.60),
    "o3": Price(2.00, 8.00),
    "o4-mini": Price(1.10, 4.40),
    "rules": Price(0.0, 0.0, "the rule-based generator makes no model calls"),
}


class PriceError(ValueError):
    """No price for a model while a dollar budget is asked for, or a malformed --price."""


def parse_price(text: str) -> Price:
    """``"2.5,10"`` -> Price(2.5, 10) (USD per million input, output tokens)."""
    parts = [p.strip() for p in text.split(",")]
    try:
        if len(parts) != 2:
            raise ValueError
        inp, out = float(parts[0]), float(parts[1])
    except ValueError:
        raise PriceError(f"--price {text!r}: expected 'IN,OUT' in USD per million tokens, e.g. '2.5,10'") from None
    if inp < 0 or out < 0:
        raise PriceError(f"--price {text!r}: prices cannot be negative")
    return Price(inp, out, "--price")


def price_for(model: str, override: Price | None = None) -> Price | None:
    if override is not None:
        return override
    return PRICES.get(model) or PRICES.get(model.split("/")[-1])


class BudgetExhausted(RuntimeError):
    """The next call does not fit in what is left of the budget."""


@dataclass
class Spend:
    usd: float = 0.0
    tokens: int = 0
    calls: int = 0


class Budget:
    """What a session may spend (None: no limit of that kind) and what it has spent."""

    def __init__(self, price: Price | None, usd: float | None = None, tokens: int | None = None,
                 spent: Spend | None = None) -> None:
        if usd is not None and price is None:
            raise PriceError("a dollar budget needs a price for the model: pass --price IN,OUT (USD per million "
                             "input, output tokens)")
        self.price = price
        self.usd_limit = usd
        self.token_limit = tokens
        self.spent = spent or Spend()
        self._reserved_usd = 0.0
        self._reserved_tokens = 0
        self._lock = threading.Lock()

    def reserve(self, prompt_tokens: int, max_tokens: int) -> tuple[float, int]:
        """Hold the worst case of one call; raises BudgetExhausted when it does not fit."""
        tokens = prompt_tokens + max_tokens
        usd = self.price.cost(prompt_tokens, max_tokens) if self.price else 0.0
        with self._lock:
            if self.token_limit is not None and self.spent.tokens + self._reserved_tokens + tokens > self.token_limit:
                raise BudgetExhausted(f"token budget: {self.spent.tokens} of {self.token_limit} spent, the next call "
                                      f"may need {tokens}")
            if self.usd_limit is not None and self.spent.usd + self._reserved_usd + usd > self.usd_limit + 1e-12:
                raise BudgetExhausted(f"dollar budget: ${self.spent.usd:.4f} of ${self.usd_limit:.4f} spent, the next "
                                      f"call may cost ${usd:.4f}")
            self._reserved_usd += usd
            self._reserved_tokens += tokens
        return usd, tokens

    def charge(self, reservation: tuple[float, int], prompt_tokens: int, completion_tokens: int) -> float:
        """Release ``reservation`` and add what the call really used; the call's cost."""
        usd = self.price.cost(prompt_tokens, completion_tokens) if self.price else 0.0
        with self._lock:
            self._reserved_usd -= reservation[0]
            self._reserved_tokens -= reservation[1]
            self.spent.usd += usd
            self.spent.tokens += prompt_tokens + completion_tokens
            self.spent.calls += 1
        return usd

    def release(self, reservation: tuple[float, int]) -> None:
        with self._lock:
            self._reserved_usd -= reservation[0]
            self._reserved_tokens -= reservation[1]

    def exhausted(self, min_call_tokens: int = 1) -> bool:
        """Nothing more can be called (at least ``min_call_tokens`` must fit)."""
        if self.token_limit is not None and self.spent.tokens + min_call_tokens > self.token_limit:
            return True
        if self.usd_limit is not None and self.price is not None:
            return self.spent.usd + self.price.cost(min_call_tokens, 0) > self.usd_limit
        return False

    def describe(self) -> str:
        parts = [f"${self.spent.usd:.4f}" + (f" of ${self.usd_limit:.2f}" if self.usd_limit is not None else ""),
                 f"{self.spent.tokens} tokens" + (f" of {self.token_limit}" if self.token_limit is not None else ""),
                 f"{self.spent.calls} calls"]
        return ", ".join(parts)


def estimate_tokens(text: str) -> int:
    """A conservative prompt-size estimate before the endpoint reports usage (about 3 characters a
    token for PTX-heavy text; tokenisers vary, so the reservation errs high)."""
    return len(text) // 3 + 16
