"""Calibration by simulation against a known truth: interval coverage and test error rates.

Each test draws many datasets from a model whose true value is known, runs the same estimator the
stages use, and checks how often the 95% interval covers the truth (92-98%) or how often the test
rejects a true null at alpha = 0.05 (3-8%). Seeded, so the figures are stable from run to run.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from equilens.tasks.stats import bootstrap_mean, permutation_test

SIMS = 400


def _coverage(hits: list[bool]) -> float:
    return float(np.mean(hits))


def test_cluster_bootstrap_covers_a_counterfactual_pair_metric() -> None:
    # cosine similarity of response pairs: a prompt effect (answers to one prompt resemble each other)
    # plus noise per sample; truth = the population mean 0.8. 60 prompts x 3 samples.
    hits = []
    for sim in range(SIMS):
        rng = np.random.default_rng(sim)
        prompt_effect = np.repeat(rng.normal(0, 0.05, 60), 3)
        values = 0.8 + prompt_effect + rng.normal(0, 0.05, 180)
        est = bootstrap_mean(values, np.repeat(np.arange(60), 3), 500, 0.95, sim)
        hits.append(est.ci_low <= 0.8 <= est.ci_high)
    assert 0.92 <= _coverage(hits) <= 0.98


def test_expected_maximum_toxicity_interval_covers_the_truth() -> None:
    from equilens.tasks.assessments.stereotype.config import StereotypeConfig
    from equilens.tasks.assessments.stereotype.stages import classifier_estimates
    from equilens.tasks.metrics import METRICS

    # toxicity of answer j to prompt i: logistic(a_i + e_ij), a_i ~ N(-2, 1), e_ij ~ N(0, 1);
    # the truth E[max_j of 5] comes from a million simulated prompts.
    rng = np.random.default_rng(0)
    big = 1 / (1 + np.exp(-(rng.normal(-2, 1, (1_000_000, 1)) + rng.normal(0, 1, (1_000_000, 5)))))
    truth = float(big.max(axis=1).mean())
    hits = []
    boot = {"resamples": 500, "confidence": 0.95, "seed": 1}
    for sim in range(SIMS):
        rng = np.random.default_rng(1000 + sim)
        s = 1 / (1 + np.exp(-(rng.normal(-2, 1, (80, 1)) + rng.normal(0, 1, (80, 5))))).ravel()
        emt = classifier_estimates([METRICS.get("expected_maximum_toxicity")], s,
                                   np.repeat(np.arange(80), 5).astype(str), StereotypeConfig(), boot)
        emt = emt["expected_maximum_toxicity"]
        hits.append(emt.ci_low <= truth <= emt.ci_high)
    assert 0.92 <= _coverage(hits) <= 0.98


def test_toxicity_interval_has_the_width_of_a_correct_cluster_bootstrap() -> None:
    # 200 prompts x 5 answers; merging duplicated draws made the expected-maximum
    # interval 0.041 wide against 0.054 for the normal approximation 2 * 1.96 * sd / sqrt(n).
    from equilens.tasks.assessments.stereotype.config import StereotypeConfig
    from equilens.tasks.assessments.stereotype.stages import ClassifierScores, stereotype_metrics
    from equilens.tasks.config import MetricsConfig
    from equilens.tasks.inputs.prompts import text_hash

    rng = np.random.default_rng(7)
    s = rng.beta(1, 6, (200, 5))
    texts = [f"prompt {p} answer {j}" for p in range(200) for j in range(5)]
    responses = pd.DataFrame({"prompt_id": [f"p{p}" for p in range(200) for _ in range(5)], "text": texts,
                              "ok": True, "sample_idx": [j for _ in range(200) for j in range(5)]})
    scores = ClassifierScores(pd.DataFrame({"text_hash": [text_hash(t) for t in texts], "scorer": "tox",
                                            "value": s.ravel()}), {"tox": (0.0, 1.0)}, "tox", None)
    metrics, _, _ = stereotype_metrics(responses, scores, StereotypeConfig(),
                                       MetricsConfig(bootstrap_resamples=2000, names=["expected_maximum_toxicity"]))
    emt = metrics.set_index("metric").loc["expected_maximum_toxicity"]
    normal_width = 2 * 1.96 * s.max(axis=1).std(ddof=1) / np.sqrt(200)
    assert emt["value"] == pytest.approx(s.max(axis=1).mean())
    assert (emt["ci_high"] - emt["ci_low"]) / normal_width == pytest.approx(1.0, abs=0.1)


def test_permutation_test_rejects_five_percent_of_null_datasets() -> None:
    from equilens.tasks.metrics.counterfactual import wasserstein1

    rejections = []
    for sim in range(SIMS):
        rng = np.random.default_rng(5000 + sim)
        prompt_effect = np.repeat(rng.beta(2, 6, 30), 2)  # identical groups, correlated within prompt
        x = np.clip(prompt_effect + rng.normal(0, 0.05, 60), 0, 1)
        y = np.clip(prompt_effect + rng.normal(0, 0.05, 60), 0, 1)
        test = permutation_test(wasserstein1, x, y, np.repeat(np.arange(30), 2), 199, sim)
        rejections.append(test.p_value <= 0.05)
    assert 0.03 <= np.mean(rejections) <= 0.08


def test_honest_runs_in_the_stereotype_stage_with_a_lexicon(tmp_path) -> None:
    # a prompt drawn twice by the bootstrap arrived as one prompt with 2k
    # completions and honest() raised "prompts have different numbers of completions".
    from equilens.tasks.assessments.stereotype.config import StereotypeConfig
    from equilens.tasks.assessments.stereotype.stages import ClassifierScores, stereotype_metrics
    from equilens.tasks.config import MetricsConfig
    from equilens.tasks.inputs.prompts import text_hash

    lexicon = tmp_path / "hurtful.txt"
    lexicon.write_text("idiot\nfool\n")
    texts = [f"prompt {p} answer {j}" + (" you fool" if (p + j) % 4 == 0 else "") for p in range(12) for j in range(3)]
    responses = pd.DataFrame({"prompt_id": [f"p{p}" for p in range(12) for _ in range(3)], "text": texts, "ok": True,
                              "sample_idx": [j for _ in range(12) for j in range(3)]})
    scores = ClassifierScores(pd.DataFrame({"text_hash": [text_hash(t) for t in texts], "scorer": "tox",
                                            "value": 0.1}), {"tox": (0.0, 1.0)}, "tox", None)
    metrics, _, skipped = stereotype_metrics(responses, scores, StereotypeConfig(honest_lexicon=str(lexicon)),
                                             MetricsConfig(bootstrap_resamples=200))
    row = metrics.set_index("metric").loc["honest"]
    # (p + j) % 4 == 0 with j in 0..2: j=0 for p=0,4,8; j=1 for p=3,7,11; j=2 for p=2,6,10 -> 9 of 36
    expected = 9 / 36
    assert row["value"] == pytest.approx(expected) and row["ci_low"] < expected < row["ci_high"]
    assert "honest" not in skipped
