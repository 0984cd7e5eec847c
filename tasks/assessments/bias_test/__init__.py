"""The bias tests on a language model's own likelihoods: bias specifications (bias_specs), test-sentence
generation (generation) and templates, CrowS-Pairs (crows_pairs), the stages and Prefect tasks
(stages), the Stereotype Score export (stereotype_score) and the metric families (probability_metrics,
embedding_metrics with term_bootstrap)."""
