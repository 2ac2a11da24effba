"""A local OpenAI-compatible endpoint (stdlib http.server on 127.0.0.1, in a thread) that replays
scripted answers, so the loop's model path runs in CI with no network.

Answers are queued per (role, helper): the role is the ``volta-agent role: NAME`` line of the
system prompt, the helper the ``You are helper N`` of an implement prompt (helpers ask in
parallel, so their answers cannot come from one queue). A queued item is the answer text, or a
:class:`Fault` (an HTTP error status, a body that is not JSON, a reply without usage). Every request
is logged; usage is reported as characters / 4 unless the item overrides it. An empty queue answers
HTTP 500 ("script exhausted").
"""

from __future__ import annotations

import json
import re
import threading
from collections import defaultdict, deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_ROLE = re.compile(r"volta-agent role: (\w+)")
_HELPER = re.compile(r"You are helper (\d+)")


@dataclass(frozen=True)
class Fault:
    status: int = 500
    body: str | None = None  # raw body (not JSON) instead of an error object
    no_usage: bool = False
    text: str = ""  # with no_usage: the answer text


@dataclass(frozen=True)
class Request:
    role: str
    helper: int | None
    messages: list[dict[str, str]]
    model: str

    @property
    def user(self) -> str:
        return self.messages[-1]["content"]


@dataclass
class Script:
    queues: dict[tuple[str, int | None], deque] = field(default_factory=lambda: defaultdict(deque))
    log: list[Request] = field(default_factory=list)
    usage: dict[tuple[str, int | None], tuple[int, int]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, role: str, *answers: Any, helper: int | None = None) -> "Script":
        self.queues[(role, helper)].extend(answers)
        return self

    def next(self, role: str, helper: int | None) -> Any:
        with self.lock:
            q = self.queues.get((role, helper)) or self.queues.get((role, None))
            return q.popleft() if q else Fault(500, None)

    def calls(self, role: str | None = None) -> list[Request]:
        return [r for r in self.log if role is None or r.role == role]


class _Handler(BaseHTTPRequestHandler):
    script: Script

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, body: str) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        n = int(self.headers.get("Content-Length", "0"))
        req = json.loads(self.rfile.read(n) or b"{}")
        if not self.path.endswith("/chat/completions"):
            self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}))
            return
        messages = req.get("messages", [])
        system = next((m["content"] for m in messages if m.get("role") == "system"), "")
        user = messages[-1]["content"] if messages else ""
        role_m, helper_m = _ROLE.search(system), _HELPER.search(user)
        role = role_m.group(1) if role_m else "?"
        helper = int(helper_m.group(1)) if helper_m and role == "implement" else None
        with self.script.lock:
            self.script.log.append(Request(role, helper, messages, req.get("model", "")))
        item = self.script.next(role, helper)
        prompt_tokens = sum(len(m.get("content", "")) for m in messages) // 4
        if isinstance(item, Fault) and not item.no_usage:
            if item.body is not None:
                self._send(item.status, item.body)
            else:
                self._send(item.status, json.dumps({"error": {"message": "script exhausted" if item.status == 500
                                                              else "scripted fault", "type": "server_error"}}))
            return
        text = item.text if isinstance(item, Fault) else str(item)
        body: dict[str, Any] = {
            "id": f"fake-{len(self.script.log)}", "object": "chat.completion", "created": 0,
            "model": req.get("model", ""),
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}]}
        if not (isinstance(item, Fault) and item.no_usage):
            completion = len(text) // 4
            body["usage"] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion,
                             "total_tokens": prompt_tokens + completion}
        self._send(200, json.dumps(body))


class FakeServer:
    """``with FakeServer(script) as url: ...`` -> ``http://127.0.0.1:PORT/v1``."""

    def __init__(self, script: Script) -> None:
        handler = type("Handler", (_Handler,), {"script": script})
        self.script = script
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> str:
        self.thread.start()
        return self.url

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)
