"""Attribute neutralisation: every term of a lexicon replaced by a group-independent placeholder, so
BLEU and ROUGE-L of two answers do not count the swapped group words as differences."""

from __future__ import annotations

import re
from collections.abc import Sequence

from equilens.tasks.errors import InputDataError
from equilens.tasks.inputs.lexicon import Lexicon, canonical


def neutralize(texts: Sequence[str], lexicon: Lexicon) -> list[str]:
    """Replace every term of ``lexicon`` (all groups) by a group-independent placeholder.

    Counterparts share a placeholder ("he"/"she"/"they" -> "gender1"), so a BLEU or ROUGE-L score
    of two responses no longer counts the swapped words as differences. One regex pass per text:
    on its lower-cased copy when the text and the lexicon are ASCII (:attr:`Lexicon.lowered_pattern`,
    the same matches found faster), the text's own letters kept outside the terms. Agreement words
    ("is" vs "are") are left as they are.
    """
    if isinstance(texts, str):
        raise InputDataError("neutralize: pass a list of texts, not one string.")
    holders = lexicon.placeholders
    sub = lexicon.any_pattern.sub
    lowered = lexicon.lowered_pattern
    seen: dict[str, str] = {}

    def holder(surface: str) -> str:
        found = seen.get(surface)
        if found is None:
            found = seen[surface] = holders[canonical(surface)]
        return found

    def repl(m: re.Match[str]) -> str:
        return holder(m.group())

    def one(text: str) -> str:
        if lowered is None or not text.isascii():
            return sub(repl, text)
        parts, last = [], 0
        for m in lowered.finditer(text.lower()):  # ASCII: the lower-cased copy keeps every position
            start, end = m.span()
            parts += (text[last:start], holder(m.group()))
            last = end
        return "".join(parts) + text[last:] if parts else text

    return [one(t) for t in texts]
