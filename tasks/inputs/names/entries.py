"""What the name table holds and finds: a first name's entry (:class:`NameInfo`) and a name found
in a text (:class:`NameMention`), with the group each stands for (:func:`group_of`)."""

from __future__ import annotations

from dataclasses import dataclass

from equilens.tasks.inputs.surnames import Shares

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
