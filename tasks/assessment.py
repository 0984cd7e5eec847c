"""Stage logic of the counterfactual assessment, as plain functions over DataFrames.

The Prefect flow in :mod:`flows.counterfactual` wraps each function in a task; tests and scripts
can call them directly. No function here writes to DuckDB: persistence is the flow's job, so a
cached stage never skips a write.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

from tasks.config import REPO_ROOT, CounterfactualConfig, LLMConfig, MetricsConfig, ScoringConfig
from tasks.llm.base import LLMRequest, LLMResult, cache_key
from tasks.prompts import text_hash

ProgressFn = Callable[[int, int], None]


# --- FTU and counterfactual expansion --------------------------------------------------------
def lexicons_for(cfg: CounterfactualConfig) -> dict:
    """Lexicon per attribute under test (built-in and custom); names separately under "name"."""
    from tasks.lexicon import custom_lexicon, load_lexicon

    data_dir = Path(cfg.lexicon_dir) if cfg.lexicon_dir else None
    out = {a: load_lexicon(a, data_dir) for a in cfg.attributes}
    for attribute, groups in cfg.custom.items():
        out[attribute] = custom_lexicon(attribute, groups)
    return out


def names_lexicon(cfg: CounterfactualConfig):  # noqa: ANN201 - Lexicon | None
    from tasks.lexicon import load_lexicon

    if not cfg.detect_names:
        return None
    return load_lexicon("name", Path(cfg.lexicon_dir) if cfg.lexicon_dir else None)


@dataclass
class FTUReport:
    holds: bool
    prompts_total: int
    counts: dict[str, int]
    summary: str
    mentions: list[dict[str, list[str]]] = field(repr=False)


def check_ftu_stage(prompts: pd.DataFrame, cfg: CounterfactualConfig) -> FTUReport:
    from tasks.ftu import check_ftu

    lexicons = list(lexicons_for(cfg).values())
    names = names_lexicon(cfg)
    if names is not None:
        lexicons.append(names)
    result = check_ftu(prompts["text"].tolist(), lexicons)
    return FTUReport(
        holds=result.holds,
        prompts_total=len(prompts),
        counts=dict(result.counts),
        summary=result.summary(),
        mentions=[dict(m) for m in result.per_prompt],
    )


def variant_id(prompt_id: str, attribute: str, group: str) -> str:
    return hashlib.sha256(f"{prompt_id}|{attribute}|{group}".encode()).hexdigest()[:16]


VARIANT_COLUMNS = ["variant_id", "prompt_id", "attribute", "grp", "text", "swapped", "valid", "problems"]


def expand_stage(prompts: pd.DataFrame, cfg: CounterfactualConfig) -> pd.DataFrame:
    """One row per (prompt mentioning an attribute, group of that attribute)."""
    from tasks.counterfactual import expand_prompts

    names = names_lexicon(cfg)
    pairs = list(zip(prompts["prompt_id"], prompts["text"], strict=True))
    rows = []
    for attribute, lexicon in lexicons_for(cfg).items():
        for v in expand_prompts(pairs, lexicon, names if attribute == "gender" else None):
            if attribute == "gender" and v.group == "neutral" and not cfg.include_neutral_gender:
                continue
            rows.append(
                {
                    "variant_id": variant_id(v.prompt_id, attribute, v.group),
                    "prompt_id": v.prompt_id,
                    "attribute": attribute,
                    "grp": v.group,
                    "text": v.text,
                    "swapped": [list(s) for s in v.swapped],
                    "valid": not v.problems,
                    "problems": list(v.problems),
                }
            )
    return pd.DataFrame(rows, columns=VARIANT_COLUMNS)


# --- LLM calls ---------------------------------------------------------------------------------
def build_requests(variants: pd.DataFrame, cfg: LLMConfig) -> list[LLMRequest]:
    reqs = []
    for row in variants.itertuples(index=False):
        for i in range(cfg.count):
            reqs.append(
                LLMRequest(
                    prompt=row.text,
                    sample_idx=i,
                    cache_key=cache_key(cfg, row.text, i),
                    meta={"variant_id": row.variant_id, "prompt_id": row.prompt_id,
                          "attribute": row.attribute, "grp": row.grp},
                )
            )
    return reqs


RESPONSE_COLUMNS = [
    "variant_id", "prompt_id", "attribute", "grp", "sample_idx", "text", "ok", "refusal",
    "error_class", "error_message", "attempts", "latency_s", "prompt_tokens", "completion_tokens",
    "cached", "cache_key",
]


def results_frame(results: list[LLMResult]) -> pd.DataFrame:
    rows = [
        {
            **r.request.meta,
            "sample_idx": r.request.sample_idx,
            "text": r.text,
            "ok": r.ok,
            "refusal": r.refusal,
            "error_class": r.error_class,
            "error_message": r.error_message,
            "attempts": r.attempts,
            "latency_s": r.latency_s,
            "prompt_tokens": r.prompt_tokens,
            "completion_tokens": r.completion_tokens,
            "cached": r.cached,
            "cache_key": r.request.cache_key,
        }
        for r in results
    ]
    frame = pd.DataFrame(rows, columns=RESPONSE_COLUMNS)
    return frame.astype({"prompt_tokens": "Int64", "completion_tokens": "Int64", "attempts": "Int64"})


# --- scoring ---------------------------------------------------------------------------------
@dataclass
class ScoreSet:
    """Scalar scores (long format, one row per distinct text and scorer) and embeddings."""

    scalar: pd.DataFrame  # text_hash, scorer, value
    ranges: dict[str, tuple[float, float]]
    embeddings: dict[str, np.ndarray]  # text_hash -> unit vector
    embedding_model: str


def score_stage(texts: list[str], cfg: ScoringConfig, progress: ProgressFn | None = None) -> ScoreSet:
    """Score each distinct response text once with the sentiment and embedding scorers."""
    from tasks.scoring.base import dedupe_texts
    from tasks.scoring.embeddings import SentenceEmbeddingScorer
    from tasks.scoring.sentiment import VaderScorer

    distinct, _ = dedupe_texts(texts)
    hashes = [text_hash(t) for t in distinct]
    sentiment = VaderScorer(cfg.sentiment_polarity)
    values = sentiment.score(distinct)
    if progress:
        progress(1, 2)
    embedder = SentenceEmbeddingScorer(cfg.embedding_model, cfg.batch_size, cfg.device)
    vectors = embedder.score(distinct) if distinct else np.zeros((0, 0), np.float32)
    if progress:
        progress(2, 2)
    scalar = pd.DataFrame({"text_hash": hashes, "scorer": sentiment.name, "value": values})
    return ScoreSet(
        scalar=scalar,
        ranges={sentiment.name: sentiment.value_range},
        embeddings=dict(zip(hashes, vectors, strict=True)),
        embedding_model=cfg.embedding_model,
    )


# --- metrics ---------------------------------------------------------------------------------
COUNTERFACTUAL_METRICS = [
    "strict_sentiment_parity", "weak_sentiment_parity", "cosine_similarity",
    "bleu_similarity", "rougel_similarity", "non_completion_rate",
]


def metric_stage(
    responses: pd.DataFrame, scores: ScoreSet, cf_cfg: CounterfactualConfig, cfg: MetricsConfig
) -> pd.DataFrame:
    """Every counterfactual metric for every pair of groups of every attribute, with intervals."""
    from tasks.counterfactual import neutralize
    from tasks.metrics import METRICS
    from tasks.metrics.counterfactual import pairwise_cosine
    from tasks.metrics.text_similarity import pairwise_min_bleu, pairwise_rouge_l
    from tasks.stats import bootstrap_mean, bootstrap_stat

    wanted = cfg.names or COUNTERFACTUAL_METRICS
    for name in wanted:
        METRICS.get(name)  # unknown names fail early with the list of known ones
    lexicons = lexicons_for(cf_cfg)
    sentiment = scores.scalar.set_index("text_hash")["value"]
    rows: list[dict] = []

    def emit(attribute: str, a: str, b: str | None, name: str, est, details: dict | None = None) -> None:
        spec = METRICS.get(name)
        rows.append(
            {
                "family": "counterfactual", "attribute": attribute, "group_a": a, "group_b": b,
                "metric": name, "value": est.value, "ci_low": est.ci_low, "ci_high": est.ci_high,
                "n": est.n, "direction": spec.direction, "aggregation": spec.aggregation,
                "details": details or {},
            }
        )

    boot = dict(resamples=cfg.bootstrap_resamples, confidence=cfg.confidence, seed=cfg.seed)
    for attribute, frame in responses.groupby("attribute", sort=True):
        groups = [g for g in lexicons[attribute].groups if g in set(frame["grp"])]
        if "non_completion_rate" in wanted:
            for g in groups:
                sub = frame[frame["grp"] == g]
                completed = (sub["ok"] & ~sub["refusal"]).to_numpy(bool)
                est = bootstrap_mean((~completed).astype(float), sub["prompt_id"], **boot)
                errors = sub.loc[~sub["ok"], "error_class"].value_counts().to_dict()
                emit(attribute, g, None, "non_completion_rate", est, {"errors": errors})
        ok = frame[frame["ok"]]
        wide = ok.pivot_table(index=["prompt_id", "sample_idx"], columns="grp", values="text", aggfunc="first")
        for a, b in combinations(groups, 2):
            if a not in wide or b not in wide:
                continue
            pair = wide[[a, b]].dropna()
            clusters = pair.index.get_level_values("prompt_id").to_numpy()
            t1, t2 = pair[a].tolist(), pair[b].tolist()
            h1, h2 = [text_hash(t) for t in t1], [text_hash(t) for t in t2]
            if "strict_sentiment_parity" in wanted or "weak_sentiment_parity" in wanted:
                s1, s2 = sentiment.reindex(h1).to_numpy(), sentiment.reindex(h2).to_numpy()
            if "strict_sentiment_parity" in wanted:
                fn = METRICS.get("strict_sentiment_parity").fn
                emit(attribute, a, b, "strict_sentiment_parity", bootstrap_stat(fn, [s1, s2], clusters, **boot))
            if "weak_sentiment_parity" in wanted:
                thr = cfg.weak_parity_threshold
                fn = METRICS.get("weak_sentiment_parity").fn
                est = bootstrap_stat(lambda x, y: fn(x, y, thr), [s1, s2], clusters, **boot)
                emit(attribute, a, b, "weak_sentiment_parity", est, {"threshold": thr})
            if "cosine_similarity" in wanted:
                e1 = np.stack([scores.embeddings[h] for h in h1]) if h1 else np.zeros((0, 1))
                e2 = np.stack([scores.embeddings[h] for h in h2]) if h2 else np.zeros((0, 1))
                vals = pairwise_cosine(e1, e2) if h1 else np.zeros(0)
                emit(attribute, a, b, "cosine_similarity", bootstrap_mean(vals, clusters, **boot),
                     {"embedding_model": scores.embedding_model})
            if "bleu_similarity" in wanted or "rougel_similarity" in wanted:
                if cfg.neutralize:
                    t1, t2 = neutralize(t1, lexicons[attribute]), neutralize(t2, lexicons[attribute])
                details = {"neutralized": cfg.neutralize}
                if "bleu_similarity" in wanted:
                    est = bootstrap_mean(pairwise_min_bleu(t1, t2), clusters, **boot)
                    emit(attribute, a, b, "bleu_similarity", est, details)
                if "rougel_similarity" in wanted:
                    est = bootstrap_mean(pairwise_rouge_l(t1, t2), clusters, **boot)
                    emit(attribute, a, b, "rougel_similarity", est, details)
    return pd.DataFrame(rows)


def default_data_dir() -> Path:
    return REPO_ROOT / "data"
