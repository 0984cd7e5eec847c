"""The stereotype assessment, declared here (``ASSESSMENT``): its config (config), what its run asks
(hooks), its stages and Prefect tasks (stages), its metric families (metrics: word lists and
co-occurrence; classifier_metrics: toxicity and stereotype classifiers, HONEST)."""

from equilens.tasks.assessments.stereotype.config import StereotypeRunConfig
from equilens.tasks.catalog import Assessment

ASSESSMENT = Assessment(
    config=StereotypeRunConfig,
    default_config="configs/stereotype.yaml",
    order=3,
    card="Do the answers carry stereotypes or toxicity? The model's answers (or a file of your own) are "
         "scored with LangFair's stereotype metrics (co-occurrence bias, stereotypical associations, "
         "demographic representation) and toxicity metrics.",
    flow="equilens.flows.stereotype:stereotype_assessment",
    hooks="equilens.tasks.assessments.stereotype.hooks",
    metrics=("equilens.tasks.assessments.stereotype.metrics", "equilens.tasks.assessments.stereotype.classifier_metrics"),
)
