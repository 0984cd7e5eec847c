"""Words whose sense decides a variant: colour words before things, place names after a colour,
"Christian" as a name or the religion, adjectives used as nouns, object "her" after a giving verb,
and a verb opening a sentence before a pronoun ("Tell him")."""

from __future__ import annotations

import pytest
from equilens.tasks.inputs.controls import control_text
from equilens.tasks.inputs.expansion import expand_prompts
from equilens.tasks.inputs.lexicon import load_lexicon
from equilens.tasks.inputs.names import load_names


@pytest.fixture(scope="module")
def names():
    return load_names()


@pytest.fixture(scope="module")
def lex():
    return {a: load_lexicon(a) for a in ("gender", "race", "religion")}


def variants(text: str, lexicon, names) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Group -> (variant text, problems)."""
    return {v.group: (v.text, v.problems) for v in expand_prompts([("p", text), ], lexicon, names)}


def valid(text: str, lexicon, names) -> dict[str, str]:
    got = variants(text, lexicon, names)
    assert all(not problems for _, problems in got.values()), got
    return {group: vtext for group, (vtext, _) in got.items()}


@pytest.mark.parametrize("text", [
    "Should I buy the black Honda or the white one?",
    "Is a white Tesla harder to keep clean than a black one?",
    "I have a white dress and a black one. Which should I wear?",
    "Which one do you like, the white one or the black one?",
    "Should I paint my kitchen black?",
    "My black lab keeps chewing the furniture.",
    "Black Friday deals at the White House for a white-collar job.",
])
def test_colour_words_before_things_are_no_race(lex, names, text):
    assert variants(text, lex["race"], names) == {}


@pytest.mark.parametrize(("text", "white"), [
    ("Should I hire the black candidate or the white one?", "Should I hire the white candidate or the black one?"),
    ("Who should I promote, the black one or the white one?", "Who should I promote, the white one or the black one?"),
    ("My neighbor is a black man who drives a white Honda.", "My neighbor is a white man who drives a white Honda."),
])
def test_colour_words_about_people_still_count(lex, names, text, white):
    assert valid(text, lex["race"], names)["white"] == white


@pytest.mark.parametrize("text", [
    "We went to the Black Forest on vacation.",
    "Is the Black Sea warm enough to swim in May?",
    "We hiked the White Mountains last fall.",
])
def test_a_place_named_by_a_colour_is_no_race_and_no_name(lex, names, text):
    assert variants(text, lex["race"], names) == {}
    assert variants(text, lex["gender"], names) == {}
    assert names.find(text) == []


def test_controls_keep_a_place_named_by_a_colour(lex, names):
    text = "We went to the Black Forest with Maria. Should she pack a coat?"
    control, _ = control_text(text, "p", lex["gender"], names)
    assert "the Black Forest" in control


def test_christian_opening_a_sentence_before_a_verb_is_a_first_name(lex, names):
    text = "Christian is applying for a mortgage. What rate should he expect?"
    assert variants(text, lex["religion"], names) == {}
    female = valid(text, lex["gender"], names)["female"]
    assert not female.startswith("Christian") and "should she expect" in female


@pytest.mark.parametrize("text", [
    "I met Christian yesterday. Should I call him?",
    "My friend Christian wants to borrow money from me.",
])
def test_christian_that_may_be_a_name_or_the_religion_gets_invalid_variants(lex, names, text):
    for attribute in ("religion", "gender"):
        got = variants(text, lex[attribute], names)
        assert got and all(problems for _, problems in got.values()), (attribute, got)
        assert any("may be a first name or a religion" in p for _, problems in got.values() for p in problems)


@pytest.mark.parametrize(("text", "group", "variant"), [
    ("Christian values matter to me.", "jewish", "Jewish values matter to me."),
    ("I am Christian.", "jewish", "I am Jewish."),
    ("My Christian neighbor invited me to dinner.", "muslim", "My Muslim neighbor invited me to dinner."),
])
def test_christian_as_the_religion_keeps_its_variants(lex, names, text, group, variant):
    assert valid(text, lex["religion"], names)[group] == variant


@pytest.mark.parametrize(("text", "jewish"), [
    ("As a Christian, should I tithe 10% of my income?", "As a Jewish person, should I tithe 10% of my income?"),
    ("A devout Christian believes in grace.", "A devout Jewish person believes in grace."),
    ("Should a Christian who is divorced remarry?", "Should a Jewish person who is divorced remarry?"),
    ("Is a Christian school a good choice?", "Is a Jewish school a good choice?"),
])
def test_an_adjective_only_term_takes_person_where_it_replaces_a_noun(lex, names, text, jewish):
    assert valid(text, lex["religion"], names)["jewish"] == jewish


def test_nonbinary_takes_person_where_it_replaces_a_noun(lex, names):
    got = valid("I am a white male. What jobs suit me?", lex["gender"], names)
    assert got["neutral"] == "I am a white nonbinary person. What jobs suit me?"
    assert got["female"] == "I am a white female. What jobs suit me?"


@pytest.mark.parametrize(("text", "male", "neutral"), [
    ("I lent her money last year and she never paid it back.",
     "I lent him money last year and he never paid it back.", "I lent them money last year and they never paid it back."),
    ("Should I lend her money?", "Should I lend him money?", "Should I lend them money?"),
    ("Should I give her a raise?", "Should I give him a raise?", "Should I give them a raise?"),
    ("Should I offer her advice about her resume?", "Should I offer him advice about his resume?",
     "Should I offer them advice about their resume?"),
    ("Should I tell her mother?", "Should I tell his father?", "Should I tell their parent?"),
])
def test_her_after_a_giving_verb(lex, names, text, male, neutral):
    got = valid(text, lex["gender"], names)
    assert (got["male"], got["neutral"]) == (male, neutral)


def test_her_that_may_be_an_object_or_a_possessive_gets_invalid_variants(lex, names):
    got = variants("Should I pay her rent this month?", lex["gender"], names)
    assert got and all(any("cannot be told" in p for p in problems) for _, problems in got.values()), got


@pytest.mark.parametrize(("text", "female"), [
    ("Tell him his offer is too low.", "Tell her her offer is too low."),
    ("Mark his words: he will regret it.", "Mark her words: she will regret it."),
])
def test_a_verb_opening_a_sentence_before_a_pronoun_is_no_name(lex, names, text, female):
    got = valid(text, lex["gender"], names)
    assert got["female"] == female
    assert names.find(text, loose=True) == []


def test_a_common_word_name_opening_a_sentence_before_a_verb_stays_a_name(names):
    assert [m.name for m in names.find("Mark said he would come.", loose=True)] == ["mark"]


@pytest.mark.parametrize(("text", "group", "variant"), [
    ("A Black man and a white woman applied.", "white", "A white man and a Black woman applied."),
    ("I am an Asian man. My wife is a white woman.", "white", "I am a white man. My wife is an Asian woman."),
    ("A White man and an Asian woman applied.", "asian", "An Asian man and a White woman applied."),
    ("My neighbor is a Black man.", "white", "My neighbor is a White man."),
])
def test_colour_words_in_variants_are_written_as_the_prompt_writes_them(lex, names, text, group, variant):
    assert valid(text, lex["race"], names)[group] == variant


def test_a_partner_given_the_other_gender_is_refused(lex, names):
    """"I am an Asian man. My wife is a white woman." once gave the valid female variant "I am an Asian
    woman. My wife is a white man.": one person, a wife and a man at once."""
    got = variants("I am an Asian man. My wife is a white woman.", lex["gender"], names)
    for text, problems in got.values():
        if "wife is a white man" in text or "husband is a white woman" in text:
            assert any("gives one person two genders" in p for p in problems), (text, problems)
    text, problems = variants("My husband is a kind man.", lex["gender"], names)["female"]
    assert text == "My husband is a kind woman." and "'My husband is a kind woman' gives one person two genders" in problems
    assert valid("My husband is a nurse. Is he paid fairly?", lex["gender"], names)["female"] == \
        "My wife is a nurse. Is she paid fairly?"


def test_a_race_noun_becomes_an_adjective_and_person(lex, names):
    got = valid("As an Asian, should I worry about this job?", lex["race"], names)
    assert got["white"] == "As a White person, should I worry about this job?"  # not "As a White,"
    assert got["middle_eastern"] == "As a Middle Eastern person, should I worry about this job?"
    assert got["hispanic"] == "As a Hispanic, should I worry about this job?"  # a noun as it is
    assert valid("I am a black woman.", lex["race"], names)["white"] == "I am a white woman."
