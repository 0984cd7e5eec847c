"""A real HTTP server on 127.0.0.1 speaking Anthropic's Messages API, for tests of ChatAnthropic.

``POST /v1/messages`` answers ``{"id", "type": "message", "role": "assistant", "model", "content":
[{"type": "text", "text": ...}], "stop_reason": "end_turn", "usage": {"input_tokens", "output_tokens"}}``
with ``server.reply(body) -> str`` (by default ``"echo: <last user message>"``); tokens are counted in
words (the system text and every message in, the answer out). Every request is recorded:
``server.requests`` (parsed JSON bodies), ``server.headers`` (lower-cased), ``server.paths``.

``server.error_for = lambda body, headers: (status, message) | None`` answers an Anthropic error
object instead (``{"type": "error", "error": {"type": ..., "message": ...}}``).

Tests: ``from tests.fakes.anthropic_server import anthropic_server  # noqa: F401`` (a fixture);
``server.base_url`` is what ``ChatAnthropic(base_url=...)`` takes (the SDK appends ``/v1/messages``). The
key arrives as ``x-api-key`` from older SDKs, as ``authorization: Bearer ...`` from anthropic 2.x:
:func:`key_of` reads either.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from tests.fakes.quiet_http import QuietHandler, QuietHTTPServer

HOST = "127.0.0.1"
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
               404: "not_found_error", 429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}


def text_of(content: Any) -> str:
    """A message's ``content``: a string or a list of content blocks."""
    if isinstance(content, list):
        return " ".join(b.get("text", "") for b in content if isinstance(b, dict))
    return content if isinstance(content, str) else ""


def echo(body: dict) -> str:
    users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
    return f"echo: {text_of(users[-1]['content']) if users else ''}"


def key_of(headers: dict[str, str]) -> str | None:
    """The API key a request carried, in either header the SDK sends it in."""
    bearer = headers.get("authorization", "")
    return headers.get("x-api-key") or (bearer[len("Bearer "):] if bearer.startswith("Bearer ") else None)


class FakeAnthropicServer:
    """See the module doc."""

    def __init__(self, reply: Callable[[dict], str] = echo) -> None:
        self.reply = reply
        self.error_for: Callable[[dict, dict[str, str]], tuple[int, str] | None] | None = None
        self.requests: list[dict] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._httpd = QuietHTTPServer((HOST, 0), _handler(self))
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-anthropic-server", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self._httpd.server_address[1]}"

    def answer(self, path: str, raw: bytes, headers: dict[str, str]) -> tuple[int, dict]:
        """The status and JSON body for one request (recorded first)."""
        body = json.loads(raw or b"{}")
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            self.paths.append(path)
        if path.split("?")[0] != "/v1/messages":
            return 404, _error(404, f"no route {path}")
        failed = self.error_for(body, headers) if self.error_for else None
        if failed is not None:
            return failed[0], _error(*failed)
        text = self.reply(body)
        words_in = len(text_of(body.get("system")).split()) + sum(
            len(text_of(m.get("content")).split()) for m in body.get("messages") or [])
        return 200, {"id": f"msg_{next(self._ids):08d}", "type": "message", "role": "assistant",
                     "model": body.get("model", "claude-fake"), "content": [{"type": "text", "text": text}],
                     "stop_reason": "end_turn", "stop_sequence": None,
                     "usage": {"input_tokens": words_in, "output_tokens": len(text.split())}}

    def start(self) -> FakeAnthropicServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _error(status: int, message: str) -> dict:
    return {"type": "error", "error": {"type": ERROR_TYPES.get(status, "api_error"), "message": message}}


def _handler(server: FakeAnthropicServer) -> type[BaseHTTPRequestHandler]:
    class Handler(QuietHandler):
        def do_POST(self) -> None:
            raw, headers = self.posted()
            try:
                status, payload = server.answer(self.path, raw, headers)
            except Exception as exc:  # noqa: BLE001 - a broken reply function is the test's bug: show it
                status, payload = 500, _error(500, f"reply failed: {exc!r}")
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("request-id", f"req_{len(server.requests)}")
            self.end_headers()
            self.wfile.write(data)

    return Handler


@pytest.fixture()
def anthropic_server() -> Iterator[FakeAnthropicServer]:
    """A fresh server per test on 127.0.0.1."""
    server = FakeAnthropicServer().start()
    try:
        yield server
    finally:
        server.stop()
