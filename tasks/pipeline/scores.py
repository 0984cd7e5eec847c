"""Answers to scores: each distinct answer scored once (sentiment, toxicity, embeddings where a
metric reads them), in batches."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from equilens.tasks.config import ScoringConfig
from equilens.tasks.inputs.prompts import text_hash

ProgressFn = Callable[[int, int], None]


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


def score_texts(texts: list[str], cfg: ScoringConfig, progress: ProgressFn | None = None, *,
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

    from equilens.tasks.scoring import SCORERS
    from equilens.tasks.scoring.base import dedupe_texts

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
