"""``equilens.assess``: run one assessment from Python (a notebook) and get its stored results back."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

from .config_builder import build_config
from .result import AssessmentResult


def assess(
    prompts: str | os.PathLike | Iterable[str] | None = None,
    model: Any = None,
    assessment: str | None = None,
    *,
    name: str | None = None,
    config: str | os.PathLike | Mapping | Any | None = None,
    provider: str | None = None,
    base_url: str | None = None,
    db: str | os.PathLike | None = None,
    debug: bool = False,
    **overrides: Any,
) -> AssessmentResult:
    """Run an assessment as ``equilens run`` does and return an :class:`AssessmentResult`.

    ``prompts``: a list of prompt strings or a prompt file; ``model`` / ``provider`` / ``base_url``: the
    model under test (default: the embedded SmolLM2), or ``model`` the application itself: a function
    ``answer(prompt, system=..., user=...)`` returning a string, or a LangChain chat model or Runnable
    (a chain), with no import path needed; ``assessment``: the config's own, else counterfactual;
    or stereotype, bias_test, classification, recommendation, bbq, identity, decisions or auto; ``db``: the DuckDB file
    (default ``data/equilens.duckdb`` under the working directory). Every other keyword overrides one
    config key, sections separated by a double underscore (``llm__count=2``) or as a dict per section
    (``metrics={"bootstrap_resamples": 200}``); see :func:`equilens.build_config` and ``equilens options``.

    The same checks as the CLI run first (files, keys, provider, storage) and raise the typed errors of
    ``equilens.errors`` with a one-paragraph message; warnings (duplicate prompts dropped) are Python
    warnings. The run is stored in DuckDB like any other (``equilens show RUN_ID`` reads it) and, unless
    ``storage__reports_dir=None``, its HTML report is written under ``data/runs``. ``debug=True`` keeps
    Prefect's tracebacks of equilens errors in the log.
    """
    from equilens.tasks.environment import apply_offline_defaults

    apply_offline_defaults()
    cfg = build_config(prompts, model, assessment, name=name, config=config, provider=provider,
                       base_url=base_url, db=db, **overrides)
    from equilens.flows.running.preflight import preflight

    for message in preflight(cfg):
        warnings.warn(message, UserWarning, stacklevel=2)
    from equilens.flows.running.dispatch import flow_for
    from equilens.tasks.orchestration.prefect_api import start_prefect_api

    if not debug:
        from equilens.flows.running.quiet_logs import quiet_known_errors, quiet_library_warnings

        quiet_known_errors()
        quiet_library_warnings()
    start_prefect_api()
    summary = flow_for(cfg)(cfg)
    return AssessmentResult.load(cfg.storage.duckdb_path, summary["run_id"], summary=summary)


def power_plan(
    detect: float,
    prompts: str | os.PathLike | Iterable[str] | None = None,
    model: str | None = None,
    assessment: str | None = None,
    *,
    metric: str | None = None,
    pilot: int | None = None,
    config: str | os.PathLike | Mapping | Any | None = None,
    db: str | os.PathLike | None = None,
    **overrides: Any,
) -> Any:  # equilens.flows.running.power.PowerPlan
    """How many prompts (and calls, and cost) a config needs to detect a gap of ``detect`` with 80%
    power at the verdict's own rule, as ``equilens run CONFIG --plan --detect`` answers it: a pilot of
    the first ``pilot`` prompts (default a tenth, at least 10) runs for real and is stored as its own
    run, its calls cached for the full run. Returns a :class:`equilens.flows.running.power.PowerPlan`
    (``.worst.prompts``, ``.worst.low`` / ``.high``, ``.needs`` per pair, ``.lines()``); the other
    arguments are :func:`assess`'s."""
    from equilens.tasks.environment import apply_offline_defaults

    apply_offline_defaults()
    cfg = build_config(prompts, model, assessment, config=config, db=db, **overrides)
    from equilens.flows.running.power import power_plan as plan
    from equilens.flows.running.quiet_logs import quiet_known_errors
    from equilens.tasks.orchestration.prefect_api import start_prefect_api

    quiet_known_errors()
    start_prefect_api()
    return plan(cfg, detect, metric, pilot)


def load_run(run_id: str, db: str | os.PathLike = "data/equilens.duckdb") -> AssessmentResult:
    """A stored run (from any earlier ``assess`` or ``equilens run``) as an :class:`AssessmentResult`.

    ``run_id`` may be a unique prefix, as for ``equilens show``.
    """
    from equilens.tasks.errors import StorageError
    from equilens.tasks.storage.store import Store

    ids = Store(db).query("SELECT run_id FROM runs WHERE starts_with(run_id, ?)", [run_id])["run_id"].tolist()
    if len(ids) != 1:
        raise StorageError(f"{'No' if not ids else len(ids)} run(s) in {db} start with {run_id!r}"
                           + (f": {', '.join(ids[:5])}." if ids else " (see `equilens runs`)."))
    return AssessmentResult.load(db, ids[0])
