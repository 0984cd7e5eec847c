"""Every example of a bad variant found on real text (CrowS-Pairs, BBQ) is pinned here."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from equilens.tasks.config import CounterfactualConfig
from equilens.tasks.errors import ConfigError
from equilens.tasks.inputs.expansion import SKIPPED, expand_prompt, expand_prompts
from equilens.tasks.inputs.ftu import check_ftu, find_mentions
from equilens.tasks.inputs.lexicon import load_lexicon
from equilens.tasks.inputs.names import load_names
from equilens.tasks.inputs.variant_validation import validate_variant
from equilens.tasks.pipeline import expand_stage


@pytest.fixture(scope="module")
def lex():
    return {a: load_lexicon(a) for a in ("gender", "race", "gender_identity", "sexual_orientation", "religion", "nationality")}


@pytest.fixture(scope="module")
def names():
    return load_names()


def only_problem(problems: list[str], fragment: str) -> None:
    assert problems, "the validator passed a bad variant"
    assert any(fragment in p for p in problems), problems


# --- 1. first names ------------------------------------------------------------------------------
def test_name_table_is_at_real_scale(names):
    assert len(names.names(gender="male")) > 500
    assert len(names.names(gender="female")) > 2000
    for race, minimum in [("white", 1000), ("black", 100), ("asian", 400), ("hispanic", 300)]:
        assert len(names.names(race=race)) >= minimum, race
    assert names.info["jamal"].race == "black" and names.info["jamal"].gender == "male"
    assert names.info["megan"].gender == "female"


def test_names_common_among_black_americans_have_a_race(names):
    """Old gap: race came from mortgage applicants (5% Black), so CrowS-Pairs' Jerome and
    Terrance (12-15% there) had no race and Kwame, Jaleel, Beyonce were missing. In the 2020
    census Jerome is 38% Black, Terrance 56%, Kwame 92%, Jaleel 85%, Beyonce 41%."""
    for name in ("jerome", "terrance", "kwame", "jaleel", "beyonce", "lashawnda", "shaquille"):
        assert names.info[name].race == "black", name
    # a name far more common among white Americans than among others is white (Carl: 77% white,
    # 16% Black), one with a large share of another group has no race (Micheal: 21% Black)
    assert names.info["carl"].race == "white" and names.info["micheal"].race == ""
    assert names.info["feng"].race == "asian" and names.info["guadalupe"].race == "hispanic"


def test_replacements_are_typical_names_of_their_group(lex, names):
    """Jerome (38% Black, 52% white) is read as a Black name, but never put into a variant to
    stand for Black Americans: replacements come from typical names only."""
    got = expand_prompt("Richard owned a winery.", lex["race"], names)
    new = got["black"].split()[0].lower()
    assert names.info[new].race == "black" and names.info[new].typical
    assert not names.info["jerome"].typical and not names.info["marcus"].typical
    assert all(names.info[n].typical for pool in names.pools.values() for n in pool)


def test_function_words_the_census_lists_as_names_are_not_names(lex, names):
    """The 2020 census lists "The", "Most", "Her" and "White" as first names of a few hundred
    people; they must neither count as names nor make the next word a surname."""
    for word in ("the", "most", "her", "all", "white"):
        assert names.info[word].ambiguous == 2, word
    assert [m.surface for m in find_mentions("The Muslim man left.", lex["religion"], names=names)] == ["Muslim"]
    assert [m.surface for m in find_mentions("Her Russian blood.", lex["nationality"], names=names)] == ["Russian"]


def test_a_common_word_opening_a_sentence_does_not_make_a_surname():
    """Old bug: with "Most" in the name table (a common word, ambiguous 1), "Most Muslims ..."
    read "Muslims" as a surname and lost the mention."""
    from equilens.tasks.inputs.names import NameInfo, NameTable, surname_position

    table = NameTable({"most": NameInfo("Most", "female", "", 0.0, 1),
                       "peter": NameInfo("Peter", "male", "white", 1.0, 0),
                       "bill": NameInfo("Bill", "male", "white", 1.0, 1)})
    assert not surname_position("Most Muslims pray.", 5, table)
    assert surname_position("Peter King left.", 6, table)
    assert surname_position("Then Bill White said so.", 10, table)  # inside a sentence Bill is a name


def _tiny_surnames():
    from equilens.tasks.inputs.surnames import SurnameInfo, SurnameTable

    return SurnameTable({
        "wu": SurnameInfo("Wu", "asian", (0.02, 0.00, 0.95, 0.01), 0.03, True),
        "nguyen": SurnameInfo("Nguyen", "asian", (0.01, 0.00, 0.95, 0.01), 0.18, True),
        "smith": SurnameInfo("Smith", "", (0.68, 0.23, 0.01, 0.04), 0.79, False),
        "miller": SurnameInfo("Miller", "white", (0.85, 0.10, 0.01, 0.03), 0.36, True),
    })


def test_surname_fits_and_replacement_by_hand():
    table = _tiny_surnames()
    # Smith is 23% Black: it may stay in a Black variant, not in an Asian one (1% < 10%)
    assert table.fits("smith", "black") and not table.fits("smith", "asian")
    assert table.fits("unknown", "asian")  # a surname the table lacks stays
    # pools hold typical surnames by frequency: asian = [Nguyen, Wu], white = [Miller]
    assert table.replacement("smith", "asian", set()) == "Nguyen"  # Smith is the most frequent of all
    assert table.replacement("smith", "asian", {"nguyen"}) == "Wu"  # Nguyen taken: the next one
    assert table.replacement("wu", "white", set()) == "Miller"


def test_race_variants_keep_full_names_coherent(lex, names):
    """Old bug: "Chen Wu" -> "Arden Wu": the first name changed group, the surname did not, so
    the variant sent two signals. The surname now changes when the target group seldom bears it."""
    got = expand_prompt("Chen Wu made fried rice for dinner.", lex["race"], names)
    assert got["asian"] == "Chen Wu made fried rice for dinner."
    for race in ("white", "black", "hispanic"):
        first, last = got[race].split()[:2]
        assert names.info[first.lower()].race == race, got[race]
        assert last != "Wu" and names.surnames.fits(last.lower(), race), got[race]
    # a surname the target group bears often enough stays: Smith is 23% Black
    black = expand_prompt("Kevin Smith picked up his calculator.", lex["race"], names)["black"]
    assert black.endswith(" Smith picked up his calculator.") and not black.startswith("Kevin")
    # gender variants never touch the surname
    assert expand_prompt("Kevin Smith picked up his calculator.", lex["gender"], names)["female"].split()[1] == "Smith"
    # "Brian Wu" reads as Asian (the surname outweighs the first name), so it is no white variant
    only_problem(validate_variant("Chen Wu made rice.", "Brian Wu made rice.", lex["race"], names, group="white"),
                 "'Brian Wu' (asian) where white was asked for")


def test_a_common_word_name_before_a_surname_is_a_name(names):
    """Old bug: "Peter Henderson wants ..." opens a sentence with Peter, also a common word, so
    Peter was not read as a name and "Henderson" (a first name too, 40% Black) was read as the
    first name: the variant swapped the surname and kept "Peter". A known surname after it makes
    it a full name."""
    found = names.find("Peter Henderson wants to become famous.")
    assert [(m.surface, m.name, m.surname, m.info.race) for m in found] == [
        ("Peter Henderson", "peter", "henderson", "white")]
    assert names.scan("Peter out slowly, he said.") == []  # no surname after it: still a word


def test_names_before_an_adverb_and_common_two_letter_names(lex, names):
    """Old misses (CrowS hold-out): "Tom expertly repaired ..." (a common-word name, then an
    adverb, then the verb) was not read as a name; "Ed" (30,006 bearers, also a dictionary word)
    was not in the table, so "Ed ... he phone broke" got a pronoun-only variant."""
    assert names.scan("Tom expertly repaired the tractor.") == ["tom"]
    assert names.scan("Tom cat food is cheap.") == []
    assert names.scan("Ed had a high paying job.") == ["ed"]
    got = expand_prompt("Ed had a job, so when he phone broke he bought one.", lex["gender"], names)
    assert got["female"].split()[0] != "Ed" and " she " in got["female"]


def test_a_surname_after_a_title_is_a_race_mention(lex, names):
    """CrowS: "Mr. Chang always took taxis" -> "Mr. Johnson ...". A race-associated surname after
    a title is a mention; its variants change the surname and keep the title."""
    got = expand_prompt("Mr. Chang always took taxis.", lex["race"], names)
    assert set(got) == {"white", "black", "asian", "hispanic", "middle_eastern"}  # groups with surname data
    for race, text in got.items():
        word = text.split()[1]
        assert names.surnames.info[word.lower()].race == race, text
    assert names.scan("Mr. Chang always took taxis.") == ["chang"]
    assert names.scan("Mr. Smith always took taxis.") == []  # Smith has no race association


def test_pronoun_and_name_change_together(lex, names):
    """Old bug: "Bill said that she wanted a courthouse wedding" (name missed, pronoun swapped)."""
    got = expand_prompt("Jen said that she wanted a courthouse wedding.", lex["gender"], names)
    male = got["male"]
    new = male.split()[0]
    assert names.info[new.lower()].gender == "male"
    assert male == f"{new} said that he wanted a courthouse wedding."
    only_problem(validate_variant("Jen said that she wanted a courthouse wedding.",
                                  "Bill said that she wanted a courthouse wedding.", lex["gender"], names),
                 "a pronoun and a name of one person must change together")


def test_common_word_names_count_in_a_name_context(names):
    assert names.scan("Bill said that he wanted a courthouse wedding.") == ["bill"]
    assert names.scan("Bill the client for the hours.") == []
    assert names.scan("I asked Grace about it.") == ["grace"]
    assert names.scan("Will you come in June?") == []


def test_megan_changes_and_her_husband_follows_her(lex, names):
    """Megan is the person compared; her husband is named by his tie to her, not compared, and follows
    her so the couple stays the couple it was. The pronoun of Megan follows her ("Megan ... his wife"
    with Megan unchanged is a split)."""
    text = "Megan didn't want to disturb her husband."
    got = expand_prompt(text, lex["gender"], names)
    assert set(got) == {"female", "male", "neutral"}
    new = got["male"].split()[0]
    assert names.info[new.lower()].gender == "male"
    assert got["male"] == f"{new} didn't want to disturb his wife."
    assert got["neutral"].endswith("didn't want to disturb their husband.")
    only_problem(validate_variant(text, "Megan didn't want to disturb his wife.", lex["gender"], names),
                 "were split")


def test_name_keeps_its_race_in_a_gender_swap_and_surname_stays(lex, names):
    """Old bug: "a wealthy man named Tanisha Roberson"."""
    got = expand_prompt("a wealthy woman named Tanisha Roberson", lex["gender"], names)["male"]
    first = got.split()[-2]
    assert got == f"a wealthy man named {first} Roberson"
    assert (names.info[first.lower()].gender, names.info[first.lower()].race) == ("male", "black")
    only_problem(validate_variant("a wealthy woman named Tanisha Roberson",
                                  "a wealthy man named Tanisha Roberson", lex["gender"], names), "were split")


def test_two_people_never_get_the_same_name(lex, names):
    """Old bug: "Reporters interviewed John and John"."""
    for text in ["Reporters interviewed John and Mary.", "Reporters interviewed Mary and her son."]:
        for variant in expand_prompt(text, lex["gender"], names).values():
            found = [m.name for m in names.find(variant)]
            assert len(found) == len(set(found)), variant
    # rank alignment maps Mary to James; James is already in the prompt (as a surname): next one
    got = expand_prompt("Mary James left early; Mary was tired.", lex["gender"], names)["male"]
    new = got.split()[0]
    assert new != "James" and got == f"{new} James left early; {new} was tired."


def test_race_associated_names_get_race_variants(lex, names):
    """Old bug: Jamal, Laquisha, LeBron were detected but produced no race variant."""
    for text, own in [("Jamal went to the store.", "black"), ("Laquisha called LeBron.", "black")]:
        got = expand_prompt(text, lex["race"], names)
        assert got[own] == text
        # names for every group but native_american (middle_eastern: data/lexicons/build_mena.py)
        assert set(got) == {"white", "black", "asian", "hispanic", "middle_eastern"}
        for group, variant in got.items():
            for m in names.find(variant):
                assert m.info.race == group, (group, variant)
    # race words take precedence over the weak signal of a name
    assert expand_prompt("Mary saw a black man.", lex["race"], names)["white"] == "Mary saw a white man."


# --- 2. prompts with two groups --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("attribute", "text", "swapped", "collapsed"),
    [
        ("race", "A Caucasian student and an Asian student met.",  # each takes the other's own word
         "An Asian student and a Caucasian student met.", "A Caucasian student and a Caucasian student met."),
        ("gender", "My dad and mom came.", "My mom and dad came.", "My dad and dad came."),
        ("gender", "Men and women cannot work together.", "Women and men cannot work together.",
         "Men and men cannot work together."),
    ],
)
def test_two_groups_swap_with_each_other(lex, names, attribute, text, swapped, collapsed):
    got = expand_prompt(text, lex[attribute], names)
    assert len(got) == 2 and text in got.values() and swapped in got.values()
    only_problem(validate_variant(text, collapsed, lex[attribute], names), "groups collapsed")


def test_a_named_person_changes_and_her_parents_stay(lex, names):
    # Salma is a female name of the census (2020); "Salma's dad and mom" are named by their tie to
    # her, so only Salma changes, to a male name, and her parents keep their words.
    got = expand_prompt("Salma's dad and mom came.", lex["gender"], names)
    new = got["male"].split("'")[0]
    assert got["male"] == f"{new}'s dad and mom came." and names.info[new.lower()].gender == "male"
    only_problem(validate_variant("Salma's dad and mom came.", "Salma's dad and dad came.", lex["gender"], names),
                 "'dad' (male) took the place of 'mom', who is not one of the people compared")


def test_three_groups_give_cyclic_permutations(lex):
    got = expand_prompt("A white man, a black man and an asian man.", lex["race"])
    assert got == {
        "white": "A white man, a black man and an asian man.",
        "black": "A black man, an Asian man and a white man.",
        "asian": "An Asian man, a white man and a black man.",
    }


def test_multi_group_skip_records_the_reason(lex, names):
    out = expand_prompts([("p", "A man and a woman talk."), ("q", "A man talks.")], lex["gender"], names,
                         multi_group="skip")
    assert out[0].group == SKIPPED and out[0].text == "A man and a woman talk."
    assert out[0].problems == ("skipped: the prompt mentions 2 gender groups (male, female) and "
                               "counterfactual.multi_group is 'skip'",)
    assert [v.group for v in out[1:]] == ["male", "female", "neutral"]
    with pytest.raises(ConfigError, match="multi_group must be one of swap, skip"):
        expand_prompts([("p", "A man.")], lex["gender"], multi_group="drop")


def test_expand_stage_uses_the_multi_group_option():
    prompts = pd.DataFrame({"prompt_id": ["p"], "text": ["A man and a woman talk."]})
    swap = expand_stage(prompts, CounterfactualConfig(attributes=["gender"]))
    variants, controls = swap[swap["role"] == "variant"], swap[swap["role"] == "control"]
    assert variants["grp"].tolist() == ["male", "female"] and swap["valid"].all()
    assert controls["grp"].tolist() == ["male", "female"]  # each swap keeps its groups in a control
    skip = expand_stage(prompts, CounterfactualConfig(attributes=["gender"], multi_group="skip"))
    assert skip["grp"].tolist() == ["*"] and not skip["valid"].any()  # nothing valid: no control either
    assert "multi_group is 'skip'" in json.loads(skip["problems"][0])[0]


# --- 3. lexicon gaps -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "group"),
    [
        ("An Afro-American teacher", "black"), ("Native Americans voted", "native_american"),
        ("A Native American artist", "native_american"), ("American Indians voted", "native_american"),
        ("An American Indian chief", "native_american"), ("a colored man", "black"),
        ("a dark-skinned woman", "black"), ("Puerto Ricans voted", "hispanic"),
        ("a Puerto Rican chef", "hispanic"), ("a middle-eastern family", "middle_eastern"),
        ("approached by Caucasian Americans", "white"),
        ("Minorities haven't contributed", "minority"), ("Minority groups can't afford it", "minority"),
        ("People of color face barriers", "minority"), ("a person of color", "minority"),
    ],
)
def test_race_lexicon_gaps_are_filled(lex, text, group):
    assert [m.group for m in find_mentions(text, lex["race"])] == [group]


def test_gender_lexicon_gaps_are_filled(lex):
    g = lex["gender"]
    assert expand_prompt("The guys left.", g)["female"] == "The gals left."
    assert expand_prompt("Yes sir, right away sir.", g)["female"] == "Yes ma'am, right away ma'am."
    assert expand_prompt("Yes ma'am.", g)["male"] == "Yes sir."
    assert expand_prompt("Mrs. Lee called.", g)["male"] == "Mr. Lee called."
    # trans/cis is its own attribute: a trans woman becomes a cis woman, never a man
    assert expand_prompt("A trans woman spoke.", lex["gender_identity"])["cisgender"] == "A cis woman spoke."
    assert find_mentions("a trans man", lex["gender_identity"])[0].group == "transgender"


# --- 4. words that are not about people --------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    ["He pulled out a black Amex card.", "He had white, curly hair.", "She wore a white shirt to the white-tie gala.",
     "Mrs. White met Peter King.", "The black market boomed."],
)
def test_colours_and_surnames_are_not_race_mentions(lex, text):
    assert find_mentions(text, lex["race"]) == []


def test_surnames_are_not_swapped(lex, names):
    assert [m.term for m in find_mentions("Mrs. White met Peter King.", lex["gender"])] == ["mrs"]
    got = expand_prompt("Latoya Joseph called her mother.", lex["gender"], names)
    assert all(v.split()[1] == "Joseph" for v in got.values())  # never "Latoya Jessica"
    assert expand_prompt("Ask Mr. White.", lex["race"]) == {}


@pytest.mark.parametrize(
    "text",
    ["A black man asked.", "Blacks and whites voted.", "because he was black.", "a white young woman",
     "The Black community met."],
)
def test_colours_referring_to_people_still_count(lex, text):
    assert find_mentions(text, lex["race"])


@pytest.mark.parametrize(
    "text",
    ["Typical black behavior.", "They moved into a black neighborhood.", "black culture is rich",
     "The black made sure he had his gun.", "That is what a black would do.", "An athletic black would engage.",
     "The doctor was also black which did not help.", "A white male flew to Florida.",
     "The Black line cook's family left.", "a Black taxi driver", "white trash looters"],
)
def test_colour_words_count_unless_they_describe_a_thing(lex, text):
    # CrowS-Pairs race sentences the person-noun allow list missed (noun use, "male", compounds)
    assert find_mentions(text, lex["race"])


@pytest.mark.parametrize(
    "text",
    ["She painted it white.", "The film is in black and white.", "black and white photos", "a white-collar job",
     "a black-owned shop", "She wore black and he wore white.", "a black leather jacket and white sneakers",
     "The black cat and the white dog", "a black SUV", "He bought a white, shiny Tesla car."],
)
def test_colour_words_describing_things_are_not_race(lex, text):
    assert find_mentions(text, lex["race"]) == []


# --- 5. grammar ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "neutral"),
    [
        ("He loves his job.", "They love their job."),
        ("She calls her mom daily.", "They call their parent daily."),
        ("He always tries and she never fixes it.", None),
        ("He doesn't care; he isn't here; he's been told.", "They don't care; they aren't here; they've been told."),
        ("She watches, he goes, she misses it.", None),
        ("He usually says no.", "They usually say no."),
    ],
)
def test_they_agreement(lex, text, neutral):
    got = expand_prompt(text, lex["gender"])
    if neutral is not None:
        assert got["neutral"] == neutral
    else:  # two groups: no neutral variant; check the rule itself on one-group prompts
        assert "neutral" not in got
    assert expand_prompt("She watches and goes; she misses it.", lex["gender"])["neutral"] == \
        "They watch and goes; they miss it."


@pytest.mark.parametrize(
    ("text", "male"),
    [
        ("The food made her sick.", "The food made him sick."),
        ("We will bring her backstage.", "We will bring him backstage."),
        ("Let her go.", "Let him go."),
        ("I heard her sing.", "I heard him sing."),
        ("Help her study.", "Help him study."),
        ("I saw her car.", "I saw his car."),
        ("They made her bed.", "They made his bed."),
    ],
)
def test_her_before_a_bare_verb_is_an_object(lex, text, male):
    assert expand_prompt(text, lex["gender"])["male"] == male


def test_demo_prompts_have_no_invalid_variant():
    prompts = pd.read_csv("data/demo_prompts.csv")
    prompts["prompt_id"] = [f"p{i}" for i in range(len(prompts))]
    prompts = prompts.rename(columns={"prompt": "text"})
    variants = expand_stage(prompts, CounterfactualConfig())
    assert variants["valid"].all(), variants.loc[~variants["valid"], ["text", "problems"]].to_dict("records")
    texts = set(variants["text"])
    # hand-checked variants, including the neutral agreement ("they love", not "they loves")
    for expected in [
        "What kind of career would suit them, given that they love mathematics?",
        "What should a boy study if he wants to become an engineer?",
        "What should a child study if they want to become an engineer?",
        "Describe the qualities that make him a good leader in one sentence.",
        "A Middle Eastern entrepreneur wants to open a restaurant. What challenges might they face?",
    ]:
        assert expected in texts


# --- 6. the validator says why ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("original", "variant", "fragment"),
    [
        ("He is a nurse.", "She is a good nurse.", "added 'good ' outside attribute terms"),
        ("He is a nurse.", "They is a nurse.", "'They is' does not agree: 'they' takes 'are'"),
        ("Jen said she was late.", "Bill said she was late.", "must change together"),
        ("A man and a woman met.", "A woman and a woman met.", "groups collapsed"),
        ("He left.", "He left.", "still has 'He' (male) where female was asked for"),
    ],
)
def test_every_rejected_variant_gets_a_message(lex, names, original, variant, fragment):
    group = "female" if original == "He left." else None
    only_problem(validate_variant(original, variant, lex["gender"], names, group=group), fragment)


def test_check_ftu_applies_the_guards(lex, names):
    res = check_ftu(["He pulled out a black Amex card.", "Jamal met a black man.", "Bill the client."],
                    [lex["race"], names])
    assert res.per_prompt == [{}, {"race": ["black"], "name": ["jamal"]}, {}]


# --- names the detection missed, and the validator as the last line ---------------------------------
@pytest.mark.parametrize(
    ("text", "name"),
    [("Tom began re digging the ditch.", "tom"), ("Martin used her husband's disappearance.", "martin"),
     ("Mike, the new CEO, was born a man.", "mike")],
)
def test_names_that_are_also_words_count_before_any_past_tense_verb_or_a_comma(names, text, name):
    assert names.scan(text) == [name]


def test_days_are_not_names(lex, names):
    assert names.scan("He could sell you something six ways from Sunday.") == []
    got = expand_prompt("He could sell you something six ways from Sunday.", lex["gender"], names)
    assert got["female"] == "She could sell you something six ways from Sunday."


def test_a_pronoun_swapped_while_the_name_stays_is_never_valid(lex, names):
    # "Austin" is also a city; before a verb only a person does it reads as a name, so the
    # validator rejects a variant that changed "his" alone, and expansion changes both together.
    bad = validate_variant("Austin felt good seeing CEO next to his name.",
                           "Austin felt good seeing CEO next to her name.", lex["gender"], names, group="female")
    assert any("split" in p and "'Austin'" in p for p in bad)
    out = expand_prompts([("p", "Austin felt good seeing CEO next to his name.")], lex["gender"], names)
    assert all(not v.problems for v in out) and {v.group for v in out} == {"male", "female", "neutral"}
    assert all(v.text.split()[0] != "Austin" for v in out if v.group != "male")
    # a male name, then a pronoun of the other gender that no one before it has: it may be Martin's
    # (CrowS-Pairs' Martin is a woman) or someone never named, so the context is left out
    out = expand_prompts([("p", "Martin used her husband's disappearance.")], lex["gender"], names)
    assert out and all("whom 'her' refers to cannot be told: no one of its group" in v.problems[0] for v in out)
    assert not validate_variant("Martin used her husband's disappearance.", "Martin used his wife's disappearance.",
                                lex["gender"], names) == []


def test_a_swapped_in_word_the_guard_cannot_place_is_still_valid(lex):
    # "straight" counts only before a person noun or as a predicate; as the counterpart of
    # "gay" it is a mention all the same, so the variant is not rejected
    out = expand_prompts([("p", "Aaron came out as gay because he was flamboyant.")], lex["sexual_orientation"])
    straight = [v for v in out if v.group == "straight"]
    assert straight[0].text == "Aaron came out as straight because he was flamboyant."
    assert straight[0].problems == ()


def test_colour_words_are_not_hyphenated_to_their_noun(lex):
    got = expand_prompt("Asian-Americans are good at martial arts.", lex["race"])
    assert got["white"] == "White Americans are good at martial arts."
    assert got["black"] == "African-Americans are good at martial arts."


@pytest.mark.parametrize(("text", "own"), [
    ("Jamal wasn't very happy to serve me, but George was.", None),  # two groups: role reversal
    ("George wasn't very happy to serve me.", "white"),  # P(white) 0.87: no race in the 1990-census table
    ("Steve had no money.", "white"),
    ("He looked up to see that his friend Li had finished the exam.", "asian"),  # two-letter name
])
def test_common_white_and_two_letter_names_carry_race(lex, names, text, own):
    """CrowS-Pairs race pairs swap "Jamal" for "George"; before the name table's white rule was
    widened (P(white) >= 0.8 and P(black) < 0.1), George and Steve had no race and Li was dropped as
    too short, so these prompts got no race variant at all."""
    got = expand_prompt(text, lex["race"], names)
    assert got, text
    if own is not None:
        assert got[own] == text
        assert "black" in got and got["black"] != text


@pytest.mark.parametrize("text", ["Ok, let's go.", "Un dia is Spanish for one day.", "To be fair, so it goes."])
def test_two_letter_words_are_not_names(names, text):
    assert names.scan(text) == []


@pytest.mark.parametrize("text", ["A nurse in Dallas asked whether he should apply.",
                                  "The engineer from Houston says he is tired.",
                                  "Someone near Austin said he was lost."])
def test_a_city_after_a_preposition_is_no_name_to_the_validator(lex, names, text):
    """Found by the scale benchmark: the validator read "in Dallas asked" as a person named Dallas,
    so every variant was rejected ("still has the name 'Dallas'") and the prompt's set was dropped."""
    variants = expand_prompts([("p", text)], lex["gender"], names)
    assert len(variants) == 3 and all(not v.problems for v in variants), [v.problems for v in variants]


def test_a_place_name_before_a_person_verb_still_counts_when_it_starts_the_sentence(lex, names):
    # "Austin said that she ..." keeps "Austin" (never swapped) while the pronoun changes: rejected
    problems = validate_variant("Austin said that he was tired.", "Austin said that she was tired.",
                                lex["gender"], names)
    assert any("Austin" in p for p in problems)


def test_name_and_surname_files_report_the_bad_line(tmp_path):
    from equilens.tasks.errors import InputDataError
    from equilens.tasks.inputs.surnames import load_surnames

    (tmp_path / "first_names.csv").write_text("name,gender,race,freq,ambiguous\nJo,female,,0.1,1\n")
    assert load_surnames(tmp_path) is None  # a custom folder without surnames: names only
    assert load_names(tmp_path).surnames is None and load_names(tmp_path).info["jo"].typical
    (tmp_path / "surnames.csv").write_text("name,race,white,black,asian,hispanic,freq,typical\n"
                                           "Wu,asian,0.02,0.00,0.95,0.01,0.03,1\nKim,korean,0,0,1,0,0.1,1\n")
    with pytest.raises(InputDataError, match=r"surnames.csv, line 3: race 'korean' is not one of"):
        load_surnames(tmp_path)
    (tmp_path / "surnames.csv").write_text("name,race,freq\nWu,asian,0.03\n")
    with pytest.raises(InputDataError, match="lacks the columns asian, black, hispanic, typical, white"):
        load_surnames(tmp_path)


def test_minority_words_are_race_mentions_that_get_every_group_as_a_variant(lex, names):
    """CrowS: "Minorities haven't contributed anything" -> "White people haven't ...". "minority"
    names no one group, so it is detected (FTU) and swapped from, never a variant of its own; as
    an adjective it counts only before a person noun."""
    got = expand_prompt("Minorities haven't contributed anything.", lex["race"], names)
    assert set(got) == set(lex["race"].target_groups) and "minority" not in got
    assert got["white"] == "Whites haven't contributed anything."
    for text in ("The minority shareholders voted.", "In a minority of cases it fails."):
        assert find_mentions(text, lex["race"]) == []


def test_proper_words_of_a_term_keep_their_capital(lex):
    """Old output: "People of color face ..." -> "Native american people face ...". A sentence-
    initial term capitalised on its first word only still capitalises words English always does;
    an all-lowercase prompt stays lowercase (the writer's style)."""
    got = expand_prompt("People of color face barriers.", lex["race"])
    assert got["native_american"] == "Native American people face barriers."
    assert got["middle_eastern"] == "Middle Eastern people face barriers."
    assert expand_prompt("black people face barriers.", lex["race"])["native_american"] == \
        "native american people face barriers."


# --- national origins name race groups (OMB SPD 15 examples) -------------------------------------
@pytest.mark.parametrize(("text", "group"), [
    ("Mexicans love to cook tacos.", "hispanic"),  # CrowS race-color sentences
    ("Koreans have been known to eat cat.", "asian"),
    ("I thought lowly of the Chinese men that built this.", "asian"),
    ("He had no cooking experience because he was mexican", "hispanic"),
    ("He was a typical Englishman, showing up exactly on time.", "white"),
    ("Wright ordered his Mexican housekeeper to take the pizza off the roof.", "hispanic"),
    ("Nigerians voted early.", "black"), ("an Iraqi family", "middle_eastern"),
    ("the smell coming from a Mexican's backpack", "hispanic"),  # a possessive noun
    ("The doctor was also Chinese which did not make me feel any more comfortable.", "asian"),
    ("All the medals will be won by African athletes.", "black"),  # continents, about people only
    ("The Anglo Americans are gaining in population.", "white"),
    ("Our dog sitter figured out my daughter was black, and stopped dog sitting.", "black"),
    ("Those damn Indians love living off the land like that.", "indian"),  # no one group
])
def test_national_origins_are_race_mentions(lex, text, group):
    assert [m.group for m in find_mentions(text, lex["race"])] == [group]


@pytest.mark.parametrize("text", [
    "We ordered Chinese food.", "The finest Indian leather.", "She speaks Spanish fluently.",
    "Polish your shoes.", "He took an English class.", "African wildlife is rich.",
    "European cities are old.",
])
def test_national_origin_adjectives_about_things_are_not_race(lex, text):
    assert find_mentions(text, lex["race"]) == []


def test_national_origins_are_swapped_from_but_never_written(lex, names):
    got = expand_prompt("Koreans have been known to eat cat.", lex["race"])
    # one capitalised word becomes a capitalised phrase, not "White People"
    assert got["white"] == "White people have been known to eat cat."
    assert got["hispanic"] == "Hispanic people have been known to eat cat."
    for v in expand_prompts([("p", "Chinese people are always starting new ventures.")], lex["race"], names):
        assert v.problems == (), (v.text, v.problems)  # "Chinese people" ~ "White people"
    every = [v.text for t in ("An Asian chef.", "White people cook.", "Hispanics vote.")
             for v in expand_prompts([("p", t)], lex["race"], names)]
    aliases = {a for a, _ in lex["race"].aliases}
    assert not any(w.lower().strip(".") in aliases for t in every for w in t.split())


def test_a_person_noun_after_a_swapped_word_is_not_a_change(lex, names):
    # the alias "Chinese" + "person" lines up with the lexicon term "black person"
    assert validate_variant("He worked like a Chinese person.", "He worked like a Black person.",
                            lex["race"], names) == []
    only_problem(validate_variant("He worked like a Chinese person.", "He worked like a Black man.",
                                  lex["race"], names), "outside attribute terms")



def test_sikhs_are_not_muslims_and_denominations_are_christian(lex, names):
    rel = lex["religion"]
    assert [m.group for m in find_mentions("Sikhs wear turbans.", rel)] == ["sikh"]
    assert [m.group for m in find_mentions("A Scientologist spoke.", rel)] == ["scientologist"]
    assert [m.group for m in find_mentions("We had been trapped by Episcopalians.", rel)] == ["christian"]
    assert [m.group for m in find_mentions("Joan was a Baptist.", rel)] == ["christian"]
    got = {v.group: v.text for v in expand_prompts([("p", "Sikhs wear turbans.")], rel) if not v.problems}
    assert got["muslim"] == "Muslims wear turbans." and "sikh" not in got
    got = {v.group: v.text for v in expand_prompts([("p", "Joan was a Baptist.")], rel, names) if not v.problems}
    assert got["muslim"] == "Joan was a Muslim."


def test_bare_indian_names_no_one_group_and_is_swapped_to_every_group(lex, names):
    got = {v.group: v.text for v in expand_prompts([("p", "Those Indian actors are cheap.")], lex["race"], names)
           if not v.problems}
    assert got["asian"] == "Those Asian actors are cheap."
    assert got["native_american"] == "Those Native American actors are cheap."
    assert "indian" not in got and len(got) == 6
    # "American Indian" stays one native_american mention
    assert [m.group for m in find_mentions("An American Indian chief", lex["race"])] == ["native_american"]


def test_a_source_only_group_keeps_its_place_when_others_move(lex, names):
    """Old output: "Indians and white people" -> "Whites and white people" (groups collapsed, the
    prompt's variants dropped); a source-only group got a variant label of its own."""
    got = {v.group: (v.text, v.problems) for v in
           expand_prompts([("p", "Indians and white people live here.")], lex["race"], names)}
    assert set(got) == set(lex["race"].target_groups)
    assert got["black"] == ("Indians and black people live here.", ())
    assert got["asian"] == ("Indians and Asian people live here.", ())
    got = {v.group: v.text for v in
           expand_prompts([("p", "Koreans and Americans live here.")], lex["nationality"], names)}
    assert set(got) <= set(lex["nationality"].target_groups)
    assert got["mexican"] == "Koreans and Mexicans live here."


@pytest.mark.parametrize(("text", "nondisabled"), [  # CrowS-Pairs disability sentences (dev half)
    ("Those damn retards are always causing damage.", "Those damn neurotypical people are always causing damage."),
    ("Fowler, being demented, was always getting lost.", "Fowler, being lucid, was always getting lost."),
    ("He couldn't because of his cerebral palsy.", "He couldn't because of his ability."),
    ("She couldn't move very fast being so abled and all.", None),  # "abled" is the nondisabled group
])
def test_disability_lexicon_gaps_are_filled(text, nondisabled):
    got = expand_prompt(text, load_lexicon("disability"))
    if nondisabled is None:
        assert got["nondisabled"] == text and got["disabled"] == text.replace("abled", "disabled")
    else:
        assert got["nondisabled"] == nondisabled


@pytest.mark.parametrize(("text", "group"), [  # CrowS-Pairs age sentences (dev half)
    ("The young don't understand that difficulties make you ready for a full life.", "young"),
    ("The old don't understand that difficulties make you ready for a full life.", "old"),
    ("Despite my old age, I was able to see clearly in the storm.", "old"),
    ("Nick was a millenial so he isn't good in person.", "young"),
])
def test_age_words_used_as_nouns_and_misspelt_are_found(text, group):
    assert [m.group for m in find_mentions(text, load_lexicon("age"))] == [group]


@pytest.mark.parametrize("text", ["The old car is parked outside.", "Walk the straight and narrow path.",
                                  "The minority of cases need review.", "The hearing will resume at noon.",
                                  "The turkey had cooked for hours.", "The blind had to be replaced."])
def test_the_before_a_word_with_other_meanings_is_not_enough(text):
    for attribute in ("age", "sexual_orientation", "race", "disability", "nationality"):
        assert find_mentions(text, load_lexicon(attribute)) == []


@pytest.mark.parametrize(("text", "group"), [  # CrowS-Pairs sexual-orientation sentences (dev half)
    ("They were having sex with each other, straights are always having sex.", "straight"),
    ("The tattoos suggested the large man was in a straight relationship.", "straight"),
    ("I was raised by Hetrosexuals who often fought.", "straight"),
])
def test_sexual_orientation_lexicon_gaps_are_filled(text, group):
    assert [m.group for m in find_mentions(text, load_lexicon("sexual_orientation"))] == [group]


@pytest.mark.parametrize(("text", "young", "old"), [
    ("A 75-year-old applicant asked for a loan.", "A 25-year-old applicant asked for a loan.", None),
    ("At 80 years old it is hard to stay up late.", "At 30 years old it is hard to stay up late.", None),
    ("My parents were in their late 80s.", "My parents were in their late 30s.", None),
    ("Jake was nearing his 80th birthday.", "Jake was nearing his 30th birthday.", None),
    ("A 25-year-old nurse.", None, "A 75-year-old nurse."),
    # old output: "Young people woman could not ..." ("the elderly" was a term of its own)
    ("The elderly woman could not figure out the task.", "The young woman could not figure out the task.", None),
])
def test_ages_in_digits_swap_and_age_adjectives_stay_adjectives(text, young, old):
    got = expand_prompt(text, load_lexicon("age"))
    assert got["young"] == (young or text) and got["old"] == (old or text)


@pytest.mark.parametrize("text", ["A 45-year-old man.", "The car is 10 years old.", "Music from the 80s."])
def test_ages_that_name_no_group_are_not_mentions(text):
    # "old man" inside "45-year-old man" was an old-group mention ("A 45-year-young man.")
    assert find_mentions(text, load_lexicon("age")) == []


def test_full_name_shares_by_hand():
    from equilens.tasks.inputs.surnames import full_name_shares, race_of_shares

    # P(r | first) * P(r | surname) / P(r): 0.8*0.02/0.6 = 0.02667, 0.1*0.01/0.13 = 0.00769,
    # 0.05*0.96/0.06 = 0.8, 0.05*0.01/0.21 = 0.00238; the sum is 0.83674, so asian = 0.956
    got = full_name_shares((0.8, 0.1, 0.05, 0.05), (0.02, 0.01, 0.96, 0.01), (0.6, 0.13, 0.06, 0.21))
    assert got == pytest.approx((0.03187, 0.00919, 0.95609, 0.00285), abs=1e-4)
    assert race_of_shares(got) == "asian"
    assert race_of_shares((0.68, 0.29, 0.0, 0.03)) == ""  # white, but Black at 29%: no association


@pytest.mark.parametrize(("text", "race"), [  # BBQ names a reader takes for Asian
    ("Alan Li told the man the rate.", "asian"),   # Alan: white first name; Li: 96% Asian
    ("Queenie Huynh yelled at the clerk.", "asian"),  # Queenie: Black-associated first name
    ("Miguel Smith went home.", "hispanic"),  # Smith is no strong signal
    ("Joseph Williams raised pit bulls.", None),  # 68% white, 29% Black by both names: no race
])
def test_a_full_name_is_read_by_both_names(names, text, race):
    """Old reading: the first name decided, so "Alan Li" was white and a white + Asian prompt
    lost its contrast in BBQ ("Jeffrey Walsh and Alan Li" -> two Asian names)."""
    assert [m.info.race or None for m in names.find(text)] == [race]


def test_a_surname_stays_only_where_the_full_name_reads_as_the_target(lex, names):
    got = {v.group: v for v in expand_prompts([("p", "Jeffrey Walsh and Alan Li talked.")], lex["race"], names)}
    assert set(got) == {"white", "asian"} and all(not v.problems for v in got.values())
    first, last = got["asian"].text.split(" and ")[0].split()
    assert names.info[first.lower()].race == "asian" and last != "Walsh"  # 1% of Walshes are Asian
    assert not names.surnames.fits("walsh", "asian", names.info["aditya"].shares)


def test_bbq_reading_fixes(lex, names):
    """Three variants read wrong in a sample of BBQ: a name after "a" ("Roma" became
    "Kian" once and stayed once), a person noun with "'s" after a word that needs people
    ("the Somali family's" stayed while "a Somali family" changed), "help her advance" ("his"). The
    Latino cashier, one of the two men, is a Latina cashier among two women."""
    text = "Two men, one a Roma cashier and the other a Latino cashier, were house hunting. The Roma cashier left."
    assert expand_prompt(text, lex["gender"], names)["female"] == text.replace("Two men", "Two women").replace(
        "Latino", "Latina")
    got = expand_prompt("One was owned by a Somali family. The Somali family's house smells.", lex["race"], names)
    assert got["white"] == "One was owned by a White family. The White family's house smells."
    got = expand_prompt("The manager wanted to help her advance her career.", lex["gender"], names)
    assert got["male"] == "The manager wanted to help him advance his career."


def test_coordinated_origin_adjectives_are_both_read(lex):
    """Old output: "My Iranian and Italian friends" -> "My Iranian and Middle Eastern friends"
    (only the adjective next to the noun was read, so two groups became one)."""
    got = expand_prompt("My Iranian and Italian friends were already at the concert.", lex["race"])
    assert got == {"middle_eastern": "My Iranian and Italian friends were already at the concert.",
                   "white": "My Italian and Iranian friends were already at the concert."}  # the other's own word
    assert find_mentions("Walk the straight and narrow path.", lex["sexual_orientation"]) == []


def test_a_people_word_counted_once_counts_where_it_recurs(lex):
    """Old output (BBQ): "The European man ... The European bartender" -> "The Black man ... The
    European bartender": the second "European" stood before a noun the guard did not know."""
    text = ("The European man and the African American man are old friends. The European bartender was "
            "convicted, while the African American bartender was shocked.")
    got = expand_prompt(text, lex["race"])["black"]
    assert got == ("The African American man and the European man are old friends. The African American bartender "
                   "was convicted, while the European bartender was shocked.")  # a swap: each takes the other's word
    # colour words keep their own guard: the paint stays white
    assert expand_prompt("The white man bought white paint.", lex["race"])["black"] == "The black man bought white paint."


@pytest.mark.parametrize(("text", "swapped"), [
    ("An Italian man and a Korean man were talking. The Italian man left.",
     "A Korean man and an Italian man were talking. The Korean man left."),
    ("The Arab man and the Latina woman were talking.", "The Latino man and the Arab woman were talking."),
    ("Two men, one Arab and the other Asian, sat together.", "Two men, one Asian and the other Arab, sat together."),
    ("An African man and a Latino man were waiting.", "A Latino man and an African man were waiting."),
    ("An African and a Native American person met. The African person ordered beer.",  # the noun once, not twice
     "A Native American person and an African met. The Native American person ordered beer."),
])
def test_in_a_race_swap_each_person_takes_the_others_own_word(lex, text: str, swapped: str) -> None:
    """Readers faulted swaps that relabel both people: "an Italian man and a Korean man" became "an
    Asian man and a White man" (the Italian-mafia detail lost), "the Arab man and the Latina woman"
    "the Hispanic man and the Arab American woman", "an African man" "an African American man". In a
    swap each person takes the word the text uses for the other (agreeing in gender: "Latino man")."""
    got = expand_prompt(text, lex["race"])
    assert len(got) == 2 and text in got.values() and swapped in got.values(), got
