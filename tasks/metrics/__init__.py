"""The metric library. Importing this package registers every built-in metric: every module of the
package is imported (a family module registers its metrics as it loads), so a new family is a new
module here and nothing else."""

import importlib
import pkgutil

from equilens.tasks.metrics.base import (
    LEGENDS,
    METRICS,
    MetricSpec,
    estimate_row,
    family_legend,
    metric,
    metric_row,
    metrics_of,
    skipped_row,
    wanted_metrics,
)

__all__ = ["LEGENDS", "METRICS", "MetricSpec", "estimate_row", "family_legend", "metric", "metric_row", "metrics_of",
           "skipped_row", "wanted_metrics"]

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
