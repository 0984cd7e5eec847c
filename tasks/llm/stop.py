"""The process-wide stop request (Ctrl-C, SIGTERM) that long-running stages check between units of work.

The CLI's signal handler calls :func:`request_stop`; the LLM stage checks :func:`stop_requested`
between calls (remote providers) and between generated tokens (the local model), flushes the answers
it already has to the response cache, and raises :class:`RunInterrupted`. Nothing here installs a
signal handler: a library caller that wants the same behaviour calls :func:`request_stop` itself.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable

from equilens.tasks.errors import EquilensError

_STOP = threading.Event()
_SIGNAL: list[int] = []
_ON_STOP: list[Callable[[int], None]] = []
_LOCK = threading.Lock()


class RunInterrupted(EquilensError):
    """A stage stopped early because a stop was requested (Ctrl-C or SIGTERM)."""

    exit_code = 130


def request_stop(signum: int = signal.SIGINT) -> None:
    """Ask every running stage to stop at its next check (thread-safe, idempotent).

    The first request also calls the :func:`on_stop` callbacks (the CLI's exit watchdog).
    """
    with _LOCK:
        first = not _SIGNAL
        if first:
            _SIGNAL.append(int(signum))
        _STOP.set()
        callbacks = list(_ON_STOP) if first else []
    for callback in callbacks:
        try:
            callback(int(signum))
        except Exception:  # noqa: BLE001 - a callback must not keep a stage from stopping
            pass


def on_stop(callback: Callable[[int], None]) -> Callable[[], None]:
    """Call ``callback(signum)`` on the first stop request; returns the function that unregisters it."""
    with _LOCK:
        _ON_STOP.append(callback)

    def remove() -> None:
        with _LOCK:
            if callback in _ON_STOP:
                _ON_STOP.remove(callback)

    return remove


def stop_requested() -> bool:
    return _STOP.is_set()


def wait_for_stop(seconds: float) -> bool:
    """Sleep up to ``seconds``, waking at once on a stop request; True when one came."""
    return _STOP.wait(max(0.0, seconds))


def stop_signal() -> int | None:
    """The signal that asked for the stop (the first one), or None."""
    return _SIGNAL[0] if _SIGNAL else None


def clear_stop() -> None:
    """Forget an earlier stop request (a new run in the same process starts clean)."""
    with _LOCK:
        _SIGNAL.clear()
        _STOP.clear()


def raise_if_stopped(where: str) -> None:
    if _STOP.is_set():
        raise RunInterrupted(f"stopped {where}: {signal_name(stop_signal())} received")


def signal_name(signum: int | None) -> str:
    try:
        return signal.Signals(signum).name if signum is not None else "a stop request"
    except ValueError:
        return f"signal {signum}"
