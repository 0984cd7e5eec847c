"""Which flow runs a config: the flow its assessment's registry entry names (tasks.config.assessments)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from equilens.tasks.config import RunConfig
from equilens.tasks.config.assessments import ASSESSMENTS


def flow_for(config: RunConfig) -> Callable[[RunConfig], dict[str, Any]]:
    """The flow for ``config.assessment``, on the task runner ``config.execution`` asks for; only
    that flow's module is imported."""
    from equilens.tasks.orchestration.execution import with_task_runner

    return with_task_runner(ASSESSMENTS.get(config.assessment).flow_function(), config.execution)
