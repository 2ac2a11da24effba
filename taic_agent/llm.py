"""Model calls: any OpenAI-compatible endpoint through the ``openai`` client, behind a caller that
charges the budget, records every call in the store and replays recorded answers on resume.

The API key comes from the environment (``--api-key-env``, default ``OPENAI_API_KEY``); a local
endpoint that needs none gets a placeholder. ``openai`` is imported only when a model is used
(the ``agent`` extra).
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from dataclasses import dataclass
from typing import Any

from .budget import Budget, estimate_tokens
from .store import Store


class ModelError(RuntimeError):
    """The endpoint failed (connection, HTTP error, an answer without text)."""


class Malformed(ValueError):
    """An answer that does not have the asked-for shape."""


@dataclass(frozen=True)
class Answer:
    text: str
    prompt_tokens: int
    completion_tokens: int
    usage_reported: bool = True


class ChatClient:
    """One OpenAI-compatible chat-completions endpoint."""

    def __init__(self, model: str, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 temperature: float = 0.7, timeout: float = 300.0, max_retries: int = 2) -> None:
        try:
            import openai
        except ImportError:
            raise ModelError("the openai package is not installed: pip install 'volta[agent]'") from None
        key = os.environ.get(api_key_env)
        if key is None and base_url is None:
            raise ModelError(f"no API key: set {api_key_env} (or pass --base-url for a local endpoint)")
        self.model = model
        self.temperature = temperature
        self._openai = openai
        self._client = openai.OpenAI(base_url=base_url, api_key=key or "not-needed", timeout=timeout,
                                     max_retries=max_retries)

    def complete(self, messages: list[dict[str, str]], max_tokens: int, seed: int | None = None) -> Answer:
        try:
            r = self._client.chat.completions.create(model=self.model, messages=messages, max_tokens=max_tokens,
                                                     temperature=self.temperature, seed=seed)
        except self._openai.APIError as e:
            raise ModelError(f"{type(e).__name__}: {e}") from None
        except Exception as e:  # noqa: BLE001 - transport errors of any kind end this call, not the run
            raise ModelError(f"{type(e).__name__}: {e}") from None
        if not getattr(r, "choices", None):
            raise ModelError("the endpoint answered without choices")
        text = r.choices[0].message.content
        if not isinstance(text, str):
            raise ModelError("the endpoint answered without text")
        u = getattr(r, "usage", None)
        if u is None or getattr(u, "prompt_tokens", None) is None:
            prompt = sum(len(m["content"]) for m in messages)
            return Answer(text, estimate_tokens("x" * prompt), estimate_tokens(text), usage_reported=False)
        return Answer(text, int(u.prompt_tokens), int(u.completion_tokens or 0))


class Caller:
    """Calls for one run: key ``{run}/{name}/{role}``; a recorded answer is returned without a call
    (resume); otherwise the budget is reserved, the endpoint asked, the call recorded and charged."""

    def __init__(self, client: ChatClient, store: Store, budget: Budget, session: str, run: str,
                 max_tokens: int = 8192, seed: int | None = None) -> None:
        self.client, self.store, self.budget = client, store, budget
        self.session, self.run, self.max_tokens, self.seed = session, run, max_tokens, seed
        self.model = client.model
        self._lock = threading.Lock()
        self.replayed = 0

    def __call__(self, role: str, name: str, messages: list[dict[str, str]]) -> str:
        key = f"{self.run}/{name}/{role}"
        hit = self.store.call(key)
        if hit is not None and hit.answer is not None:
            with self._lock:
                self.replayed += 1
            return hit.answer
        prompt = "".join(m["content"] for m in messages)
        reservation = self.budget.reserve(estimate_tokens(prompt), self.max_tokens)
        t0 = time.perf_counter()
        try:
            ans = self.client.complete(messages, self.max_tokens, self.seed)
        except ModelError as e:
            self.budget.release(reservation)
            self.store.add_call(key, self.session, self.run, role, self.model, messages, None, str(e), 0, 0, 0.0,
                                time.perf_counter() - t0)
            raise
        usd = self.budget.charge(reservation, ans.prompt_tokens, ans.completion_tokens)
        self.store.add_call(key, self.session, self.run, role, self.model, messages, ans.text,
                            None if ans.usage_reported else "usage not reported: estimated", ans.prompt_tokens,
                            ans.completion_tokens, usd, time.perf_counter() - t0)
        return ans.text


_FENCE = re.compile(r"```([A-Za-z0-9_+-]*)[ \t]*\n(.*?)```", re.S)


def extract_ptx(text: str) -> str:
    """The PTX of an answer: the last ```ptx block, else the last fenced block holding an .entry."""
    blocks = _FENCE.findall(text)
    ptx = [b for lang, b in blocks if lang.lower() == "ptx"]
    if not ptx:
        ptx = [b for _, b in blocks if ".entry" in b]
    if not ptx:
        raise Malformed("no ```ptx block with the kernel in the answer")
    return ptx[-1].strip() + "\n"


def extract_json(text: str) -> dict[str, Any]:
    """The JSON object of an answer (a ```json block, else the outermost braces)."""
    blocks = [b for lang, b in _FENCE.findall(text) if lang.lower() in ("json", "")]
    candidates = blocks + ([text[text.find("{"):text.rfind("}") + 1]] if "{" in text and "}" in text else [])
    for c in candidates:
        try:
            v = json.loads(c)
        except json.JSONDecodeError:
            continue
        if isinstance(v, dict):
            return v
    raise Malformed("no JSON object in the answer")


def need_str(d: dict[str, Any], key: str, what: str) -> str:
    v = d.get(key)
    if not isinstance(v, str) or not v.strip():
        raise Malformed(f"{what}: '{key}' must be a non-empty string")
    return v.strip()
