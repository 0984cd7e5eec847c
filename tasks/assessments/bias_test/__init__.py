"""The bias tests on a language model's own likelihoods, declared here (``ASSESSMENT``): its config
(config), bias specifications (bias_specs), test-sentence generation (generation) and templates,
CrowS-Pairs (crows_pairs), the stages and Prefect tasks (stages), the Stereotype Score export
(stereotype_score), its tables (tables) and the metric families (probability_metrics, embedding_metrics
with term_bootstrap)."""

from equilens.tasks.assessments.bias_test.config import BiasTestRunConfig
from equilens.tasks.catalog import Assessment

ASSESSMENT = Assessment(
    config=BiasTestRunConfig,
    default_config="configs/bias_test.yaml",
    order=4,
    card="Does a language model itself prefer stereotyped sentences? After BiasTestGPT, an LLM writes test "
         "sentences for a bias specification, you may review them, and the model under test scores "
         "stereotype against anti-stereotype versions by their likelihoods.",
    flow="equilens.flows.bias_tests:bias_test",
    metrics=("equilens.tasks.assessments.bias_test.probability_metrics",
             "equilens.tasks.assessments.bias_test.embedding_metrics"),
    tables="equilens.tasks.assessments.bias_test.tables",
)
