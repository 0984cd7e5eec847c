"""Minimum detectable gaps: the smallest true difference the verdict's own rule finds with the
stated power, found by planting a difference in the run's own data (parity and similarity)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from equilens.tasks.stats.importing import IMPORTING
from equilens.tasks.stats.inference import (
    cluster_blocks,
    cluster_codes,
    cluster_keys,
    cluster_means,
    coin_flips,
    row_blocks,
    rowwise,
    swap_where,
)
from equilens.tasks.stats.kernels import cell_word, run_chunked
from numba import njit

if TYPE_CHECKING:
    from equilens.tasks.stats.planted import Plants


@dataclass(frozen=True)
class DetectableGap:
    """The smallest planted difference the verdict's rule finds with the stated power."""

    gap: float | None
    """In the units of the stored gap (value minus noise floor); None when no gap in range is found."""
    share: float | None
    """The share of one group's answers turned to the top of the score range that gives it."""
    power: float
    why: str = ""


def parity_detectable_gap(
    fn: Callable[[np.ndarray, np.ndarray], float], x: np.ndarray, y: np.ndarray, clusters: Sequence[object],
    *, confidence: float = 0.95, tests: int = 1, power: float = 0.8, bounds: tuple[float, float] = (0.0, 1.0),
    seed: int = 0, realizations: int | None = None, units: Sequence[object] | None = None,
    cdf_statistic: Callable[..., np.ndarray] | None = None,
) -> DetectableGap:
    """Minimum detectable gap of a parity statistic, found by planting a difference in the run's data.

    A parity gap (Wasserstein-1, a difference of shares) is folded at 0: under no difference its
    spread is narrower than under a real one, so the standard error of a fair run promises more
    power than the verdict has. Instead, the rule the verdict applies is simulated on this run's
    own scores. Each realization swaps the group labels of a random half of the prompts (a draw
    from "no difference", keeping the prompts and their correlation), then turns a share of one
    side's answers to the top of the score range (``bounds[1]``: wholly negative). The verdict's
    rule for a parity pair is the permutation test: after Holm over ``tests`` pairs, the one pair
    that differs must reach p < alpha / tests, that is a statistic above the 1 - alpha / tests
    quantile of the planted data with its labels swapped again (a real difference widens that bar
    and the floor alike). The share is raised (bisection) until that many realizations clear the
    bar with probability ``power``; the stated gap is the mean statistic minus the mean swapped
    statistic at that share, in the units of the stored gap (value minus noise floor). Checked by
    simulation in ``tests/test_detectable_gap.py`` (asserted band 70-90%, 40 runs per size):
    measured 82% for a sampling model and 87% for a deterministic one (with ``units``); for a uniform shift of
    every score the stated gap is conservative (93%).

    ``units`` (one label per row) makes rows that are the same answer turn together: a
    deterministic endpoint's repeated samples are one answer, and turning them one by one would
    understate the spread of a real difference (measured: 70% power at the stated gap, 80% with
    units).
    """
    if cdf_statistic is not None:
        return parity_detectable_gaps({"": cdf_statistic}, x, y, clusters, confidence=confidence, tests=tests,
                                      power=power, bounds=bounds, seed=seed, realizations=realizations,
                                      units=units)[""]
    draws = _plant_draws(x, y, clusters, confidence, tests, seed, realizations, units)
    if isinstance(draws, DetectableGap):
        return DetectableGap(None, None, power, draws.why)
    x, y, block, plants, realizations, unit, alpha = draws
    hi = bounds[1]
    every = slice(0, realizations)  # the same draws as on the grid, held here as arrays
    swaps = plants.swaps(every, np.arange(int(block.max()) + 1))[:, block]
    flips, again, turn = (swaps & 1) > 0, (swaps & 2) > 0, plants.turns(every, np.arange(int(unit.max()) + 1))[:, unit]
    del swaps
    xs, ys = np.where(flips, y, x), np.where(flips, x, y)

    def fires(share: float) -> tuple[float, float]:
        """(share of realizations the test finds, mean gap) with ``share`` of one side's answers
        turned to the top of the score range."""
        planted = np.where(turn < share * QUANTA, hi, ys)
        stat = rowwise(fn, xs, planted)
        # the test and the floor see the planted data swapped again: a real difference widens both
        null = rowwise(fn, *swap_where(xs, planted, again))
        bar = float(np.quantile(null, 1 - alpha))
        return float((stat > bar + 1e-12).mean()), float(stat.mean() - null.mean())

    return _smallest_share(fires, power, _AT_FULL)


_AT_FULL = "even every answer of one group at the top of the score range is"


def parity_detectable_gaps(
    stats: dict[str, Callable[..., np.ndarray]], x: np.ndarray, y: np.ndarray, clusters: Sequence[object], *,
    confidence: float = 0.95, tests: int = 1, power: float = 0.8, bounds: tuple[float, float] = (0.0, 1.0),
    seed: int = 0, realizations: int | None = None, units: Sequence[object] | None = None,
) -> dict[str, DetectableGap]:
    """:func:`parity_detectable_gap` of several parity metrics of one pair that declare a
    ``cdf_statistic`` (``stats``: name -> statistic), as each would get it alone: the realizations'
    draws depend on the data and the seed only, so the metrics share them, the running sums with
    nothing planted, and every planted share their bisections both try (each planted share is
    computed once, for all the metrics)."""
    from functools import cache

    draws = _plant_draws(x, y, clusters, confidence, tests, seed, realizations, units)
    if isinstance(draws, DetectableGap):
        return dict.fromkeys(stats, DetectableGap(None, None, power, draws.why))
    x, y, block, plants, realizations, unit, alpha = draws
    fires = cache(_planted_on_grid(stats, x, y, plants, realizations, block, unit, bounds[1], alpha))
    return {name: _smallest_share(lambda share, name=name: fires(share)[name], power, _AT_FULL) for name in stats}


_PlantDraws = tuple[np.ndarray, np.ndarray, np.ndarray, "Plants", int, np.ndarray, float]
"""What :func:`_plant_draws` gives: x, y, each row's prompt, the plants, the realizations, each row's unit, alpha."""


def _plant_draws(x: np.ndarray, y: np.ndarray, clusters: Sequence[object], confidence: float, tests: int, seed: int,
                 realizations: int | None, units: Sequence[object] | None) -> _PlantDraws | DetectableGap:
    """The realizations of a planted parity gap: (x, y, each row's prompt, the draws from ``seed``
    (:class:`equilens.tasks.stats.planted.Plants`: per realization and prompt its flip and second flip, per
    realization and answer unit its plant), the number of realizations, each row's unit, alpha);
    or why there are none."""
    from equilens.tasks.stats.planted import Plants

    x, y = np.asarray(x, float), np.asarray(y, float)
    n = len(x)
    block = cluster_blocks(clusters) if n else np.zeros(0, int)
    k = int(block.max()) + 1 if n else 0
    alpha = (1 - confidence) / max(tests, 1)
    if k < 2:
        return DetectableGap(None, None, 0.0, "fewer than two prompts")
    if realizations is None:  # enough draws beyond the 1 - alpha quantile, within ~160 MB of floats
        realizations = int(min(max(2000, np.ceil(40 / alpha)), max(500, 2e7 // max(n, 1))))
    unit = np.arange(n) if units is None else np.unique(cluster_keys(units)[0], return_inverse=True)[1].reshape(-1)
    return x, y, block, Plants.draw(np.random.default_rng(seed)), realizations, unit, alpha


PLANT_STEPS = 8192
"""The most distinct scores a planted parity gap is simulated on (:func:`_on_plant_grid`)."""


def _on_plant_grid(x: np.ndarray, y: np.ndarray, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """The scores as the planted realizations read them: as they are when they take at most
    :data:`PLANT_STEPS` distinct values (VADER's, rounded to four decimals, take at most 20,001 over
    [-1, 1] and a run's far fewer), else rounded to :data:`PLANT_STEPS` equal steps between their
    lowest and the top of the range. Each realization holds a running sum per distinct score, so a
    scorer whose scores never tie (a classifier's probability) made a 100,000-row pair hold
    ~800 MB of them; rounded, the realizations' statistics move by at most half a step (1/16,384
    of the range), well inside the bisection's resolution on the planted share."""
    if len(np.unique(np.concatenate([x, y]))) <= PLANT_STEPS:
        return x, y
    lo = min(float(x.min()), float(y.min()), hi)
    step = (hi - lo) / PLANT_STEPS
    if step <= 0:
        return x, y
    return lo + np.round((x - lo) / step) * step, lo + np.round((y - lo) / step) * step


def _planted_on_grid(stats: dict[str, Callable[..., np.ndarray]], x: np.ndarray, y: np.ndarray, plants: Plants,
                     realizations: int, block: np.ndarray, unit: np.ndarray, hi: float,
                     alpha: float) -> Callable[[float], dict[str, tuple[float, float]]]:
    """The ``fires`` of :func:`parity_detectable_gap`, per statistic, for metrics with a
    ``cdf_statistic``: every realization (its label swap, its planted share, its second swap) is a
    signed mass on one grid of the pair's scores and the top of the range (:mod:`equilens.tasks.stats.resampling`),
    so a step of the bisection sorts nothing. The draws are computed where read, per realization
    and prompt or answer unit (``plants``; row i's prompt is ``block[i]``, its unit ``unit[i]``):
    no array of them is held, nor anything of (rows x realizations) beyond a block's one-byte
    weights. Row i puts x_i on side a and y_i on side b, or the reverse where its prompt is flipped;
    the second flip exchanges its sides for the null; its unit's plant moves its side-b answer when
    below the share. The running mass with nothing planted is computed once per realization; a step
    adds, for each planted answer, +1 (times the null's sign) from where side b's answer sat up to
    the top of the range (:func:`equilens.tasks.stats.planted.planted`)."""
    from equilens.tasks.stats.planted import planted
    from equilens.tasks.stats.resampling import ClusterMass, Grid, block_size, blocks

    x, y = _on_plant_grid(x, y, hi)
    grid = Grid(x, y, extra=[hi])
    n = len(x)
    total = np.full(1, float(n))
    points = grid.by_cluster(np.arange(n), np.arange(n))  # each row its own weight: its x at +, its y at -
    parts = list(blocks(realizations, block_size(grid, points, len(points.rows))))  # a few bytes per point
    prompt = block[points.clusters]  # the prompt of each row with points (a row whose x and y tie has none)
    one, minus = np.int8(1), np.int8(-1)  # small integer weights: exact, and 1 byte per (row, realization)
    base = []
    for b in parts:
        local = plants.swaps(b, prompt).T
        side_a = np.where(local & 1, minus, one)  # the signed mass at x_i (at y_i: its negative)
        sign = np.where(local & 2, minus, one)
        del local
        base.append((ClusterMass(grid, points, side_a, total).cumulative.astype(np.float32),
                     ClusterMass(grid, points, sign * side_a, total).cumulative.astype(np.float32)))

    def fires(share: float) -> dict[str, tuple[float, float]]:
        found, null = {name: [] for name in stats}, {name: [] for name in stats}
        for (unplanted, swapped), b in zip(base, parts, strict=True):
            got, under_null = planted(grid, total, unplanted, swapped, plants, b, share * QUANTA, block, unit)
            for name, stat in stats.items():
                found[name].append(stat(got))
                null[name].append(stat(under_null))
        out = {}
        for name in stats:
            found_all, null_all = np.concatenate(found[name]), np.concatenate(null[name])
            bar = float(np.quantile(null_all, 1 - alpha))
            out[name] = float((found_all > bar + 1e-12).mean()), float(found_all.mean() - null_all.mean())
        return out

    return fires


PARTS = 4
"""How finely a planted change of content varies between prompts (see :func:`similarity_detectable_gap`)."""
QUANTA = 1 << 16
"""The grid of the uniform draws that decide what is planted (2^-16, finer than the bisection's 1e-4)."""


def similarity_detectable_gap(
    floor: np.ndarray, floor_clusters: Sequence[object], cross: np.ndarray, cross_clusters: Sequence[object],
    changed: np.ndarray, *, confidence: float = 0.95, tests: int = 1, power: float = 0.8, seed: int = 0,
    realizations: int | None = None,
) -> DetectableGap:
    """Minimum detectable similarity gap, found by planting a change of content in the run's data.

    The gap is tested by :func:`paired_gap_test` (floor minus cross-group similarity per prompt).
    Under a real group effect the per-prompt differences spread wider than under none, so the
    standard error of a fair run promises more power than the test has (measured: 59-74% at the
    stated gap). Instead, the test is simulated on this run's own answers:

    * each realization flips the sign of every prompt's difference with probability 1/2, a draw
      from "no difference" (the two matchings of a prompt's answers swap roles);
    * then it plants a change of content. A pair "fully changed" scores ``changed``: its first
      answer against an answer to another prompt. Whether the group matters is a property of the
      prompt, so the change is drawn per prompt, shared by its samples and control pairs: each of
      ``PARTS`` parts of a prompt's answers is changed with probability ``share``, and the prompt's
      cross-group similarity drops by that fraction of the full change. Real effects that vary
      between prompts more (all or nothing) need a larger gap; effects that vary less, a smaller.

    The share is raised (bisection) until the paired t-test at alpha / ``tests`` (Holm's bar for the
    one pair that differs), with a positive gap, finds the planted change in ``power`` of the
    realizations. The stated gap is the mean planted gap at that share, in the units of the stored
    gap. Checked by simulation in ``tests/test_detectable_gap.py``; the number of parts is the one
    modelling choice, and with four the measured power at the stated gap is in the 75-85% band for
    sampling and deterministic models (``tests/benchmarks/bench_verdict_power.py``).
    """
    with IMPORTING:
        from scipy.stats import t as student

    (floor_codes, cross_codes), ids = cluster_codes(floor_clusters, cross_clusters)
    floor_mean = cluster_means(floor, floor_codes, ids)
    cross_mean = cluster_means(cross, cross_codes, ids)
    both = ~np.isnan(floor_mean) & ~np.isnan(cross_mean)  # the prompts with both, in sorted order
    k = int(both.sum())
    if k < 2:
        return DetectableGap(None, None, power, "fewer than two prompts with both a cross-group pair and a floor")
    d0 = (floor_mean - cross_mean)[both]
    drop = cluster_means(np.asarray(cross, float) - np.asarray(changed, float), cross_codes, ids)[both]
    if realizations is None:
        realizations = int(min(2000, max(200, 2e7 // (PARTS * k))))
    rng = np.random.default_rng(seed)
    signs = np.where(coin_flips(rng, realizations, k), np.int8(-1), np.int8(1))
    # each part's draw on a grid of 2^-16, finer than the bisection's 1e-4: the top 16 bits of the
    # word of cell (realization, prompt * PARTS + part), computed where read (:func:`equilens.tasks.stats.kernels.cell_word`);
    # only each prompt's lowest part is held (at 72,000 prompts and 200 realizations, 29 MB of 144)
    key = np.uint64(rng.integers(0, 2**63))
    bar = float(student.ppf(1 - (1 - confidence) / max(tests, 1) / 2, k - 1))
    # a realization's per-prompt differences are d = sign * d0 + changed * drop, changed the share of
    # the prompt's parts below the planted share; their sum and sum of squares take three sums over
    # the prompts (:func:`_planted_sums`, one pass over the parts per bisection step)
    unplanted = np.concatenate([signs[b].astype(float) @ d0 for b in row_blocks(realizations, k)])
    squares, crossed, dropped = float(d0 @ d0), d0 * drop, drop * drop
    lowest = np.empty((realizations, k), np.uint16)  # a prompt none of whose parts is below the share is skipped
    per_thread = max(1, realizations // (os.cpu_count() or 1))
    run_chunked(lambda lo, hi: _lowest_parts(key, lo, hi, lowest), realizations, per_thread,
                cells_per_item=k * PARTS)

    def fires(share: float) -> tuple[float, float]:
        sums = np.empty((3, realizations))
        run_chunked(lambda lo, hi: _planted_sums(key, lowest, signs, drop, crossed, dropped, share * QUANTA, lo, hi,
                                                  sums),
                    realizations, per_thread, cells_per_item=k * PARTS)
        planted, mixed, planted_sq = sums
        mean = (unplanted + planted) / k
        total_sq = squares + 2 * mixed + planted_sq
        se = np.sqrt(np.maximum(total_sq - k * mean * mean, 0.0) / (k - 1) / k)
        with np.errstate(divide="ignore", invalid="ignore"):
            found = np.where(se > 1e-12 * (1 + np.abs(mean)), mean / se > bar, mean > 0)
        return float(found.mean()), float(mean.mean())

    return _smallest_share(fires, power, "even answers given wholly another prompt's content are")


@njit(cache=True, nogil=True)
def _part_draw(key: np.uint64, r: int, j: int, p: int) -> np.uint64:
    """Realization r's draw for part p of prompt j, on the 2^-16 grid."""
    return cell_word(key, r, j * PARTS + p) >> np.uint64(48)


@njit(cache=True, nogil=True)
def _lowest_parts(key: np.uint64, lo: int, hi: int, out: np.ndarray) -> None:
    """out[r, j] = the lowest of prompt j's part draws in realization r, for realizations lo..hi."""
    for r in range(lo, hi):
        for j in range(out.shape[1]):
            low = _part_draw(key, r, j, 0)
            for p in range(1, PARTS):
                low = min(low, _part_draw(key, r, j, p))
            out[r, j] = low


@njit(cache=True, nogil=True)
def _planted_sums(key: np.uint64, lowest: np.ndarray, signs: np.ndarray, drop: np.ndarray, crossed: np.ndarray,
                  dropped: np.ndarray, threshold: float, lo: int, hi: int, out: np.ndarray) -> None:
    """For realizations lo..hi: with c_j the share of prompt j's parts below ``threshold``, out[0] =
    sum c_j drop_j, out[1] = sum sign_j c_j crossed_j, out[2] = sum c_j^2 dropped_j (``lowest``: each
    prompt's lowest part, so a prompt with none below costs one comparison, and only the others'
    part draws are computed again)."""
    k = lowest.shape[1]
    for r in range(lo, hi):
        planted = mixed = planted_sq = 0.0
        for j in range(k):
            if lowest[r, j] >= threshold:
                continue
            below = 0
            for p in range(PARTS):
                if _part_draw(key, r, j, p) < threshold:
                    below += 1
            c = below / PARTS
            planted += c * drop[j]
            mixed += signs[r, j] * c * crossed[j]
            planted_sq += c * c * dropped[j]
        out[0, r], out[1, r], out[2, r] = planted, mixed, planted_sq


def _smallest_share(fires: Callable[[float], tuple[float, float]], power: float, at_full: str) -> DetectableGap:
    """The smallest planted share that ``fires`` (share -> (share of realizations found, mean gap))
    finds with ``power``, by bisection to 1e-4, and its mean gap; none when even the full share
    (``at_full``, in words up to "found") falls short. The realizations' draws are fixed, so power
    rises with the share. Each share is simulated once (the last step's share is not run again)."""
    from functools import cache

    fires = cache(fires)
    got, _ = fires(1.0)
    if got < power:
        return DetectableGap(None, None, power, f"{at_full} found in only {got:.0%} of simulated runs")
    low_s, high_s = 0.0, 1.0
    while high_s - low_s >= 1e-4:
        mid = (low_s + high_s) / 2
        if fires(mid)[0] >= power:
            high_s = mid
        else:
            low_s = mid
    return DetectableGap(fires(high_s)[1], high_s, power)
