"""Progress on long stages: a tqdm bar in the terminal and a Prefect progress artifact."""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any


class ProgressReporter:
    """Callable ``(done, total)`` that drives a tqdm bar and, inside a Prefect run, an artifact."""

    def __init__(self, description: str, unit: str = "it") -> None:
        self.description, self.unit = description, unit
        self._bar: Any = None
        self._artifact_id: Any = None
        self._last_pct = -1.0
        self._last_line = -100.0

    def __enter__(self) -> ProgressReporter:
        return self

    def __call__(self, done: int, total: int) -> None:
        if self._bar is None:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, desc=self.description, unit=self.unit, file=sys.stderr,
                             disable=None, dynamic_ncols=True)
        self._bar.update(done - self._bar.n)
        pct = 100.0 * done / total if total else 100.0
        self._plain_line(done, total, pct)
        if pct - self._last_pct >= 5 or done == total:
            self._last_pct = pct
            self._artifact(pct)

    def _plain_line(self, done: int, total: int, pct: float) -> None:
        """Not a terminal (a CI log): no bar is drawn, so print a line at every 10% instead."""
        if self._bar.disable is False or not (done == total or pct - self._last_line >= 10):
            return
        self._last_line = pct
        print(f"{self.description}: {done:,}/{total:,} ({pct:.0f}%)", file=sys.stderr, flush=True)

    def _artifact(self, pct: float) -> None:
        try:
            from prefect.artifacts import create_progress_artifact, update_progress_artifact
            from prefect.context import TaskRunContext

            if TaskRunContext.get() is None:
                return
            if self._artifact_id is None:
                self._artifact_id = create_progress_artifact(progress=pct, description=self.description)
            else:
                update_progress_artifact(self._artifact_id, progress=pct)
        except Exception:  # noqa: BLE001 - progress display must never fail a run
            return

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.close()
