"""The counterfactual assessment's configuration: no section of its own and its run config (the flow's
parameter, the shared sections plus its own), registered as an assessment."""

from __future__ import annotations

from typing import Literal

from equilens.tasks.config import WithCounterfactual, assessment_field
from equilens.tasks.config.assessments import assessment
from pydantic import model_validator


@assessment(
    default_config="configs/demo.yaml", order=1,
    card="Does the model answer differently when a prompt names another group? Prompts that mention "
         "gender, race or your own groups get counterfactual variants (he -> she, white -> Black, names "
         "swapped by gender and race), the model answers every variant, and LangFair's counterfactual "
         "metrics (sentiment parity, cosine, ROUGE-L and BLEU similarity) compare each pair of groups "
         "against a same-group noise floor, with a verdict in words.",
)
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

