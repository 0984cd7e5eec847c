"""Which flow runs a config, and the full metric registry (every family imported)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tasks.config import RunConfig


def flow_for(config: RunConfig) -> Callable[[RunConfig], dict[str, Any]]:
    from flows.counterfactual import counterfactual_assessment

    return counterfactual_assessment


def load_all_metrics() -> dict[str, Any]:
    import importlib

    from tasks.metrics import METRICS

    for module in ("tasks.metrics.stereotype", "tasks.metrics.probability", "tasks.metrics.embedding"):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError:
            continue
    return dict(METRICS.items())
