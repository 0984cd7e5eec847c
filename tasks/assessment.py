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
    "cached", "cache_key", "cost",
]


def call_cost(cfg: LLMConfig, prompt_tokens: int | None, completion_tokens: int | None, cached: bool) -> float | None:
    """Money paid for one call from the config's price table; cache hits cost nothing."""
    if cfg.price_input_per_1k is None and cfg.price_output_per_1k is None:
        return None
    if cached:
        return 0.0
    return ((prompt_tokens or 0) * (cfg.price_input_per_1k or 0.0)
            + (completion_tokens or 0) * (cfg.price_output_per_1k or 0.0)) / 1000


def results_frame(results: list[LLMResult], cfg: LLMConfig | None = None) -> pd.DataFrame:
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
            "cost": call_cost(cfg, r.prompt_tokens, r.completion_tokens, r.cached) if cfg else None,
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
PARITY_METRICS = ("strict_sentiment_parity", "weak_sentiment_parity")


@dataclass
class PairData:
    """Row-aligned responses of two sides (two groups, or two samples of one group)."""

    texts1: list[str]
    texts2: list[str]
    clusters: np.ndarray


class _MetricContext:
    def __init__(self, scores: ScoreSet, cfg: MetricsConfig, wanted: list[str]) -> None:
        from tasks.metrics import METRICS

        self.metrics, self.cfg, self.wanted = METRICS, cfg, wanted
        self.sentiment = scores.scalar.set_index("text_hash")["value"]
        self.scores = scores
        self.boot = dict(resamples=cfg.bootstrap_resamples, confidence=cfg.confidence, seed=cfg.seed)
        self.rows: list[dict] = []

    def emit(self, attribute: str, a: str, b: str | None, name: str, est, details: dict | None = None) -> dict:
        spec = self.metrics.get(name)
        row = {
            "family": spec.family, "attribute": attribute, "group_a": a, "group_b": b, "metric": name,
            "value": est.value, "ci_low": est.ci_low, "ci_high": est.ci_high, "n": est.n,
            "direction": spec.direction, "aggregation": spec.aggregation, "details": details or {},
        }
        self.rows.append(row)
        return row

    def parity_fn(self, name: str) -> Callable[[np.ndarray, np.ndarray], float]:
        fn = self.metrics.get(name).fn
        if name == "weak_sentiment_parity":
            thr = self.cfg.weak_parity_threshold
            return lambda x, y: fn(x, y, thr)
        return fn

    def pair_metrics(self, attribute: str, a: str, b: str, pair: PairData, lexicon, details: dict) -> list[dict]:
        """Every wanted pair metric for one pair of sides; returns the emitted rows."""
        from tasks.counterfactual import neutralize
        from tasks.metrics.counterfactual import pairwise_cosine
        from tasks.metrics.text_similarity import pairwise_min_bleu, pairwise_rouge_l
        from tasks.stats import bootstrap_mean, bootstrap_stat, permutation_pvalue

        out = []
        h1, h2 = [text_hash(t) for t in pair.texts1], [text_hash(t) for t in pair.texts2]
        s1, s2 = self.sentiment.reindex(h1).to_numpy(), self.sentiment.reindex(h2).to_numpy()
        for name in PARITY_METRICS:
            if name in self.wanted:
                fn = self.parity_fn(name)
                est = bootstrap_stat(fn, [s1, s2], pair.clusters, **self.boot)
                extra = {"threshold": self.cfg.weak_parity_threshold} if name == "weak_sentiment_parity" else {}
                if self.cfg.permutations:
                    extra["p_value"] = permutation_pvalue(fn, s1, s2, pair.clusters, self.cfg.permutations, self.cfg.seed)
                out.append(self.emit(attribute, a, b, name, est, {**details, **extra}))
        if "cosine_similarity" in self.wanted:
            emb = self.scores.embeddings
            vals = pairwise_cosine(np.stack([emb[h] for h in h1]), np.stack([emb[h] for h in h2])) if h1 else np.zeros(0)
            out.append(self.emit(attribute, a, b, "cosine_similarity", bootstrap_mean(vals, pair.clusters, **self.boot),
                                 {**details, "embedding_model": self.scores.embedding_model}))
        t1, t2 = pair.texts1, pair.texts2
        if self.cfg.neutralize and ("bleu_similarity" in self.wanted or "rougel_similarity" in self.wanted):
            t1, t2 = neutralize(t1, lexicon), neutralize(t2, lexicon)
        for name, fn in (("bleu_similarity", pairwise_min_bleu), ("rougel_similarity", pairwise_rouge_l)):
            if name in self.wanted:
                est = bootstrap_mean(fn(t1, t2), pair.clusters, **self.boot)
                out.append(self.emit(attribute, a, b, name, est, {**details, "neutralized": self.cfg.neutralize}))
        return out


def _by_prompt_sample(ok: pd.DataFrame) -> pd.DataFrame:
    """One row per (prompt, sample index), one column of response text per group."""
    return ok.pivot_table(index=["prompt_id", "sample_idx"], columns="grp", values="text", aggfunc="first")


def _cross_group_pairs(wide: pd.DataFrame, a: str, b: str) -> PairData:
    if a not in wide or b not in wide:
        return PairData([], [], np.array([]))
    pair = wide[[a, b]].dropna()
    return PairData(pair[a].tolist(), pair[b].tolist(), pair.index.get_level_values("prompt_id").to_numpy())


def _same_group_pairs(ok: pd.DataFrame, g: str) -> PairData:
    """Sample 2k vs sample 2k+1 of the same variant: what pure sampling noise looks like."""
    sub = ok[ok["grp"] == g]
    wide = sub.pivot_table(index="prompt_id", columns="sample_idx", values="text", aggfunc="first")
    t1, t2, clusters = [], [], []
    for k in range(0, max(wide.columns, default=-1), 2):
        if k + 1 not in wide:
            break
        both = wide[[k, k + 1]].dropna()
        t1 += both[k].tolist()
        t2 += both[k + 1].tolist()
        clusters += both.index.tolist()
    return PairData(t1, t2, np.asarray(clusters, dtype=object))


def metric_stage(
    responses: pd.DataFrame, scores: ScoreSet, cf_cfg: CounterfactualConfig, cfg: MetricsConfig
) -> pd.DataFrame:
    """Every counterfactual metric for every pair of groups of every attribute, with intervals.

    Also, per attribute: non-completion rate per group; for parity metrics a within-prompt
    permutation p-value per pair, Holm-adjusted across the attribute's pairs, and an omnibus
    test (the largest pairwise parity gap); and, when ``count >= 2``, a same-group noise floor
    (two independent samples of one group compared with the same metrics, ``group_a == group_b``).
    """
    from tasks.metrics import METRICS
    from tasks.stats import bootstrap_mean, holm_adjust, permutation_pvalue_omnibus

    wanted = cfg.names or COUNTERFACTUAL_METRICS
    for name in wanted:
        METRICS.get(name)  # unknown names fail early with the list of known ones
    lexicons = lexicons_for(cf_cfg)
    ctx = _MetricContext(scores, cfg, wanted)
    for attribute, frame in responses.groupby("attribute", sort=True):
        groups = [g for g in lexicons[attribute].groups if g in set(frame["grp"])]
        if "non_completion_rate" in wanted:
            for g in groups:
                sub = frame[frame["grp"] == g]
                completed = (sub["ok"] & ~sub["refusal"]).to_numpy(bool)
                est = bootstrap_mean((~completed).astype(float), sub["prompt_id"], **ctx.boot)
                errors = sub.loc[~sub["ok"], "error_class"].value_counts().to_dict()
                ctx.emit(attribute, g, None, "non_completion_rate", est, {"errors": errors})
        ok = frame[frame["ok"]]
        wide = _by_prompt_sample(ok)
        emitted: list[dict] = []
        for a, b in combinations(groups, 2):
            pair = _cross_group_pairs(wide, a, b)
            if pair.texts1:
                emitted += ctx.pair_metrics(attribute, a, b, pair, lexicons[attribute], {})
        for g in groups:
            pair = _same_group_pairs(ok, g)
            if pair.texts1:
                ctx.pair_metrics(attribute, g, g, pair, lexicons[attribute], {"baseline": "same-group samples"})
        for name in PARITY_METRICS:
            rows = [r for r in emitted if r["metric"] == name and "p_value" in r["details"]]
            for r, adj in zip(rows, holm_adjust([r["details"]["p_value"] for r in rows]), strict=True):
                r["details"]["p_holm"] = adj
            if rows and cfg.permutations and len(groups) > 2:
                full = wide[groups].dropna()
                matrix = np.column_stack([ctx.sentiment.reindex([text_hash(t) for t in full[g]]).to_numpy()
                                          for g in groups])
                p = permutation_pvalue_omnibus(ctx.parity_fn(name), matrix,
                                               full.index.get_level_values("prompt_id").to_numpy(),
                                               cfg.permutations, cfg.seed)
                worst = max(rows, key=lambda r: r["value"])
                worst["details"]["omnibus_p_value"] = p
                worst["details"]["omnibus"] = f"max over {len(rows)} pairs, groups permuted within prompt"
    return pd.DataFrame(ctx.rows)


def default_data_dir() -> Path:
    return REPO_ROOT / "data"
