"""The metric library. Importing this package registers every built-in metric."""

from tasks.metrics import counterfactual, stereotype  # noqa: F401 - register their metrics
from tasks.metrics.base import METRICS, MetricSpec, metric

__all__ = ["METRICS", "MetricSpec", "metric"]
