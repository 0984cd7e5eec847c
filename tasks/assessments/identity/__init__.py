"""The identity assessment (first-person fairness), declared here (``ASSESSMENT``): its config (config),
what it asks and how a run that stops early answers in looks (hooks), variants with names, outcomes read
from the answers and metrics per comparison (stages, gaps, by_turn), its outcome metrics (metrics: each
declares the outcome kind it reads, so the power plan and early stopping find the gaps through the metric
registry), the judge model and its check (judge), its report (report) and tables (tables)."""

from equilens.tasks.assessments.identity.config import IdentityRunConfig
from equilens.tasks.catalog import Assessment

ASSESSMENT = Assessment(
    config=IdentityRunConfig,
    default_config="configs/identity.yaml",
    order=2,
    card="Does the model treat users differently by the identity their name or profile signals, when the "
         "prompt names no group? Each prompt is asked as users of different groups (first-person "
         "fairness), and the answers are compared by outcome (numbers, yes rates, first choices), by the "
         "counterfactual metrics and by a judge model.",
    flow="equilens.flows.identity:identity_assessment",
    hooks="equilens.tasks.assessments.identity.hooks",
    metrics=("equilens.tasks.assessments.identity.metrics",),
    report="equilens.tasks.assessments.identity.report",
    tables="equilens.tasks.assessments.identity.tables",
)
