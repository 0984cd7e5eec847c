"""Stage logic of the counterfactual assessment up to scoring, as plain functions over DataFrames
(the metric stage is :mod:`equilens.tasks.pipeline.metrics`).

The Prefect flow in :mod:`equilens.flows.counterfactual` wraps each function in a task; tests and scripts
can call them directly. No function here writes to DuckDB: persistence is the flow's job, so a
cached stage never skips a write.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from equilens.tasks.config import CounterfactualConfig, LLMConfig, ScoringConfig
from equilens.tasks.llm.base import ANSWER_CUT, LLMRequest, LLMResult, cache_key
from equilens.tasks.inputs.controls import CONTROL, VARIANT
from equilens.tasks.inputs.prompts import text_hash

ProgressFn = Callable[[int, int], None]


# --- FTU and counterfactual expansion --------------------------------------------------------
def lexicons_for(cfg: CounterfactualConfig) -> dict:
    """Lexicon per attribute under test (built-in and custom); names separately under "name"."""
    from equilens.tasks.inputs.lexicon import custom_lexicon, load_lexicon

    data_dir = Path(cfg.lexicon_dir) if cfg.lexicon_dir else None
    out = {a: load_lexicon(a, data_dir) for a in cfg.attributes}
    for attribute, groups in cfg.custom.items():
        out[attribute] = custom_lexicon(attribute, groups)
    return out


def names_lexicon(cfg: CounterfactualConfig):  # noqa: ANN201 - NameTable | None
    """The first-name table (gender and race mentions), or None when names are switched off."""
    from equilens.tasks.inputs.names import load_names

    if not cfg.detect_names:
        return None
    return load_names(Path(cfg.lexicon_dir) if cfg.lexicon_dir else None)


@dataclass
class FTUReport:
    holds: bool
    prompts_total: int
    counts: dict[str, int]
    summary: str
    mentions: list[dict[str, list[str]]] = field(repr=False)


def check_ftu_stage(prompts: pd.DataFrame, cfg: CounterfactualConfig) -> FTUReport:
    from equilens.tasks.inputs.ftu import check_ftu

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


VARIANT_COLUMNS = ["variant_id", "prompt_id", "attribute", "grp", "text", "swapped", "valid", "problems", "role",
                   "control_kind"]
NONE_JSON = "[]"
"""``swapped`` and ``problems`` of a variant with none: both columns hold JSON text, as they are stored
(a Python list per row cost ~0.3 GB at 100,000 prompts and was pickled into the cached result)."""


def as_json(items: tuple | list) -> str:
    """A variant's swaps ((original, replacement) pairs) or problems as JSON text."""
    return json.dumps(list(items)) if items else NONE_JSON  # a pair (a tuple) is written as a list


def uses_controls(cfg: CounterfactualConfig) -> bool:
    return cfg.noise_floor in ("controls", "both")


def expand_stage(prompts: pd.DataFrame, cfg: CounterfactualConfig) -> pd.DataFrame:
    """One row per (prompt mentioning an attribute, variant group of that attribute).

    A prompt skipped by ``multi_group: skip`` gets one invalid row (group "*") whose problem says
    why, so the record keeps it and the flow drops it. With same-group controls on
    (``noise_floor: controls|both``) each valid variant is followed by its control (``role`` =
    "control", ``control_kind`` says how it was made, see :mod:`equilens.tasks.inputs.controls`). ``swapped``
    and ``problems`` are JSON text (:func:`as_json`).
    """
    from equilens.tasks.inputs.controls import control_text
    from equilens.tasks.inputs.expansion import SKIPPED, expand_prompts

    names = names_lexicon(cfg)
    pairs = list(zip(prompts["prompt_id"], prompts["text"], strict=True))
    columns: dict[str, list] = {name: [] for name in VARIANT_COLUMNS}  # a list per column, not a dict per row
    add = [columns[name].append for name in VARIANT_COLUMNS]

    def row(*values: object) -> None:
        for append, value in zip(add, values, strict=True):
            append(value)

    for attribute, lexicon in lexicons_for(cfg).items():
        use_names = names if attribute in ("gender", "race") else None
        for v in expand_prompts(pairs, lexicon, use_names, multi_group=cfg.multi_group):
            if attribute == "gender" and v.group == "neutral" and not cfg.include_neutral_gender:
                continue
            row(variant_id(v.prompt_id, attribute, v.group), v.prompt_id, attribute, v.group, v.text,
                as_json(v.swapped), not v.problems, as_json(v.problems), VARIANT, None)
            if uses_controls(cfg) and v.group != SKIPPED and not v.problems:
                text, kind = control_text(v.text, v.prompt_id, lexicon, use_names)
                row(variant_id(v.prompt_id, attribute, f"{v.group}|{CONTROL}"), v.prompt_id, attribute, v.group,
                    text, NONE_JSON, True, NONE_JSON, CONTROL, kind)
    return pd.DataFrame(columns, columns=VARIANT_COLUMNS)


# --- LLM calls ---------------------------------------------------------------------------------
def build_requests(variants: pd.DataFrame, cfg: LLMConfig) -> list[LLMRequest]:
    """``cfg.count`` calls per variant; a variant with a ``system`` text (an identity profile) sends it
    as that call's system message."""
    reqs = []
    for row in variants.itertuples(index=False):
        system = getattr(row, "system", None)
        system = system if isinstance(system, str) else None
        for i in range(cfg.count):
            reqs.append(
                LLMRequest(
                    prompt=row.text,
                    sample_idx=i,
                    cache_key=cache_key(cfg, row.text, i, system),
                    meta={"variant_id": row.variant_id, "prompt_id": row.prompt_id,
                          "attribute": row.attribute, "grp": row.grp, "role": getattr(row, "role", VARIANT)},
                    system=system,
                )
            )
    return reqs


RESPONSE_COLUMNS = [
    "variant_id", "prompt_id", "attribute", "grp", "role", "sample_idx", "text", "ok", "refusal",
    "error_class", "error_message", "attempts", "latency_s", "prompt_tokens", "completion_tokens",
    "cached", "cache_key", "cost", "truncated",
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
    meta = [r.request.meta for r in results]
    columns: dict[str, list] = {name: [m.get(name) for m in meta] for name in RESPONSE_COLUMNS[:5]}
    columns.update(
        sample_idx=[r.request.sample_idx for r in results], text=[r.text for r in results],
        ok=[r.ok for r in results], refusal=[r.refusal for r in results],
        error_class=[r.error_class for r in results], error_message=[r.error_message for r in results],
        attempts=[r.attempts for r in results], latency_s=[r.latency_s for r in results],
        prompt_tokens=[r.prompt_tokens for r in results], completion_tokens=[r.completion_tokens for r in results],
        cached=[r.cached for r in results], cache_key=[r.request.cache_key for r in results],
        cost=[call_cost(cfg, r.prompt_tokens, r.completion_tokens, r.cached) if cfg else None for r in results],
        # cut at llm.max_answer_chars: flagged on the result, and in its message (which also crosses processes)
        truncated=[r.truncated or (r.error_message or "").startswith(ANSWER_CUT) for r in results],
    )
    frame = pd.DataFrame(columns, columns=RESPONSE_COLUMNS)  # a list per column, not a dict per row
    return frame.astype({"prompt_tokens": "Int64", "completion_tokens": "Int64", "attempts": "Int64"})


# --- scoring ---------------------------------------------------------------------------------
@dataclass
class ScoreSet:
    """Scalar scores (long format, one row per distinct text and scorer) and embeddings."""

    scalar: pd.DataFrame  # text_hash, scorer, value
    ranges: dict[str, tuple[float, float]]
    embeddings: dict[str, np.ndarray]  # text_hash -> unit vector (empty when no metric reads them)
    embedding_model: str

    @classmethod
    def joined(cls, parts: list[ScoreSet]) -> ScoreSet:
        """One score set from the score sets of shards (a text answered in two shards counts once)."""
        if len(parts) == 1:
            return parts[0]
        scalar = pd.concat([p.scalar for p in parts], ignore_index=True).drop_duplicates(["text_hash", "scorer"])
        return cls(scalar.reset_index(drop=True), {k: v for p in parts for k, v in p.ranges.items()},
                   {k: v for p in parts for k, v in p.embeddings.items()},
                   next((p.embedding_model for p in parts if p.embedding_model), ""))

    def subset(self, texts: pd.Series) -> ScoreSet:
        """The scores of ``texts`` only (what one attribute's metric task needs)."""
        hashes = {text_hash(t) for t in texts.dropna().unique()}
        # a set membership per row (pandas' isin of a set against an Arrow string column builds one
        # scalar per string: ~10x slower at a million answers)
        keep = [h in hashes for h in self.scalar["text_hash"].to_numpy(dtype=object)]
        scalar = self.scalar[np.array(keep, dtype=bool)].reset_index(drop=True)
        embeddings = {h: v for h, v in self.embeddings.items() if h in hashes}
        return ScoreSet(scalar, self.ranges, embeddings, self.embedding_model)

    def digest(self) -> str:
        """Content key for caches downstream: the vectors follow from the texts (their hashes are in
        ``scalar``), the model and the code, so they need not be hashed themselves."""
        from equilens.tasks.storage.fingerprint import frame_digest

        return f"{frame_digest(self.scalar)}|{self.embedding_model}|{len(self.embeddings)}"


def needs_embeddings(metric_names: list[str] | None) -> bool:
    """Does the run compute a counterfactual metric that reads sentence embeddings (cosine)?"""
    from equilens.tasks.metrics import METRICS
    from equilens.tasks.metrics.base import wanted_metrics

    return any(METRICS.get(n).inputs == "embeddings" for n in wanted_metrics(metric_names, "counterfactual"))


def score_stage(texts: list[str], cfg: ScoringConfig, progress: ProgressFn | None = None, *,
                embeddings: bool = True) -> ScoreSet:
    """Score each distinct response text once with the sentiment scorer and, when ``embeddings``
    (see :func:`needs_embeddings`), the embedding model.

    VADER (pure Python, holds the GIL) runs in a side thread while the embedding model encodes
    (torch and ONNX Runtime release the GIL in their kernels), so its time hides under encoding.
    Without ``embeddings`` nothing is encoded and the score set holds no vectors: a run without
    cosine similarity neither pays for encoding nor carries 384 floats per answer through the
    cached task results.
    """
    from concurrent.futures import ThreadPoolExecutor

    from equilens.tasks.scoring.base import dedupe_texts
    from equilens.tasks.scoring import SCORERS

    distinct, _ = dedupe_texts(texts)
    hashes = [text_hash(t) for t in distinct]
    sentiment = SCORERS.get(cfg.sentiment)(cfg.sentiment_polarity)
    if embeddings:
        embedder = SCORERS.get("sentence-embedding")(cfg.embedding_model, cfg.batch_size, cfg.device,
                                                     backend=cfg.backend, threads=cfg.threads)
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="equilens-sentiment") as side:
            pending = side.submit(sentiment.score, distinct)
            vectors = embedder.score(distinct) if distinct else np.zeros((0, 0), np.float32)
            values = pending.result()
    else:
        values, vectors = sentiment.score(distinct), np.zeros((0, 0), np.float32)
    if progress:
        progress(2, 2)
    scalar = pd.DataFrame({"text_hash": hashes, "scorer": sentiment.name, "value": values})
    return ScoreSet(
        scalar=scalar,
        ranges={sentiment.name: sentiment.value_range},
        embeddings=dict(zip(hashes, vectors, strict=True)) if embeddings else {},
        embedding_model=cfg.embedding_model if embeddings else "",
    )
