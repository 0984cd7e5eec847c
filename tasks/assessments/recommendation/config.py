"""The recommendation assessment's configuration: its own section and its run config (the flow's
parameter, the shared sections plus its own), registered as an assessment."""

from __future__ import annotations

from typing import Literal

from equilens.tasks.config import WithCounterfactual, assessment_field
from equilens.tasks.config.sections import StrictModel
from pydantic import Field


class RecommendationConfig(StrictModel):
    """An LLM used as a recommender (FaiRLLM): top-K lists per group against the neutral list."""

    templates: list[str] = Field(default_factory=list,
                                 description="Requests with a {group} slot; empty = the prompts section")
    source: Literal["template", "counterfactual"] = Field(
        "template", description="template: fill {group}; counterfactual: the counterfactual expansion of the prompts")
    groups: dict[str, list[str]] = Field(
        default_factory=lambda: {"gender": ["male", "female"]},
        description="{attribute: [group words]} filled into {group} (template source)")
    k: int = Field(10, ge=1, le=100, description="Top-K items compared")
    responses_path: str | None = Field(
        None, description="Bring your own: .csv/.jsonl/.parquet with prompt, attribute, group (empty = neutral), response")


class RecommendationRunConfig(WithCounterfactual):
    """An LLM used as a recommender (flows/recommendation.py); ``counterfactual`` expands the prompts
    when ``recommendation.source`` is counterfactual."""

    assessment: Literal["recommendation"] = assessment_field("recommendation")
    recommendation: RecommendationConfig = Field(default_factory=RecommendationConfig)
    answers_key = "recommendation.responses_path"
    file_keys = (answers_key,)

    def prompts_optional(self) -> bool:
        return super().prompts_optional() or bool(self.recommendation.templates)

