"""WEAT / SEAT on hand-made 2-d vectors with hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from equilens.tasks.assessments.bias_test.embedding_metrics import (
    association,
    fill_templates,
    seat_effect_size,
    seat_test,
    weat_effect_size,
    weat_test,
)
from equilens.tasks.errors import InputDataError
from equilens.tasks.metrics.base import METRICS

# s(w) = cos(w, (1,0)) - cos(w, (0,1)):  (1,0) -> 1, (1,1) -> 0, (0,1) -> -1, (-1,1) -> -sqrt 2
G1 = np.array([[1.0, 0.0], [1.0, 1.0]])
G2 = np.array([[0.0, 1.0], [-1.0, 1.0]])
A1 = np.array([[1.0, 0.0]])
A2 = np.array([[0.0, 1.0]])


def test_association_by_hand():
    np.testing.assert_allclose(association(np.vstack([G1, G2]), A1, A2), [1, 0, -1, -math.sqrt(2)])


def test_weat_effect_size_by_hand():
    # mean difference (1 + 0)/2 - (-1 - sqrt2)/2 = (2 + sqrt2)/2; sample variance of
    # [1, 0, -1, -sqrt2] = (4 - 2/4) / 3 = 7/6
    expected = (2 + math.sqrt(2)) / 2 / math.sqrt(7 / 6)
    assert weat_effect_size(G1, G2, A1, A2) == pytest.approx(expected)
    assert weat_effect_size(G2, G1, A1, A2) == pytest.approx(-expected)
    assert weat_effect_size(G1, G2, A2, A1) == pytest.approx(-expected)
    assert METRICS.get("weat_effect_size").family == "embedding"


def test_exact_permutation_p_value():
    # 6 equal-size splits of {1, 0, -1, -sqrt2}; only the observed one reaches the observed
    # difference (one-sided p = 1/6); its mirror image also reaches it in absolute value (1/3).
    res = weat_test(G1, G2, A1, A2)  # two-sided by default: the fair value is 0
    assert res.exact and res.n_permutations == 6
    assert res.p_value == pytest.approx(1 / 3) and res.p_greater == pytest.approx(1 / 6)
    assert res.statistic == pytest.approx((2 + math.sqrt(2)) / 2)
    assert weat_test(G1, G2, A1, A2, alternative="greater").p_value == pytest.approx(1 / 6)
    # reversed groups: the one-sided test sees nothing (p = 1), the two-sided one the same 1/3
    reversed_ = weat_test(G2, G1, A1, A2)
    assert reversed_.p_greater == pytest.approx(1.0) and reversed_.p_value == pytest.approx(1 / 3)


def test_sampled_permutation_p_value_is_seeded():
    rng = np.random.default_rng(1)
    g1 = rng.normal(size=(12, 5)) + [2, 0, 0, 0, 0]
    g2 = rng.normal(size=(12, 5)) - [2, 0, 0, 0, 0]
    a1, a2 = np.eye(5)[:1], np.eye(5)[1:2]
    r1 = weat_test(g1, g2, a1, a2, max_exact=100, n_samples=2000, seed=3)
    r2 = weat_test(g1, g2, a1, a2, max_exact=100, n_samples=2000, seed=3)
    assert not r1.exact and r1.n_permutations == 2000
    assert r1.p_value == r2.p_value
    assert r1.p_value < 0.01 and r1.effect_size > 1


def test_seat_with_fake_embedder():
    vectors = {
        "alpha": [1.0, 0.0],
        "beta": [1.0, 1.0],
        "gamma": [0.0, 1.0],
        "delta": [-1.0, 1.0],
        "good": [1.0, 0.0],
        "bad": [0.0, 1.0],
    }

    def embed(texts: list[str]) -> np.ndarray:
        # the "sentence" embedding is the vector of the one known word it contains
        return np.array([next(v for w, v in vectors.items() if w in t.lower()) for t in texts])

    assert fill_templates(["alpha"], ["{} is here.", "This is {}."]) == ["Alpha is here.", "This is alpha."]
    # every word appears in every template with the same vector: each value repeated 6 times
    s = np.repeat([1.0, 0.0, -1.0, -math.sqrt(2)], 6)
    expected = (s[:12].mean() - s[12:].mean()) / s.std(ddof=1)
    assert seat_effect_size(embed, ["alpha", "beta"], ["gamma", "delta"], ["good"], ["bad"]) == pytest.approx(
        expected
    )
    res = seat_test(embed, ["alpha", "beta"], ["gamma", "delta"], ["good"], ["bad"], n_samples=500, seed=0)
    # the permutation re-splits the 4 *terms* (each with its 6 sentences): 6 splits, exact, and
    # the observed split and its mirror reach |observed| -> p = 2/6 (permuting the 24 sentences
    # instead would give p < 0.01 from two terms per group).
    assert res.effect_size == pytest.approx(expected)
    assert res.exact and res.n_permutations == 6 and res.p_value == pytest.approx(1 / 3)


def test_weat_input_errors():
    with pytest.raises(InputDataError):
        weat_effect_size(G1, G2, A1, np.zeros((1, 2)))
    with pytest.raises(InputDataError):
        weat_effect_size(G1, G2, A1, np.ones((1, 3)))
    with pytest.raises(InputDataError):
        fill_templates(["x"], ["no placeholder"])


@pytest.mark.expensive
def test_minilm_embedder_seat():
    from equilens.tasks.scoring.embedders import sentence_transformer_embedder

    embed = sentence_transformer_embedder()
    assert embed(["This is a test."]).shape == (1, 384)
