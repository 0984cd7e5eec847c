"""Calibration of the bias-test intervals and p-values, by simulation against a known truth.

* Stereotype Score: pairs whose stereotyped side wins with a known probability; the stored 95%
  interval must cover that probability 92-98% of the time.
* WEAT/SEAT: embeddings built so that every term's association s(w) is a chosen number. With the
  attribute sets (1, 0) and (0, 1), a unit vector at angle theta has s = cos(theta) - sin(theta),
  so theta = arccos(s / sqrt 2) - pi / 4 places any s in (-sqrt 2, sqrt 2). Term associations are
  drawn as N(+delta/2, st^2) for group 1 and N(-delta/2, st^2) for group 2; a SEAT sentence adds
  N(0, se^2) template noise to its term's value. Caliskan's d divides by the standard deviation
  over both groups, whose population value is sqrt(st^2 + se^2 + delta^2 / 4) (within-group
  variance plus the variance of the two group means +-delta/2 around 0), so the true effect is
  d = delta / sqrt(st^2 + se^2 + delta^2 / 4).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from equilens.tasks.assessments.bias_test.bias_specs import parse_bias_specs
from equilens.tasks.assessments.bias_test.config import BiasTestConfig
from equilens.tasks.assessments.bias_test.embedding_metrics import SEAT_TEMPLATES
from equilens.tasks.assessments.bias_test.generation import GeneratedSentence
from equilens.tasks.assessments.bias_test.stages import stereotype_scores, weat_metrics
from equilens.tasks.assessments.bias_test.term_bootstrap import term_bootstrap
from equilens.tasks.config import MetricsConfig

ATTR_1, ATTR_2 = np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]])


def _unit(s: np.ndarray) -> np.ndarray:
    """Unit vectors whose association with (1, 0) vs (0, 1) is exactly ``s``."""
    theta = np.arccos(np.clip(s, -1.41, 1.41) / math.sqrt(2)) - math.pi / 4
    return np.stack([np.cos(theta), np.sin(theta)], axis=1)


def _true_d(delta: float, st: float, se: float) -> float:
    return delta / math.sqrt(st**2 + se**2 + delta**2 / 4)


# ---------------------------------------------------------------------------------------------
# Stereotype Score


def _spec_and_rows(n_terms: int) -> tuple[list, list[GeneratedSentence]]:
    spec = parse_bias_specs({"name": "b", "social_groups": {"m": ["he"], "f": ["she"]},
                             "attributes": {"x": [f"x{i}" for i in range(n_terms)],
                                            "y": [f"y{i}" for i in range(n_terms)]}})
    rows = []
    for attr, terms in (("x", [f"x{i}" for i in range(n_terms)]), ("y", [f"y{i}" for i in range(n_terms)])):
        for t in terms:
            for k in range(3):  # three sentences per attribute term, each its own template
                rows.append(GeneratedSentence("b", "m", "he", attr, t, k, "", "", f"he said {t} {k}.", False, ""))
    return spec, rows


@pytest.mark.parametrize("p_true", [0.5, 0.7])
def test_stereotype_score_interval_covers_the_true_preference(p_true: float) -> None:
    specs, rows = _spec_and_rows(10)  # 60 pairs per simulated run
    cfg, mcfg = BiasTestConfig(subsample_rounds=0), MetricsConfig()
    rng = np.random.default_rng(2024)
    sims, covered = 1000, 0
    for _ in range(sims):
        wins: dict[str, float] = {}

        def logprob(sentences: list[str]) -> np.ndarray:
            # each pair's stereotyped sentence ("he ... x" or "she ... y") wins with p_true
            out = []
            for s in sentences:
                key = s.split(" ", 1)[1]
                if key not in wins:
                    wins[key] = float(rng.random() < p_true)
                stereotyped = s.startswith("He") == (" x" in s)
                out.append(wins[key] if stereotyped else 0.5)
            return np.array(out)

        _, _, (row,), _, _ = stereotype_scores(rows, specs, logprob, cfg, mcfg, "simulated")
        covered += row["ci_low"] <= p_true <= row["ci_high"]
    assert 0.92 <= covered / sims <= 0.98, covered / sims


# ---------------------------------------------------------------------------------------------
# WEAT / SEAT intervals


def _seat_sets(rng: np.random.Generator, n: int, k: int, delta: float, st: float, se: float):
    t1, t2 = rng.normal(delta / 2, st, n), rng.normal(-delta / 2, st, n)
    s1 = (t1[:, None] + rng.normal(0, se, (n, k))).ravel()
    s2 = (t2[:, None] + rng.normal(0, se, (n, k))).ravel()
    return _unit(s1), _unit(s2), np.repeat(ATTR_1, k, 0), np.repeat(ATTR_2, k, 0)


@pytest.mark.parametrize(("n_terms", "delta"), [(8, 0.0), (8, 0.1), (16, 0.1)])
def test_weat_term_bootstrap_covers_the_true_effect(n_terms: int, delta: float) -> None:
    st = 0.1
    truth = _true_d(delta, st, 0.0)
    rng, sims, covered = np.random.default_rng(7), 400, 0
    for i in range(sims):
        sets = _seat_sets(rng, n_terms, 1, delta, st, 0.0)
        b = term_bootstrap(*sets, resamples=1000, seed=i)
        covered += b.ci_low <= truth <= b.ci_high
    assert 0.90 <= covered / sims <= 0.98, covered / sims


def test_seat_interval_resamples_terms_not_sentences() -> None:
    """With term-level variation (st) larger than template noise (se), resampling the 6 sentences
    of a term as if independent gives an interval ~2.3x too narrow that covers d ~60% of the time;
    resampling terms covers it at about the nominal level."""
    delta, st, se, k = 0.1, 0.1, 0.05, len(SEAT_TEMPLATES)
    truth = _true_d(delta, st, se)
    rng, sims = np.random.default_rng(11), 200
    by_term = by_sentence = 0
    widths = []
    for i in range(sims):
        sets = _seat_sets(rng, 8, k, delta, st, se)
        terms = term_bootstrap(*sets, rows_per_term=k, resamples=1000, seed=i)
        sentences = term_bootstrap(*sets, rows_per_term=1, resamples=1000, seed=i, method="percentile")
        by_term += terms.ci_low <= truth <= terms.ci_high
        by_sentence += sentences.ci_low <= truth <= sentences.ci_high
        widths.append((terms.ci_high - terms.ci_low) / (sentences.ci_high - sentences.ci_low))
    assert 0.90 <= by_term / sims <= 0.98, by_term / sims
    assert by_sentence / sims < 0.75
    assert np.median(widths) > 1.8


class _FakeEmbedder:
    """Sentence -> 2-d vector: a term's drawn association plus per-sentence template noise."""

    def __init__(self, values: dict[str, float], noise: dict[str, float]) -> None:
        self.values, self.noise = values, noise

    def __call__(self, texts: list[str]) -> np.ndarray:
        s = []
        for t in texts:
            word = next(w for w in self.values if w in t.lower().rstrip(".").split())
            s.append(self.values[word] + self.noise.get(t, 0.0))
        return _unit(np.array(s))


def _fake_spec(rng: np.random.Generator, n: int, delta: float, st: float, se: float):
    g1, g2 = [f"ga{i}" for i in range(n)], [f"gb{i}" for i in range(n)]
    a1, a2 = [f"aa{i}" for i in range(4)], [f"ab{i}" for i in range(4)]
    values = {**dict(zip(g1, rng.normal(delta / 2, st, n), strict=True)),
              **dict(zip(g2, rng.normal(-delta / 2, st, n), strict=True))}
    # attribute terms sit exactly on the attribute axes: s((1,0)) = 1, s((0,1)) = -1
    values |= {a: 1.0 for a in a1} | {a: -1.0 for a in a2}
    from equilens.tasks.assessments.bias_test.embedding_metrics import fill_templates

    noise = {t: float(rng.normal(0, se)) for t in fill_templates(g1 + g2)}
    spec = parse_bias_specs({"name": "sim", "social_groups": {"one": g1, "two": g2},
                             "attributes": {"pos": a1, "neg": a2}})
    return spec, _FakeEmbedder(values, noise)


def test_seat_stage_interval_covers_the_true_effect_and_is_labelled_by_terms() -> None:
    from equilens.tasks.metrics import METRICS

    delta, st, se = 0.1, 0.1, 0.05
    truth = _true_d(delta, st, se)
    rng, sims, covered = np.random.default_rng(5), 150, 0
    mcfg = MetricsConfig(bootstrap_resamples=500, seed=1)
    for _ in range(sims):
        spec, embed = _fake_spec(rng, 8, delta, st, se)
        (row,) = weat_metrics(spec, "fake", mcfg, ["seat_effect_size"], embed=embed)
        covered += row["ci_low"] <= truth <= row["ci_high"]
    # the old stage resampled the 48 template sentences per group and covered ~55%
    assert covered / sims >= 0.86, covered / sims
    assert row["details"]["rows_per_term"] == len(SEAT_TEMPLATES)
    assert "over terms" in METRICS.get("seat_effect_size").interval


def test_bootstrap_uses_the_configured_number_of_resamples() -> None:
    spec, embed = _fake_spec(np.random.default_rng(0), 8, 0.1, 0.1, 0.05)
    rows = weat_metrics(spec, "fake", MetricsConfig(bootstrap_resamples=2000), None, embed=embed)
    assert {r["metric"] for r in rows} == {"weat_effect_size", "seat_effect_size"}
    assert all(r["details"]["bootstrap_resamples"] == 2000 for r in rows)  # was silently capped at 500


# ---------------------------------------------------------------------------------------------
# two-sided p-values


def test_two_sided_p_flags_a_reversed_bias() -> None:
    """A reversed bias of d ~ -0.8 (group 2 closer to attribute 1) is flagged by the two-sided
    p-value; the old one-sided "greater" p-value read it as no bias (p ~ 0.9)."""
    rng = np.random.default_rng(3)
    delta, st = -0.08, 0.1  # true d = -0.08 / sqrt(0.01 + 0.0016) = -0.74
    flagged, one_sided_high, sims = 0, 0, 60
    ds = []
    for _ in range(sims):
        spec, embed = _fake_spec(rng, 16, delta, st, 0.0)
        (row,) = weat_metrics(spec, "fake", MetricsConfig(bootstrap_resamples=0), ["weat_effect_size"], embed=embed)
        ds.append(row["value"])
        flagged += row["details"]["p_value"] < 0.05
        one_sided_high += row["details"]["p_value_greater"] > 0.5
    assert np.mean(ds) < -0.6
    assert flagged / sims > 0.5  # power of a 16-vs-16 test at d = -0.74
    assert one_sided_high / sims >= 0.9  # the one-sided test almost never sees a reversed bias


def test_two_sided_p_rejects_about_five_percent_of_null_datasets() -> None:
    rng = np.random.default_rng(9)
    rejected, sims = 0, 300
    for i in range(sims):
        spec, embed = _fake_spec(rng, 8, 0.0, 0.1, 0.0)
        (row,) = weat_metrics(spec, "fake", MetricsConfig(bootstrap_resamples=0, seed=i), ["weat_effect_size"],
                              embed=embed)
        rejected += row["details"]["p_value"] < 0.05
    assert 0.02 <= rejected / sims <= 0.09, rejected / sims
