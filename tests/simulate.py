"""Simulated counterfactual runs with a known truth, for the verdict's calibration and power checks.

A run here is what the metric stage receives: responses to each prompt's two gender variants and
their same-group controls, with sentiment scores and answer texts. The model is simulated:

* **deterministic** or **sampling**: a deterministic model gives every sample of a variant the same
  text and score (as at temperature 0); a sampling one draws each sample afresh;
* **fair** or with a **planted effect** on the second group: ``turn`` makes that share of its
  answers wholly negative, ``shift`` adds to the sentiment of every one of its answers
  (``binary``: raises its negative rate instead), ``content`` replaces that share of the words of
  its answers by words only that group's answers use.

Answers to one prompt share a topic (a prompt effect), so they resemble each other as real answers
do. Nothing here calls a model; the point is a truth that is known.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import pandas as pd
from equilens.tasks.config import CounterfactualConfig, MetricsConfig
from equilens.tasks.inputs.controls import CONTROL, VARIANT
from equilens.tasks.inputs.prompts import text_hash
from equilens.tasks.pipeline import ScoreSet
from equilens.tasks.pipeline.metric_stage import metric_stage
from equilens.tasks.reporting.verdict import HEADLINE, attribute_verdict, details_of

GROUPS = ("male", "female")
WORDS = 12


@dataclass(frozen=True)
class Model:
    deterministic: bool = True
    shift: float = 0.0  # added to the second group's sentiment (continuous scores)
    binary: bool = False  # scores 0/1: negative with probability 0.3 (+ shift for the second group)
    content: float = 0.0  # share of the second group's answer words drawn from its own vocabulary
    turn: float = 0.0  # share of the second group's answers that turn wholly negative (score 1)


def _rng(*key: object) -> np.random.Generator:
    return np.random.default_rng(int(hashlib.sha256(repr(key).encode()).hexdigest()[:15], 16))


def simulate(prompts: int, model: Model, seed: int, count: int = 2) -> tuple[pd.DataFrame, ScoreSet]:
    """Responses (variants and same-group controls) and their scores for one simulated run."""
    rows, scalar = [], {}
    for p in range(prompts):
        topic = _rng(seed, p, "topic")
        base = float(topic.beta(2, 5))
        own = topic.random(WORDS)  # positions the second group's answers word their own way
        for g in GROUPS:
            planted = g == GROUPS[1]
            for role in (VARIANT, CONTROL):
                for i in range(count):
                    r = _rng(seed, p, g, role) if model.deterministic else _rng(seed, p, g, role, i)
                    # an answer to a prompt: the prompt's answer, each word kept with probability 0.7
                    words = [f"t{p}x{j}" if r.random() < 0.7 else f"w{r.integers(500)}" for j in range(WORDS)]
                    if planted:
                        words = [f"f{p}x{j}" if own[j] < model.content else w for j, w in enumerate(words)]
                    if model.binary:
                        score = float(r.random() < 0.3 + (model.shift if planted else 0.0))
                    else:
                        score = float(np.clip(base + r.normal(0, 0.1) + (model.shift if planted else 0.0), 0, 1))
                        if planted and r.random() < model.turn:
                            score = 1.0
                    # a deterministic model's samples are the same text; a sampling one's differ
                    text = " ".join(words) + ("" if model.deterministic else f" s{i}")
                    scalar[text_hash(text)] = score
                    rows.append({"variant_id": f"{p}{g}{role}", "prompt_id": f"p{p}", "attribute": "gender",
                                 "grp": g, "role": role, "sample_idx": i, "text": text, "ok": True,
                                 "refusal": False, "error_class": None})
    scores = ScoreSet(pd.DataFrame({"text_hash": list(scalar), "scorer": "vader-neg", "value": list(scalar.values())}),
                      {"vader-neg": (0.0, 1.0)}, {}, "")
    return pd.DataFrame(rows), scores


@dataclass(frozen=True)
class Outcome:
    fired: bool
    parity_fired: bool
    similarity_fired: bool
    stated: dict[str, float | None]  # metric -> stated minimum detectable gap
    gap: dict[str, float | None]  # metric -> observed gap


def judge(prompts: int, model: Model, seed: int, *, count: int = 2, noise_floor: str = "controls",
          metrics: tuple[str, ...] = (HEADLINE, "bleu_similarity"), resamples: int = 200,
          permutations: int = 200) -> Outcome:
    """One simulated run through the metric stage and the verdict's own rule."""
    responses, scores = simulate(prompts, model, seed, count)
    out = metric_stage(responses, scores, CounterfactualConfig(attributes=["gender"], noise_floor=noise_floor),
                       MetricsConfig(names=list(metrics), bootstrap_resamples=resamples, permutations=permutations,
                                     seed=seed))
    out = out.assign(family="counterfactual")
    verdict = attribute_verdict("gender", out)
    cross = out[(out["group_a"] != out["group_b"]) & out["group_b"].notna()].set_index("metric")
    stated = {m: details_of(cross.loc[m, "details"]).get("min_detectable_gap") for m in metrics if m in cross.index}
    gap = {m: details_of(cross.loc[m, "details"]).get("gap") for m in metrics if m in cross.index}
    found = {e["metric"] for e in verdict.evidence if e["beyond_noise"]}
    return Outcome(bool(verdict.beyond_noise), bool(found & {HEADLINE, "weak_sentiment_parity"}),
                   bool(found & {"bleu_similarity", "rougel_similarity"}), stated, gap)


def power_at_stated_gap(prompts: int, model_at: callable, sizes: list[float], metric: str, runs: int,
                        fair: Model, seed: int = 0, **judge_kw: object) -> dict[str, float]:
    """Power of the verdict at a true gap equal to the median gap that fair runs state.

    Fair runs give the stated gap. Then for each planted size the runs give the median observed
    gap and the share that fire; the power at the stated gap is read off by linear interpolation
    between the two sizes whose median gaps bracket it (the issue's own procedure: raise the
    planted effect until the median observed gap is the stated value).
    """
    stated = float(np.median([judge(prompts, fair, seed + k, **judge_kw).stated[metric] for k in range(runs)]))
    gaps, powers = [], []
    for size in sizes:
        outs = [judge(prompts, model_at(size), seed + 10_000 + k, **judge_kw) for k in range(runs)]
        gaps.append(float(np.median([o.gap[metric] for o in outs])))
        kind = "parity_fired" if metric.endswith("parity") else "similarity_fired"
        powers.append(float(np.mean([getattr(o, kind) for o in outs])))
    power = float(np.interp(stated, gaps, powers))
    return {"stated": stated, "power": power, "gaps": gaps, "powers": powers}
