"""Attribute mentions in a text: lexicon terms of a group and first names, left to right, shared by
counterfactual expansion and variant validation."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from equilens.tasks.inputs.ftu import find_mentions
from equilens.tasks.inputs.lexicon import Lexicon, canonical
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
    joined: bool = False  # a name that tells no group, given the one group of the names beside it

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
        unread = []  # names of people whose race the name does not tell ("Williams", "Tony")
        for m in names.find(text, loose=loose_names):
            if any(s < m.end and m.start < e for s, e in taken):
                continue
            g = m.group(lexicon.attribute)
            if g is None and lexicon.attribute == "race" and m.name and m.info.leaning() in ("male", "female"):
                unread.append(m)
            either = lexicon.attribute == "gender" and g in lexicon.target_only and bool(m.name)
            if either:  # "Sam": a name of either sex
                unread.append(m)
            if g is None or g not in lexicon.groups or (g in lexicon.target_only and (not include_targets or either)):
                continue
            found.append(Source(m.start, m.end, m.surface, g, -1, m.name, surname=m.surname, race=m.info.race))
            extra = True
        read = {s.group for s in found if s.is_name}
        if unread and len(read) == 1:  # "Susan and Williams": beside people of one race, theirs, so a
            group = next(iter(read))  # variant changes everyone ("Kiara and Darnell", not "Kiara and Williams");
            # "Sam Zhang and Imani Mosley": beside people of one gender, theirs ("Malik and Wei", never "Malik and Sam")
            found += [Source(m.start, m.end, m.surface, group, -1, m.name, surname=m.surname,
                             joined=lexicon.attribute == "gender")
                      for m in unread]
            extra = True
        elif include_targets:
            found += [Source(m.start, m.end, m.surface, m.group(lexicon.attribute) or "", -1, m.name, surname=m.surname)
                      for m in unread if m.group(lexicon.attribute) in lexicon.target_only]
            extra = True
        if extra:
            found.sort(key=lambda s: s.start)
    return found


KEPT = "~kept"
"""Appended to the group of a mention that keeps its place in every variant (:func:`related_kept`)."""
SENTENCE_END = re.compile(r"[.!?]+[\"'”’)]*\s+")
"""The end of a sentence, with its closing quote or bracket and the space after it."""


def related_kept(found: Sequence[Source], lexicon: Lexicon) -> list[Source]:
    """``found`` with the mentions of a group's second word marked to stay, where the context names
    one group with different words for different people, one an origin (an alias): "a Black woman
    and an African woman", "an Asian man and a Chinese man", "the Chinese man and the Korean man" are
    two people of related groups, and swapping both words would give them one description ("a White
    woman and a White woman"). The group's general term moves (else its first-mentioned word), every
    mention of that same word with it; the other words stay, as a source-only group does. Race
    expansion leaves such a context out, with the reason, since the variant would change only one of
    the two people."""
    aliases = dict(lexicon.aliases)
    words: dict[str, list[str]] = {}
    for s in found:
        if s.row >= 0 and canonical(s.surface) not in words.setdefault(s.group, []):
            words[s.group].append(canonical(s.surface))
    mover: dict[str, str] = {}
    for group, seen in words.items():
        if len(seen) > 1 and any(w in aliases for w in seen):
            mover[group] = next((w for w in seen if w not in aliases), seen[0])
    if not mover:
        return list(found)
    return [replace(s, group=s.group + KEPT) if s.row >= 0 and s.group in mover
            and canonical(s.surface) != mover[s.group] and _origin_word(canonical(s.surface), mover[s.group], aliases)
            else s for s in found]


def _origin_word(word: str, mover: str, aliases: dict[str, str]) -> bool:
    """Is ``word`` another people's word than ``mover`` (not its plural or its alias's term)?"""
    return word in aliases or mover in aliases


def mentioned_groups(found: Sequence[Source], lexicon: Lexicon) -> list[str]:
    """Detectable groups mentioned, in order of first mention."""
    out: list[str] = []
    for s in found:
        if s.group not in out and s.group not in lexicon.target_only:
            out.append(s.group)
    return out


def words_used(found: Sequence[Source]) -> dict[tuple[str, bool], str]:
    """(group, plural) -> the word the text itself uses for that group's people, first mention first,
    with the capitals the text gives its words: in a swap each person takes the other's own word ("an
    Italian man and a Korean man" -> "a Korean man and an Italian man", not "an Asian man and a White
    man"; "my Sri Lankan friend" -> "my Ethiopian friend" and back, never "Sri lankan")."""
    out: dict[tuple[str, bool], str] = {}
    for s in found:
        if not s.is_name and s.row >= 0 and not s.group.endswith(KEPT):
            words = canonical(s.surface).split(" ")
            said = re.split(r"[\s-]+", s.surface.strip())
            if len(said) == len(words):  # each word after the first as the text writes it (the first is
                # cased by where it goes: "Black people" opening a sentence)
                words[1:] = [w if w.lower() == t else t for w, t in zip(said[1:], words[1:], strict=True)]
            term = " ".join(words)
            out.setdefault((s.group, plural_term(term.lower())), term)
    return out


def plural_term(term: str) -> bool:
    """Is the attribute term ``term`` plural ("women", "Asians", "Black people", "Latinos"; not "his",
    "Mrs", "boss")?"""
    last = term.split()[-1]
    return last in ("people", "folks") or last.endswith("men") or (
        last.endswith("s") and not last.endswith(("ss", "us")) and last not in ("his", "hers", "mrs", "ms"))
