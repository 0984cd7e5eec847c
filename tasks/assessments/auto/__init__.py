"""The AutoEval assessment, declared here (``ASSESSMENT``): its config (config), which reads the
identity and stereotype sections, and what its run asks the LLM (hooks)."""

from equilens.tasks.assessments.auto.config import AutoRunConfig
from equilens.tasks.catalog import Assessment

ASSESSMENT = Assessment(
    config=AutoRunConfig,
    default_config="configs/auto.yaml",
    order=9,
    card="Every family on the same prompts in one run, as LangFair's AutoEval: the FTU check, "
         "counterfactual fairness, stereotypes and toxicity, and, when asked, an identity for the prompts "
         "that name no group.",
    flow="equilens.flows.auto:auto_assessment",
    hooks="equilens.tasks.assessments.auto.hooks",
)
