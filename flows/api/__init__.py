"""equilens' Python API (import name ``equilens``): run assessments and compute metrics from a notebook.

    import equilens
    result = equilens.assess(["Write about a nurse named John."], llm__count=2)
    result.verdicts, result.metrics, result.responses, result.variants
    result.report("report.html")
    equilens.metrics.counterfactual(texts_a, texts_b)      # brought responses, no Prefect
    equilens.metrics.stereotype(responses)

Importing it is light: Prefect, torch and the scorers load only when a function needs them.
"""

from __future__ import annotations

from . import errors, metrics
from .assess import assess, load_run, power_plan
from .config_builder import build_config
from .result import AssessmentResult

__all__ = ["AssessmentResult", "assess", "build_config", "errors", "load_run", "metrics", "power_plan"]
