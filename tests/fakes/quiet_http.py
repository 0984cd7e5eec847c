"""The loopback HTTP server the fake APIs run on."""

from __future__ import annotations

from http.server import ThreadingHTTPServer
from typing import Any


class QuietHTTPServer(ThreadingHTTPServer):
    """A thread per connection, and silent when a client hangs up mid-reply (a run that stops after its
    first calls, an event loop that closed): the standard server prints that traceback to standard
    error, which the in-process CLI captures as the run's own output."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        return
