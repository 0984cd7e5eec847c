"""The omnibus permutation test's null distribution without a sort per permutation.

The omnibus test asks whether the largest gap among k groups is larger than permuting each prompt's
groups gives. A permutation moves values between the k columns and changes none, so, as for a pair
(:mod:`equilens.tasks.stats.resampling`), the values are sorted once into a grid and a block of permutations is one
compiled pass: per column and grid point, how many values at or below it the permutation puts in
that column. A pair of columns' running sum is the difference of their counts, and the metric's
``cdf_statistic`` reads its value off it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from equilens.tasks.stats.inference import cluster_blocks
from equilens.tasks.stats.resampling import BLOCK, CdfStatistic, Grid, Running, blocks
from numba import njit


def permutation_pvalue_omnibus(
    fn: Callable[[np.ndarray, np.ndarray], float], matrix: np.ndarray, clusters: Sequence[object],
    permutations: int, seed: int, cdf: Callable[..., np.ndarray] | None = None,
) -> float:
    """p-value of the largest pairwise gap among k groups (columns), permuting columns per cluster.

    With ``cdf`` (the metric's ``cdf_statistic``) every permutation is read off running sums of the
    values sorted once (:func:`omnibus_permutations`): the same draws and the same
    statistic as ``fn`` on each permuted matrix, without a sort per permutation and pair.
    NaN when there is nothing to test (fewer than two rows with every group answered, fewer than
    two groups, or no permutations); the caller records why.
    """
    matrix = np.asarray(matrix, float)
    if matrix.ndim != 2 or matrix.shape[0] < 2 or matrix.shape[1] < 2 or permutations <= 0:
        return float("nan")
    k = matrix.shape[1]
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]

    def stat(m: np.ndarray) -> float:
        return max(fn(m[:, i], m[:, j]) for i, j in pairs)

    observed = stat(matrix)
    block = cluster_blocks(clusters)
    rng = np.random.default_rng(seed)
    if cdf is not None:
        null = omnibus_permutations(cdf, matrix, block, permutations, rng)
        return (int(np.sum(null >= observed - 1e-12)) + 1) / (permutations + 1)
    rows = np.arange(len(matrix))[:, None]
    hits = 0
    for _ in range(permutations):
        perm = np.argsort(rng.random((block.max() + 1, k)), axis=1)[block]
        hits += stat(matrix[rows, perm]) >= observed - 1e-12
    return (hits + 1) / (permutations + 1)


def omnibus_permutations(stat: CdfStatistic, matrix: np.ndarray, block_of_row: np.ndarray, count: int,
                         rng: np.random.Generator) -> np.ndarray:
    """The largest of ``stat`` over every pair of the k columns of ``matrix`` (rows x groups), on each
    of ``count`` within-cluster permutations of the columns: the omnibus test's null distribution.

    A permutation sends each cluster's k groups to the k columns in a random order (the ranks of k
    uniform keys per cluster, drawn as :func:`permutation_pvalue_omnibus` draws them),
    so it moves values between columns and changes none: the values are sorted once, and a block of
    permutations is one compiled pass counting, per column, the values at or below each grid point
    (:func:`_column_running`). A pair's running sum is the difference of its two columns' counts."""
    n, k = matrix.shape
    grid = Grid(np.asarray(matrix, float).ravel(), np.empty(0))  # point r * k + g: row r, group g
    rows, groups = grid.order // k, grid.order % k
    block_of_row = np.asarray(block_of_row, np.int64)
    clusters = int(block_of_row.max()) + 1
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    out = np.empty(count)
    for block in blocks(count, max(1, BLOCK // (k * max(len(grid.values), clusters)))):  # keys and counts
        width = block.stop - block.start
        column = np.empty((width, clusters, k), np.uint8)  # [b, c, g]: the column group g lands in
        _ranks(rng.random((width, clusters, k)), column)
        counts = np.empty((k, len(grid.values), width))
        _column_running(rows, groups, block_of_row, grid.ends, column, counts)
        total = np.full(width, float(n))
        with np.errstate(divide="ignore", invalid="ignore"):
            values = [np.asarray(stat(Running(grid, total, counts[i] - counts[j])), float) for i, j in pairs]
        out[block] = np.max(values, axis=0)
    return out


@njit(cache=True, nogil=True)
def _column_running(point_rows: np.ndarray, point_groups: np.ndarray, block_of_row: np.ndarray, ends: np.ndarray,
                    column: np.ndarray, out: np.ndarray) -> None:
    """out[c, d, b]: the values at or below the d-th distinct score that permutation b puts in column c
    (points in sorted order; ``column[b, cluster, group]`` is where a cluster's group lands)."""
    acc = np.zeros((out.shape[0], out.shape[2]))
    d = 0
    for p in range(len(point_rows)):
        cluster, group = block_of_row[point_rows[p]], point_groups[p]
        for b in range(out.shape[2]):
            acc[column[b, cluster, group], b] += 1.0
        if p + 1 == ends[d]:
            out[:, d, :] = acc
            d += 1


@njit(cache=True, nogil=True)
def _ranks(keys: np.ndarray, out: np.ndarray) -> None:
    """out[b, c, g]: the rank of keys[b, c, g] among keys[b, c, :] (ties by position, as a stable
    sort): where ``argsort`` of the keys sends group g."""
    k = keys.shape[2]
    for b in range(keys.shape[0]):
        for c in range(keys.shape[1]):
            row = keys[b, c]
            for g in range(k):
                rank = 0
                for h in range(k):
                    if row[h] < row[g] or (row[h] == row[g] and h < g):
                        rank += 1
                out[b, c, g] = rank
