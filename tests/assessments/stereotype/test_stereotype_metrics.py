"""Stereotype and toxicity metrics against numbers worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from equilens.tasks.assessments.stereotype.classifier_metrics import (
    expected_maximum_stereotype,
    expected_maximum_toxicity,
    honest,
    stereotype_fraction,
    stereotype_probability,
    toxic_fraction,
    toxicity_probability,
)
from equilens.tasks.assessments.stereotype.metrics import (
    cobs,
    cobs_word_level,
    default_groups,
    default_stopwords,
    default_targets,
    demographic_representation,
    load_word_list,
    stereotypical_associations,
    stereotypical_associations_word_level,
    tvd_from_uniform,
)
from equilens.tasks.errors import InputDataError
from equilens.tasks.metrics.base import METRICS

# LangFair's worked example (stereotype metrics notebook, section 4).
SEED = [
    "He was confident after receiving a job offer.",
    "She was emotional after a stressful week and not as confident.",
]
B = 0.95
SEED_COBS = abs(math.log10(B**8 * (1 + B**2 + B**4 + B**5) / (1 + B**3 + B**4 + B**8)))
# the stop words of the seed's list that occur in the two sentences
SEED_STOP = ["he", "she", "was", "after", "a", "and", "not", "as"]


# ---------------------------------------------------------------------------------------- COBS


def test_cobs_golden_seed_example() -> None:
    value = cobs(SEED, {"male": ["he"], "female": ["she"]}, targets=["confident"], stop_words=SEED_STOP)
    assert SEED_COBS == pytest.approx(0.1584, abs=5e-5)
    assert value == pytest.approx(SEED_COBS, rel=1e-12)


def test_cobs_golden_with_default_lists() -> None:
    assert cobs(SEED, targets=["confident"]) == pytest.approx(SEED_COBS, rel=1e-12)


def test_cobs_word_level_sign_and_absolute() -> None:
    signed = cobs_word_level(SEED, targets=["confident", "emotional", "pilot"], absolute=False)
    # emotional never co-occurs with a male word, pilot never occurs: both undefined, left out
    assert signed == {"confident": pytest.approx(SEED_COBS)}  # male/female ratio > 1
    assert cobs_word_level(SEED, targets=["confident"]) == {"confident": pytest.approx(SEED_COBS)}


def test_cobs_hand_computed_beta_one() -> None:
    texts = ["he is a brave pilot", "she is a brave nurse and he is a pilot"]
    # beta=1: male num brave=pilot=2, den=5, mentions 2 of 5 kept words -> P=1;
    # female num 1, den 3, mentions 1/5 -> P=5/3; log10(3/5) for both words
    assert cobs(texts, targets=["brave", "pilot"], beta=1.0) == pytest.approx(abs(math.log10(0.6)))
    words = cobs_word_level(texts, targets=["brave", "pilot"], beta=1.0, absolute=False)
    assert words == {"brave": pytest.approx(math.log10(0.6)), "pilot": pytest.approx(math.log10(0.6))}


def test_cobs_symmetric_is_zero_and_window() -> None:
    assert cobs(["he is kind", "she is kind"], targets=["kind"]) == pytest.approx(0.0)
    # a 5-token window drops confident-she (distance 10): the ratio is undefined
    assert math.isnan(cobs(SEED, targets=["confident"], window=5))
    assert cobs_word_level(SEED, targets=["confident"], window=5) == {}
    assert cobs(SEED, targets=["confident"], window=10) == pytest.approx(SEED_COBS)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"texts": []},
        {"texts": [None]},
        {"texts": SEED, "groups": {"a": ["he"], "b": ["she"], "c": ["they"]}},
        {"texts": SEED, "groups": {"a": ["he"], "b": []}},
        {"texts": SEED, "targets": ["job offer"]},
        {"texts": SEED, "beta": 0.0},
        {"texts": SEED, "window": 0},
        {"texts": SEED, "target_category": "colour"},
    ],
)
def test_cobs_input_errors(kwargs: dict) -> None:
    with pytest.raises(InputDataError):
        cobs(**kwargs)


def test_default_lists() -> None:
    assert len(default_targets("adjective")) >= 100
    assert len(default_targets("profession")) >= 100
    assert set(default_groups()) == {"male", "female"}
    assert {"the", "was", "he", "she"} <= default_stopwords()
    assert not default_stopwords() & set(default_targets("adjective") + default_targets("profession"))


# ------------------------------------------------------------------------ SA, DR, TVD


def test_stereotypical_associations_golden_seed_example() -> None:
    assert stereotypical_associations(SEED, targets=["confident", "emotional"]) == pytest.approx(0.25)
    assert stereotypical_associations_word_level(SEED, targets=["confident", "emotional"]) == {
        "confident": pytest.approx(0.0),
        "emotional": pytest.approx(0.5),
    }


def test_stereotypical_associations_three_groups_and_mention_counts() -> None:
    groups = {"a": ["x"], "b": ["y"], "c": ["z"]}
    texts = ["x y kind", "x kind", "z calm"]
    # kind: (2,1,0) -> TVD 1/3; calm: (0,0,1) -> 2/3; rude absent -> skipped
    assert stereotypical_associations(texts, groups, targets=["kind", "calm", "rude"]) == pytest.approx(0.5)
    # mentions, not responses: (2,1) -> (2/3,1/3) -> 1/6
    assert stereotypical_associations(["He, he and she: brave."], targets=["brave"]) == pytest.approx(1 / 6)
    assert math.isnan(stereotypical_associations(["nobody here"], targets=["brave"]))


def test_demographic_representation() -> None:
    assert demographic_representation(SEED) == pytest.approx(0.0)
    assert demographic_representation(["He and his son.", "She left."]) == pytest.approx(0.25)
    groups = {"a": ["x"], "b": ["y"], "c": ["z"]}
    assert demographic_representation(["x x y", "x"], groups) == pytest.approx(5 / 12)
    assert math.isnan(demographic_representation(["no mentions"]))
    with pytest.raises(InputDataError):
        demographic_representation([])
    with pytest.raises(InputDataError):
        demographic_representation(SEED, {"only": ["he"]})


def test_tvd_from_uniform_rows() -> None:
    out = tvd_from_uniform(np.array([[1, 1], [0, 3], [0, 0]]))
    assert out[:2] == pytest.approx([0.0, 0.5])
    assert math.isnan(out[2])


# ------------------------------------------------------------------ classifier-score metrics

SCORES = [0.2, 0.4, 0.9, 0.6, 0.1, 0.5]
PROMPTS = ["a", "a", "a", "a", "b", "b"]


def test_fraction_is_pooled_over_all_responses_as_the_seed_defines_it() -> None:
    assert stereotype_fraction(SCORES) == pytest.approx(2 / 6)  # 0.5 is not strictly above 0.5
    # SF = (1/N) sum I(s > 0.5): 0.9 and 0.6 of six responses, whatever prompts they answer
    # (the per-prompt mean would give (2/4 + 0/2) / 2 = 0.25)
    assert stereotype_fraction(SCORES, PROMPTS) == pytest.approx(2 / 6)
    # count=1 keeps the first answer per prompt: a -> 0.2, b -> 0.1: none above
    assert stereotype_fraction(SCORES, PROMPTS, count=1) == pytest.approx(0.0)
    assert stereotype_fraction(SCORES, threshold=0.05) == pytest.approx(1.0)


def test_expected_maximum() -> None:
    assert expected_maximum_stereotype(SCORES, PROMPTS) == pytest.approx((0.9 + 0.5) / 2)
    assert expected_maximum_stereotype(SCORES) == pytest.approx(0.9)
    # first 2 generations per prompt: a -> 0.4, b -> 0.5
    assert expected_maximum_stereotype(SCORES, PROMPTS, count=2) == pytest.approx(0.45)
    # interleaved prompts keep input order within each prompt
    assert expected_maximum_toxicity([0.1, 0.2, 0.3, 0.4], [1, 2, 1, 2], count=1) == pytest.approx(0.15)


def test_probability_any_above() -> None:
    assert stereotype_probability(SCORES, PROMPTS) == pytest.approx(1.0)  # b reaches 0.5 (>=)
    assert stereotype_probability(SCORES, PROMPTS, threshold=0.6) == pytest.approx(0.5)
    assert stereotype_probability(SCORES, threshold=0.95) == pytest.approx(0.0)
    assert stereotype_probability(SCORES, PROMPTS, threshold=0.45, count=2) == pytest.approx(0.5)


def test_toxicity_metrics_share_the_implementation() -> None:
    assert toxic_fraction(SCORES, PROMPTS) == stereotype_fraction(SCORES, PROMPTS)
    assert expected_maximum_toxicity(SCORES, PROMPTS) == expected_maximum_stereotype(SCORES, PROMPTS)
    assert toxicity_probability(SCORES, PROMPTS, 0.6) == stereotype_probability(SCORES, PROMPTS, 0.6)


@pytest.mark.parametrize(
    ("scores", "prompts", "count"),
    [([], None, None), ([0.1, 0.2], ["a"], None), ([0.1, float("nan")], None, None),
     ([0.1, 0.2, 0.3], ["a", "a", "b"], 2), ([0.1], None, 0), ([[0.1, 0.2]], None, None)],
)
def test_classifier_metric_errors(scores: list, prompts: list | None, count: int | None) -> None:
    with pytest.raises(InputDataError):
        expected_maximum_toxicity(scores, prompts, count=count)


# ------------------------------------------------------------------------------------ HONEST

LEX = ["bitch", "ass", "dirty rat"]


def test_honest_hand_counts() -> None:
    completions = [["a bitch", "kind"], ["classy", "nice"], ["ASS.", "ok"]]
    assert honest(completions, LEX) == pytest.approx(2 / 6)  # 'classy' is not 'ass'
    assert honest(completions, LEX, k=1) == pytest.approx(2 / 3)
    assert honest([["you dirty rat", "dirty rats", "Dirty, rat!", "a rat"]], LEX) == pytest.approx(2 / 4)


def test_honest_lexicon_files(tmp_path) -> None:
    txt = tmp_path / "hurt.txt"
    txt.write_text("# hurtful words\nBitch\n\nass\nbitch\n", encoding="utf-8")
    assert load_word_list(txt) == ["bitch", "ass"]
    csv_file = tmp_path / "hurt.csv"
    csv_file.write_text("id,word\n1,bitch\n2,ass\n", encoding="utf-8")
    tsv_file = tmp_path / "hurtlex_EN.tsv"
    tsv_file.write_text("id\tpos\tcategory\tlemma\n1\tn\tan\tbitch\n", encoding="utf-8")
    completions = [["a bitch", "kind"], ["an ass", "nice"]]
    assert honest(completions, txt) == pytest.approx(0.5)
    assert honest(completions, str(csv_file)) == pytest.approx(0.5)
    assert honest(completions, tsv_file) == pytest.approx(0.25)
    bad = tmp_path / "bad.csv"
    bad.write_text("term\nbitch\n", encoding="utf-8")
    with pytest.raises(InputDataError, match="'word'"):
        honest(completions, bad)
    with pytest.raises(InputDataError):
        honest(completions, tmp_path / "missing.txt")


@pytest.mark.parametrize(
    ("completions", "k", "lexicon"),
    [([], None, LEX), ([["a", "b"], ["c"]], None, LEX), ([["a"], ["b"]], 2, LEX), ([["a"]], 0, LEX),
     ([["a"]], None, []), ([[None]], None, LEX)],
)
def test_honest_errors(completions: list, k: int | None, lexicon: list) -> None:
    with pytest.raises(InputDataError):
        honest(completions, lexicon, k=k)


# ---------------------------------------------------------------------------------- registry


def test_registered_specs() -> None:
    families = {
        "cobs": "stereotype", "stereotypical_associations": "stereotype",
        "demographic_representation": "stereotype", "stereotype_fraction": "stereotype",
        "expected_maximum_stereotype": "stereotype", "stereotype_probability": "stereotype",
        "toxic_fraction": "toxicity", "expected_maximum_toxicity": "toxicity",
        "toxicity_probability": "toxicity", "honest": "toxicity",
    }
    for name, family in families.items():
        spec = METRICS.get(name)
        assert (spec.family, spec.direction) == (family, "lower")
        assert spec.description and spec.reference
    assert METRICS.get("toxic_fraction").fn is toxic_fraction
