"""What a counterfactual run asks its LLM, for the plan before the run (flows.running.plan)."""

from __future__ import annotations

from typing import Any

from equilens.tasks.assessments.counterfactual.config import CounterfactualRunConfig
from equilens.tasks.pipeline import expand_stage


def plan_requests(config: CounterfactualRunConfig, prompts: Any) -> Any:  # noqa: ANN401 - DataFrames
    """What the LLM stage would be asked for ``prompts`` (each row ``llm.count`` times), for a plan:
    the valid variants and their controls."""
    variants = expand_stage(prompts, config.counterfactual)
    return variants[variants["valid"]]
