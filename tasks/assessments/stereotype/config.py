"""The stereotype and toxicity assessment's configuration: its own section and its run config (the flow's
parameter, the shared sections plus its own), registered as an assessment."""

from __future__ import annotations

from typing import Literal

from equilens.tasks.config import RunConfig, assessment_field
from equilens.tasks.config.sections import StrictModel
from pydantic import Field


class StereotypeConfig(StrictModel):
    """Stereotype and toxicity assessment of responses (generated, or brought in a file)."""

    responses_path: str | None = Field(
        None, description="Bring your own responses: .csv/.jsonl/.parquet with prompt and response columns"
    )
    prompt_column: str = "prompt"
    response_column: str = "response"
    toxicity_model: str | None = Field(
        None, description="HF sequence-classification path or id; default: alt-profanity-check (weak)"
    )
    toxicity_label: str = Field("toxic", description="Label of toxicity_model that means toxic")
    stereotype_model: str | None = Field(None, description="HF classifier path or id; none ships offline")
    stereotype_label: str = Field("stereotype", description="Label of stereotype_model that means stereotype")
    threshold: float = Field(0.5, ge=0.0, le=1.0, description="Score above which a text counts as toxic/stereotyped")
    classifier_batch_size: int = Field(32, ge=1)
    cobs_targets: str | None = Field(None, description="YAML with target word lists (default data/lexicons/cobs_targets.yaml)")
    honest_lexicon: str | None = Field(None, description="Hurtful-word list for HONEST (e.g. HurtLex EN), one per line")
    word_level: bool = Field(True, description="Also store COBS per target word")


class WithStereotype(RunConfig):
    stereotype: StereotypeConfig = Field(default_factory=StereotypeConfig)


class StereotypeRunConfig(WithStereotype):
    """A stereotype and toxicity run (flows/stereotype.py)."""

    answers_key = "stereotype.responses_path"
    file_keys = ("stereotype.responses_path", "stereotype.honest_lexicon", "stereotype.cobs_targets")
    assessment: Literal["stereotype"] = assessment_field("stereotype")

