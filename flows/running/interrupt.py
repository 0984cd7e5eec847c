"""Ctrl-C and SIGTERM during ``equilens run``: stop the stages, mark the run interrupted, end every child.

The first SIGINT or SIGTERM sets the stop request (:mod:`equilens.tasks.llm.stop`), which the LLM stage sees
within a token or 0.1 s, and raises :class:`Interrupted` (a ``KeyboardInterrupt``) in the main thread
(once an event loop of the LLM stage running there has unwound), so the flow unwinds: finished answers are flushed to the
response cache and the run's row becomes
``interrupted``. :func:`finish_interrupted` then stops every child process of this process (the
ephemeral Prefect API server that Prefect started, anything else) and the CLI exits with
:func:`exit_code` (130 for SIGINT, 143 for SIGTERM). A watchdog does the same by force if the
process is still there ``GRACE_S`` seconds after the signal (a stage that cannot be stopped, such as
a model load or an embedding batch), and a second signal does it at once.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from equilens.tasks.llm.stop import (
    clear_stop,
    on_stop,
    request_stop,
    signal_name,
    stop_from_signal,
    stop_signal,
)

GRACE_S = 5.0
SIGNALS = (signal.SIGINT, signal.SIGTERM)
EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}  # 128 + the signal number, as shells report them


class Interrupted(KeyboardInterrupt):
    """Raised in the main thread by the first SIGINT or SIGTERM."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal_name(signum))
        self.signum = signum


def exit_code(signum: int | None = None) -> int:
    """130 for SIGINT (and a plain KeyboardInterrupt), 143 for SIGTERM."""
    signum = stop_signal() if signum is None else signum
    return EXIT_CODES.get(signum, 130) if signum is not None else 130


_RECEIVED: list[int] = []  # signals the handler of stop_on_signals has seen


def signal_received() -> bool:
    """True once a stop came from a real signal while :func:`stop_on_signals` was active.

    That includes a SIGTERM that Prefect's own handler caught during a flow run (it becomes a
    ``TerminationSignal``, which the run's record turns into a stop request), and a signal that an
    event loop in the main thread took as a stop request (:func:`~equilens.tasks.llm.stop.signals_as_stop_requests`).
    """
    return bool(_RECEIVED) or (_watching[0] and (stop_signal() == signal.SIGTERM or stop_from_signal()))


_watching = [False]


@contextmanager
def stop_on_signals(grace: float = GRACE_S) -> Iterator[None]:
    """SIGINT and SIGTERM stop the run for the body (main thread only); the old handlers come back after.

    During a flow run Prefect swaps in its own SIGTERM handler (raising ``TerminationSignal``) and
    sends the signal on to this one when the flow has unwound; the run's record
    (:func:`equilens.tasks.orchestration.run_record.recorded_run`) turns that into the same stop
    request, which starts the watchdog.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    clear_stop()
    _RECEIVED.clear()

    def start_watchdog(signum: int) -> None:
        if not (_RECEIVED or signum == signal.SIGTERM or stop_from_signal()):  # an in-process KeyboardInterrupt
            return
        threading.Thread(target=_watchdog, args=(grace,), name="equilens-stop-watchdog", daemon=True).start()

    def handler(signum: int, frame: Any) -> None:
        if _RECEIVED:  # a second signal: no more waiting
            force_exit(signum, "a second signal")
        _RECEIVED.append(signum)
        request_stop(signum)  # the first request starts the watchdog
        raise Interrupted(signum)

    dask_log = logging.getLogger("distributed")
    dask_level = dask_log.level

    def quiet_cluster_teardown(signum: int) -> None:
        """A local Dask cluster closes while its connections are still sending; its scheduler logs
        those as tracebacks. After a stop they are expected, not errors of the run."""
        dask_log.setLevel(logging.CRITICAL)

    previous = {sig: signal.getsignal(sig) for sig in SIGNALS}
    unregister = on_stop(start_watchdog)
    unquiet = on_stop(quiet_cluster_teardown)
    _watching[0] = True
    for sig in SIGNALS:
        signal.signal(sig, handler)
    try:
        yield
    finally:
        _watching[0] = False
        unregister()
        unquiet()
        dask_log.setLevel(dask_level)
        for sig, old in previous.items():
            signal.signal(sig, old)


def _watchdog(grace: float) -> None:
    time.sleep(grace)
    force_exit(stop_signal(), f"the run did not stop within {grace:g} s")


def finish_interrupted(child_timeout: float = 2.0, stop_processes: bool = True) -> list[str]:
    """Mark this process's unfinished runs interrupted and stop every child process; the run ids marked."""
    from equilens.tasks.orchestration.run_record import interrupt_active_runs

    marked = _bounded(lambda: interrupt_active_runs(_reason()), 2.0) or []
    if stop_processes:
        stop_children(child_timeout)
    return marked


def _reason() -> str:
    return f"interrupted by {signal_name(stop_signal())}; finished LLM answers are cached"


def force_exit(signum: int | None, why: str) -> None:
    """Mark the run, stop the children and leave at once (threads still working are abandoned)."""
    try:
        sys.stderr.write(f"\nerror: interrupted ({why}); stopping now.\n")
        finish_interrupted(child_timeout=1.5)
    finally:
        _flush_and_exit(exit_code(signum))


def leave(code: int) -> None:
    """End the process with ``code`` without waiting for worker threads or Prefect's exit hooks."""
    _flush_and_exit(code)


def _flush_and_exit(code: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed pipe must not keep the process alive
            pass
    os._exit(code)


def stop_children(timeout: float = 2.0) -> None:
    """Terminate every descendant process (SIGTERM, then SIGKILL after ``timeout``) and forget Prefect's
    ephemeral server, so nothing survives this process."""
    import psutil

    try:
        children = psutil.Process().children(recursive=True)
    except psutil.Error:
        children = []
    for child in children:
        try:
            child.terminate()
        except psutil.Error:
            pass
    _, alive = psutil.wait_procs(children, timeout=timeout)
    for child in alive:
        try:
            child.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(alive, timeout=1.0)
    _forget_prefect_server()


def _forget_prefect_server() -> None:
    """Reap the (already stopped) ephemeral Prefect server so its own exit hook has nothing to do."""
    server_mod = sys.modules.get("prefect.server.api.server")
    if server_mod is None:
        return
    for server in list(getattr(server_mod.SubprocessASGIServer, "_instances", {}).values()):
        try:
            server.stop()  # the process is gone: terminate and wait return at once
        except Exception:  # noqa: BLE001 - best effort
            pass


def _bounded(fn: Any, seconds: float) -> Any:
    """``fn()`` in a daemon thread, given up after ``seconds`` (a DuckDB lock must not hold the exit)."""
    out: list[Any] = []
    worker = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    worker.start()
    worker.join(seconds)
    return out[0] if out else None
