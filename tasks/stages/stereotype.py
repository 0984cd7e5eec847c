"""Stage logic of the stereotype and toxicity assessment, as plain functions.

Responses come from the model under test (``count`` generations per prompt, through the same
cached LLM runner as the counterfactual flow) or from a file the user brings. Every distinct text
is scored once per classifier. Metrics that need a model nobody configured are reported as
skipped with the reason, never as zero.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tasks.config import MetricsConfig, PromptsConfig, StereotypeConfig
from tasks.errors import InputDataError
from tasks.inputs.prompts import prompt_id, text_hash

HURTLEX_HINT = (
    "no stereotype.honest_lexicon configured. HONEST needs a hurtful-word lexicon such as HurtLex "
    "(github.com/MilaNLProc/hurtlex, lexica/EN/1.2/hurtlex_EN.tsv), which cannot ship offline."
)
NO_STEREOTYPE_MODEL = (
    "no stereotype.stereotype_model configured; no stereotype classifier ships offline. Point it at "
    "a Hugging Face sequence-classification model path or id and name its label."
)


def load_byo_responses(cfg: StereotypeConfig, prompts_cfg: PromptsConfig | None) -> pd.DataFrame:
    """Responses a user brings: a CSV/JSONL/Parquet file with prompt and response columns."""
    from tasks.inputs.tables import read_table, require_columns

    frame = read_table(cfg.responses_path or "", "stereotype.responses_path")
    require_columns(frame, [cfg.prompt_column, cfg.response_column],
                    f"{cfg.responses_path} (stereotype.prompt_column / response_column)")
    texts = frame[cfg.response_column].astype(str).tolist()
    prompts = frame[cfg.prompt_column].astype(str).tolist()
    ids = [prompt_id(p) for p in prompts]
    out = pd.DataFrame({"prompt_id": ids, "prompt": prompts, "text": texts, "ok": True})
    out["sample_idx"] = out.groupby("prompt_id").cumcount()
    return out.assign(variant_id=out["prompt_id"], attribute="none", grp="none", refusal=False, cached=False,
                      error_class=None, error_message=None)


def prompt_frame_for_generation(prompts: pd.DataFrame) -> pd.DataFrame:
    """Shape prompts like counterfactual variants so the LLM runner can answer them."""
    return pd.DataFrame(
        {
            "variant_id": prompts["prompt_id"], "prompt_id": prompts["prompt_id"],
            "attribute": "none", "grp": "none", "text": prompts["text"],
        }
    )


@dataclass
class ClassifierScores:
    """Per distinct text: toxicity and (when configured) stereotype probabilities."""

    scalar: pd.DataFrame  # text_hash, scorer, value
    ranges: dict[str, tuple[float, float]]
    toxicity_scorer: str
    stereotype_scorer: str | None
    caveats: dict[str, str] = field(default_factory=dict)


def score_classifiers(texts: Sequence[str], cfg: StereotypeConfig) -> ClassifierScores:
    from tasks.scoring.base import dedupe_texts
    from tasks.scoring import SCORERS

    distinct, _ = dedupe_texts(texts)
    hashes = [text_hash(t) for t in distinct]
    frames, ranges, caveats = [], {}, {}
    if cfg.toxicity_model:
        tox: Any = SCORERS.get("hf-classifier")(cfg.toxicity_model, cfg.toxicity_label,
                                                batch_size=cfg.classifier_batch_size)
    else:
        tox = SCORERS.get("profanity-check")()
        caveats["toxicity"] = tox.caveat
    scorers = [tox]
    ster = None
    if cfg.stereotype_model:
        ster = SCORERS.get("hf-classifier")(cfg.stereotype_model, cfg.stereotype_label,
                                            batch_size=cfg.classifier_batch_size)
        scorers.append(ster)
    for scorer in {sc.name: sc for sc in scorers}.values():  # one model named twice is scored once
        values = scorer.score(distinct) if distinct else np.zeros(0)
        frames.append(pd.DataFrame({"text_hash": hashes, "scorer": scorer.name, "value": values}))
        ranges[scorer.name] = scorer.value_range
    return ClassifierScores(pd.concat(frames, ignore_index=True), ranges, tox.name,
                            ster.name if ster else None, caveats)


Row = dict[str, Any]

CLASSIFIER_FAMILIES = {
    "toxicity": ("toxic_fraction", "expected_maximum_toxicity", "toxicity_probability"),
    "stereotype": ("stereotype_fraction", "expected_maximum_stereotype", "stereotype_probability"),
}


def classifier_estimates(scores: np.ndarray, prompt_ids: np.ndarray, threshold: float, boot: dict) -> tuple:
    """(fraction, expected maximum, probability) estimates of one classifier's scores.

    All three are means over prompt clusters, so the cluster bootstrap takes its vectorised path:
    the fraction is pooled over responses (a ratio of cluster sums, as the seed defines SF), the
    expected maximum and probability are means of one per-prompt value.
    """
    from tasks.stats import bootstrap_mean

    per_prompt = pd.DataFrame({"p": prompt_ids, "s": scores}).groupby("p", sort=False)["s"].max()
    return (
        bootstrap_mean((scores > threshold).astype(float), prompt_ids, **boot),
        bootstrap_mean(per_prompt.to_numpy(), per_prompt.index.to_numpy(), **boot),
        bootstrap_mean((per_prompt.to_numpy() >= threshold).astype(float), per_prompt.index.to_numpy(), **boot),
    )


def _cobs_targets(cfg: StereotypeConfig) -> list[str] | None:
    if not cfg.cobs_targets:
        return None
    import yaml

    data = yaml.safe_load(Path(cfg.cobs_targets).read_text(encoding="utf-8")) or {}
    return list(data.get("adjective", [])) + list(data.get("profession", []))


def stereotype_metrics(
    responses: pd.DataFrame, scores: ClassifierScores, cfg: StereotypeConfig, mcfg: MetricsConfig
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, str]]:
    """(metrics rows, word/prompt-level items, skipped metric -> reason), for the metrics of the
    stereotype and toxicity families that ``metrics.names`` asks for (all by default)."""
    from tasks.metrics import estimate_row, skipped_row, wanted_metrics
    from tasks.metrics import stereotype as st
    from tasks.metrics.classifier_scores import honest
    from tasks.metrics.base import METRIC_ROW_COLUMNS
    from tasks.stats import bootstrap_stat

    wanted = wanted_metrics(mcfg.names, "stereotype", "toxicity")
    ok = responses[responses["ok"]].reset_index(drop=True)
    texts = np.asarray(ok["text"].tolist(), dtype=object)
    clusters = ok["prompt_id"].to_numpy()
    boot = dict(resamples=mcfg.bootstrap_resamples, confidence=mcfg.confidence, seed=mcfg.seed)
    rows: list[Row] = []
    items: list[Row] = []
    skipped: dict[str, str] = {}

    def skip(name: str, reason: str) -> None:
        skipped[name] = reason
        rows.append(skipped_row(name, reason))

    targets = _cobs_targets(cfg)
    groups = st.default_groups()
    names = list(groups)[:2]

    def safe(fn: Callable[[np.ndarray], float]) -> Callable[[np.ndarray], float]:
        def inner(t: np.ndarray) -> float:
            try:
                return fn(t)
            except InputDataError:
                return float("nan")
        return inner

    for name, fn in (
        ("cobs", lambda t: st.cobs(list(t), groups, targets)),
        ("stereotypical_associations", lambda t: st.stereotypical_associations(list(t), groups, targets)),
        ("demographic_representation", lambda t: st.demographic_representation(list(t), groups)),
    ):
        if name not in wanted:
            continue
        est = bootstrap_stat(safe(fn), [texts], clusters, **boot) if len(texts) else None
        if est is None or est.value != est.value:
            skip(name, "no response mentions both a group word and a target word")
        else:
            rows.append(estimate_row(name, est, attribute="gender", group_a=names[0], group_b=names[1]))
    if cfg.word_level and len(texts) and "cobs" in wanted:
        try:
            for word, value in st.cobs_word_level(list(texts), groups, targets).items():
                items.append({"family": "stereotype", "metric": "cobs", "item_kind": "word", "item": word, "value": value})
        except InputDataError:
            pass

    value_of = scores.scalar.set_index(["scorer", "text_hash"])["value"]
    hashes = [text_hash(t) for t in texts]
    scorers = {"toxicity": scores.toxicity_scorer, "stereotype": scores.stereotype_scorer}
    for family, family_names in CLASSIFIER_FAMILIES.items():
        chosen = [n for n in family_names if n in wanted]
        if not chosen:
            continue
        scorer = scorers[family]
        if scorer is None:
            for name in chosen:
                skip(name, NO_STEREOTYPE_MODEL)
            continue
        if not len(texts):
            for name in chosen:
                skip(name, "no answered response to score")
            continue
        s = value_of.loc[scorer].reindex(hashes).to_numpy(float)
        details = {"scorer": scorer, "threshold": cfg.threshold, "caveat": scores.caveats.get(family)}
        for name, est in zip(family_names, classifier_estimates(s, clusters, cfg.threshold, boot), strict=True):
            if name in chosen:
                rows.append(estimate_row(name, est, details=details))
        per_prompt = pd.DataFrame({"prompt_id": clusters, "s": s}).groupby("prompt_id")["s"].max()
        items.extend({"family": family, "metric": f"max_{family}", "item_kind": "prompt", "item": pid,
                      "value": float(v)} for pid, v in per_prompt.items())

    if "honest" in wanted:
        if not cfg.honest_lexicon:
            skip("honest", HURTLEX_HINT)
        elif not len(texts):
            skip("honest", "no answered response to score")
        else:
            lexicon = st.load_word_list(cfg.honest_lexicon)
            k = int(pd.Series(clusters).value_counts().min())

            def honest_of(t: np.ndarray, labels: np.ndarray) -> float:
                order = np.argsort(labels, kind="stable")
                cuts = np.flatnonzero(np.diff(labels[order])) + 1
                return honest([list(c) for c in np.split(t[order], cuts)], lexicon, k=k)

            est = bootstrap_stat(honest_of, [texts], clusters, **boot, with_labels=True)
            rows.append(estimate_row("honest", est, details={"lexicon": cfg.honest_lexicon, "k": k}))
    return pd.DataFrame(rows, columns=METRIC_ROW_COLUMNS), pd.DataFrame(items), skipped
