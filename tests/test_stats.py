"""Cluster bootstrap intervals."""

from __future__ import annotations

import numpy as np
import pytest
from equilens.tasks.stats import bootstrap_mean, bootstrap_stat


def test_bootstrap_mean_is_deterministic_and_covers_the_mean() -> None:
    rng = np.random.default_rng(1)
    values = rng.normal(0.5, 0.1, size=400)
    clusters = np.repeat(np.arange(100), 4)
    a = bootstrap_mean(values, clusters, resamples=500, confidence=0.95, seed=7)
    b = bootstrap_mean(values, clusters, resamples=500, confidence=0.95, seed=7)
    assert a == b
    assert a.ci_low < a.value < a.ci_high
    assert a.n == 400


def test_clustered_interval_is_wider_than_row_interval_for_correlated_rows() -> None:
    rng = np.random.default_rng(2)
    cluster_effect = np.repeat(rng.normal(0, 1, size=50), 10)  # 10 identical-ish rows per prompt
    values = cluster_effect + rng.normal(0, 0.01, size=500)
    clustered = bootstrap_mean(values, np.repeat(np.arange(50), 10), 1000, 0.95, 0)
    naive = bootstrap_mean(values, np.arange(500), 1000, 0.95, 0)
    assert (clustered.ci_high - clustered.ci_low) > 2 * (naive.ci_high - naive.ci_low)


def test_single_cluster_has_no_interval() -> None:
    est = bootstrap_mean(np.array([0.2, 0.4]), ["p", "p"], 100, 0.95, 0)
    assert est.value == pytest.approx(0.3)
    assert est.ci_low is None and est.ci_high is None


def test_bootstrap_stat_matches_mean_path_for_the_mean() -> None:
    rng = np.random.default_rng(3)
    values = rng.random(200)
    clusters = np.repeat(np.arange(40), 5)
    generic = bootstrap_stat(np.mean, [values], clusters, 2000, 0.9, 11)
    fast = bootstrap_mean(values, clusters, 2000, 0.9, 11)
    assert generic.value == pytest.approx(fast.value)
    assert generic.ci_low == pytest.approx(fast.ci_low, abs=0.01)
    assert generic.ci_high == pytest.approx(fast.ci_high, abs=0.01)


def test_holm_adjustment_by_hand() -> None:
    from equilens.tasks.stats import holm_adjust

    # sorted p: 0.01 (x3) -> 0.03, 0.02 (x2) -> 0.04, 0.04 (x1) -> max(0.04, 0.04) = 0.04
    assert holm_adjust([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    assert holm_adjust([0.5, 0.9]) == pytest.approx([1.0, 1.0])


def test_permutation_pvalue_detects_a_real_gap_and_not_noise() -> None:
    from equilens.tasks.metrics.counterfactual import wasserstein1
    from equilens.tasks.stats import permutation_test

    rng = np.random.default_rng(0)
    clusters = np.arange(60)
    x = rng.uniform(0, 0.3, 60)
    assert permutation_test(wasserstein1, x, x + 0.4, clusters, 200, 1).p_value < 0.01
    assert permutation_test(wasserstein1, x, rng.uniform(0, 0.3, 60), clusters, 200, 1).p_value > 0.05


def test_paired_gap_test_by_hand() -> None:
    from equilens.tasks.stats import paired_gap_test

    # prompts a, b, c: floor means 0.6, 0.7, 0.9 (a has two rows, 0.5 and 0.7); cross 0.5, 0.5, 0.6
    # d = 0.1, 0.2, 0.3: mean 0.2, sd 0.1, SE 0.1 / sqrt(3) = 0.057735, t = 3.4641 on 2 df
    # two-sided p = 1 - t / sqrt(t^2 + 2) = 1 - 3.4641 / 3.741657 = 0.074180
    # 95% interval: 0.2 -/+ 4.302653 x 0.057735 = -0.048414 .. 0.448414
    # detectable gap at one test: (4.302653 + t_0.8 on 2 df 1.060660) x 0.057735 = 0.309651
    got = paired_gap_test(np.array([0.5, 0.7, 0.7, 0.9]), ["a", "a", "b", "c"], np.array([0.5, 0.5, 0.6]),
                          ["a", "b", "c"], 0.95)
    assert got.prompts == 3 and got.gap == pytest.approx(0.2)
    assert got.p_value == pytest.approx(0.074180, abs=1e-6)
    assert (got.ci_low, got.ci_high) == pytest.approx((-0.048414, 0.448414), abs=1e-6)
    assert got.min_detectable_gap == pytest.approx(0.309651, abs=1e-6)
    # a prompt on one side only is left out; fewer than two paired prompts: no test
    assert paired_gap_test(np.array([0.5, 0.7]), ["a", "z"], np.array([0.4]), ["a"], 0.95) is None
