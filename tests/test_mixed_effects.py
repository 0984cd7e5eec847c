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


def _dense_reml(y: np.ndarray, x: np.ndarray, scenarios: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The REML fit by brute force, independent of the fit's per-scenario sums: the whole covariance
    matrix I + lam ZZ' of the answers, its restricted likelihood on a fine grid of lam (and lam = 0),
    the GLS coefficients and standard errors at the best."""
    same = (scenarios[:, None] == scenarios[None, :]).astype(float)
    n, p = x.shape

    def fit(lam: float) -> tuple[float, np.ndarray, np.ndarray]:
        h = np.eye(n) + lam * same
        hi = np.linalg.inv(h)
        a = x.T @ hi @ x
        beta = np.linalg.solve(a, x.T @ hi @ y)
        r = y - x @ beta
        sigma2 = float(r @ hi @ r) / (n - p)
        deviance = (n - p) * math.log(sigma2) + np.linalg.slogdet(h)[1] + np.linalg.slogdet(a)[1]
        return deviance, beta, np.sqrt(np.diag(np.linalg.inv(a)) * sigma2)

    grid = [0.0, *np.exp(np.linspace(-8, 4, 2401))]
    best = min(grid, key=lambda lam: fit(lam)[0])
    return fit(best)[1:]


@pytest.mark.parametrize("seed", [187, 263, 3])
def test_the_fit_is_the_restricted_likelihoods_best_on_unbalanced_sets(seed: int) -> None:
    """Small unbalanced sets (one to three answers per scenario and group, 3-12 scenarios), where
    statsmodels' MixedLM stopped at a scenario variance of 0 with the intercept pinned at 0 and the
    group coefficients and standard errors off (by up to 0.4 over 300 such sets): the fit equals a
    brute-force REML over the whole covariance matrix (coefficients to 1e-3, the grid's resolution)."""
    rng = np.random.default_rng(seed)
    scenario, group, y = [], [], []
    for k in range(int(rng.integers(3, 13))):
        intercept = rng.normal(0, 0.3)
        for g, effect in (("w", 0.0), ("b", 0.4), ("a", 0.0)):
            for _ in range(int(rng.integers(1, 4))):
                scenario.append(str(k)), group.append(g), y.append(intercept + effect + rng.normal(0, 1))
    s, g, y = np.array(scenario), np.array(group), np.array(y)
    x = np.column_stack([np.ones(len(y)), g == "a", g == "b"]).astype(float)  # the fit's order: sorted groups
    beta, errors = _dense_reml(y, x, s)
    effects = discrimination_scores([_logistic(v) for v in y], g, s, baseline="w")
    assert [e.group for e in effects] == ["a", "b"]
    assert [e.coefficient for e in effects] == pytest.approx(beta[1:], abs=1e-3)
    z = 1.959963984540054
    assert [(e.ci_high - e.ci_low) / (2 * z) for e in effects] == pytest.approx(errors[1:], rel=1e-3)


def test_agrees_with_statsmodels_where_its_optimiser_settles_inside() -> None:
    """A set of discrim-eval's shape, with the scenario variance well inside its range: statsmodels'
    REML fit, an independent implementation, gives the same coefficients and standard errors."""
    import warnings

    from equilens.tasks.stats.mixed_effects import _fit
    from statsmodels.regression.mixed_linear_model import MixedLM

    p, g, s = _simulated(np.random.default_rng(11), 25, {"white": 0.0, "black": 0.4, "asian": -0.2})
    y, g, s = logit_p(p), np.array(g), np.array([str(k) for k in s])
    x = np.column_stack([np.ones(len(y)), g == "black", g == "asian"]).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = MixedLM(y, x, groups=s).fit(reml=True, method="lbfgs")
    ours = _fit(y, x, s)
    assert theirs.converged and ours.variance_ratio > 0.1
    assert ours.coefficients == pytest.approx(np.asarray(theirs.fe_params), abs=1e-5)
    assert ours.standard_errors == pytest.approx(np.asarray(theirs.bse_fe), rel=1e-4)
    assert ours.variance_ratio == pytest.approx(float(np.asarray(theirs.cov_re)[0, 0] / theirs.scale), rel=1e-3)
