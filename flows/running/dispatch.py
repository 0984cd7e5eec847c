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
    """The flow for ``config.assessment``, on the task runner ``config.execution`` asks for."""
    from equilens.tasks.orchestration.execution import with_task_runner

    return with_task_runner(ASSESSMENTS.get(config.assessment).load_flow(), config.execution)
