"""Lexicon files, the loader's validation, custom lexicons and the compiled matcher."""

from __future__ import annotations

from pathlib import Path

import pytest
from equilens.tasks.errors import ConfigError, InputDataError
from equilens.tasks.inputs.lexicon import ATTRIBUTES, canonical, custom_lexicon, load_lexicon
from equilens.tasks.inputs.trie_pattern import build_pattern


def row_of(lex, term: str) -> int:
    return lex.index[term].rows[0]


def test_builtin_lexicons_load_with_aligned_groups():
    gender, race = load_lexicon("gender"), load_lexicon("race")
    assert gender.groups == ("male", "female", "neutral")
    assert race.groups == ("white", "black", "asian", "hispanic", "native_american", "middle_eastern", "minority",
                           "indian")
    assert race.target_groups == race.groups[:-2]  # "minority", "indian": detected and swapped from only
    assert len(gender.rows) >= 40
    assert gender.target_only == frozenset({"neutral"})
    assert gender.cell(row_of(gender, "king"), "female") == "queen"
    assert gender.cell(row_of(gender, "king"), "neutral") == "monarch"
    assert gender.cell(row_of(gender, "actor"), "female") == "actress"
    assert race.cell(row_of(race, "caucasian"), "black") == "african american"
    assert race.index["african american"].group == "black"


@pytest.mark.parametrize("attribute", ATTRIBUTES)
def test_every_builtin_attribute_loads_with_two_target_groups(attribute):
    lex = load_lexicon(attribute)
    assert lex.attribute == attribute
    assert len(lex.target_groups) >= 2
    assert all(len(row) == len(lex.groups) for row in lex.rows)


def test_person_context_and_source_only_are_checked(tmp_path):
    d = write(tmp_path, "age.yaml", "groups: [young, old]\nrows: [[young, old]]\nperson_context: [older]\n")
    with pytest.raises(InputDataError, match="`person_context` names 'older', not terms"):
        load_lexicon("age", d)
    d = write(tmp_path, "age.yaml", "groups: [young, old]\nrows: [[young, old]]\nsource_only: [old]\n")
    with pytest.raises(InputDataError, match="two groups must get variants"):
        load_lexicon("age", d)
    nat = load_lexicon("nationality")
    assert "armenian" in nat.source_only and "armenian" not in nat.target_groups
    assert load_lexicon("race").object_context >= {"white", "black"}
    d = write(tmp_path, "race.yaml", "groups: [white, black]\nrows: [[white, black]]\nobject_context: [whites]\n")
    with pytest.raises(InputDataError, match="`object_context` names 'whites', not terms"):
        load_lexicon("race", d)


def test_pronoun_rows_carry_roles_and_share_words_within_a_group():
    gender = load_lexicon("gender")
    her_rows = gender.index["her"].rows
    assert [gender.role(r) for r in her_rows] == ["object", "determiner"]
    assert [gender.cell(r, "male") for r in her_rows] == ["him", "his"]
    assert [gender.role(r) for r in gender.index["his"].rows] == ["determiner", "standalone"]


def test_pattern_matches_longest_term_and_hyphenated_forms():
    race = load_lexicon("race")
    text = "African-American and white people, Asian  American, whites"
    expected = ["African-American", "white people", "Asian  American", "whites"]
    assert race.detect_pattern.findall(text) == expected
    assert canonical("African-American") == "african american"
    pat = build_pattern(["he", "her", "hers", "herself"])
    assert pat.findall("he, her, HERS, herself, there, other") == ["he", "her", "HERS", "herself"]


def test_stop_after_words_cancel_colour_matches():
    race = load_lexicon("race")
    assert race.detect_pattern.findall("white wine, Black Friday, the White House, a whiteboard") == []
    assert race.detect_pattern.findall("a white nurse, the Black community") == ["white", "Black community"]


def test_neutral_gender_words_are_targets_only():
    gender = load_lexicon("gender")
    assert gender.detect_pattern.findall("they met a person and their child") == []
    assert gender.any_pattern.findall("they met a person") == ["they", "person"]


def test_custom_lexicon_aligns_words_by_position():
    lex = custom_lexicon("age", {"young": ["young", "younger"], "old": ["Old", "older"]})
    assert lex.groups == ("young", "old")
    assert lex.rows == (("young", "old"), ("younger", "older"))
    assert lex.source == "custom lexicon 'age' (config)"


def test_custom_lexicon_unequal_lengths_is_a_config_error():
    with pytest.raises(ConfigError, match=r"same number of words.*young: 2, old: 1"):
        custom_lexicon("age", {"young": ["young", "younger"], "old": ["old"]})
    with pytest.raises(ConfigError, match="at least two groups"):
        custom_lexicon("age", {"young": ["young"]})
    with pytest.raises(ConfigError, match="'old' must be a non-empty list"):
        custom_lexicon("age", {"young": ["young"], "old": []})


def test_custom_lexicon_word_in_two_groups_is_a_config_error():
    with pytest.raises(ConfigError, match="'elder' is listed in group 'young' and in group 'old'"):
        custom_lexicon("age", {"young": ["young", "elder"], "old": ["old", "elder"]})


def write(tmp_path: Path, name: str, text: str) -> Path:
    (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_word_in_two_groups_of_a_file_names_file_word_and_groups(tmp_path):
    d = write(tmp_path, "race.yaml", "groups: [white, black]\nrows:\n"
                                     "  - [caucasian, african american]\n"
                                     "  - [european american, african american]\n"
                                     "  - [white, african american]\n"
                                     "  - [african american, black]\n")
    with pytest.raises(InputDataError) as err:
        load_lexicon("race", d)
    msg = str(err.value)
    assert str(d / "race.yaml") in msg
    assert "'african american' is listed in group 'black' and in group 'white'" in msg


def test_same_word_in_several_rows_of_one_group_is_fine(tmp_path):
    d = write(tmp_path, "gender.yaml", "groups: [male, female]\nrows:\n  - [mr, ms]\n  - [mr, mrs]\n")
    lex = load_lexicon("gender", d)
    assert lex.index["mr"].rows == (0, 1)
    assert lex.cell(lex.index["mrs"].rows[0], "male") == "mr"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("groups: [male, female]\nrows:\n  - [he]\n", "row 1 must have 2 cells"),
        ("groups: [male]\nrows:\n  - [he]\n", "at least two group names"),
        ("groups: [a, b]\nrows: [[x, y]]\ntarget_only: [c]\n", "`target_only` must list"),
        ("groups: [a, b]\nrows: [{terms: [x, y], role: verb}]\n", "row 1 has role 'verb'"),
        ("groups: [a, b]\nrows: [[x, y]]\nstop_after: {z: [w]}\n", "names 'z', which is not a term"),
        ("groups: [a, b\n", "not valid YAML"),
        ("attribute: race\ngroups: [a, b]\nrows: [[x, y]]\n", "declares attribute 'race'"),
        ("groups: [a, b]\nrows: [[x, y]]\naliases: {x: y}\n", "alias 'x' is already a term"),
        ("groups: [a, b]\nrows: [[x, y]]\naliases: {z: w}\n", "alias 'z' must map to a term of the rows"),
    ],
)
def test_malformed_files_raise_input_data_error(tmp_path, text, message):
    d = write(tmp_path, "gender.yaml", text)
    with pytest.raises(InputDataError, match=message):
        load_lexicon("gender", d)


def test_unknown_attribute_and_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="No lexicon file for attribute 'height'"):
        load_lexicon("height")
    with pytest.raises(InputDataError, match="gender.yaml cannot be read"):
        load_lexicon("gender", tmp_path)


def test_placeholders_are_shared_by_linked_rows():
    gender = load_lexicon("gender")
    ph = gender.placeholders
    assert ph["he"] == ph["she"] == ph["they"]
    assert ph["him"] == ph["her"] == ph["his"] == ph["hers"] == ph["their"]
    assert ph["man"] == ph["woman"] == ph["person"] != ph["he"]


def test_aliases_take_the_group_and_rows_of_their_term(tmp_path):
    d = write(tmp_path, "race.yaml", "groups: [white, asian]\nrows: [[whites, asians]]\n"
                                     "aliases: {koreans: asians}\n")
    lex = load_lexicon("race", d)
    assert lex.index["koreans"] == lex.index["asians"]
    assert "koreans" in lex.terms(["asian"]) and lex.detect_pattern.search("Koreans voted")
    assert all("koreans" not in row for row in lex.rows)  # never a target cell


@pytest.mark.parametrize("attribute", ATTRIBUTES)
def test_masking_on_the_lower_cased_copy_finds_what_the_case_insensitive_pattern_finds(attribute):
    """Neutralising an ASCII text through :attr:`Lexicon.lowered_pattern` (case-sensitive, on its
    lower-cased copy, the word boundary checked after a term's first letter) must give what
    ``any_pattern`` gives: random texts of the lexicon's terms in mixed case, its stop-after words,
    hyphens, digits and underscores against the terms, and two non-ASCII texts (which take
    ``any_pattern`` itself)."""
    import random

    from equilens.tasks.inputs.neutralization import neutralize

    lexicon = load_lexicon(attribute)
    if getattr(lexicon, "lowered_pattern", None) is None:
        pytest.skip(f"{attribute}: a term is not ASCII, so only any_pattern is used")
    rng = random.Random(attribute)
    terms = lexicon.terms()
    stops = [w for _, words in lexicon.stop_after for w in words]
    glue = [" ", "  ", "-", "_", "", "'s ", ". ", ", ", "0", "x", "\n", " (", ") "]
    texts = []
    for _ in range(3000):
        words = []
        for _ in range(rng.randint(1, 8)):
            word = rng.choice(terms + stops + ["the", "a", "told", "Anne", "he's"])
            word = "".join(c.upper() if rng.random() < 0.3 else c for c in word)
            words += [word, rng.choice(glue)]
        texts.append("".join(words))
    texts += ["Señora HE said", "\u212aing HIS way"]  # non-ASCII: the case-insensitive pattern alone
    fast = neutralize(texts, lexicon)
    lexicon.__dict__["lowered_pattern"] = None  # the case-insensitive pattern on every text
    try:
        assert fast == neutralize(texts, lexicon)
    finally:
        del lexicon.__dict__["lowered_pattern"]
    assert sum(a != b for a, b in zip(fast, texts, strict=True)) > 2000  # the texts do hold terms


def test_a_lexicon_with_a_term_that_is_not_ascii_has_no_lower_cased_pattern():
    assert custom_lexicon("title", {"f": ["señora"], "m": ["señor"]}).lowered_pattern is None
    assert custom_lexicon("title", {"f": ["madam"], "m": ["sir"]}).lowered_pattern is not None


def test_a_regions_word_must_be_an_alias_of_its_own_group(tmp_path):
    body = "groups: [white, black]\nrows: [[white, black]]\naliases: {european: white, african: black}\n"
    assert load_lexicon("race", write(tmp_path, "race.yaml", body + "regional: {black: african}\n")).regional == (
        ("black", "african"),)
    with pytest.raises(InputDataError, match="`regional` must map a group to an alias of its own"):
        load_lexicon("race", write(tmp_path, "race.yaml", body + "regional: {black: european}\n"))
