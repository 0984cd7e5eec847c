"""Embedder factories: ``embed(list[str]) -> (n, d) array`` functions for WEAT and SEAT, from a
sentence-transformers model or any transformer's mean-pooled hidden states."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from equilens.tasks.errors import ConfigError, ModelLoadError

Embedder = Callable[[list[str]], np.ndarray]


def sentence_transformer_embedder(
    model: str = "all-MiniLM-L6-v2", batch_size: int = 64, device: str | None = None
) -> Embedder:
    """``embed`` from a sentence-transformers model; the default MiniLM ships offline."""
    from equilens.tasks.scoring import SCORERS

    scorer = SCORERS.get("sentence-embedding")(model, batch_size=batch_size, device=device)

    def embed(texts: list[str]) -> np.ndarray:
        return np.asarray(scorer.score(list(texts)), dtype=np.float64)

    return embed


def mean_pooled_embedder(
    model: str | Any, tokenizer: Any = None, batch_size: int = 32, layer: int = -1
) -> Embedder:
    """``embed`` from any transformer: hidden states of ``layer`` averaged over real tokens.

    ``model`` is an HF path / id, or a loaded model (then pass its ``tokenizer``).
    """
    import torch
    from transformers import AutoModel, AutoTokenizer

    if isinstance(model, str):
        try:
            tokenizer = AutoTokenizer.from_pretrained(model)
            model = AutoModel.from_pretrained(model)
        except (OSError, ValueError) as err:
            raise ModelLoadError(f"Cannot load transformer {model!r} for embeddings: {err}") from None
        from accelerate import PartialState

        model = model.to(PartialState().device).eval()
    elif tokenizer is None:
        raise ConfigError("mean_pooled_embedder needs the tokenizer of a model passed as an object.")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token

    def embed(texts: list[str]) -> np.ndarray:
        chunks = []
        with torch.inference_mode():
            for i in range(0, len(texts), batch_size):
                enc = tokenizer(
                    list(texts[i : i + batch_size]), padding=True, truncation=True, return_tensors="pt"
                )
                enc = {k: v.to(model.device) for k, v in enc.items()}
                hidden = model(**enc, output_hidden_states=True).hidden_states[layer].float()
                mask = enc["attention_mask"].unsqueeze(-1).float()
                chunks.append(((hidden * mask).sum(1) / mask.sum(1).clamp(min=1)).cpu().numpy())
        return np.concatenate(chunks).astype(np.float64) if chunks else np.zeros((0, 0))

    return embed
