"""The loopback HTTP server the fake APIs run on."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class QuietHTTPServer(ThreadingHTTPServer):
    """A thread per connection, and silent when a client hangs up mid-reply (a run that stops after its
    first calls, an event loop that closed): the standard server prints that traceback to standard
    error, which the in-process CLI captures as the run's own output."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        return


class QuietHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 keep-alive, no request log, and the posted body with its headers in lower case."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        return

    def posted(self) -> tuple[bytes, dict[str, str]]:
        """(the request body, its headers with lower-case names)."""
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        return raw, {k.lower(): v for k, v in self.headers.items()}
