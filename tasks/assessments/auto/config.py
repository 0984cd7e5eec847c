"""The AutoEval assessment's configuration: its run config (the flow's parameter: the shared sections,
the counterfactual and stereotype sections, and an optional identity section), registered as an assessment."""

from __future__ import annotations

from typing import Literal

from equilens.tasks.assessments.identity.config import IdentityConfig
from equilens.tasks.assessments.stereotype.config import WithStereotype
from equilens.tasks.config import WithCounterfactual, assessment_field
from pydantic import Field


class AutoRunConfig(WithStereotype, WithCounterfactual):  # counterfactual first in the form
    """AutoEval: the counterfactual, stereotype and toxicity families on the same prompts (flows/auto.py)."""

    assessment: Literal["auto"] = assessment_field("auto")
    identity: IdentityConfig | None = Field(
        None, description="Give the prompts that name no group an identity through names, as the identity "
                          "assessment does (prompts x signals x cells x 2 more calls); none: off")

