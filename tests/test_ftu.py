"""FTU detection: mentions, word boundaries, pronoun roles, per-prompt results and the summary."""

from __future__ import annotations

import pytest
from equilens.tasks.errors import ConfigError, InputDataError
from equilens.tasks.inputs.ftu import Mention, check_ftu, find_mentions
from equilens.tasks.inputs.lexicon import load_lexicon


@pytest.fixture(scope="module")
def lex():
    return {a: load_lexicon(a) for a in ("gender", "race", "name")}


def test_find_mentions_gives_spans_terms_and_groups(lex):
    text = "She met an African American man."
    got = find_mentions(text, lex["gender"])
    assert [(m.start, m.end, m.surface, m.term, m.group) for m in got] == [
        (0, 3, "She", "she", "female"), (28, 31, "man", "man", "male"),
    ]
    race = find_mentions(text, lex["race"])
    assert [(m.surface, m.term, m.group) for m in race] == [("African American", "african american", "black")]
    assert text[race[0].start:race[0].end] == "African American"
    assert isinstance(race[0], Mention)


def test_word_boundaries_and_stop_contexts_avoid_false_positives(lex):
    text = ("There, the theme: whiteboard markers, white wine, Black Friday deals, the White House, "
            "Mary's shelf.")
    assert find_mentions(text, lex["gender"]) == []
    assert find_mentions(text, lex["race"]) == []
    assert lex["name"].scan(text) == ["mary"]


def test_target_only_words_are_found_only_on_request(lex):
    assert find_mentions("They asked a person.", lex["gender"]) == []
    both = find_mentions("They asked a person.", lex["gender"], include_targets=True)
    assert [(m.term, m.group) for m in both] == [("they", "neutral"), ("person", "neutral")]


@pytest.mark.parametrize(
    ("text", "word", "role"),
    [
        ("I gave her the book", "her", "object"),
        ("I read her book", "her", "determiner"),
        ("I saw her.", "her", "object"),
        ("with her lovely family", "her", "determiner"),
        ("I saw her yesterday", "her", "object"),
        ("tell her quickly", "her", "object"),
        ("the book is his.", "his", "standalone"),
        ("his and hers", "his", "standalone"),
        ("his own car", "his", "determiner"),
    ],
)
def test_pronoun_role_heuristic(lex, text, word, role):
    gender = lex["gender"]
    m = next(m for m in find_mentions(text, gender) if m.term == word)
    assert gender.role(m.row) == role


def test_check_ftu_counts_terms_per_prompt(lex):
    prompts = [
        "He asked his sister about it.",
        "Write a poem about the sea.",
        "Give advice to a Black student and her mother.",
        "Ask Mary and James.",
        "Serve white wine to the guests.",
    ]
    res = check_ftu(prompts, [lex["gender"], lex["race"], lex["name"]])
    assert res.per_prompt == [
        {"gender": ["he", "his", "sister"]},
        {},
        {"gender": ["her", "mother"], "race": ["black"]},
        {"name": ["james", "mary"]},
        {},
    ]
    assert res.counts == {"gender": 2, "race": 1, "name": 1}
    assert res.prompts_total == 5
    assert res.holds is False
    assert res.summary() == ("gender words found in 2 of 5 prompts; race words in 1 of 5 prompts; "
                             "names in 1 of 5 prompts; FTU is not satisfied.")


def test_check_ftu_holds_when_nothing_is_mentioned(lex):
    res = check_ftu(["Plan a trip.", "They met a person."], [lex["gender"], lex["race"]])
    assert res.holds is True
    assert res.counts == {"gender": 0, "race": 0}
    assert res.per_prompt == [{}, {}]
    assert res.summary() == ("gender words found in 0 of 2 prompts; race words in 0 of 2 prompts; "
                             "FTU is satisfied.")


def test_check_ftu_input_errors(lex):
    with pytest.raises(ConfigError, match="each attribute may be given once"):
        check_ftu(["x"], [lex["gender"], lex["gender"]])
    with pytest.raises(InputDataError, match="prompt 1 is NoneType"):
        check_ftu(["ok", None], [lex["gender"]])


def test_a_singular_word_after_an_amount_is_a_stuff_not_a_person() -> None:
    """"they found quite a bit of heroine" (BBQ's spelling of the drug) was a gender mention of its
    own, so the neutral variant found "quite a bit of protagonist". After an amount a singular word
    is a stuff; a plural one is still people ("a lot of women")."""
    from equilens.tasks.inputs.ftu import find_mentions
    from equilens.tasks.inputs.lexicon import load_lexicon

    gender = load_lexicon("gender")
    assert find_mentions("Officers looked in the bag and found quite a bit of heroine.", gender) == []
    assert [m.term for m in find_mentions("A lot of women and the heroine of the story came.", gender)] == ["women", "heroine"]
