"""Looking at a verdict more than once: a group-sequential rule that spends alpha over the looks.

A run that re-judges its verdict after every batch of prompts and stops at the first finding would,
at a fixed alpha per look, call a fair model biased far more often than alpha (five looks at
|z| > 1.96 fire in about 14% of fair runs). Lan and DeMets (1983) spend the overall alpha over the
information fractions t (the share of the planned prompts answered at a look) with a spending
function; O'Brien and Fleming's (1979) shape, alpha(t) = 2 - 2 Phi(z_{1 - alpha/2} / sqrt(t)), spends
almost nothing early, so a run stopped early needs overwhelming evidence and the last look keeps
nearly the whole alpha.

The boundary of each look is the |z| whose first crossing, under no effect, has exactly the alpha
spent between that look and the one before. It is found by numerical integration of the
statistic's path (a Brownian motion in information time, Armitage, McPherson and Rowe 1969): the
density of the paths still inside the boundaries is carried from look to look on a grid (the first
look's boundary is z_{1 - alpha/2} / sqrt(t) exactly; ``tests/test_sequential.py`` checks every
look against simulated paths, and a fair model judged at five looks against its false-positive
rate). Five equally spaced looks at alpha 0.05 get 4.383, 3.100, 2.554, 2.255 and 2.065.

Several hypotheses judged at every look (a verdict's Holm family) use the sequentially rejective
Holm procedure of Maurer and Bretz (2013): at each look the p-values are taken in increasing order,
and the i-th of m is compared with the nominal level of that look under a plan spending alpha /
(m - i) (:func:`holm_levels`). A true hypothesis is rejected only when it crosses the boundary of a
plan at alpha / (number of true hypotheses) or a looser one, so the family's error over all looks
stays at alpha. Dividing one plan's nominal levels by m instead is not enough: over five looks a
true hypothesis of a family of 30 would cross in 0.19% of simulated runs, above its 0.05 / 30 =
0.17% share, so the family's bound would be 5.6%, not 5%.

Settling a hypothesis as out of reach (futility: its statistic is too far below what the gap a
run is meant to detect would give) spends the chance of wrongly doing so in the same way: the
boundaries of a plan at two-sided 2 x beta (``equilens.tasks.pipeline.settling``). Such a stop only
ever gives up a finding, so it never raises the false-positive rate (a non-binding rule).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from equilens.tasks.stats.importing import IMPORTING

GRID = 2001  # points of the density grid of the path, an odd number (0 is a point)
HALF_WIDTH = 8.0  # the grid spans +-8 (the path has variance t <= 1)


def obrien_fleming_spent(t: float, alpha: float = 0.05) -> float:
    """The two-sided alpha spent by information fraction ``t`` (0 < t <= 1): 2 - 2 Phi(z / sqrt(t))."""
    with IMPORTING:
        from scipy.stats import norm

    if t <= 0:
        return 0.0
    z = float(norm.ppf(1 - alpha / 2))
    return float(2 - 2 * norm.cdf(z / math.sqrt(min(t, 1.0))))


@dataclass(frozen=True)
class SequentialPlan:
    """Looks at the given information fractions, each with the |z| that settles the verdict there."""

    fractions: tuple[float, ...]
    alpha: float
    boundaries: tuple[float, ...]
    spent: tuple[float, ...]  # cumulative alpha spent by each look

    def crosses(self, z: float, look: int) -> bool:
        """Is a two-sided statistic ``z`` at look ``look`` (0-based) beyond its boundary?"""
        return abs(z) >= self.boundaries[look]

    def nominal_alpha(self, look: int) -> float:
        """The two-sided p-value a test must reach at ``look``: 2 (1 - Phi(boundary))."""
        with IMPORTING:
            from scipy.stats import norm

        return float(2 * norm.sf(self.boundaries[look]))


def obrien_fleming_plan(fractions: Sequence[float], alpha: float = 0.05) -> SequentialPlan:
    """The boundaries of looks at ``fractions`` (increasing, the last 1.0) under O'Brien-Fleming
    spending of two-sided ``alpha``."""
    return _plan(tuple(round(float(t), 12) for t in fractions), round(float(alpha), 15))


@lru_cache(maxsize=4096)
def _moves(dt: float) -> np.ndarray:
    """The density of every move between two grid points over an information step ``dt``."""
    with IMPORTING:
        from scipy.stats import norm

    x = np.linspace(-HALF_WIDTH, HALF_WIDTH, GRID)
    return norm.pdf(x[:, None] - x[None, :], scale=math.sqrt(dt))


@lru_cache(maxsize=4096)
def _plan(fractions: tuple[float, ...], alpha: float) -> SequentialPlan:
    with IMPORTING:
        from scipy.stats import norm

    ts = list(fractions)
    if not ts or any(b <= a for a, b in zip(ts, ts[1:])) or not 0 < ts[0] or abs(ts[-1] - 1.0) > 1e-9:
        raise ValueError(f"information fractions must increase from above 0 to 1, got {list(fractions)}")
    spent = [obrien_fleming_spent(t, alpha) for t in ts]
    x = np.linspace(-HALF_WIDTH, HALF_WIDTH, GRID)  # the path S(t) = Z(t) sqrt(t)
    dx = x[1] - x[0]
    centre = GRID // 2  # x[centre] == 0
    density = None  # of S at the last look, over the paths not yet stopped
    prev_t, prev_spent, bounds = 0.0, 0.0, []
    for t, cum in zip(ts, spent, strict=True):
        if density is None:
            moved = norm.pdf(x, scale=math.sqrt(t))
        else:  # carry the surviving paths forward by an independent N(0, t - prev_t) increment
            moved = _moves(round(t - prev_t, 12)) @ density * dx
        # the mass at |S| >= u for each grid point u >= 0 (both tails), and the u leaving ``target``
        mass = moved[centre:] + moved[centre::-1]
        tail = (np.cumsum(mass[::-1])[::-1] - mass / 2) * dx  # trapezoid: half of the point at u
        target = cum - prev_spent
        u = float(np.interp(target, tail[::-1], x[centre:][::-1])) if target > 1e-15 else math.inf
        bounds.append(u / math.sqrt(t))
        density = np.where(np.abs(x) < u, moved, 0.0)
        prev_t, prev_spent = t, cum
    return SequentialPlan(tuple(ts), alpha, tuple(bounds), tuple(spent))


def equal_looks(looks: int) -> tuple[float, ...]:
    """Information fractions of ``looks`` equally spaced looks: 1/looks, 2/looks, ..., 1."""
    if looks < 1:
        raise ValueError(f"a plan needs at least one look, got {looks}")
    return tuple(round((k + 1) / looks, 12) for k in range(looks))


def holm_levels(p_values: Sequence[float], fractions: Sequence[float], look: int,
                alpha: float = 0.05) -> list[float]:
    """The sequentially rejective Holm procedure at ``look`` (0-based) of a plan at ``fractions``:
    for each p-value, the nominal level its step compared it with, or 0.0 where the step-down
    stopped before reaching it. A hypothesis is rejected at this look exactly when its p-value is
    below its level. The i-th smallest of m p-values faces the look's nominal level of an
    O'Brien-Fleming plan at alpha / (m - i) (Maurer and Bretz 2013; see the module docstring)."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    levels = [0.0] * len(p_values)
    for step, i in enumerate(order):
        level = obrien_fleming_plan(fractions, alpha / (len(p_values) - step)).nominal_alpha(look)
        levels[i] = level
        if not p_values[i] < level:
            break
    return levels
