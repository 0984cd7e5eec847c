"""What the name table holds and finds: a first name's entry (:class:`NameInfo`) and a name found
in a text (:class:`NameMention`), with the group each stands for (:func:`group_of`)."""

from __future__ import annotations

from dataclasses import dataclass

from equilens.tasks.inputs.surnames import Shares


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
        """The name's group for ``attribute`` (gender: unisex -> neutral), None when it has none."""
        return group_of(self.info, attribute)


def group_of(info: NameInfo, attribute: str) -> str | None:
    if attribute == "gender":
        return {"male": "male", "female": "female", "unisex": "neutral"}.get(info.gender)
    if attribute == "race":
        return info.race or None
    return None
