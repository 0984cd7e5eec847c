"""The metric library. Importing this package registers every built-in metric."""

from tasks.metrics import counterfactual, embedding, probability, stereotype  # noqa: F401 - register their metrics
from tasks.metrics import classification  # noqa: F401 - register its metrics
from tasks.metrics import bbq  # noqa: F401 - register its metrics
from tasks.metrics import recommendation  # noqa: F401 - register its metrics
from tasks.metrics.base import (
    METRICS,
    MetricSpec,
    estimate_row,
    metric,
    metric_row,
    metrics_of,
    skipped_row,
    wanted_metrics,
)

__all__ = ["METRICS", "MetricSpec", "estimate_row", "metric", "metric_row", "metrics_of", "skipped_row",
           "wanted_metrics"]
