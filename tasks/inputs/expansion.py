"""Counterfactual prompt expansion (neutralisation of attribute words: :mod:`equilens.tasks.inputs.neutralization`).

A prompt that mentions one group of an attribute (e.g. "He is a nurse") becomes one variant per
group of the lexicon ("He is a nurse", "She is a nurse", "They are a nurse"): every mention is
replaced by the term of the same lexicon row for the target group. Beyond a plain word swap:

* case is kept ("He" -> "She", "HE" -> "SHE", "African American" -> "Asian American"), and
  hyphenated multi-word terms stay hyphenated ("African-American" -> "Asian-American");
* "her"/"his" pick their row from the context (:func:`equilens.tasks.inputs.ftu.resolve_row`);
* an indefinite article before a swapped term follows it ("an actor" -> "a performer");
* a subject pronoun turned into "they" takes plural agreement: is/was/has/does and their
  negations, "'s" -> "'re" (or "'ve" where it says "has": "he's applied", "she's been"), and
  any third-person verb, also after an adverb ("he always loves" -> "they always love");
* first names (a :class:`equilens.tasks.inputs.names.NameTable`) take part in gender and race expansion: a name
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
male: unchanged, female: "a woman and a man"); outside gender each takes the word the text uses for
the other ("an Italian man and a Korean man" -> "a Korean man and an Italian man"). A source-only group (no variant of its own:
"Indians", "minorities", most nationalities) keeps its place and only the other groups move;
with one other group that group takes every target group ("Indians and white people" ->
"Indians and Black people", ...). With ``multi_group="skip"`` such prompts give no variants and
one record saying why.

Every variant is checked by :func:`equilens.tasks.inputs.variant_validation.validate_variant`; each
problem is one readable message.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from equilens.tasks.errors import ConfigError, InputDataError
from equilens.tasks.inputs.agreement import (
    AFTER_SUBJECT,
    ARTICLE_BEFORE,
    ETHNONYM_BEFORE,
    GENDERED_ENDING,
    apposed_ethnonyms,
    base_form,
    colour_case,
    ethnonym_agreeing,
    later_ethnonyms,
    plural_contraction,
    same_person_ethnonym,
)
from equilens.tasks.inputs.ambiguity import noun_form, unclear_senses
from equilens.tasks.inputs.compared import people_compared
from equilens.tasks.inputs.gender_bound import PREGNANCY, PREGNANT_MALE, gendered_institution, student_word, worn
from equilens.tasks.inputs.lexicon import Lexicon, canonical
from equilens.tasks.inputs.mentions import KEPT, Source, mentioned_groups, plural_term, related_kept, sources, words_used
from equilens.tasks.inputs.names import NameTable
from equilens.tasks.inputs.new_names import Chosen, Unavailable, gender_hint, new_name, regions
from equilens.tasks.inputs.origins import describes_person, unread_origins
from equilens.tasks.inputs.partners import partner_group, partners_of
from equilens.tasks.inputs.variant_validation import CheckedPrompt, validate_variant, variant_problems

__all__ = ["MULTI_GROUP_MODES", "SKIPPED", "Variant", "expand_prompt", "expand_prompts",
           "mentioned_groups", "plan", "sources", "validate_variant"]

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
    keeps_groups: bool = False  # every person keeps their group (the text changes only where it mends a slip)


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
    moving = [g for g in groups if g not in lexicon.source_only] or list(groups)
    fixed = {g: g for g in groups if g not in moving}
    if len(moving) == 1:  # "Indians and white people": the source-only group stays
        return [(t, {**fixed, moving[0]: t}) for t in lexicon.target_groups]
    k = len(moving)
    out = []
    for shift in range(k):
        mapping = {**fixed, **{moving[i]: moving[(i + shift) % k] for i in range(k)}}
        out.append((mapping[moving[0]], mapping))
    return out


# --- rendering ----------------------------------------------------------------------------------
_PLURAL_SUBJECTS = frozenset({"they"})


def _agreement(text: str, end: int) -> tuple[int, str] | None:
    """(end of consumed text, replacement) making the words after a subject agree with "they"."""
    m = AFTER_SUBJECT.match(text, end)
    if m is None:
        return None
    if m.group(4):  # "'s" -> "'re", or "'ve" where it says "has" ("he's applied")
        return m.end(), plural_contraction(m)
    verb = m.group(3)
    base = base_form(verb)
    if base is None or base == verb.lower():
        return None
    return m.end(), m.group(1) + m.group(2) + _like(verb, base)


_UNHYPHENATED = frozenset({"white", "black"})
_OPENS = re.compile(r"(?:^|[.!?:;\"“(]\s*|\n\s*)$")  # a sentence's first word
# Words of multi-word terms that English always capitalises, whatever the surface's style beyond
# its first word: "People of color" -> "Native American people", not "Native american people".
_PROPER = frozenset("""
    american americans african africans asian asians arab arabs eastern easterner easterners
    european europeans hispanic hispanics indian indians latino latinos latina latinas caucasian
    caucasians korean koreans arabia republic
""".split())


def _proper(words: list[str]) -> list[str]:
    """Capitalise the words English always capitalises ("asian" -> "Asian", "native american" ->
    "Native American", "middle eastern" -> "Middle Eastern")."""
    out = []
    for i, w in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if w in _PROPER or (w in ("native", "middle") and nxt in _PROPER):
            w = w[:1].upper() + w[1:]
        out.append(w)
    return out


def render(surface: str, term: str, all_lowercase: bool = False) -> str:
    """``term`` written in the case and separator style of ``surface``; proper words keep their
    capitals in a lowercase surface ("A white man" -> "An Asian man") unless the whole prompt is
    written in lowercase (``all_lowercase``: the writer's style, "black people face barriers")."""
    words = term.split(" ")
    # "Asian-Americans" -> "White Americans": a colour word is not hyphenated to its noun
    sep = "-" if "-" in surface and words[0] not in _UNHYPHENATED else " "
    letters = [c for c in surface if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return sep.join(words).upper()
    parts = [w for w in re.split(r"[\s-]+", surface) if w]
    if parts[0][:1].isupper():  # "He", "White people", "Koreans" -> "White people", "South American"
        # -> "Native American person": the first word and proper words only
        words = _proper(words)
        return sep.join([words[0][:1].upper() + words[0][1:], *words[1:]])
    return sep.join([w.lower() for w in words] if all_lowercase else _proper(words))


def vowel_sound(term: str) -> bool:
    """Does ``term`` take "an"? (vowel letter, with the usual exceptions)."""
    w = term.lower()
    if w.startswith(("eu", "uni", "use", "usu", "one", "once")):
        return False
    return w[:1] in "aeiou" or w.startswith(("honest", "honor", "honour", "hour", "heir"))


def _like(model: str, word: str) -> str:
    if model.isupper() and len(model) > 1:
        return word.upper()
    return word[:1].upper() + word[1:] if model[:1].isupper() else word


def _variant(text: str, found: Sequence[Source], mapping: dict[str, str], lexicon: Lexicon,
             names: NameTable | None, own_words: dict[tuple[str, bool], str] | None = None,
             partners: Mapping[int, str] | None = None) -> tuple[str, tuple[Swap, ...], list[str]]:
    """Variant text, swaps and problems found while building it (names without a replacement).
    ``own_words``: the words the text uses for each group (:func:`words_used`), which a swap writes.
    ``partners``: the people compared's partners (:func:`partners_of`), who follow them."""
    pieces: list[str] = []
    swapped: list[Swap] = []
    problems: list[str] = []
    chosen = Chosen()
    taken: set[str] | None = None
    region: dict[str, frozenset[str]] | None = None
    hint = gender_hint(text) if names is not None else None  # the prompt's pronouns, read once
    pos = 0
    pregnant = lexicon.attribute == "gender" and PREGNANCY.search(text) is not None
    original = text
    colours = [f.surface for f in found if lexicon.attribute == "race" and not f.is_name  # race words inside sentences
               and not _OPENS.search(text, max(0, f.start - 4), f.start)]
    if lexicon.attribute == "gender":
        text = apposed_ethnonyms(text, [(s.end, mapping[s.group]) for s in found if s.row >= 0 and not s.is_name
                                        and plural_term(canonical(s.surface)) and mapping.get(s.group, s.group) != s.group])
    for s in found:
        if s.start < pos:
            continue
        owner = partners.get(s.start) if partners else None
        if owner is not None:  # "his wife" -> "her husband": a partner follows its person
            s = replace(s, group=s.group.removesuffix(KEPT))
        regional = _regional(s, mapping, lexicon)
        target = partner_group(s.group, owner, mapping, lexicon) if owner is not None \
            else regional[0] if regional else mapping.get(s.group, s.group)
        if target == s.group and not s.joined and (s.is_name or (said := lexicon.index.get(canonical(s.surface))) is None
                                                   or said.group == s.group):
            continue  # unchanged, unless its word says another group than its person's ("Steven ... after she was")
        if pregnant and target == "male" and PREGNANT_MALE not in problems:  # a name made male too
            problems.append(PREGNANT_MALE)
        if lexicon.attribute == "gender" and (said := worn(text, s.group, target)) and said not in problems:
            problems.append(said)
        if s.is_name:
            if taken is None:  # every word of the prompt that is a name or a surname
                taken = {w.lower() for w in re.findall(r"[A-Za-z]+", text) if w.lower() in names.info
                         or (names.surnames is not None and w.lower() in names.surnames.info)}
            if region is None:
                region = regions(found, names) if lexicon.attribute == "race" else {}
            new = new_name(s, lexicon, target, names, chosen, taken, hint, region)
            if new is None:
                problems.append(f"no replacement for the name {s.surface!r} ({s.group}) in the variant "
                                f"for {target!r}: its gender is unknown and the prompt does not tell")
                continue
            term = new
        elif regional:  # "an African man" beside "a Black man" -> "a European man" beside "a White man"
            term = regional[1]
            new = render(s.surface, term, text.islower())
        else:
            term = lexicon.cell(s.row, target)
            if not term:
                continue
            term = student_word(canonical(s.surface), text) or term if target == "neutral" else term
            term = own_words.get((target, plural_term(term)), term) if own_words is not None else term
            term = noun_form(text, s.start, s.end, term)  # "a Christian," -> "a Jewish person,"
            new = ethnonym_agreeing(render(s.surface, term, text.islower()), text, s.end, s.start)
            new = colour_case(new, text, s.start, colours) if lexicon.attribute == "race" else new  # "a Black man"
            head, _, noun = new.rpartition(" ")  # "The African person" -> "The Native American person", not "... person person"
            if head and re.match(rf"\s+{re.escape(noun)}\b", text[s.end:s.end + len(noun) + 4], re.IGNORECASE):
                new = head
            if target == "neutral" and (place := gendered_institution(text, s.end)):
                problems.append(f"no {target} form for the gendered institution "
                                f"{text[s.start:place]!r}: a {target} variant would change what it is")
        if new == s.surface:
            continue
        gap = text[pos:s.start]
        if lexicon.attribute == "gender" and not s.is_name:  # "a Latino man" -> "a Latina woman"
            gap = ETHNONYM_BEFORE.sub(lambda m: m.group(1) + GENDERED_ENDING.get(target, m.group(2)) + m.group(3), gap)
        art = ARTICLE_BEFORE.search(text, max(pos, s.start - 12), s.start)
        if art:
            want = "an" if vowel_sound(term) else "a"
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
    vtext = "".join(pieces)
    vtext = same_person_ethnonym(original, vtext) if lexicon.attribute == "gender" else later_ethnonyms(vtext)
    return vtext, tuple(swapped), problems


# --- expansion ----------------------------------------------------------------------------------
Expanded = tuple[str, dict[str, str], str, tuple[Swap, ...], list[str]]
"""One variant: its group label, the word mapping, its text, the swaps made and the problems found."""


def _expand(text: str, lexicon: Lexicon, names: NameTable | None,
            multi_group: str) -> tuple[list[str], list[Expanded], dict[int, str]]:
    raw = sources(text, lexicon, names)
    related = related_kept(raw, lexicon)
    compared = people_compared(text, related, lexicon)
    found = compared.found
    groups = [g for g in mentioned_groups(found, lexicon) if not g.endswith(KEPT)]
    unknown = _genderless_names(text, names) if lexicon.attribute == "gender" and groups else []
    unknown += unread_origins(text, found) if lexicon.attribute == "race" and groups else []
    unknown += _one_group_origins(raw, related, lexicon) if lexicon.attribute == "race" and groups else []
    unknown += _staying_people(text, found, lexicon) if lexicon.attribute == "race" and groups else []
    unknown += [compared.unclear] if compared.unclear and groups else []
    unknown += unclear_senses(text, lexicon) if groups else []  # "showed her photos", "I met Christian"
    out: list[Expanded] = []
    own_words = None if lexicon.attribute == "gender" else words_used(found)  # once for every variant
    partners = partners_of(text, found, lexicon)
    for label, mapping in plan(groups, lexicon, multi_group):
        try:
            vtext, swapped, problems = _variant(text, found, mapping, lexicon, names, own_words, partners)
        except Unavailable:
            continue
        out.append((label, mapping, vtext, swapped, problems + unknown))
    return groups, out, partners


def _regional(s: Source, mapping: dict[str, str], lexicon: Lexicon) -> tuple[str, str] | None:
    """(target group, its region's word) for a mention of a group's region's word kept beside the
    group's general term ("an African man" beside "a Black man"), None for any other mention. A
    target group without a region's word has no variant of such a prompt (:class:`Unavailable`)."""
    base = s.group.removesuffix(KEPT)
    if base == s.group or base not in mapping:
        return None
    words = lexicon.region_word
    if canonical(s.surface) != words.get(base):
        return None
    if mapping[base] == base:
        return None
    if mapping[base] not in words:
        raise Unavailable(mapping[base])
    return mapping[base], words[mapping[base]]


def _one_group_origins(raw: Sequence[Source], related: Sequence[Source], lexicon: Lexicon) -> list[str]:
    """A problem where two people of one group are told apart by their words, one an origin ("a
    Ghanaian nurse and a Nigerian nurse", "a Black woman and an African man"): a variant would give
    them one description, or change one and keep the other, so the context is left out. Not where
    the words are the group's general term and its region's word (``regional``: "a Black man and an
    African man"), which a variant changes together (:func:`_regional`)."""
    kept = [a for a, b in zip(raw, related, strict=True) if b.group != a.group]
    if not kept:
        return []
    other = next(s for s in raw if s.group == kept[0].group and s not in kept)
    if all(canonical(k.surface) == lexicon.region_word.get(k.group) for k in kept) \
            and canonical(other.surface) not in dict(lexicon.aliases):
        return []
    return [f"{other.surface!r} and {kept[0].surface!r} tell apart two people of one group ({other.group}): a "
            "variant would give them one description or change only one"]


def _staying_people(text: str, found: Sequence[Source], lexicon: Lexicon) -> list[str]:
    """A problem where a person described by a source-only group's word ("an Indian student": an
    Asian Indian or a Native American) is compared with people of a group that moves: a variant
    would change them and leave this person as they are."""
    if not any(s.group not in lexicon.source_only and not s.group.endswith(KEPT) for s in found):
        return []
    return [f"{s.surface!r} names no one race ({s.group}), so a race variant would change the other "
            "people compared and leave this one as they are" for s in found
            if s.group in lexicon.source_only and not s.is_name and describes_person(text, s.end)][:1]


def _genderless_names(text: str, names: NameTable | None) -> list[str]:
    """Problems for the people a gender variant cannot change: first names of unknown gender
    ("Yousouf Badawi": no table lists Yousouf), who would stay as they are in every variant."""
    return [f"the gender of the name {m.surface!r} is unknown, so a gender variant would leave that "
            "person as they are" for m in (names.find(text) if names is not None else ())
            if m.name and not m.info.gender]


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
        groups, built, partners = _expand(text, lexicon, names, multi_group)
        if not groups:
            continue
        if not built and len(groups) > 1:
            out.append(Variant(pid, lexicon.attribute, SKIPPED, text, (), (
                f"skipped: the prompt mentions {len(groups)} {lexicon.attribute} groups "
                f"({', '.join(groups)}) and counterfactual.multi_group is 'skip'",)))
            continue
        original = CheckedPrompt(text, lexicon, names, partners)
        for label, mapping, vtext, swapped, problems in built:
            problems = problems + variant_problems(original, vtext, lexicon, names, mapping, label)
            out.append(Variant(pid, lexicon.attribute, label, vtext, swapped, tuple(dict.fromkeys(problems)),
                               all(k == v for k, v in mapping.items())))
    return out
