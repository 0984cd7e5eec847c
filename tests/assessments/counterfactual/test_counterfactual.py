"""Counterfactual expansion, neutralisation and variant validation, on hand-worked examples."""

from __future__ import annotations

import equilens.tasks.inputs.expansion as cf
import pytest
from equilens.tasks.errors import InputDataError
from equilens.tasks.inputs.expansion import Variant, expand_prompt, expand_prompts
from equilens.tasks.inputs.lexicon import custom_lexicon, load_lexicon
from equilens.tasks.inputs.neutralization import neutralize
from equilens.tasks.inputs.variant_validation import validate_variant


@pytest.fixture(scope="module")
def race():
    return load_lexicon("race")


@pytest.fixture(scope="module")
def names():
    return load_lexicon("name")


@pytest.mark.parametrize(
    ("text", "male", "female", "neutral"),
    [
        ("I gave her the book", "I gave him the book", "I gave her the book", "I gave them the book"),
        ("her book", "his book", "her book", "their book"),
        ("the book is his.", "the book is his.", "the book is hers.", "the book is theirs."),
        ("Is it hers?", "Is it his?", "Is it hers?", "Is it theirs?"),
        ("He saw himself.", "He saw himself.", "She saw herself.", "They saw themself."),
        ("She doesn't like it.", "He doesn't like it.", "She doesn't like it.", "They don't like it."),
    ],
)
def test_pronouns_follow_their_role(gender, text, male, female, neutral):
    assert expand_prompt(text, gender) == {"male": male, "female": female, "neutral": neutral}


def test_case_is_preserved(gender):
    assert expand_prompt("He said", gender)["female"] == "She said"
    assert expand_prompt("HE SAID", gender)["female"] == "SHE SAID"
    assert expand_prompt("so he said", gender)["female"] == "so she said"
    # Mr pairs with Mrs (a decision of the lexicon); Ms still maps back to Mr
    assert expand_prompt("Mr. Lee", gender) == {"male": "Mr. Lee", "female": "Mrs. Lee", "neutral": "Mx. Lee"}
    assert expand_prompt("Ms. Lee", gender)["male"] == "Mr. Lee"


def test_neutral_agreement_for_be_have_do_and_contractions(gender):
    text = "He is tired, he was late, he has time, he does it, he's nice, he's been here."
    got = expand_prompt(text, gender)
    assert got["neutral"] == ("They are tired, they were late, they have time, they do it, they're nice, "
                              "they've been here.")
    assert got["female"] == ("She is tired, she was late, she has time, she does it, she's nice, "
                             "she's been here.")


def test_articles_follow_the_swapped_word(gender, race):
    assert expand_prompt("He is an actor.", gender) == {
        "male": "He is an actor.", "female": "She is an actress.", "neutral": "They are a performer.",
    }
    assert expand_prompt("A white nurse", race)["asian"] == "An Asian nurse"  # English capitals
    assert expand_prompt("a white nurse", race)["asian"] == "an asian nurse"  # the writer's lowercase


def test_multi_word_terms_keep_title_case_and_hyphens(race):
    got = expand_prompt("An African American engineer", race)
    assert got == {
        "white": "A White engineer",
        "black": "An African American engineer",
        "asian": "An Asian engineer",
        "hispanic": "A Latino engineer",
        "native_american": "A Native American engineer",
        "middle_eastern": "A Middle Eastern engineer",
    }
    assert expand_prompt("asian-american voters", race)["black"] == "african-american voters"
    assert expand_prompt("White people", race)["hispanic"] == "Hispanic people"


def test_names_swap_to_a_name_of_the_target_group(gender, names):
    got = expand_prompt("Ask James about his plan.", gender, names)
    assert got["male"] == "Ask James about his plan."
    # In the 2020 census James is the second most frequent male name typical of white Americans
    # (82% white, 10% Black, 3% Hispanic; Michael is first), so it maps to the second such
    # female name, Patricia (Mary first; Jennifer, 15% Hispanic, is not typical).
    assert got["female"] == "Ask Patricia about her plan."
    new = got["neutral"].split()[1]
    assert names.info[new.lower()].gender == "unisex" and got["neutral"] == f"Ask {new} about their plan."
    # a name alone is a gender mention when names are given
    assert expand_prompt("Mary left.", gender, names)["male"] == "Michael left."
    assert expand_prompt("Mary left.", gender) == {}


def test_prompt_without_mentions_is_not_expanded(gender, race):
    assert expand_prompt("Plan a trip to the white mountains with a person.", gender) == {}
    assert expand_prompt("Pour some white wine.", race) == {}


def test_custom_lexicon_expansion():
    age = custom_lexicon("age", {"young": ["young", "younger"], "old": ["old", "older"]})
    assert expand_prompt("A younger worker", age) == {"young": "A younger worker", "old": "An older worker"}


def test_neutralize_uses_group_independent_placeholders(gender):
    out = neutralize(["He loves his wife.", "She loves her husband.", "They love their spouse."], gender)
    ph = gender.placeholders
    masked = f"{ph['he']} loves {ph['his']} {ph['wife']}."
    assert masked == "gender1 loves gender2 gender15."
    assert out == [masked, masked, "gender1 love gender2 gender15."]
    age = custom_lexicon("age", {"young": ["young", "younger"], "old": ["old", "older"]})
    assert neutralize(["An older, OLD man", "a younger man"], age) == ["An age2, age1 man", "a age2 man"]
    with pytest.raises(InputDataError, match="pass a list"):
        neutralize("He", gender)


def test_validate_variant_accepts_term_article_and_agreement_changes(gender, names):
    assert validate_variant("He is an actor.", "They are a performer.", gender, group="neutral") == []
    assert validate_variant("Ask James.", "Ask Mary.", gender, names, group="female") == []


def test_validate_variant_catches_extra_changed_words(gender):
    assert validate_variant("He is a doctor.", "She is a good doctor.", gender) == [
        "added 'good ' outside attribute terms"
    ]
    assert validate_variant("He is a doctor.", "She is a nurse.", gender) == [
        "changed 'doctor' to 'nurse' outside attribute terms"
    ]
    assert validate_variant("He is a doctor.", "He is a doctor.", gender, group="female") == [
        "variant for 'female' still has 'He' (male) where female was asked for"
    ]


def test_expand_prompts_returns_validated_variants(gender, names):
    out = expand_prompts([("p1", "He thanked his boss."), ("p2", "Plan a trip.")], gender, names)
    assert out == [
        Variant("p1", "gender", "male", "He thanked his boss.", (), keeps_groups=True),
        Variant("p1", "gender", "female", "She thanked her boss.", (("He", "She"), ("his", "her"))),
        Variant("p1", "gender", "neutral", "They thanked their boss.", (("He", "They"), ("his", "their"))),
    ]
    # two groups (he, wife): role reversal, no neutral variant, never "He thanked his husband"
    out = expand_prompts([("p1", "He thanked his wife.")], gender, names)
    assert [(v.group, v.text, v.problems) for v in out] == [
        ("male", "He thanked his wife.", ()), ("female", "She thanked her husband.", ()),
    ]


def test_expand_prompts_reports_broken_variants_without_raising(gender, monkeypatch):
    real = cf._variant

    def broken(*args):
        vtext, swapped, problems = real(*args)
        return vtext.replace("tired", "sleepy"), swapped, problems

    monkeypatch.setattr(cf, "_variant", broken)
    out = expand_prompts([("p1", "He is tired.")], gender)
    assert [v.problems for v in out] == [("changed 'tired' to 'sleepy' outside attribute terms",)] * 3


def test_expand_prompts_input_errors(gender):
    with pytest.raises(InputDataError, match="prompt id 'p1' occurs twice"):
        expand_prompts([("p1", "He"), ("p1", "She")], gender)
    with pytest.raises(InputDataError, match=r"item 0 must be a \(prompt_id, text\) pair"):
        expand_prompts(["He"], gender)


def test_variant_swaps_and_problems_are_json_text_as_stored() -> None:
    """A Python list per row cost ~0.3 GB at 100,000 prompts, carried through the LLM stage and pickled
    into the cached result; the frame holds the JSON text the store keeps."""
    import json

    import pandas as pd
    from equilens.tasks.config import CounterfactualConfig
    from equilens.tasks.pipeline import expand_stage

    frame = expand_stage(pd.DataFrame({"prompt_id": ["p"], "text": ["Is he a good nurse?"]}),
                         CounterfactualConfig(attributes=["gender"]))
    variants = frame[frame["role"] == "variant"].set_index("grp")
    assert variants["swapped"].to_dict() == {"male": "[]", "female": '[["he", "she"]]', "neutral": '[["he", "they"]]'}
    assert {json.dumps(json.loads(s)) for s in frame["swapped"]} == set(frame["swapped"])
    assert set(frame["problems"]) == {"[]"}
