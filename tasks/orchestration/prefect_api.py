"""The Prefect API a run reports to: the ephemeral server started (and retried) before a flow runs,
or the one ``PREFECT_API_URL`` names."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from equilens.tasks.errors import EquilensError

PREFECT_STARTUP_HELP = (
    "Prefect's temporary API server did not start in time ({detail}). On a busy machine its first start "
    "(which creates and migrates its database) can take minutes: raise the wait with "
    "`export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS=300` (now {timeout} s), or start a server once "
    "with `prefect server start` and point runs at it with `export PREFECT_API_URL=http://127.0.0.1:4200/api`. "
    "Nothing was run; run the same command again."
)


class PrefectStartupError(EquilensError):
    """Prefect's ephemeral API server could not be started (after one retry)."""


def start_prefect_api(attempts: int = 2) -> None:
    """Start Prefect's ephemeral API server before a flow runs, retrying a timed-out start once.

    No-op when ``PREFECT_API_URL`` names a running server. A start that times out is stopped
    (its process killed) before the next try; the last failure becomes a :class:`PrefectStartupError`.
    """
    from prefect.settings import PREFECT_API_URL, PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS

    if PREFECT_API_URL.value():
        return
    from prefect.server.api.server import SubprocessASGIServer

    detail = ""
    for _ in range(max(1, attempts)):
        server = SubprocessASGIServer()
        try:
            with _deaf_to_ctrl_c():
                server.start()
            from equilens.tasks.orchestration.watchdog import stop_with_parent

            if server.server_process is not None:  # even when this process is killed (SIGKILL)
                stop_with_parent(server.server_process.pid)
            return
        except RuntimeError as err:
            detail = str(err).split(" stdout:")[0].strip().rstrip(".") or type(err).__name__
            server.stop()  # kill a half-started server; the next SubprocessASGIServer() is a fresh one
    raise PrefectStartupError(PREFECT_STARTUP_HELP.format(
        detail=detail, timeout=PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS.value()))


@contextmanager
def _deaf_to_ctrl_c() -> Iterator[None]:
    """SIGINT held back in this thread while it starts the server, so the server process starts with
    SIGINT blocked (a signal mask outlives fork and exec) and keeps it blocked: a Ctrl-C in the
    terminal reaches the whole process group, and a server stopped by it would leave the run unable to
    record that it stopped. The run's own handler stops the server (SIGTERM) once it has. A SIGINT
    that comes in meanwhile reaches this process when the mask is restored."""
    import signal

    if not hasattr(signal, "pthread_sigmask"):  # not POSIX
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def prefect_api_url() -> str | None:
    """The Prefect API this process reports to: ``PREFECT_API_URL``, or the ephemeral server
    :func:`start_prefect_api` started (None before one runs)."""
    from prefect.settings import PREFECT_API_URL

    if PREFECT_API_URL.value():
        return str(PREFECT_API_URL.value())
    from prefect.server.api.server import SubprocessASGIServer

    running = [s for s in getattr(SubprocessASGIServer, "_instances", {}).values()
               if getattr(s, "server_process", None) is not None and s.server_process.poll() is None]
    return running[0].api_url if running else None
