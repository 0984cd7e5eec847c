"""Which flow runs a config.

Each assessment declares its flow once, as ``module:function`` in its :class:`Assessment` value
(:mod:`equilens.tasks.catalog`); a run imports only its own flow (:func:`flow_for`), and
:func:`load_flows` imports them all, for the lists of every assessment. Nothing keeps a list of flows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from equilens.tasks.catalog import ASSESSMENTS
from equilens.tasks.config import RunConfig


def load_flows() -> None:
    """Import every assessment's flow (a flow that cannot be loaded is a RegistryError naming it)."""
    for _, entry in ASSESSMENTS.registered():
        entry.load_flow()


def flow_for(config: RunConfig) -> Callable[[RunConfig], dict[str, Any]]:
    """The flow for ``config.assessment``, imported now (so Prefect's logging is set up before its
    server starts), as a function of the config it runs (:func:`on_task_runner`)."""
    return on_task_runner(ASSESSMENTS.get(config.assessment).load_flow())


def on_task_runner(flow: Any) -> Callable[[RunConfig], dict[str, Any]]:  # a Prefect flow
    """``flow`` run on the task runner its config's ``execution`` asks for, chosen as it runs: a local
    Dask cluster's workers report to the Prefect API, which is up by then."""
    from equilens.tasks.orchestration.execution import with_task_runner

    def run(config: RunConfig) -> dict[str, Any]:
        return with_task_runner(flow, config.execution)(config)

    return run
