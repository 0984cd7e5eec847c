"""What the name table holds and finds: a first name's entry (:class:`NameInfo`, read from the
name file by :func:`read_entries`) and a name found in a text (:class:`NameMention`), with the
group each stands for (:func:`group_of`); the names a person made neutral may get (:func:`read_unisex`)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from equilens.tasks.errors import InputDataError
from equilens.tasks.inputs.surnames import GROUPS, RACES, Shares
from equilens.tasks.inputs.word_lists import read_words

UNISEX_FILE = "unisex_names.txt"

LEAN = 0.65
"""The share of one sex among a split name's bearers from which the name leans that way: the edge of
the neutral names (0.35 to 0.65 men, data/lexicons/build_first_names.py)."""


@dataclass(frozen=True, slots=True)
class NameInfo:
    display: str
    gender: str  # male | female | unisex | "" (unknown)
    race: str  # white | black | asian | hispanic | "" (no association)
    freq: float
    ambiguous: int  # 0 plain name, 1 also a common word, 2 never counted
    typical: bool = True  # a clear example of its gender and race: may replace another name
    shares: Shares | None = None  # share of each race (white, black, asian, hispanic), when known
    origins: frozenset[str] = frozenset()  # Asian origins (data/lexicons/build_origins.py)
    male: float | None = None  # the census share of men among its bearers, when known

    def leaning(self) -> str:
        """A name's gender, and for a name the census splits the sex most of its bearers share when
        they are more than :data:`LEAN` of them (Guadalupe, 78% women: ``female``); else ``unisex``."""
        if self.gender != "unisex" or self.male is None or abs(self.male - 0.5) <= LEAN - 0.5:
            return self.gender
        return "male" if self.male > 0.5 else "female"


@dataclass(frozen=True, slots=True)
class NameMention:
    """A first name found in a text, with the surname after it when the surname table knows it
    ("Chen Wu"), or a surname after a title ("Mr. Chang", ``name`` empty): ``text[start:end] == surface``."""

    start: int
    end: int
    surface: str
    name: str  # lowercase first name; "" for a title + surname mention
    info: NameInfo  # the first name's, with the full name's race when a surname follows
    surname: str = ""  # lowercase surname, the last word of ``surface``; "" when none

    def group(self, attribute: str) -> str | None:
        """The name's group for ``attribute`` (gender: by its lean, a name split closer -> neutral), None when it has none."""
        return group_of(self.info, attribute)


def group_of(info: NameInfo, attribute: str) -> str | None:
    if attribute == "gender":  # a name the census splits reads as the sex most of its bearers share
        return {"male": "male", "female": "female", "unisex": "neutral"}.get(info.leaning())
    if attribute == "race":
        return info.race or None
    return None


def read_entries(path: str) -> dict[str, NameInfo]:
    """{lowercase name: its entry} from the name file at ``path``; a bad row raises
    :class:`InputDataError` with its line."""
    infos: dict[str, NameInfo] = {}
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = {"name", "gender", "race", "freq", "ambiguous"} - set(reader.fieldnames or ())
        if missing:
            raise InputDataError(f"Name file {path} lacks the columns {', '.join(sorted(missing))}.")
        for k, row in enumerate(reader, 2):
            try:
                cells = [row.get(g) or "" for g in GROUPS]
                shares = tuple(float(c) for c in cells) if all(cells) else None
                info = NameInfo(row["name"], row["gender"], row["race"], float(row["freq"] or 0),
                                int(row["ambiguous"] or 0), int(row.get("typical") or 1) == 1, shares,
                                frozenset((row.get("origin") or "").split()), float(row["male"]) if row.get("male") else None)
            except ValueError:
                raise InputDataError(f"Name file {path}, line {k}: freq, ambiguous, typical, the race and male "
                                     "shares must be numbers.") from None
            if info.gender not in ("male", "female", "unisex", "") or info.race not in (*RACES, ""):
                raise InputDataError(f"Name file {path}, line {k}: gender {info.gender!r} or race "
                                     f"{info.race!r} is not one of male/female/unisex and {'/'.join(RACES)}.")
            infos[row["name"].lower()] = info
    return infos


def read_unisex(path: Path) -> frozenset[str] | None:
    """The lowercase names of the word list ``path``, None without the file."""
    return read_words(path) if path.is_file() else None
