"""The paired metric stage (counterfactual groups, identity cells): every counterfactual metric of the
registry for every pair of groups, from the answered responses and their scores (intervals, noise
floors, gaps, tests)."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from equilens.tasks.config import CounterfactualConfig, MetricsConfig
from equilens.tasks.inputs.controls import CONTROL, variant_rows
from equilens.tasks.metrics.judged import HEADLINE, judged_metrics
from equilens.tasks.pipeline import ScoreSet, lexicons_for
from equilens.tasks.pipeline.pairs import (
    NOISE_FLOOR_SAMPLES,
    by_prompt_sample,
    cross_group_pairs,
    floor_pairs,
    joined,
    number_answers,
    other_content,
)
from equilens.tasks.pipeline.parity import PairData, omnibus_tests, parity_of_pairs
from equilens.tasks.pipeline.stage_context import MetricContext

RESPONSE_READS = ("variant_id", "prompt_id", "attribute", "grp", "role", "sample_idx", "text", "ok", "refusal",
                  "error_class")
"""The response columns :func:`metric_stage` reads: all a metric task is handed and keyed on."""
PAIRED_T = "paired t-test over prompts"
DETERMINISTIC = ("the endpoint answered deterministically: every repeated sample of a variant was identical, so "
                 "two samples of one group show no noise")


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
    from equilens.tasks.stats import paired_gap_test
    from equilens.tasks.stats.detectable_gap import similarity_detectable_gap

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
        return out | {"min_detectable_gap": test.min_detectable_gap, "min_detectable_gap_tests": tests,
                      "min_detectable_gap_method":
                      f"(t_(1-alpha/{2 * tests}) + t_0.8) x the gap's standard error over {test.prompts} prompts "
                      f"(Holm over {tests} tests)"}
    found = similarity_detectable_gap(floor, floor_clusters, cross, cross_clusters, changed, confidence=confidence,
                                      tests=tests, seed=seed)
    if found.gap is None:
        return out | {"min_detectable_gap_skipped": found.why}
    return out | {"min_detectable_gap": found.gap, "min_detectable_gap_tests": tests, "min_detectable_gap_method":
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
    from equilens.tasks.metrics import wanted_metrics
    from equilens.tasks.metrics.base import METRIC_ROW_COLUMNS

    if texts is not None and responses["attribute"].nunique() > 1:
        raise ValueError("metric_stage: numbered answers (with their texts) come one attribute at a time")
    wanted = wanted_metrics(cfg.names, "counterfactual")
    lexicons = lexicons_for(cf_cfg)
    ctx = MetricContext(scores, cfg, wanted)
    for attribute, everything in responses.groupby("attribute", sort=True):
        if texts is None:
            everything, distinct = number_answers(everything)  # answers and prompts as integers from here on
        else:
            distinct = texts
        ctx.use_texts(distinct)
        att = _Attribute.of(attribute, everything, lexicons.get(attribute), cf_cfg, cfg, wanted)
        ctx.draw_for(att.answered["prompt_id"].unique())
        _non_completion(ctx, att)
        # the parity threads start first: the similarity metrics' tokenising below is Python on this
        # thread, and the parity work (compiled, GIL released) runs beside it on the other cores
        parity = parity_of_pairs(ctx, attribute, att.pairs, att.tests_of(HEADLINE))
        omnibus = omnibus_tests(ctx, att.wide, att.groups, lambda: _lacking(att.answered, att.frame, att.groups))
        values = ctx.similarity_batch(ctx.similarity, att.compared, att.lexicon)
        floors = _floor_rows(ctx, att, values)
        _pair_rows(ctx, att, parity, values, floors, cf_cfg)
        _holm(ctx, att)
        _omnibus_details(ctx, attribute, omnibus)
    return pd.DataFrame(ctx.rows, columns=METRIC_ROW_COLUMNS)


@dataclass
class _Attribute:
    """One attribute's answers as the metric steps read them: its groups, the answered rows, the
    same-group floors and cross-group pairs, and which metrics its verdict judges."""

    name: str
    lexicon: Any
    frame: pd.DataFrame  # one row per answer of a variant (controls excluded)
    answered: pd.DataFrame  # answered, not refused, with a text
    groups: list[str]
    deterministic: bool
    determinism: dict[str, int]
    wide: pd.DataFrame  # the answered rows, one column per group
    floor_sets: dict[str, tuple[PairData, str]]
    pairs: list[tuple[str, str, PairData]]
    cross_sets: dict[tuple[str, str], PairData]
    compared: dict[tuple, PairData]
    n_pairs: int
    judged: list[str]

    @classmethod
    def of(cls, name: str, everything: pd.DataFrame, lexicon: Any, cf_cfg: CounterfactualConfig,
           cfg: MetricsConfig, wanted: list[str]) -> _Attribute:
        frame = variant_rows(everything)
        ok = everything["ok"] & ~everything["refusal"].astype(bool) & (everything["text"] >= 0)  # -1: no text
        controls = everything[ok & (everything["role"] == CONTROL)] if "role" in everything else everything.iloc[:0]
        present = set(frame["grp"])
        groups = [g for g in lexicon.groups if g in present] if lexicon else sorted(present)
        answered = frame[frame["ok"] & ~frame["refusal"].astype(bool) & (frame["text"] >= 0)]
        identical, repeated = identical_samples(answered)
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
        return cls(name, lexicon, frame, answered, groups, bool(repeated) and identical == repeated,
                   {"identical_samples": identical, "repeated_variants": repeated} if repeated else {},
                   wide, floor_sets, pairs, cross_sets, compared,
                   max(1, sum(1 for _, _, p in pairs if len(p))),  # the pairs that get a p-value
                   judged_metrics(wanted, bool(cfg.neutralize and lexicon is not None)))  # neutralising needs a lexicon

    def tests_of(self, name: str) -> int:
        """Holm's m for a metric: every (pair, metric) the verdict judges form one family, so a fair
        model is called biased in at most alpha of runs whichever metric would fire; a metric the
        verdict only reports is adjusted across its pairs alone."""
        return self.n_pairs * len(self.judged) if name in self.judged else self.n_pairs


def _non_completion(ctx: MetricContext, att: _Attribute) -> None:
    """Per group, the share of its answers that failed or were refused (errors and refusals counted)."""
    from equilens.tasks.metrics import estimate_row

    for name in ctx.of_kind("outcomes"):
        for g in att.groups:
            sub = att.frame[att.frame["grp"] == g]
            completed = (sub["ok"] & ~sub["refusal"]).to_numpy(bool)
            est = ctx.mean_estimate((~completed).astype(float), sub["prompt_id"].to_numpy())
            errors = sub.loc[~sub["ok"], "error_class"].value_counts().to_dict()
            ctx.emit(estimate_row(name, est, attribute=att.name, group_a=g,
                                  details={"errors": errors, "refusals": int(sub["refusal"].sum())}))


Floors = dict[str, dict[str, tuple[np.ndarray, np.ndarray, str]]]


def _floor_rows(ctx: MetricContext, att: _Attribute, values: dict) -> Floors:
    """The same-group rows of the similarity metrics (the noise floor of each group), or skipped rows
    where a floor has no spread; the floors' values for the gaps."""
    from equilens.tasks.metrics import estimate_row, skipped_row

    floors: Floors = {}
    for g, (pair, method) in att.floor_sets.items():
        floors[g] = {}
        for name in ctx.similarity:
            vals = values[name][("floor", g)]
            floors[g][name] = (vals, pair.clusters, method)
            details = {**ctx.similarity_details(name, att.lexicon), "baseline": method, **att.determinism}
            if np.ptp(vals) == 0:
                why = DETERMINISTIC if att.deterministic and method == NOISE_FLOOR_SAMPLES else \
                    f"every same-group pair scores {float(vals[0]):.3f}"
                ctx.emit(skipped_row(name, f"no noise floor: {why}", attribute=att.name, group_a=g, group_b=g,
                                     details=details))
                continue
            est = ctx.mean_estimate(vals, pair.clusters)
            ctx.emit(estimate_row(name, est, attribute=att.name, group_a=g, group_b=g, details=details))
    return floors


def _pair_rows(ctx: MetricContext, att: _Attribute, parity: dict, values: dict, floors: Floors,
               cf_cfg: CounterfactualConfig) -> None:
    """The cross-group rows: parity (from its threads) and each similarity metric with its gap beyond
    the floor of the two groups, or the reason it has none; skipped rows for a pair never answered."""
    from equilens.tasks.metrics import estimate_row, skipped_row

    pair_names = [n for n in ctx.wanted if ctx.specs[n].inputs in ("sentiment", "embeddings", "texts")]
    for a, b, pair in att.pairs:
        if not len(pair):
            for name in pair_names:
                ctx.emit(skipped_row(name, _lacking(att.answered, att.frame, [a, b]), attribute=att.name,
                                     group_a=a, group_b=b))
            continue
        for row in parity[(a, b)]() if (a, b) in parity else []:
            ctx.emit(row)
        for name in ctx.similarity:
            cross = values[name][("cross", a, b)]
            vals = cross[:len(pair)]
            details = {**ctx.similarity_details(name, att.lexicon), **att.determinism}
            sides = [floors[g][name] for g in (a, b) if g in floors]
            if sides:
                changed = values[name][("changed", a, b)]
                details |= _similarity_gap(cross, att.cross_sets[(a, b)].clusters,
                                           np.concatenate([v for v, _, _ in sides]),
                                           np.concatenate([c for _, c, _ in sides]), ctx.cfg.confidence,
                                           att.tests_of(name), sides[0][2], changed, ctx.cfg.seed)
            elif att.deterministic and cf_cfg.noise_floor == "samples":
                details["noise_floor_skipped"] = f"{DETERMINISTIC}; use counterfactual.noise_floor: controls"
            elif cf_cfg.noise_floor == "samples":
                details["noise_floor_skipped"] = "needs llm.count >= 2 (two samples of one group per prompt)"
            else:
                details["noise_floor_skipped"] = "no same-group control was answered for these groups"
            est = ctx.mean_estimate(vals, pair.clusters)
            ctx.emit(estimate_row(name, est, attribute=att.name, group_a=a, group_b=b, details=details))


def _tested_rows(ctx: MetricContext, attribute: str, names: list[str]) -> list[dict]:
    """The attribute's cross-group rows of ``names`` that carry a finite p-value."""
    return [r for r in ctx.rows if r["attribute"] == attribute and r["metric"] in names
            and r["group_b"] not in (None, r["group_a"]) and _finite_p(r["details"].get("p_value"))]


def _holm(ctx: MetricContext, att: _Attribute) -> None:
    """Holm-adjusted p-values: the judged metrics as one family, every other metric on its own."""
    from equilens.tasks.stats import holm_adjust

    families = [att.judged] + [[n] for n in ctx.of_kind("sentiment") + ctx.similarity if n not in att.judged]
    for family in families:
        tested = _tested_rows(ctx, att.name, family)
        for r, adj in zip(tested, holm_adjust([r["details"]["p_value"] for r in tested]), strict=True):
            r["details"]["p_holm"] = adj


def _omnibus_details(ctx: MetricContext, attribute: str, omnibus: dict) -> None:
    """The omnibus p-value (or why there is none) on the largest gap of each parity metric."""
    for name in ctx.of_kind("sentiment"):
        rows = _tested_rows(ctx, attribute, [name])
        if not rows or name not in omnibus:
            continue
        worst = max(rows, key=lambda r: r["value"])
        if isinstance(omnibus[name], str):
            worst["details"]["omnibus_skipped"] = omnibus[name]
            continue
        worst["details"]["omnibus_p_value"] = omnibus[name].result()
        worst["details"]["omnibus"] = f"max over {len(rows)} pairs, groups permuted within prompt"
