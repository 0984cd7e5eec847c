"""BiasTestGPT-style bias tests of a language model's likelihoods.

spec -> generation (prompts, cleaning, reviewable CSV) -> templates (stereotype / anti-stereotype
pairs) -> stereotype_score (Stereotype Score, bootstrap, JSON export); crows_pairs adds the
CrowS-Pairs benchmark. Modules import no model libraries at import time.
"""
