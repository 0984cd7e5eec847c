"""What the words around a capitalised word say about whether it is someone's first name: a
common word opening a sentence reads as a name before a verb ("Grace said"), a place-or-month name
reads as a person after "named", before a verb only a person does, before a possessive and a
relation, or joined to another first name; no word after a capitalised colour ("the Black Forest")
and no sentence's first word before a pronoun ("Tell him") is a name. Used by
:class:`equilens.tasks.inputs.names.NameTable`."""

from __future__ import annotations

import re

_SENTENCE_START = re.compile(r"(?:^|[.!?:;\"“(]\s*|\n\s*)$")
# A place name right after one of these is the place ("a nurse in Dallas asked"), even in loose mode.
AFTER_PLACE_PREPOSITION = re.compile(
    r"\b(?:in|from|to|near|at|around|outside|across|through|into|of|via|toward|towards)\s$", re.IGNORECASE)
# A capitalised word after these is an employer or a shop, not a person ("driving for Uber", "works at Target").
EMPLOYER_BEFORE = re.compile(r"\b(?:works?|worked|working|job|jobs|shifts?|gigs?|driv(?:e|es|ing|er|ers)|deliver(?:s|ed|ing)?|"
                             r"shop(?:s|ped|ping)?|interned|interning|employed)\s+(?:for|at)\s$", re.IGNORECASE)
NEXT = re.compile(r"(['’]s\b|,)|\s+([a-z]+(?:n't)?)\b")
# After a sentence-initial word that is also common English, these make it read as a name.
NAME_FOLLOWERS = frozenset("""
    said says asked asks told tells was is has had wanted wants went goes thought thinks felt feels
    knew knows made makes took takes got gets came comes saw sees loved loves liked likes decided
    tried tries found finds gave gives needed needs could would should will can did does didn't
    doesn't wasn't isn't hasn't hadn't couldn't wouldn't won't and or never always also just really
    then still often lived lives worked works became becomes ran runs walked walks looked looks
    called calls left leaves started starts kept keeps let lets heard hears believed believes
    began begins brought bought sang spoke wrote drove ate drank sat stood won lost swam threw woke
    wore fell fought taught caught sold held met paid sent spent built hit put read led fled slept
    wept grew drew flew forgot forgave hid rode rose shook stole struck swore tore understood
""".split())
# A place-or-month name joined to a first name ("Sharon and Edward", "Edward, Sharon and Ann").
JOINED_AFTER = re.compile(r"\s*(?:,\s*|\s+(?:and|or|&)\s+)([A-Z][a-z]+)\b")
# "Brian and Sharon", "Brian, who is trans, and Sharon": joined to a name, past a short who-clause
JOINED_BEFORE = re.compile(r"\b([A-Z][a-z]+)(?:,\s+who\s[^,]{1,40},)?(?:\s*,\s*|\s+(?:and|or|&)\s+)$")
NAMED_BEFORE = re.compile(r"\b(?:named|called|nicknamed)\s$")
# After a place-or-month name and its possessive, these make it a person ("Georgia's husband").
RELATIONS = frozenset("""
    husband wife spouse partner boyfriend girlfriend fiance fiancee mother father mom dad mum parents
    son daughter sons daughters kids children child baby brother sister siblings cousin aunt uncle
    grandmother grandfather friend friends boss coworker colleague roommate classmate teacher
""".split())
# Verbs that only a person does: after one of them even a place name reads as a first name
# ("Austin felt good"); used when validating variants (NameTable.find(..., loose=True)).
_PERSON_VERBS = frozenset("""
    said says felt feels thought thinks told tells asked asks wanted wants knew knows loved loves
    hated hates hoped hopes cried cries smiled smiles laughed laughs wondered wonders decided decides
    realized realised realizes liked likes married marries
""".split())


# A capitalised word after a capitalised colour is a place or a thing ("the Black Forest", "the
# White Mountains", "Black Forest cake"), never someone's first name.
COLOUR_BEFORE = re.compile(r"\b(?:Black|White|Red|Blue|Green|Yellow)\s$")
# Pronouns after which a sentence's first word is a verb ("Tell him", "Ask her", "Mark his words"),
# or a modal ("Will she"), never a first name.
_PRONOUNS = frozenset("him her them me us his their my your our it he she they we you i".split())
# Names that are also words of an attribute's lexicon ("Christian"): read as a person only as the
# subject opening a sentence, with a verb right after ("Christian is applying"), see :func:`subject_name`.
ATTRIBUTE_NAMES = frozenset({"Christian"})


def person_verb(text: str, end: int) -> bool:
    nxt = NEXT.match(text, end)
    return bool(nxt and nxt.group(2) in _PERSON_VERBS)


def subject_name(text: str, start: int, end: int) -> bool:
    """Is the name that is also an attribute word (:data:`ATTRIBUTE_NAMES`) at ``text[start:end]``
    the subject opening a sentence, a verb right after it ("Christian is applying", "Christian
    asked")? Then it is a first name, not the attribute word ("a Christian is", "Christian values")."""
    if text[start:end] not in ATTRIBUTE_NAMES or not _SENTENCE_START.search(text, max(0, start - 4), start):
        return False
    nxt = NEXT.match(text, end)
    word = (nxt.group(2) or "") if nxt else ""
    return word in NAME_FOLLOWERS or (word.endswith("ed") and len(word) > 3)


def reads_as_name(text: str, start: int, end: int, loose: bool = False) -> bool:
    """Does the common word that is also a name at ``text[start:end]`` read as a name? Inside a
    sentence yes; opening one only before a verb-like word, a possessive or a comma ("Bill said",
    "Tom expertly repaired"). ``loose``: anywhere but opening a sentence before a pronoun, where it
    is a verb ("Tell him", "Mark his words")."""
    if not _SENTENCE_START.search(text, max(0, start - 4), start):
        return True
    nxt = NEXT.match(text, end)
    if loose:
        return not (nxt and nxt.group(2) in _PRONOUNS)
    if not nxt:
        return False
    word = nxt.group(2) or ""
    if word.endswith("ly") and len(word) > 4:  # an adverb first: "Tom expertly repaired"
        after = NEXT.match(text, nxt.end())
        word = (after.group(2) or "") if after else ""
    return bool(nxt.group(1)) or word in NAME_FOLLOWERS or (word.endswith("ed") and len(word) > 3)
