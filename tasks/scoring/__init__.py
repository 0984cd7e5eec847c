"""Batch scorers (sentiment, embeddings, classifiers, LM likelihoods) behind one registry.

Importing this package registers the built-in scorers; heavy libraries load only when used.
"""

from equilens.tasks.scoring import classifiers, embeddings, sentiment  # noqa: F401 - register scorers
from equilens.tasks.scoring.base import SCORERS, Scorer, dedupe_texts

__all__ = ["SCORERS", "Scorer", "dedupe_texts"]
