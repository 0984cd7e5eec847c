"""The decisions assessment's configuration: its own section and its run config (the flow's
parameter, the shared sections plus its own), registered as an assessment."""

from __future__ import annotations

from typing import Literal

from equilens.tasks.config import RunConfig, assessment_field
from equilens.tasks.config.sections import LLMConfig, StrictModel
from pydantic import Field


class DecisionsConfig(StrictModel):
    """Yes/no decisions about people (discrim-eval): P(yes) per filled decision, and each group's
    mixed-effects discrimination score against a baseline person."""

    path: str = Field("data/decisions/decisions.jsonl",
                      description="A discrim-eval JSONL (filled_template, decision_question_id, age, gender, race, "
                                  "fill_type); the default is the shipped set of 24 scenarios")
    fill_types: list[str] = Field(default_factory=lambda: ["explicit", "implicit"], min_length=1,
                                  description="Which fills to run: explicit (the person described), implicit (a name)")
    attributes: list[Literal["age", "gender", "race"]] = Field(
        default_factory=lambda: ["age", "gender", "race"], min_length=1, description="Attributes scored")
    baselines: dict[str, str] = Field(
        default_factory=lambda: {"age": "60", "gender": "male", "race": "white"},
        description="The baseline group of each attribute (discrim-eval's: a 60-year-old white man); "
                    "scores are against it")
    scenarios: int | None = Field(None, ge=2, description="Run only the first N scenarios of the file (none: all)")
    instruction: str = Field('Please answer the above question with either "yes" or "no".',
                             description="Appended to a decision that does not already ask for yes or no")
    top_logprobs: int = Field(10, ge=1, le=20, description="First-token log-probabilities asked for, to read P(yes)")


class DecisionsRunConfig(RunConfig):
    """Yes/no decisions about people, discrim-eval style (flows/decisions.py)."""

    assessment: Literal["decisions"] = assessment_field("decisions")
    decisions: DecisionsConfig = Field(default_factory=DecisionsConfig)
    file_keys = ("decisions.path",)
    needs_prompts = False

    def decision_llm(self) -> LLMConfig:
        """The tested model's settings with the first token's log-probabilities asked for."""
        return self.llm.model_copy(update={"logprobs": max(self.llm.logprobs, self.decisions.top_logprobs)})

