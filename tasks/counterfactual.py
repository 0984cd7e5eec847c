"""Counterfactual prompt expansion, attribute neutralisation and variant validation.

A prompt that mentions an attribute (e.g. "He is a nurse") becomes one variant per group of the
lexicon ("He is a nurse", "She is a nurse", "They are a nurse"): every mention is replaced by the
term of the same lexicon row for the target group. Beyond a plain word swap:

* case is kept ("He" -> "She", "HE" -> "SHE", "African American" -> "Asian American"), and
  hyphenated multi-word terms stay hyphenated ("African-American" -> "Asian-American");
* "her"/"his" pick their row from the next word (:func:`tasks.ftu.resolve_row`);
* an indefinite article before a swapped term follows it ("an actor" -> "a performer");
* a subject pronoun turned into "they" takes plural agreement for the verbs is/was/has/does
  (and their negations, and "'s" -> "'re", or "'ve" before "been"/"got"). Other verbs keep their
  form ("he runs" -> "they runs"): a known limit, flagged by nothing;
* first names (optional ``names`` lexicon) swap to the name in the same row of the target group.

Every variant is checked by :func:`validate_variant`, which tokenises both texts and allows them to
differ only inside attribute terms (plus the article and agreement words linked to them).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from tasks.errors import InputDataError
from tasks.ftu import Mention, find_mentions
from tasks.lexicon import Lexicon, canonical

Swap = tuple[str, str]


@dataclass(frozen=True)
class Variant:
    """One counterfactual variant of a prompt, for one group of one attribute."""

    prompt_id: str
    attribute: str
    group: str
    text: str
    swapped: tuple[Swap, ...]  # (original surface, replacement) per replaced attribute term
    problems: tuple[str, ...] = ()  # from validate_variant; empty when the variant is valid


# --- expansion ----------------------------------------------------------------------------------
_ARTICLE_BEFORE = re.compile(r"(?<![\w'])(an?)(\s+)$", re.IGNORECASE)
_AGREEMENT = {"is": "are", "was": "were", "has": "have", "does": "do",
              "isn't": "aren't", "wasn't": "weren't", "hasn't": "haven't", "doesn't": "don't"}
_VERB_AFTER = re.compile(
    r"(\s+)(is|was|has|does|isn't|wasn't|hasn't|doesn't)\b|(['’])s\b(\s+(?:been|got)\b)?", re.IGNORECASE
)
_PLURAL_SUBJECTS = frozenset({"they"})


def _sources(text: str, lexicon: Lexicon, names: Lexicon | None) -> list[tuple[Mention, Lexicon]]:
    """Detected mentions of ``lexicon`` plus names of its groups, left to right, no overlaps."""
    found = [(m, lexicon) for m in find_mentions(text, lexicon)]
    if names is not None:
        taken = [(m.start, m.end) for m, _ in found]
        for m in find_mentions(text, names):
            if m.group in lexicon.groups and not any(s < m.end and m.start < e for s, e in taken):
                found.append((m, names))
        found.sort(key=lambda p: p[0].start)
    return found


def _render(surface: str, term: str) -> str:
    """``term`` written in the case and separator style of ``surface``."""
    words = term.split(" ")
    sep = "-" if "-" in surface else " "
    letters = [c for c in surface if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return sep.join(words).upper()
    parts = [w for w in re.split(r"[\s-]+", surface) if w]
    if all(p[:1].isupper() for p in parts):  # "He", "African American": capitalise every word
        return sep.join(w[:1].upper() + w[1:] for w in words)
    if parts[0][:1].isupper():  # "White people": only the first word
        return sep.join([words[0][:1].upper() + words[0][1:], *words[1:]])
    return sep.join(words)


def _vowel_sound(term: str) -> bool:
    """Does ``term`` take "an"? (vowel letter, with the usual exceptions)."""
    w = term.lower()
    if w.startswith(("eu", "uni", "use", "usu", "one", "once")):
        return False
    return w[:1] in "aeiou" or w.startswith(("honest", "honor", "honour", "hour", "heir"))


def _like(model: str, word: str) -> str:
    if model.isupper() and len(model) > 1:
        return word.upper()
    return word[:1].upper() + word[1:] if model[:1].isupper() else word


def _variant(text: str, sources: list[tuple[Mention, Lexicon]], group: str) -> tuple[str, tuple[Swap, ...]]:
    pieces: list[str] = []
    swapped: list[Swap] = []
    pos = 0
    for m, lex in sources:
        if m.start < pos:  # inside an agreement word already rewritten (cannot happen for real words)
            continue
        term = lex.cell(m.row, group)
        new = _render(m.surface, term) if term else m.surface
        if new == m.surface:
            continue
        gap = text[pos:m.start]
        art = _ARTICLE_BEFORE.search(text, max(pos, m.start - 12), m.start)
        if art:
            want = "an" if _vowel_sound(term) else "a"
            if art.group(1).lower() != want:
                cut = art.start(1) - pos
                gap = gap[:cut] + _like(art.group(1), want) + gap[cut + len(art.group(1)):]
        pieces += [gap, new]
        swapped.append((m.surface, new))
        pos = m.end
        if lex.role(m.row) == "subject" and term in _PLURAL_SUBJECTS and m.term not in _PLURAL_SUBJECTS:
            verb = _VERB_AFTER.match(text, m.end)
            if verb and verb.group(2):
                pieces += [verb.group(1), _like(verb.group(2), _AGREEMENT[verb.group(2).lower()])]
                pos = verb.end()
            elif verb:
                pieces.append(verb.group(3) + ("ve" if verb.group(4) else "re") + (verb.group(4) or ""))
                pos = verb.end()
    pieces.append(text[pos:])
    return "".join(pieces), tuple(swapped)


def expand_prompt(text: str, lexicon: Lexicon, names: Lexicon | None = None) -> dict[str, str]:
    """Group -> variant text, for every group of ``lexicon``; {} when ``text`` mentions none.

    The variant of a group the prompt already mentions equals the prompt, except that mentions of
    other groups are mapped too ("He met her" -> male: "He met him", female: "She met her").
    """
    sources = _sources(text, lexicon, names)
    if not sources:
        return {}
    return {g: _variant(text, sources, g)[0] for g in lexicon.groups}


def expand_prompts(
    prompts: Sequence[tuple[str, str]], lexicon: Lexicon, names: Lexicon | None = None
) -> list[Variant]:
    """Validated variants (one per group) of every ``(prompt_id, text)`` mentioning the attribute.

    Invalid variants are returned too, with ``problems`` filled; nothing is raised for them.
    """
    out: list[Variant] = []
    seen: set[str] = set()
    for i, item in enumerate(prompts):
        if not (isinstance(item, tuple | list) and len(item) == 2 and isinstance(item[1], str)):
            raise InputDataError(
                f"expand_prompts: item {i} must be a (prompt_id, text) pair, got {item!r:.80}."
            )
        pid, text = str(item[0]), item[1]
        if pid in seen:
            raise InputDataError(f"expand_prompts: prompt id {pid!r} occurs twice; ids must be unique.")
        seen.add(pid)
        sources = _sources(text, lexicon, names)
        if not sources:
            continue
        skeleton = _skeleton(text, lexicon, names)
        for g in lexicon.groups:
            vtext, swapped = _variant(text, sources, g)
            problems = _compare(skeleton, _skeleton(vtext, lexicon, names))
            problems += _leftovers(vtext, lexicon, names, g)
            out.append(Variant(pid, lexicon.attribute, g, vtext, swapped, tuple(problems)))
    return out


# --- neutralisation -----------------------------------------------------------------------------
def neutralize(texts: Sequence[str], lexicon: Lexicon) -> list[str]:
    """Replace every term of ``lexicon`` (all groups) by a group-independent placeholder.

    Counterparts share a placeholder ("he"/"she"/"they" -> "gender1"), so a BLEU or ROUGE-L score
    of two responses no longer counts the swapped words as differences. One regex pass per text.
    Agreement words ("is" vs "are") are left as they are.
    """
    if isinstance(texts, str):
        raise InputDataError("neutralize: pass a list of texts, not one string.")
    holders = lexicon.placeholders
    sub = lexicon.any_pattern.sub

    def repl(m: re.Match[str]) -> str:
        return holders[canonical(m.group())]

    return [sub(repl, t) for t in texts]


# --- validation ---------------------------------------------------------------------------------
_MARK = "\x00"
_LINKED_AFTER = re.compile(
    r"\s+(?:is|are|was|were|has|have|does|do|isn't|aren't|wasn't|weren't|hasn't|haven't|doesn't|don't)\b"
    r"|['’](?:s|re|ve)\b",
    re.IGNORECASE,
)
_TOKENS = re.compile(r"\w+|\s+|[^\w\s]")


def _skeleton(text: str, lexicon: Lexicon, names: Lexicon | None) -> str:
    """``text`` with every attribute region (term of any group, or name, with the article before
    it and, after a subject pronoun, the agreement word) replaced by one marker character."""
    spans = []
    for lex in (lexicon, names) if names is not None else (lexicon,):
        for m in lex.any_pattern.finditer(text):
            start, end = m.start(), m.end()
            art = _ARTICLE_BEFORE.search(text, max(0, start - 12), start)
            if art:
                start = art.start(1)
            info = lex.index[canonical(m.group())]
            if lex.roles and any(lex.roles[r] == "subject" for r in info.rows):
                verb = _LINKED_AFTER.match(text, end)
                if verb:
                    end = verb.end()
            spans.append((start, end))
    if not spans:
        return text
    spans.sort()
    pieces, pos = [], 0
    for start, end in spans:
        if start < pos:  # overlapping regions merge
            pos = max(pos, end)
            continue
        pieces += [text[pos:start], _MARK]
        pos = end
    pieces.append(text[pos:])
    return "".join(pieces)


def _compare(a: str, b: str) -> list[str]:
    if a == b:
        return []
    ta, tb = _TOKENS.findall(a), _TOKENS.findall(b)
    problems = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        old = "".join(ta[i1:i2]).replace(_MARK, "<attribute term>")
        new = "".join(tb[j1:j2]).replace(_MARK, "<attribute term>")
        if op == "replace":
            problems.append(f"changed {old!r} to {new!r} outside attribute terms")
        elif op == "delete":
            problems.append(f"removed {old!r} outside attribute terms")
        else:
            problems.append(f"added {new!r} outside attribute terms")
    return problems


def _leftovers(variant: str, lexicon: Lexicon, names: Lexicon | None, group: str) -> list[str]:
    """Mentions of other groups left in the variant for ``group``."""
    problems = []
    for m in find_mentions(variant, lexicon):
        if m.group != group:
            problems.append(f"variant for {group!r} still has {m.surface!r} ({m.group})")
    if names is not None:
        for m in find_mentions(variant, names):
            if m.group in lexicon.groups and m.group != group and names.cell(m.row, group):
                problems.append(f"variant for {group!r} still has the name {m.surface!r} ({m.group})")
    return problems


def validate_variant(
    original: str, variant: str, lexicon: Lexicon, names: Lexicon | None = None, *, group: str | None = None
) -> list[str]:
    """Human-readable problems of ``variant`` (empty when valid).

    Both texts are split into words, spaces and punctuation; they may differ only where both have
    an attribute term of ``lexicon`` (any group) or a name, including multi-word terms, the "a"/"an"
    before such a term and the agreement word after a subject pronoun ("he is" / "they are").
    With ``group``, mentions of other groups left in the variant are reported too.
    """
    problems = _compare(_skeleton(original, lexicon, names), _skeleton(variant, lexicon, names))
    if group is not None:
        if group not in lexicon.groups:
            raise InputDataError(f"validate_variant: {group!r} is not a group of {lexicon.attribute}.")
        problems += _leftovers(variant, lexicon, names, group)
    return problems
