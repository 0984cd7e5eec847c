"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests and benchmarks, with faults.

``POST /v1/chat/completions`` answers deterministically (``reply(body) -> str``, by default
``"echo: <last user message>"``) with usage counts. Faults are scripted per call
(``fail_next(kind, times)``) or by rule (``fault_for(body) -> kind | None``):

* ``"429"``: rate limit with a ``Retry-After`` header (``retry_after`` seconds);
* ``"500"``: internal server error;
* ``"hang"``: no answer for ``seconds`` (past the client's timeout);
* ``"malformed"``: status 200 with a body that is not JSON;
* ``"empty_choices"``: status 200 with ``"choices": []``;
* ``"content_filter"``: status 400 with an Azure-style content-filter error;
* ``"refusal"``: status 200, ``finish_reason: "content_filter"`` and no content.

Use the ``openai_server`` fixture in tests, or ``with running_server(latency=0.05) as s:``.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

FAULTS = ("429", "500", "hang", "malformed", "empty_choices", "content_filter", "refusal")


class _Server(ThreadingHTTPServer):
    request_queue_size = 1024  # the default backlog of 5 refuses bursts of concurrent clients
    daemon_threads = True


class FakeOpenAIServer:
    def __init__(self, latency: float = 0.0) -> None:
        self.latency = latency
        self.reply: Callable[[dict], str] = lambda body: f"echo: {body['messages'][-1]['content']}"
        self.fault_for: Callable[[dict], str | None] | None = None
        self.requests: list[dict] = []
        self.headers: list[dict[str, str]] = []
        self._queue: deque[tuple[str, dict[str, Any]]] = deque()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd = _Server(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def fail_next(self, kind: str, times: int = 1, **opts: Any) -> None:
        if kind not in FAULTS:
            raise ValueError(f"unknown fault {kind!r}; known: {FAULTS}")
        with self._lock:
            self._queue.extend([(kind, opts)] * times)

    def start(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()  # wakes hanging handlers
        self._httpd.shutdown()
        self._httpd.server_close()

    def _next_fault(self, body: dict) -> tuple[str | None, dict[str, Any]]:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        rule = self.fault_for(body) if self.fault_for else None
        return rule, {}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # header and body go out in separate writes

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                return

            def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:  # noqa: N802
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, json.dumps({"object": "list", "data": [{"id": "fake", "object": "model"}]}).encode())
                else:
                    self._send(404, b'{"error": {"message": "not found"}}')

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append(body)
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                if server.latency:
                    server._stop.wait(server.latency)
                fault, opts = server._next_fault(body)
                if fault == "hang":
                    server._stop.wait(opts.get("seconds", 30))
                    return
                if fault == "429":
                    err = {"error": {"message": "Rate limit reached", "type": "rate_limit_error", "code": "rate_limit"}}
                    self._send(429, json.dumps(err).encode(), {"Retry-After": str(opts.get("retry_after", 0.1))})
                    return
                if fault == "500":
                    self._send(500, b'{"error": {"message": "internal error", "type": "server_error"}}')
                    return
                if fault == "content_filter":
                    err = {"error": {"code": "content_filter", "message": "The response was filtered due to the "
                                     "prompt triggering content management policy.", "type": "invalid_request_error",
                                     "param": "prompt"}}
                    self._send(400, json.dumps(err).encode())
                    return
                if fault == "malformed":
                    self._send(200, b'{"id": "x", "choices": [ {"message": ')
                    return
                text = server.reply(body)
                words_in = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
                n = int(body.get("n") or 1)
                if fault == "empty_choices":
                    choices: list[dict] = []
                elif fault == "refusal":
                    choices = [{"index": 0, "finish_reason": "content_filter",
                                "message": {"role": "assistant", "content": None}}]
                else:
                    choices = [{"index": i, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
                               for i in range(n)]
                payload = {"id": f"chatcmpl-{len(server.requests)}", "object": "chat.completion",
                           "created": int(time.time()), "model": body.get("model", "fake"), "choices": choices,
                           "usage": {"prompt_tokens": words_in, "completion_tokens": len(text.split()) * n,
                                     "total_tokens": words_in + len(text.split()) * n}}
                self._send(200, json.dumps(payload).encode())

        return Handler


@contextmanager
def running_server(latency: float = 0.0) -> Iterator[FakeOpenAIServer]:
    server = FakeOpenAIServer(latency).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture()
def openai_server() -> Iterator[FakeOpenAIServer]:
    with running_server() as server:
        yield server


if __name__ == "__main__":  # a standalone server for benchmarks: prints its base URL, serves until killed
    import argparse

    parser = argparse.ArgumentParser(description="Loopback OpenAI-compatible server")
    parser.add_argument("--latency", type=float, default=0.0)
    args = parser.parse_args()
    srv = FakeOpenAIServer(args.latency)
    print(srv.base_url, flush=True)
    srv._httpd.serve_forever(poll_interval=0.05)
