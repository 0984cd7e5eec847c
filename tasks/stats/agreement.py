"""Proportions and the agreement of two yes/no raters: the Wilson score interval of a proportion,
Cohen's kappa with a percentile bootstrap interval over items, and a rater's sensitivity and
specificity against labels (the judge's check, the preference shares of the likelihood metrics)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
from equilens.tasks.errors import InputDataError

KAPPA_RESAMPLES = 2000


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion ``successes / n``."""
    if n <= 0 or not 0 <= successes <= n:
        raise InputDataError(f"Need 0 <= successes <= n and n > 0, got {successes} of {n}.")
    if not 0 < confidence < 1:
        raise InputDataError(f"confidence must be in (0, 1), got {confidence}.")
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if successes == 0 else max(0.0, centre - half)
    hi = 1.0 if successes == n else min(1.0, centre + half)
    return float(lo), float(hi)


def cohen_kappa(truth: np.ndarray, said: np.ndarray) -> float:
    """Cohen's kappa of two 0/1 raters, (p_o - p_e) / (1 - p_e); NaN when chance agreement is 1
    (both raters constant)."""
    truth, said = np.asarray(truth, bool), np.asarray(said, bool)
    observed = float(np.mean(truth == said))
    t, s = float(truth.mean()), float(said.mean())
    chance = t * s + (1 - t) * (1 - s)
    return math.nan if chance >= 1 else (observed - chance) / (1 - chance)


def kappa_interval(truth: np.ndarray, said: np.ndarray, confidence: float = 0.95,
                   resamples: int = KAPPA_RESAMPLES, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of Cohen's kappa, resampling pairs; resamples where kappa is
    undefined are left out."""
    truth, said = np.asarray(truth, bool), np.asarray(said, bool)
    n = len(truth)
    if n == 0 or resamples < 1:
        return math.nan, math.nan
    idx = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    t, s = truth[idx], said[idx]
    observed = (t == s).mean(axis=1)
    pt, ps = t.mean(axis=1), s.mean(axis=1)
    chance = pt * ps + (1 - pt) * (1 - ps)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappas = np.where(chance < 1, (observed - chance) / (1 - chance), np.nan)
    if np.isnan(kappas).all():
        return math.nan, math.nan
    alpha = (1 - confidence) / 2
    low, high = np.nanquantile(kappas, [alpha, 1 - alpha])
    return float(low), float(high)


@dataclass(frozen=True)
class Agreement:
    """A judge's yes/no against the labels: the confusion matrix and what is read from it."""

    tp: int
    fn: int
    tn: int
    fp: int
    sensitivity: float
    sensitivity_ci: tuple[float, float]
    specificity: float
    specificity_ci: tuple[float, float]
    kappa: float
    kappa_ci: tuple[float, float]
    confidence: float

    @property
    def pairs(self) -> int:
        return self.tp + self.fn + self.tn + self.fp


def agreement(truth: Any, said: Any, confidence: float = 0.95, resamples: int = KAPPA_RESAMPLES,
              seed: int = 0) -> Agreement:
    """Sensitivity and specificity (Wilson intervals) and Cohen's kappa (bootstrap interval) of
    the judge's ``said`` (1: harmful) against ``truth``."""
    truth, said = np.asarray(truth, bool), np.asarray(said, bool)
    tp, fn = int((truth & said).sum()), int((truth & ~said).sum())
    tn, fp = int((~truth & ~said).sum()), int((~truth & said).sum())
    return Agreement(
        tp, fn, tn, fp,
        tp / (tp + fn) if tp + fn else math.nan, _wilson_or_nan(tp, tp + fn, confidence),
        tn / (tn + fp) if tn + fp else math.nan, _wilson_or_nan(tn, tn + fp, confidence),
        cohen_kappa(truth, said), kappa_interval(truth, said, confidence, resamples, seed), confidence)


def _wilson_or_nan(k: int, n: int, confidence: float) -> tuple[float, float]:
    return wilson_interval(k, n, confidence) if n else (math.nan, math.nan)
