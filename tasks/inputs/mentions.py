"""Attribute mentions in a text: lexicon terms of a group and first names, left to right, shared by
counterfactual expansion and variant validation."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from equilens.tasks.inputs.ftu import find_mentions
from equilens.tasks.inputs.lexicon import Lexicon
from equilens.tasks.inputs.names import NameTable


@dataclass(frozen=True, slots=True)
class Source:
    """One attribute mention to swap: a lexicon term (``row`` >= 0) or a name (``name`` and/or ``surname``)."""

    start: int
    end: int
    surface: str
    group: str
    row: int = -1
    name: str = ""
    subject: bool = False  # a subject pronoun (agreement follows it)
    counted: bool = True  # False: a guard rejected it (only from sources(..., guards=False))
    surname: str = ""  # lowercase surname that ends a name mention ("Chen Wu", "Mr. Chang": "Chang")
    race: str = ""  # a name mention's race, read from the full name ("Winnie Wang": asian)

    @property
    def is_name(self) -> bool:
        return bool(self.name or self.surname)


def sources(text: str, lexicon: Lexicon, names: NameTable | None = None, *,
            include_targets: bool = False, guards: bool = True, loose_names: bool = False) -> list[Source]:
    """Mentions of ``lexicon``'s groups in ``text`` (terms, and first names when ``names`` is
    given and the attribute is gender or race), left to right, without overlaps. With
    ``guards=False`` terms a guard rejects come too, with ``counted=False``; ``loose_names``
    finds names as validation does (:meth:`equilens.tasks.inputs.names.NameTable.find`)."""
    found = []
    for m in find_mentions(text, lexicon, include_targets=include_targets, names=names, guards=guards):
        subject = lexicon.role(m.row) == "subject"
        found.append(Source(m.start, m.end, m.surface, m.group, m.row, "", subject, m.counted))
    # A name's race is a weak statistical signal: it counts only where no race word does.
    if names is not None and (lexicon.attribute == "gender"
                              or (lexicon.attribute == "race" and not any(s.counted for s in found))):
        taken = [(s.start, s.end) for s in found]
        extra = False
        for m in names.find(text, loose=loose_names):
            g = m.group(lexicon.attribute)
            if g is None or g not in lexicon.groups or (g in lexicon.target_only and not include_targets):
                continue
            if not any(s < m.end and m.start < e for s, e in taken):
                found.append(Source(m.start, m.end, m.surface, g, -1, m.name, surname=m.surname, race=m.info.race))
                extra = True
        if extra:
            found.sort(key=lambda s: s.start)
    return found


def mentioned_groups(found: Sequence[Source], lexicon: Lexicon) -> list[str]:
    """Detectable groups mentioned, in order of first mention."""
    out: list[str] = []
    for s in found:
        if s.group not in out and s.group not in lexicon.target_only:
            out.append(s.group)
    return out
