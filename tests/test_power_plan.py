"""The prompts a verdict needs, planned from a pilot: a count worked out by hand, and by simulation
runs of the planned size find the gap in 70-90% of cases (80% asked)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import t as student_t

from equilens.tasks.stats.power_plan import prompts_to_detect


def test_the_count_is_worked_out_by_hand() -> None:
    # differences with sd exactly 1 (-1, 0, 1 repeated); alpha 0.05 over 2 tests: z 2.2414 + 0.8416
    # = 3.0830; gap 0.5: (3.0830 / 0.5)^2 = 38.02 -> 39, plus one for the t reference: 40
    pilot = [-1.0, 0.0, 1.0] * 10
    sd = np.std(pilot, ddof=1)
    plan = prompts_to_detect(np.asarray(pilot) / sd, gap=0.5, alpha=0.05, tests=2)
    assert plan.prompts == 40 and plan.alpha == 0.025 and plan.spread == pytest.approx(1.0)
    assert plan.low < plan.prompts < plan.high
    with pytest.raises(ValueError):
        prompts_to_detect([0.1, 0.2], gap=0.5)


def test_runs_of_the_planned_size_find_the_gap_in_70_to_90_percent() -> None:
    """Pilots of 20 prompts from a model whose per-prompt differences have sd 0.3 and a true gap of
    0.1; each plan's run (its planned count of fresh prompts) is judged by the paired t-test at
    alpha / 3. Over 1,000 plans the gap is found in 70-90% of runs, and the stated range holds the
    count the true spread needs in about 90% of plans."""
    rng = np.random.default_rng(2024)
    gap, sd, tests = 0.1, 0.3, 3
    truth = prompts_to_detect(np.r_[-sd, sd].repeat(5000), gap, tests=tests)  # the spread known: sd 0.3
    found = held = 0
    for _ in range(1000):
        plan = prompts_to_detect(rng.normal(gap, sd, 20), gap, tests=tests)
        run = rng.normal(gap, sd, plan.prompts)
        t = run.mean() / (run.std(ddof=1) / math.sqrt(len(run)))
        found += 2 * student_t.sf(abs(t), len(run) - 1) <= 0.05 / tests
        held += plan.low <= truth.prompts <= plan.high
    assert 0.70 <= found / 1000 <= 0.90, found / 1000
    assert 0.85 <= held / 1000 <= 0.95, held / 1000
