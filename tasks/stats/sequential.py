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
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

GRID = 2001  # points of the density grid of the path, an odd number (0 is a point)
HALF_WIDTH = 8.0  # the grid spans +-8 (the path has variance t <= 1)


def obrien_fleming_spent(t: float, alpha: float = 0.05) -> float:
    """The two-sided alpha spent by information fraction ``t`` (0 < t <= 1): 2 - 2 Phi(z / sqrt(t))."""
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
        from scipy.stats import norm

        return float(2 * norm.sf(self.boundaries[look]))


def obrien_fleming_plan(fractions: Sequence[float], alpha: float = 0.05) -> SequentialPlan:
    """The boundaries of looks at ``fractions`` (increasing, the last 1.0) under O'Brien-Fleming
    spending of two-sided ``alpha``."""
    from scipy.stats import norm

    ts = [float(t) for t in fractions]
    if not ts or any(b <= a for a, b in zip(ts, ts[1:])) or not 0 < ts[0] or abs(ts[-1] - 1.0) > 1e-9:
        raise ValueError(f"information fractions must increase from above 0 to 1, got {list(fractions)}")
    spent = [obrien_fleming_spent(t, alpha) for t in ts]
    x = np.linspace(-HALF_WIDTH, HALF_WIDTH, GRID)  # the path S(t) = Z(t) sqrt(t)
    dx = x[1] - x[0]
    centre = GRID // 2  # x[centre] == 0
    steps = x[:, None] - x[None, :]  # every move between two grid points
    density = None  # of S at the last look, over the paths not yet stopped
    prev_t, prev_spent, bounds = 0.0, 0.0, []
    for t, cum in zip(ts, spent, strict=True):
        if density is None:
            moved = norm.pdf(x, scale=math.sqrt(t))
        else:  # carry the surviving paths forward by an independent N(0, t - prev_t) increment
            moved = norm.pdf(steps, scale=math.sqrt(t - prev_t)) @ density * dx
        # the mass at |S| >= u for each grid point u >= 0 (both tails), and the u leaving ``target``
        mass = moved[centre:] + moved[centre::-1]
        tail = (np.cumsum(mass[::-1])[::-1] - mass / 2) * dx  # trapezoid: half of the point at u
        target = cum - prev_spent
        u = float(np.interp(target, tail[::-1], x[centre:][::-1])) if target > 1e-15 else math.inf
        bounds.append(u / math.sqrt(t))
        density = np.where(np.abs(x) < u, moved, 0.0)
        prev_t, prev_spent = t, cum
    return SequentialPlan(tuple(ts), alpha, tuple(bounds), tuple(spent))
