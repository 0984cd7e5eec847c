"""Stage logic of the recommendation-fairness assessment (FaiRLLM), as plain functions.

Requests come from templates with a ``{group}`` slot (the neutral request drops the slot) or from
the counterfactual expansion of the prompts (the gender-neutral variant is the neutral request).
Answers are parsed into top-K lists; every group's list is compared with the neutral list of the
same prompt and sample.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import numpy as np
import pandas as pd
from equilens.tasks.assessments.recommendation.config import RecommendationConfig
from equilens.tasks.config import CounterfactualConfig, MetricsConfig
from equilens.tasks.errors import InputDataError
from equilens.tasks.inputs.prompts import prompt_id
from equilens.tasks.pipeline.prefect_tasks import CACHED
from equilens.tasks.scoring.parsing import parse_ranked_list
from prefect import task

NEUTRAL = "neutral"
SLOT = "{group}"


def neutral_text(template: str) -> str:
    """The template without its group: ``"a {group} user"`` -> ``"a user"``."""
    return re.sub(r"[ \t]{2,}", " ", re.sub(r"[ \t]*\{group\}[ \t]*", " ", template)).strip()


def _vid(*parts: str) -> str:
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def template_requests(templates: list[str], cfg: RecommendationConfig) -> pd.DataFrame:
    """One neutral request per template, plus one per (attribute, group)."""
    rows = []
    for t in templates:
        if SLOT not in t:
            raise InputDataError(f"Recommendation template {t[:80]!r} has no {SLOT} slot "
                                 "(recommendation.templates or prompts; or set recommendation.source: counterfactual).")
        t = t.replace("{k}", str(cfg.k))
        pid = prompt_id(t)
        rows.append({"variant_id": _vid(pid, NEUTRAL), "prompt_id": pid, "attribute": NEUTRAL, "grp": NEUTRAL,
                     "text": neutral_text(t)})
        for attribute, groups in cfg.groups.items():
            for g in groups:
                rows.append({"variant_id": _vid(pid, attribute, g), "prompt_id": pid, "attribute": attribute,
                             "grp": g, "text": t.replace(SLOT, g)})
    return pd.DataFrame(rows)


def counterfactual_requests(prompts: pd.DataFrame, cf: CounterfactualConfig) -> pd.DataFrame:
    """Valid gender variants; the gender-neutral variant of a prompt is its neutral request.

    Only gender has a neutral variant in the expansion ("a person"); a race variant's gender-neutral
    text still names a race, so other attributes need templates with a ``{group}`` slot.
    """
    from equilens.tasks.inputs.controls import variant_rows
    from equilens.tasks.pipeline import expand_stage

    variants = expand_stage(prompts, cf)
    variants = variant_rows(variants[variants["valid"]])  # a recommendation list needs no same-group control
    neutral = variants[(variants["attribute"] == "gender") & (variants["grp"] == NEUTRAL)]
    rows = [{"variant_id": _vid(r.prompt_id, NEUTRAL), "prompt_id": r.prompt_id, "attribute": NEUTRAL,
             "grp": NEUTRAL, "text": r.text} for r in neutral.itertuples(index=False)]
    others = variants[(variants["attribute"] == "gender") & (variants["grp"] != NEUTRAL)]
    out = pd.concat([pd.DataFrame(rows), others[["variant_id", "prompt_id", "attribute", "grp", "text"]]],
                    ignore_index=True)
    return out[out["prompt_id"].isin(set(neutral["prompt_id"]))].reset_index(drop=True)


def load_byo_responses(cfg: RecommendationConfig) -> pd.DataFrame:
    """Responses a user brings: prompt, attribute, group (empty or 'neutral' for the neutral request), response."""
    from equilens.tasks.inputs.tables import read_table, require_columns

    where = str(cfg.responses_path)
    frame = read_table(cfg.responses_path or "", "recommendation.responses_path")
    require_columns(frame, ["prompt", "group", "response"], where)
    groups = frame["group"].astype(str).str.strip().replace("", NEUTRAL)
    attrs = (frame["attribute"].astype(str).str.strip() if "attribute" in frame.columns
             else pd.Series("group", index=frame.index))
    attrs = attrs.where(groups != NEUTRAL, NEUTRAL)
    pids = [prompt_id(p) for p in frame["prompt"].astype(str)]
    out = pd.DataFrame({"variant_id": [_vid(p, a, g) for p, a, g in zip(pids, attrs, groups, strict=True)],
                        "prompt_id": pids, "attribute": attrs.tolist(), "grp": groups.tolist(),
                        "text": frame["response"].astype(str).tolist(), "ok": True, "refusal": False,
                        "error_class": None, "error_message": None, "cached": False})
    out["sample_idx"] = out.groupby("variant_id").cumcount()
    if not (out["grp"] == NEUTRAL).any():
        raise InputDataError(f"{where}: no neutral rows (an empty group or 'neutral'): nothing to compare with.")
    return out


def ranked_lists(responses: pd.DataFrame, k: int) -> pd.DataFrame:
    """Per response: its parsed top-K list (failed calls give an empty list)."""
    lists = [parse_ranked_list(t, k) if ok else [] for t, ok in zip(responses["text"], responses["ok"], strict=True)]
    return responses[["prompt_id", "attribute", "grp", "sample_idx"]].assign(items=lists)


def recommendation_metrics(lists: pd.DataFrame, cfg: RecommendationConfig, mcfg: MetricsConfig) -> pd.DataFrame:
    """Per group: mean Jaccard / SERP* / PRAG* @K against the neutral list; across groups:
    min, max, range (SNSR) and std (SNSV). Cluster-bootstrap intervals over prompts."""
    from equilens.tasks.metrics import METRICS, estimate_row, metrics_of, skipped_row, wanted_metrics
    from equilens.tasks.metrics.base import interval_verdict
    from equilens.tasks.stats import bootstrap_mean, bootstrap_stat

    wanted = set(wanted_metrics(mcfg.names, "recommendation"))
    specs = [METRICS.get(name) for name in metrics_of("recommendation")]
    similarities = [spec for spec in specs if spec.per_item is not None]  # per prompt: a list against the neutral
    boot = {"resamples": mcfg.bootstrap_resamples, "confidence": mcfg.confidence, "seed": mcfg.seed}
    neutral = {(p, s): items for p, s, items in
               lists.loc[lists["grp"] == NEUTRAL, ["prompt_id", "sample_idx", "items"]].itertuples(index=False)}
    rows: list[dict[str, Any]] = []
    for attribute, frame in lists[lists["grp"] != NEUTRAL].groupby("attribute", sort=True):
        groups = list(dict.fromkeys(frame["grp"]))
        keyed = {(r.prompt_id, r.sample_idx, r.grp): r.items for r in frame.itertuples(index=False)}
        keys = sorted({(p, s) for p, s, _ in keyed if (p, s) in neutral})
        if not keys:
            rows += [skipped_row(sim.name, "no prompt has both a neutral and a group answer", attribute=attribute)
                     for sim in similarities if sim.name in wanted]
            continue
        clusters = np.array([p for p, _ in keys], dtype=object)
        empty = {g: sum(1 for key in keys if not keyed.get((*key, g))) for g in groups}
        empty_neutral = sum(1 for key in keys if not neutral[key])
        for sim in similarities:
            matrix = np.array([[sim.per_item(neutral[key], keyed[(*key, g)], cfg.k) if (*key, g) in keyed else np.nan
                                for g in groups] for key in keys], dtype=float)
            if sim.name in wanted:
                for j, g in enumerate(groups):
                    have = np.isfinite(matrix[:, j])
                    est = bootstrap_mean(matrix[have, j], clusters[have], **boot)
                    rows.append(estimate_row(sim.name, est, attribute=attribute, group_a=g,
                                             details={"k": cfg.k, "empty_lists": empty[g],
                                                      "empty_neutral_lists": empty_neutral}))
            for summary in (spec for spec in specs if spec.summarizes == sim.name and spec.name in wanted):
                if len(groups) < 2:
                    rows.append(skipped_row(summary.name, "fewer than two groups", attribute=attribute))
                    continue
                est = bootstrap_stat(lambda m, f=summary.fn: f(np.nanmean(m, axis=0)), [matrix], clusters, **boot)
                means = np.nanmean(matrix, axis=0)
                details = {"k": cfg.k, "groups": dict(zip(groups, map(float, means), strict=True)),
                           "verdict": interval_verdict(summary, est.value, est.ci_low, est.ci_high)}
                rows.append(estimate_row(summary.name, est, attribute=attribute, details=details))
    return pd.DataFrame(rows)


def list_items(lists: pd.DataFrame) -> pd.DataFrame:
    """Per response: its list length, for ``metric_items`` (the lists themselves are in ``responses``)."""
    return pd.DataFrame({"family": "recommendation", "metric": "list_length", "item_kind": "response",
                         "item": [f"{p}:{a}:{g}:{s}" for p, a, g, s in
                                  zip(lists["prompt_id"], lists["attribute"], lists["grp"], lists["sample_idx"],
                                      strict=True)],
                         "value": [float(len(x)) for x in lists["items"]]})


@task(name="recommendation-metrics", **CACHED)
def recommendation_metrics_task(lists: pd.DataFrame, cfg: RecommendationConfig, mcfg: MetricsConfig,
                                fingerprint: str) -> pd.DataFrame:
    return recommendation_metrics(lists, cfg, mcfg)
