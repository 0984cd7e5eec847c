"""How many prompts a run needs to detect a gap of a given size, read from a pilot's answers.

A verdict judges a pair's gap by a paired test over prompts at alpha / m (Holm's first step, m the
judged tests of the family). For a paired t-test with per-prompt differences of spread sigma, the
prompts needed to find a true mean gap ``gap`` with probability ``power`` are, to the normal
approximation, n = ((z_{1 - alpha/(2m)} + z_{power}) sigma / gap)^2, plus one for the t reference.
sigma comes from a pilot, so the plan states its uncertainty: the chi-square interval of sigma from
the pilot's prompts gives a range of prompt counts, not one number.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from equilens.tasks.stats.importing import IMPORTING

RESOLUTION = 0.001
"""The smallest gap a plan is made for, in the metric's own units: every metric value, gap and noise
floor is reported to three decimals (the tables, the verdict), so a smaller gap is one no run could
show; at a pilot's usual spread it would also ask for more prompts than any run has."""


def gap_problem(gap: float) -> str | None:
    """Why ``gap`` cannot be planned for (not finite, not positive, below :data:`RESOLUTION`), in
    words that follow the gap itself; None when it can."""
    if not math.isfinite(gap):
        return "the gap to detect must be a finite number, in the metric's own units."
    if not gap > 0:
        return "the gap to detect must be positive, in the metric's own units."
    if gap < RESOLUTION:
        return (f"the gap to detect is below {RESOLUTION:g}, the precision every metric is reported at, so no "
                "run could show it.")
    return None


@dataclass(frozen=True)
class PromptPlan:
    """Prompts needed to detect ``gap``: the count at the pilot's spread and its range."""

    gap: float
    prompts: int
    low: int
    high: int
    pilot_prompts: int
    spread: float  # the pilot's sd of per-prompt differences
    alpha: float  # per test, after the family's correction
    power: float


def prompts_to_detect(pilot_differences: Sequence[float], gap: float, alpha: float = 0.05, tests: int = 1,
                      power: float = 0.8, confidence: float = 0.9) -> PromptPlan:
    """Prompts a paired test over prompts needs to find a true gap ``gap`` with probability
    ``power`` at ``alpha / tests`` two-sided, from the per-prompt differences of a pilot; the range
    comes from a ``confidence`` interval of the pilot's spread."""
    with IMPORTING:
        from scipy.stats import norm

    d = np.asarray(pilot_differences, float)
    d = d[np.isfinite(d)]
    if len(d) < 3:
        raise ValueError(f"a plan needs a pilot of at least 3 prompts, got {len(d)}")
    if not (gap > 0 and math.isfinite(gap)):
        raise ValueError(f"the gap to detect must be a positive number, got {gap}")
    per_test = alpha / max(1, tests)
    z = float(norm.ppf(1 - per_test / 2) + norm.ppf(power))
    sd = float(d.std(ddof=1))
    low, high = _variance_range(len(d) - 1, confidence)

    def needed(variance_factor: float) -> int:
        return max(2, math.ceil((z * sd / gap) ** 2 * variance_factor) + 1)

    return PromptPlan(gap, needed(1.0), needed(low), needed(high), len(d), sd, per_test, power)


def _variance_range(df: int, confidence: float) -> tuple[float, float]:
    """The ``confidence`` chi-square interval of a variance estimated on ``df`` degrees of freedom,
    as factors of the estimate: the true variance lies between ``low`` and ``high`` times it."""
    with IMPORTING:
        from scipy.stats import chi2

    return df / float(chi2.ppf(0.5 + confidence / 2, df)), df / float(chi2.ppf(0.5 - confidence / 2, df))


def prompts_from_detectable_gap(detectable: float, pilot_prompts: int, gap: float,
                                confidence: float = 0.9) -> tuple[int, int, int]:
    """(prompts, low, high) needed to detect ``gap`` from a pilot's minimum detectable gap at its own size: the
    detectable gap shrinks as 1 / sqrt(prompts) at the verdict's rule and power, so
    n = pilot x (detectable / gap)^2. The range comes from a ``confidence`` chi-square interval of the
    spread behind the pilot's figure (``pilot_prompts - 1`` degrees of freedom). The Holm family and
    the power are the pilot's own: a full run of the same config judges the same pairs and metrics."""
    if pilot_prompts < 3:
        raise ValueError(f"a plan needs a pilot of at least 3 prompts, got {pilot_prompts}")
    if not (gap > 0 and detectable > 0 and math.isfinite(gap) and math.isfinite(detectable)):
        raise ValueError(f"the gap to detect and the pilot's detectable gap must be positive numbers, got {gap}, "
                         f"{detectable}")
    scale = pilot_prompts * (detectable / gap) ** 2
    low, high = _variance_range(pilot_prompts - 1, confidence)
    prompts, fewest, most = (max(2, math.ceil(scale * factor)) for factor in (1.0, low, high))
    return prompts, fewest, most
