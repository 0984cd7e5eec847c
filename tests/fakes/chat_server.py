"""Loopback chat applications for the tests of conversations and streamed replies over HTTP.

One server, several applications by path (every request recorded in ``server.requests``: path, parsed
JSON body, lower-cased headers):

* ``POST /stateless``: sees only what the request holds, ``{"messages": [...]}``; answers
  ``{"answer": "<n> messages; you first said: <the first user message>"}``.
* ``POST /session``: keeps each conversation itself. A request without a session (no ``X-Session``
  header, no ``meta.session`` field) opens one: the reply gives its id at ``session.id`` and sets a
  cookie ``visit`` of its own. A later request names its session either way; the answer says how many
  turns the session holds, its first message, and whether the request carried that session's cookie
  and no other (``cookie ok`` / ``cookie <what came>``). ``server.latency`` delays every answer.
* ``POST /sse`` and ``POST /ndjson``: the answer to ``{"q": ...}`` streamed as server-sent events
  (with a comment, an ``event:`` field and a final usage event, then ``[DONE]``) or as JSON lines,
  one ``{"delta": word}`` event per word, ``server.gap`` seconds apart. The message decides the rest:
  ``endless`` streams until the client hangs up (counted in ``server.hangups``), ``broken`` makes the
  second event not JSON, ``long <n>`` streams ``n`` ten-character pieces.
* ``POST /v1/chat/completions``: OpenAI-compatible; answers ``"<n> messages; first: <first user
  message>"``, as chunks (``delta.content``, a ``finish_reason`` chunk, a usage chunk when asked) when
  the body says ``"stream": true``.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fakes.quiet_http import QuietHandler, QuietHTTPServer

HOST = "127.0.0.1"


class ChatServer:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.sessions: dict[str, dict[str, Any]] = {}
        self.latency = 0.0
        self.gap = 0.02
        self.hangups: list[str] = []  # the messages whose streams the client stopped reading before their end
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        server = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                raw, headers = self.posted()
                body = json.loads(raw)
                with server._lock:
                    server.requests.append({"path": self.path, "body": body, "headers": headers})
                server.handle(self, self.path.rstrip("/"), body, headers)

        self._httpd = QuietHTTPServer((HOST, 0), Handler)
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.url = f"http://{HOST}:{self._httpd.server_address[1]}"

    def stop(self) -> None:
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def bodies(self, path: str) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests if r["path"].rstrip("/") == path]

    # the applications

    def handle(self, h: BaseHTTPRequestHandler, path: str, body: dict, headers: dict[str, str]) -> None:
        if path == "/stateless":
            users = [m["content"] for m in body["messages"] if m["role"] == "user"]
            _json(h, {"answer": f"{len(body['messages'])} messages; you first said: {users[0]}"})
        elif path == "/session":
            self._session(h, body, headers)
        elif path in ("/sse", "/ndjson"):
            if not _stream(h, self._events(body["q"]), sse=path == "/sse"):
                with self._lock:
                    self.hangups.append(body["q"])
        elif path.endswith("/chat/completions"):
            self._chat(h, body)
        else:
            _json(h, {"error": f"no such path {path}"}, status=404)

    def _session(self, h: BaseHTTPRequestHandler, body: dict, headers: dict[str, str]) -> None:
        time.sleep(self.latency)
        sid = headers.get("x-session") or (body.get("meta") or {}).get("session")
        came = headers.get("cookie")
        if sid is None:
            sid, visit = uuid.uuid4().hex, uuid.uuid4().hex
            with self._lock:
                self.sessions[sid] = {"visit": visit, "said": [body["message"]], "cookies": [came]}
            _json(h, {"session": {"id": sid}, "answer": f"1 turns; first: {body['message']}"},
                  extra={"Set-Cookie": f"visit={visit}; Path=/"})
            return
        with self._lock:
            session = self.sessions.get(sid)
            if session is not None:
                session["said"].append(body["message"])
                session["cookies"].append(came)
        if session is None:
            _json(h, {"error": f"no session {sid}"}, status=400)
            return
        cookie = "ok" if came == f"visit={session['visit']}" else repr(came)
        _json(h, {"answer": f"{len(session['said'])} turns; first: {session['said'][0]}; cookie {cookie}"})

    def _events(self, message: str) -> Iterator[bytes | dict]:
        """The events of a streamed answer to ``message``: dicts (JSON events) or raw bytes."""
        if message == "endless":
            while not self.stopping.is_set():
                yield {"delta": "tick "}
                time.sleep(0.05)
            return
        if message.startswith("long "):
            pieces = ["0123456789"] * int(message.split()[1])
        else:
            words = f"you said: {message}".split(" ")
            pieces = [w + " " for w in words[:-1]] + words[-1:]
        for i, piece in enumerate(pieces):
            yield b"{not json at all" if message == "broken" and i == 1 else {"delta": piece}
            time.sleep(self.gap)
        yield {"usage": {"tokens": len(pieces)}}

    def _chat(self, h: BaseHTTPRequestHandler, body: dict) -> None:
        messages = body["messages"]
        users = [m["content"] for m in messages if m["role"] == "user"]
        text = f"{len(messages)} messages; first: {users[0]}"
        usage = {"prompt_tokens": len(messages), "completion_tokens": len(text.split())}
        base = {"id": "chatcmpl-fake", "created": 0, "model": body.get("model", "fake")}
        if not body.get("stream"):
            _json(h, {**base, "object": "chat.completion", "usage": usage, "choices": [
                {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]})
            return

        def chunks() -> Iterator[dict]:
            def chunk(delta: dict, finish: str | None = None) -> dict:
                return {**base, "object": "chat.completion.chunk",
                        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

            yield chunk({"role": "assistant", "content": ""})
            for word in text.split(" "):
                yield chunk({"content": word + " "})
                time.sleep(self.gap)
            yield chunk({}, "stop")
            if (body.get("stream_options") or {}).get("include_usage"):
                yield {**base, "object": "chat.completion.chunk", "choices": [], "usage": usage}

        _stream(h, chunks(), sse=True)


def _json(h: BaseHTTPRequestHandler, payload: dict, status: int = 200, extra: dict[str, str] | None = None) -> None:
    raw = json.dumps(payload).encode()
    h.send_response(status)
    for k, v in {"Content-Type": "application/json", "Content-Length": str(len(raw)), **(extra or {})}.items():
        h.send_header(k, v)
    h.end_headers()
    h.wfile.write(raw)


def _stream(h: BaseHTTPRequestHandler, events: Iterator[bytes | dict], sse: bool) -> bool:
    """Write ``events`` as they come, in HTTP chunks: server-sent events or JSON lines; False when the
    client hung up first."""
    h.send_response(200)
    h.send_header("Content-Type", "text/event-stream" if sse else "application/x-ndjson")
    h.send_header("Transfer-Encoding", "chunked")
    h.end_headers()

    def send(data: bytes) -> None:
        h.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        h.wfile.flush()

    try:
        if sse:
            send(b": the stream begins\n\n")
        for event in events:
            line = event if isinstance(event, bytes) else json.dumps(event).encode()
            send(b"event: message\ndata: " + line + b"\n\n" if sse else line + b"\n")
        if sse:
            send(b"data: [DONE]\n\n")
        h.wfile.write(b"0\r\n\r\n")
    except OSError:  # the client hung up (a cap reached, a deadline passed)
        h.close_connection = True
        return False
    return True
