"""The skeleton every assessment flow shares: one context manager around the flow's stages.

``with assessment_run(config, "identity_assessment") as run:`` starts the run's record (a new run
id, its ``runs`` row, the Prefect flow run labelled with it), records the run as failed, interrupted
or completed when the body ends, and hands the stages what they share: ``run.rec`` (stage timings,
saved tables, validation gates), ``run.summary``, ``run.code`` (the code fingerprint of cached
stages) and ``run.log``. The body ends with ``run.close(metrics, responses)`` (metrics and usage into
the summary, the Prefect artifacts); after the block, ``run.result()`` writes the HTML report and is
the flow's return value. A run started from a deployment whose parameters change what code or
endpoint it calls is refused first (:mod:`equilens.tasks.orchestration.deployed`). A body that
stops early (nothing to compare) returns ``run.result()`` without closing: the summary alone, no report.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pandas as pd
from equilens.flows.running.artifacts import close_run, run_result
from equilens.tasks.config import RunConfig
from equilens.tasks.orchestration.run_record import RunRecorder, begin_run, recorded_run
from equilens.tasks.orchestration.summary import RunResult, RunSummary
from equilens.tasks.storage.store import Store


@dataclass
class AssessmentRun:
    """One run of an assessment flow: its id, store, record, summary, code fingerprint and logger."""

    config: RunConfig
    run_id: str
    rec: RunRecorder
    summary: RunSummary
    code: str
    log: Any
    closed: bool = False
    judged: Any = None  # the verdicts and findings close() stored (findings.Judged)
    evidence: list | None = None  # the answers close() found to show as examples (evidence.Evidence)

    @property
    def store(self) -> Store:
        """The run's DuckDB store (its record's)."""
        return self.rec.store

    def close(self, metrics: pd.DataFrame, responses: pd.DataFrame | None = None) -> None:
        """The last step of the body: metrics and usage into the summary, the Prefect artifacts."""
        self.judged, self.evidence = close_run(self.store, self.run_id, self.config, self.summary, metrics,
                                pd.DataFrame() if responses is None else responses)
        self.closed = True

    def result(self) -> RunResult:
        """The flow's return value: after a closed run, the HTML report written and linked; the run id
        and summary in any case."""
        if self.closed:
            return run_result(self.store, self.run_id, self.config, self.summary, self.judged, self.evidence)
        return RunResult(run_id=self.run_id, **self.summary)


@contextmanager
def assessment_run(config: RunConfig, flow: str) -> Iterator[AssessmentRun]:
    """The recorded run around a flow's stages (see the module docstring)."""
    from equilens.tasks.orchestration.deployed import check_deployment_run
    from equilens.tasks.storage.fingerprint import code_fingerprint
    from prefect import get_run_logger

    log = get_run_logger()
    run_id, _, rec = begin_run(config, flow)
    code = code_fingerprint()
    log.info("run %s: writing to %s", run_id, config.storage.duckdb_path)
    with recorded_run(rec) as summary:
        check_deployment_run(config)  # before any call: a deployment's run cannot change what it calls
        yield AssessmentRun(config, run_id, rec, summary, code, log)
