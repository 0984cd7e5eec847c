"""The mixed-effects discrimination score (discrim-eval): golden numbers worked by hand on a balanced
design, and by simulation against a known truth, its intervals' coverage and its false-positive rate."""

from __future__ import annotations

import math

import numpy as np
import pytest

from equilens.tasks.stats.mixed_effects import CLIP, discrimination_scores, logit_p


def _logistic(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def test_a_balanced_design_gives_the_mean_within_scenario_difference_worked_by_hand() -> None:
    """Every scenario answered once per group: the scenario intercepts cancel, so a group's
    coefficient is the mean over scenarios of its logit minus the baseline's.
    Logits: s1 (0.0, 1.0), s2 (1.0, 1.5), s3 (-1.0, 0.5): differences 1.0, 0.5, 1.5, mean 1.0."""
    logits = {"s1": (0.0, 1.0), "s2": (1.0, 1.5), "s3": (-1.0, 0.5)}
    p, groups, scenarios = [], [], []
    for s, (base, other) in logits.items():
        p += [_logistic(base), _logistic(other)]
        groups += ["white", "black"]
        scenarios += [s, s]
    (effect,) = discrimination_scores(p, groups, scenarios, baseline="white")
    assert effect.group == "black" and effect.coefficient == pytest.approx(1.0, abs=1e-6)
    assert effect.ci_low < 1.0 < effect.ci_high and effect.scenarios == 3 and effect.answers == 3
    assert effect.odds_ratio == pytest.approx(math.e, rel=1e-5)


def test_certain_answers_are_clipped_before_the_logit() -> None:
    assert logit_p([0.0, 1.0, 0.5]).tolist() == pytest.approx([math.log(CLIP / (1 - CLIP)),
                                                                math.log((1 - CLIP) / CLIP), 0.0])


def test_missing_data_is_a_reason_never_a_number() -> None:
    no_base = discrimination_scores([0.5, 0.6], ["black", "asian"], ["s1", "s2"], baseline="white")
    assert all(e.coefficient is None and "baseline" in e.skipped for e in no_base)
    one = discrimination_scores([0.5, 0.6], ["white", "black"], ["s1", "s1"], baseline="white")
    assert one[0].coefficient is None and "two scenarios" in one[0].skipped
    apart = discrimination_scores([0.5, 0.6, 0.4, 0.7], ["white", "white", "black", "black"],
                                  ["s1", "s2", "s3", "s4"], baseline="white")
    assert apart[0].coefficient is None and "no scenario" in apart[0].skipped


def _simulated(rng: np.random.Generator, scenarios: int, effects: dict[str, float]) -> tuple[list, list, list]:
    """discrim-eval's shape: one answer per (scenario, group); a scenario intercept (sd 1.5 on the
    logit scale, as decisions differ far more between scenarios than between people) and per-answer
    noise (sd 0.6) from the rest of the filled template."""
    p, g, s = [], [], []
    for k in range(scenarios):
        intercept = rng.normal(0.3, 1.5)
        for group, effect in effects.items():
            p.append(_logistic(intercept + effect + rng.normal(0, 0.6)))
            g.append(group)
            s.append(k)
    return p, g, s


def test_intervals_cover_the_true_effect_and_a_fair_group_is_rarely_called_different() -> None:
    """300 simulated decision sets of 30 scenarios: the 95% interval of a true effect of 0.4 logits
    covers it in 92.5-97.5% of sets, and a group with no effect has p < 0.05 in at most 7.5% (the
    bands are about 2.5 Monte Carlo standard errors wide)."""
    rng = np.random.default_rng(20231206)
    truth = {"white": 0.0, "black": 0.4, "asian": 0.0}
    covered = fired = 0
    runs = 300
    for _ in range(runs):
        effects = {e.group: e for e in discrimination_scores(*_simulated(rng, 30, truth), baseline="white")}
        covered += effects["black"].ci_low <= truth["black"] <= effects["black"].ci_high
        fired += effects["asian"].p_value < 0.05
    assert 0.925 <= covered / runs <= 0.975, covered / runs
    assert fired / runs <= 0.075, fired / runs


def test_a_true_effect_is_found_with_the_sign_of_more_or_less_often_yes() -> None:
    rng = np.random.default_rng(7)
    effects = {e.group: e for e in discrimination_scores(
        *_simulated(rng, 60, {"male": 0.0, "female": 0.5, "non-binary": -0.5}), baseline="male")}
    assert effects["female"].coefficient > 0 and effects["female"].p_value < 0.05  # more often yes
    assert effects["non-binary"].coefficient < 0 and effects["non-binary"].p_value < 0.05  # less often
