"""What every pair metric of one run needs, held once for the metric stage
(:mod:`equilens.tasks.pipeline.metric_stage`): the scores and settings, each attribute's distinct
answers and shared bootstrap draws, the similarity metrics computed in one batch, and the rows
emitted so far."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from functools import partial
from typing import Any

import numpy as np
from equilens.tasks.config import MetricsConfig
from equilens.tasks.inputs.prompts import text_hash
from equilens.tasks.pipeline import ScoreSet
from equilens.tasks.pipeline.pairs import both_sides, distinct_pairs, neutral_codes
from equilens.tasks.pipeline.parity import (
    PairData,
    answer_units,
    looped_parity,
    parity_mdg,
    vectorised_parity,
)

NOISE_FLOOR_PERMUTATION = "mean over within-prompt group-label swaps (same rows as the pair)"


class MetricContext:
    """What every pair metric of one run needs: scores, settings, and the rows emitted so far."""

    def __init__(self, scores: ScoreSet, cfg: MetricsConfig, wanted: list[str]) -> None:
        from equilens.tasks.metrics import METRICS

        self.specs = {name: METRICS.get(name) for name in wanted}
        self.cfg, self.wanted = cfg, wanted
        self.sentiment = scores.scalar[["text_hash", "value"]]  # one sentiment score per distinct text
        self.texts: Any = np.zeros(0, object)  # the attribute's distinct answers (see use_texts)
        self.text_sentiment = np.zeros(0)
        self.scores = scores
        self.boot = dict(resamples=cfg.bootstrap_resamples, confidence=cfg.confidence, seed=cfg.seed)
        self.rows: list[dict] = []
        self.draws: Any = None  # the attribute's bootstrap draws (tasks.stats.resampling.Draws), shared by its pairs
        self.similarity = self.of_kind("embeddings") + self.of_kind("texts")  # the similarity metrics wanted

    def use_texts(self, texts: Any) -> None:
        """The attribute's distinct answers, which its pairs index (:func:`number_answers`), and the
        sentiment of each, looked up once: their hashes and the scored ones meet in an Arrow hash
        table (a pandas index of 800,000 hashes held them all as Python strings, ~100 MB)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        self.texts = texts
        scored = pa.array(self.sentiment["text_hash"], type=pa.large_string())
        hashes = pa.array((text_hash(t) for t in texts), type=pa.large_string(), size=len(texts))
        at = pc.index_in(hashes, value_set=scored).to_numpy(zero_copy_only=False)  # NaN: not scored
        found = ~np.isnan(at)
        self.text_sentiment = np.full(len(texts), np.nan)
        self.text_sentiment[found] = self.sentiment["value"].to_numpy(float)[at[found].astype(np.int64)]

    def draw_for(self, prompts: Any) -> None:
        """Make the bootstrap draws every pair and metric of one attribute shares, over its prompts."""
        from equilens.tasks.stats.resampling import Draws

        self.draws = Draws.draw(prompts, self.cfg.bootstrap_resamples, self.cfg.seed)

    def mean_estimate(self, values: np.ndarray, clusters: np.ndarray) -> Any:
        """The mean of a similarity's per-pair values with its cluster-bootstrap interval, from the
        attribute's shared draws (:func:`equilens.tasks.stats.resampling.shared_mean_bootstrap`) when they cover
        its prompts, else from its own."""
        from equilens.tasks.stats import Estimate, bootstrap_mean, distinct_count
        from equilens.tasks.stats.resampling import shared_mean_bootstrap

        shared = shared_mean_bootstrap(values, clusters, self.draws, self.cfg.confidence) \
            if self.draws is not None and len(values) and distinct_count(clusters) >= 2 else None
        if shared is None:
            return bootstrap_mean(values, clusters, **self.boot)
        return Estimate(float(np.mean(values)), *shared, len(values))

    def of_kind(self, inputs: str) -> list[str]:
        return [name for name, spec in self.specs.items() if spec.inputs == inputs]

    def emit(self, row: dict) -> dict:
        self.rows.append(row)
        return row

    def parity_fn(self, name: str) -> Callable[[np.ndarray, np.ndarray], float]:
        """The metric's function with the run settings it reads (a partial keeps its rowwise flag)."""
        spec = self.specs[name]
        settings = spec.settings(self.cfg)
        return partial(spec.fn, **settings) if settings else spec.fn

    def parity_cdf(self, name: str) -> Callable | None:
        """The metric's ``cdf_statistic`` with the run settings it reads, or None when it declares none."""
        spec = self.specs[name]
        return partial(spec.cdf_statistic, **spec.settings(self.cfg)) if spec.cdf_statistic else None

    def sentiment_of(self, answers: np.ndarray) -> np.ndarray:
        """The sentiment of answers given by their places among the attribute's texts."""
        return self.text_sentiment[np.asarray(answers, np.int64)]

    def similarity_batch(self, names: list[str], pairs: dict[Any, PairData], lexicon) -> dict[str, dict]:  # noqa: ANN001
        """Per similarity metric, its registered per-pair step on each of several pair lists (keyed):
        on the rows' embeddings, or on their texts with the lexicon's terms masked (:func:`neutralize`,
        when the run neutralises and the attribute has a lexicon). The lists' two sides are read as one
        int32 array; each distinct answer they read is neutralised once for every metric (an answer
        recurs in its floor, cross-group and changed-content pairs), and each metric scores each
        distinct pair once (:func:`distinct_pairs`)."""
        from equilens.tasks.metrics.text_similarity import used_places

        if not pairs or not names:
            return {}
        read, sides = used_places(both_sides(list(pairs.values())), len(self.texts))
        half = len(sides) // 2  # the left sides, then the right
        out: dict[str, np.ndarray] = {}
        texts = [n for n in names if self.specs[n].inputs == "texts"]
        if texts:
            if self.cfg.neutralize and lexicon is not None:  # no lexicon (brought groups): nothing to mask
                # answers that differ only in the lexicon's words are one text once neutralised
                same, distinct = neutral_codes(self.texts[read], lexicon)
                codes = same[sides]
            else:
                distinct, codes = np.asarray(self.texts[read], dtype=object), sides
            first, second, each = distinct_pairs(codes[:half], codes[half:], len(distinct))
            del codes
            out |= {name: np.asarray(self.specs[name].per_item(distinct, first, second), float)[each]
                    for name in texts}
        embedded = [n for n in names if self.specs[n].inputs == "embeddings"]
        if embedded:
            emb = self.scores.embeddings
            vectors = np.stack([emb[text_hash(t)] for t in self.texts[read]])
            first, second, each = distinct_pairs(sides[:half], sides[half:], len(read))
            out |= {name: np.asarray(self.specs[name].per_item(vectors[first], vectors[second]))[each]
                    for name in embedded}
        bounds = np.cumsum([len(p) for p in pairs.values()])[:-1]
        return {name: dict(zip(pairs, np.split(out[name], bounds), strict=True)) for name in names}

    def similarity_details(self, name: str, lexicon=None) -> dict:  # noqa: ANN001
        if self.specs[name].inputs == "embeddings":
            return {"embedding_model": self.scores.embedding_model}
        return {"neutralized": bool(self.cfg.neutralize and lexicon is not None)}

    def score_bounds(self) -> tuple[float, float]:
        lo, hi = next(iter(self.scores.ranges.values()), (0.0, 1.0))
        return float(lo), float(hi)

    def parity_rows(self, attribute: str, a: str, b: str, pair: PairData, tests: int,
                    scores: tuple[np.ndarray, np.ndarray] | None,
                    run: Callable[..., Future]) -> Callable[[], list[dict]]:
        """Strict/weak parity of a cross-group pair, with its noise floor, gap and permutation p-value.

        The floor is the statistic's mean over within-prompt label swaps of the very same rows, so
        under identical groups it has the cross-group value's expectation at the run's size (a
        floor from two samples of one group would use half the rows, and Wasserstein-1 shrinks
        with n). The gap (value minus floor) is bootstrapped with the floor recomputed on every
        resample. ``scores``: the two sides' sentiment, when the caller looked it up already.

        The pair's pieces (the resampled metrics, the detectable gaps) are handed to ``run``
        (a thread pool's ``submit``, so pairs and pieces run side by side: :func:`parity_of_pairs`),
        and the returned function waits for them and gives the rows."""
        s1, s2 = scores or (self.sentiment_of(pair.left), self.sentiment_of(pair.right))
        names = self.of_kind("sentiment")
        on_grid = [n for n in names if self.specs[n].cdf_statistic]  # one resampled piece, one detectable-gap piece
        vectorised = run(vectorised_parity, self, on_grid, s1, s2, pair)
        units = answer_units(pair)  # shared by the metrics' detectable gaps
        grid_mdg = run(parity_mdg, self, on_grid, s1, s2, pair, tests, units) if on_grid else None
        pieces = {name: (None, grid_mdg) if name in on_grid and grid_mdg is not None else
                  (run(looped_parity, self, self.parity_fn(name), s1, s2, pair),
                   run(parity_mdg, self, [name], s1, s2, pair, tests, units))
                  for name in names}

        def rows() -> list[dict]:
            from equilens.tasks.metrics import estimate_row
            from equilens.tasks.stats import distinct_count

            out = []
            for name in names:
                looped, mdg = pieces[name]
                est, test, gap = looped.result() if looped is not None else vectorised.result()[name]
                details = {
                    "noise_floor": test.null_mean, "noise_floor_method": NOISE_FLOOR_PERMUTATION,
                    "p_method": "permutation", "gap": est.value - test.null_mean, "gap_ci": [gap.ci_low, gap.ci_high],
                    **mdg.result()[name], "mean_score_a": float(np.mean(s1)), "mean_score_b": float(np.mean(s2)),
                    "prompts": distinct_count(pair.clusters),
                }
                details.update(self.specs[name].settings(self.cfg))  # the settings it ran with ("threshold")
                if self.cfg.permutations:
                    details["p_value"] = test.p_value
                out.append(estimate_row(name, est, attribute=attribute, group_a=a, group_b=b, details=details))
            return out

        return rows
