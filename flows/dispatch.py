"""Which flow runs a config: the assessment -> flow table."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from tasks.config import RunConfig


def flow_for(config: RunConfig) -> Callable[[RunConfig], dict[str, Any]]:
    """The flow for ``config.assessment``, on the task runner ``config.execution`` asks for."""
    from flows.execution import with_task_runner

    return with_task_runner(_flow(config), config.execution)


FLOWS = {  # assessment -> (module, flow function); imported on demand so a run loads only its flow
    "counterfactual": ("flows.counterfactual", "counterfactual_assessment"),
    "identity": ("flows.identity", "identity_assessment"),
    "stereotype": ("flows.stereotype", "stereotype_assessment"),
    "bias_test": ("flows.bias_test", "bias_test"),
    "classification": ("flows.classification", "classification_assessment"),
    "recommendation": ("flows.recommendation", "recommendation_assessment"),
    "bbq": ("flows.bbq", "bbq_assessment"),
    "auto": ("flows.auto", "auto_assessment"),
}


def _flow(config: RunConfig) -> Callable[[RunConfig], dict[str, Any]]:
    module, name = FLOWS[config.assessment]
    return getattr(importlib.import_module(module), name)
