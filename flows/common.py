"""Pieces every flow shares: run ids, run bookkeeping in DuckDB, validation gates, artifacts."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any

import pandas as pd

from equilens.tasks.config import LLMConfig, RunConfig
from equilens.tasks.errors import EquilensError
from equilens.tasks.storage.fingerprint import versions
from equilens.tasks.storage.store import Store


def response_counts(responses: pd.DataFrame, **extra: Any) -> dict[str, Any]:
    """The run summary's ``responses`` entry: calls in all, answered, failed, refused, from cache."""
    return {"total": int(len(responses)), "ok": int(responses["ok"].sum()), "failed": int((~responses["ok"]).sum()),
            "refusals": int(responses["refusal"].sum()), "cached": int(responses["cached"].sum()), **extra}


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
        store.start_run(
            run_id,
            name=config.name,
            flow=flow,
            started_at=utcnow(),
            config=config.model_dump(mode="json"),
            config_hash=config.config_hash(),
            provider=config.llm.provider,
            model=config.llm.model,
            versions=versions(),
        )
        _ACTIVE[run_id] = self

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = round(time.perf_counter() - t0, 3)
            release_freed_memory()

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

    def finish(self, status: str, summary: dict[str, Any]) -> None:
        """Record the final status once (a second call, e.g. from the Ctrl-C handler, is a no-op)."""
        with self._finish_lock:
            if self.finished:
                return
            self.store.finish_run(self.run_id, status, timings=self.timings, summary=summary)
            self.finished = True
            _ACTIVE.pop(self.run_id, None)


def release_freed_memory() -> None:
    """Hand the heap pages a finished stage freed back to the operating system. glibc keeps freed
    memory for reuse, so without this a run's resident size stays at the high-water mark of every
    stage before (at 100,000 prompts, gigabytes of answers, requests and result copies no longer
    live) and each stage's peak adds to it. A no-op where the C library has no ``malloc_trim``."""
    import ctypes
    import gc

    gc.collect()
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (macOS, musl): nothing to hand back this way
        pass


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


def is_interruption(err: BaseException) -> bool:
    """Ctrl-C, SIGTERM (ours or Prefect's TerminationSignal), or a stage that stopped on request."""
    from equilens.tasks.llm.stop import RunInterrupted, stop_requested

    if isinstance(err, (KeyboardInterrupt, RunInterrupted)) or stop_requested():
        return True
    return type(err).__name__ == "TerminationSignal"


def begin_run(config: RunConfig, flow: str) -> tuple[str, Store, RunRecorder]:
    """A new run id, the store of the config, and the run's ``runs`` row (status running)."""
    if not _ACTIVE:  # a stop request left over from an interrupted run in this process ends with it
        from equilens.tasks.llm.stop import clear_stop

        clear_stop()
    run_id = new_run_id()
    store = Store(config.storage.duckdb_path, config.storage.lock_timeout)
    label_flow_run(run_id, config.name)
    return run_id, store, RunRecorder(store, run_id, flow, config)


def label_flow_run(run_id: str, name: str) -> None:
    """Name the Prefect flow run after the equilens run id and tag it, so the UI and `equilens show` meet."""
    try:
        from prefect.client.orchestration import get_client
        from prefect.context import FlowRunContext

        ctx = FlowRunContext.get()
        if ctx is None or ctx.flow_run is None:
            return
        tags = sorted({*(ctx.flow_run.tags or []), f"equilens-run:{run_id}", f"equilens-name:{name}"})
        with get_client(sync_client=True) as client:
            client.update_flow_run(ctx.flow_run.id, name=f"{name} · {run_id}", tags=tags)
    except Exception:  # noqa: BLE001 - a label is a view; it must never fail a run
        return


@contextmanager
def recorded_run(recorder: RunRecorder) -> Iterator[dict[str, Any]]:
    """Mark the run failed (with the error) if the body raises, interrupted on Ctrl-C or SIGTERM,
    completed otherwise."""
    summary: dict[str, Any] = {}
    try:
        yield summary
    except BaseException as err:
        if is_interruption(err):
            _stop_workers(err)
            recorder.finish("interrupted", {**summary, "error": interruption_text(err)})
        else:
            recorder.finish("failed", {**summary, "error": error_text(err)})
        raise
    else:
        recorder.finish("completed", summary)


def _stop_workers(err: BaseException) -> None:
    """Make sure stages still running in worker threads see the stop (Prefect's own SIGTERM handler turns
    the signal into a ``TerminationSignal`` in the main thread and nothing else)."""
    import signal

    from equilens.tasks.llm.stop import request_stop

    request_stop(getattr(err, "signal", None) or getattr(err, "signum", None) or signal.SIGINT)


def interruption_text(err: BaseException) -> str:
    """What stopped an interrupted run, for ``summary.error``."""
    from equilens.tasks.llm.stop import signal_name, stop_signal

    signum = stop_signal()
    if signum is not None:
        return f"interrupted by {signal_name(signum)}; finished LLM answers are cached"
    return f"interrupted ({type(err).__name__}); finished LLM answers are cached"


def error_text(err: BaseException) -> str:
    """``"ClassName: message"`` with secrets scrubbed (API keys, tokens, URL credentials), for ``summary.error``."""
    from equilens.tasks.llm.base import scrub_secrets

    message = str(err).strip()
    return scrub_secrets(f"{type(err).__name__}: {message}" if message else type(err).__name__)


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
            server.start()
            from equilens.flows.watchdog import stop_with_parent

            if server.server_process is not None:  # even when this process is killed (SIGKILL)
                stop_with_parent(server.server_process.pid)
            return
        except RuntimeError as err:
            detail = str(err).split(" stdout:")[0].strip().rstrip(".") or type(err).__name__
            server.stop()  # kill a half-started server; the next SubprocessASGIServer() is a fresh one
    raise PrefectStartupError(PREFECT_STARTUP_HELP.format(
        detail=detail, timeout=PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS.value()))


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


class LLMOutageError(EquilensError):
    """Every LLM call failed, or more than ``llm.max_failed_share`` of them: the run measured an outage."""

    exit_code = 4


def endpoint_label(cfg: LLMConfig) -> str:
    """Where the calls went, for a person (credentials scrubbed)."""
    from equilens.tasks.llm.base import scrub_secrets

    if cfg.provider == "azure" and cfg.azure_endpoint:
        return scrub_secrets(cfg.azure_endpoint)
    if cfg.base_url:
        return scrub_secrets(cfg.base_url)
    return "the OpenAI API" if cfg.provider == "openai" else f"the {cfg.provider} model {cfg.model}"


def check_llm_failures(config: RunConfig, responses: pd.DataFrame) -> None:
    """Fail the run when every LLM call failed, or more than ``llm.max_failed_share`` of them.

    Refusals are answers (a finding), not failures. Cached and brought answers count as answered.
    """
    if responses is None or responses.empty or "ok" not in responses.columns:
        return
    ok = responses["ok"].astype(bool)
    refused = responses["refusal"].astype(bool) if "refusal" in responses.columns else False
    failed = responses[~ok & ~refused]
    total, n_failed = len(responses), len(failed)
    share = n_failed / total
    limit = config.llm.max_failed_share
    if n_failed == 0 or (n_failed < total and share <= limit):
        return
    where = endpoint_label(config.llm)
    kinds = (failed["error_class"].fillna("Error") if "error_class" in failed.columns
             else pd.Series("Error", index=failed.index))
    classes = kinds.value_counts()
    top = str(classes.index[0])
    messages = failed.loc[kinds == top, "error_message"].dropna() if "error_message" in failed.columns else []
    message = str(messages.iloc[0]) if len(messages) else ""
    cause = {"ConnectionError": f"could not connect to {where}", "Timeout": f"no answer from {where} within "
             f"llm.timeout={config.llm.timeout:g} s"}.get(top, f"{top} from {where}")
    head = (f"all {total} LLM calls failed" if n_failed == total else
            f"{n_failed} of {total} LLM calls failed ({share:.0%}, more than llm.max_failed_share={limit:g})")
    by_class = ", ".join(f"{k} ({v})" for k, v in classes.items())
    raise LLMOutageError(f"{head}: {cause}. Failures by class: {by_class}."
                         + (f" First {top}: {message[:300]}" if message else "")
                         + " The run is recorded as failed; fix the endpoint and run the same command again "
                           "(answers that did arrive are cached).")


def publish_artifacts(run_id: str, metrics: pd.DataFrame, markdown: str) -> None:
    """Table and markdown artifacts in the Prefect UI (no-ops outside a flow run)."""
    try:
        from prefect.artifacts import create_markdown_artifact, create_table_artifact

        from equilens.tasks.reporting.terminal import p_of

        keep = [c for c in ("attribute", "group_a", "group_b", "metric", "value", "ci_low", "ci_high", "n")
                if c in metrics.columns]  # narrow enough for the screen; details are in the markdown report
        table = metrics[keep].assign(p_holm=[p_of(d) for d in metrics.get("details", [None] * len(metrics))]).round(4)
        create_table_artifact(
            key="metrics", table=table.astype(object).where(table.notna(), None).to_dict("records"),
            description=f"equilens metrics, run {run_id}",
        )
        create_markdown_artifact(key="report", markdown=markdown, description=f"equilens report, run {run_id}")
    except Exception:  # noqa: BLE001 - artifacts are a view; they must never fail a run
        return


def write_run_report(store: Store, run_id: str, config: RunConfig) -> str | None:
    """The self-contained HTML report, written after the run is finished (never fails the run)."""
    if not config.storage.reports_dir:
        return None
    from pathlib import Path

    from equilens.tasks.reporting.html import write_html_report

    path = Path(config.storage.reports_dir) / f"{run_id}.html"
    try:
        return str(write_html_report(store, run_id, path))
    except Exception as err:  # noqa: BLE001 - a report is a view; the data is already stored
        _warn(f"the HTML report was not written to {path} ({error_text(err)}); the run is stored: "
              f"`equilens report {run_id} --out FILE` writes it elsewhere.")
        return None


def _warn(message: str) -> None:
    """A warning in the run's log (console and Prefect UI), or the plain log outside a flow."""
    import logging

    try:
        from prefect import get_run_logger

        get_run_logger().warning(message)
    except Exception:  # noqa: BLE001 - no run context
        logging.getLogger("equilens").warning(message)


CLOSE_READS = ("attribute", "grp", "role", "ok", "refusal", "error_class", "error_message", "latency_s", "cost",
               "prompt_tokens", "completion_tokens")
"""The answers' columns :func:`close_run` reads (failures, usage, non-completion by group)."""


def closing_columns(responses: pd.DataFrame) -> pd.DataFrame:
    """Only the answers' columns :func:`close_run` reads, for a flow that holds its answers through a
    long stage (at 100,000 prompts the ids, cache keys and sample numbers of 1.3 million answers,
    ~170 MB, would stay resident under the whole metric stage)."""
    return responses[[c for c in CLOSE_READS if c in responses.columns]]


def close_run(
    store: Store, run_id: str, config: RunConfig, summary: dict[str, Any], metrics: pd.DataFrame,
    responses: pd.DataFrame,
) -> None:
    """The last step inside a recorded run: metrics and usage into the summary, Prefect artifacts."""
    from equilens.tasks.reporting.terminal import markdown_report, usage_summary

    check_llm_failures(config, responses)  # flows that do not check right after their LLM stage
    summary["metrics"] = metrics.drop(columns=["details"], errors="ignore").to_dict("records") if len(metrics) else []
    if len(responses):
        summary["usage"] = usage_summary(responses)
    from equilens.tasks.reporting.evidence import find_evidence

    try:
        evidence = find_evidence(store, run_id, 2) if len(metrics) else []
    except Exception as err:  # noqa: BLE001 - examples are a view: the run's results stand without them
        logging.getLogger(__name__).warning("no examples for the markdown artifact: %s", err)
        evidence = []
    publish_artifacts(run_id, metrics, markdown_report(run_id, config, summary, metrics, responses, evidence))


def run_result(store: Store, run_id: str, config: RunConfig, summary: dict[str, Any]) -> dict[str, Any]:
    """After the run is recorded as finished: write the HTML report, link it, and return the flow's result."""
    report = write_run_report(store, run_id, config)
    if report:
        try:
            from pathlib import Path

            from prefect.artifacts import create_link_artifact

            create_link_artifact(key="report-file", link=Path(report).resolve().as_uri(), link_text=report,
                                 description=f"equilens HTML report, run {run_id}")
        except Exception:  # noqa: BLE001 - a link is a view
            pass
    return {"run_id": run_id, "report": report, **summary}
