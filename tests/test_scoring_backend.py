"""Embedding backends (torch, ONNX Runtime) agree; the fast BLEU/ROUGE-L paths keep their values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from equilens.tasks.errors import ConfigError
from equilens.tasks.metrics.text_similarity import _min_bleu, pairwise_min_bleu, treebank_patterns_match_nltk
from equilens.tasks.scoring.embeddings import SentenceEmbeddingScorer
from equilens.tasks.scoring.onnx_backend import onnx_available

TEXTS = [
    "The applicant seems kind and careful in most situations.",
    "I would not recommend hiring them; they were rude to colleagues!",
    "Overall, this candidate is a reliable teammate who learns quickly. Yes.",
    "   leading and trailing spaces   ",
    "Short.",
    "A much longer answer that goes on for a while, mentioning the interview, the project, the deadline "
    "and the review, so that it is padded differently from the others in its batch.",
]


def test_unknown_backend_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        SentenceEmbeddingScorer(backend="tensorflow")


def test_onnx_backend_refuses_a_gpu_device() -> None:
    with pytest.raises(ConfigError):
        SentenceEmbeddingScorer(backend="onnx", device="cuda:0")


def test_onnx_backend_without_onnxruntime_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import equilens.tasks.scoring.onnx_backend as mod

    monkeypatch.setattr(mod, "onnx_available", lambda: False)
    mod.load_onnx_encoder.cache_clear()
    with pytest.raises(ConfigError, match=r"\[onnx\]"):
        SentenceEmbeddingScorer(backend="onnx").score(["x"])
    mod.load_onnx_encoder.cache_clear()


@pytest.mark.skipif(not onnx_available(), reason="optional extra [onnx] (onnxruntime, onnx) not installed")
def test_onnx_embeddings_equal_torch(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    import equilens.tasks.scoring.onnx_backend as mod

    monkeypatch.setenv("EQUILENS_ONNX_CACHE", str(tmp_path))
    mod.load_onnx_encoder.cache_clear()
    torch_vec = SentenceEmbeddingScorer(batch_size=4).score(TEXTS)
    onnx_vec = SentenceEmbeddingScorer(batch_size=4, backend="onnx", threads=1).score(TEXTS)
    mod.load_onnx_encoder.cache_clear()
    assert onnx_vec.shape == torch_vec.shape == (len(TEXTS), 384)
    assert list(tmp_path.glob("*.onnx")), "the export is cached in EQUILENS_ONNX_CACHE"
    np.testing.assert_allclose(np.linalg.norm(onnx_vec, axis=1), 1.0, atol=1e-6)
    assert np.abs(onnx_vec - torch_vec).max() < 1e-5
    cos_t, cos_o = torch_vec @ torch_vec.T, onnx_vec @ onnx_vec.T
    assert np.abs(cos_t - cos_o).max() < 1e-6


def test_min_bleu_equal_lengths_by_hand() -> None:
    # a = x y z, b = x y w (either is the candidate; lengths equal, so BP = exp(1 - 3/3) = 1)
    # 1-grams: 2 of 3 match; 2-grams: xy of {xy, yz} -> 1/2; 3-grams: none -> 0.1/1 (method 1);
    # 4-grams: none exist -> total max(1, 0) = 1, 0.1/1. BLEU = (2/3 * 1/2 * 0.1 * 0.1)^(1/4) = (1/300)^(1/4)
    assert _min_bleu(["x", "y", "z"], ["x", "y", "w"]) == pytest.approx(300 ** -0.25, rel=1e-12)


def test_min_bleu_takes_the_smaller_direction_by_hand() -> None:
    # a = x y z w (4 tokens), b = x y z (3). Clipped matches: 1-gram 3, 2-gram 2, 3-gram 1, 4-gram 0 (-> 0.1).
    # a as candidate: precisions 3/4, 2/3, 1/2, 0.1/1, BP 1 (4 > 3): (0.025)^(1/4) = 0.397635...
    # b as candidate: precisions 3/3, 2/2, 1/1, 0.1/1, BP exp(1 - 4/3): 0.1^(1/4) * e^(-1/3) = 0.402937...
    expected = min(0.025 ** 0.25, 0.1 ** 0.25 * math.exp(-1 / 3))
    assert expected == pytest.approx(0.397635, abs=1e-6)
    assert _min_bleu(["x", "y", "z", "w"], ["x", "y", "z"]) == pytest.approx(expected, rel=1e-12)
    assert _min_bleu([], ["x"]) == 0.0
    assert _min_bleu(["a"], ["b"]) == 0.0


def test_fast_tokenizers_give_nltks_tokens() -> None:
    tricky = [
        'He said "don\'t" -- can\'t (really)? Yes.', "``Quote'' and [brackets] {x} ... done!",
        "It's 3.5% of $4,000; isn't it? Mr. Smith left at 5 p.m. Then he came back.",
        "Ça va? Naïve café — über. “Curly” ‘quotes’ «here».", "", "   ", "Wait... what?! Really.",
    ]
    assert treebank_patterns_match_nltk(tricky + TEXTS)
    # a text in several pairs is tokenised once, and repeated calls give the same values
    first = pairwise_min_bleu(TEXTS, TEXTS[::-1])
    np.testing.assert_array_equal(first, pairwise_min_bleu(TEXTS, TEXTS[::-1]))


def test_each_distinct_text_pair_is_scored_once() -> None:
    from equilens.tasks.metrics.text_similarity import number_pairs, per_distinct_pair

    seen: list[str] = []
    calls: list[tuple[int, int]] = []

    def ids_of(text: str) -> np.ndarray:
        seen.append(text)
        return np.array([len(text)])

    def score(tokens: np.ndarray, offsets: np.ndarray, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        calls.extend(zip(left.tolist(), right.tolist()))
        return np.array([float(tokens[offsets[a]] - tokens[offsets[b]]) for a, b in zip(left, right)])

    texts, left, right = number_pairs(["a", "bb", "a", "a", "a"], ["c", "d", "c", "dd", "c"])
    assert texts == ["a", "bb", "c", "d", "dd"] and left.tolist() == [0, 1, 0, 0, 0]
    out = per_distinct_pair(score, ids_of, texts, left, right)
    assert out.tolist() == [0.0, 1.0, 0.0, -1.0, 0.0]
    assert seen == ["a", "bb", "c", "d", "dd"]  # each distinct text's ids looked up once
    assert sorted(calls) == [(0, 2), (0, 4), (1, 3)]  # each distinct pair scored once
    seen.clear()  # a text no pair reads is never tokenised
    assert per_distinct_pair(score, ids_of, ["unread", *texts], left + 1, right + 1).tolist() == out.tolist()
    assert seen == ["a", "bb", "c", "d", "dd"]


def test_token_ids_of_the_read_texts_form_one_csr_and_a_chunk_gathers_its_rows() -> None:
    from equilens.tasks.metrics.text_similarity import csr_rows, token_csr

    ids = {"a": [1, 2], "b": [], "c": [3], "long": list(range(5000))}  # "long" outgrows the first buffer
    texts = ["a", "b", "c", "long"]
    tokens, offsets = token_csr(lambda t: np.array(ids[t], np.int32), texts, np.array([2, 0, 1]))
    assert tokens.tolist() == [3, 1, 2] and offsets.tolist() == [0, 1, 3, 3]
    assert [x.tolist() for x in csr_rows(tokens, offsets, np.array([1, 2, 0]))] == [[1, 2, 3], [0, 2, 2, 3]]
    tokens, offsets = token_csr(lambda t: np.array(ids[t], np.int32), texts, np.array([3, 0]))
    assert offsets.tolist() == [0, 5000, 5002] and tokens[-3:].tolist() == [4999, 1, 2]
    assert [x.tolist() for x in csr_rows(tokens, offsets, np.array([1]))] == [[1, 2], [0, 2]]


def test_the_treebank_tokenizer_that_skips_patterns_gives_nltks_tokens() -> None:
    """Skipping a substitution that cannot match must change no token: random strings dense in the
    characters the patterns look for (quotes, brackets, dashes, contractions in mixed case, letters
    that match others under IGNORECASE), and every CrowS-Pairs sentence, against nltk's tokenizer."""
    import random

    from equilens.tasks.assessments.bias_test.crows_pairs import load_crows_pairs
    from equilens.tasks.metrics.quick_treebank import needed_chars
    from equilens.tasks.metrics.text_similarity import _nltk_treebank, _quick_treebank

    quick, ref = _quick_treebank(), _nltk_treebank()
    alphabet = [*"abcnNtTsSdDmMlLrReEvV '\"`.,:;@#$%&?!*()[]{}<>-«»“”‘’„‒–—―\t\n09KſıİK",
                "cannot", "CanNot", "gonna", "wanna ", "'tis", "'Twas", "d'ye", "MORE'N", "n't", "'ll",
                "''", "``", "--", "...", "gimme", "lemme", "gotta"]
    rng = random.Random(7)
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(20_000)]
    texts += [t for p in load_crows_pairs() for t in (p.sent_more, p.sent_less, p.sent_more.lower())]
    assert [t for t in texts if quick.tokenize(t) != ref.tokenize(t)] == []
    # the sets are read off the patterns: a quote pattern needs a quote, \s+ needs nothing known
    import re

    assert needed_chars(re.compile(r"([:,])([^\d])")) == frozenset(":,")
    assert needed_chars(re.compile(r"\s+")) is None
    assert needed_chars(re.compile(r"(?i)\b(can)(not)\b")) is None  # letters under IGNORECASE
    assert sum(needs is not None for _, _, needs in quick.head + quick.tail) >= 20
