"""Origins a race variant cannot change: a person described by a national or ethnic origin the race
lexicon does not read ("a Brazilian man", "one is Afghan"), which leaves a context out of race
expansion, and whether a people word describes a person at all ("an Indian student", not "a French
class")."""

from __future__ import annotations

import re
from collections.abc import Sequence

from equilens.tasks.inputs.mentions import Source
from equilens.tasks.inputs.word_lists import NATIONAL_ORIGINS, PERSON_NOUNS

__all__ = ["describes_person", "unread_origins"]

_CAPITALISED = re.compile(r"\b[A-Z][a-z]+\b")
_SUBJECTS = frozenset("teacher teachers class classes language languages food restaurant major professor tutor".split())
"""What an origin word names when it is no one's origin ("an English teacher", "a French class")."""


def describes_person(text: str, end: int) -> bool:
    """Does the people word ending at ``end`` describe a person ("an Indian student", "my Moldovan
    friend"): a person noun right after it, or after one adjective? Not a subject taught ("a French
    class")."""
    after = re.findall(r"[a-z-]+", text[end:end + 30].split(".")[0])[:2]  # the noun, or one adjective then it
    return bool(after) and after[0] not in _SUBJECTS and any(
        w in PERSON_NOUNS or w in ("one", "ones", "guy", "guys", "pal", "pals") for w in after)


def unread_origins(text: str, found: Sequence[Source]) -> list[str]:
    """Problems for the people a race variant cannot change: someone described by a national or ethnic
    origin (``national_origins.txt``) that the race mentions ``found`` do not cover ("a Brazilian
    man", "one is Afghan", "the Roma family"). A variant would change the person the lexicon reads
    ("Somali" is Black by the federal standard's examples) and leave this one as they are, so the two
    people compared would no longer differ by the group alone; the context is left out of race
    expansion with the reason (counted as lost, never guessed)."""
    out: list[str] = []
    for m in _CAPITALISED.finditer(text):
        two = re.match(r"[- ][A-Z][a-z]+\b", text[m.end():])
        pair = [(text[m.start():m.end() + two.end()], m.end() + two.end())] if two else []
        for word, end in [*pair, (m.group(), m.end())]:  # "Sri Lankan", then "Roma"
            key = word.lower().replace(" ", "-")
            plural = key.endswith("s") and key[:-1] in NATIONAL_ORIGINS
            if key not in NATIONAL_ORIGINS and not plural:
                continue
            if any(s.start < end and m.start() < s.end for s in found):
                break  # the lexicon reads it: it changes with the rest
            person = describes_person(text, end)
            said = re.search(r"\b(?:is|are|was|were)\s+$", text[max(0, m.start() - 8):m.start()]) is not None
            if person or said or plural:
                out.append(f"{word!r} is an origin the race lexicon does not read, so a race variant would "
                           "change the other people compared and leave this one as they are")
            break
    return list(dict.fromkeys(out))
