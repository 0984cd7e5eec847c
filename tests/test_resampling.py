"""Parity statistics as reweightings of one sorted grid (tasks.stats.resampling): each reweighting gives the
value the metric's own function gives on the data it stands for, and the draws have the law they
claim."""

from __future__ import annotations

import numpy as np
import pytest
from equilens.tasks.metrics import METRICS
from equilens.tasks.stats import cluster_index, permutation_test
from equilens.tasks.stats import planted as pl
from equilens.tasks.stats import resampling as rs

PARITY = ["strict_sentiment_parity", "weak_sentiment_parity"]


def _stat(name: str):
    return METRICS.get(name).cdf_statistic


def test_a_reweighting_gives_the_value_of_the_repeated_rows_worked_by_hand() -> None:
    # rows (x, y): (0.1, 0.2) drawn twice, (0.4, 0.8) once: side a = [.1, .1, .4], side b = [.2, .2, .8]
    x, y = np.array([0.1, 0.4]), np.array([0.2, 0.8])
    w = np.array([[2.0], [1.0]])
    mass = rs.SignedMass(rs.Grid(x, y), w, -w, w.sum(axis=0))
    # Wasserstein-1 of equal-size samples: mean |sorted a - sorted b| = (0.1 + 0.1 + 0.4) / 3
    assert _stat("strict_sentiment_parity")(mass)[0] == pytest.approx(0.2)
    # share above 0.5: a has 0 of 3, b has 1 of 3
    assert _stat("weak_sentiment_parity")(mass, threshold=0.5)[0] == pytest.approx(1 / 3)
    # the swap of the second row's sides (signed mass -1): a = [.1, .1, .8], b = [.2, .2, .4]
    s = np.array([[2.0], [-1.0]])
    swapped = rs.SignedMass(rs.Grid(x, y), s, -s, w.sum(axis=0))
    assert _stat("strict_sentiment_parity")(swapped)[0] == pytest.approx((0.1 + 0.1 + 0.4) / 3)
    assert _stat("weak_sentiment_parity")(swapped, threshold=0.5)[0] == pytest.approx(1 / 3)


def test_a_prompt_whose_two_sides_score_the_same_carries_no_points_worked_by_hand() -> None:
    # prompt 0: x = .2, .4 and y = .4, .2 (its sides hold the same scores); prompt 1: x = .7, y = .1
    x, y, prompts = np.array([0.2, 0.4, 0.7]), np.array([0.4, 0.2, 0.1]), np.array([0, 0, 1])
    grid = rs.Grid(x, y)  # distinct scores .1 .2 .4 .7
    points = grid.by_cluster(prompts, prompts)
    # prompt 0's four points cancel under any weight of the prompt: only prompt 1's two are left,
    # and only prompt 1 needs a weight
    assert points.clusters.tolist() == [1] and points.rows.tolist() == [0, 0]
    assert points.sides.tolist() == [-1.0, 1.0] and points.places.tolist() == [0, 3]
    # a resample drawing prompt 1 three times: side a minus side b at or below each score is -3
    # (prompt 1's y) up to .4, then 0 once prompt 1's x at .7 is in
    counts = np.array([[3]], np.uint8)
    assert rs.ClusterMass(grid, points, counts, np.array([7.0])).cumulative[:, 0].tolist() == [-3.0, -3.0, -3.0, 0.0]


@pytest.mark.parametrize("decimals", [None, 1])  # 1: most scores tied, summed into 11 grid points
@pytest.mark.parametrize("name", PARITY)
def test_every_bootstrap_resample_equals_the_metric_on_the_resampled_rows(name: str, decimals: int | None) -> None:
    rng = np.random.default_rng(0)
    x, y = rng.random(120), rng.random(120)
    x[:6] = y[6:12] = 0.5  # ties at the threshold count as not above it
    if decimals is not None:
        x, y = x.round(decimals), y.round(decimals)
    clusters = np.repeat(np.arange(30), 4).astype(str)
    draws = rs.Draws.draw(clusters, 25, seed=3)
    rows = draws.rows(clusters)
    got = rs.bootstrap({name: _stat(name)}, x, y, rows, draws)[name]
    fn = METRICS.get(name).fn
    want = [fn(np.repeat(x, draws.counts[rows, b]), np.repeat(y, draws.counts[rows, b])) for b in range(25)]
    np.testing.assert_allclose(got, want, atol=1e-12)
    assert (draws.counts.sum(axis=0) == 30).all()  # each resample draws as many prompts as there are


@pytest.mark.parametrize("name", PARITY)
def test_the_label_swaps_are_the_permutation_tests_own(name: str) -> None:
    rng = np.random.default_rng(1)
    x, y = rng.random(200), np.clip(rng.random(200) + 0.05, 0, 1)
    clusters = np.repeat(np.arange(50), 4).astype(str)
    fn = METRICS.get(name).fn
    test = permutation_test(fn, x, y, clusters, 300, seed=9)
    null = rs.permutations({name: _stat(name)}, x, y, cluster_index(clusters)[0], 300, seed=9)[name]
    assert null.mean() == pytest.approx(test.null_mean, abs=1e-12)
    assert (int((null >= test.observed - 1e-12).sum()) + 1) / 301 == pytest.approx(test.p_value)


def test_a_swap_moves_a_binomial_half_of_a_prompts_drawn_copies() -> None:
    rng = np.random.default_rng(2)
    sizes = np.array([*range(13), 63, 64, 65, 130])  # above 64: more than one random word per cell
    counts = np.repeat(sizes, 20_000).reshape(len(sizes), 20_000)
    moved = (counts - rs.swapped_copies(counts, rng)) / 2
    assert ((moved >= 0) & (moved <= counts)).all()
    assert (np.abs(moved.mean(axis=1) - sizes / 2) <= 0.03 + 0.01 * np.sqrt(sizes)).all()  # within ~4 s.e.
    np.testing.assert_allclose(moved.var(axis=1) / np.maximum(sizes, 1), np.where(sizes > 0, 0.25, 0), atol=0.015)
    again = (counts - rs.swapped_copies(counts, np.random.default_rng(2))) / 2
    assert (again == moved).all()  # the same seed, the same swaps
    assert (np.corrcoef(moved[12], moved[12][::-1])[0, 1]) < 0.05  # no visible pattern along a row


@pytest.mark.parametrize("decimals", [None, 2])  # 2: scores rounded as a scorer does, ties summed on the grid
@pytest.mark.parametrize("name", PARITY)
def test_the_detectable_gap_on_the_grid_equals_the_sorted_one(name: str, decimals: int | None) -> None:
    from equilens.tasks.stats.detectable_gap import parity_detectable_gap

    rng = np.random.default_rng(4)
    x = rng.beta(2, 5, 400)
    y = np.clip(x + rng.normal(0, 0.1, 400), 0, 1)
    if decimals is not None:
        x, y = x.round(decimals), y.round(decimals)
    clusters = np.repeat(np.arange(100), 4).astype(str)
    spec = METRICS.get(name)
    sorted_rows = parity_detectable_gap(spec.fn, x, y, clusters, tests=2, seed=5, realizations=400)
    on_grid = parity_detectable_gap(spec.fn, x, y, clusters, tests=2, seed=5, realizations=400,
                                    cdf_statistic=spec.cdf_statistic)
    assert on_grid.share == sorted_rows.share
    assert on_grid.gap == pytest.approx(sorted_rows.gap, abs=1e-12)


def test_the_metrics_of_a_pair_share_planted_realizations_and_get_what_each_gets_alone() -> None:
    from equilens.tasks.stats.detectable_gap import parity_detectable_gap, parity_detectable_gaps

    rng = np.random.default_rng(8)
    x = rng.beta(2, 5, 600).round(2)
    y = np.where(rng.random(600) < 0.7, x, rng.beta(2, 4, 600).round(2))  # most rows' two sides tie
    clusters = np.repeat(np.arange(300), 2)
    stats = {name: _stat(name) for name in PARITY}
    together = parity_detectable_gaps(stats, x, y, clusters, tests=3, seed=2, realizations=300)
    for name in PARITY:
        alone = parity_detectable_gap(METRICS.get(name).fn, x, y, clusters, tests=3, seed=2, realizations=300,
                                      cdf_statistic=stats[name])
        assert together[name] == alone and alone.gap is not None


def test_the_draws_are_reproducible_and_shared_by_the_pairs_of_an_attribute() -> None:
    prompts = [f"p{i}" for i in range(40)]
    a, b = rs.Draws.draw(prompts, 50, seed=7), rs.Draws.draw(prompts, 50, seed=7)
    assert (a.counts == b.counts).all()
    assert not (rs.Draws.draw(prompts, 50, seed=8).counts == a.counts).all()
    with pytest.raises(ValueError, match="not among the drawn"):
        a.rows(["p1", "elsewhere"])


def test_the_draws_are_one_byte_counts_of_each_prompt_in_each_resample() -> None:
    """The shared draws hold, per prompt (row) and resample (column), how often the prompt was
    drawn, in one byte: the multinomial draws of :func:`equilens.tasks.stats.cluster_draws` from the same
    seed, block by block."""
    from equilens.tasks.stats import cluster_draws

    prompts = [f"p{i:03d}" for i in range(300)]
    draws = rs.Draws.draw(prompts, 40, seed=5)
    expected = cluster_draws(np.random.default_rng(5), 300, 40).T
    assert draws.counts.dtype == np.uint8 and draws.counts.flags.c_contiguous
    np.testing.assert_array_equal(draws.counts, expected)
    assert (draws.counts.sum(axis=0) == 300).all()  # each resample draws as many prompts as there are


def test_answers_moved_to_the_top_equal_the_moved_data_worked_densely() -> None:
    """The planted running sums (one compiled pass for both blocks, each draw computed where read
    from the plants' keys, per prompt and per answer unit) equal the running sums of the data with
    the chosen side-b answers (x_i where a row's prompt is flipped, else y_i) moved to the top of the
    range, built point by point from the draws held as arrays and spread to every row: +1 each in
    the first block, the null's sign in the second. The block starts at realization 3, as a later
    block of realizations does."""
    rng = np.random.default_rng(6)
    n, m, prompts, units = 50, 8, 12, 30
    x, y = rng.random(n).round(1), rng.random(n)  # ties: several answers on one grid point
    block, unit = rng.integers(0, prompts, n), rng.integers(0, units, n)
    grid = rs.Grid(x, y, extra=[1.0])
    plants, realizations = pl.Plants.draw(np.random.default_rng(7)), slice(3, 3 + m)
    swaps, turn = plants.swaps(realizations, np.arange(prompts)), plants.turns(realizations, np.arange(units))
    flips, again = (swaps & 1) > 0, (swaps & 2) > 0
    stay, sign, turned = ~flips.T[block], np.where(again.T[block], -1, 1), turn.T[unit]  # (rows, reweightings)
    side = np.where(stay, 1.0, -1.0)
    total = np.full(1, float(n))
    found_base = rs.SignedMass(grid, side, -side, total).cumulative.astype(np.float32)
    null_base = rs.SignedMass(grid, sign * side, -sign * side, total).cumulative.astype(np.float32)
    for threshold in (0, 2**15, 2**16):
        got = pl.planted(grid, total, found_base, null_base, plants, realizations, threshold, block, unit)
        for w, mass in zip((np.ones((n, m)), sign.astype(float)), got, strict=True):
            moved = np.where(turned < threshold, w, 0.0)
            dense = rs.SignedMass(grid, w * side + np.where(~stay, moved, 0), -w * side + np.where(stay, moved, 0),
                                  total, -moved.sum(axis=0, keepdims=True)).cumulative
            np.testing.assert_array_equal(mass.cumulative, dense)
            for t in (-1.0, 0.2, 0.5, 1.0, 2.0):
                j = int(np.searchsorted(grid.values, t, side="right")) - 1
                np.testing.assert_array_equal(mass.at_or_below(t), dense[j] if j >= 0 else np.zeros(m))


def test_the_plants_are_fair_coins_and_uniform_draws_independent_of_each_other() -> None:
    plants = pl.Plants.draw(np.random.default_rng(3))
    swaps = plants.swaps(slice(0, 400), np.arange(500))
    turns = plants.turns(slice(0, 400), np.arange(500)).astype(float) / 2**16
    flips, again = ((swaps & 1) > 0).astype(float), ((swaps & 2) > 0).astype(float)
    assert abs(flips.mean() - 0.5) < 0.005 and abs(again.mean() - 0.5) < 0.005  # 200,000 coins: s.e. 0.0011
    assert abs(turns.mean() - 0.5) < 0.003 and abs(turns.var() - 1 / 12) < 0.002
    for a, b in ((flips, again), (flips, turns), (flips[:, :-1], flips[:, 1:]), (turns[:-1], turns[1:])):
        assert abs(np.corrcoef(a.ravel(), b.ravel())[0, 1]) < 0.01
    # a later block of realizations reads the same cells as the whole draw
    np.testing.assert_array_equal(plants.swaps(slice(100, 140), np.arange(500)), swaps[100:140])
    assert not (pl.Plants.draw(np.random.default_rng(4)).swaps(slice(0, 400), np.arange(500)) == swaps).all()


def test_a_similarity_interval_from_the_shared_draws_is_the_mean_of_the_repeated_rows() -> None:
    """Each shared resample's mean weights a row by its prompt's draw count: the interval equals the
    quantiles of the plain means of the rows repeated that often; a prompt outside the draws, or a
    resample that drew none of the pair's prompts, gives None (the caller draws its own)."""
    rng = np.random.default_rng(3)
    draws = rs.Draws.draw([f"p{i}" for i in range(400)], 50, seed=2)
    clusters = np.repeat([f"p{i}" for i in range(300)], 2).astype(object)
    values = rng.random(600)
    counts = draws.counts[draws.rows(clusters)]
    means = [np.repeat(values, counts[:, r]).mean() for r in range(50)]
    low, high = rs.shared_mean_bootstrap(values, clusters, draws, 0.95)
    assert (low, high) == pytest.approx(tuple(np.quantile(means, [0.025, 0.975])), abs=1e-12)
    assert rs.shared_mean_bootstrap(values, np.array(["elsewhere"] * 600, dtype=object), draws, 0.95) is None
    by_hand = rs.Draws(np.array(["a", "b", "c"]), np.array([[1, 0], [2, 3], [0, 0]], np.uint16))
    assert rs.shared_mean_bootstrap(np.ones(2), np.array(["a", "a"], dtype=object), by_hand, 0.9) is None  # r=1: no a
    assert rs.shared_mean_bootstrap(np.array([0.0, 1.0]), np.array(["b", "b"], dtype=object), by_hand, 0.9) == \
        pytest.approx((0.5, 0.5))


@pytest.mark.parametrize("k", [2, 3, 4])
def test_the_omnibus_read_off_running_sums_equals_the_test_permutation_by_permutation(k: int) -> None:
    """Same draws, same statistic: the p-value from the sorted-once pass (ties on a 0.1 grid, prompts
    with two rows each) equals sorting every permuted matrix, for both parity statistics."""
    from equilens.tasks.metrics.counterfactual import (
        share_above_gap_of_cdfs,
        strict_sentiment_parity,
        wasserstein1_of_cdfs,
        weak_sentiment_parity,
    )
    from equilens.tasks.stats.omnibus import permutation_pvalue_omnibus

    rng = np.random.default_rng(k)
    matrix = np.round(rng.random((60, k)), 1)
    matrix[:, 0] = np.minimum(1.0, matrix[:, 0] + 0.1)  # a gap, so p-values are not all near 1
    prompts = np.repeat(np.arange(30), 2)
    for fn, cdf in [(strict_sentiment_parity, wasserstein1_of_cdfs), (weak_sentiment_parity, share_above_gap_of_cdfs)]:
        looped = permutation_pvalue_omnibus(fn, matrix, prompts, 400, seed=11)
        assert permutation_pvalue_omnibus(fn, matrix, prompts, 400, seed=11, cdf=cdf) == looped
        assert 0 < looped < 1


def test_the_wasserstein_integral_of_a_running_sum_worked_by_hand() -> None:
    """sum_j widths[j] |C[j, r]| over the first len(widths) rows: column 0 is 0.5 * 1 + 2 * 3 = 6.5,
    column 1 is 0.5 * |-2| + 2 * 4 = 9 (the last row, past the widths, is not read)."""
    from equilens.tasks.stats.resampling import weighted_abs_rows

    cumulative = np.array([[1.0, -2.0], [3.0, 4.0], [5.0, 6.0]])
    assert weighted_abs_rows(cumulative, np.array([0.5, 2.0])).tolist() == [6.5, 9.0]
