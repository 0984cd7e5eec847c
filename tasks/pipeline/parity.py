"""Parity metrics of one pair of groups: their intervals, permutation tests, gaps beyond the
noise floor and minimum detectable gaps. A metric that declares a ``cdf_statistic`` gets every
resample and label swap as a reweighting of one sorted grid (:mod:`equilens.tasks.stats.resampling`); any other
parity metric gets its function called on each resample in turn. The pieces of every pair, and the
omnibus test across an attribute's groups, run on their own threads (:func:`parity_of_pairs`,
:func:`omnibus_tests`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd


@dataclass
class PairData:
    """Row-aligned answers of two sides (two groups, or two samples of one group): each row's two
    answers as places among the attribute's distinct texts, and its prompt
    (:func:`equilens.tasks.pipeline.pairs.number_answers`)."""

    left: np.ndarray
    right: np.ndarray
    clusters: np.ndarray

    def __len__(self) -> int:
        return len(self.left)


def answer_units(pair: PairData) -> np.ndarray:
    """One code per row, shared by the rows of one prompt with the same two answers (a deterministic
    endpoint's repeated samples): what a planted difference turns together."""
    if not len(pair):
        return np.zeros(0, np.int64)
    rows = np.column_stack([pair.clusters, pair.left, pair.right])
    return np.unique(rows, axis=0, return_inverse=True)[1].reshape(-1)


def parity_mdg(ctx: Any, names: list[str], s1: np.ndarray, s2: np.ndarray, pair: PairData, tests: int,
               units: np.ndarray) -> dict[str, dict]:
    """Per metric of ``names``, the parity gap this pair could detect (see
    :func:`equilens.tasks.stats.detectable_gap.parity_detectable_gap`), or why not. The metrics that declare a
    ``cdf_statistic`` share one set of planted realizations (:func:`equilens.tasks.stats.detectable_gap.parity_detectable_gaps`).
    Rows of one prompt with the same two answers (a deterministic endpoint's samples) are one unit
    (``units``: :func:`answer_units`, computed once for the pair's metrics)."""
    from equilens.tasks.metrics.judged import prompts_needed
    from equilens.tasks.stats import distinct_count
    from equilens.tasks.stats.detectable_gap import parity_detectable_gap, parity_detectable_gaps

    alpha = (1 - ctx.cfg.confidence) / max(tests, 1)
    perms = max(ctx.cfg.permutations, 200)
    prompts, needed = distinct_count(pair.clusters), prompts_needed(tests, 1 - ctx.cfg.confidence)
    if prompts < needed:  # no planted gap, however large, can reach Holm's bar: do not simulate one
        return dict.fromkeys(names, {"min_detectable_gap_skipped": f"{prompts} prompts: the permutation test needs "
                                     f"at least {needed} to reach p_holm < {1 - ctx.cfg.confidence:g} over {tests} tests"})
    if ctx.cfg.permutations and 1 / (perms + 1) >= alpha:
        return dict.fromkeys(names, {"min_detectable_gap_skipped": f"the permutation test's {perms} resamples cannot "
                                     f"reach p < {alpha:.2g} (alpha over {tests} pairs); raise metrics.permutations"})
    settings = {"confidence": ctx.cfg.confidence, "tests": tests, "bounds": ctx.score_bounds(), "seed": ctx.cfg.seed,
                "units": units}
    on_grid = {name: cdf for name in names if (cdf := ctx.parity_cdf(name)) is not None}
    found = parity_detectable_gaps(on_grid, s1, s2, pair.clusters, **settings) if on_grid else {}
    found |= {name: parity_detectable_gap(ctx.parity_fn(name), s1, s2, pair.clusters, **settings)
              for name in names if name not in on_grid}
    return {name: {"min_detectable_gap_skipped": found[name].why} if found[name].gap is None else
            {"min_detectable_gap": found[name].gap, "min_detectable_gap_tests": tests, "min_detectable_gap_method":
             f"planted score shift found by the verdict's rule in {found[name].power:.0%} of simulated runs "
             f"(alpha/{tests} for Holm over {tests} pair(s))"} for name in names}


def looped_parity(ctx: Any, fn: Callable, s1: np.ndarray, s2: np.ndarray, pair: PairData) -> tuple:
    """(estimate, permutation test, gap estimate) of a parity metric that declares no
    ``cdf_statistic``: the metric's function on each resample and label swap in turn."""
    from equilens.tasks.stats import bootstrap_stat, excess_over_null, permutation_test

    est = bootstrap_stat(fn, [s1, s2], pair.clusters, **ctx.boot)
    test = permutation_test(fn, s1, s2, pair.clusters, max(ctx.cfg.permutations, 200), ctx.cfg.seed)
    gap = bootstrap_stat(excess_over_null(fn, seed=ctx.cfg.seed), [s1, s2], pair.clusters,
                         **ctx.boot, with_labels=True)
    return est, test, gap

def vectorised_parity(ctx: Any, names: list[str], s1: np.ndarray, s2: np.ndarray, pair: PairData) -> dict:
    """Per metric that declares a ``cdf_statistic``: (estimate, permutation test, gap estimate),
    every resample and label swap a reweighting of one sorted grid (:mod:`equilens.tasks.stats.resampling`),
    computed for all the pair's metrics at once, with the attribute's shared bootstrap draws."""
    from equilens.tasks.stats import Estimate, PermutationTest, cluster_index, percentile_estimate, resampling

    if not names:
        return {}
    stats = {n: ctx.parity_cdf(n) for n in names}
    block, k = cluster_index(pair.clusters)
    cfg, n = ctx.cfg, len(s1)
    permuted = resampling.permutations(stats, s1, s2, block, max(cfg.permutations, 200), cfg.seed)
    draws = ctx.draws if k >= 2 and ctx.draws is not None and ctx.draws.resamples > 0 else None
    boot = gaps = {}
    if draws is not None:
        rows = draws.rows(pair.clusters)
        boot = resampling.bootstrap(stats, s1, s2, rows, draws)
        gaps = resampling.gap_bootstrap(stats, s1, s2, rows, draws, swaps=10, seed=cfg.seed)
    out = {}
    for name in names:
        observed = float(ctx.parity_fn(name)(s1, s2))
        null = permuted[name]
        test = PermutationTest(observed, (int((null >= observed - 1e-12).sum()) + 1) / (len(null) + 1),
                               float(null.mean()))
        if draws is not None:
            est = percentile_estimate(observed, boot[name], cfg.confidence, n)
            gap = percentile_estimate(float("nan"), gaps[name], cfg.confidence, n)
        else:
            est = gap = Estimate(observed, None, None, n)
        out[name] = (est, test, gap)
    return out


def parity_of_pairs(ctx: Any, attribute: str, pairs: list, tests: int) -> dict[tuple[str, str], Any]:
    """The parity rows of every pair of groups that has rows, their pieces computed on parallel
    threads (the numerical work releases the GIL), as functions keyed by the pair that wait for
    them; the caller emits the rows in order. The sentiment lookups run first, on this thread."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    work = [(a, b, pair, (ctx.sentiment_of(pair.left), ctx.sentiment_of(pair.right)))
            for a, b, pair in pairs if len(pair)]
    if not work or not ctx.of_kind("sentiment"):
        return {}
    pool = ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1), thread_name_prefix="parity")
    rows = {(a, b): ctx.parity_rows(attribute, a, b, pair, tests, scores, pool.submit)
            for a, b, pair, scores in work}
    pool.shutdown(wait=False)
    return rows


def omnibus_tests(ctx: Any, wide: pd.DataFrame, groups: list[str],
                  lacking: Callable[[], str]) -> dict[str, Any]:
    """Per sentiment metric of an attribute with three or more groups, the omnibus test of the largest
    gap among them (:func:`equilens.tasks.stats.omnibus.permutation_pvalue_omnibus`, prompts that answered every
    group) started on its own thread, as a future of its p-value; or why it cannot run."""
    from concurrent.futures import ThreadPoolExecutor

    from equilens.tasks.stats.omnibus import permutation_pvalue_omnibus

    names = ctx.of_kind("sentiment")
    if len(groups) <= 2 or not names:
        return {}
    full = wide[[g for g in groups if g in wide]].dropna() if len(wide) else pd.DataFrame()
    if full.shape[1] < len(groups) or len(full) < 2:
        return dict.fromkeys(names, lacking())
    matrix = np.column_stack([ctx.sentiment_of(full[g].to_numpy(np.int64)) for g in groups])
    prompts = full.index.get_level_values("prompt_id").to_numpy()
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="omnibus")
    tests = {name: pool.submit(permutation_pvalue_omnibus, ctx.parity_fn(name), matrix, prompts,
                               ctx.cfg.permutations, ctx.cfg.seed, ctx.parity_cdf(name)) for name in names}
    pool.shutdown(wait=False)
    return tests
