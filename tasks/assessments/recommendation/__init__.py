"""The recommendation assessment, declared here (``ASSESSMENT``): its config (config), its stages and
Prefect tasks (stages), its metric family (metrics)."""

from equilens.tasks.assessments.recommendation.config import RecommendationRunConfig
from equilens.tasks.catalog import Assessment

ASSESSMENT = Assessment(
    config=RecommendationRunConfig,
    default_config="configs/recommendation.yaml",
    order=7,
    card="Do an LLM's recommendations change with the user's group? After FaiRLLM, each group's top-K list "
         "is compared with the list the neutral request gets (Jaccard, SERP* and PRAG* similarity).",
    flow="equilens.flows.recommendation:recommendation_assessment",
    metrics=("equilens.tasks.assessments.recommendation.metrics",),
)
