"""Which flow runs a config, and the full metric registry (every family imported)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tasks.config import RunConfig


def flow_for(config: RunConfig) -> Callable[[RunConfig], dict[str, Any]]:
    """The flow for ``config.assessment``, on the task runner ``config.execution`` asks for."""
    from flows.execution import with_task_runner

    return with_task_runner(_flow(config), config.execution)


NEW_FLOWS = {  # assessment -> (module, flow function)
    "classification": ("flows.classification", "classification_assessment"),
    "recommendation": ("flows.recommendation", "recommendation_assessment"),
    "bbq": ("flows.bbq", "bbq_assessment"),
    "auto": ("flows.auto", "auto_assessment"),
}


def _flow(config: RunConfig) -> Callable[[RunConfig], dict[str, Any]]:
    if config.assessment in NEW_FLOWS:
        import importlib

        module, name = NEW_FLOWS[config.assessment]
        return getattr(importlib.import_module(module), name)
    if config.assessment == "stereotype":
        from flows.stereotype import stereotype_assessment

        return stereotype_assessment
    if config.assessment == "bias_test":
        from flows.bias_test import bias_test

        return bias_test
    from flows.counterfactual import counterfactual_assessment

    return counterfactual_assessment


def load_all_metrics() -> dict[str, Any]:
    """Every registered metric by name (importing :mod:`tasks.metrics` registers all of them)."""
    from tasks.metrics import METRICS

    return dict(METRICS.items())
