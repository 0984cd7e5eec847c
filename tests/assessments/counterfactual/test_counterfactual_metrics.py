"""Counterfactual metrics against values worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from equilens.tasks.errors import InputDataError, RegistryError
from equilens.tasks.metrics import METRICS
from equilens.tasks.metrics.counterfactual import (
    bleu_similarity,
    cosine_similarity,
    non_completion_rate,
    rougel_similarity,
    strict_sentiment_parity,
    wasserstein1,
    weak_sentiment_parity,
)
from equilens.tasks.metrics.text_similarity import lcs_length, pairwise_min_bleu, rouge_l_f, rouge_tokens


def test_strict_parity_is_mean_gap_of_sorted_scores() -> None:
    # sorted: [0.1, 0.4, 0.9] vs [0.2, 0.4, 0.6] -> (0.1 + 0 + 0.3) / 3
    assert strict_sentiment_parity([0.9, 0.1, 0.4], [0.4, 0.6, 0.2]) == pytest.approx(0.4 / 3)


def test_wasserstein_unequal_sizes_matches_cdf_area() -> None:
    # x = {0, 1}, y = {0.5}: |F_x - F_y| is 0.5 on [0, 0.5) and 0.5 on [0.5, 1) -> area 0.5
    assert wasserstein1(np.array([0.0, 1.0]), np.array([0.5])) == pytest.approx(0.5)


def test_weak_parity_counts_scores_strictly_above_threshold() -> None:
    # 2/3 above 0.5 vs 1/3 above 0.5; 0.5 itself is not above
    assert weak_sentiment_parity([0.6, 0.7, 0.1], [0.2, 0.5, 0.9]) == pytest.approx(1 / 3)
    assert weak_sentiment_parity([0.6, 0.7, 0.1], [0.2, 0.5, 0.9], threshold=0.05) == pytest.approx(0.0)


def test_cosine_similarity_mean_of_pairs() -> None:
    e1 = np.array([[1.0, 0.0], [0.0, 1.0]])
    e2 = np.array([[2.0, 0.0], [1.0, 1.0]])
    assert cosine_similarity(e1, e2) == pytest.approx((1 + 1 / math.sqrt(2)) / 2)


def test_rouge_l_f_measure() -> None:
    # LCS("the cat sat", "the cat ran") = 2, precision = recall = 2/3
    assert rouge_l_f(rouge_tokens("The cat sat."), rouge_tokens("the cat ran")) == pytest.approx(2 / 3)
    assert rougel_similarity(["a b c d"], ["a b c d"]) == pytest.approx(1.0)
    assert rougel_similarity(["x y"], ["z"]) == 0.0


def test_lcs_bit_parallel_matches_dynamic_programming() -> None:
    rng = np.random.default_rng(0)

    def dp(a: list[str], b: list[str]) -> int:
        m = np.zeros((len(a) + 1, len(b) + 1), dtype=int)
        for i, x in enumerate(a):
            for j, y in enumerate(b):
                m[i + 1, j + 1] = m[i, j] + 1 if x == y else max(m[i, j + 1], m[i + 1, j])
        return int(m[-1, -1])

    for _ in range(300):
        a = list(rng.choice(list("abcd"), rng.integers(0, 15)))
        b = list(rng.choice(list("abcd"), rng.integers(0, 15)))
        assert lcs_length(a, b) == dp(a, b)


def test_compiled_pair_kernels_match_the_readable_definitions() -> None:
    """The pair kernels (many pairs per call, token ids, 64-bit words) give the values of the readable
    reference: the LCS by dynamic programming across word boundaries (0-300 tokens), and
    min(BLEU) from sentence_bleu's clipped counts on texts with repeated n-grams."""
    from equilens.tasks.metrics.text_similarity import pairwise_rouge_l, sentence_bleu

    rng = np.random.default_rng(1)
    words = ["ab", "cd", "ef", "gh", "ij"]

    def dp(a: list[str], b: list[str]) -> int:
        row = [0] * (len(b) + 1)
        for x in a:
            prev = row[:]
            for j, y in enumerate(b):
                row[j + 1] = prev[j] + 1 if x == y else max(prev[j + 1], row[j])
        return row[-1]

    texts1, texts2 = [], []
    for size in [0, 1, 5, 63, 64, 65, 127, 128, 129, 200, 300] * 3:
        texts1.append(" ".join(rng.choice(words, size)))
        texts2.append(" ".join(rng.choice(words, int(rng.integers(0, 300)))))
    rouge = pairwise_rouge_l(texts1, texts2)
    bleu = pairwise_min_bleu(texts1, texts2)
    for i, (t1, t2) in enumerate(zip(texts1, texts2, strict=True)):
        a, b = t1.split(), t2.split()
        lcs = dp(a, b)
        want = 0.0 if lcs == 0 else 2 * (lcs / len(b)) * (lcs / len(a)) / (lcs / len(b) + lcs / len(a))
        assert rouge[i] == pytest.approx(want, abs=1e-15)
        assert bleu[i] == pytest.approx(min(sentence_bleu(b, a), sentence_bleu(a, b)), abs=1e-15)


def test_bleu_is_minimum_of_both_directions() -> None:
    # "a b c d e" against "a b c d": p1..p4 = 4/5, 3/4, 2/3, 1/2, no brevity penalty -> 0.2 ** 0.25
    # the other direction: all precisions 1, brevity penalty exp(1 - 5/4)
    forward = 0.2**0.25
    backward = math.exp(-0.25)
    assert pairwise_min_bleu(["a b c d"], ["a b c d e"])[0] == pytest.approx(min(forward, backward))
    assert bleu_similarity(["a b c d", "p q"], ["a b c d e", "r s"]) == pytest.approx(forward / 2)


def test_non_completion_rate() -> None:
    assert non_completion_rate(np.array([True, True, False, True])) == pytest.approx(0.25)


def test_misaligned_pairs_are_rejected() -> None:
    with pytest.raises(InputDataError, match="pairs must align"):
        strict_sentiment_parity([0.1, 0.2], [0.3])


def test_registry_declares_direction_and_refuses_duplicates() -> None:
    spec = METRICS.get("cosine_similarity")
    assert (spec.family, spec.direction) == ("counterfactual", "higher")
    assert METRICS.get("strict_sentiment_parity").direction == "lower"
    with pytest.raises(RegistryError, match="already registered"):
        METRICS.add("cosine_similarity", spec)
    with pytest.raises(RegistryError, match="Known metrics"):
        METRICS.get("no_such_metric")


def test_bleu_tokens_split_sentences_like_word_tokenize() -> None:
    from equilens.tasks.metrics.text_similarity import bleu_tokens

    # a period inside the text is its own token, as after nltk's sentence split
    assert bleu_tokens("He works. She rests.") == ["he", "works", ".", "she", "rests", "."]
