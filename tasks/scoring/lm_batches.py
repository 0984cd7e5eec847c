"""Batching for language-model scoring: sentence-list checks, index batches and padded id / mask
tensors, shared by the likelihood scorers and the masked-target probabilities."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from equilens.tasks.errors import InputDataError


def check_sentences(sentences: Sequence[str]) -> list[str]:
    if isinstance(sentences, str):
        raise InputDataError("Expected a list of sentences, got a single string.")
    out = list(sentences)
    for i, s in enumerate(out):
        if not isinstance(s, str) or not s.strip():
            raise InputDataError(f"Sentence {i} is empty or not a string: {s!r}.")
    return out


def pad_rows(rows: Sequence[Sequence[int]], pad_id: int) -> tuple[Any, Any]:
    import torch

    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = torch.as_tensor(r, dtype=torch.long)
        mask[i, : len(r)] = 1
    return ids, mask


def index_batches(order: np.ndarray, size: int) -> list[np.ndarray]:
    return [order[i : i + size] for i in range(0, len(order), size)]


def pad_token_id(tokenizer: Any) -> int:
    for tid in (tokenizer.pad_token_id, tokenizer.eos_token_id, 0):
        if tid is not None:
            return int(tid)
    return 0
