"""Fairness through unawareness (FTU): do prompts mention a protected attribute at all?

Matching is case-insensitive at word boundaries, one compiled regex per lexicon (see
:mod:`equilens.tasks.inputs.lexicon`), so "her" never matches inside "there" and "white" not inside "whiteboard".
Guards against words that are not about people:

* a term listed in the lexicon's ``person_context`` ("old", "straight", "native") counts only
  where it refers to people (:func:`refers_to_people`): before a person noun
  (data/lexicons/person_nouns.txt, optionally after one adjective), or as a predicate ("he was
  old");
* a colour word listed in ``object_context`` ("white", "black", "colored") counts unless it
  describes a thing (:func:`describes_object`): "black culture", "a white family", "the black
  made sure" and "he was black" count, "a black Amex card", "white, curly hair", "white-tie"
  and "painted it white." do not. ``stop_after`` words still cancel a match ("white wine",
  "Black Friday");
* a capitalised term right after a first name or a title is a surname ("Mrs. White",
  "Peter King"), see :func:`equilens.tasks.inputs.names.surname_position`, and a term that is
  also a name opening a sentence before a verb is that name ("Christian is applying",
  :func:`equilens.tasks.inputs.names.context.subject_name`);
* a term glued to "year-" is part of an age ("old man" in "a 45-year-old man"); a singular term
  after an amount ("quite a bit of heroine", a common spelling of the drug) is a stuff;
* a ``person_context`` word counted once counts wherever it recurs in the text ("the European
  man ... the European worker"); colour words do not ("the white man bought white paint"); one in
  the place of the other of two people counts when the first is counted ("two men, one Middle
  Eastern and the other African").
First names are found by :class:`equilens.tasks.inputs.names.NameTable`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from equilens.tasks.errors import ConfigError, InputDataError
from equilens.tasks.inputs.lexicon import LEXICON_DIR, Lexicon, canonical
from equilens.tasks.inputs.names import NameTable, load_names, surname_position
from equilens.tasks.inputs.names.context import subject_name
from equilens.tasks.inputs.senses import object_after_verb, one_is_a_thing
from equilens.tasks.inputs.word_lists import OBJECT_NOUNS, PERSON_NOUNS


@dataclass(frozen=True, slots=True)
class Mention:
    """One attribute term found in a text: ``text[start:end] == surface``."""

    start: int
    end: int
    surface: str
    term: str  # canonical lowercase form
    group: str
    row: int  # the row used for swapping, chosen with :func:`resolve_row`
    counted: bool = True  # False: a guard says it is not about people (only with guards=False)


def find_mentions(text: str, lexicon: Lexicon, *, include_targets: bool = False,
                  names: NameTable | None = None, guards: bool = True) -> list[Mention]:
    """Attribute mentions in ``text``, left to right (longest match first at each position).

    Target-only groups (e.g. neutral gender words) are skipped unless ``include_targets``.
    ``names`` (default: the built-in table) tells surnames after a first name apart. With
    ``guards=False`` matches that a guard rejects are returned too, with ``counted=False``
    (validation lines up a prompt and its variant term by term).
    """
    pattern = lexicon.any_pattern if include_targets else lexicon.detect_pattern
    index = lexicon.index
    person = lexicon.person_context
    objects = lexicon.object_context
    found = []
    for m in pattern.finditer(text):
        surface = m.group()
        start, end = m.start(), m.end()
        term = canonical(surface)
        if surface[:1].isupper() and (start and surname_position(text, start, names or default_names())
                                      or subject_name(text, start, end)):
            counted, context = False, False  # "Mrs. White", "Christian is applying": a name
        elif _AGE_COMPOUND.search(text, max(0, start - 7), start):
            counted, context = False, False  # "old man" inside "a 45-year-old man": the age is the mention
        elif _AMOUNT_OF.search(text, max(0, start - 24), start) and not term.endswith(("s", "men")):
            counted, context = False, False  # "quite a bit of heroine": an amount of a stuff, not a person
        elif term in objects:
            counted, context = not describes_object(text, start, end), False  # "white paint" stays paint
        else:
            counted, context = term not in person or refers_to_people(text, start, end), term in person
        found.append((start, end, surface, term, counted, context))
    # "Two men, one Middle Eastern and the other African": a people word in the place of the other of
    # two people, one of them described by a counted mention, is the other person's
    paired = {_pair_place(text, start) for start, _, _, _, counted, _ in found if counted} - {""}
    if paired:
        found = [(start, end, surface, term, counted or (context and _partner(_pair_place(text, start)) in paired), context)
                 for start, end, surface, term, counted, context in found]
    # A people word counted once names the same group wherever it recurs in the text ("the
    # European man ... the European bartender"), so the mentions of one group change together.
    about_people = {term for _, _, _, term, counted, context in found if counted and context}
    # A people word described in the same words as a counted mention describes a person too ("one a
    # South American taxi driver and the other a Latino taxi driver")
    described = {_described(text, end) for start, end, _, _, counted, _ in found if counted} - {""}
    out = []
    for start, end, surface, term, counted, context in found:
        counted = counted or (context and (term in about_people or _described(text, end) in described))
        if not counted and guards:
            continue
        info = index[term]
        out.append(Mention(start, end, surface, term, info.group, resolve_row(lexicon, term, text, end), counted))
    return out


_LANGUAGES = frozenset("""english french spanish german italian portuguese russian chinese japanese korean
    greek dutch polish swedish danish norwegian finnish hungarian czech thai vietnamese ukrainian""".split())
_TEACHES = frozenset("teacher teachers professor professors tutor tutors instructor instructors".split())
"""A language's name before one who teaches ("an English teacher") names the subject, not the teacher's origin."""
_AGE_COMPOUND = re.compile(r"\byears?-$", re.IGNORECASE)
_AMOUNT_OF = re.compile(r"\b(?:bit|lot|lots|plenty|amount|grams?|ounces?|kilos?|bags?|pounds?)\s+of\s+$", re.IGNORECASE)
"""An amount before a singular word: a stuff ("a bit of heroine", BBQ's spelling of the drug), never a person."""
_DESCRIPTION = re.compile(r"(?:[ \t]+[a-z][\w'-]*){2}")  # the two lowercase words after a mention
_PAIR_PLACE = re.compile(r"\b(?:(one)|the (other))\s+(?:(?:is|was)\s+)?(?:an?\s+)?$", re.IGNORECASE)


def _partner(place: str) -> str:
    """The other place of a pair ("one" <-> "other"); "" outside a pair."""
    return {"one": "other", "other": "one"}.get(place, "")


def _pair_place(text: str, start: int) -> str:
    """"one" or "other" when the mention at ``start`` follows "one" or "the other" ("one Middle
    Eastern and the other African", "one is Somali and the other is Malian"), else ""."""
    m = _PAIR_PLACE.search(text, max(0, start - 20), start)
    return "" if m is None else (m.group(1) or m.group(2)).lower()


def _described(text: str, end: int) -> str:
    """The two lowercase words after ``end`` ("taxi driver"), or "" when fewer follow."""
    m = _DESCRIPTION.match(text, end)
    return " ".join(m.group().split()) if m else ""


@functools.cache
def _default_names(path: str) -> NameTable:
    return load_names(Path(path))


def default_names() -> NameTable:
    """The built-in first-name table (used for the surname guard when no table is given)."""
    return _default_names(str(LEXICON_DIR))


# --- people context -----------------------------------------------------------------------------
_WORD_AFTER = re.compile(r"[ \t]+([A-Za-z][\w'-]*)")
_COPULA_BEFORE = re.compile(
    r"(?:\b(?:is|was|are|were|be|been|being|am|seem|seems|seemed|looked|looks|become|became|"
    r"identify as|identified as|identifies as)|['’](?:s|re|m))"
    r"(?:\s+(?:not|very|mostly|also|half|all|both|so|too|obviously|clearly|really))?\s+$",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r"\s*(?:$|[.,;:!?)\"”]|\s(?:and|or|but|so|because|too|either|which|who)\b)")
_THE_BEFORE = re.compile(r"\bthe[ \t]+$", re.IGNORECASE)
# Plural verbs and negated modals after which "the" + adjective is a noun for people ("the
# young don't", "the Irish are"); not "had", "will" or "can", which follow things too ("the
# hearing will resume", "the turkey had cooked").
_NOUN_USE_AFTER = frozenset("""
    are were don't didn't can't cannot won't wouldn't shouldn't never always often usually tend who
""".split())
_SKIPPABLE_ADJ = frozenset("""
    young old older younger elderly little small big tall short fat thin poor rich wealthy middle
    aged nice good bad new local single gay straight lesbian married unmarried homeless disabled
    blind deaf female male american african asian hispanic latino muslim christian jewish
""".split())


def refers_to_people(text: str, start: int, end: int) -> bool:
    """Does the ambiguous attribute word ``text[start:end]`` refer to people?

    Yes before a person noun (one adjective may stand between: "a black young man"; or "and"
    and another word: "my Iranian and Italian friends"), as a possessive noun ("a Mexican's
    backpack"), as a noun after "the" before a plural verb or a negated modal ("the young
    don't", "the Irish are"), or as a predicate (:func:`_is_predicate`: "because he was black",
    "she's old.", "was also Chinese which").
    """
    if text.startswith(("'s ", "’s "), end):  # a possessive noun: "a Mexican's backpack"
        return True
    m = _WORD_AFTER.match(text, end)
    if m and m.group(1).lower() in _NOUN_USE_AFTER and _THE_BEFORE.search(text, max(0, start - 5), start):
        return True  # "the young don't", "the Irish are"
    if m:
        word = _strip_possessive(m.group(1).lower())  # "the Somali family's house"
        if word in _TEACHES and text[start:end].lower() in _LANGUAGES:
            return False  # "a French teacher", "the Spanish tutor": the language taught, no one's origin
        if word in PERSON_NOUNS:
            return True
        if word in _SKIPPABLE_ADJ or word in ("and", "or"):  # "a black young man", "Iranian and Italian friends"
            m2 = _WORD_AFTER.match(text, m.end())
            m3 = _WORD_AFTER.match(text, m2.end()) if m2 and word in ("and", "or") else None
            if m2 and m2.group(1).lower() in PERSON_NOUNS:
                return True
            if m3 and _strip_possessive(m3.group(1).lower()) in PERSON_NOUNS:
                return True
    return _is_predicate(text, start, end)


def _is_predicate(text: str, start: int, end: int) -> bool:
    """Is ``text[start:end]`` a predicate ending its clause after a form of *be* ("he was black,
    and ...", "she's old.")? Such a word describes the subject, whatever follows the clause."""
    return bool(_COPULA_BEFORE.search(text, max(0, start - 40), start) and _CLAUSE_END.match(text, end))


_TOKEN_AFTER = re.compile(r"[ \t]*(?:([A-Za-z][\w'’]*)|(,)|(\S))")
_NOUN_USE_BEFORE = re.compile(
    r"\b(?:a|an|the|this|that|every|each|any|no|one|another|typical|of)(?:[ \t]+[a-z]+)?[ \t]+$",
    re.IGNORECASE,
)
_HYPHENATED = re.compile(r"([A-Za-z]+)")
_COLOURS = frozenset("white black red blue green yellow brown gray grey pink purple orange golden "
                     "silver dark light pale bright deep jet pure".split())
# Endings of adjectives that may stand between a colour word and its noun ("white, curly hair").
_ADJECTIVE_ENDINGS = ("y", "ish", "ed", "ic", "al", "ful", "ous", "ive", "less", "en", "ing", "ar", "ern")
_LOOK_AHEAD = 4  # words after a colour word searched for an object noun


def _strip_possessive(word: str) -> str:
    word = word.replace("’", "'")
    return word[:-2] if word.endswith("'s") else word.rstrip("'")


def describes_object(text: str, start: int, end: int) -> bool:
    """Does the colour word ``text[start:end]`` describe a thing rather than people?

    Never as a predicate ending its clause ("my daughter was black, and stopped dog sitting").
    Yes when joined by a hyphen to a word that is not a person noun ("white-tie",
    "black-owned"), or when an object noun (data/lexicons/object_nouns.txt) follows within
    four words, past capitalised words, adjectives (by their ending), other colours, commas and
    "and"/"or" ("a black Amex card", "white, curly hair", "black and white photos", "a black
    Honda"), or "one" stands for a thing named before it ("the black Honda or the white one"), before a
    person noun, a plain word ("black culture"), a function word or punctuation. When no
    word follows at all (function word, punctuation, end), the colour word is a noun or a
    predicate only after an article or a form of *be* ("the black made sure", "what a black
    would do", "he was black which"); otherwise it describes a thing ("painted it white.").
    """
    if text[end:end + 1] == "-":
        m = _HYPHENATED.match(text, end + 1)
        return not (m and m.group(1).lower() in PERSON_NOUNS)
    if _is_predicate(text, start, end):
        return False  # "my daughter was black, and stopped dog sitting"
    pos, words, content = end, 0, False
    while words < _LOOK_AHEAD:
        m = _TOKEN_AFTER.match(text, pos)
        if m is None or m.group(3):
            break
        pos = m.end()
        if m.group(2):
            continue
        words += 1
        low = _strip_possessive(m.group(1).lower())
        if low in ("one", "ones"):
            return one_is_a_thing(text, start)  # "the black Honda or the white one", not "the black candidate or the white one"
        if low in PERSON_NOUNS:
            return False
        if low in OBJECT_NOUNS:  # unless a compound names a person: "taxi driver", "line cook"
            nxt = _TOKEN_AFTER.match(text, pos)
            return not (nxt and nxt.group(1) and _strip_possessive(nxt.group(1).lower()) in PERSON_NOUNS)
        if low in ("and", "or") or low in _COLOURS:
            continue
        if low in _NOT_NOUN_PHRASE or low in _FUNCTION_WORDS:
            break
        content = True
        if not (m.group(1)[:1].isupper() or low.endswith(_ADJECTIVE_ENDINGS)):
            break  # a plain word: the noun the colour describes ("black culture", "black lives")
    if content:
        return False
    before = text[max(0, start - 40):start]
    return not (_COPULA_BEFORE.search(before) or _NOUN_USE_BEFORE.search(before))


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
    backstage upstairs downstairs abroad alone together overseas somewhere anywhere everywhere
    nowhere indoors outdoors aboard ashore anyway instead either
""".split())
# Modal verbs and other words that end a noun phrase (besides _NOT_NOUN_PHRASE).
_FUNCTION_WORDS = frozenset("""
    would wouldn't will won't can can't cannot could couldn't should shouldn't must might may
    shall isn't aren't wasn't weren't don't doesn't didn't hasn't haven't hadn't that's it's
    who's which whom whoever what how why
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
    -> standalone. After a causative or perception verb (make, let, help, hear, see, ...) "her"
    followed by a bare verb or an adjective is an object: "made her sick", "let her go", "bring
    her backstage"; after a giving verb (lend, give, send, pay, ...) before a thing one gives it is
    the person given to: "lent her money", "offer her advice"
    (:func:`equilens.tasks.inputs.senses.object_after_verb`). Limits: a bare noun object of
    a two-object verb that is not such a thing ("I showed her pictures") reads as a determiner
    ("his pictures"; expansion marks such variants invalid); a capitalised name after "her" is
    treated the same way. Words without roles use their first row.
    """
    rows = lexicon.index[term].rows
    if len(rows) == 1 or not lexicon.roles:
        return rows[0]
    m = _NEXT_WORD.match(text, end)
    word = m.group(1).lower() if m else ""
    is_det = noun_phrase_start(word)
    if is_det and object_after_verb(text, end - len(term), word):
        is_det = False  # "made her sick", "lent her money"
    for r in rows:
        if (lexicon.roles[r] == "determiner") == is_det:
            return r
    return rows[0]


def noun_phrase_start(word: str) -> bool:
    """May the lowercase ``word`` start a noun phrase ("book", "lovely"; not "to", "quickly", "")?"""
    return bool(word) and word not in _NOT_NOUN_PHRASE and not (word.endswith("ly") and word not in _LY_NOUN_PHRASE)


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


def check_ftu(prompts: Sequence[str], lexicons: Sequence[Lexicon | NameTable]) -> FTUResult:
    """Which protected-attribute terms each prompt mentions, per attribute (sorted, unique).

    A :class:`equilens.tasks.inputs.names.NameTable` among ``lexicons`` reports first names (attribute "name").
    One regex scan per lexicon and prompt; only prompts with a hit pay for the guards.
    """
    attrs = [lex.attribute for lex in lexicons]
    if len(set(attrs)) != len(attrs):
        raise ConfigError(f"check_ftu: each attribute may be given once, got {attrs}.")
    names = next((lex for lex in lexicons if isinstance(lex, NameTable)), None)
    counts = dict.fromkeys(attrs, 0)
    freq: dict[str, dict[str, int]] = {a: {} for a in attrs}
    per_prompt: list[dict[str, list[str]]] = []
    for i, text in enumerate(prompts):
        if not isinstance(text, str):
            raise InputDataError(f"check_ftu: prompt {i} is {type(text).__name__}, not text.")
        found: dict[str, list[str]] = {}
        for lex in lexicons:
            if isinstance(lex, NameTable):
                terms = set(lex.scan(text))
            elif lex.detect_pattern.search(text) is None:
                continue
            else:
                terms = {m.term for m in find_mentions(text, lex, names=names)}
            if terms:
                attr = lex.attribute
                found[attr] = sorted(terms)
                counts[attr] += 1
                f = freq[attr]
                for t in terms:
                    f[t] = f.get(t, 0) + 1
        per_prompt.append(found)
    examples = {a: sorted(f, key=lambda t: (-f[t], t))[:5] for a, f in freq.items() if f}
    return FTUResult(per_prompt=per_prompt, counts=counts, prompts_total=len(per_prompt), examples=examples)
