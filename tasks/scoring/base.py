"""The scorer extension point.

A scorer turns a batch of texts into numbers: one float per text (``kind="scalar"``, e.g.
sentiment or toxicity probability) or one vector per text (``kind="vector"``, embeddings).
Factories are registered in :data:`SCORERS` by name; the stages look them up there and call them
with the options from the config, so a new scorer is one registered factory.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal, Protocol

import numpy as np
from equilens.tasks.registry import Registry


class Scorer(Protocol):
    name: str
    kind: Literal["scalar", "vector"]
    value_range: tuple[float, float] | None
    """Inclusive bounds of scalar scores (validated between stages); None for vectors."""

    def score(self, texts: Sequence[str]) -> np.ndarray:
        """Return shape (n,) for scalar scorers or (n, d) for vector scorers."""
        ...


ScorerFactory = Callable[..., Scorer]
SCORERS: Registry[ScorerFactory] = Registry("scorer")


def dedupe_texts(texts: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """Distinct texts in first-seen order, and for each input the index of its distinct text.

    Scoring the distinct list and indexing with the inverse scores every text exactly once.
    """
    index: dict[str, int] = {}
    inverse = np.empty(len(texts), dtype=np.int64)
    for i, t in enumerate(texts):
        inverse[i] = index.setdefault(t, len(index))
    return list(index), inverse
