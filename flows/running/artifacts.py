"""The end of a recorded run: the summary's metrics and usage, the Prefect artifacts (tables, the
markdown report, a link to the HTML report), and the HTML report file."""

from __future__ import annotations

import logging
from typing import Any

import pandas as pd
from equilens.tasks.config import RunConfig
from equilens.tasks.orchestration.outage import check_llm_failures
from equilens.tasks.orchestration.run_record import error_text
from equilens.tasks.orchestration.summary import RunResult, RunSummary
from equilens.tasks.storage.store import Store


def publish_artifacts(run_id: str, metrics: pd.DataFrame, markdown: str) -> None:
    """Table and markdown artifacts in the Prefect UI (no-ops outside a flow run). ``markdown`` is
    escaped where it is written (:func:`equilens.tasks.reporting.closing.markdown_report`); the
    table, whose cells the UI shows as text, has its names made
    :func:`~equilens.tasks.plain.visible`."""
    try:
        from equilens.tasks.plain import visible
        from equilens.tasks.reporting.terminal import p_of
        from prefect.artifacts import create_markdown_artifact, create_table_artifact

        keep = [c for c in ("attribute", "group_a", "group_b", "metric", "value", "ci_low", "ci_high", "n")
                if c in metrics.columns]  # narrow enough for the screen; details are in the markdown report
        table = metrics[keep].assign(p_holm=[p_of(d) for d in metrics.get("details", [None] * len(metrics))]).round(4)
        records = [{k: visible(v) if isinstance(v, str) else v for k, v in row.items()}
                   for row in table.astype(object).where(table.notna(), None).to_dict("records")]
        create_table_artifact(key="metrics", table=records, description=f"equilens metrics, run {run_id}")
        create_markdown_artifact(key="report", markdown=markdown, description=f"equilens report, run {run_id}")
    except Exception:  # noqa: BLE001 - artifacts are a view; they must never fail a run
        return


def write_run_report(store: Store, run_id: str, config: RunConfig, evidence: list | None = None) -> str | None:
    """The self-contained HTML report, written after the run is finished (never fails the run), with
    the examples the run's close found (``evidence``; None: found again)."""
    if not config.storage.reports_dir:
        return None
    from pathlib import Path

    from equilens.tasks.reporting.html import write_html_report

    path = Path(config.storage.reports_dir) / f"{run_id}.html"
    try:
        return str(write_html_report(store, run_id, path, evidence))
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
    store: Store, run_id: str, config: RunConfig, summary: RunSummary, metrics: pd.DataFrame,
    responses: pd.DataFrame,
) -> tuple[Any, list | None]:  # findings.Judged, evidence.Evidence
    """The last step inside a recorded run: metrics, usage and findings into the summary, Prefect
    artifacts; the run's verdicts and findings (for :func:`run_result`'s gate) and the answers shown
    as examples (for its report; None where they could not be found)."""
    from equilens.tasks.reporting.closing import markdown_report
    from equilens.tasks.reporting.terminal import usage_summary

    check_llm_failures(config, responses)  # flows that do not check right after their LLM stage
    summary["metrics"] = metrics.drop(columns=["details"], errors="ignore").to_dict("records") if len(metrics) else []
    if len(responses):
        summary["usage"] = usage_summary(responses)
    from equilens.tasks.reporting.evidence import MARKDOWN_EXAMPLES, REPORT_EXAMPLES, find_evidence, first_examples

    evidence: list | None
    try:
        evidence = find_evidence(store, run_id, REPORT_EXAMPLES) if len(metrics) else []
    except Exception as err:  # noqa: BLE001 - examples are a view: the run's results stand without them
        logging.getLogger(__name__).warning("no examples for the markdown artifact: %s", err)
        evidence = None
    publish_artifacts(run_id, metrics, markdown_report(run_id, config, summary, metrics, responses,
                                                       first_examples(evidence or [], MARKDOWN_EXAMPLES)))
    from equilens.tasks.reporting.findings import stored_findings

    judged = stored_findings(store, run_id)
    summary["findings"] = [f.as_dict() for f in judged.findings]
    return judged, evidence


def run_result(store: Store, run_id: str, config: RunConfig, summary: RunSummary,
               judged: Any = None, evidence: list | None = None) -> RunResult:  # findings.Judged
    """After the run is recorded as finished: write the HTML report, link it, and return the flow's result;
    with ``execution.fail_on: finding`` and a finding, raise :class:`~equilens.tasks.reporting.findings.FindingsFound`
    instead (the run stays stored as completed; the Prefect flow run ends Failed). ``judged`` is what
    :func:`close_run` found, read again from the store when not given; ``evidence``, the examples it found."""
    report = write_run_report(store, run_id, config, evidence)
    if report:
        try:
            from pathlib import Path

            from equilens.tasks.plain import markdown
            from prefect.artifacts import create_link_artifact

            create_link_artifact(key="report-file", link=Path(report).resolve().as_uri(), link_text=markdown(report),
                                 description=f"equilens HTML report, run {run_id}")
        except Exception:  # noqa: BLE001 - a link is a view
            pass
    result = RunResult(run_id=run_id, report=report, **summary)
    if config.execution.fail_on == "finding" and summary.get("findings"):
        from equilens.tasks.reporting.findings import FindingsFound, gate_message, stored_findings

        raise FindingsFound(gate_message(judged or stored_findings(store, run_id)), result)
    return result
