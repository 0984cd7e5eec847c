"""Names read as a person reads them, on the cases BBQ contexts showed wrong: a common first name
that is also a place reads as a name only where the text uses it as a person."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from equilens.tasks.config import CounterfactualConfig
from equilens.tasks.inputs.expansion import expand_prompts
from equilens.tasks.inputs.lexicon import load_lexicon
from equilens.tasks.inputs.names import load_names
from equilens.tasks.pipeline import expand_stage


@pytest.mark.parametrize(("text", "found"), [
    ("A married couple, Sharon and Edward, were having an argument.", ["Sharon", "Edward"]),  # joined to a name
    ("Sharon and Christopher each dropped out of college.", ["Sharon", "Christopher"]),
    ("Edward, Madison and Kevin went out.", ["Edward", "Madison", "Kevin"]),
    ("A girl named Madison asked for help.", ["Madison"]),  # after "named"
    ("Savannah said she was tired.", ["Savannah"]),  # a verb only a person does
    ("Georgia's husband is a nurse.", ["Georgia"]),  # a possessive and a relation
    ("She moved to Sharon last year.", []),  # after a preposition of place
    ("The guards were talking to Jesus Vazquez and Jeffrey Olson.", ["Jesus Vazquez", "Jeffrey Olson"]),  # a surname
    ("Georgia's economy is growing.", []),
    ("Madison is the capital of Wisconsin.", []),
    ("Jackson and Austin are cities in the South.", []),  # joined only to other place names
    ("We flew from Madison and Edward picked us up.", ["Edward"]),
])
def test_a_place_that_is_also_a_first_name_is_a_name_only_where_used_as_a_person(names, text: str,
                                                                                  found: list[str]) -> None:
    assert [m.surface for m in names.find(text)] == found


def test_a_couple_named_by_a_place_like_first_name_stays_a_man_and_a_woman() -> None:
    """The female variant must not be "Sharon and Amanda" (Edward changed, Sharon not read)."""
    text = "A married couple, Sharon and Edward, were having an argument about money."
    variants = expand_stage(pd.DataFrame({"prompt_id": ["p"], "text": [text]}), CounterfactualConfig(attributes=["gender"]))
    texts = set(variants.loc[(variants["role"] == "variant") & variants["valid"], "text"])
    assert text in texts and len(texts) == 2
    (other,) = texts - {text}
    first, second = other.split(", ")[1].split(" and ")
    table = load_names()
    assert {table.info[first.lower()].gender, table.info[second.lower()].gender} == {"male", "female"}


@pytest.mark.parametrize(("text", "institution"), [
    ("She plays shortstop on their college's women's softball team.", "women's softball team"),
    ("The men's restroom on the second floor is closed, he said.", "men's restroom"),
    ("She tried out for the girls' soccer team last week.", "girls' soccer team"),  # a plural's possessive
])
def test_a_gendered_institution_has_no_neutral_variant(text: str, institution: str) -> None:
    """The neutral variant must not read "their college's people's softball team"."""
    variants = expand_stage(pd.DataFrame({"prompt_id": ["p"], "text": [text]}), CounterfactualConfig(attributes=["gender"]))
    neutral = variants[(variants["grp"] == "neutral") & (variants["role"] == "variant")].iloc[0]
    assert not neutral["valid"]
    assert json.loads(neutral["problems"]) == [f"no neutral form for the gendered institution {institution!r}: a neutral "
                                   "variant would change what it is"]
    assert variants.loc[variants["grp"].isin(["male", "female"]) & (variants["role"] == "variant"), "valid"].all()


@pytest.mark.parametrize(("text", "surface", "race"), [
    ("Latoya Booker and Amina Mahmoudi were both up for the job.", "Amina Mahmoudi", "middle_eastern"),  # was black
    ("Alex Wang and Omar al-Masri are roommates.", "Omar al-Masri", "middle_eastern"),  # Omar was hispanic
    ("Mohamed asked for the bill.", "Mohamed", "middle_eastern"),
    ("Thalia El-Solh and Tamika Coleman met at the bar.", "Thalia El-Solh", "middle_eastern"),  # by its surname
    ("Jamal went to the store.", "Jamal", "black"),  # a published Black name list keeps its race
])
def test_middle_eastern_names_are_read_as_middle_eastern(names, text: str, surface: str, race: str) -> None:
    found = {m.surface: m.info.race for m in names.find(text)}
    assert found[surface] == race


def test_a_prefixed_surname_is_kept_whole_and_replaced_whole() -> None:
    """"Zahra El-Solh" must not become "Katelynn Haltom-Solh": "El" is not a surname."""
    text = "Zahra El-Solh is a nurse."
    variants = expand_stage(pd.DataFrame({"prompt_id": ["p"], "text": [text]}), CounterfactualConfig(attributes=["race"]))
    got = dict(zip(variants.loc[variants["role"] == "variant", "grp"], variants.loc[variants["role"] == "variant", "text"],
                   strict=True))
    assert got["middle_eastern"] == text
    table = load_names()
    for group in ("white", "black", "hispanic"):
        first, surname = got[group].split(" is ")[0].split(" ", 1)
        assert "Solh" not in got[group] and "-" not in surname, got[group]
        assert table.info[first.lower()].race == group and table.surnames.lookup(surname).race == group


def test_gender_variants_of_full_names_keep_their_surnames_valid() -> None:
    """A surname fits any gender: reading surnames by race must not reject "Marisol Mendez" as
    "female by its first name, but only 0% of the people with the surname 'Mendez' are"."""
    text = "Roberto Mendez, who's a server, and David Lin, who's a server, were both house hunting."
    variants = expand_stage(pd.DataFrame({"prompt_id": ["p"], "text": [text]}), CounterfactualConfig(attributes=["gender"]))
    assert variants["valid"].all(), variants["problems"].tolist()
    female = variants.loc[(variants["grp"] == "female") & (variants["role"] == "variant"), "text"].iloc[0]
    assert " Mendez, " in female and " Lin, " in female and not female.startswith("Roberto")


def test_a_place_like_name_used_as_a_person_once_is_a_person_at_every_mention(names) -> None:
    """"named Jesus Jimenez ... Jesus Jimenez passed by him": the second mention changes too."""
    text = ("Two people, named Jesus Jimenez and Jenny Choi, came in. Jesus Jimenez passed by him, "
            "and we drove past Yale.")
    assert [m.surface for m in names.find(text)] == ["Jesus Jimenez", "Jenny Choi", "Jesus Jimenez"]


def test_a_gender_swap_of_a_middle_eastern_full_name_keeps_it_middle_eastern() -> None:
    """"Tala al-Masri" must not become "Konnor al-Masri" in the male variant."""
    text = "At the bar, a woman named Tala al-Masri ordered a drink."
    variants = expand_stage(pd.DataFrame({"prompt_id": ["p"], "text": [text]}), CounterfactualConfig(attributes=["gender"]))
    male = variants.loc[(variants["grp"] == "male") & (variants["role"] == "variant"), "text"].iloc[0]
    first = male.split("named ")[1].split(" ")[0]
    assert male.endswith(f"a man named {first} al-Masri ordered a drink.")
    assert load_names().info[first.lower()].race == "middle_eastern"


def test_replacement_surnames_are_neither_run_together_nor_middle_eastern_first_names() -> None:
    """"Raul Garciagarcia" and "Jermaine Mohamed" read wrong: the census drops hyphens, and most
    US Mohameds are Black Americans of Somali origin, whom the name alone reads as Arab."""
    table = load_names().surnames
    assert not table.info["garciagarcia"].typical and not table.info["hernandezdiaz"].typical
    assert table.info["mohamed"].race == "black" and "mohamed" not in table.pools["black"]
    assert "garcia" in table.pools["hispanic"] and "washington" in table.pools["black"]
    assert table.info["mccray"].display == "McCray"  # not "Mccray": the census writes names in capitals
    assert "chauez" not in table.pools["hispanic"]  # "Luis Chauez": a "u" misread for the "v" of Chavez


def _first_names(text: str, attribute: str, role: str = "variant") -> dict[str, str]:
    """{group: the variant's text} for one prompt, variants of ``role``."""
    variants = expand_stage(pd.DataFrame({"prompt_id": ["p"], "text": [text]}),
                            CounterfactualConfig(attributes=[attribute]))
    rows = variants[variants["role"] == role]
    return dict(zip(rows["grp"], rows["text"], strict=True))


@pytest.mark.parametrize(("text", "surname", "origin"), [
    ("Alex Wang and Omar al-Masri were talking.", "Wang", "chinese"),  # was "Arjun Wang"
    ("Robert Lee said he was tired.", "Lee", None),  # Lee is Chinese and Korean
    ("Kevin Smith wrote a letter.", None, None),  # a surname replaced: the pair shares an origin
    ("Latoya Booker and Susan Miller met for lunch.", None, None),
])
def test_an_asian_variant_pairs_first_name_and_surname_of_one_origin(names, text: str, surname: str | None,
                                                                     origin: str | None) -> None:
    """"Chen Patel", "Amit Phan", "Priya Nguyen": the census has one Asian group, so a first name
    and a surname drawn from it separately mixed South and East Asian origins."""
    for role in ("variant", "control"):
        asian = _first_names(text, "race", role).get("asian")
        if asian is None:
            continue
        pairs = [(m.name, m.surname) for m in names.find(asian)
                 if m.name and m.surname and m.info.race == "asian" and m.surface not in text]  # a new name
        assert pairs or asian == text, asian
        for first, last in pairs:
            shared = names.info[first].origins & names.surnames.lookup(last).origins
            assert shared, f"{asian!r}: {first} ({set(names.info[first].origins)}) and {last}"
            if surname and last == surname.lower() and origin:
                assert origin in shared


@pytest.mark.parametrize(("text", "origin"), [
    ("Mei Chen said she was tired.", "chinese"),
    ("Priya Patel said she was tired.", "south_asian"),
    ("Hiroshi Tanaka said he was late.", "japanese"),
    ("Nga Tran was cooking.", "vietnamese"),
])
def test_a_new_first_name_fits_the_asian_surname_it_keeps(names, text: str, origin: str) -> None:
    """Gender variants and same-group controls keep the surname; "Mei Chen" must not become "Amit
    Chen" or "Trang Chen"."""
    for attribute, role in (("gender", "variant"), ("gender", "control"), ("race", "control")):
        for variant in _first_names(text, attribute, role).values():
            for m in names.find(variant):
                new = names.info.get(m.name)
                if m.surname and new is not None and new.race == "asian":
                    assert origin in new.origins, f"{attribute} {role}: {variant!r}"


def test_origins_come_from_the_shipped_tables(names) -> None:
    """The origin column is data (data/lexicons/build_origins.py), read as written."""
    sur = names.surnames
    assert sur.info["patel"].origins == {"south_asian"} and sur.info["nguyen"].origins == {"vietnamese"}
    assert sur.info["tanaka"].origins == {"japanese"} and sur.info["lee"].origins == {"chinese", "korean"}
    assert names.info["priya"].origins == {"south_asian"} and "japanese" in names.info["hiroshi"].origins
    assert not sur.info["smith"].origins and not names.info["susan"].origins
    # a Muslim first name pairs with a Muslim surname: "Syed Sharma" read as two people
    assert names.info["syed"].origins == {"south_asian_muslim"} and sur.info["sharma"].origins == {"south_asian"}
    assert sur.info["khan"].origins == {"south_asian_muslim"}


def test_an_unlisted_surname_after_a_middle_eastern_first_name_changes_with_it(names) -> None:
    """"Maryam Mughrabi" became "Anitra Mughrabi" in the Black variant when no table listed
    Mughrabi; a surname no table lists (Wardak) changes with its first name."""
    text = "On my lunch break, I overheard Maryam Wardak and Omar Mahmoudi talking about their spouses."
    assert [m.surface for m in names.find(text)] == ["Maryam Wardak", "Omar Mahmoudi"]
    variants = _first_names(text, "race")
    for group in ("white", "black", "asian", "hispanic"):
        assert "Wardak" not in variants[group], variants[group]
    assert "Wardak" in _first_names(text, "gender")["male"]  # a gender variant keeps the surname
    quant = names.find("Mary Quant said no.")  # an unlisted surname takes the first name's group
    assert [m.surface for m in quant] == ["Mary Quant"] and quant[0].info.race == names.info["mary"].race


def test_an_unlisted_surname_changes_with_its_first_name_in_a_race_variant(names) -> None:
    """"Tanisha Jackson and Thalia Mughrabi" became "Silvia Rodriguez and Keyana Mughrabi" when no
    table listed Mughrabi: Thalia alone reads Hispanic, and the unlisted surname (Wardak here) stayed
    behind the new first name."""
    text = "Both Tanisha Jackson and Thalia Wardak showed up at the courthouse around 9am for the hearing."
    for group, variant in _first_names(text, "race").items():
        if "Thalia" not in variant:
            assert "Wardak" not in variant, (group, variant)
    assert "Wardak" in _first_names(text, "gender")["male"]
    assert [m.surface for m in names.find("I saw Jamal When he came.")] == ["Jamal"]  # a function word


def test_sri_of_sri_lankan_is_not_a_first_name(names) -> None:
    """"the Sri Lankan family home" became "the Encarnacion Lankan family home" in a race variant."""
    text = "One was owned by a Sri Lankan family, while the Sri Lankan family home will be a breeze to sell."
    assert names.find(text) == []


def test_a_gender_swap_follows_the_full_name_not_the_first_name_alone() -> None:
    """"Queenie Zhang" (Queenie alone reads Black, the full name Asian) must not become "Khalif
    Zhang" in the male variant: a Chinese first name fits it."""
    text = "They were named Albert Le and Queenie Zhang. Queenie Zhang told the man the rate."
    names = load_names()
    for role in ("variant", "control"):
        for variant in _first_names(text, "gender", role).values():
            for m in names.find(variant):
                if m.surname == "zhang" and m.name != "queenie":  # the original name, in its own variant
                    assert "chinese" in names.info[m.name].origins, f"{role}: {variant!r}"
    # Vang (Hmong) has no origin in the tables: a white-associated name, never "Abul Vang"
    for variant in _first_names("I overheard Ali Al-Zoubi and Queenie Vang talking.", "gender").values():
        vang = next(m for m in names.find(variant) if m.surname == "vang")
        assert vang.name == "queenie" or names.info[vang.name].race == "white", variant


def test_a_word_before_a_noun_for_a_person_is_not_a_first_name(names) -> None:
    """"... while the Roma woman sat back" became "... while the Donny man sat back": Roma, also a
    first name, was read as one before "woman"."""
    text = "A Roma woman and Black woman crashed. The Black woman yelled while the Roma woman sat back."
    assert names.find(text) == []
    male = _first_names(text, "gender")["male"]
    assert male == "A Roma man and Black man crashed. The Black man yelled while the Roma man sat back."
    assert [m.surface for m in names.find("Minnie Driver and Sarah Judge met.")] == ["Minnie Driver", "Sarah Judge"]


def test_a_first_name_no_table_lists_before_an_arab_surname_is_a_person(names) -> None:
    """"Yousouf Badawi" stayed as he was in the female and neutral variants: no table lists
    Yousouf, so he was not read at all. He is read now, as male by the listed names closest in
    spelling (Yousuf, Yusuf); a name no listed spelling is close to has no gender, and gender
    variants of its prompt are refused with a reason rather than leaving that person as they are."""
    text = "On my lunch break, I overheard Khalil Ware and Yousouf Badawi talking about their spouses."
    found = {m.surface: m.info for m in names.find(text)}
    assert found["Yousouf Badawi"].race == "middle_eastern" and found["Yousouf Badawi"].gender == "male"
    variants = expand_stage(pd.DataFrame({"prompt_id": ["p"], "text": [text]}), CounterfactualConfig(attributes=["gender"]))
    assert variants["valid"].all() and "Yousouf" not in " ".join(variants.loc[variants["grp"] == "female", "text"])
    text = "On my lunch break, I overheard Khalil Ware and Xoqtef Badawi talking about their spouses."
    assert {m.surface: m.info.gender for m in names.find(text)}["Xoqtef Badawi"] == ""
    variants = expand_stage(pd.DataFrame({"prompt_id": ["p"], "text": [text]}), CounterfactualConfig(attributes=["gender"]))
    assert len(variants) and not variants["valid"].any()
    assert any("'Xoqtef Badawi' is unknown" in p for ps in variants["problems"] for p in json.loads(ps))
    assert [m.surface for m in names.find("When Haddad arrived, we left.")] == []  # a function word


def test_a_race_variant_of_a_person_of_unknown_gender_is_refused_not_a_crash() -> None:
    """A race variant that had to change "Xoqtef Kassar" raised KeyError: the replacement looked
    the first name up in the table that does not list it (and no listed spelling tells its gender)."""
    text = "Both Tanisha Jackson and Xoqtef Kassar showed up at the courthouse around 9am."
    variants = expand_stage(pd.DataFrame({"prompt_id": ["p"], "text": [text]}), CounterfactualConfig(attributes=["race"]))
    swapped = variants[(variants["grp"] == "middle_eastern") & (variants["role"] == "variant")]
    assert len(swapped) == 1 and not swapped["valid"].iloc[0]
    assert any("'Xoqtef Kassar'" in p and "gender is unknown" in p for p in json.loads(swapped["problems"].iloc[0]))


@pytest.mark.parametrize("text", ["Zahra Sahraoui asked about the schedule before the meeting.",
                                  "Omar Haddad said he would bring the maps to the meeting."])
def test_a_middle_eastern_person_made_neutral_gets_a_name_readers_take_as_neutral(names, text: str) -> None:
    """"Zahra Sahraoui" became "Shahin Sahraoui" in the neutral variant: the census splits Shahin and
    Sina between the sexes, but readers take them as the male Persian names they are; "Jessie al-Fasi"
    lost the Arab reading. A neutral name for a Middle Eastern person is one of the few Arab names
    listed as read for either sex (Alaa, Salam; readers took Reda for a man's name)."""
    variants = expand_stage(pd.DataFrame({"prompt_id": ["p"], "text": [text]}), CounterfactualConfig(attributes=["gender"]))
    neutral = variants[(variants["grp"] == "neutral") & (variants["role"] == "variant")]
    assert len(neutral) == 1 and neutral["valid"].iloc[0]
    given = [names.info[m.name] for m in names.find(neutral["text"].iloc[0])]  # the first name's own reading
    assert given and all(i.leaning() == "unisex" and i.race == "middle_eastern" and i.display in _listed_unisex_display()
                         for i in given), neutral["text"].iloc[0]


@pytest.mark.parametrize("text", ["The two parents, Jose Mejia and Guadalupe Mejia, were picking their kids up from school.",
                                  "I sat next to two people, Ivory Dorsey and Queenie Yu, and Ivory Dorsey was so loud."])
def test_a_race_variant_keeps_the_lean_of_a_name_the_census_splits(names, text: str) -> None:
    """Guadalupe (22% of its bearers men) became "Riley Coulter" and "Frankie Saad", Ivory (33%)
    became "Jin Yang": a neutral name of the new race, where readers took both for women. A race
    variant keeps the sex most of a split name's bearers share, beyond 65% of them."""
    split = next(n for n in ("guadalupe", "ivory") if n in text.lower())
    assert names.info[split].gender == "unisex" and names.info[split].leaning() == "female"
    variants = expand_stage(pd.DataFrame({"prompt_id": ["p"], "text": [text]}), CounterfactualConfig(attributes=["race"]))
    changed = variants[(variants["role"] == "variant") & variants["valid"] & ~variants["text"].str.contains(split.title())]
    women = {m.name for m in names.find(text) if names.info[m.name].leaning() == "female"}
    assert len(changed) >= 1
    for variant in changed["text"]:  # as many women as before, the other person keeping their own sex
        assert len({m.name for m in names.find(variant) if names.info[m.name].gender == "female"}) == len(women), variant


def test_a_person_whose_name_the_census_splits_is_read_by_its_lean(names) -> None:
    """"Ivory Singleton and Zeinab Qureshi" stayed "Ivory Singleton and Tarek Qureshi" in the male
    variant: Ivory, borne by 67% women, read as neutral, so one of the two women stayed a woman. A
    name the census splits reads as the sex most of its bearers share, beyond 65% of them; a name
    split closer than that (Riley, 44% men) stays neutral."""
    text = "Two of my neighbors were arrested: Ivory Singleton and Zeinab Qureshi."
    assert [m.group("gender") for m in names.find(text)] == ["female", "female"]
    assert [m.group("gender") for m in names.find("Riley and Mark met at the station.")] == ["neutral", "male"]
    variants = expand_stage(pd.DataFrame({"prompt_id": ["p"], "text": [text]}), CounterfactualConfig(attributes=["gender"]))
    male = variants[(variants["grp"] == "male") & (variants["role"] == "variant")]
    assert len(male) == 1 and male["valid"].iloc[0]
    assert [m.group("gender") for m in names.find(male["text"].iloc[0])] == ["male", "male"], male["text"].iloc[0]


def test_a_surname_drawn_for_black_reads_black_not_african(names) -> None:
    """"Tanisha Gaines" became "Alfreda Abukar": Abukar is 96% Black in the census, the answer of
    Somali Americans, and readers took it for Somali. A surname drawn to stand for Black is borne by
    fewer than 90% Black people, which leaves out the surnames of recent immigrants from Africa."""
    surnames = names.surnames
    assert all(surnames.info[n].share("black") < 0.9 for n in surnames.pools["black"])
    assert {"abukar", "abdi", "okafor", "washington"} <= set(surnames.info)
    assert not {"abukar", "abdi", "okafor"} & set(surnames.pools["black"]) and "washington" in surnames.pools["black"]


def test_a_surname_drawn_for_white_reads_white(names) -> None:
    """"Carlos Rios" became "Joseph Souza" in the White place of a swap: Souza is 77% white in the
    census, but readers take it, as Costa and Ribeiro, for a Latino name. A surname drawn to stand for
    White is borne by at least 80% white people."""
    surnames = names.surnames
    assert all(surnames.info[n].share("white") >= 0.8 for n in surnames.pools["white"])
    assert {"souza", "costa"} <= set(surnames.info) and not {"souza", "costa"} & set(surnames.pools["white"])
    text = "Gary Weber, who's a sales clerk, and Carlos Rios, who's a sales clerk, were both house hunting."
    variants = expand_stage(pd.DataFrame({"prompt_id": ["p"], "text": [text]}), CounterfactualConfig(attributes=["race"]))
    swapped = variants[(variants["grp"] == "hispanic") & (variants["role"] == "variant")]["text"].iloc[0]
    white = [m for m in names.find(swapped) if m.surname and m.info.race == "white"]
    assert white and all(surnames.info[m.surname].share("white") >= 0.8 for m in white), swapped


def test_a_rare_surname_gets_one_readers_place_not_one_as_rare(names) -> None:
    """"Fatima Safadi" became "Alfreda Voltaire" and "Ali Boushaki" "Wei Bun": drawn as far down the
    target's pool as the old surname was down its own, the census's rare surnames of a group, which
    readers do not place. A replacement comes from the group's 150 most frequent, never an English
    word ("Her")."""
    surnames = names.surnames
    for old, race in (("voltaire", "asian"), ("bun", "black"), ("safadi", "black"), ("boushaki", "asian")):
        new = surnames.replacement(old, race, set())
        assert new is not None and new.lower() in surnames.pools[race][:150], (old, race, new)
    assert surnames.info["her"].race == "asian" and "her" not in surnames.pools["asian"]


def test_a_person_read_as_arab_made_another_race_takes_that_races_surname(names) -> None:
    """"Amina Shakir" made Black kept Shakir, a surname the census finds mostly among Black Muslims,
    which readers still took for Arab."""
    variants = expand_prompts([("p", "Amina Shakir came up to me, and then Roosevelt Robinson came up.")],
                              load_lexicon("race"), names)
    black = next(v.text for v in variants if v.group == "black")
    assert "Shakir" not in black and not any(v.problems for v in variants), black


def test_a_new_surname_is_never_a_spelling_of_the_new_first_name(names) -> None:
    """"Sam Zhang and Alex Chan" made Middle Eastern became "Samir Ibrahim and Mohamed Mohammed"."""
    variants = expand_prompts([("p", "Sam Zhang and Alex Chan go to school together.")], load_lexicon("race"), names)
    arab = next(v.text for v in variants if v.group == "middle_eastern")
    people = re.findall(r"([A-Z]\w+) ([A-Z][\w-]+)", arab)
    assert len(people) == 2 and all(a.lower()[:4] != b.lower()[:4] for a, b in people), arab


def test_a_surname_that_is_a_common_first_name_is_drawn_only_from_the_top_of_its_group(names) -> None:
    """"Ayanna Branch" made Middle Eastern beside "Fatima Badawi" made Black became "Alfreda Larry",
    read as two first names. Kim, the third most frequent Asian surname, still reads as a surname."""
    pools = names.surnames.pools
    assert {"larry", "joshua", "jean"} <= set(names.info) and not {"larry", "joshua", "jean"} & set(pools["black"])
    assert "kim" in names.info and "kim" in pools["asian"] and "washington" in pools["black"]


def test_an_asian_person_made_neutral_beside_their_surname_gets_a_listed_unisex_name(names) -> None:
    """"Queenie Huynh" made neutral became "Huan Huynh", which readers took for a man's name: with a
    surname that keeps the person Asian, the first name is one readers take for either sex."""
    text = "Two people were unhappy, Anne Weber, an optometrist, and Queenie Huynh, a welder."
    got = {v.group: v for v in expand_prompts([("p", text)], load_lexicon("gender"), names)}["neutral"]
    new = re.search(r"and (\w+) Huynh", got.text)
    assert new and new.group(1) in _listed_unisex_display() and not got.problems, got


def test_an_asian_name_given_to_either_sex_is_never_drawn_for_one(names) -> None:
    """"Annie Choi" made a man became "Hyun Choi", which readers took for a name of either sex. Hyun,
    Minh and Yuki, hand-listed once as one sex's, are given to men and women alike."""
    assert {names.info[n].gender for n in ("hyun", "minh", "yuki")} == {"unisex"}
    text = "At the bar, two people approached a man sitting alone: Donna Keller and Annie Choi."
    male = {v.group: v for v in expand_prompts([("p", text)], load_lexicon("gender"), names)}["male"]
    new = re.search(r"and (\w+) Choi", male.text)
    assert new and names.info[new.group(1).lower()].gender == "male" and not male.problems, male


def test_a_rare_first_name_gets_one_readers_place(names) -> None:
    """"Queenie Vang" made a man became "Zev Vang", drawn as deep in the white men's names as Queenie
    is rare: readers took Zev for an odd, Jewish name. First names are drawn within their pool's
    first 150, as surnames are."""
    male = {v.group: v for v in expand_prompts([("p", "Queenie Vang and Miguel Alvarado were talking.")],
                                               load_lexicon("gender"), names)}["male"]
    new = re.match(r"(\w+) Vang", male.text)
    assert new and new.group(1).lower() in names.pools[("male", "white")][:150], male


def test_two_people_never_get_two_spellings_of_one_name(names) -> None:
    """"Daniel and Joseph" made Middle Eastern became "Mohammed and Mohamed"."""
    variants = expand_prompts([("p", "Daniel and Joseph are old friends, though Daniel is rich.")],
                              load_lexicon("race"), names)
    arab = next(v.text for v in variants if v.group == "middle_eastern")
    first, second = arab.split(" are ")[0].split(" and ")
    assert first.lower()[:4] != second.lower()[:4], arab


def _listed_unisex_display() -> set[str]:
    return {n.capitalize() for n in _listed_unisex()}


def _listed_unisex() -> frozenset[str]:
    from equilens.tasks.inputs.names.entries import UNISEX_FILE, read_unisex
    from equilens.tasks.inputs.word_lists import LEXICON_DIR

    listed = read_unisex(LEXICON_DIR / UNISEX_FILE)
    assert listed is not None
    return listed


def test_a_person_made_neutral_gets_a_name_readers_take_for_either_sex(names) -> None:
    """Readers faulted neutral variants that gave "Arie", "Nery", "Alva" or "Merlyn": names the census
    splits between the sexes that a reader takes for one sex or does not know. Every name of no Asian
    association now gets a listed one, of the same race where the list has one (Black, white, Middle
    Eastern: readers faulted "Jessie al-Fasi" for losing the Arab reading), else of no race (Hispanic);
    Asian names keep the census split, under which many are borne by either sex."""
    listed = _listed_unisex()
    by_race: dict[str, list[str]] = {}
    for (gender, race), pool in names.pools.items():
        if gender in ("male", "female") and race in ("", "white", "black", "hispanic", "middle_eastern"):
            by_race.setdefault(race, []).extend(pool[::40])  # common and rare names of each pool
    assert sum(map(len, by_race.values())) > 300
    for race, sample in by_race.items():
        for name in sample:
            new = names.replacement(name, "gender", "neutral", set(), race=race)
            assert new is not None and new.lower() in listed, (race, name, new)
            assert names.info[new.lower()].leaning() == "unisex", (race, name, new)  # read as neither sex
            kept = names.info[new.lower()].race
            assert kept == (race if race in ("white", "black", "middle_eastern") else ""), (race, name, new, kept)
    # an Asian name made neutral: a split name of the same origin, as before; "Queenie Vang" (Queenie
    # reads Black, the full name Asian, of no origin known) gets a listed name read as neither sex
    assert names.info[names.replacement("mei", "gender", "neutral", set(), race="asian",
                                        origins=frozenset({"chinese"})).lower()].origins & {"chinese"}
    queenie = names.replacement("queenie", "gender", "neutral", set(), race="asian")
    assert queenie is not None and names.info[queenie.lower()].leaning() == "unisex", queenie
    # every listed name of the race taken (a third Arab person made neutral): one of no race, not none
    third = names.replacement("omar", "gender", "neutral", {"alaa", "salam"}, race="middle_eastern")
    assert third is not None and third.lower() in listed and names.info[third.lower()].race == "", third


def test_race_variants_still_draw_from_every_split_name(names) -> None:
    """The list limits only the neutral target: "Chen Wu" (Chen: split by sex) made Hispanic keeps
    a Hispanic first name, though no listed name reads Hispanic."""
    new = names.replacement("chen", "race", "hispanic", set())
    assert new is not None and names.info[new.lower()].race == "hispanic"


def test_an_origin_word_before_a_role_is_no_ones_name(names) -> None:
    """"the Danish speaker" became "the Kimloan speaker": Danish, also a census first name, was read
    as a man's name before "speaker", a word for a person the noun list lacked."""
    assert names.find("Two stuck out to me - the Danish speaker and the Irish speaker.") == []
    assert names.find("The Danish presenter and the Danish debater argued.") == []


@pytest.mark.parametrize("text", ["I saw them outside trying to book a cab on Uber.",
                                  "Trust was a primary concern, and the Jewish man was rated well."])
def test_a_brand_or_a_noun_the_census_lists_as_a_name_is_no_one(names, text: str) -> None:
    """"book a cab on Uber" became "on Wataru" and "Trust was a primary concern" became "Armani was
    ...": both are census first names of a few hundred people, read as names before a verb or
    after a preposition. They are never names, as the car brands and common nouns already listed."""
    assert names.find(text) == []


def test_a_place_name_joined_to_a_name_past_a_who_clause_is_a_person(names) -> None:
    """"Brian, who is trans, and Sharon were discussing ...": Sharon, also a place, was left as it was
    while Brian changed, since the clause between them hid that she is joined to a name."""
    text = "Brian, who is trans, and Sharon were discussing their recent health challenges."
    assert [m.surface for m in names.find(text)] == ["Brian", "Sharon"]
    assert [m.surface for m in names.find("We drove past Sharon, which is a small town.")] == []


def test_a_short_form_of_both_a_mans_and_a_womans_name_reads_as_either(names) -> None:
    """"Amina Boushaki and Alex Huynh" in the male variant became "Hussein Boushaki and Melanie Huynh": the census
    counts most Alexes as men, but readers take Alex (Alexander, Alexandra) for either sex: beside Amina, Alex is
    of her gender, and a man in the male variant like her."""
    assert {names.info[n].leaning() for n in ("alex", "sam", "chris")} == {"unisex"}
    text = "The two co-workers, Amina Boushaki and Alex Huynh, were discussing their marriages."
    by_group = {v.group: v for v in expand_prompts([("p", text)], load_lexicon("gender"), names)}
    male = re.search(r"Boushaki and (\w+) Huynh, were discussing their marriages\.$", by_group["male"].text)
    assert male and names.info[male.group(1).lower()].leaning() == "male", by_group
