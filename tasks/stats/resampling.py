"""Parity statistics over many reweightings of one pair's scores, without a loop per resample.

A parity metric compares the distributions of two sides' scores. Every statistic the metric stage
needs from it is the same comparison on a reweighting of the pair's own rows:

* a cluster-bootstrap resample weights each row by how often its prompt was drawn;
* a within-prompt label swap (the permutation test, the noise floor) moves a prompt's rows to the
  other side;
* a swap inside a resample moves a binomial count of a prompt's drawn copies;
* a planted difference (the minimum detectable gap) moves a share of one side's answers to the top
  of the score range.

None of these changes a value, only which side holds it and how often. So the pair's scores are
sorted once into a grid (with the top of the range appended), and one reweighting is one column of
a matrix (:class:`SignedMass`): the signed mass at each grid point (side a minus side b). Its
running sum is the difference of the two sides' CDFs times a side's total mass, and a metric that
declares ``cdf_statistic(mass)`` reads its value off that column: Wasserstein-1 is the sum of
|running sum| times the grid steps, a difference of shares above t is |running sum| at t. Blocks of
columns are computed at once, so a thousand resamples cost a few passes, never a thousand sorts.
A resample or a swap weighs whole prompts, so its block is given per prompt (:class:`ClusterMass`)
and its running sum is one compiled pass over the sorted points (:func:`_running_sum`), where a
prompt's points at one score are one, and a prompt whose two sides score the same moves nothing and
is left out (for a fair deterministic endpoint, most prompts); a planted
block is a base running sum plus the planted answers (:func:`equilens.tasks.stats.planted.planted`, also compiled).

The bootstrap draws are made once per attribute (:class:`Draws`) and shared by every metric and
every pair of groups: a pair reads the columns of its own prompts. When a pair lacks some of the
attribute's prompts, a resample holds a binomial number of its prompts instead of exactly all of
them; given that number the resample is an ordinary cluster bootstrap of the pair.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from equilens.tasks.stats.kernels import GOLDEN, mix64, popcount64
from numba import njit

BLOCK = 4_000_000
"""Matrix elements per block of reweightings (32 MB of float64); bounds the memory of every path."""


@dataclass(frozen=True)
class Draws:
    """Cluster-bootstrap draws: how often each cluster is drawn in each resample, made once per
    attribute from its seed and shared by every metric and pair."""

    ids: np.ndarray  # the distinct cluster ids, sorted (:func:`equilens.tasks.stats.cluster_keys`): the rows of ``counts``
    counts: np.ndarray  # (clusters, resamples), one byte per cell while every count fits (see draw)

    @classmethod
    def draw(cls, clusters: Sequence[object], resamples: int, seed: int) -> Draws:
        """The draws of ``resamples`` cluster-bootstrap resamples, written straight into the
        (clusters, resamples) layout the pairs read. A cluster's count in one resample is about
        Poisson(1), so a byte holds it (256 copies of one prompt in one resample has odds far below
        any run's; should it happen, the counts widen to 16 bits): at 67,000 prompts and 1,000
        resamples, 67 MB instead of twice 134 MB (16-bit counts and their transposed copy)."""
        from equilens.tasks.stats import cluster_draws, cluster_keys

        ids = np.unique(cluster_keys(clusters)[0])
        k, resamples = len(ids), max(resamples, 0)
        rng = np.random.default_rng(seed)
        counts = np.zeros((k, resamples), np.uint8)
        step = max(1, BLOCK // max(k, 1))
        for start in range(0, resamples, step):
            drawn = cluster_draws(rng, k, min(step, resamples - start))
            if drawn.size and drawn.max() > np.iinfo(counts.dtype).max:
                counts = counts.astype(np.uint16)
            counts[:, start:start + len(drawn)] = drawn.T
        return cls(ids, counts)

    @property
    def resamples(self) -> int:
        return self.counts.shape[1]

    def rows(self, clusters: Sequence[object]) -> np.ndarray:
        """The row of ``counts`` of each data row's cluster (every cluster must be among the drawn)."""
        from equilens.tasks.stats import cluster_keys

        keys = cluster_keys(clusters)[0]
        if len(keys) and (keys.dtype.kind in "iu") != (self.ids.dtype.kind in "iu"):
            raise ValueError("the rows' clusters are codes and the drawn clusters ids, or the reverse")
        at = np.searchsorted(self.ids, keys)
        if len(keys) and (at.max() >= len(self.ids) or not (self.ids[at] == keys).all()):
            raise ValueError("a row's cluster is not among the drawn clusters")
        return at

    def weighted(self, used: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Per resample, the sum over the clusters ``used`` (rows of ``counts``) of how often each
        was drawn times its value: with a cluster's size, a resample's total mass."""
        out = np.zeros(self.resamples)
        _weighted_columns(self.counts, np.asarray(used, np.int64), np.asarray(values, float), out)
        return out


def shared_mean_bootstrap(values: np.ndarray, clusters: Sequence[object], draws: Draws,
                          confidence: float) -> tuple[float, float] | None:
    """The percentile interval of the mean of ``values`` over the attribute's shared bootstrap draws
    (each resample's mean weights a row by how often its cluster was drawn), as :func:`bootstrap`
    does for the parity metrics; None when a cluster is not among the drawn or a resample drew
    none of these clusters (the caller then draws its own)."""
    try:
        rows = draws.rows(clusters)
    except ValueError:
        return None
    used, local = np.unique(rows, return_inverse=True)
    sums = np.bincount(local, weights=np.asarray(values, float), minlength=len(used))
    sizes = np.bincount(local, minlength=len(used)).astype(float)
    num, den = draws.weighted(used, sums), draws.weighted(used, sizes)
    if not draws.resamples or (den == 0).any():
        return None
    a = (1 - confidence) / 2
    low, high = np.quantile(num / den, [a, 1 - a])
    return float(low), float(high)


@njit(cache=True, nogil=True)
def _weighted_columns(counts: np.ndarray, used: np.ndarray, values: np.ndarray, out: np.ndarray) -> None:
    """out[r] = sum_i counts[used[i], r] values[i] (one pass over the used rows of the counts)."""
    for i in range(len(used)):
        row, v = counts[used[i]], values[i]
        for r in range(len(out)):
            out[r] += row[r] * v


class Points(NamedTuple):
    """The sorted points of a :class:`ClusterMass` (:meth:`Grid.by_cluster`)."""

    clusters: np.ndarray
    """The cluster rows that carry any mass, ascending: the rows of a ClusterMass's weights."""
    rows: np.ndarray
    """Per point, its cluster as an index into ``clusters``."""
    sides: np.ndarray
    """Per point, its net side (side a's points +1 each, side b's -1 each)."""
    places: np.ndarray
    """Per point, its distinct score (an index into :attr:`Grid.values`), ascending."""


class Grid:
    """The pair's scores (and any extra points) sorted once, with equal scores on one grid point.

    A statistic of the two CDFs reads them only where the score changes, so tied scores (a scorer
    that rounds, as VADER does to four decimals, or a deterministic endpoint's repeated answers) are
    summed into one point: the running sums, and every step after them, are as long as the number
    of distinct scores, not of answers."""

    def __init__(self, x: np.ndarray, y: np.ndarray, extra: Sequence[float] = ()) -> None:
        self.x, self.y, self.extra = np.asarray(x, float), np.asarray(y, float), np.asarray(extra, float)
        z = np.concatenate([self.x, self.y, self.extra])
        self.order = np.argsort(z, kind="stable")
        ordered = z[self.order]
        first = np.ones(len(z), bool)  # the first of a run of equal scores in sorted order
        np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
        self.starts = np.flatnonzero(first)
        self.values = ordered[self.starts]  # the distinct scores, ascending
        self.place = np.empty(len(z), np.int64)  # each point's distinct score, as an index into values
        self.place[self.order] = np.cumsum(first) - 1
        self.points = len(z)
        self.ends = np.append(self.starts[1:], self.points)  # one past each distinct score's last point

    def by_cluster(self, rows_x: np.ndarray, rows_y: np.ndarray) -> Points:
        """The points of a :class:`ClusterMass`, in sorted order, merged per cluster and distinct
        score: a point of side a (x, of cluster ``rows_x[i]``) adds +1 times its cluster's weight, a
        point of side b (y) -1, extra points nothing. Points of one cluster at one score are one
        entry with the sum of their sides, and entries whose sides cancel are left out: a prompt
        whose two answers score the same (a fair deterministic endpoint's, or a rounding scorer's)
        moves no mass under any reweighting, since both of its answers carry the same weight. The
        weights are integers, so the running sums are the same, exactly, without those entries; and
        a cluster left with no entry needs no weights at all (:attr:`Points.clusters`)."""
        extra = np.zeros(len(self.extra), np.int64)
        rows = np.concatenate([np.asarray(rows_x, np.int64), np.asarray(rows_y, np.int64), extra])
        sides = np.concatenate([np.ones(len(rows_x), np.int64), -np.ones(len(rows_y), np.int64), extra])
        if not len(rows):
            return Points(rows, rows, sides.astype(float), rows)
        key = self.place * (int(rows.max()) + 1) + rows  # by distinct score, then cluster row
        order = np.argsort(key, kind="stable")
        key = key[order]
        first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        net = np.add.reduceat(sides[order], first)
        kept = first[net != 0]
        clusters, local = np.unique(rows[order][kept], return_inverse=True)
        return Points(clusters, local.reshape(-1), net[net != 0].astype(float), self.place[order][kept])

    def summed(self, stacked: np.ndarray) -> np.ndarray:
        """Rows of ``stacked`` (points in sorted order) summed per distinct score."""
        if len(self.values) == self.points:
            return stacked
        return np.add.reduceat(stacked, self.starts, axis=0)


class SignedMass:
    """A block of reweightings of a pair: per data point and reweighting (points as rows, one
    column per reweighting), its mass on side a minus its mass on side b; ``total`` is a side's
    total mass. What a parity statistic reads: :attr:`cumulative` (the running sum over the sorted
    grid, computed once and shared by the metrics of the pair) or :meth:`at_or_below`. This dense
    form, mass given point by point, is the definition: the stage builds the compact forms below
    (:class:`ClusterMass`, :func:`equilens.tasks.stats.planted.planted`), and the tests hold them to it."""

    def __init__(self, grid: Grid, mass_x: np.ndarray, mass_y: np.ndarray, total: np.ndarray,
                 mass_extra: np.ndarray | None = None) -> None:
        self.grid, self.mass_x, self.mass_y, self.total = grid, mass_x, mass_y, total
        self.mass_extra = np.zeros((len(grid.extra), mass_x.shape[1])) if mass_extra is None else mass_extra
        self._cumulative: np.ndarray | None = None

    @property
    def cumulative(self) -> np.ndarray:
        """(grid points, reweightings): side a's CDF minus side b's, times ``total``."""
        if self._cumulative is None:
            stacked = self.grid.summed(np.concatenate([self.mass_x, self.mass_y, self.mass_extra])[self.grid.order])
            self._cumulative = np.cumsum(stacked, axis=0, out=stacked)
        return self._cumulative

    def at_or_below(self, t: float) -> np.ndarray:
        """Per reweighting: the signed mass at values <= ``t`` (the cumulative at ``t``)."""
        g = self.grid
        return ((g.x <= t).astype(float) @ self.mass_x + (g.y <= t).astype(float) @ self.mass_y
                + (g.extra <= t).astype(float) @ self.mass_extra)


class Running(SignedMass):
    """A block of reweightings given by its running sum (distinct scores x reweightings)."""

    def __init__(self, grid: Grid, total: np.ndarray, cumulative: np.ndarray) -> None:
        self.grid, self.total, self._cumulative = grid, total, cumulative

    def at_or_below(self, t: float) -> np.ndarray:
        j = int(np.searchsorted(self.grid.values, t, side="right")) - 1
        return np.zeros(self.cumulative.shape[1]) if j < 0 else self.cumulative[j]


class ClusterMass(Running):
    """A block of reweightings given per cluster: ``weights`` (the clusters of ``points``,
    reweightings); each point of side a carries its cluster's weight and each point of side b its
    negative (``points`` from :meth:`Grid.by_cluster`). A resample's weight is how often the cluster
    was drawn, a label swap's +1 or -1, so no (points, reweightings) matrix is gathered: the running
    sum is one compiled pass over the sorted points that carry mass (:func:`_running_sum`; integer
    weights, so its sums are exact)."""

    def __init__(self, grid: Grid, points: Points, weights: np.ndarray, total: np.ndarray) -> None:
        self.grid, self.points, self.total, self._cumulative = grid, points, total, None
        integer = weights.dtype.kind in "iu"  # drawn counts and swaps: summed exactly, in their own width
        self.weights = np.ascontiguousarray(weights) if integer else np.ascontiguousarray(weights, dtype=np.float64)

    @property
    def cumulative(self) -> np.ndarray:
        if self._cumulative is None:
            self._cumulative = np.empty((len(self.grid.values), self.weights.shape[1]))
            p = self.points
            _running_sum(self.weights, p.rows, p.sides, p.places, self._cumulative)
        return self._cumulative


@njit(cache=True, nogil=True)
def _running_sum(weights: np.ndarray, point_rows: np.ndarray, point_sides: np.ndarray, point_place: np.ndarray,
                 out: np.ndarray) -> None:
    """out[d] = the signed mass at or below the d-th distinct score: points in sorted order
    (:meth:`Grid.by_cluster`), each adding its net side times its cluster's weights, at distinct
    score ``point_place``; a score without points repeats the sum below it."""
    acc = np.zeros(out.shape[1])
    d = 0
    for p in range(len(point_rows)):
        while d < point_place[p]:
            out[d, :] = acc
            d += 1
        row, side = weights[point_rows[p]], point_sides[p]
        for r in range(len(acc)):
            acc[r] += side * row[r]
    while d < out.shape[0]:
        out[d, :] = acc
        d += 1


def weighted_abs_rows(cumulative: np.ndarray, widths: np.ndarray) -> np.ndarray:
    """Per column r of a (points, reweightings) running sum: sum_j widths[j] |cumulative[j, r]| over
    its first ``len(widths)`` rows (the integral a Wasserstein-1 distance reads), in one pass with
    no |cumulative| copy."""
    out = np.zeros(cumulative.shape[1])
    _weighted_abs_rows(np.ascontiguousarray(cumulative, dtype=np.float64), np.asarray(widths, np.float64), out)
    return out


@njit(cache=True, nogil=True)
def _weighted_abs_rows(cumulative: np.ndarray, widths: np.ndarray, out: np.ndarray) -> None:
    for j in range(len(widths)):
        w = widths[j]
        for r in range(cumulative.shape[1]):
            out[r] += w * abs(cumulative[j, r])


CdfStatistic = Callable[..., np.ndarray]
"""``(mass: SignedMass, **settings) -> (reweightings,)``: a parity metric's value on each reweighting."""


def _apply(stats: dict[str, CdfStatistic], mass: SignedMass) -> dict[str, np.ndarray]:
    with np.errstate(divide="ignore", invalid="ignore"):  # a resample without the pair's prompts: NaN
        return {name: np.asarray(stat(mass), float) for name, stat in stats.items()}


def blocks(total: int, size: int) -> Iterator[slice]:
    """Consecutive slices of ``size`` (the last one shorter) covering ``range(total)``."""
    for start in range(0, total, size):
        yield slice(start, min(total, start + size))


def bootstrap(stats: dict[str, CdfStatistic], x: np.ndarray, y: np.ndarray, rows: np.ndarray,
              draws: Draws) -> dict[str, np.ndarray]:
    """Each statistic on every bootstrap resample of the pair (rows weighted by their prompt's count)."""
    grid, used, points, total = _resampled(x, y, rows, draws)
    out = {name: np.empty(draws.resamples) for name in stats}
    for block in blocks(draws.resamples, block_size(grid, points)):
        weights = draws.counts[used[points.clusters], block]
        for name, values in _apply(stats, ClusterMass(grid, points, weights, total[block])).items():
            out[name][block] = values
    return out


def _resampled(x: np.ndarray, y: np.ndarray, rows: np.ndarray, draws: Draws) -> tuple[Grid, np.ndarray, Points, np.ndarray]:
    """A pair's grid, its prompts (rows of the draws), its points over them, and each resample's
    total mass on a side (every prompt counts there, also those whose points cancel)."""
    grid = Grid(x, y)
    used = np.unique(rows)  # the pair's own prompts
    local = np.searchsorted(used, rows)
    total = draws.weighted(used, np.bincount(local, minlength=len(used)))
    return grid, used, grid.by_cluster(local, local), total


def block_size(grid: Grid, points: Points, clusters: int = 0) -> int:
    """Reweightings per block: its running sums and its weights (of the clusters with points, or of
    ``clusters``) each within :data:`BLOCK` elements."""
    return max(1, BLOCK // max(len(grid.values), len(points.clusters), clusters, 1))


def swapped_copies(counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A within-prompt label swap inside resamples: each cluster's drawn copies (``counts``) minus twice
    the copies the swap moves to the other side, Binomial(count, 1/2) per cell, as int16 weights for
    :class:`ClusterMass`. The binomial is the number of set bits among ``count`` random bits: a byte
    of splitmix64's words (seeded from ``rng``) per cell, and one more per 8 copies past the first 8,
    so the loop has no branch that depends on the count (counts above 8 are rare)."""
    counts = np.ascontiguousarray(counts)
    kept = np.empty(counts.shape, np.int16 if counts.size == 0 or counts.max() < 2**15 else np.float64)
    _swapped(counts, np.uint64(rng.integers(0, 2**63)), kept)
    return kept


@njit(cache=True, nogil=True, inline="always")
def _next_byte(state: np.uint64, word: np.uint64, spare: int) -> tuple:
    """The next byte of splitmix64's stream: (bits, state, word, spare), a new word every 8 bytes."""
    if spare == 0:
        state += GOLDEN
        word, spare = mix64(state), 8
    return word & np.uint64(0xFF), state, word >> np.uint64(8), spare - 1


@njit(cache=True, nogil=True)
def _swapped(counts: np.ndarray, seed: np.uint64, out: np.ndarray) -> None:
    state, word, spare = seed, np.uint64(0), 0  # spare: unused bytes left in ``word``
    for i in range(counts.shape[0]):
        for j in range(counts.shape[1]):
            count = np.int64(counts[i, j])
            bits, state, word, spare = _next_byte(state, word, spare)  # the first 8 copies' byte, even for none
            if count < 8:
                bits &= (np.uint64(1) << np.uint64(count)) - np.uint64(1)
            moved = popcount64(bits)
            left = count - 8
            while left > 0:  # past 8 copies: a byte per 8 more
                bits, state, word, spare = _next_byte(state, word, spare)
                if left < 8:
                    bits &= (np.uint64(1) << np.uint64(left)) - np.uint64(1)
                moved += popcount64(bits)
                left -= 8
            out[i, j] = count - 2 * moved


def gap_bootstrap(stats: dict[str, CdfStatistic], x: np.ndarray, y: np.ndarray, rows: np.ndarray,
                  draws: Draws, swaps: int, seed: int) -> dict[str, np.ndarray]:
    """Each statistic minus its mean over ``swaps`` within-prompt label swaps, on every bootstrap
    resample: the gap beyond sampling noise, with the floor recomputed on each resample. Each drawn
    copy of a prompt is swapped on its own (as a prompt drawn twice is two prompts), so a swap moves
    a binomial count of a prompt's copies. Only the prompts with points are swapped: a swap of a
    prompt whose two sides score the same changes nothing."""
    grid, used, points, total = _resampled(x, y, rows, draws)
    rng = np.random.default_rng(seed)
    out = {name: np.empty(draws.resamples) for name in stats}
    for block in blocks(draws.resamples, block_size(grid, points)):
        counts = draws.counts[used[points.clusters], block]
        value = _apply(stats, ClusterMass(grid, points, counts, total[block]))
        null = {name: np.zeros(len(value[name])) for name in stats}
        for _ in range(swaps):
            kept = swapped_copies(counts, rng)
            for name, values in _apply(stats, ClusterMass(grid, points, kept, total[block])).items():
                null[name] += values / swaps
        for name in stats:
            out[name][block] = value[name] - null[name]
    return out


def permutations(stats: dict[str, CdfStatistic], x: np.ndarray, y: np.ndarray, block_of_row: np.ndarray,
                 count: int, seed: int) -> dict[str, np.ndarray]:
    """Each statistic on ``count`` within-prompt label swaps: each swap flips the sides of a random
    half of the prompts (the same draws as :func:`equilens.tasks.stats.permutation_test`; only the flips of
    the prompts with points are read)."""
    from equilens.tasks.stats import coin_flips

    grid = Grid(x, y)
    rng = np.random.default_rng(seed)
    k = int(block_of_row.max()) + 1
    out = {name: np.empty(count) for name in stats}
    total = np.full(1, float(len(block_of_row)))
    points = grid.by_cluster(block_of_row, block_of_row)
    for block in blocks(count, block_size(grid, points, k)):  # the flips of each block in turn: one stream, as one draw
        sign = 1.0 - 2.0 * coin_flips(rng, block.stop - block.start, k)[:, points.clusters].T
        for name, values in _apply(stats, ClusterMass(grid, points, sign, total)).items():
            out[name][block] = values
    return out
