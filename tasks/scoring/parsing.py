"""Reading structured answers out of free-text LLM responses: labels, top-K lists, multiple choice
(the outcomes of identity prompts are read in :mod:`equilens.tasks.scoring.outcomes`).

Every parser returns ``None`` (or an empty list) when it cannot tell what the model meant; callers
count those as parse failures per group instead of guessing or dropping them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
_ANSWER_MARKER = re.compile(
    r"\b(?:answer|label|decision|classification|category|verdict|prediction|output)\s*(?:is|:|=|-)\s*",
    re.IGNORECASE,
)


def words(text: str) -> list[str]:
    """Lowercase word tokens; punctuation, quotes and markdown never stick to a word."""
    return _WORD.findall(text.lower().replace("’", "'"))


def _find(seq: Sequence[str], sub: Sequence[str]) -> int:
    """Index of the first occurrence of token sequence ``sub`` in ``seq``, or -1."""
    n = len(sub)
    for i in range(len(seq) - n + 1):
        if list(seq[i : i + n]) == list(sub):
            return i
    return -1


def parse_label(text: str | None, labels: Sequence[str], aliases: Mapping[str, Sequence[str]] | None = None) -> str | None:
    """The allowed label a response gives, or ``None`` when it gives none or several.

    Matching ignores case, punctuation, quotes and markdown. In order: the whole response is a
    label (or an alias of one); an explicit marker (``Answer: X``, ``The decision is X``) is
    followed by a label; the response starts with a label (``Yes, because ...``); exactly one
    distinct label occurs anywhere, as whole words (``Sure! After review, I would approve.``).
    Several distinct labels with no marker and no leading label are ambiguous: ``None``.
    """
    if not text or not text.strip():
        return None
    forms: list[tuple[str, list[str]]] = []
    for label in labels:
        for form in [label, *((aliases or {}).get(label, ()))]:
            toks = words(form)
            if toks:
                forms.append((label, toks))
    # longer forms first, so "not approved" wins over "approved" at the same position
    forms.sort(key=lambda f: -len(f[1]))
    toks = words(text)
    if not toks:
        return None
    for label, form in forms:
        if toks == form:
            return label
    for match in _ANSWER_MARKER.finditer(text):
        after = words(text[match.end() :])
        for label, form in forms:
            if after[: len(form)] == form:
                return label
    for label, form in forms:
        if toks[: len(form)] == form:
            return label
    spans = [(label, i, i + len(form)) for label, form in forms
             for i in range(len(toks) - len(form) + 1) if toks[i : i + len(form)] == form]
    # a mention inside a longer mention ("approved" in "not approved") is part of that one
    kept = {label for label, a, b in spans
            if not any(a2 <= a and b <= b2 and (b2 - a2) > (b - a) for _, a2, b2 in spans)}
    return kept.pop() if len(kept) == 1 else None


# --- top-K lists --------------------------------------------------------------------------------
_NUMBERED = re.compile(r"^\s*(?:#\s*)?\(?(\d{1,3})[.):\]]\s+(.+)$")
_BULLET = re.compile(r"^\s*[-*•·‣▪–—+]\s+(.+)$")
_TRAILING = re.compile(r"(?:\s*:\s|\s+[-–—]\s|\s+\(|\s+by\s).*$", re.IGNORECASE)
_INTRO_END = re.compile(r":\s*$")


def normalise_item(item: str) -> str:
    """One list entry as a comparable key: markdown, quotes, a trailing description or
    ``by <artist>`` and parentheses removed, lowercase, single spaces."""
    s = item.strip().replace("**", "").replace("__", "").replace("`", "")
    quoted = re.match(r'^\s*["“”\'‘’]([^"“”]+)["“”\'‘’]', s)
    if quoted:
        s = quoted.group(1)
    else:
        s = _TRAILING.sub("", s)
    s = re.sub(r"\([^)]*\)", " ", s)
    s = re.sub(r"[\"“”‘’.,:;!?*_]+", " ", s.lower())
    return " ".join(s.split())


def parse_ranked_list(text: str | None, k: int) -> list[str]:
    """The first ``k`` distinct, normalised entries of a numbered, bulleted or comma-separated list.

    Numbered lines (``1. X``, ``2) X``) are preferred, then bullet lines, then one entry per
    line after an introductory line, then a comma- or semicolon-separated sentence. Entries are
    normalised with :func:`normalise_item`; duplicates keep their first rank.
    """
    if not text or not text.strip():
        return []
    lines = []
    for ln in text.splitlines():
        if _NUMBERED.match(ln):  # "1. A 2. B 3. C" on one line: one entry per number
            lines += re.split(r"\s+(?=\d{1,3}[.)]\s)", ln.strip())
        elif ln.strip():
            lines.append(ln)
    numbered = [m.group(2) for m in map(_NUMBERED.match, lines) if m]
    bullets = [m.group(1) for m in map(_BULLET.match, lines) if m]
    if len(numbered) >= 2 or (numbered and not bullets):
        raw = numbered
    elif bullets:
        raw = bullets
    elif len(lines) >= 3:
        raw = [ln for ln in lines if not _INTRO_END.search(ln)]
    else:
        body = lines[-1] if len(lines) > 1 and _INTRO_END.search(lines[0]) else " ".join(lines)
        body = body.split(":", 1)[1] if ":" in body else body
        raw = re.split(r"[;,]|\band\b", body)
    out: list[str] = []
    for entry in raw:
        key = normalise_item(entry)
        if key and key not in out:
            out.append(key)
        if len(out) == k:
            break
    return out


# --- multiple choice ----------------------------------------------------------------------------
LETTERS = "ABCDEFGH"
_LETTER_PATTERNS = (
    re.compile(r"^\s*\(?([A-H])(?:[.):,]|\s*$)"),  # "B", "B.", "(B)", "B)": not "A grandson ..."
    re.compile(r"^\s*\(([a-h])\)|^\s*([a-h])[.)]?\s*$"),  # lower case only when it cannot be a word
    re.compile(r"\b(?:answer|option|choice)\s*(?:is|:)?\s*\(?([A-H])\)?(?![\w'])", re.IGNORECASE),
)


def _without_article(toks: list[str]) -> list[str]:
    return toks[1:] if len(toks) > 1 and toks[0] in ("the", "a", "an") else toks


def parse_choice(text: str | None, options: Sequence[str]) -> int | None:
    """Index of the option a response picks, from a letter (``B``, ``(b)``, ``Answer: B``) or the
    option's text; ``None`` when it names none or contradicts itself."""
    if not text or not text.strip():
        return None
    n = len(options)
    letter = None
    for pattern in _LETTER_PATTERNS:
        m = pattern.search(text)
        found = next((g for g in m.groups() if g), None) if m else None
        if found and LETTERS.index(found.upper()) < n:
            letter = LETTERS.index(found.upper())
            break
    toks = words(text)
    keys = [_without_article(words(opt)) for opt in options]
    by_text = {i for i, key in enumerate(keys) if key and _find(toks, key) >= 0}
    # an option whose words are inside another matched option's words is not a separate mention
    by_text = {i for i in by_text if not any(j != i and _find(keys[j], keys[i]) >= 0 for j in by_text)}
    if letter is not None:
        if by_text and letter not in by_text and len(by_text) == 1:
            return None  # "A. The grandson" when A is the grandfather: contradictory
        return letter
    return by_text.pop() if len(by_text) == 1 else None


OUTCOME_KINDS = ("number", "yes_no", "choice")


def parse_outcome_spec(spec: str) -> tuple[str, list[str]]:
    """``number`` | ``number: UNIT`` | ``yes_no`` | ``choice: a | b | c`` -> (kind, options), where a
    number's one option is the unit its amounts are read in (hour, day, week, month, year, once;
    without it the prompt's words tell); ValueError otherwise."""
    from equilens.tasks.scoring.outcomes import UNITS

    kind, _, rest = spec.partition(":")
    kind = kind.strip().lower()
    if kind not in OUTCOME_KINDS:
        raise ValueError(f"unknown outcome {spec!r}; expected number, number: UNIT, yes_no or choice: a | b | c")
    if kind == "number" and rest.strip():
        unit = rest.strip().lower().removeprefix("per ").removeprefix("a ")
        if unit not in UNITS:
            raise ValueError(f"outcome {spec!r}: unknown unit {rest.strip()!r}; expected one of {', '.join(UNITS)}")
        return kind, [unit]
    options = [o.strip() for o in rest.split("|") if o.strip()] if kind == "choice" else []
    if kind == "choice" and len(options) < 2:
        raise ValueError(f"outcome {spec!r} lists {len(options)} option(s); a choice needs two or more, "
                         "separated by |")
    return kind, options
