"""The metric library. Importing this package registers every built-in metric: every module of the
package is imported (a family module registers its metrics as it loads), and so is every metric
module an assessment declares (``Assessment.metrics``: the families only that assessment computes,
a ``metrics.py`` in its folder). A shared family is a new module here. The assessment modules are
named by the assessment registry, so the metric layer never imports an assessment's code, only the
declarations it registers."""

import importlib
import pkgutil

from equilens.tasks.catalog import import_declared
from equilens.tasks.metrics.base import (
    LEGENDS,
    METRICS,
    MetricSpec,
    estimate_row,
    family_legend,
    metric,
    metric_row,
    metrics_of,
    outcome_gaps,
    outcome_metrics,
    skipped_row,
    wanted_metrics,
)

__all__ = ["LEGENDS", "METRICS", "MetricSpec", "estimate_row", "family_legend", "metric", "metric_row", "metrics_of",
           "outcome_gaps", "outcome_metrics", "skipped_row", "wanted_metrics"]

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
import_declared("metrics")
