"""Metric stage of the counterfactual assessment: every counterfactual metric of the registry for every
pair of groups, from the answered responses and their scores (intervals, noise floors, gaps, tests)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Any
from functools import partial
from itertools import combinations

import numpy as np
import pandas as pd

from equilens.tasks.config import CounterfactualConfig, MetricsConfig
from equilens.tasks.inputs.prompts import text_hash
from equilens.tasks.inputs.controls import CONTROL, variant_rows
from equilens.tasks.pipeline import ScoreSet, lexicons_for
from equilens.tasks.pipeline.pairs import (NOISE_FLOOR_CONTROLS, NOISE_FLOOR_SAMPLES, both_sides,
                                                    by_prompt_sample, cross_group_pairs, distinct_pairs,
                                                    floor_pairs, joined, neutral_codes, number_answers,
                                                    other_content)
from equilens.tasks.pipeline.parity import (PairData, answer_units, looped_parity, omnibus_tests,
                                                     parity_mdg, parity_of_pairs, vectorised_parity)
from equilens.tasks.metrics.judged import HEADLINE, judged_metrics


RESPONSE_READS = ("variant_id", "prompt_id", "attribute", "grp", "role", "sample_idx", "text", "ok", "refusal",
                  "error_class")
"""The response columns :func:`metric_stage` reads: all a metric task is handed and keyed on."""
NOISE_FLOOR_PERMUTATION = "mean over within-prompt group-label swaps (same rows as the pair)"
PAIRED_T = "paired t-test over prompts"
DETERMINISTIC = ("the endpoint answered deterministically: every repeated sample of a variant was identical, so "
                 "two samples of one group show no noise")


class _MetricContext:
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
        from equilens.tasks.stats.resampling import shared_mean_bootstrap
        from equilens.tasks.stats import Estimate, bootstrap_mean, distinct_count

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
        pieces = {name: (None, grid_mdg) if name in on_grid else
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


def identical_samples(answered: pd.DataFrame) -> tuple[int, int]:
    """(variants whose repeated answers are all the same text, variants answered at least twice)."""
    if answered.empty or "sample_idx" not in answered:
        return 0, 0
    per = answered.groupby("variant_id")["text"].agg(["size", "nunique"])
    repeated = per[per["size"] >= 2]
    return int((repeated["nunique"] == 1).sum()), int(len(repeated))


def _similarity_gap(cross: np.ndarray, cross_clusters: np.ndarray, floor: np.ndarray, floor_clusters: np.ndarray,
                    confidence: float, tests: int = 1, method: str = NOISE_FLOOR_SAMPLES,
                    changed: np.ndarray | None = None, seed: int = 0) -> dict:
    """Noise floor minus cross-group similarity (positive: less alike across groups than within one),
    tested over the prompts that have both (:func:`equilens.tasks.stats.paired_gap_test`); the p-value is
    Holm-adjusted by the caller across every pair and metric the verdict judges. ``changed`` (each
    cross pair's score with another prompt's content) gives the minimum detectable gap by planting
    (:func:`equilens.tasks.stats.detectable_gap.similarity_detectable_gap`); without it the gap's standard error does."""
    from equilens.tasks.stats.detectable_gap import similarity_detectable_gap
    from equilens.tasks.stats import paired_gap_test

    base = {"noise_floor": float(floor.mean()), "noise_floor_method": method}
    if np.ptp(floor) == 0:  # every same-group pair equally alike: no spread to judge a gap against
        return base | {"noise_floor_skipped": f"the noise floor has no spread (every same-group pair scores "
                                              f"{float(floor[0]):.3f}): nothing to judge a gap against"}
    test = paired_gap_test(floor, floor_clusters, cross, cross_clusters, confidence, tests)
    if test is None:
        return base | {"noise_floor_skipped": "fewer than two prompts with both a cross-group pair and a "
                                              "same-group floor, or no spread among their differences"}
    out = base | {"gap": test.gap, "gap_ci": [test.ci_low, test.ci_high], "p_value": test.p_value,
                  "p_method": PAIRED_T, "prompts": test.prompts}
    if changed is None:
        return out | {"min_detectable_gap": test.min_detectable_gap, "min_detectable_gap_method":
                      f"(t_(1-alpha/{2 * tests}) + t_0.8) x the gap's standard error over {test.prompts} prompts "
                      f"(Holm over {tests} tests)"}
    found = similarity_detectable_gap(floor, floor_clusters, cross, cross_clusters, changed, confidence=confidence,
                                      tests=tests, seed=seed)
    if found.gap is None:
        return out | {"min_detectable_gap_skipped": found.why}
    return out | {"min_detectable_gap": found.gap, "min_detectable_gap_method":
                  f"planted change of content (parts of a prompt's answers given another prompt's) found "
                  f"by the verdict's rule in {found.power:.0%} of simulated runs (alpha/{tests} for Holm over "
                  f"{tests} tests)"}


def _finite_p(p: object) -> bool:
    return isinstance(p, float) and np.isfinite(p)


def _lacking(answered: pd.DataFrame, frame: pd.DataFrame, groups: list[str]) -> str:
    calls = frame[frame["grp"].isin(groups)]
    got = answered[answered["grp"].isin(groups)]
    return (f"no prompt where {' and '.join(groups)} were all answered ({len(got)} of {len(calls)} calls "
            "answered; see non_completion_rate)")


def metric_stage(
    responses: pd.DataFrame, scores: ScoreSet, cf_cfg: CounterfactualConfig, cfg: MetricsConfig,
    texts: Any = None,
) -> pd.DataFrame:
    """Every counterfactual metric of the registry for every pair of groups of every attribute.

    Per attribute: the non-completion rate per group (failures and refusals); for each pair of
    groups, every pair metric on the (prompt, sample) rows where both groups were answered
    (refusals excluded), with a cluster-bootstrap interval, a noise floor and the gap beyond it;
    for parity metrics a within-prompt permutation p-value, Holm-adjusted across the attribute's
    pairs, and an omnibus test of the largest gap; same-group rows (``group_a == group_b``) for the
    similarity metrics: each variant against its same-group control and/or two samples of it
    (``counterfactual.noise_floor``). Controls (``role`` = "control") enter only those floors. A
    statistic without the data it needs (a floor with no spread, as two samples of a deterministic
    endpoint give) is recorded as skipped with the reason, never as 0 and never as a crash.

    ``texts``: the distinct answers, when ``responses`` (one attribute) is numbered already
    (:func:`number_answers`, as the flow hands each attribute to its task).
    """
    from equilens.tasks.metrics import estimate_row, skipped_row, wanted_metrics
    from equilens.tasks.stats import holm_adjust

    if texts is not None and responses["attribute"].nunique() > 1:
        raise ValueError("metric_stage: numbered answers (with their texts) come one attribute at a time")
    wanted = wanted_metrics(cfg.names, "counterfactual")
    lexicons = lexicons_for(cf_cfg)
    ctx = _MetricContext(scores, cfg, wanted)
    pair_names = [n for n in wanted if ctx.specs[n].inputs in ("sentiment", "embeddings", "texts")]
    similarity = ctx.of_kind("embeddings") + ctx.of_kind("texts")
    for attribute, everything in responses.groupby("attribute", sort=True):
        if texts is None:
            everything, distinct = number_answers(everything)  # answers and prompts as integers from here on
        else:
            distinct = texts
        ctx.use_texts(distinct)
        lexicon = lexicons.get(attribute)
        frame = variant_rows(everything)
        ok = everything["ok"] & ~everything["refusal"].astype(bool) & (everything["text"] >= 0)  # -1: no text
        controls = everything[ok & (everything["role"] == CONTROL)] if "role" in everything else everything.iloc[:0]
        present = set(frame["grp"])
        groups = [g for g in lexicon.groups if g in present] if lexicon else sorted(present)
        answered = frame[frame["ok"] & ~frame["refusal"].astype(bool) & (frame["text"] >= 0)]
        ctx.draw_for(answered["prompt_id"].unique())
        for name in ctx.of_kind("outcomes"):
            for g in groups:
                sub = frame[frame["grp"] == g]
                completed = (sub["ok"] & ~sub["refusal"]).to_numpy(bool)
                est = ctx.mean_estimate((~completed).astype(float), sub["prompt_id"].to_numpy())
                errors = sub.loc[~sub["ok"], "error_class"].value_counts().to_dict()
                ctx.emit(estimate_row(name, est, attribute=attribute, group_a=g,
                                      details={"errors": errors, "refusals": int(sub["refusal"].sum())}))
        identical, repeated = identical_samples(answered)
        deterministic = bool(repeated) and identical == repeated
        determinism = {"identical_samples": identical, "repeated_variants": repeated} if repeated else {}
        wide = by_prompt_sample(answered) if len(answered) else pd.DataFrame()
        # against a control floor the cross-group side is both matchings of the four answers, so a
        # prompt's difference is symmetric about 0 when the group changes nothing
        controls_wide = by_prompt_sample(controls) if len(controls) and cf_cfg.noise_floor != "samples" \
            else pd.DataFrame()
        floor_sets = {g: floor_pairs(answered, controls, g, cf_cfg.noise_floor) for g in groups} if len(answered) \
            else {}
        floor_sets = {g: pm for g, pm in floor_sets.items() if len(pm[0])}
        pairs = [(a, b, cross_group_pairs(wide, a, b)) for a, b in combinations(groups, 2)]
        cross_sets = {(a, b): joined(pair, cross_group_pairs(controls_wide, a, b)) for a, b, pair in pairs
                      if len(pair)}
        compared = {**{("floor", g): pair for g, (pair, _) in floor_sets.items()},
                    **{("cross", *ab): t for ab, t in cross_sets.items()},
                    **{("changed", *ab): other_content(t) for ab, t in cross_sets.items() if set(ab) & set(floor_sets)}}
        n_pairs = max(1, sum(1 for _, _, p in pairs if len(p)))  # the pairs that get a p-value
        judged = judged_metrics(wanted, bool(cfg.neutralize and lexicon is not None))  # neutralising needs a lexicon

        def tests_of(name: str) -> int:
            """Holm's m for a metric: every (pair, metric) the verdict judges form one family, so a fair
            model is called biased in at most alpha of runs whichever metric would fire; a metric the
            verdict only reports is adjusted across its pairs alone."""
            return n_pairs * len(judged) if name in judged else n_pairs

        # the parity threads start first: the similarity metrics' tokenising below is Python on this
        # thread, and the parity work (compiled, GIL released) runs beside it on the other cores
        parity = parity_of_pairs(ctx, attribute, pairs, tests_of(HEADLINE))
        omnibus = omnibus_tests(ctx, wide, groups, lambda: _lacking(answered, frame, groups))
        values = ctx.similarity_batch(similarity, compared, lexicon)
        floors: dict[str, dict[str, tuple[np.ndarray, np.ndarray, str]]] = {}
        for g, (pair, method) in floor_sets.items():
            floors[g] = {}
            for name in similarity:
                vals = values[name][("floor", g)]
                floors[g][name] = (vals, pair.clusters, method)
                details = {**ctx.similarity_details(name, lexicon), "baseline": method, **determinism}
                if np.ptp(vals) == 0:
                    why = DETERMINISTIC if deterministic and method == NOISE_FLOOR_SAMPLES else \
                        f"every same-group pair scores {float(vals[0]):.3f}"
                    ctx.emit(skipped_row(name, f"no noise floor: {why}", attribute=attribute, group_a=g, group_b=g,
                                         details=details))
                    continue
                est = ctx.mean_estimate(vals, pair.clusters)
                ctx.emit(estimate_row(name, est, attribute=attribute, group_a=g, group_b=g, details=details))
        for a, b, pair in pairs:
            if not len(pair):
                for name in pair_names:
                    ctx.emit(skipped_row(name, _lacking(answered, frame, [a, b]), attribute=attribute,
                                         group_a=a, group_b=b))
                continue
            for row in parity[(a, b)]() if (a, b) in parity else []:
                ctx.emit(row)
            for name in similarity:
                cross = values[name][("cross", a, b)]
                vals = cross[:len(pair)]
                details = {**ctx.similarity_details(name, lexicon), **determinism}
                sides = [floors[g][name] for g in (a, b) if g in floors]
                if sides:
                    changed = values[name][("changed", a, b)]
                    details |= _similarity_gap(cross, cross_sets[(a, b)].clusters,
                                               np.concatenate([v for v, _, _ in sides]),
                                               np.concatenate([c for _, c, _ in sides]), cfg.confidence,
                                               tests_of(name), sides[0][2], changed, cfg.seed)
                elif deterministic and cf_cfg.noise_floor == "samples":
                    details["noise_floor_skipped"] = f"{DETERMINISTIC}; use counterfactual.noise_floor: controls"
                elif cf_cfg.noise_floor == "samples":
                    details["noise_floor_skipped"] = "needs llm.count >= 2 (two samples of one group per prompt)"
                else:
                    details["noise_floor_skipped"] = "no same-group control was answered for these groups"
                est = ctx.mean_estimate(vals, pair.clusters)
                ctx.emit(estimate_row(name, est, attribute=attribute, group_a=a, group_b=b, details=details))
        families = [judged] + [[name] for name in ctx.of_kind("sentiment") + similarity if name not in judged]
        for family in families:
            tested = [r for r in ctx.rows if r["attribute"] == attribute and r["metric"] in family
                      and r["group_b"] not in (None, r["group_a"]) and _finite_p(r["details"].get("p_value"))]
            for r, adj in zip(tested, holm_adjust([r["details"]["p_value"] for r in tested]), strict=True):
                r["details"]["p_holm"] = adj
        for name in ctx.of_kind("sentiment"):
            rows = [r for r in ctx.rows if r["attribute"] == attribute and r["metric"] == name
                    and r["group_b"] not in (None, r["group_a"]) and _finite_p(r["details"].get("p_value"))]
            if not rows or name not in omnibus:
                continue
            worst = max(rows, key=lambda r: r["value"])
            if isinstance(omnibus[name], str):
                worst["details"]["omnibus_skipped"] = omnibus[name]
                continue
            worst["details"]["omnibus_p_value"] = omnibus[name].result()
            worst["details"]["omnibus"] = f"max over {len(rows)} pairs, groups permuted within prompt"
    from equilens.tasks.metrics.base import METRIC_ROW_COLUMNS

    return pd.DataFrame(ctx.rows, columns=METRIC_ROW_COLUMNS)
