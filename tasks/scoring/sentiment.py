"""VADER sentiment (the lexicon ships inside ``vaderSentiment``): ~10k texts/s on one core."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from equilens.tasks.scoring.base import SCORERS


class VaderScorer:
    """One VADER component per text: ``neg`` or ``pos`` in [0, 1], or ``compound`` in [-1, 1]."""

    kind: Literal["scalar"] = "scalar"

    def __init__(self, polarity: Literal["neg", "pos", "compound"] = "neg") -> None:
        from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

        self.polarity = polarity
        self.name = f"vader-{polarity}"
        self.value_range = (-1.0, 1.0) if polarity == "compound" else (0.0, 1.0)
        self._analyzer = SentimentIntensityAnalyzer()

    def score(self, texts: Sequence[str]) -> np.ndarray:
        scores = self._analyzer.polarity_scores
        return np.fromiter((scores(t)[self.polarity] for t in texts), dtype=np.float64, count=len(texts))


SCORERS.add("vader", VaderScorer)
