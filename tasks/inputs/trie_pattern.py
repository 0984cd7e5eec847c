"""One regular expression for many terms, built as a character trie: equivalent to an alternation
sorted longest first, and much faster for Python's ``re``. The lexicons compile their terms with it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

SEPARATOR = r"[\s-]+"  # what a space inside a multi-word term matches


def build_pattern(
    terms: Iterable[str], stop_after: Mapping[str, Iterable[str]] | None = None, *, lowered: bool = False
) -> re.Pattern[str]:
    """Compile ``terms`` into one case-insensitive, word-bounded regex built as a character trie.

    At every trie node longer continuations are tried before the term ending there, so the
    leftmost-longest term matches, as with an alternation sorted longest first.

    ``lowered``: the same matches in text that is already lower-case ASCII (lower-case ASCII terms,
    each starting with a letter or digit): case-sensitive, and the word boundary before a term is
    checked just after its first character (a look-behind), so the pattern opens with the literal
    first characters and the regex engine skips every position that cannot start a term (about 2x
    faster on answers than testing a boundary at each position).
    """
    stop_after = stop_after or {}
    trie: dict[str, Any] = {}
    for term in terms:
        node = trie
        for ch in term:
            node = node.setdefault(ch, {})
        node[""] = term

    def emit(node: dict[str, Any], first: str = "") -> str:
        alts = [
            (SEPARATOR if ch == " " else re.escape(ch)) + first + emit(child)
            for ch, child in sorted((k, v) for k, v in node.items() if k)
        ]
        if "" in node:
            stops = stop_after.get(node[""])
            words = "|".join(re.escape(w) for w in sorted(stops or (), key=lambda w: (-len(w), w)))
            alts.append(rf"(?!{SEPARATOR}(?:{words})\b)" if words else "")
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    if not trie:
        return re.compile(r"(?!x)x")  # matches nothing
    if lowered:
        return re.compile(emit(trie, first=r"(?<!\w.)") + r"\b")
    return re.compile(r"\b" + emit(trie) + r"\b", re.IGNORECASE)
