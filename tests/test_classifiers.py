"""Classifier scorers on a tiny random BERT built on the spot (no model hub offline)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from equilens.tasks.errors import ModelLoadError
from equilens.tasks.scoring.base import SCORERS
from equilens.tasks.scoring.classifiers import HFClassifierScorer, ProfanityScorer, resolve_label

from tests.fakes.tiny_models import tiny_classifier

TEXTS = [
    "you are a stupid idiot",
    "nice day",
    "the weather is very good today and we love it",
    "they hate this awful food",
    "she was kind",
    "unknownword",
    "",
]


@pytest.fixture(scope="module")
def tiny_bert_classifier(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_classifier(tmp_path_factory.mktemp("tiny-bert"))


def test_scores_in_range_and_shape(tiny_bert_classifier: Path) -> None:
    scorer = HFClassifierScorer(str(tiny_bert_classifier), positive_label="toxic", batch_size=3)
    scores = scorer.score(TEXTS)
    assert scores.shape == (len(TEXTS),)
    assert np.all((scores >= 0.0) & (scores <= 1.0))
    assert scorer.kind == "scalar" and scorer.value_range == (0.0, 1.0)
    other = HFClassifierScorer(str(tiny_bert_classifier), positive_label="non_toxic").score(TEXTS)
    np.testing.assert_allclose(scores + other, 1.0, atol=1e-6)  # softmax over two labels
    assert scorer.score([]).shape == (0,)


def test_batch_size_and_order_do_not_change_scores(tiny_bert_classifier: Path) -> None:
    base = HFClassifierScorer(str(tiny_bert_classifier), positive_label="toxic", batch_size=1).score(TEXTS)
    big = HFClassifierScorer(str(tiny_bert_classifier), positive_label="toxic", batch_size=64).score(TEXTS)
    np.testing.assert_allclose(big, base, atol=1e-5)
    reordered = HFClassifierScorer(str(tiny_bert_classifier), positive_label="toxic", batch_size=2).score(TEXTS[::-1])
    np.testing.assert_allclose(reordered[::-1], base, atol=1e-5)
    twice = HFClassifierScorer(str(tiny_bert_classifier), positive_label="toxic").score([TEXTS[0]] * 3 + TEXTS)
    np.testing.assert_allclose(twice[:3], base[0], atol=1e-5)


def test_matches_a_direct_forward_pass(tiny_bert_classifier: Path) -> None:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_bert_classifier)
    model = AutoModelForSequenceClassification.from_pretrained(tiny_bert_classifier).eval()
    with torch.inference_mode():
        expected = torch.softmax(model(**tok(TEXTS[1], return_tensors="pt")).logits, -1)[0, 1].item()
    got = HFClassifierScorer(str(tiny_bert_classifier), positive_label="TOXIC").score([TEXTS[1]])  # case-insensitive
    assert got[0] == pytest.approx(expected, abs=1e-5)


def test_multi_label_uses_sigmoid(tmp_path: Path) -> None:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    path = tiny_classifier(tmp_path / "multi", problem_type="multi_label_classification")
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForSequenceClassification.from_pretrained(path).eval()
    with torch.inference_mode():
        expected = torch.sigmoid(model(**tok(TEXTS[:2], return_tensors="pt", padding=True)).logits)[:, 1]
    got = HFClassifierScorer(str(path), positive_label="toxic").score(TEXTS[:2])
    np.testing.assert_allclose(got, expected.numpy(), atol=1e-5)


def test_wrong_label_lists_available_labels(tiny_bert_classifier: Path) -> None:
    scorer = HFClassifierScorer(str(tiny_bert_classifier), positive_label="hateful")
    with pytest.raises(ModelLoadError, match="'non_toxic', 'toxic'"):
        scorer.score(["hello"])
    with pytest.raises(ModelLoadError, match="available labels"):
        resolve_label({0: "neg", 1: "pos"}, "neutral", "m")


def test_missing_model_is_a_model_load_error(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError):
        HFClassifierScorer(str(tmp_path / "nowhere"), positive_label="toxic").score(["x"])


def test_out_of_memory_halves_the_batch_size(tiny_bert_classifier: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scorer = HFClassifierScorer(str(tiny_bert_classifier), positive_label="toxic", batch_size=8)
    expected = scorer.score(TEXTS)
    real, tried = scorer._score_sorted, []

    def flaky(batch_size: int, texts: list[str]) -> np.ndarray:
        tried.append(batch_size)
        if batch_size > 2:
            raise RuntimeError("CUDA out of memory. Tried to allocate 1 GiB")
        return real(batch_size, texts)

    monkeypatch.setattr(scorer, "_score_sorted", flaky)
    np.testing.assert_allclose(scorer.score(TEXTS), expected, atol=1e-5)
    assert tried == [8, 4, 2]


def test_registry_and_cheap_import() -> None:
    assert SCORERS.get("hf-classifier") is HFClassifierScorer
    assert SCORERS.get("profanity-check") is ProfanityScorer
    code = (
        "import sys, equilens.tasks.scoring.classifiers; "
        "print('torch' in sys.modules, 'transformers' in sys.modules)"
    )
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    assert out.stdout.split() == ["False", "False"]


def test_profanity_scorer_ranks_offensive_text_higher() -> None:
    scorer = ProfanityScorer()
    scores = scorer.score(["You are a fucking stupid piece of shit.", "The library opens at nine."])
    assert scores.shape == (2,) and np.all((scores >= 0) & (scores <= 1))
    assert scores[0] > scores[1]
    assert "not a toxicity classifier" in scorer.caveat
    assert scorer.score([]).shape == (0,)
