"""The BBQ assessment (Parrish et al. 2022), declared here (``ASSESSMENT``): its config (config), what
its run asks (hooks), its stages and Prefect tasks (stages), its metric family (metrics) and its report
(report)."""

from equilens.tasks.assessments.bbq.config import BBQRunConfig
from equilens.tasks.catalog import Assessment

ASSESSMENT = Assessment(
    config=BBQRunConfig,
    default_config="configs/bbq.yaml",
    order=8,
    card="Does the model fall back on stereotypes when a question cannot be answered from its context? The "
         "BBQ benchmark's multiple-choice questions give accuracy and bias scores per category, on "
         "ambiguous and disambiguated contexts.",
    flow="equilens.flows.bbq:bbq_assessment",
    hooks="equilens.tasks.assessments.bbq.hooks",
    metrics=("equilens.tasks.assessments.bbq.metrics",),
    report="equilens.tasks.assessments.bbq.report",
)
