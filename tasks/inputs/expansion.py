"""Counterfactual prompt expansion, attribute neutralisation and variant validation.

A prompt that mentions one group of an attribute (e.g. "He is a nurse") becomes one variant per
group of the lexicon ("He is a nurse", "She is a nurse", "They are a nurse"): every mention is
replaced by the term of the same lexicon row for the target group. Beyond a plain word swap:

* case is kept ("He" -> "She", "HE" -> "SHE", "African American" -> "Asian American"), and
  hyphenated multi-word terms stay hyphenated ("African-American" -> "Asian-American");
* "her"/"his" pick their row from the context (:func:`tasks.inputs.ftu.resolve_row`);
* an indefinite article before a swapped term follows it ("an actor" -> "a performer");
* a subject pronoun turned into "they" takes plural agreement: is/was/has/does and their
  negations, "'s" -> "'re" (or "'ve" before "been"/"got"), and any third-person verb, also after
  an adverb ("he always loves" -> "they always love", "she tries" -> "they try");
* first names (a :class:`tasks.inputs.names.NameTable`) take part in gender and race expansion: a name
  becomes a name of the target group with the same race (gender expansion) or the same gender
  (race expansion). Within a variant the same name always gets the same replacement and a
  replacement never already occurs in the prompt. A target group without any first names in the
  table (e.g. a race group the name statistics do not cover) is left out for prompts whose
  mentions include a race-associated name. A name's race is a statistical association, so it
  counts only in prompts without a race word ("Jamal went home" has race variants; in "Mary saw
  a black man" only "black" is swapped).

**Prompts that mention several groups** of one attribute ("a man and a woman", "He told her")
are never collapsed into one group. With ``multi_group="swap"`` (default) the mentioned groups
are permuted among themselves: the variants are the cyclic shifts of the groups in order of first
mention, each labelled with the group the first-mentioned group becomes ("a man and a woman" ->
male: unchanged, female: "a woman and a man"). With ``multi_group="skip"`` such prompts give no
variants and one record saying why.

Every variant is checked by :func:`validate_variant`: the texts may differ only inside attribute
terms (plus the article and agreement words linked to them), every mention must land in the
group the variant asks for, mentions of one group must not split (a pronoun changed but the name
of the same person did not) and two groups must not merge. Each problem is one readable message.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from tasks.errors import ConfigError, InputDataError
from tasks.inputs.ftu import find_mentions
from tasks.inputs.lexicon import Lexicon, canonical
from tasks.inputs.names import NameTable

Swap = tuple[str, str]
MULTI_GROUP_MODES = ("swap", "skip")
SKIPPED = "*"  # group label of the record for a prompt skipped by multi_group="skip"


@dataclass(frozen=True)
class Variant:
    """One counterfactual variant of a prompt, for one group of one attribute."""

    prompt_id: str
    attribute: str
    group: str
    text: str
    swapped: tuple[Swap, ...]  # (original surface, replacement) per replaced attribute term
    problems: tuple[str, ...] = ()  # from validation; empty when the variant is valid


@dataclass(frozen=True, slots=True)
class Source:
    """One attribute mention to swap: a lexicon term (``row`` >= 0) or a first name (``name``)."""

    start: int
    end: int
    surface: str
    group: str
    row: int = -1
    name: str = ""
    subject: bool = False  # a subject pronoun (agreement follows it)
    counted: bool = True  # False: a guard rejected it (only from sources(..., guards=False))


# --- finding mentions ---------------------------------------------------------------------------
def sources(text: str, lexicon: Lexicon, names: NameTable | None = None, *,
            include_targets: bool = False, guards: bool = True, loose_names: bool = False) -> list[Source]:
    """Mentions of ``lexicon``'s groups in ``text`` (terms, and first names when ``names`` is
    given and the attribute is gender or race), left to right, without overlaps. With
    ``guards=False`` terms a guard rejects come too, with ``counted=False``; ``loose_names``
    finds names as validation does (:meth:`tasks.inputs.names.NameTable.find`)."""
    found = []
    for m in find_mentions(text, lexicon, include_targets=include_targets, names=names, guards=guards):
        subject = lexicon.role(m.row) == "subject"
        found.append(Source(m.start, m.end, m.surface, m.group, m.row, "", subject, m.counted))
    # A name's race is a weak statistical signal: it counts only where no race word does.
    if names is not None and (lexicon.attribute == "gender"
                              or (lexicon.attribute == "race" and not any(s.counted for s in found))):
        taken = [(s.start, s.end) for s in found]
        extra = False
        for m in names.find(text, loose=loose_names):
            g = m.group(lexicon.attribute)
            if g is None or g not in lexicon.groups or (g in lexicon.target_only and not include_targets):
                continue
            if not any(s < m.end and m.start < e for s, e in taken):
                found.append(Source(m.start, m.end, m.surface, g, -1, m.name))
                extra = True
        if extra:
            found.sort(key=lambda s: s.start)
    return found


def mentioned_groups(found: Sequence[Source], lexicon: Lexicon) -> list[str]:
    """Detectable groups mentioned, in order of first mention."""
    out: list[str] = []
    for s in found:
        if s.group not in out and s.group not in lexicon.target_only:
            out.append(s.group)
    return out


def plan(groups: Sequence[str], lexicon: Lexicon, multi_group: str = "swap") -> list[tuple[str, dict[str, str]]]:
    """(label, group mapping) per variant for a prompt mentioning ``groups`` (see module doc)."""
    if multi_group not in MULTI_GROUP_MODES:
        raise ConfigError(f"multi_group must be one of {', '.join(MULTI_GROUP_MODES)}, got {multi_group!r}.")
    if not groups:
        return []
    if len(groups) == 1:
        return [(t, {groups[0]: t}) for t in lexicon.target_groups]
    if multi_group == "skip":
        return []
    k = len(groups)
    out = []
    for shift in range(k):
        mapping = {groups[i]: groups[(i + shift) % k] for i in range(k)}
        out.append((mapping[groups[0]], mapping))
    return out


# --- rendering ----------------------------------------------------------------------------------
_ARTICLE_BEFORE = re.compile(r"(?<![\w'])(an?)(\s+)$", re.IGNORECASE)
_PLURAL_SUBJECTS = frozenset({"they"})
_BE_HAVE_DO = {"is": "are", "was": "were", "has": "have", "does": "do", "isn't": "aren't",
               "wasn't": "weren't", "hasn't": "haven't", "doesn't": "don't", "are": "are", "were": "were",
               "have": "have", "do": "do", "aren't": "aren't", "weren't": "weren't", "haven't": "haven't",
               "don't": "don't"}
_ADVERBS = ("always never often usually also really just still only sometimes rarely then even "
            "probably actually already finally certainly clearly simply seldom frequently generally "
            "mostly typically suddenly quickly slowly immediately constantly definitely truly barely "
            "hardly nearly almost apparently obviously")
_AFTER_SUBJECT = re.compile(
    rf"((?:\s+(?:{'|'.join(_ADVERBS.split())}))*)(\s+)([a-z]+n['’]t|[a-z]+)\b|(['’])s\b(\s+(?:been|got)\b)?",
    re.IGNORECASE,
)
_NOT_VERBS = frozenset("""
    always perhaps thus nevertheless unless plus as us yes is was has does this his hers its
    besides sometimes news less across whereas whose towards afterwards nonetheless
""".split())
_NO_E_DROP = frozenset("dies lies ties vies".split())


def _base_form(verb: str) -> str | None:
    """Plural (base) form of a third-person singular verb, None when ``verb`` is not one."""
    low = verb.lower().replace("’", "'")
    if low in _BE_HAVE_DO:
        return _BE_HAVE_DO[low]
    if len(low) < 3 or not low.endswith("s") or low.endswith(("ss", "us", "is", "'s")) or low in _NOT_VERBS:
        return None
    if low in _NO_E_DROP:
        return low[:-1]
    if low.endswith("ies") and len(low) > 4:
        return low[:-3] + "y"
    if low.endswith(("sses", "shes", "ches", "xes", "zzes", "oes")):
        return low[:-2]
    return low[:-1]


def _agreement(text: str, end: int) -> tuple[int, str] | None:
    """(end of consumed text, replacement) making the words after a subject agree with "they"."""
    m = _AFTER_SUBJECT.match(text, end)
    if m is None:
        return None
    if m.group(4):  # "'s" -> "'re", or "'ve" before been/got
        return m.end(), m.group(4) + ("ve" if m.group(5) else "re") + (m.group(5) or "")
    verb = m.group(3)
    base = _base_form(verb)
    if base is None or base == verb.lower():
        return None
    return m.end(), m.group(1) + m.group(2) + _like(verb, base)


_UNHYPHENATED = frozenset({"white", "black"})


def _render(surface: str, term: str) -> str:
    """``term`` written in the case and separator style of ``surface``."""
    words = term.split(" ")
    # "Asian-Americans" -> "White Americans": a colour word is not hyphenated to its noun
    sep = "-" if "-" in surface and words[0] not in _UNHYPHENATED else " "
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


_HE = re.compile(r"\b(?:he|him|his|himself)\b", re.IGNORECASE)
_SHE = re.compile(r"\b(?:she|her|hers|herself)\b", re.IGNORECASE)


def _gender_hint(text: str) -> str | None:
    he, she = bool(_HE.search(text)), bool(_SHE.search(text))
    return "male" if he and not she else "female" if she and not he else None


class _Unavailable(Exception):
    """The target group has no first names to replace a name with."""


def _variant(text: str, found: Sequence[Source], mapping: dict[str, str], lexicon: Lexicon,
             names: NameTable | None) -> tuple[str, tuple[Swap, ...], list[str]]:
    """Variant text, swaps and problems found while building it (names without a replacement)."""
    pieces: list[str] = []
    swapped: list[Swap] = []
    problems: list[str] = []
    name_map: dict[str, str | None] = {}
    taken: set[str] | None = None
    pos = 0
    for s in found:
        if s.start < pos:
            continue
        target = mapping.get(s.group, s.group)
        if target == s.group:
            continue
        if s.name:
            if s.name not in name_map:
                if taken is None:  # every word of the prompt that is a name, surnames included
                    taken = {w.lower() for w in re.findall(r"[A-Za-z]+", text) if w.lower() in names.info}
                if lexicon.attribute == "race" and not names.has_race(target):
                    raise _Unavailable(target)
                name_map[s.name] = names.replacement(s.name, lexicon.attribute, target, taken,
                                                     _gender_hint(text))
            new = name_map[s.name]
            if new is None:
                problems.append(f"no replacement for the name {s.surface!r} ({s.group}) in the variant "
                                f"for {target!r}: its gender is unknown and the prompt does not tell")
                continue
            new = new.upper() if s.surface.isupper() and len(s.surface) > 1 else new
            term = new
        else:
            term = lexicon.cell(s.row, target)
            if not term:
                continue
            new = _render(s.surface, term)
        if new == s.surface:
            continue
        gap = text[pos:s.start]
        art = _ARTICLE_BEFORE.search(text, max(pos, s.start - 12), s.start)
        if art:
            want = "an" if _vowel_sound(term) else "a"
            if art.group(1).lower() != want:
                cut = art.start(1) - pos
                gap = gap[:cut] + _like(art.group(1), want) + gap[cut + len(art.group(1)):]
        pieces += [gap, new]
        swapped.append((s.surface, new))
        pos = s.end
        if s.subject and term in _PLURAL_SUBJECTS and canonical(s.surface) not in _PLURAL_SUBJECTS:
            agree = _agreement(text, s.end)
            if agree:
                pieces.append(agree[1])
                pos = agree[0]
    pieces.append(text[pos:])
    return "".join(pieces), tuple(swapped), problems


# --- expansion ----------------------------------------------------------------------------------
def _expand(text: str, lexicon: Lexicon, names: NameTable | None, multi_group: str):
    found = sources(text, lexicon, names)
    groups = mentioned_groups(found, lexicon)
    out = []
    for label, mapping in plan(groups, lexicon, multi_group):
        try:
            vtext, swapped, problems = _variant(text, found, mapping, lexicon, names)
        except _Unavailable:
            continue
        out.append((label, mapping, vtext, swapped, problems))
    return groups, out


def expand_prompt(text: str, lexicon: Lexicon, names: NameTable | None = None, *,
                  multi_group: str = "swap") -> dict[str, str]:
    """Group -> variant text for a prompt; {} when ``text`` mentions no group (or is skipped).

    A prompt mentioning one group gets every group of ``lexicon``; one mentioning several groups
    gets the permutations described in the module docstring.
    """
    return {label: vtext for label, _, vtext, _, _ in _expand(text, lexicon, names, multi_group)[1]}


def expand_prompts(
    prompts: Sequence[tuple[str, str]], lexicon: Lexicon, names: NameTable | None = None, *,
    multi_group: str = "swap",
) -> list[Variant]:
    """Validated variants of every ``(prompt_id, text)`` mentioning the attribute.

    Invalid variants are returned too, with ``problems`` filled; nothing is raised for them.
    With ``multi_group="skip"`` a prompt mentioning several groups gives one record with group
    :data:`SKIPPED`, its own text and the reason as its problem.
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
        groups, built = _expand(text, lexicon, names, multi_group)
        if not groups:
            continue
        if not built and len(groups) > 1:
            out.append(Variant(pid, lexicon.attribute, SKIPPED, text, (), (
                f"skipped: the prompt mentions {len(groups)} {lexicon.attribute} groups "
                f"({', '.join(groups)}) and counterfactual.multi_group is 'skip'",)))
            continue
        original = _Checked(text, lexicon, names)
        for label, mapping, vtext, swapped, problems in built:
            problems = problems + _check(original, vtext, lexicon, names, mapping, label)
            out.append(Variant(pid, lexicon.attribute, label, vtext, swapped, tuple(dict.fromkeys(problems))))
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
_TOKENS = re.compile(r"\w+(?:['’]\w+)?|\s+|[^\w\s]")


def _skeleton(text: str, lexicon: Lexicon, names: NameTable | None) -> str:
    """``text`` with every attribute region (term of any group, or a first name, with the article
    before it) replaced by one marker character, and the words after a subject pronoun put in
    their plural form, so "he loves" and "they love" compare equal."""
    spans: list[tuple[int, int, str]] = []
    for m in lexicon.any_pattern.finditer(text):
        start, end = m.start(), m.end()
        art = _ARTICLE_BEFORE.search(text, max(0, start - 12), start)
        if art:
            start = art.start(1)
        marker = _MARK
        info = lexicon.index[canonical(m.group())]
        if lexicon.roles and any(lexicon.roles[r] == "subject" for r in info.rows):
            after = _AFTER_SUBJECT.match(text, end)
            if after and after.group(4):
                marker, end = _MARK + "'" + ("ve" if after.group(5) else "re") + (after.group(5) or ""), after.end()
            elif after:
                base = _base_form(after.group(3))
                if base is not None:
                    marker = _MARK + after.group(1).lower() + after.group(2) + base
                    end = after.end()
        spans.append((start, end, marker))
    if names is not None:
        for m in names.find(text):
            art = _ARTICLE_BEFORE.search(text, max(0, m.start - 12), m.start)
            spans.append((art.start(1) if art else m.start, m.end, _MARK))
    if not spans:
        return text
    spans.sort()
    pieces, pos = [], 0
    for start, end, marker in spans:
        if start < pos:  # overlapping regions merge
            pos = max(pos, end)
            continue
        pieces += [text[pos:start], marker]
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


class _Checked:
    """What validation needs from the original prompt, computed once per prompt."""

    def __init__(self, text: str, lexicon: Lexicon, names: NameTable | None) -> None:
        self.text = text
        self.skeleton = _skeleton(text, lexicon, names)
        self.mentions = sources(text, lexicon, names, include_targets=True, loose_names=True)
        self.all_terms = sources(text, lexicon, names, include_targets=True, guards=False, loose_names=True)


def _what(s: Source) -> str:
    return f"the name {s.surface!r}" if s.name else repr(s.surface)


_THEY_VERB = re.compile(rf"\b(they)((?:\s+(?:{'|'.join(_ADVERBS.split())}))*\s+)([a-z]+n['’]t|[a-z]+)\b",
                        re.IGNORECASE)


def _disagreements(variant: str) -> list[str]:
    out = []
    for m in _THEY_VERB.finditer(variant):
        base = _base_form(m.group(3))
        if base is not None and base != m.group(3).lower().replace("’", "'"):
            out.append(f"{m.group(0)!r} does not agree: 'they' takes {base!r}")
    return out


def _check(original: _Checked, variant: str, lexicon: Lexicon, names: NameTable | None,
           mapping: dict[str, str] | None, label: str | None) -> list[str]:
    problems = _compare(original.skeleton, _skeleton(variant, lexicon, names))
    if lexicon.attribute == "gender":
        problems += _disagreements(variant)
    # Line up every term match of both texts (guards off), then keep a pair when a guard lets
    # either side count: a swapped-in word the guard cannot place ("came out as straight",
    # "her White squinty eyes") is still the counterpart of a mention of the prompt.
    before, after = original.mentions, sources(variant, lexicon, names, include_targets=True, loose_names=True)
    after_all = sources(variant, lexicon, names, include_targets=True, guards=False, loose_names=True)
    if len(after_all) == len(original.all_terms):
        pairs = [(b, a) for b, a in zip(original.all_terms, after_all, strict=True) if b.counted or a.counted]
        before, after = [b for b, _ in pairs], [a for _, a in pairs]
    detect = set(lexicon.detect_groups)
    if len(after) != len(before):
        problems.append(f"the variant has {len(after)} {lexicon.attribute} mentions where the prompt has "
                        f"{len(before)}: {', '.join(_what(s) for s in after) or 'none'}")
        if mapping is not None:
            for s in after:
                if s.group in detect and s.group not in mapping.values():
                    problems.append(f"variant for {label!r} still has {_what(s)} ({s.group})")
        return problems
    became: dict[str, dict[str, Source]] = {}
    for b, a in zip(before, after, strict=True):
        if b.group not in detect:
            continue
        became.setdefault(b.group, {}).setdefault(a.group, a)
        if mapping is not None and a.group != mapping.get(b.group, b.group):
            problems.append(f"variant for {label!r} still has {_what(a)} ({a.group}) where "
                            f"{mapping.get(b.group, b.group)} was asked for")
    for group, targets in became.items():
        if len(targets) > 1:
            (g1, s1), (g2, s2) = list(targets.items())[:2]
            problems.append(f"mentions of one {group} group were split: {_what(s1)} is {g1} but "
                            f"{_what(s2)} is {g2} (a pronoun and a name of one person must change together)")
    targets_of: dict[str, str] = {}
    for group, targets in became.items():
        for t in targets:
            if t in targets_of and targets_of[t] != group:
                problems.append(f"groups collapsed: {targets_of[t]} and {group} mentions both became {t}")
            targets_of.setdefault(t, group)
    return problems


def validate_variant(
    original: str, variant: str, lexicon: Lexicon, names: NameTable | None = None, *, group: str | None = None
) -> list[str]:
    """Human-readable problems of ``variant`` (empty when valid).

    Both texts are split into words, spaces and punctuation; they may differ only where both have
    an attribute term of ``lexicon`` (any group) or a first name, including multi-word terms, the
    "a"/"an" before such a term and the agreement after a subject pronoun ("he is" / "they are",
    "he loves" / "they love"). Mentions are matched up in order: mentions of one group must stay
    together (a pronoun changed but the name did not is a problem) and two groups must not
    become one. With ``group``, every mention must also be of the group the prompt's single group
    maps to (``group``) or, for a prompt mentioning several groups, of one of them.
    """
    checked = _Checked(original, lexicon, names)
    mapping = None
    if group is not None:
        if group not in lexicon.groups:
            raise InputDataError(f"validate_variant: {group!r} is not a group of {lexicon.attribute}.")
        groups = mentioned_groups(checked.mentions, lexicon)
        if len(groups) == 1:
            mapping = {groups[0]: group}
    return list(dict.fromkeys(_check(checked, variant, lexicon, names, mapping, group)))


def drop_invalid_sets(variants):  # noqa: ANN001, ANN201 - pd.DataFrame -> (pd.DataFrame, int)
    """Drop every (prompt, attribute) variant set that holds an invalid variant; return the rest and
    how many sets went. A broken swap would measure the swap, not the model, so the whole set goes
    (its record stays in the ``variants`` table with its problems)."""
    invalid = variants[~variants["valid"]]
    if invalid.empty:
        return variants, 0
    bad = set(zip(invalid["prompt_id"], invalid["attribute"], strict=True))
    keep = [(p, a) not in bad for p, a in zip(variants["prompt_id"], variants["attribute"], strict=True)]
    return variants[keep].reset_index(drop=True), len(bad)
