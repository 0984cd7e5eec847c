"""nltk's Treebank word tokenizer with the substitutions that cannot match skipped.

The tokenizer runs ~33 regular-expression substitutions in a fixed order over every sentence, and on
ordinary prose most of them find nothing: each still costs a scan of the sentence. Most patterns
cannot match unless the text holds one of a few punctuation characters (a quote, a bracket, a
colon), so :class:`QuickTreebank` works out that set for each pattern from the pattern itself
(:func:`needed_chars`) and skips the substitution when the sentence holds none of them. The
contraction patterns ("cannot", "gonna", "'tis") need letters, so they are checked together: one
search for any of them, and only on a hit are they applied one by one.

Skipping is exact: a substitution that finds no match returns its input unchanged, so the tokens
are nltk's. The characters are derived from the parsed pattern, never typed here, so a pattern a
later nltk changes is analysed afresh, and one the analysis cannot bound always runs
(``tests/test_scoring_backend.py`` holds the tokens to nltk's on real and adversarial text).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

# the regular-expression parser's own modules, which have no public types (re._parser: Python 3.11+)
try:
    _c: Any = importlib.import_module("re._constants")
    _sre: Any = importlib.import_module("re._parser")
except ImportError:  # pragma: no cover - older Pythons
    _c = importlib.import_module("sre_constants")
    _sre = importlib.import_module("sre_parse")

_Steps = list[tuple[re.Pattern[str], str]]


class Treebank(Protocol):
    """What :class:`QuickTreebank` reads of nltk's ``NLTKWordTokenizer``: its compiled substitutions."""

    STARTING_QUOTES: _Steps
    PUNCTUATION: _Steps
    PARENS_BRACKETS: tuple[re.Pattern[str], str]
    DOUBLE_DASHES: tuple[re.Pattern[str], str]
    ENDING_QUOTES: _Steps
    CONTRACTIONS2: list[re.Pattern[str]]
    CONTRACTIONS3: list[re.Pattern[str]]

_REPEATS = tuple(getattr(_c, n) for n in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") if hasattr(_c, n))
_WIDEST_RANGE = 256


def _caseless(ch: str) -> bool:
    return not ch.isalnum() and ch.lower() == ch == ch.upper()


def _of_sequence(items: Iterable[Any]) -> frozenset[str] | None:
    """The best set one of whose characters every match of the sequence holds: among its items'
    sets, one without whitespace (which every padded sentence holds), then without letters or
    digits (common in any text), then the smallest."""
    sets = [s for s in (_of_item(op, av) for op, av in items) if s is not None]
    return min(sets, key=lambda s: (any(ch.isspace() for ch in s), any(ch.isalnum() for ch in s), len(s)),
               default=None)


def _of_item(op: Any, av: Any) -> frozenset[str] | None:  # one case per opcode; the parser is untyped
    if op is _c.LITERAL:
        return frozenset(chr(av))
    if op is _c.IN:
        chars: set[str] = set()
        for kind, value in av:
            if kind is _c.LITERAL:
                chars.add(chr(value))
            elif kind is _c.RANGE and value[1] - value[0] < _WIDEST_RANGE:
                chars.update(map(chr, range(value[0], value[1] + 1)))
            else:  # a negated set, a category (\w, \s), a wide range: no small set bounds it
                return None
        return frozenset(chars)
    if op is _c.SUBPATTERN:
        return _of_sequence(av[-1])
    if op is getattr(_c, "ATOMIC_GROUP", None):
        return _of_sequence(av)
    if op in _REPEATS:
        return _of_sequence(av[2]) if av[0] >= 1 else None
    if op is _c.BRANCH:
        sets = [_of_sequence(branch) for branch in av[1]]
        known = [s for s in sets if s is not None]
        return frozenset().union(*known) if len(known) == len(sets) else None
    return None  # anchors, lookarounds, backreferences: they hold no character of the match


def needed_chars(pattern: re.Pattern) -> frozenset[str] | None:
    """Characters one of which is in every text ``pattern`` can match, or None when no such set
    can be told from the pattern. Under IGNORECASE only sets of characters without case count (a
    letter may match other letters)."""
    parsed = _sre.parse(pattern.pattern, pattern.flags)
    found = _of_sequence(parsed.data if hasattr(parsed, "data") else parsed)
    if found is not None and (parsed.state.flags & re.IGNORECASE) and not all(map(_caseless, found)):
        return None
    return found


def needed_literal(pattern: re.Pattern) -> str | None:
    """A run of literal characters every match of ``pattern`` holds (the longest, lower-cased), or
    None when it holds none (any item other than a literal or a group of literals, zero-width
    anchors aside, ends a run)."""
    runs, run = [], ""
    for op, av in _sre.parse(pattern.pattern, pattern.flags).data:
        if op is _c.LITERAL:
            run += chr(av)
        elif op is _c.SUBPATTERN and all(o is _c.LITERAL for o, _ in av[-1]):
            run += "".join(chr(v) for _, v in av[-1])
        else:  # anything else, a zero-width anchor too, ends the run
            runs.append(run)
            run = ""
    longest = max([*runs, run], key=len)
    return longest.lower() if longest else None


def _any_of(patterns: Sequence[re.Pattern]) -> re.Pattern | None:
    """One pattern that matches wherever any of ``patterns`` would (each kept with its own inline
    flags), or None when they cannot be joined."""
    parts = []
    for p in patterns:
        source = p.pattern
        flags = re.match(r"\(\?([aiLmsux]+)\)", source)
        parts.append(f"(?{flags.group(1)}:{source[flags.end():]})" if flags else f"(?:{source})")
    try:
        return re.compile("|".join(parts))
    except re.error:
        return None


class QuickTreebank:
    """nltk's ``NLTKWordTokenizer.tokenize`` (Treebank conventions, parentheses not converted) for
    a tokenizer whose patterns are already compiled, with substitutions that cannot match skipped."""

    def __init__(self, treebank: Treebank) -> None:
        def steps(pairs: Iterable[tuple[re.Pattern, str]]) -> list[tuple[re.Pattern, str, frozenset[str] | None]]:
            return [(p, repl, needed_chars(p)) for p, repl in pairs]

        self.head = steps([*treebank.STARTING_QUOTES, *treebank.PUNCTUATION, treebank.PARENS_BRACKETS,
                           treebank.DOUBLE_DASHES])
        self.tail = steps(treebank.ENDING_QUOTES)
        self.contractions = [(p, r" \1 \2 ") for p in [*treebank.CONTRACTIONS2, *treebank.CONTRACTIONS3]]
        self.any_contraction = _any_of([p for p, _ in self.contractions])
        # on ASCII text re's IGNORECASE equates only upper and lower case, so a contraction can only
        # match a lower-cased text holding its literal ("cannot"); other text takes the joined search
        found = [needed_literal(p) for p, _ in self.contractions]
        literals = [lit for lit in found if lit is not None]
        self.literals = literals if len(literals) == len(found) and all(lit.isascii() for lit in literals) else None

    @staticmethod
    def _run(text: str, chars: set[str], steps: list) -> tuple[str, set[str]]:
        for pattern, repl, needs in steps:
            if needs is not None and chars.isdisjoint(needs):
                continue
            new = pattern.sub(repl, text)
            if new != text:  # a replacement may bring characters a later pattern needs (" -> ``)
                text, chars = new, set(new)
        return text, chars

    def tokenize(self, text: str) -> list[str]:
        text, chars = self._run(text, set(text), self.head)
        text, _ = self._run(f" {text} ", chars | {" "}, self.tail)
        if self._may_contract(text):
            for pattern, repl in self.contractions:
                text = pattern.sub(repl, text)
        return text.split()

    def _may_contract(self, text: str) -> bool:
        if self.literals is not None and text.isascii():
            low = text.lower()
            return any(lit in low for lit in self.literals)
        return self.any_contraction is None or self.any_contraction.search(text) is not None
