"""A run's record in DuckDB: its id, its ``runs`` row from start to final status (completed, failed,
interrupted), and the counts its summary keeps."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any

import pandas as pd
from equilens.tasks.config import RunConfig
from equilens.tasks.llm.reuse import UNFINISHED, close_run, open_run
from equilens.tasks.llm.stop import interruption_text, is_interruption, stop_workers
from equilens.tasks.orchestration.memory import memory_handed_back
from equilens.tasks.orchestration.summary import RunSummary
from equilens.tasks.storage.fingerprint import versions
from equilens.tasks.storage.store import Store


def response_counts(responses: pd.DataFrame, **extra: Any) -> dict[str, Any]:
    """The run summary's ``responses`` entry: calls in all, answered, failed, refused, from cache, and
    answers cut at the answer cap (``truncated``; answered, so among the ``ok`` ones)."""
    cut = int(responses["truncated"].eq(True).sum()) if "truncated" in responses else 0
    return {"total": int(len(responses)), "ok": int(responses["ok"].sum()), "failed": int((~responses["ok"]).sum()),
            "refusals": int(responses["refusal"].sum()), "cached": int(responses["cached"].sum()), "cut": cut,
            **extra}


def skipped_summary(metrics: pd.DataFrame) -> dict[str, str]:
    """``metric/attribute -> reason`` for every metric row recorded as skipped."""
    out = {}
    for r in metrics.to_dict("records"):
        details = r.get("details")
        if isinstance(details, dict) and details.get("skipped"):
            out[f"{r['metric']}/{r['attribute']}"] = details["skipped"]
    return out


def new_run_id() -> str:
    return f"{datetime.now(timezone.utc):%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"


def utcnow() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


_ACTIVE: dict[str, RunRecorder] = {}  # runs this process started and has not finished (for Ctrl-C)


class RunRecorder:
    """Writes the ``runs`` row, stage timings, validation results, and the final status."""

    def __init__(self, store: Store, run_id: str, flow: str, config: RunConfig) -> None:
        self.store, self.run_id = store, run_id
        self.timings: dict[str, float] = {}
        self._finish_lock = threading.Lock()
        self.finished = False
        store.mark_abandoned()  # runs a killed process left "running"
        self.resumes = resumed_runs(store, config.config_hash())
        store.start_run(
            run_id,
            name=config.name,
            flow=flow,
            started_at=utcnow(),
            config=config.model_dump(mode="json"),
            config_hash=config.config_hash(),
            provider=config.llm.provider,
            model=config.llm.shown_name,
            versions=versions(),
        )
        _ACTIVE[run_id] = self
        open_run(run_id, self.resumes, config.llm)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        with memory_handed_back():
            t0 = time.perf_counter()
            try:
                yield
            finally:
                self.timings[name] = round(self.timings.get(name, 0.0) + time.perf_counter() - t0, 3)  # looks add up

    def gate(self, report: Any) -> None:
        """Store a great-expectations suite report; stop the flow when it failed."""
        from equilens.tasks.validation import raise_on_failure

        self.store.append("validations", report.to_frame(self.run_id))
        raise_on_failure(report)

    def save(self, table: str, frame: pd.DataFrame) -> None:
        self.store.append(table, frame.assign(run_id=self.run_id))

    def save_metrics(self, metrics: pd.DataFrame, validate: bool) -> None:
        """Store the metric rows, then (``validate``) gate them: stored first, so a failed suite
        loses nothing and the run's report still shows every row. No rows (an auto run whose
        families all had nothing to measure: a frame without columns) is nothing to check."""
        self.save("metrics", metrics)
        if validate and len(metrics):
            from equilens.tasks.validation import validate_metrics

            self.gate(validate_metrics(metrics))

    def finish(self, status: str, summary: RunSummary) -> None:
        """Record the final status once (a second call, e.g. from the Ctrl-C handler, is a no-op), with
        where the answers taken from the response cache came from (``cached_from``, ``resumed_runs``:
        :func:`equilens.tasks.llm.reuse.close_run`)."""
        with self._finish_lock:
            if self.finished:
                return
            summary = {**summary, **close_run(self.run_id)}
            self.store.finish_run(self.run_id, status, timings=self.timings, summary=summary)
            self.finished = True
            _ACTIVE.pop(self.run_id, None)


def resumed_runs(store: Store, config_hash: str) -> list[str]:
    """The runs a new run of the config with ``config_hash`` resumes, newest first: the latest runs of
    that config in ``store`` that ended unfinished (:data:`~equilens.tasks.llm.reuse.UNFINISHED`), up
    to the last one that completed (runs still going on elsewhere are passed over)."""
    if not store.path.exists():
        return []
    rows = store.query("SELECT run_id, status FROM runs WHERE config_hash = ? AND status <> 'running' "
                       "ORDER BY started_at DESC", [config_hash])
    resumes = []
    for run_id, status in rows.itertuples(index=False):
        if status not in UNFINISHED:
            break
        resumes.append(str(run_id))
    return resumes


def interrupt_active_runs(reason: str) -> list[str]:
    """Mark every run this process started and has not finished as interrupted; their ids."""
    marked = []
    for recorder in list(_ACTIVE.values()):
        try:
            recorder.finish("interrupted", {"error": reason})
            marked.append(recorder.run_id)
        except Exception:  # noqa: BLE001 - best effort while the process is being stopped
            continue
    return marked


def begin_run(config: RunConfig, flow: str) -> tuple[str, Store, RunRecorder]:
    """A new run id, the store of the config, and the run's ``runs`` row (status running)."""
    if not _ACTIVE:  # a stop request left over from an interrupted run in this process ends with it
        from equilens.tasks.llm.stop import clear_stop

        clear_stop()
    run_id = new_run_id()
    store = Store(config.storage.duckdb_path, config.storage.lock_timeout)
    label_flow_run(run_id, config.name)
    return run_id, store, RunRecorder(store, run_id, flow, config)


def run_tag(run_id: str) -> str:
    """The tag of the Prefect flow run of the equilens run ``run_id`` (how the UI finds it)."""
    return f"equilens-run:{run_id}"


def label_flow_run(run_id: str, name: str) -> None:
    """Name the Prefect flow run after the equilens run id and tag it, so the UI and `equilens show` meet."""
    try:
        from prefect.client.orchestration import get_client
        from prefect.context import FlowRunContext

        ctx = FlowRunContext.get()
        if ctx is None or ctx.flow_run is None:
            return
        tags = sorted({*(ctx.flow_run.tags or []), run_tag(run_id), f"equilens-name:{name}"})
        with get_client(sync_client=True) as client:
            client.update_flow_run(ctx.flow_run.id, name=f"{name} · {run_id}", tags=tags)
    except Exception:  # noqa: BLE001 - a label is a view; it must never fail a run
        return


@contextmanager
def recorded_run(recorder: RunRecorder) -> Iterator[RunSummary]:
    """Mark the run failed (with the error) if the body raises, interrupted on Ctrl-C or SIGTERM,
    completed otherwise."""
    summary: RunSummary = {}
    try:
        yield summary
    except BaseException as err:
        if is_interruption(err):
            stop_workers(err)
            recorder.finish("interrupted", {**summary, "error": interruption_text(err)})
        else:
            recorder.finish("failed", {**summary, "error": error_text(err)})
        raise
    else:
        recorder.finish("completed", summary)


def error_text(err: BaseException) -> str:
    """``"ClassName: message"`` with secrets scrubbed (API keys, tokens, URL credentials), for ``summary.error``."""
    from equilens.tasks.llm.base import scrub_secrets

    message = str(err).strip()
    return scrub_secrets(f"{type(err).__name__}: {message}" if message else type(err).__name__)
