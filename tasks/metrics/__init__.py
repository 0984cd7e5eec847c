"""The metric library. Importing this package registers every built-in metric."""

from tasks.metrics import (  # noqa: F401 - importing a family module registers its metrics
    bbq,
    classification,
    classifier_scores,
    counterfactual,
    embedding,
    identity,
    probability,
    recommendation,
    stereotype,
)
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
