"""One Prefect test server for a whole ``pytest -n N`` session, and a process reporting to it.

The controller starts the server before its workers (:func:`tests.conftest.pytest_configure`): the same
server ``prefect.testing.utilities.prefect_test_harness`` starts (Prefect's API app under uvicorn on a
loopback port, a fresh SQLite database, no UI), started once rather than once per worker. Each worker
waits for it to answer and points its Prefect settings at it (:func:`reporting_to`), as the harness does
for its own server. Tests that read back what Prefect shows read their own run's records
(:func:`shown_for_run`): the server holds every worker's runs.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

SHARED_PREFECT_API = "EQUILENS_TEST_PREFECT_API_URL"
"""The environment variable in which the controller of ``-n N`` gives its workers the server's API URL."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class TestServer:
    """A Prefect API server process on 127.0.0.1 with its own SQLite database."""

    __test__ = False  # not a test class
    process: subprocess.Popen
    api_url: str

    @classmethod
    def start(cls, home: str) -> TestServer:
        """Start the server (without waiting for it: :func:`reporting_to` waits); ``home`` is its PREFECT_HOME."""
        port = _free_port()
        database = Path(tempfile.mkdtemp(prefix="equilens-test-prefect-db-")) / "prefect-test.db"
        spec = importlib.util.find_spec("prefect")
        assert spec is not None and spec.origin is not None
        env = {**os.environ, "PREFECT_HOME": home, "PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1",
               "PREFECT__SERVER_FINAL": "1", "PREFECT_SERVER_DATABASE_CONNECTION_URL": f"sqlite+aiosqlite:///{database}"}
        env.pop("PREFECT_API_URL", None)
        process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "--app-dir", str(Path(spec.origin).parents[1]), "--factory",
             "prefect.server.api.server:create_app", "--host", "127.0.0.1", "--port", str(port),
             "--log-level", "error", "--lifespan", "on"], env=env)
        return cls(process, f"http://127.0.0.1:{port}/api")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def wait_for(api_url: str, timeout: float) -> None:
    """Return once the server at ``api_url`` answers its health check; RuntimeError after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"{api_url}/health", timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"the session's Prefect test server at {api_url} did not answer within {timeout:.0f} s")
        time.sleep(0.2)


@contextmanager
def reporting_to(api_url: str, timeout: float) -> Iterator[None]:
    """This process's flows report to the server at ``api_url`` (settings as the harness sets them for
    its own server); their logs and events are sent before the context ends."""
    import inspect

    import prefect.context
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker
    from prefect.settings import PREFECT_API_URL, temporary_settings
    from prefect.utilities.asyncutils import run_coro_as_sync

    wait_for(api_url, timeout)
    with temporary_settings(updates={PREFECT_API_URL: api_url}), \
            prefect.context._temporary_global_settings_context(prefect.context.get_settings_context()):
        yield

        async def drain() -> None:
            try:
                drained = APILogWorker.instance().drain()
                if inspect.isawaitable(drained):
                    await drained
            except RuntimeError:  # the log worker never started
                pass
            drained = EventsWorker.drain_all()
            if inspect.isawaitable(drained):
                await drained

        run_coro_as_sync(drain())


def flow_runs_of(run_id: str) -> list:
    """The Prefect flow runs of the equilens run ``run_id``, found by its tag
    (:func:`equilens.tasks.orchestration.run_record.run_tag`)."""
    from equilens.tasks.orchestration.run_record import run_tag
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterTags

    with get_client(sync_client=True) as client:
        return client.read_flow_runs(flow_run_filter=FlowRunFilter(tags=FlowRunFilterTags(all_=[run_tag(run_id)])))


def shown_for_run(run_id: str) -> tuple[list, list, list]:
    """(flow runs, logs, artifacts) the Prefect server shows for the equilens run ``run_id``."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId, LogFilter, LogFilterFlowRunId

    runs = flow_runs_of(run_id)
    ids = [run.id for run in runs]
    with get_client(sync_client=True) as client:
        logs = client.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=ids)))
        artifacts = client.read_artifacts(artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=ids)))
    return runs, logs, artifacts
