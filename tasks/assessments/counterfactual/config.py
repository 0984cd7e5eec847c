"""The counterfactual assessment's configuration: no section of its own and its run config (the flow's
parameter, the shared sections plus its own), registered as an assessment."""

from __future__ import annotations

from typing import Literal

from equilens.tasks.config import WithCounterfactual, assessment_field
from pydantic import model_validator


class CounterfactualRunConfig(WithCounterfactual):
    """A counterfactual fairness run (flows/counterfactual.py)."""

    assessment: Literal["counterfactual"] = assessment_field("counterfactual")
    stops_early = True

    @model_validator(mode="after")
    def _something_to_compare(self) -> CounterfactualRunConfig:
        cf = self.counterfactual
        if not cf.attributes and not cf.custom:
            raise ValueError("counterfactual.attributes is empty and counterfactual.custom names no attribute: "
                             "nothing to compare. List attributes (e.g. [gender, race]) or define custom groups")
        return self

