"""Probability metrics checked against small hand-worked cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from equilens.tasks.assessments.bias_test.probability_metrics import (
    aul_pair_score,
    cbs,
    crows_pairs_score,
    crows_pairs_score_ci,
    lpbs,
    stereotype_score,
)
from equilens.tasks.errors import InputDataError
from equilens.tasks.metrics.base import METRICS
from equilens.tasks.stats.agreement import wilson_interval


def test_registered_with_directions():
    for name in ("lpbs", "cbs", "crows_pairs_score", "aul_pair_score", "stereotype_score"):
        spec = METRICS.get(name)
        assert spec.family == "probability"
    assert METRICS.get("cbs").direction == "lower"
    assert METRICS.get("crows_pairs_score").target == 0.5
    assert METRICS.get("lpbs").target == 0.0


def test_lpbs_by_hand():
    # template 1: log(0.4/0.2) - log(0.1/0.2) = log 2 + log 2 = log 4
    # template 2: log(0.3/0.3) - log(0.3/0.3) = 0
    value = lpbs([0.4, 0.3], [0.2, 0.3], [0.1, 0.3], [0.2, 0.3])
    assert value == pytest.approx(math.log(4) / 2)
    assert lpbs([0.1], [0.2], [0.4], [0.2]) == pytest.approx(-math.log(4))


def test_cbs_by_hand():
    # log ratios per template: [log 2, 0, -log 2] -> var = 2 (log 2)^2 / 3 ; [0, 0, 0] -> 0
    p = [[0.4, 0.2, 0.1], [0.5, 0.5, 0.5]]
    prior = [[0.2, 0.2, 0.2], [0.5, 0.5, 0.5]]
    assert cbs(p, prior) == pytest.approx((2 * math.log(2) ** 2 / 3) / 2)
    with pytest.raises(InputDataError):
        cbs([[0.5]], [[0.5]])
    with pytest.raises(InputDataError):
        cbs([[0.5, 0.0]], [[0.5, 0.5]])


def test_cps_and_aul_pair_score():
    more = np.array([-10.0, -12.0, -8.0, -20.0, -5.0])
    less = np.array([-11.0, -11.0, -9.0, -21.0, -5.0])  # wins, loss, win, win, tie
    assert crows_pairs_score(more, less) == pytest.approx(3 / 5)
    assert aul_pair_score(more / 4, less / 4) == pytest.approx(3 / 5)
    assert stereotype_score(less, more) == pytest.approx(1 / 5)
    with pytest.raises(InputDataError):
        crows_pairs_score([1.0, 2.0], [1.0])


def test_wilson_interval_by_hand():
    # 3 of 5 at 95%: z = 1.959964; centre = (0.6 + z^2/10) / (1 + z^2/5)
    z = 1.959963984540054
    centre = (0.6 + z * z / 10) / (1 + z * z / 5)
    half = z * math.sqrt(0.24 / 5 + z * z / 100) / (1 + z * z / 5)
    lo, hi = wilson_interval(3, 5)
    assert (lo, hi) == pytest.approx((centre - half, centre + half))
    assert lo == pytest.approx(0.2307, abs=1e-4) and hi == pytest.approx(0.8824, abs=1e-4)
    share, (lo2, hi2) = crows_pairs_score_ci([-1, -2, -1, -1, -3], [-2, -1, -2, -2, -1])
    assert share == 0.6 and (lo2, hi2) == pytest.approx((lo, hi))
    assert wilson_interval(0, 10)[0] == 0.0
    with pytest.raises(InputDataError):
        wilson_interval(6, 5)


def test_lpbs_and_cbs_stage_by_hand():
    """LPBS/CBS rows of the bias-test stage from known target probabilities.

    One template, he/she, attribute x = [a] (stereotyped: he), y = [b] (stereotyped: she).
    log p: he|a -1, she|a -2, he|b -2, she|b -1.5; every prior -1.5. Increases log(p/prior):
    he|a 0.5, she|a -0.5, he|b -0.5, she|b 0.
    LPBS (stereotype-aligned): a: 0.5 - (-0.5) = 1.0; b: 0 - (-0.5) = 0.5; mean 0.75.
    CBS: var(0.5, -0.5) = 0.25, var(-0.5, 0) = 0.0625; mean 0.15625.
    """
    from equilens.tasks.assessments.bias_test.bias_specs import parse_bias_specs
    from equilens.tasks.assessments.bias_test.stages import probability_metrics
    from equilens.tasks.config import MetricsConfig

    specs = parse_bias_specs({"name": "b", "social_groups": {"m": ["he"], "f": ["she"]},
                              "attributes": {"x": ["a"], "y": ["b"]}, "templates": ["[T] likes [A]."]})
    lp = {("he", "a"): -1.0, ("she", "a"): -2.0, ("he", "b"): -2.0, ("she", "b"): -1.5}

    def target_logprobs(triples):
        assert all(t == "[T] likes [A]." for t, _, _ in triples)
        return np.array([lp[(w, a)] for _, w, a in triples]), np.full(len(triples), -1.5)

    rows = {r["metric"]: r for r in probability_metrics(specs, target_logprobs, MetricsConfig(), ["lpbs", "cbs"], "toy")}
    assert rows["lpbs"]["value"] == pytest.approx(0.75)
    assert rows["lpbs"]["details"]["per_attribute"] == pytest.approx({"x": 1.0, "y": 0.5})
    assert rows["cbs"]["value"] == pytest.approx(0.15625)
    assert rows["lpbs"]["n"] == 2 and rows["lpbs"]["group_a"] == "m" and rows["lpbs"]["attribute"] == "b"
    # only two attribute terms: the bootstrap has two clusters and gives an interval around them
    assert rows["lpbs"]["ci_low"] <= 0.75 <= rows["lpbs"]["ci_high"]
    only = probability_metrics(specs, target_logprobs, MetricsConfig(), ["cbs"], "toy")
    assert [r["metric"] for r in only] == ["cbs"]


def test_lpbs_skipped_when_no_group_term_is_one_token():
    from equilens.tasks.assessments.bias_test.bias_specs import parse_bias_specs
    from equilens.tasks.assessments.bias_test.stages import probability_metrics
    from equilens.tasks.config import MetricsConfig

    specs = parse_bias_specs({"name": "b", "social_groups": {"m": ["he"], "f": ["she"]},
                              "attributes": {"x": ["a"], "y": ["b"]}})
    rows = probability_metrics(specs, lambda t: (np.full(len(t), np.nan), np.full(len(t), np.nan)),
                               MetricsConfig(), ["lpbs", "cbs"], "toy")
    assert [r["value"] for r in rows] == [None, None]
    assert all("single token" in r["details"]["skipped"] for r in rows)
