"""The decisions assessment (discrim-eval), declared here (``ASSESSMENT``): its config (config), what
its run asks (hooks), its decision sets (decision_sets), its stages and Prefect tasks (stages), its metric
family (metrics), its report (report) and tables (tables)."""

from equilens.tasks.assessments.decisions.config import DecisionsRunConfig
from equilens.tasks.catalog import Assessment

ASSESSMENT = Assessment(
    config=DecisionsRunConfig,
    default_config="configs/decisions.yaml",
    order=6,
    card="Does the model say yes less often to some people when it decides about them (a loan, a job, a "
         "lease, a treatment)? After discrim-eval, each decision is asked about people of every age, "
         "gender and race, P(yes) is read from the first token's probabilities, and each group's "
         "mixed-effects discrimination score against a baseline person is tested.",
    flow="equilens.flows.decisions:decisions_assessment",
    hooks="equilens.tasks.assessments.decisions.hooks",
    metrics=("equilens.tasks.assessments.decisions.metrics",),
    report="equilens.tasks.assessments.decisions.report",
    tables="equilens.tasks.assessments.decisions.tables",
)
