"""Uncertainty for every metric: percentile bootstrap resampling whole prompts (clusters).

The ``count`` responses to one prompt are not independent, so resampling rows would give
intervals that are too narrow. We resample prompt clusters with replacement and recompute the
metric on the rows of the drawn clusters. Mean-type metrics use a vectorised path (cluster sums
times a multinomial count matrix); others call the metric function once per resample.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Estimate:
    value: float
    ci_low: float | None
    ci_high: float | None
    n: int


def _cluster_index(clusters: Sequence[object]) -> tuple[np.ndarray, int]:
    _, inverse = np.unique(np.asarray(clusters, dtype=object).astype(str), return_inverse=True)
    return inverse, int(inverse.max()) + 1 if len(inverse) else 0


def bootstrap_mean(
    values: np.ndarray, clusters: Sequence[object], resamples: int, confidence: float, seed: int
) -> Estimate:
    """Mean of ``values`` with a cluster-bootstrap percentile interval."""
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    if n == 0:
        return Estimate(float("nan"), None, None, 0)
    point = float(values.mean())
    inverse, k = _cluster_index(clusters)
    if resamples <= 0 or k < 2:
        return Estimate(point, None, None, n)
    sums = np.bincount(inverse, weights=values, minlength=k)
    sizes = np.bincount(inverse, minlength=k).astype(np.float64)
    rng = np.random.default_rng(seed)
    stats = np.empty(resamples)
    chunk = max(1, 2_000_000 // k)
    for start in range(0, resamples, chunk):
        m = min(chunk, resamples - start)
        counts = rng.multinomial(k, np.full(k, 1.0 / k), size=m).astype(np.float64)
        stats[start : start + m] = (counts @ sums) / (counts @ sizes)
    a = (1 - confidence) / 2
    low, high = np.quantile(stats, [a, 1 - a])
    return Estimate(point, float(low), float(high), n)


def bootstrap_stat(
    fn: Callable[..., float],
    arrays: Sequence[np.ndarray],
    clusters: Sequence[object],
    resamples: int,
    confidence: float,
    seed: int,
) -> Estimate:
    """Any statistic ``fn(*arrays)`` of row-aligned arrays, with a cluster-bootstrap interval."""
    arrays = [np.asarray(a) for a in arrays]
    n = len(arrays[0]) if arrays else 0
    if n == 0:
        return Estimate(float("nan"), None, None, 0)
    point = float(fn(*arrays))
    inverse, k = _cluster_index(clusters)
    if resamples <= 0 or k < 2:
        return Estimate(point, None, None, n)
    order = np.argsort(inverse, kind="stable")
    starts = np.searchsorted(inverse[order], np.arange(k))
    sizes = np.append(starts[1:], n) - starts
    rng = np.random.default_rng(seed)
    stats = np.empty(resamples)
    for b in range(resamples):
        drawn = rng.integers(0, k, size=k)
        lens = sizes[drawn]
        offsets = np.arange(lens.sum()) - np.repeat(np.cumsum(lens) - lens, lens)
        idx = order[np.repeat(starts[drawn], lens) + offsets]
        stats[b] = fn(*(a[idx] for a in arrays))
    finite = stats[np.isfinite(stats)]
    if len(finite) < 2:
        return Estimate(point, None, None, n)
    a = (1 - confidence) / 2
    low, high = np.quantile(finite, [a, 1 - a])
    return Estimate(point, float(low), float(high), n)


def _cluster_blocks(clusters: Sequence[object]) -> np.ndarray:
    inverse, _ = _cluster_index(clusters)
    return inverse


def permutation_pvalue(
    fn: Callable[[np.ndarray, np.ndarray], float], x: np.ndarray, y: np.ndarray, clusters: Sequence[object],
    permutations: int, seed: int,
) -> float:
    """One-sided p-value of ``fn(x, y)`` (a gap: larger = more different) under exchangeable groups.

    Rows are paired; under H0 the group labels of a whole prompt (all its samples) can be swapped,
    so each resample flips the sides of a random half of the prompt clusters.
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    if len(x) == 0 or permutations <= 0:
        return float("nan")
    observed = fn(x, y)
    block = _cluster_blocks(clusters)
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(permutations):
        flip = (rng.random(block.max() + 1) < 0.5)[block]
        hits += fn(np.where(flip, y, x), np.where(flip, x, y)) >= observed - 1e-12
    return (hits + 1) / (permutations + 1)


def permutation_pvalue_omnibus(
    fn: Callable[[np.ndarray, np.ndarray], float], matrix: np.ndarray, clusters: Sequence[object],
    permutations: int, seed: int,
) -> float:
    """p-value of the largest pairwise gap among k groups (columns), permuting columns per cluster."""
    matrix = np.asarray(matrix, float)
    k = matrix.shape[1]
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]

    def stat(m: np.ndarray) -> float:
        return max(fn(m[:, i], m[:, j]) for i, j in pairs)

    observed = stat(matrix)
    block = _cluster_blocks(clusters)
    rng = np.random.default_rng(seed)
    rows = np.arange(len(matrix))[:, None]
    hits = 0
    for _ in range(permutations):
        perm = np.argsort(rng.random((block.max() + 1, k)), axis=1)[block]
        hits += stat(matrix[rows, perm]) >= observed - 1e-12
    return (hits + 1) / (permutations + 1)


def holm_adjust(pvalues: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values (step-down, monotone, capped at 1), in input order."""
    p = np.asarray(pvalues, float)
    m = len(p)
    if m == 0:
        return []
    order = np.argsort(p)
    adjusted = np.empty(m)
    running = 0.0
    for rank, idx in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[idx]))
        adjusted[idx] = running
    return adjusted.tolist()
