"""Cluster bootstrap intervals."""

from __future__ import annotations

import numpy as np
import pytest

from tasks.stats import bootstrap_mean, bootstrap_stat


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
    from tasks.stats import holm_adjust

    # sorted p: 0.01 (x3) -> 0.03, 0.02 (x2) -> 0.04, 0.04 (x1) -> max(0.04, 0.04) = 0.04
    assert holm_adjust([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    assert holm_adjust([0.5, 0.9]) == pytest.approx([1.0, 1.0])


def test_permutation_pvalue_detects_a_real_gap_and_not_noise() -> None:
    from tasks.metrics.counterfactual import wasserstein1
    from tasks.stats import permutation_test

    rng = np.random.default_rng(0)
    clusters = np.arange(60)
    x = rng.uniform(0, 0.3, 60)
    assert permutation_test(wasserstein1, x, x + 0.4, clusters, 200, 1).p_value < 0.01
    assert permutation_test(wasserstein1, x, rng.uniform(0, 0.3, 60), clusters, 200, 1).p_value > 0.05


def test_bootstrap_pvalue_by_hand() -> None:
    from tasks.stats import bootstrap_pvalue

    # 9 resamples, median 3 > 0; one is <= 0: p = 2 * (1 + 1) / (9 + 1) = 0.4
    assert bootstrap_pvalue(np.array([-1.0, 1, 2, 3, 3, 4, 5, 6, 7])) == pytest.approx(0.4)
    # none on the far side: the floor 2 / (n + 1)
    assert bootstrap_pvalue(np.arange(1.0, 20.0)) == pytest.approx(2 / 20)
    assert np.isnan(bootstrap_pvalue(np.array([np.nan, 1.0])))
