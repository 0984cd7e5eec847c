"""The metric library. Importing this package registers every built-in metric: every module of the
package is imported (a family module registers its metrics as it loads), and so is every metric
module of an assessment's folder (``tasks/assessments/NAME/*metrics.py``: the families only that
assessment computes). A shared family is a new module here; an assessment's own family is a
``metrics.py`` in its folder. The assessment modules are found by path, so the metric layer never
imports an assessment's code, only the declarations it registers."""

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
    outcome_gaps,
    outcome_metrics,
    skipped_row,
    wanted_metrics,
)
from equilens.tasks.registry import import_assessment_modules

__all__ = ["LEGENDS", "METRICS", "MetricSpec", "estimate_row", "family_legend", "metric", "metric_row", "metrics_of",
           "outcome_gaps", "outcome_metrics", "skipped_row", "wanted_metrics"]

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
import_assessment_modules("*metrics.py")
