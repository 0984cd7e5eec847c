"""The suite's own isolation: what one test process writes, another never reads."""

from __future__ import annotations

import os
import socket
import struct
import threading
import time
from pathlib import Path

import pytest

from tests.test_application_http import JsonApi


def test_each_test_process_has_a_prefect_home_of_its_own() -> None:
    """Made by this process (its pid in the name), not inherited from the controller of ``-n 2``: two
    workers' ephemeral Prefect servers on one SQLite database race to register block schemas."""
    home = Path(os.environ["PREFECT_HOME"])
    assert home.is_dir() and f"-{os.getpid()}-" in home.name, home
    assert os.environ["PREFECT_RESULTS_LOCAL_STORAGE_PATH"].startswith(str(home))


def test_the_workers_of_a_session_report_to_the_one_server_its_controller_started(
    prefect_api_env: dict[str, str], request: pytest.FixtureRequest
) -> None:
    """Under ``-n N`` the session's Prefect server is the controller's (started once, before the
    workers); a test process without workers starts a server of its own."""
    from tests.prefect_server import SHARED_PREFECT_API

    shared = os.environ.get(SHARED_PREFECT_API)
    if hasattr(request.config, "workerinput"):
        assert shared and prefect_api_env["PREFECT_API_URL"] == shared
    else:
        assert shared is None and prefect_api_env["PREFECT_API_URL"].startswith("http://127.0.0.1:")


def test_a_client_that_hangs_up_mid_reply_prints_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    """A run that stops after its first calls closes its connections while the fake API still writes;
    the in-process CLI captures standard error as the run's own, so the server must stay silent."""
    api = JsonApi()
    done = threading.Event()

    def handle(body: dict, headers: dict) -> tuple:
        time.sleep(0.2)  # the client has gone by now
        done.set()
        return 200, b"x" * (8 << 20), {}

    api.handle = handle
    try:
        host, port = api.url.split("/")[2].split(":")
        with socket.create_connection((host, int(port))) as conn:
            conn.sendall(b"POST /api/chat HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # a reset, not a FIN
        assert done.wait(5)
        time.sleep(0.3)  # the write fails and the server thread reports it
    finally:
        api.stop()
    assert "Traceback" not in capsys.readouterr().err
