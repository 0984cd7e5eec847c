"""Keeps equilens' own typed errors out of Prefect's console traceback logging (the CLI prints them once),
and libraries' warnings about themselves out of a notebook's output (:func:`quiet_library_warnings`).

A flow or task that raises an :class:`~equilens.tasks.errors.EquilensError` makes Prefect log the exception
with its full traceback (task run, then flow run) and two "Finished in state Failed" lines before
the CLI prints the one-paragraph ``error:`` line; a run stopped by Ctrl-C or SIGTERM makes it log
"Crash detected! Execution was aborted by ..." before the CLI's "error: interrupted". The filter
below drops exactly those console records; every other log line, and the records sent to the
Prefect API (the UI keeps its tracebacks and crashed states), are untouched. ``equilens run
--debug`` does not install it.
"""

from __future__ import annotations

import logging
import re

SIGNAL_CRASHES = ("Execution was aborted by an interrupt signal.", "Execution was aborted by a termination signal.")
"""Prefect's words for a flow or task run that SIGINT or SIGTERM stopped (the CLI says "error: interrupted")."""


def _error_names() -> set[str]:
    """Names of EquilensError and every subclass defined so far (flows define some of their own)."""
    from equilens.tasks.errors import EquilensError

    names, todo = set(), [EquilensError]
    while todo:
        cls = todo.pop()
        names.add(cls.__name__)
        todo.extend(cls.__subclasses__())
    return names


class KnownErrorFilter(logging.Filter):
    """Drop console records about an exception or a stop by signal the CLI reports itself, and
    great-expectations' INFO lines."""

    def filter(self, record: logging.LogRecord) -> bool:
        from equilens.tasks.errors import EquilensError

        if record.name.startswith("great_expectations") and record.levelno < logging.WARNING:
            return False  # GX sets its own logger to INFO at import ("Created temporary directory ...")
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, EquilensError):
            return False
        if record.levelno < logging.WARNING or not record.name.startswith("prefect"):
            return True
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a malformed record is not ours to judge
            return True
        if any(words in message for words in SIGNAL_CRASHES):
            return False
        pattern = r"\b(?:%s)\b[(:]" % "|".join(map(re.escape, sorted(_error_names())))
        return re.search(pattern, message) is None


_FILTER = KnownErrorFilter()


def quiet_known_errors() -> None:
    """Install the filter on every Prefect console handler (idempotent). Call after importing Prefect."""
    from prefect.logging.configuration import ensure_logging_setup
    from prefect.logging.handlers import PrefectConsoleHandler

    ensure_logging_setup()  # `import prefect` is lazy: create the console handlers now, then filter them

    loggers = [logging.getLogger(), *(obj for obj in logging.root.manager.loggerDict.values()
                                      if isinstance(obj, logging.Logger))]
    for logger in loggers:
        for handler in logger.handlers:
            if isinstance(handler, PrefectConsoleHandler) and _FILTER not in handler.filters:
                handler.addFilter(_FILTER)


LIBRARY_WARNINGS = (
    ("ignore", r"subprocess \d+ is still running", ResourceWarning, ""),  # Prefect's temporary server, at exit
    ("ignore", "", DeprecationWarning, r"great_expectations(\.|$)"),  # GX's own imports ("sre_constants")
    ("ignore", "", DeprecationWarning, r"prefect(\.|$)"),
)
"""Warnings that libraries raise about themselves, which a notebook would print under every run: nothing
a user of equilens can act on. Equilens' own warnings (too few prompts, ...) are untouched."""


def quiet_library_warnings() -> None:
    """Hide :data:`LIBRARY_WARNINGS` for the rest of the process (idempotent: each filter once)."""
    import warnings

    for action, message, category, module in LIBRARY_WARNINGS:
        if not any(f[0] == action and f[2] is category and getattr(f[1], "pattern", "") == message
                   and getattr(f[3], "pattern", "") == module for f in warnings.filters):
            warnings.filterwarnings(action, message=message, category=category, module=module)
