"""What expansion does where a word's sense decides the variant (the senses themselves:
:mod:`equilens.tasks.inputs.senses`):

* an adjective that English does not use as a noun for a person ("Jewish", "nonbinary", "white")
  takes "person" where the word it replaces is such a noun: "As a Christian, should I tithe?" ->
  "As a Jewish person, should I tithe?", "I am a white male." -> "I am a white nonbinary person.",
  "As an Asian, ..." -> "As a white person, ...";
* where the rules cannot tell a word's sense, every variant of the attribute is marked invalid
  with the reason (:func:`unclear_senses`), since a wrong variant is worse than a missing one:
  "her" after a giving verb before a noun that may be hers or given to her ("showed her photos":
  "him photos" or "his photos"), and "Christian" where it may be a first name ("I met Christian
  yesterday") or the religion.
"""

from __future__ import annotations

import re

from equilens.tasks.inputs.ftu import noun_phrase_start
from equilens.tasks.inputs.lexicon import Lexicon
from equilens.tasks.inputs.names.context import ATTRIBUTE_NAMES, NAME_FOLLOWERS, subject_name
from equilens.tasks.inputs.senses import GIVEN, GIVING, verb_before
from equilens.tasks.inputs.word_lists import PERSON_NOUNS

ADJECTIVES_ONLY = frozenset({"jewish", "orthodox jewish", "hasidic", "islamic", "secular", "nonbinary", "white", "black",
                             "middle eastern"})
"""Terms written into variants that are adjectives only: as a noun for a person they take "person"
("As an Asian, ..." -> "As a white person, ...": "a white" as a noun for a person reads as a slur)."""

# A determiner and at most one lowercase word before a term: "a Christian", "a devout Christian".
_DETERMINER_BEFORE = re.compile(r"\b(?:a|an|the|every|each|another|any|no|one|this|that)[ \t]+(?:[a-z]+[ \t]+)?$",
                                re.IGNORECASE)
_NEXT = re.compile(r"[ \t]+([A-Za-z][\w'’]*)")


def _noun_use(text: str, start: int, end: int) -> bool:
    """Is the word at ``text[start:end]`` a noun for a person ("a Christian,", "the male said",
    "a devout Christian who"): after a determiner, with no noun after it?"""
    if not _DETERMINER_BEFORE.search(text, max(0, start - 30), start):
        return False
    nxt = _NEXT.match(text, end)
    word = nxt.group(1).lower() if nxt else ""
    return not noun_phrase_start(word) or word in NAME_FOLLOWERS


def noun_form(text: str, start: int, end: int, term: str) -> str:
    """``term``, the replacement of ``text[start:end]``, with "person" after it where it is an
    adjective only (:data:`ADJECTIVES_ONLY`) and the word it replaces is a noun for a person."""
    return f"{term} person" if term in ADJECTIVES_ONLY and _noun_use(text, start, end) else term


# After "her" and a noun, these show that the noun's recipient is someone else: "lent her car to Tom".
_RECIPIENT_AFTER = re.compile(r"[ \t]+[a-z]+[ \t]+(?:to|for)\b")
_HER = re.compile(r"\bher\b", re.IGNORECASE)
# Words before "Christian" that make it the religion: a determiner, "as", a form of *be*, "not".
_RELIGION_BEFORE = re.compile(r"(?:\b(?:a|an|the|as|is|am|are|was|were|be|been|being|become|became|not|devout|"
                              r"practicing|practising|fellow|good|every|each|no|one|another|any)|['’](?:m|re|s))[ \t]+$",
                              re.IGNORECASE)


def _her_unclear(text: str, start: int, end: int) -> str:
    """The noun phrase whose "her" (at ``text[start:end]``) may be an object or a determiner, or "":
    after a giving verb before a bare noun that is neither a thing one gives (:data:`GIVEN`: "lent
    her money" is "him"), nor a person ("tell her mother" is "his"), nor followed by its own
    recipient ("lent her car to Tom" is "his"): "showed her photos", "paid her rent"."""
    verb = verb_before(text, start)
    m = _NEXT.match(text, end)
    if verb not in GIVING or m is None or not m.group(1).islower():
        return ""
    word = m.group(1)
    if not noun_phrase_start(word) or word in GIVEN or word in PERSON_NOUNS or _RECIPIENT_AFTER.match(text, end):
        return ""
    return f"{verb} {text[start:end]} {word}"


def _name_unclear(text: str, start: int, end: int) -> bool:
    """May the capitalised attribute word that is also a name at ``text[start:end]`` ("Christian")
    be either? Not as the subject opening a sentence before a verb (a name:
    :func:`equilens.tasks.inputs.names.context.subject_name`), nor after a determiner, "as" or a
    form of *be*, nor before a noun or an adjective ("a Christian", "I am Christian", "Christian
    values"); elsewhere it may be ("I met Christian yesterday", "my friend Christian")."""
    if subject_name(text, start, end) or _RELIGION_BEFORE.search(text, max(0, start - 20), start):
        return False
    nxt = _NEXT.match(text, end)
    return not (nxt and nxt.group(1).islower() and noun_phrase_start(nxt.group(1)) and nxt.group(1) not in NAME_FOLLOWERS)


def unclear_senses(text: str, lexicon: Lexicon) -> list[str]:
    """Problems for every variant of a prompt mentioning ``lexicon``'s attribute where a word's
    sense decides the variant and the rules cannot tell it (module docstring)."""
    problems = []
    if lexicon.attribute == "gender":
        for m in _HER.finditer(text):
            if said := _her_unclear(text, m.start(), m.end()):
                problems.append(f"whether 'her' in {said!r} is an object ('him') or a possessive ('his') cannot be told")
                break
    if lexicon.attribute in ("gender", "religion"):
        for name in ATTRIBUTE_NAMES:
            for m in re.finditer(rf"\b{name}\b", text):
                if _name_unclear(text, m.start(), m.end()):
                    problems.append(f"{name!r} in {text[max(0, m.start() - 12):m.end() + 12].strip()!r} may be a "
                                    "first name or a religion, which the rules cannot tell")
                    return problems
    return problems
