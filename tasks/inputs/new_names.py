"""Who a named person becomes in a variant: a new first name from the name table, and in race
variants a new surname where the old one would keep the old group, chosen once per name in a
prompt (:class:`Chosen`). Expansion (:mod:`equilens.tasks.inputs.expansion`) calls :func:`new_name`
for every name mention it changes."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from equilens.tasks.inputs.lexicon import Lexicon
from equilens.tasks.inputs.mentions import Source
from equilens.tasks.inputs.names import NameTable
from equilens.tasks.inputs.surnames import MIDDLE_EASTERN, MUSLIM_SOUTH_ASIAN

__all__ = ["Chosen", "Unavailable", "gender_hint", "new_name", "regions"]

_HE = re.compile(r"\b(?:he|him|his|himself)\b", re.IGNORECASE)
_SHE = re.compile(r"\b(?:she|her|hers|herself)\b", re.IGNORECASE)


def gender_hint(text: str) -> str | None:
    he, she = bool(_HE.search(text)), bool(_SHE.search(text))
    return "male" if he and not she else "female" if she and not he else None


class Unavailable(Exception):
    """The target group has no word for a mention (no first names or surnames, no region's word):
    the variant for it is not made."""


@dataclass
class Chosen:
    """The replacements chosen in one variant, so a name always gets the same one."""

    first: dict[str, str | None] = field(default_factory=dict)
    surname: dict[str, str | None] = field(default_factory=dict)


def new_name(s: Source, lexicon: Lexicon, target: str, names: NameTable, chosen: Chosen,
              taken: set[str], gender_hint: str | None, region: dict[str, frozenset[str]]) -> str | None:
    """The replacement of the name mention ``s`` for ``target``: its first name through the
    name table (one replacement per name in a prompt), and in race variants its surname when the
    new full name would not read as the target group (:meth:`equilens.tasks.inputs.surnames.SurnameTable.fits`).
    ``region``: the origins of the people of each group the context names (:func:`regions`), so a
    person who takes another's group takes that person's region of it. None when the first name has
    no replacement."""
    surface_first, rest = s.surface[:len(s.name)], s.surface[len(s.name):]
    first = surface_first
    sur = names.surnames
    # "Khalid Qureshi", read as Arab, made Asian: a surname of South Asian Muslims would still read Arab
    read_arab = (lexicon.attribute == "race" and target == "asian" and s.group == MIDDLE_EASTERN and sur is not None
                 and (entry := sur.lookup(s.surname)) is not None and entry.origins == MUSLIM_SOUTH_ASIAN)
    if s.name:
        if s.name not in chosen.first:
            if lexicon.attribute == "race" and not names.has_race(target):
                raise Unavailable(target)
            if lexicon.attribute == "race":
                origins = names.origins_to_share(s.name, "" if read_arab else s.surname, target, region.get(target))
            else:
                origins = names.origins_to_share(s.name, s.surname)
            chosen.first[s.name] = names.replacement(s.name, lexicon.attribute, target, taken, gender_hint, s.race,
                                                     origins, surnamed=bool(s.surname))
        first = chosen.first[s.name]
        if first is None:
            return None
        first = first.upper() if surface_first.isupper() and len(s.name) > 1 else first
    if not s.name and lexicon.attribute == "race" and (sur is None or target not in sur.pools):
        raise Unavailable(target)  # a surname after a title, and no surnames for the target
    new_first = names.info.get(first.lower()) if s.name else None
    shares = new_first.shares if new_first is not None else None
    # a surname no table lists goes with its first name (NameTable._surname_after): "Thalia Wardak"
    # "Amina Shakir", read as Arab, made Black: Shakir, borne by Black Muslims, still reads Arab
    left_arab = (lexicon.attribute == "race" and s.group == MIDDLE_EASTERN and target != MIDDLE_EASTERN
                 and sur is not None and (entry := sur.lookup(s.surname or "")) is not None
                 and not (entry.typical and entry.race == target))
    if s.surname and lexicon.attribute == "race" and sur is not None and (
            (s.name and sur.lookup(s.surname) is None) or read_arab or left_arab
            or not sur.fits(s.surname, target, shares)):
        if s.surname not in chosen.surname:
            origins = new_first.origins if new_first is not None else frozenset()
            chosen.surname[s.surname] = sur.replacement(s.surname, target, taken, origins)
        if chosen.surname[s.surname]:
            rest = rest[:len(rest) - len(s.surname)] + chosen.surname[s.surname]
    return first + rest


def regions(found: Sequence[Source], names: NameTable) -> dict[str, frozenset[str]]:
    """{race: the origins of the named people of that race in the context} ("Joanna Li": asian ->
    chinese), from each person's first name and surname."""
    out: dict[str, frozenset[str]] = {}
    for s in found:
        if not s.is_name:
            continue
        first = names.info.get(s.name) if s.name else None
        entry = names.surnames.lookup(s.surname) if names.surnames is not None and s.surname else None
        origins = (first.origins if first is not None else frozenset()) | (entry.origins if entry else frozenset())
        if origins:
            out[s.group] = out.get(s.group, frozenset()) | origins
    return out
