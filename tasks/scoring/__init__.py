"""Batch scorers (sentiment, embeddings, classifiers, LM likelihoods) behind one registry."""

from tasks.scoring.base import SCORERS, Scorer, dedupe_texts

__all__ = ["SCORERS", "Scorer", "dedupe_texts"]
