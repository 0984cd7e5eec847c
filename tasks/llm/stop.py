"""The process-wide stop request (Ctrl-C, SIGTERM) that long-running stages check between units of work.

The CLI's signal handler calls :func:`request_stop`; the LLM stage checks :func:`stop_requested`
between calls (remote providers) and between generated tokens (the local model), flushes the answers
it already has to the response cache, and raises :class:`RunInterrupted`. A library caller that wants
the same behaviour calls :func:`request_stop` itself.

The one signal handler here, :func:`signals_as_stop_requests`, is installed only while an event loop
runs in the main thread: there a handler that raises (Ctrl-C's, Prefect's ``TerminationSignal``) would
break the loop mid-callback, where asyncio logs the exception and carries on, so SIGINT and SIGTERM
only request a stop until the loop has unwound, and then reach the handler that was installed before.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from equilens.tasks.errors import EquilensError

_STOP = threading.Event()
_SIGNAL: list[int] = []
_ON_STOP: list[Callable[[int], None]] = []
_FROM_SIGNAL: list[bool] = []  # the first request came from a real signal
_LOCK = threading.RLock()  # re-entrant: a signal handler may request a stop while this thread holds it
SIGNALS = (signal.SIGINT, signal.SIGTERM)


class RunInterrupted(EquilensError):
    """A stage stopped early because a stop was requested (Ctrl-C or SIGTERM)."""

    exit_code = 130


def request_stop(signum: int = signal.SIGINT, from_signal: bool = False) -> None:
    """Ask every running stage to stop at its next check (thread-safe, idempotent).

    The first request also calls the :func:`on_stop` callbacks (the CLI's exit watchdog);
    ``from_signal`` says that a real signal asked (see :func:`stop_from_signal`).
    """
    with _LOCK:
        first = not _SIGNAL
        if first:
            _SIGNAL.append(int(signum))
            _FROM_SIGNAL[:] = [from_signal]
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


def stop_from_signal() -> bool:
    """Whether the first stop request came from a real signal that :func:`signals_as_stop_requests` took."""
    return bool(_FROM_SIGNAL and _FROM_SIGNAL[0])


def clear_stop() -> None:
    """Forget an earlier stop request (a new run in the same process starts clean)."""
    with _LOCK:
        _SIGNAL.clear()
        _FROM_SIGNAL.clear()
        _STOP.clear()


@contextmanager
def signals_as_stop_requests() -> Iterator[None]:
    """While the body runs (an event loop, in the main thread), SIGINT and SIGTERM only request a stop,
    which the loop sees within its poll interval; when the body ends, the first of them is delivered
    again to the handler installed before, which then stops the run as it would anywhere else. A second
    signal during the body hands the first to that handler at once. Outside the main thread, or for a
    signal that is ignored (or not handled from Python), nothing changes.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.getsignal(sig) for sig in SIGNALS}
    taken = [sig for sig, old in previous.items() if old is not None and old is not signal.SIG_IGN]
    pending: list[int] = []

    def restore() -> None:
        for sig in taken:
            signal.signal(sig, previous[sig])

    def take(signum: int, frame: Any) -> None:  # a frame
        if pending:  # a second signal: no more waiting
            restore()
            signal.raise_signal(pending.pop())
            return
        pending.append(signum)
        request_stop(signum, from_signal=True)

    for sig in taken:
        signal.signal(sig, take)
    try:
        yield
    finally:
        restore()
        if pending:
            signal.raise_signal(pending.pop())


def raise_if_stopped(where: str) -> None:
    if _STOP.is_set():
        raise RunInterrupted(f"stopped {where}: {signal_name(stop_signal())} received")


def signal_name(signum: int | None) -> str:
    try:
        return signal.Signals(signum).name if signum is not None else "a stop request"
    except ValueError:
        return f"signal {signum}"


def is_interruption(err: BaseException) -> bool:
    """Ctrl-C, SIGTERM (ours or Prefect's TerminationSignal), or a stage that stopped on request."""
    if isinstance(err, (KeyboardInterrupt, RunInterrupted)) or stop_requested():
        return True
    return type(err).__name__ == "TerminationSignal"


def stop_workers(err: BaseException) -> None:
    """Make sure stages still running in worker threads see the stop (Prefect's own SIGTERM handler turns
    the signal into a ``TerminationSignal`` in the main thread and nothing else)."""
    request_stop(getattr(err, "signal", None) or getattr(err, "signum", None) or signal.SIGINT)


def interruption_text(err: BaseException) -> str:
    """What stopped an interrupted run, for ``summary.error``."""
    signum = stop_signal()
    if signum is not None:
        return f"interrupted by {signal_name(signum)}; finished LLM answers are cached"
    return f"interrupted ({type(err).__name__}); finished LLM answers are cached"
