"""English grammar around a swapped term: the article before it, the verb agreement after a
subject pronoun ("he loves" / "they love"), the Spanish ending of an ethnonym beside a gendered
word ("a Latina woman") and the capital of a colour word for people ("a Black man and a white woman"),
shared by expansion and validation."""

from __future__ import annotations

import re

ARTICLE_BEFORE = re.compile(r"(?<![\w'])(an?)(\s+)$", re.IGNORECASE)
_BE_HAVE_DO = {"is": "are", "was": "were", "has": "have", "does": "do", "isn't": "aren't",
               "wasn't": "weren't", "hasn't": "haven't", "doesn't": "don't", "are": "are", "were": "were",
               "have": "have", "do": "do", "aren't": "aren't", "weren't": "weren't", "haven't": "haven't",
               "don't": "don't"}
ADVERBS = ("always never often usually also really just still only sometimes rarely then even "
           "probably actually already finally certainly clearly simply seldom frequently generally "
           "mostly typically suddenly quickly slowly immediately constantly definitely truly barely "
           "hardly nearly almost apparently obviously")
AFTER_SUBJECT = re.compile(
    rf"((?:\s+(?:{'|'.join(ADVERBS.split())}))*)(\s+)([a-z]+n['’]t|[a-z]+)\b"
    rf"|(['’])s\b(?=((?:\s+(?:{'|'.join(ADVERBS.split())}))*\s+([a-z]+)\b)?)",
    re.IGNORECASE,
)
_PARTICIPLES = frozenset("""
    been got gotten had done gone seen taken given become come won told heard found brought bought
    thought kept met paid sent spent written eaten driven grown shown flown fallen forgotten begun
    chosen spoken stolen worn ridden risen sung swum drunk understood taught caught fought sold held
    """.split())
"""Past participles that follow "has", never "is", in "he's been", "she's taught"."""
_STATES = frozenset("""
    tired worried married excited interested scared retired qualified surprised bored annoyed confused
    disabled engaged divorced pleased concerned convinced determined disappointed embarrassed frustrated
    satisfied stressed supposed used allowed involved prepared related located based employed unemployed
    dedicated committed considered gifted talented experienced educated skilled blessed obsessed depressed
    exhausted impressed amazed shocked terrified frightened relieved ashamed overwhelmed motivated
    exposed injured hurt tied stuck lost booked scheduled expected required needed licensed certified
    """.split())
"""Words in -ed (and a few others) that say a state after "is": "she's worried", "he's married"."""


def plural_contraction(after: re.Match[str]) -> str:
    """What "'s" after a subject becomes after "they" (``after``: an :data:`AFTER_SUBJECT` match of
    the contraction): "'ve" where it says "has" ("he's applied", "she's been"), else "'re" ("he's
    worried"). The words after it are only looked at, never consumed."""
    low = (after.group(6) or "").lower()
    has = low in _PARTICIPLES or (low.endswith("ed") and len(low) > 3 and low not in _STATES)
    return after.group(4) + ("ve" if has else "re")
_NOT_VERBS = frozenset("""
    always perhaps thus nevertheless unless plus as us yes is was has does this his hers its
    besides sometimes news less across whereas whose towards afterwards nonetheless
""".split())
_NO_E_DROP = frozenset("dies lies ties vies".split())


def base_form(verb: str) -> str | None:
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


_ETHNONYM = re.compile(r"\b(Latin|Chican)([oax])\b")
ETHNONYM_BEFORE = re.compile(r"\b(Latin|Chican)([oax])([\s-]+)$")
GENDERED_ENDING = {"female": "a", "male": "o", "neutral": "x"}
_WOMEN = r"wom[ae]n|girls?|lad(?:y|ies)|gals?|mothers?|wi(?:fe|ves)|daughters?|sisters?|aunts?|nieces?|females?"
_MEN = r"m[ae]n|boys?|guys?|gentlem[ae]n|fathers?|husbands?|sons?|brothers?|uncles?|nephews?|males?"
"""The words for women and for men that give a gendered race term beside them its ending."""
_FEMALE_AFTER = re.compile(rf"[\s-]+(?:{_WOMEN})\b", re.IGNORECASE)


_APPOSITION = re.compile(r",\s*(?:one\s+)?(?:a|an)\s+[^.,;:!?]*", re.IGNORECASE)
_FEMALE_APPOSED = re.compile(rf"\b(?:{_WOMEN})\s*" + _APPOSITION.pattern + "$", re.IGNORECASE)
"""Women said to be the people of an apposition that the mention is in ("Two women, a Black clerk and a | ...")."""


def ethnonym_agreeing(new: str, text: str, end: int, start: int | None = None) -> str:
    """A race term that is gendered in Spanish agrees with the person it describes: "Latina" before
    "woman" ("a Black woman" -> "a Latina woman") or in an apposition to women (``start``: where the
    term begins; "Two women, a Black clerk and ..." -> "Two women, a Latina clerk and ..."), "Latino"
    for anyone else."""
    m = re.fullmatch(r"(Latin|Chican)([oa])", new, re.IGNORECASE)
    if not m:
        return new
    apposed = start is not None and _FEMALE_APPOSED.search(text, max(0, start - 160), start) is not None
    return m.group(1) + ("a" if _FEMALE_AFTER.match(text, end) or apposed else "o")


def apposed_ethnonyms(text: str, people: list[tuple[int, str]]) -> str:
    """``text`` with a gendered ethnonym said of people in apposition agreeing with their new gender
    ("Two men, one an Asian chemist and the other a Latino clerk" -> "Two women, ... a Latina clerk").
    ``people``: (end of a people word the variant changes, its new group). One letter changes for
    one, so every offset into ``text`` still holds."""
    for end, group in people:
        apposed = _APPOSITION.match(text, end)
        for m in _ETHNONYM.finditer(text, end, apposed.end()) if apposed else ():
            text = text[:m.start(2)] + GENDERED_ENDING.get(group, m.group(2)) + text[m.end(2):]
    return text


_OWN_GENDER = re.compile(rf"[\s-]+(?:{_MEN}|{_WOMEN})\b", re.IGNORECASE)


def same_person_ethnonym(text: str, vtext: str) -> str:
    """"The Latino line cook" names a Latino person of the context again: when the variant gave the
    Latino people of the context a new ending ("a Latina woman", "the other a Latina cashier"), the
    later mentions agree too (``vtext``, the variant of ``text``), except one before a gendered word,
    which has its own. Where the context's endings differ ("a Latino boy and a Latina girl"), or the
    variant gave two new ones, each mention keeps its own."""
    then = {m.group(2) for m in _ETHNONYM.finditer(text)}
    if len(then) != 1:
        return vtext
    old, = then
    new = {m.group(2) for m in _ETHNONYM.finditer(vtext)} - then
    if len(new) != 1:
        return vtext
    ending, = new
    return _ETHNONYM.sub(lambda m: m.group(1) + (ending if m.group(2) == old and not _OWN_GENDER.match(vtext, m.end())
                                                 else m.group(2)), vtext)


_NOUN_AFTER = re.compile(r"[\s-]+([a-z]+(?:\s+[a-z]+)?)")


def later_ethnonyms(vtext: str) -> str:
    """In a race variant, a later "Latino" of no gender of its own ("The Latino physics teacher used
    her card") names a person the variant already called "Latina": one with the same words after it
    ("a Latina physics teacher"), or anyone where every earlier such term is "Latina" and no "Latino"
    in the text has a gender of its own ("a White girl and a Latina girl. The Latino student ...").
    It takes "Latina"; any other mention keeps its ending."""
    found = list(_ETHNONYM.finditer(vtext))
    own = [m for m in found if _OWN_GENDER.match(vtext, m.end())]
    only_women = not any(m.group(2) == "o" for m in own)
    out, pos = [], 0
    for i, m in enumerate(found):
        if m.group(2) != "o" or m in own:
            continue
        noun = _NOUN_AFTER.match(vtext, m.end())
        before = found[:i]
        same = noun is not None and any(b.group(2) == "a" and (n := _NOUN_AFTER.match(vtext, b.end())) is not None
                                        and n.group(1) == noun.group(1) for b in before)
        if same or (before and only_women and all(b.group(2) == "a" for b in before)):
            out += [vtext[pos:m.start(2)], "a"]
            pos = m.end(2)
    return "".join(out) + vtext[pos:]


_COLOUR = re.compile(r"\b(?:white|black)\b", re.IGNORECASE)
_OPENS_SENTENCE = re.compile(r"(?:^|[.!?:;\"“(]\s*|\n\s*)$")


def colour_case(new: str, text: str, start: int, said: list[str]) -> str:
    """``new``, the replacement of the race mention at ``text[start:]``, with a colour word first
    ("white", "black") written as the prompt writes its colour words for people (``said``: the
    surfaces of its race mentions inside sentences): "a Black man and a white woman" -> "a white
    man and a Black woman" (each word as the writer spells it), "an Asian man ... a white woman" ->
    "a white man ... an Asian woman". The same word if written, else the other colour; a prompt
    with no colour word inside a sentence keeps ``new``'s case, and so does a sentence's first word."""
    word, rest = new[:5], new[5:]
    if not _COLOUR.fullmatch(word) or new.isupper() or _OPENS_SENTENCE.search(text, max(0, start - 4), start):
        return new
    colours = [s for s in said if _COLOUR.fullmatch(s)]
    model = next((s for s in colours if s.lower() == word.lower()), colours[0] if colours else "")
    if not model:
        return new
    return (word.capitalize() if model[0].isupper() else word.lower()) + rest
