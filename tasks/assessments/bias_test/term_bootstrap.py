"""Term bootstrap of a WEAT/SEAT effect size: BCa or percentile interval from resampling the terms of
all four lists, and the unit-row embedding matrices both tests take."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from equilens.tasks.errors import ConfigError, InputDataError


def unit_matrix(name: str, x: object) -> np.ndarray:
    """``x`` as an (n, d) float matrix with unit rows; ``name`` is the argument named in errors."""
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] == 0:
        raise InputDataError(f"{name} must be a non-empty (n, d) embedding matrix, got shape {arr.shape}.")
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    if np.any(norms == 0) or not np.all(np.isfinite(arr)):
        raise InputDataError(f"{name} holds a zero or non-finite vector; cosine is undefined.")
    return arr / norms


@dataclass(frozen=True)
class TermBootstrap:
    """Percentile interval of a WEAT/SEAT effect size from resampling terms."""

    ci_low: float | None
    ci_high: float | None
    resamples: int
    """Resamples drawn."""
    finite: int
    """Resamples whose effect size was finite (a resample with no spread has none)."""


def term_bootstrap(
    group1: object,
    group2: object,
    attr1: object,
    attr2: object,
    *,
    rows_per_term: int = 1,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    method: Literal["bca", "percentile"] = "bca",
) -> TermBootstrap:
    """Bootstrap interval of the effect size, resampling *terms* of all four lists.

    Each of the four term lists is redrawn with replacement to its own size. With
    ``rows_per_term > 1`` (SEAT) each drawn term brings all of its ``rows_per_term`` consecutive
    rows (its template sentences), so the interval reflects how many terms were tested, not how
    many sentences were written around them. Vectorised: cosines are computed once, a resample only
    reweights attribute rows and picks group rows.

    ``method="bca"`` (default) corrects the percentiles for the bias and skew of the effect size
    (Efron 1987; acceleration from a leave-one-term-out jackknife): the plain percentile interval
    covers a known effect only ~85% of the time with 8 terms per group, BCa ~93%.
    """
    if resamples < 0:
        raise ConfigError(f"resamples must be >= 0, got {resamples}.")
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence must be in (0, 1), got {confidence}.")
    g1, g2 = unit_matrix("group1", group1), unit_matrix("group2", group2)
    a1, a2 = unit_matrix("attr1", attr1), unit_matrix("attr2", attr2)
    if not g1.shape[1] == g2.shape[1] == a1.shape[1] == a2.shape[1]:
        raise InputDataError("Embedding dimensions of the four term lists differ.")
    sizes = [len(m) for m in (g1, g2, a1, a2)]
    if any(k % rows_per_term for k in sizes):
        raise InputDataError(f"Row counts {sizes} are not multiples of rows_per_term={rows_per_term}.")
    t1, t2, ta, tb = (k // rows_per_term for k in sizes)
    if resamples == 0 or t1 + t2 < 3:
        return TermBootstrap(None, None, 0, 0)
    g = np.vstack([g1, g2])
    c1, c2 = g @ a1.T, g @ a2.T  # (group rows, attribute rows)
    r = rows_per_term
    offsets = np.arange(r)
    rng = np.random.default_rng(seed)
    stats: list[np.ndarray] = []
    chunk = max(1, 4_000_000 // max(1, len(g) * max(len(a1), len(a2))))
    for start in range(0, resamples, chunk):
        m = min(chunk, resamples - start)
        wa = np.repeat(rng.multinomial(ta, np.full(ta, 1 / ta), size=m), r, axis=1) / (ta * r)
        wb = np.repeat(rng.multinomial(tb, np.full(tb, 1 / tb), size=m), r, axis=1) / (tb * r)
        s = wa @ c1.T - wb @ c2.T  # (m, group rows): associations under the drawn attribute terms
        rows1 = (rng.integers(0, t1, size=(m, t1))[:, :, None] * r + offsets).reshape(m, -1)
        rows2 = (rng.integers(0, t2, size=(m, t2))[:, :, None] * r + offsets).reshape(m, -1) + len(g1)
        x1, x2 = np.take_along_axis(s, rows1, 1), np.take_along_axis(s, rows2, 1)
        sd = np.concatenate([x1, x2], axis=1).std(axis=1, ddof=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            stats.append((x1.mean(axis=1) - x2.mean(axis=1)) / sd)
    values = np.concatenate(stats)
    values = values[np.isfinite(values)]
    if len(values) < 2:
        return TermBootstrap(None, None, resamples, len(values))
    a = (1 - confidence) / 2
    levels = np.array([a, 1 - a])
    if method == "bca":
        observed = _safe_effect(c1.mean(axis=1) - c2.mean(axis=1), len(g1))
        jack = _jackknife(c1, c2, len(g1), r)
        levels = _bca_levels(values, observed, jack, levels)
    lo, hi = np.quantile(values, levels)
    return TermBootstrap(float(lo), float(hi), resamples, len(values))


def _jackknife(c1: np.ndarray, c2: np.ndarray, n1_rows: int, r: int) -> np.ndarray:
    """Effect sizes with one term (all its rows) left out of one of the four lists at a time."""
    out = []
    n_rows, na, nb = c1.shape[0], c1.shape[1], c2.shape[1]
    s_full = c1.mean(axis=1) - c2.mean(axis=1)
    for start in range(0, n_rows, r):
        keep = np.ones(n_rows, dtype=bool)
        keep[start : start + r] = False
        n1 = n1_rows - (r if start < n1_rows else 0)
        if n1 == 0 or n1 == keep.sum():
            continue
        out.append(_safe_effect(s_full[keep], n1))
    for c, n, sign in ((c1, na, 1.0), (c2, nb, -1.0)):
        if n // r < 2:
            continue
        total = c.sum(axis=1)
        for start in range(0, n, r):
            part = (total - c[:, start : start + r].sum(axis=1)) / (n - r)
            other = c2.mean(axis=1) if sign > 0 else c1.mean(axis=1)
            s = part - other if sign > 0 else other - part
            out.append(_safe_effect(s, n1_rows))
    jack = np.asarray(out)
    return jack[np.isfinite(jack)]


def _safe_effect(s: np.ndarray, n1: int) -> float:
    sd = float(np.std(s, ddof=1))
    return float((s[:n1].mean() - s[n1:].mean()) / sd) if sd > 0 else math.nan


def _bca_levels(values: np.ndarray, observed: float, jack: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Bias-corrected and accelerated percentile levels (Efron 1987); plain levels when undefined."""
    from statistics import NormalDist

    nd = NormalDist()
    below = (np.sum(values < observed) + 0.5 * np.sum(values == observed)) / len(values)
    if not 0 < below < 1 or len(jack) < 3 or not math.isfinite(observed):
        return levels
    z0 = nd.inv_cdf(float(below))
    d = jack.mean() - jack
    denom = 6 * float(np.sum(d**2)) ** 1.5
    acc = float(np.sum(d**3)) / denom if denom > 0 else 0.0
    out = []
    for q in levels:
        z = nd.inv_cdf(float(q))
        out.append(nd.cdf(z0 + (z0 + z) / (1 - acc * (z0 + z))))
    return np.clip(np.array(out), 0.0, 1.0)
