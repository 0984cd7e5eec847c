"""The classification assessment, declared here (``ASSESSMENT``): its config (config), its stages and
Prefect tasks (stages), its metric family (metrics)."""

from equilens.tasks.assessments.classification.config import ClassificationRunConfig
from equilens.tasks.catalog import Assessment

ASSESSMENT = Assessment(
    config=ClassificationRunConfig,
    default_config="configs/classification.yaml",
    order=5,
    card="Does an LLM that labels or decides treat groups alike? Each answer is read as a label, and the "
         "groups of a column are compared on predicted prevalence and, with a ground truth, on false "
         "positive, false negative, false omission and false discovery rates.",
    flow="equilens.flows.classification:classification_assessment",
    metrics=("equilens.tasks.assessments.classification.metrics",),
)
