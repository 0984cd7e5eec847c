"""Group-sequential looks at a verdict (O'Brien-Fleming spending): boundaries worked out by hand and
checked against simulated paths; a fair model judged at every look fires at most at alpha; a real
gap is still found, and a large one early."""

from __future__ import annotations

import math

import numpy as np
import pytest
from equilens.tasks.stats.sequential import obrien_fleming_plan, obrien_fleming_spent
from scipy.stats import norm
from scipy.stats import t as student_t

FIVE = [0.2, 0.4, 0.6, 0.8, 1.0]


def test_one_look_is_the_fixed_test_and_the_first_boundary_is_worked_by_hand() -> None:
    assert obrien_fleming_plan([1.0]).boundaries[0] == pytest.approx(1.959964, abs=1e-4)
    assert obrien_fleming_spent(1.0) == pytest.approx(0.05)
    # at t = 0.2 the spent alpha is 2 - 2 Phi(1.959964 / sqrt(0.2)) = 2 - 2 Phi(4.3826): the first
    # look stops only beyond |z| = 4.3826
    plan = obrien_fleming_plan(FIVE)
    assert plan.boundaries[0] == pytest.approx(1.959964 / math.sqrt(0.2), abs=2e-3)
    assert list(plan.boundaries) == sorted(plan.boundaries, reverse=True) and plan.boundaries[-1] > 1.96
    assert plan.nominal_alpha(4) == pytest.approx(2 * norm.sf(plan.boundaries[4]))
    with pytest.raises(ValueError):
        obrien_fleming_plan([0.5, 0.4, 1.0])


def test_each_look_spends_its_share_of_alpha_on_simulated_paths() -> None:
    """400,000 Brownian paths observed at the five looks: the share first crossing at each look is
    the alpha spent there (within 4 Monte Carlo standard errors), 0.05 in all."""
    plan = obrien_fleming_plan(FIVE)
    rng = np.random.default_rng(1979)
    steps = rng.normal(0, 1, (400_000, 5)) * np.sqrt(np.diff([0.0, *FIVE]))
    z = np.cumsum(steps, axis=1) / np.sqrt(FIVE)
    crossed = np.abs(z) >= np.array(plan.boundaries)
    first = np.where(crossed.any(axis=1), crossed.argmax(axis=1), -1)
    for look, share in enumerate(np.diff([0.0, *plan.spent])):
        assert abs((first == look).mean() - share) <= 4 * math.sqrt(share / 400_000) + 1e-5, look
    assert (first >= 0).mean() == pytest.approx(0.05, abs=0.0015)


def _runs(effect: float, runs: int, prompts: int, rng: np.random.Generator) -> np.ndarray:
    """Per-prompt differences of a paired comparison (``runs`` x ``prompts``), mean ``effect`` in
    units of their sd."""
    return effect + rng.normal(0.0, 1.0, (runs, prompts))


def _p_at_looks(diffs: np.ndarray, fractions: list[float]) -> np.ndarray:
    """The two-sided paired t-test's p-value over the prompts answered by each look (runs x looks),
    the test the verdict gives a similarity gap."""
    out = []
    for t in fractions:
        part = diffs[:, : round(t * diffs.shape[1])]
        stat = part.mean(axis=1) / (part.std(axis=1, ddof=1) / math.sqrt(part.shape[1]))
        out.append(2 * student_t.sf(np.abs(stat), part.shape[1] - 1))
    return np.column_stack(out)


def _fired(p: np.ndarray, plan) -> np.ndarray:
    """Whether a run is settled at some look, and at which (the last look when never)."""
    beyond = p <= np.array([plan.nominal_alpha(k) for k in range(p.shape[1])])
    return beyond.any(axis=1), np.where(beyond.any(axis=1), beyond.argmax(axis=1), p.shape[1] - 1)


def test_a_fair_model_judged_at_every_look_fires_at_most_at_alpha() -> None:
    """4,000 fair runs of 200 prompts judged after every 40: at each look's nominal alpha the design
    fires in at most 5% (+1 point of Monte Carlo error); p < 0.05 at every look fires in over 10%."""
    p = _p_at_looks(_runs(0.0, 4000, 200, np.random.default_rng(7)), FIVE)
    fired, _ = _fired(p, obrien_fleming_plan(FIVE))
    assert fired.mean() <= 0.06
    assert (p <= 0.05).any(axis=1).mean() >= 0.10


def test_a_real_gap_is_found_and_a_large_one_stops_early() -> None:
    """A gap the fixed test finds in about 80% of 200-prompt runs: the five-look design finds it in
    at least 75%; a gap three times as large is settled, on average, by 40% of the prompts."""
    rng = np.random.default_rng(11)
    plan = obrien_fleming_plan(FIVE)
    effect = (1.959964 + 0.841621) / math.sqrt(200)  # 80% power of the fixed two-sided test
    p = _p_at_looks(_runs(effect, 3000, 200, rng), FIVE)
    assert (p[:, -1] <= 0.05).mean() == pytest.approx(0.80, abs=0.03)
    assert _fired(p, plan)[0].mean() >= 0.75
    _, look = _fired(_p_at_looks(_runs(3 * effect, 3000, 200, rng), FIVE), plan)
    assert np.array(FIVE)[look].mean() <= 0.40
