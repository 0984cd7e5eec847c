"""Metric stage: parity statistics on one sorted grid against the metric's function per resample.

Builds one simulated counterfactual run (``tests/simulate.py``: N prompts, three gender groups, so
three pairs, two samples of each variant and of its same-group control, sampling model, no planted
difference),
then runs the counterfactual metric stage twice on it in this one process:

* ``grid``: the shipped code; the parity metrics declare a ``cdf_statistic``, so their bootstrap,
  gap bootstrap, permutation test and minimum detectable gap are reweightings of one sorted grid
  (``tasks/stats/resampling.py``);
* ``per-resample``: the same metrics with the declaration removed, so the stage calls the
  metric's function on every resample and label swap (the path any metric without one takes).

It prints the seconds of each, the ratio, the parity part alone (the stage minus its text
similarity, which both share), and checks that every stored value, p-value, noise floor and
minimum detectable gap agree (intervals differ only through their random draws).

    .venv/bin/python tests/benchmarks/bench_metric_stage.py                 # 2,000 prompts
    .venv/bin/python tests/benchmarks/bench_metric_stage.py --prompts 6000
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from equilens.tasks.config import CounterfactualConfig, MetricsConfig
from equilens.tasks.metrics import METRICS
from equilens.tasks.pipeline.metric_stage import metric_stage

from tests import simulate as simulated
from tests.simulate import Model, simulate

PARITY = ["strict_sentiment_parity", "weak_sentiment_parity"]
TEXT = ["bleu_similarity", "rougel_similarity"]


@contextlib.contextmanager
def per_resample() -> Iterator[None]:
    """The parity metrics without their ``cdf_statistic`` for the duration (benchmark only)."""
    saved = {name: METRICS.get(name) for name in PARITY}
    try:
        for name, spec in saved.items():
            METRICS._items[name] = dataclasses.replace(spec, cdf_statistic=None)
        yield
    finally:
        METRICS._items.update(saved)


def timed(responses, scores, names: list[str]) -> tuple[float, object]:
    cfg = MetricsConfig(names=names)
    start = time.perf_counter()
    rows = metric_stage(responses, scores, CounterfactualConfig(attributes=[], noise_floor="controls"), cfg)
    return time.perf_counter() - start, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompts", type=int, default=2000)
    args = parser.parse_args()
    simulated.GROUPS = ("male", "female", "neutral")  # three pairs, computed on parallel threads
    responses, scores = simulate(args.prompts, Model(deterministic=False), seed=1, count=2)
    pairs = int(((responses["grp"] == "male") & (responses["role"] == "variant")).sum())
    print(f"{args.prompts:,} prompts, {len(responses):,} answers, {pairs:,} rows per group pair (3 pairs); "
          f"{MetricsConfig().bootstrap_resamples:,} resamples, {MetricsConfig().permutations:,} permutations")
    grid_s, grid_rows = timed(responses, scores, PARITY + TEXT)
    text_s, _ = timed(responses, scores, TEXT)
    with per_resample():
        loop_s, loop_rows = timed(responses, scores, PARITY + TEXT)
    print(f"{'':24}{'grid':>10}{'per-resample':>14}{'ratio':>8}")
    print(f"{'metric stage, s':24}{grid_s:>10.1f}{loop_s:>14.1f}{loop_s / grid_s:>7.1f}x")
    print(f"{'parity part, s':24}{grid_s - text_s:>10.1f}{loop_s - text_s:>14.1f}"
          f"{(loop_s - text_s) / max(grid_s - text_s, 1e-9):>7.1f}x")
    keys = ["noise_floor", "p_value", "min_detectable_gap"]
    for a, b in zip(grid_rows.to_dict("records"), loop_rows.to_dict("records"), strict=True):
        assert a["metric"] == b["metric"] and np.isclose(a["value"], b["value"], atol=1e-12, equal_nan=True), (a, b)
        for key in keys:
            if key in a["details"] or key in b["details"]:
                assert np.isclose(a["details"][key], b["details"][key], atol=1e-9), (key, a, b)
    print("values, p-values, noise floors and detectable gaps agree on every row")


if __name__ == "__main__":
    main()
