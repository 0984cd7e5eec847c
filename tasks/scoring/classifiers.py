"""Text classifiers behind one interface: toxicity, stereotype, sentiment or any other label.

``hf-classifier`` loads any Hugging Face sequence-classification model (hub id or local path) and
returns the probability of one named label; ``profanity-check`` is the weak embedded default for
toxicity. torch/transformers are imported only when a model is loaded, so importing this module
is cheap.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Literal

import numpy as np
from equilens.tasks.errors import ModelLoadError
from equilens.tasks.scoring.base import SCORERS


def classifier_device() -> Any:
    """The device accelerate picks: a GPU when present, the CPU otherwise."""
    from accelerate import PartialState

    return PartialState().device


@lru_cache(maxsize=4)
def load_sequence_classifier(model: str, device: str | None = None) -> tuple[Any, Any]:
    """(model in eval mode on its device, tokenizer) for a hub id or local path; cached."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(model)
        clf = AutoModelForSequenceClassification.from_pretrained(model)
    except (OSError, ValueError, KeyError) as err:
        raise ModelLoadError(
            f"Cannot load sequence-classification model {model!r}: {err} "
            "(no model hub offline: give a local directory saved with save_pretrained)."
        ) from None
    return clf.to(device or classifier_device()).eval(), tok


def resolve_label(id2label: dict[int, str], positive_label: str, model: str) -> int:
    """Index of ``positive_label`` in ``id2label`` (exact match first, then case-insensitive)."""
    labels = {int(i): str(name) for i, name in id2label.items()}
    exact = [i for i, name in labels.items() if name == positive_label]
    loose = [i for i, name in labels.items() if name.lower() == positive_label.lower()]
    found = exact or loose
    if len(found) != 1:
        available = ", ".join(repr(labels[i]) for i in sorted(labels))
        raise ModelLoadError(
            f"Model {model!r} has no unique label {positive_label!r}; available labels: {available}."
        )
    return found[0]


def _halve(start: int) -> Any:
    size = start

    def reduce() -> int:
        nonlocal size
        size //= 2
        return size

    return reduce


class HFClassifierScorer:
    """Probability of ``positive_label`` from a Hugging Face sequence classifier, one per text.

    Softmax over the labels, or a per-label sigmoid when ``config.problem_type`` is
    ``multi_label_classification``. Texts are sorted by length to reduce padding, scored in batches
    under ``torch.inference_mode`` on the device accelerate picks, and returned in input order;
    on an out-of-memory error the batch size is halved and scoring restarts. The model loads on the
    first :meth:`score` (or an explicit :meth:`load`), which also checks the label name.
    """

    kind: Literal["scalar"] = "scalar"
    value_range = (0.0, 1.0)

    def __init__(
        self,
        model: str,
        positive_label: str,
        batch_size: int = 32,
        max_length: int | None = 512,
        device: str | None = None,
    ) -> None:
        if batch_size < 1:
            raise ModelLoadError(f"batch_size must be >= 1, got {batch_size}.")
        self.model_name = str(model)
        self.positive_label = positive_label
        self.batch_size = batch_size
        self.max_length = max_length
        self.device = device
        self.name = f"hf-classifier:{self.model_name}:{positive_label}"
        self._loaded: tuple[Any, Any, int, bool] | None = None

    def load(self) -> tuple[Any, Any, int, bool]:
        """(model, tokenizer, label index, multi-label?): loads once, validating the label name."""
        if self._loaded is None:
            clf, tok = load_sequence_classifier(self.model_name, self.device)
            index = resolve_label(clf.config.id2label, self.positive_label, self.model_name)
            multi = getattr(clf.config, "problem_type", None) == "multi_label_classification"
            self._loaded = (clf, tok, index, multi)
        return self._loaded

    def score(self, texts: Sequence[str]) -> np.ndarray:
        self.load()
        if len(texts) == 0:
            return np.zeros(0, dtype=np.float64)
        from accelerate.utils import find_executable_batch_size

        order = np.argsort([len(t) for t in texts], kind="stable")
        ordered = [texts[i] for i in order]
        run = find_executable_batch_size(
            self._score_sorted,
            starting_batch_size=self.batch_size,
            reduce_batch_size_fn=_halve(self.batch_size),
        )
        try:
            scores = run(ordered)
        except RuntimeError as err:
            if "No executable batch size" not in str(err):
                raise
            raise ModelLoadError(f"{self.name}: out of memory even with batch size 1.") from None
        out = np.empty(len(texts), dtype=np.float64)
        out[order] = scores
        return out

    def _score_sorted(self, batch_size: int, texts: list[str]) -> np.ndarray:
        import torch

        clf, tok, index, multi = self.load()
        truncate = {"truncation": True, "max_length": self.max_length} if self.max_length else {}
        parts: list[np.ndarray] = []
        with torch.inference_mode():
            for start in range(0, len(texts), batch_size):
                enc = tok(texts[start : start + batch_size], padding=True, return_tensors="pt", **truncate)
                logits = clf(**enc.to(clf.device)).logits.float()
                probs = torch.sigmoid(logits) if multi else torch.softmax(logits, dim=-1)
                parts.append(probs[:, index].cpu().numpy())
        return np.concatenate(parts).astype(np.float64)


class ProfanityScorer:
    """Offensive-language probability from ``alt-profanity-check`` (the embedded weak default).

    A linear SVM on bag-of-words features trained on offensive tweets: it flags profanity and slurs
    but misses toxicity without swear words (threats, dog whistles, stereotypes) and over-flags
    harmless swearing. Use a real toxicity classifier through ``hf-classifier`` where one is at hand.
    """

    kind: Literal["scalar"] = "scalar"
    value_range = (0.0, 1.0)
    name = "profanity-check"
    caveat = (
        "profanity-check is a weak bag-of-words offensive-language model, not a toxicity classifier: "
        "it keys on swear words and slurs, misses implicit toxicity, and over-flags casual swearing."
    )

    def __init__(self) -> None:
        try:
            from profanity_check import predict_prob
        except ImportError as err:
            raise ModelLoadError(f"profanity-check needs the alt-profanity-check package: {err}") from None
        self._predict = predict_prob

    def score(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros(0, dtype=np.float64)
        return np.clip(np.asarray(self._predict(list(texts)), dtype=np.float64), 0.0, 1.0)


SCORERS.add("hf-classifier", HFClassifierScorer)
SCORERS.add("profanity-check", ProfanityScorer)
