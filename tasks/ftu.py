"""Fairness through unawareness (FTU): do prompts mention a protected attribute at all?

Matching is case-insensitive at word boundaries, one compiled regex per lexicon (see
:mod:`tasks.lexicon`), so "her" never matches inside "there" and "white" not inside "whiteboard".
Known limits: a colour word is a race mention unless the next word is in the lexicon's
``stop_after`` list ("white wine", "Black Friday" are excluded; "the white car" is not); names
that are also places ("Jordan" is a target-only neutral name, so it is never detected) or
surnames ("Stephen King" counts "king") are not told apart.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from tasks.errors import ConfigError, InputDataError
from tasks.lexicon import Lexicon, canonical


@dataclass(frozen=True, slots=True)
class Mention:
    """One attribute term found in a text: ``text[start:end] == surface``."""

    start: int
    end: int
    surface: str
    term: str  # canonical lowercase form
    group: str
    row: int  # the row used for swapping, chosen with :func:`resolve_row`


def find_mentions(text: str, lexicon: Lexicon, *, include_targets: bool = False) -> list[Mention]:
    """Attribute mentions in ``text``, left to right (longest match first at each position).

    Target-only groups (e.g. neutral gender words) are skipped unless ``include_targets``.
    """
    pattern = lexicon.any_pattern if include_targets else lexicon.detect_pattern
    index = lexicon.index
    out = []
    for m in pattern.finditer(text):
        term = canonical(m.group())
        info = index[term]
        out.append(Mention(m.start(), m.end(), m.group(), term, info.group,
                           resolve_row(lexicon, term, text, m.end())))
    return out


# --- pronoun roles ------------------------------------------------------------------------------
# Words that, right after "her"/"his", show the pronoun is NOT a determiner: prepositions,
# particles, articles and other determiners, pronouns, conjunctions, auxiliaries, common adverbs.
_NOT_NOUN_PHRASE = frozenset("""
    about above across after against along among around at before behind below beneath beside
    between beyond by down during except for from in inside into like near of off on onto out
    outside over past since through throughout till to toward towards under until up upon with
    within without away back
    a an the this that these those my your his her its our their some any no every each all both
    either neither much many more most few several such what which whose
    i me you he him she it we us they them myself yourself himself herself itself ourselves
    themselves who whom
    and or but nor so yet because although though if unless while when whenever where as than then
    is am are was were be been being has have had do does did will would shall should can could may
    might must not never again too also very really just still already now today tonight tomorrow
    yesterday here there once twice ever even soon later always often sometimes please
""".split())
# Words ending in -ly that are nouns or adjectives, so "her family" stays a determiner use.
_LY_NOUN_PHRASE = frozenset("family only lovely early friendly elderly daily weekly monthly yearly "
                            "ugly holy belly bully jelly lily silly curly likely lonely costly".split())
_NEXT_WORD = re.compile(r"[ \t]*([^\W_][\w']*)")


def resolve_row(lexicon: Lexicon, term: str, text: str, end: int) -> int:
    """The row of ``term`` to swap with, using the next word for words listed in several rows.

    Heuristic for words whose rows carry roles ("her": object or determiner; "his": determiner
    or standalone): the word is a *determiner* when the next token on the same line is a word
    that looks like the start of a noun phrase, i.e. it is not in a closed list of prepositions,
    particles, determiners, pronouns, conjunctions, auxiliaries and common adverbs, and it is not
    an -ly adverb ("her family" and "her lovely" still count as noun phrases). Otherwise (end of
    text, punctuation, or such a function word) it takes the row of the other role. So
    "her book" -> determiner, "I saw her." / "I gave her the book" -> object, "the book is his."
    -> standalone. Limits: a bare noun object of a two-object verb ("I gave her flowers") reads as
    a determiner ("his flowers"); a capitalised name after "her" is treated the same way.
    Words without roles use their first row.
    """
    rows = lexicon.index[term].rows
    if len(rows) == 1 or not lexicon.roles:
        return rows[0]
    m = _NEXT_WORD.match(text, end)
    word = m.group(1).lower() if m else ""
    is_det = bool(word) and word not in _NOT_NOUN_PHRASE and not (
        word.endswith("ly") and word not in _LY_NOUN_PHRASE
    )
    for r in rows:
        if (lexicon.roles[r] == "determiner") == is_det:
            return r
    return rows[0]


# --- FTU check ----------------------------------------------------------------------------------
@dataclass
class FTUResult:
    """Outcome of :func:`check_ftu`: which attribute terms every prompt mentions."""

    per_prompt: list[dict[str, list[str]]]
    counts: dict[str, int]
    prompts_total: int
    examples: dict[str, list[str]] = field(default_factory=dict)  # attribute -> most frequent terms

    @property
    def holds(self) -> bool:
        """True iff no prompt mentions any attribute."""
        return not any(self.counts.values())

    def summary(self) -> str:
        n = self.prompts_total
        parts = []
        for i, (attr, c) in enumerate(self.counts.items()):
            what = "names" if attr == "name" else f"{attr} words"
            parts.append(f"{what} found in {c} of {n} prompts" if i == 0 else f"{what} in {c} of {n} prompts")
        verdict = "FTU is satisfied." if self.holds else "FTU is not satisfied."
        return "; ".join(parts) + ("; " if parts else "") + verdict


def check_ftu(prompts: Sequence[str], lexicons: Sequence[Lexicon]) -> FTUResult:
    """Which protected-attribute terms each prompt mentions, per attribute (sorted, unique)."""
    attrs = [lex.attribute for lex in lexicons]
    if len(set(attrs)) != len(attrs):
        raise ConfigError(f"check_ftu: each attribute may be given once, got {attrs}.")
    scanners = [(lex.attribute, lex.detect_pattern.findall, {}) for lex in lexicons]
    counts = dict.fromkeys(attrs, 0)
    freq: dict[str, dict[str, int]] = {a: {} for a in attrs}
    per_prompt: list[dict[str, list[str]]] = []
    for i, text in enumerate(prompts):
        if not isinstance(text, str):
            raise InputDataError(f"check_ftu: prompt {i} is {type(text).__name__}, not text.")
        found: dict[str, list[str]] = {}
        for attr, findall, cache in scanners:
            hits = findall(text)
            if hits:
                terms = set()
                for s in hits:
                    t = cache.get(s)
                    if t is None:
                        t = cache[s] = canonical(s)
                    terms.add(t)
                found[attr] = sorted(terms)
                counts[attr] += 1
                f = freq[attr]
                for t in terms:
                    f[t] = f.get(t, 0) + 1
        per_prompt.append(found)
    examples = {a: sorted(f, key=lambda t: (-f[t], t))[:5] for a, f in freq.items() if f}
    return FTUResult(per_prompt=per_prompt, counts=counts, prompts_total=len(per_prompt), examples=examples)
