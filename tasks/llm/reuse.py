"""When an answer in the response cache may stand for a new call of an application, and what a run
is told about the answers it takes from there.

* ``python`` and ``langchain`` targets: the cache key holds the fingerprint of the code they run
  (:mod:`equilens.tasks.llm.app_code`), so answers are reused across runs while that code is
  unchanged, and an edit means new calls.
* ``http`` targets: the code behind a URL cannot be seen, so without ``llm.target_version`` the
  cache key holds the run's *session*, and answers are reused only within it. A session is the
  run's own id, unless the run resumes: when the latest runs of the same config (same config hash,
  same store) before it ended ``interrupted``, ``abandoned`` or ``failed`` (the ones "run the same
  command again" is said after), it continues the session of the first of them, so a resumed run
  pays only for the calls that run had not finished, while a run after a completed one calls the
  service again. A key holding the session is simpler than filtering cached rows by time: the
  cache table, its writes and every lookup stay as they are, and an old answer can never match.
  Calls made outside a recorded run (``run_requests`` alone) share this process's session.
* ``llm.target_version`` overrides both: when it is set, the key holds it instead of the code
  fingerprint or the session, and answers are reused for as long as it stays the same.

:func:`open_run` (called as a run's record is started) registers the run's session in this process;
:func:`session_of` finds it for an LLM config, and :func:`note_cached` keeps, per run, how many
answers came from the cache and why (:func:`equilens.tasks.llm.targets.cache_reason`), for the
run's stored summary (:func:`close_run`).
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from equilens.tasks.config import LLMConfig

UNFINISHED = ("interrupted", "abandoned", "failed")
"""Statuses of a run that the next run of the same config resumes."""

PROCESS_SESSION = f"process-{uuid.uuid4().hex[:12]}"
"""The session of calls made outside a recorded run: this process."""


@dataclass
class RunSession:
    """A run this process has started and not finished: its session and the answers it took from the cache."""

    run_id: str
    resumes: list[str]
    """The unfinished runs it continues, newest first (empty: a session of its own)."""
    llm: Any = None
    cached: dict[str, int] = field(default_factory=dict)
    """Why -> how many answers came from the cache for that reason."""

    @property
    def session(self) -> str:
        return self.resumes[-1] if self.resumes else self.run_id


_RUNS: dict[str, RunSession] = {}
_LOCK = threading.Lock()


def open_run(run_id: str, resumes: list[str], llm: Any = None) -> RunSession:
    """Register a run started in this process, with the unfinished runs it resumes (newest first) and
    its ``llm`` section."""
    with _LOCK:
        _RUNS[run_id] = found = RunSession(run_id, list(resumes), llm)
    return found


def close_run(run_id: str) -> dict[str, Any]:
    """Forget a finished run; what its summary records of the cache (``cached_from``: why -> how many
    answers, and the runs it resumed), empty when it took nothing from there."""
    with _LOCK:
        found = _RUNS.pop(run_id, None)
    if found is None or not found.cached:
        return {}
    out: dict[str, Any] = {"cached_from": dict(found.cached)}
    if found.resumes:
        out["resumed_runs"] = list(found.resumes)
    return out


def _run_for(cfg: LLMConfig) -> RunSession | None:
    """The active run whose ``llm`` section ``cfg`` is, else the one started last (a judge's or a
    reader's calls belong to the run they serve), else None."""
    with _LOCK:
        runs = list(_RUNS.values())
    for run in reversed(runs):
        if run.llm == cfg:
            return run
    return runs[-1] if runs else None


def session_of(cfg: LLMConfig) -> str:
    """The session an ``http`` target's answers are reused within: the run's (see the module)."""
    run = _run_for(cfg)
    return PROCESS_SESSION if run is None else run.session


def resumed_by(cfg: LLMConfig) -> list[str]:
    """The unfinished runs the run of ``cfg`` resumes, newest first (empty outside a resumed run)."""
    run = _run_for(cfg)
    return [] if run is None else list(run.resumes)


def note_cached(cfg: LLMConfig, cached: int, total: int, reason: str, what: str = "answers") -> str | None:
    """Record that ``cached`` of ``total`` answers came from the cache for ``reason`` (for the run's
    summary); the line that says so, None when none did. ``what`` the answers are ("earlier turns of
    the conversations not yet finished")."""
    if cached <= 0:
        return None
    run = _run_for(cfg)
    if run is not None:
        with _LOCK:
            run.cached[reason] = run.cached.get(reason, 0) + cached
    return f"{cached} of {total} {what} come from the cache ({reason})"
