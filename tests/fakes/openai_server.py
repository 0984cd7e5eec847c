"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests and benchmarks, with fault injection.

``POST /v1/chat/completions`` answers deterministically: ``server.reply(body) -> str`` (by default
``"echo: <last user message>"``), ``n`` identical choices, ``usage`` counted in words. ``GET /v1/models``
lists one model. Every request is recorded (``server.requests``: parsed JSON bodies, ``server.headers``:
lower-cased headers, ``server.paths``: path and query, ``server.times``: ``time.monotonic()`` at arrival, in arrival order).

Faults, scripted per call (``server.fail_next(kind, times=1, **opts)``, consumed in order) or by rule
(``server.fault_for = lambda body: kind | (kind, opts) | None``, consulted when the queue is empty):

* ``"429"``: rate limit, ``Retry-After`` (and ``retry-after-ms``) headers; opts ``retry_after=0.1`` seconds;
* ``"500"``: internal server error JSON; opts ``status=500`` (e.g. 502, 503), ``message=`` its text;
* ``"hang"`` / ``"timeout"``: no answer for ``seconds=30`` (woken at once by ``stop()``), then the
  connection is closed without a response;
* ``"trickle"``: a normal answer whose body arrives a few bytes at a time over ``seconds=3``, so no
  single read waits long (a per-operation timeout never fires; a whole-request deadline does);
* ``"malformed"``: status 200 with a body that is not JSON;
* ``"empty_choices"``: status 200 with ``"choices": []``;
* ``"content_filter"``: status 400 with an OpenAI/Azure-style ``content_filter`` error;
* ``"refusal"``: status 200, ``finish_reason: "content_filter"``, ``content: null``; opts ``refusal="..."``
  also sets ``message.refusal``.

``server.latency`` (seconds) is added to every request. ``server.gather = n`` holds each request until
``n`` requests have arrived (at most ``server.gather_timeout`` seconds; ``server.ungathered`` counts the
requests that gave up waiting), so clients that truly send side by side are told apart from ones that
send one after another without timing anything. ``server.length_fields`` names the request
fields whose token cap the server honours (default none, like a server that ignores the cap; e.g.
``("max_tokens",)`` like llama.cpp's): the reply is cut to that many words, ``finish_reason: "length"``.
``server.huge_reply`` (characters, default 0: off) makes every normal answer's content that long, as
an endpoint that ignores ``max_tokens`` would send it: the body is written in 64 KiB pieces as the
client reads them, never built whole, so a 50 MB answer costs the server no memory; a client that
stops reading gets its connection closed.
``server.die_after(n)``: after ``n`` answers the server dies like a killed process: later requests
get the connection closed without a response, and new connections are refused.

* tests: the function-scoped ``openai_server`` fixture; a test module makes it visible with
  ``from tests.fakes.openai_server import openai_server  # noqa: F401``
  (or run ``pytest -p tests.fakes.openai_server``);
* scripts: ``with running_server(latency=0.05) as s: ... s.base_url ...``;
* a process: ``python -m tests.fakes.openai_server --latency 0.05`` prints its base URL, serves until killed.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

FAULTS = ("429", "500", "hang", "timeout", "trickle", "malformed", "empty_choices", "content_filter", "refusal")
HOST = "127.0.0.1"  # loopback only, never another address
HUGE_TEXT = "All work and no play. "  # what a huge reply repeats (ASCII: one byte a character)

Reply = Callable[[dict], "str | tuple[str, dict[str, float]]"]  # text, or text and first-token log-probabilities
FaultRule = Callable[[dict], "str | tuple[str, dict[str, Any]] | None"]


def message_text(content: Any) -> str:
    """The text of a message's ``content``: a string, a list of text parts, or None."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def last_user_message(body: dict) -> str:
    """The text of the last ``user`` message (or of the last message when none is from the user)."""
    messages = body.get("messages") or []
    users = [m for m in messages if m.get("role") == "user"] or messages
    return message_text(users[-1].get("content")) if users else ""


def echo_reply(body: dict) -> str:
    """The default reply: ``"echo: <last user message>"``."""
    return f"echo: {last_user_message(body)}"


def last_line_reply(body: dict) -> str:
    """``"echo: <last line of the last user message>"``: a prompt that carries a conversation as text
    gets an answer as short as the conversation's own turn gets."""
    return f"echo: {last_user_message(body).rsplit(chr(10), 1)[-1]}"


_CLAUSES = (
    "That depends on what matters most to you.", "Start with a short list of options.",
    "Compare the costs before you decide.", "Ask someone you trust for a second view.",
    "A clear plan usually helps.", "Take it one step at a time.", "Write down what you expect first.",
    "Check the facts before acting.", "Give it a week and see how it feels.", "Keep the first attempt small.",
    "Most people find this easier than it looks.", "It is a reasonable choice.", "There are good reasons on both sides.",
    "Be honest about the trade-offs.", "Set a budget and stick to it.", "Talk it through with the people involved.",
)


def hash_reply(body: dict) -> str:
    """A fair deterministic model: three sentences picked by a hash of the request, so the same request
    always gets the same answer (as at temperature 0), and which groups a prompt names has no
    bearing on what comes back. Asked for a yes or no (a judge's question), it answers one by the
    same hash: a judge that answers at random."""
    digest = hashlib.sha256(json.dumps(body.get("messages"), sort_keys=True).encode()).digest()
    if "yes or no" in last_user_message(body).lower():  # asked as a judge: yes or no, as fair as a coin
        return "yes" if digest[0] % 2 else "no"
    return " ".join(_CLAUSES[b % len(_CLAUSES)] for b in digest[:3])


class _HTTPServer(ThreadingHTTPServer):
    """Thread per connection; tracks connections and threads so ``stop()`` ends them promptly."""

    request_queue_size = 1024  # the default backlog of 5 refuses bursts of concurrent clients
    daemon_threads = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.stopping = threading.Event()
        self._conn_lock = threading.Lock()
        self._conns: set[socket.socket] = set()
        self._handler_threads: set[threading.Thread] = set()
        self.connections = 0  # connections accepted so far (keep-alive reuses one for many requests)

    def process_request(self, request: Any, client_address: Any) -> None:
        t = threading.Thread(target=self._run_request, args=(request, client_address), daemon=True)
        with self._conn_lock:
            self._conns.add(request)
            self.connections += 1
            self._handler_threads.add(t)
        t.start()

    def _run_request(self, request: Any, client_address: Any) -> None:
        try:
            self.process_request_thread(request, client_address)
        finally:
            with self._conn_lock:
                self._conns.discard(request)
                self._handler_threads.discard(threading.current_thread())

    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # a client that went away (timeouts, shutdown) is not an error worth printing

    def close_all(self, join_timeout: float = 1.0) -> None:
        """Cut every open connection (unblocks idle keep-alive reads) and wait briefly for handlers."""
        with self._conn_lock:
            conns, threads = list(self._conns), list(self._handler_threads)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        deadline = time.monotonic() + join_timeout
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))


class FakeOpenAIServer:
    """An OpenAI-compatible chat-completions server on 127.0.0.1 with scripted faults; see the module doc."""

    def __init__(self, latency: float = 0.0, reply: Reply | None = None, fault_for: FaultRule | None = None,
                 port: int = 0, length_fields: tuple[str, ...] = (), huge_reply: int = 0) -> None:
        self.latency = latency
        self.gather, self.gather_timeout, self.ungathered = 0, 10.0, 0
        self.huge_reply = huge_reply
        self.reply: Reply = reply or echo_reply
        self.fault_for: FaultRule | None = fault_for
        self.length_fields = length_fields
        self.requests: list[dict] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self.times: list[float] = []
        self.answers = 0  # normal answers sent
        self.dead = False
        self._die_after: int | None = None
        self._stopped = threading.Event()
        self._queue: deque[tuple[str, dict[str, Any]]] = deque()
        self._lock = threading.Condition()
        self._ids = itertools.count(1)
        self._httpd = _HTTPServer((HOST, port), _make_handler(self))
        self._stop = self._httpd.stopping
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-openai-server", daemon=True)

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    @property
    def connections(self) -> int:
        """Number of TCP connections accepted so far."""
        return self._httpd.connections

    @property
    def calls(self) -> int:
        """Number of chat-completion requests received so far."""
        with self._lock:
            return len(self.requests)

    @property
    def pending_faults(self) -> list[str]:
        with self._lock:
            return [kind for kind, _ in self._queue]

    def fail_next(self, kind: str, times: int = 1, **opts: Any) -> None:
        """Queue ``times`` faults of ``kind`` for the next requests (after any already queued)."""
        _check_kind(kind)
        with self._lock:
            self._queue.extend([(kind, opts)] * times)

    def die_after(self, answers: int) -> None:
        """After ``answers`` more normal answers, die: hang up on every request, refuse connections."""
        with self._lock:
            self._die_after = self.answers + answers
            if answers > 0:
                return
            self.dead = True
        self._stop_soon()

    def _stop_soon(self) -> None:
        threading.Thread(target=self.stop, name="fake-openai-server-death", daemon=True).start()

    def _claim_answer(self) -> tuple[bool, bool]:
        """(this normal answer may go out, it is the last one before the server dies); counts it."""
        with self._lock:
            if self.dead:
                return False, False
            self.answers += 1
            last = self._die_after is not None and self.answers >= self._die_after
            self.dead = last
            return True, last

    def wait_for_calls(self, count: int, timeout: float = 5.0) -> bool:
        """Block until at least ``count`` requests have arrived; False on timeout."""
        with self._lock:
            return self._lock.wait_for(lambda: len(self.requests) >= count, timeout)

    def reset(self) -> None:
        """Forget recorded requests and queued faults (the rule, reply and latency stay)."""
        with self._lock:
            self.requests.clear()
            self.headers.clear()
            self.paths.clear()
            self.times.clear()
            self._queue.clear()

    def start(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving: wake hanging handlers, cut open connections, close the socket."""
        self._stop.set()
        if self._thread.is_alive():
            self._httpd.shutdown()
        self._httpd.close_all()
        self._httpd.server_close()
        self._stopped.set()

    def wait_stopped(self, timeout: float = 5.0) -> bool:
        """Block until :meth:`stop` has closed the socket (a death is carried out by a thread)."""
        return self._stopped.wait(timeout)

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _record(self, body: dict, headers: dict[str, str], path: str, arrived: float) -> None:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            self.paths.append(path)
            self.times.append(arrived)
            self._lock.notify_all()

    def _next_fault(self, body: dict) -> tuple[str | None, dict[str, Any]]:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        rule = self.fault_for(body) if self.fault_for else None
        if isinstance(rule, tuple):
            return rule[0], dict(rule[1])
        return rule, {}


def _check_kind(kind: str) -> None:
    if kind not in FAULTS:
        raise ValueError(f"unknown fault {kind!r}; known: {FAULTS}")


def _error(message: str, type_: str, code: str | None = None, param: str | None = None) -> bytes:
    return json.dumps({"error": {"message": message, "type": type_, "param": param, "code": code}}).encode()


def _make_handler(server: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive
        disable_nagle_algorithm = True  # header and body go out in separate writes

        def log_message(self, *args: Any) -> None:  # keep test output quiet
            return

        def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
            if server._stop.is_set():
                self.close_connection = True
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:
            if self.path.split("?")[0].rstrip("/").endswith("/models"):
                models = {"object": "list", "data": [{"id": "fake", "object": "model", "created": 0,
                                                      "owned_by": "equilens-tests"}]}
                self._send(200, json.dumps(models).encode())
            else:
                self._send(404, _error(f"no route {self.path}", "invalid_request_error", "not_found"))

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            arrived = time.monotonic()
            if server.dead:
                self.close_connection = True  # a dead server answers nothing
                return
            if not self.path.split("?")[0].rstrip("/").endswith("/chat/completions"):
                self._send(404, _error(f"no route {self.path}", "invalid_request_error", "not_found"))
                return
            try:
                body = json.loads(raw or b"{}")
                if not isinstance(body, dict):
                    raise ValueError("body is not a JSON object")
            except ValueError as exc:
                self._send(400, _error(f"invalid JSON body: {exc}", "invalid_request_error"))
                return
            server._record(body, {k.lower(): v for k, v in self.headers.items()}, self.path, arrived)
            if server.gather and not server.wait_for_calls(server.gather, server.gather_timeout):
                with server._lock:
                    server.ungathered += 1
            if server.latency:
                server._stop.wait(server.latency)
            try:
                fault, opts = server._next_fault(body)
                if fault is not None:
                    _check_kind(fault)
            except Exception as exc:  # noqa: BLE001 - a broken rule is the test's bug: show it in the response
                self._send(500, _error(f"fault rule failed: {exc!r}", "server_error"))
                return
            self._answer(body, fault, opts)

        def _answer(self, body: dict, fault: str | None, opts: dict[str, Any]) -> None:
            if fault in ("hang", "timeout"):
                server._stop.wait(float(opts.get("seconds", 30.0)))
                self.close_connection = True  # hang up without a response
                return
            try:
                status, payload, headers = _response(server, body, fault, opts)
            except Exception as exc:  # noqa: BLE001 - a broken reply function: show it in the response
                status, payload, headers = 500, _error(f"reply failed: {exc!r}", "server_error"), {}
            alive, last = server._claim_answer() if fault is None and status == 200 else (True, False)
            if not alive:
                self.close_connection = True  # the server died while this request waited
                return
            if fault == "trickle":
                self._trickle(status, payload, float(opts.get("seconds", 3.0)))
                return
            if fault is None and status == 200 and server.huge_reply:
                self._huge(body, server.huge_reply)
                if last:
                    server._stop_soon()
                return
            self._send(status, payload, headers)
            if last:
                self.close_connection = True
                server._stop_soon()

        def _huge(self, body: dict, chars: int) -> None:
            """A chat completion whose content is ``chars`` characters, written piece by piece."""
            head = json.dumps({"id": f"chatcmpl-{next(server._ids)}", "object": "chat.completion",
                               "created": int(time.time()), "model": body.get("model", "fake")})[:-1]
            head = (head + ', "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", '
                    '"content": "').encode()
            tail = (f'"}}}}], "usage": {{"prompt_tokens": 1, "completion_tokens": {chars // 4}, '
                    f'"total_tokens": {chars // 4 + 1}}}}}').encode()
            piece = (HUGE_TEXT * (-(-65536 // len(HUGE_TEXT))))[:65536].encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(head) + chars + len(tail)))
            self.end_headers()
            try:
                self.wfile.write(head)
                for start in range(0, chars, len(piece)):
                    if server._stop.is_set():
                        break
                    self.wfile.write(piece[: min(len(piece), chars - start)])
                self.wfile.write(tail)
            except OSError:  # the client stopped reading and hung up
                pass
            self.close_connection = True

        def _trickle(self, status: int, payload: bytes, seconds: float) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.flush()
            pieces = max(1, min(len(payload), int(seconds / 0.1)))
            step = -(-len(payload) // pieces)
            for start in range(0, len(payload), step):
                if server._stop.wait(seconds / pieces):
                    self.close_connection = True
                    return
                self.wfile.write(payload[start : start + step])
                self.wfile.flush()

    return Handler


_CONTENT_FILTER = ("The response was filtered due to the prompt triggering Azure OpenAI's content management "
                   "policy.")


def _response(server: FakeOpenAIServer, body: dict, fault: str | None,
              opts: dict[str, Any]) -> tuple[int, bytes, dict[str, str]]:
    """Status, body and extra headers for a request under ``fault`` (None: a normal answer)."""
    if fault == "429":
        wait = float(opts.get("retry_after", 0.1))
        err = _error("Rate limit reached for requests. Try again later.", "requests", "rate_limit_exceeded")
        return 429, err, {"Retry-After": f"{wait:g}", "retry-after-ms": str(int(wait * 1000))}
    if fault == "500":
        err = _error(opts.get("message", "The server had an error while processing your request."), "server_error")
        return int(opts.get("status", 500)), err, {}
    if fault == "content_filter":
        return 400, _error(_CONTENT_FILTER, "invalid_request_error", "content_filter", "prompt"), {}
    if fault == "malformed":
        return 200, b'{"id": "chatcmpl-broken", "choices": [ {"message": ', {}
    text = server.reply(body)
    text, alternatives = text if isinstance(text, tuple) else (text, None)  # a reply may bring its log-probabilities
    finish = "stop"
    caps = [int(body[f]) for f in server.length_fields if isinstance(body.get(f), int)]
    if caps and len(text.split()) > min(caps):
        text, finish = " ".join(text.split()[: min(caps)]), "length"
    if fault == "empty_choices":
        choices: list[dict] = []
    elif fault == "refusal":
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if opts.get("refusal"):
            message["refusal"] = str(opts["refusal"])
        choices = [{"index": 0, "finish_reason": "content_filter", "message": message, "logprobs": None}]
    else:
        message = {"role": "assistant", "content": text, "refusal": None}
        logprobs = _logprobs(text, alternatives, int(body.get("top_logprobs") or 1)) if body.get("logprobs") else None
        choices = [{"index": i, "finish_reason": finish, "message": message, "logprobs": logprobs}
                   for i in range(int(body.get("n") or 1))]
    prompt_tokens = sum(_words(m.get("content")) for m in body.get("messages") or [])
    completion_tokens = sum(_words(c["message"]["content"] or c["message"].get("refusal")) for c in choices)
    payload = {"id": f"chatcmpl-{next(server._ids)}", "object": "chat.completion",
               "created": int(time.time()), "model": body.get("model", "fake"), "choices": choices,
               "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                         "total_tokens": prompt_tokens + completion_tokens}}
    return 200, json.dumps(payload).encode(), {}


def _logprobs(text: str, alternatives: dict[str, float] | None, top: int) -> dict[str, Any]:
    """The ``logprobs`` of a choice: the first word as the first token, with ``alternatives``
    ({token: log-probability}) as its top tokens (default: the word itself at -0.1)."""
    first = (text.split() or [""])[0]
    alternatives = alternatives or {first: -0.1}
    tops = [{"token": t, "logprob": lp, "bytes": None} for t, lp in sorted(alternatives.items(), key=lambda kv: -kv[1])]
    return {"content": [{"token": first, "logprob": alternatives.get(first, tops[0]["logprob"]), "bytes": None,
                         "top_logprobs": tops[:top]}], "refusal": None}


def _words(content: Any) -> int:
    return len(message_text(content).split())


@contextmanager
def running_server(**opts: Any) -> Iterator[FakeOpenAIServer]:
    """A started server (``FakeOpenAIServer(**opts)``), stopped on exit."""
    server = FakeOpenAIServer(**opts).start()
    try:
        yield server
    finally:
        server.stop()


def serve() -> Iterator[FakeOpenAIServer]:
    """The ``openai_server`` fixture's body, as a plain generator (tests can drive its teardown)."""
    with running_server() as server:
        yield server


@pytest.fixture()
def openai_server() -> Iterator[FakeOpenAIServer]:
    """A fresh server per test on 127.0.0.1, stopped at teardown even with requests in flight."""
    yield from serve()


if __name__ == "__main__":  # a standalone server for benchmarks: prints its base URL, serves until killed
    import argparse

    parser = argparse.ArgumentParser(description="Loopback OpenAI-compatible server")
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--length-fields", nargs="*", default=[], help="request fields whose token cap it honours")
    parser.add_argument("--log", action="store_true", help="print a line per chat completion answered")
    parser.add_argument("--huge-reply", type=int, default=0, help="answer this many characters, ignoring max_tokens")
    parser.add_argument("--reply", choices=["echo", "last-line", "hash"], default="echo",
                        help="echo the prompt (or its last line), or answer deterministically by a hash of the "
                             "request (a fair model)")
    args = parser.parse_args()
    srv = FakeOpenAIServer(args.latency, port=args.port, length_fields=tuple(args.length_fields),
                           huge_reply=args.huge_reply)
    reply = {"echo": echo_reply, "last-line": last_line_reply, "hash": hash_reply}[args.reply]
    srv.reply = reply
    if args.log:
        import sys

        log_lock = threading.Lock()

        def logged(body: dict) -> str:
            # one write per line under a lock: print() from two handler threads at once writes the text
            # and the newline separately, so two lines could merge into one and a reader miscount
            with log_lock:
                sys.stdout.write("POST /v1/chat/completions\n")
                sys.stdout.flush()
            return reply(body)

        srv.reply = logged
    print(srv.base_url, flush=True)
    try:
        srv._httpd.serve_forever(poll_interval=0.05)
    except KeyboardInterrupt:
        pass
    finally:
        srv._stop.set()
        srv._httpd.close_all()
        srv._httpd.server_close()
