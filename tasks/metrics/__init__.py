"""The metric library. Importing this package registers every built-in metric."""

from tasks.metrics import counterfactual  # noqa: F401 - registers the counterfactual family
from tasks.metrics.base import METRICS, MetricSpec, metric

__all__ = ["METRICS", "MetricSpec", "metric"]
