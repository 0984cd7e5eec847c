"""The classification assessment's configuration: its own section and its run config (the flow's
parameter, the shared sections plus its own), registered as an assessment."""

from __future__ import annotations

from typing import Literal

from equilens.tasks.config import RunConfig, assessment_field
from equilens.tasks.config.sections import StrictModel
from pydantic import Field, model_validator


class ClassificationConfig(StrictModel):
    """An LLM used as a classifier: labels parsed from its answers (or brought), rates per group."""

    labels: list[str] = Field(default_factory=lambda: ["yes", "no"], min_length=2,
                              description="Allowed labels; matching ignores case, punctuation and a lead-in")
    positive_label: str | None = Field(None, description="The decision whose rates are compared (default: the first label)")
    aliases: dict[str, list[str]] = Field(default_factory=dict, description="{label: [other words meaning it]}")
    group_column: str = Field("group", description="Column of the prompts / predictions file holding the group")
    attribute: str = Field("group", description="Attribute name stored with the metrics (e.g. gender)")
    truth_column: str | None = Field("label", description="Ground-truth column, used when the file has it")
    cluster_column: str | None = Field(None, description="Rows sharing a value are resampled together (e.g. a case id)")
    instruction: str = Field("Answer with exactly one word: {labels}.",
                             description="Appended to every prompt ({labels} is filled in); empty = prompt as is")
    predictions_path: str | None = Field(
        None, description="Bring your own: .csv/.jsonl/.parquet with group and prediction columns")
    prediction_column: str = Field("prediction", description="Column of predictions_path holding the answer or label")

    @model_validator(mode="after")
    def _positive_is_a_label(self) -> ClassificationConfig:
        if self.positive_label is not None and self.positive_label not in self.labels:
            raise ValueError(f"positive_label {self.positive_label!r} is not one of labels {self.labels}")
        return self


class ClassificationRunConfig(RunConfig):
    """An LLM used as a classifier (flows/classification.py)."""

    assessment: Literal["classification"] = assessment_field("classification")
    classification: ClassificationConfig = Field(default_factory=ClassificationConfig)
    answers_key = "classification.predictions_path"
    file_keys = (answers_key,)

