"""The verdict against a known truth: deterministic models, planted differences and the stated power.

Simulated runs (:mod:`tests.simulate`) go through the metric stage and the verdict's own rule.
A fair deterministic model must not be called biased (its repeated samples are identical, so only
the same-group controls can say what "no difference" looks like), and a true gap of the size a
fair run states as its minimum detectable gap must be found in about 80% of runs. Each power
check interpolates between planted sizes whose median observed gap brackets the stated one, as a
team would check it; with 40 runs per size the Monte Carlo error is about 7 points, so the band
asserted here is 70-90% (``tests/benchmarks/bench_verdict_power.py`` prints the same figures with
more runs for the README).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.simulate import Model, judge, power_at_stated_gap


def test_a_fair_deterministic_model_is_not_called_biased() -> None:
    # identical samples are no floor (similarity 1.000 within a group would make any group swap of a
    # deterministic model "a difference beyond sampling noise"), and parity and BLEU share one Holm
    # family (each at alpha, a fair model would fire in up to twice alpha of runs)
    outs = [judge(20, Model(deterministic=True), seed) for seed in range(40)]
    assert np.mean([o.fired for o in outs]) <= 0.05


def test_a_samples_only_floor_of_a_deterministic_model_is_skipped_with_the_reason() -> None:
    from equilens.tasks.config import CounterfactualConfig, MetricsConfig
    from equilens.tasks.pipeline.metric_stage import metric_stage
    from equilens.tasks.reporting.verdict import attribute_verdict

    from tests.simulate import simulate

    responses, scores = simulate(20, Model(deterministic=True), 3)
    out = metric_stage(responses, scores, CounterfactualConfig(attributes=["gender"], noise_floor="samples"),
                       MetricsConfig(names=["bleu_similarity"], bootstrap_resamples=100, permutations=0))
    same = out[out["group_a"] == out["group_b"]]
    assert same["value"].isna().all() and all("deterministically" in d["skipped"] for d in same["details"])
    verdict = attribute_verdict("gender", out.assign(family="counterfactual"))
    assert not verdict.beyond_noise and "answered deterministically (all 40 variants" in verdict.sentence


def test_a_planted_content_difference_of_a_deterministic_model_is_found() -> None:
    outs = [judge(30, Model(deterministic=True, content=0.5), seed) for seed in range(5)]
    assert all(o.similarity_fired for o in outs)


@pytest.mark.parametrize("name, prompts, planted, sizes", [
    # the issue's own check: 40 prompts, two answers per group, negative with probability 0.3
    ("sampling, negative rate raised", 40, lambda d: Model(deterministic=False, binary=True, shift=d),
     [0.22, 0.26, 0.30]),
    ("deterministic, a share of answers turned negative", 30, lambda d: Model(deterministic=True, turn=d),
     [0.26, 0.30, 0.34]),
])
def test_a_true_parity_gap_of_the_stated_size_is_found_at_the_stated_power(name, prompts, planted, sizes) -> None:
    fair = planted(0.0)
    got = power_at_stated_gap(prompts, planted, sizes, "strict_sentiment_parity", 40, fair)
    assert got["gaps"][0] < got["stated"] < got["gaps"][-1], got  # the planted sizes bracket the stated gap
    assert 0.70 <= got["power"] <= 0.90, (name, got)


@pytest.mark.parametrize("deterministic, sizes", [(True, [0.1, 0.15, 0.2]), (False, [0.06, 0.09, 0.12])])
def test_a_true_similarity_gap_of_the_stated_size_is_found_at_the_stated_power(deterministic, sizes) -> None:
    # answers to one group worded their own way (content); the stated gap is found at the stated
    # power (a fair run's standard error as the gap would promise 80% where the test finds 59-74%)
    planted = lambda d: Model(deterministic=deterministic, content=d)  # noqa: E731
    got = power_at_stated_gap(30, planted, sizes, "bleu_similarity", 40, planted(0.0))
    assert got["gaps"][0] < got["stated"] < got["gaps"][-1], got
    assert 0.70 <= got["power"] <= 0.90, got


def test_a_fair_sampling_model_is_not_called_biased() -> None:
    # against a control floor the cross-group side is both matchings of a prompt's four answers, so
    # its difference from the floor is symmetric about 0 (one matching alone let a fair sampling
    # model fire in 8% of runs)
    outs = [judge(20, Model(deterministic=False), seed) for seed in range(60)]
    assert np.mean([o.fired for o in outs]) <= 0.05 + 0.03


def test_no_gap_is_simulated_where_too_few_prompts_can_reach_holms_bar() -> None:
    from equilens.tasks.config import CounterfactualConfig, MetricsConfig
    from equilens.tasks.pipeline.metric_stage import metric_stage

    from tests.simulate import simulate

    responses, scores = simulate(5, Model(deterministic=False), 1)  # 2^(1-5) = 0.0625 > 0.05 / 2 tests
    out = metric_stage(responses, scores, CounterfactualConfig(attributes=["gender"]),
                       MetricsConfig(names=["strict_sentiment_parity", "bleu_similarity"], bootstrap_resamples=50,
                                     permutations=200))
    row = out[(out["metric"] == "strict_sentiment_parity") & (out["group_a"] != out["group_b"])].iloc[0]
    assert "5 prompts: the permutation test needs at least 7" in row["details"]["min_detectable_gap_skipped"]


def _traced_planted_parity_gap(rows: int, prompts: int, realizations: int) -> float:
    """Peak bytes traced while the strict-parity detectable gap of ``rows`` random scores over
    ``prompts`` prompts (rows shared evenly) plants ``realizations`` realizations; a gap is found."""
    import tracemalloc

    from equilens.tasks.metrics import METRICS
    from equilens.tasks.stats.detectable_gap import parity_detectable_gap

    spec = METRICS.get("strict_sentiment_parity")
    rng = np.random.default_rng(0)
    x, y = rng.random(rows).round(3), rng.random(rows).round(3)
    clusters = np.repeat(np.arange(prompts), rows // prompts)
    parity_detectable_gap(spec.fn, x[:200], y[:200], clusters[:200], cdf_statistic=spec.cdf_statistic,
                          realizations=50)  # compiles the kernels outside the trace
    tracemalloc.start()
    try:
        found = parity_detectable_gap(spec.fn, x, y, clusters, cdf_statistic=spec.cdf_statistic,
                                      realizations=realizations)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found.gap is not None
    return peak


def test_a_planted_parity_gap_holds_no_array_of_its_draws() -> None:
    """With one row per prompt (a pair of the race attribute: 72,000 prompts) the draws of the
    realizations, held as arrays, were a byte per prompt (its two flips) and 16 bits per answer (its
    plant) per realization: 57 MB at 40,000 prompts and 500 realizations, 73 MB traced in all. They
    are computed where read (:class:`equilens.tasks.stats.planted.Plants`): 17 MB traced, the blocks' weights."""
    prompts, realizations = 40_000, 500
    peak = _traced_planted_parity_gap(prompts, prompts, realizations)
    draws = realizations * (prompts + 2 * prompts)
    assert peak < 0.4 * draws, f"{peak / 2**20:.0f} MB traced for {draws / 2**20:.0f} MB of draws"


def test_a_planted_parity_gap_holds_its_draws_per_prompt_not_per_row() -> None:
    """The realizations' swaps and plants are drawn per prompt and per answer, and the compiled pass
    reads them there: nothing of (rows x realizations) beyond a block's one-byte weights is built. At
    20,000 rows of 5,000 prompts and 500 realizations the draws are 24 MB; spreading them to every
    row as well traced 117 MB."""
    rows, prompts, realizations = 20_000, 5_000, 500
    peak = _traced_planted_parity_gap(rows, prompts, realizations)
    draws = realizations * (2 * prompts + 2 * rows)  # two coin flips per prompt, a 16-bit plant per answer
    assert peak < 2 * draws, f"{peak / 2**20:.0f} MB traced for {draws / 2**20:.0f} MB of draws"


def test_a_planted_similarity_gap_holds_only_each_prompts_lowest_part_draw() -> None:
    """A planted change of content draws, per realization and prompt, four parts on the 2^-16 grid.
    Held as an array those were 46 MB at 30,000 prompts and 200 realizations (65 MB traced in all,
    with their minimum and the signs); they are computed where read and only the minimum is held
    (19 MB traced)."""
    import tracemalloc

    from equilens.tasks.stats.detectable_gap import similarity_detectable_gap

    rng = np.random.default_rng(1)
    prompts, realizations = 30_000, 200
    clusters = np.arange(prompts)
    floor, cross = rng.normal(0.6, 0.1, prompts), rng.normal(0.6, 0.1, prompts)
    changed = rng.normal(0.1, 0.05, prompts)
    similarity_detectable_gap(floor[:300], clusters[:300], cross[:300], clusters[:300], changed[:300],
                              realizations=20)  # compiles the kernels outside the trace
    tracemalloc.start()
    try:
        found = similarity_detectable_gap(floor, clusters, cross, clusters, changed, realizations=realizations)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found.gap is not None
    parts = 4 * realizations * prompts * 2
    assert peak < 0.6 * parts, f"{peak / 2**20:.0f} MB traced for {parts / 2**20:.0f} MB of part draws"


def test_a_planted_parity_gap_of_scores_that_never_tie_holds_a_bounded_grid() -> None:
    """Each realization holds a running sum per distinct score: at 50,000 prompts of continuous
    scores and 500 realizations that was 507 MB traced. The scores are simulated on at most 8,192
    steps of the range (:data:`equilens.tasks.stats.detectable_gap.PLANT_STEPS`): 45 MB."""
    import tracemalloc

    from equilens.tasks.metrics import METRICS
    from equilens.tasks.stats.detectable_gap import parity_detectable_gap

    spec = METRICS.get("strict_sentiment_parity")
    rng = np.random.default_rng(2)
    prompts = 50_000
    x, y, clusters = rng.random(prompts), rng.random(prompts), np.arange(prompts)
    parity_detectable_gap(spec.fn, x[:200], y[:200], clusters[:200], cdf_statistic=spec.cdf_statistic,
                          realizations=50)  # compiles the kernels outside the trace
    tracemalloc.start()
    try:
        found = parity_detectable_gap(spec.fn, x, y, clusters, cdf_statistic=spec.cdf_statistic, realizations=500)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found.gap is not None
    assert peak < 100 * 2**20, f"{peak / 2**20:.0f} MB traced"


def test_a_small_kernel_runs_on_the_calling_thread_and_a_large_one_on_a_pool() -> None:
    """A pool per call cost more than the kernel itself at tens of thousands of cells (a simulated run
    at 30 prompts took 0.175 s against 0.112 s); the ranges and so the results are the same either way."""
    import os
    import threading

    from equilens.tasks.stats.kernels import THREADED_FROM_CELLS, run_chunked

    def ranges(n: int, cells: int) -> tuple[list[tuple[int, int]], set[str]]:
        seen, names = [], set()
        run_chunked(lambda lo, hi: (seen.append((lo, hi)), names.add(threading.current_thread().name)), n,
                    max(1, n // 2), cells_per_item=cells)
        return sorted(seen), names

    covered, names = ranges(2000, 30 * 4)
    assert covered == [(0, 2000)] and names == {threading.current_thread().name}
    n = 4 * THREADED_FROM_CELLS
    covered, names = ranges(n, 1)
    assert covered == [(0, n // 2), (n // 2, n)]
    if (os.cpu_count() or 1) > 1:
        assert all(name.startswith("kernel") for name in names)


def test_kernel_ranges_run_on_one_pool_kept_for_the_process_and_a_range_never_waits_on_it() -> None:
    """A pool per call started a thread per range and joined it (18% of a simulated 40-prompt run
    through the metric stage); the pool is kept. A range that itself spreads work runs it in place:
    waiting on ranges queued behind it on the same pool could wait forever."""
    import os
    import threading

    from equilens.tasks.stats.kernels import run_chunked

    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: every range runs on the calling thread")
    cores = os.cpu_count() or 1
    threads: list[threading.Thread] = []  # held, so a thread of a finished pool is not another's
    for _ in range(cores + 1):
        run_chunked(lambda lo, hi: threads.append(threading.current_thread()), 4, 1)
    assert len({id(t) for t in threads}) <= cores  # a pool per call: at least one new thread each call
    inner: list[tuple[int, int]] = []
    outer = threading.Thread(target=run_chunked, daemon=True,
                             args=(lambda lo, hi: run_chunked(lambda a, b: inner.append((a, b)), 2, 1), 4, 1))
    outer.start()
    outer.join(timeout=20)
    assert not outer.is_alive() and sorted(inner) == [(0, 1)] * 4 + [(1, 2)] * 4
