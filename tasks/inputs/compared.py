"""Who a variant changes: the people compared, and no one else.

A context compares people ("a male teacher and a female teacher", "Donna and Mark") and may name
others on the way: "a preschool for their son", "slapped his wife", "the coach ... she's worried",
"rules for men and women". A variant that swaps every gender word changes those bystanders too,
and then differs from the original in more than the group of the people compared. So, before
expansion, each attribute mention of a context is read as one of:

* **a person compared** (principal): a name, or a person word that is neither of the next two;
* **a relation**: a lexicon ``relations`` term after a possessive or an indefinite article ("their
  son", "the doctor's wife", "working for an uncle", with up to two words between: "their elderly
  father") or with no determiner after a preposition ("fishing trips with dad"), unless joined to a
  person compared ("a grandson and their grandfather": both compared);
* **the group as a whole**: a lexicon ``generic_plurals`` term with no determiner, number or
  possessive before it ("rules for men and women", "women's rights", "disparaging women");
* **a pronoun** (a lexicon row with a grammatical role).

When the context has principals, relations and whole-group words are bystanders and keep their
words. Without principals the relations are the people compared ("their son or their elderly
father"), and without either the whole-group words are ("Should women earn less?"). A pronoun
follows the person it refers to, read from the people before it: the principals of its group, the
bystanders of its group, and the people of no stated gender ("the coach", "a nurse") in its own
sentence and the one before. Only principals: it changes with them. Only bystanders or people of no
stated gender: it keeps its word ("Two men asked the nurse, and she said ..."). Both: the rules
cannot tell whom it means, and the context is left out with that reason (counted as a lost context,
never guessed). Four readings settle a pronoun before that: a reflexive means the nearest person of
its clause ("the mom raised them by herself"); a pronoun in a clause for a person compared ("For
Dana Price, her sales had dropped and the boss wanted her desk") means that person; a pronoun whose
own clause (after "but", "while", "whereas" or ";") has named a person compared of its group and no
one else ("The Kenyan woman, in contrast, says her piece") means that person, unless a pronoun of
its group was already kept for a bystander; and a pronoun that owns the
people counted ("two patients of hers") is someone else, who keeps the word. Where only pronouns
tell a gender, one after a person of no stated gender beside a pair compared ("the teacher asked an
Asian student and a Black student to stay so that she could talk") cannot be told either. A trade said of the
people compared ("Two women, a Black nurse and a White nurse") names one of them again, not a
bystander. A pronoun before anyone is named follows its group, as in a context of one person. A
pronoun whose group no one before it has means whom an earlier pronoun of its group kept ("the
teacher asked two men to stay so that she could talk. ... When she talked"); with none, after people
compared of another group only, or after a person of no stated gender and then a person compared
opening a clause ("the cop found that Camila had a warrant, they detained him"), it cannot be told.
Nor can a pronoun kept for a relation with a person compared in its sentences ("Reem ... obeying
their husband when he said"): in the variant that gives the person its gender, it means either. A
person of no stated gender joined to a person compared ("My neighbor, who has anxiety, and her
brother") is compared too, told a gender by the pronouns after it, which change with them. A
whole-group word that owns a place ("the women's softball team") leaves out a context with people
compared: a variant would put them where the story has only the other gender. A partner of a person
compared ("his wife") is marked here as a bystander and then follows that person
(:mod:`~equilens.tasks.inputs.partners`).

Whom a pronoun refers to is a question of coreference, which these rules approximate; the rules
follow the seeds' requirement that a counterfactual changes only the protected attribute of the
people whose treatment is compared (Kusner et al. 2017, counterfactual fairness; the BBQ contexts
of Parrish et al. 2022 name their two people in the first sentence and others only in passing).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from equilens.tasks.inputs.gender_bound import gendered_institution
from equilens.tasks.inputs.lexicon import Lexicon, canonical
from equilens.tasks.inputs.mentions import KEPT, SENTENCE_END, Source, plural_term
from equilens.tasks.inputs.partners import partner_owner
from equilens.tasks.inputs.word_lists import OBJECT_NOUNS, PERSON_NOUNS

__all__ = ["Compared", "people_compared"]

_POSSESSIVE = re.compile(
    r"(?:\b(?:my|your|his|her|their|our|its|whose|an?)|['’]s?)(?:\s+[\w-]+){0,2}\s+$", re.IGNORECASE)
_OWNED = re.compile(r"(?:\b(?:my|your|his|her|their|our|whose)|['’]s?)(?:\s+[\w-]+){0,2}\s+$", re.IGNORECASE)
"""A possessive right before a mention, within two words (not "a"/"an", which introduce anyone)."""
_BARE_KIN = re.compile(r"\b(?:with|to|from|for|about|called|calls|call|miss|missed|misses|visit|visited|visits)\s+$",
                       re.IGNORECASE)
"""A kinship word with no determiner after one of these names someone's parent or relative ("fishing
trips with dad", "I called Mom"), never a person compared."""
_PLAIN_PEOPLE = frozenset({"man", "woman", "men", "women", "boy", "girl", "boys", "girls", "guy", "guys", "lady",
                           "ladies", "gentleman", "gentlemen", "male", "female", "males", "females"})
"""Words that say only a person's gender: after a possessive they still name the person ("his female
friend" is a friend), so they are never a tie of their own."""
_AN = re.compile(r"\ban?\s+$", re.IGNORECASE)
"""An indefinite article right before a mention: someone new, not one of the people already named."""
_SOMEONE_NEW = re.compile(r"\ban?\s+(?:[\w-]+\s+){0,2}$", re.IGNORECASE)
"""An indefinite article within two words before a mention ("a Jewish man"): someone new."""
_OWN_VERB = re.compile(r"\s+(?:[a-z]+\s+){1,3}")
"""Between a person and an object pronoun, only the words of one verb phrase ("Alan passed by him"): the
pronoun is not that person, who would be "himself"."""
_ALONE = re.compile(r"\s+(?:who\s+(?:is|was)\s+)?[a-z]+ing(?:\s+(?!and\b|or\b|but\b)[\w-]+){0,3}?\s+alone\b")
"""After a mention, the one the others come to ("approached a man sitting alone at the bar", "a woman
reading alone"): a participle, then "alone" within the clause."""
_COORDINATED = re.compile(r"\s+(?:and|or)\s+(?:my|your|his|her|their|our|an?|the)\s+(?:[\w-]+\s+){0,2}",
                          re.IGNORECASE)
_DETERMINED = re.compile(
    r"\b(?:(?:group|couple|pair|bunch|crowd|line|team)\s+of|the|these|those|a|an|two|three|four|"
    r"five|both|some|many|several|few|other|all|my|your|his|her|their|our|its|of\s+the)\s+(?:(?!of\b)[\w-]+\s+){0,2}$",
    re.IGNORECASE)
"""A determiner up to two words before a plural: people counted or pointed at ("a group of South American
men"), not the group as a whole. Not "this" or "that", which point at one: before a plural "that" opens
a clause ("stating plainly that women are below men"); nor an amount ("flirted with a lot of women"),
whose "of" is not one of the two words."""
_SPOKEN_OF = re.compile(r"\b(?:for|to|than|like|against|about|toward|towards|among)\s+$", re.IGNORECASE)
"""Before a bare plural, a preposition that makes it what is spoken of ("roles reserved for men",
"better than women"), the group as a whole even where the same word names the people compared."""
_CLAUSE_OPENS = re.compile(r"\b(?:after|as|because|when|while|since|until|before|so|and)\s+$", re.IGNORECASE)
"""A subordinate clause about to tell what its subject does: "Steven started yelling after | she was able"."""
_OWNS = re.compile(r"\b(?:two|three|four|five|several|some|many|both|few)\s+(?:[\w-]+\s+)?([a-z]+)\s+of\s+$",
                   re.IGNORECASE)
"""People counted and owned by the pronoun that follows: "two patients of | hers"."""
_SINGULAR_BEFORE = re.compile(r"\b(?:the|a|an|this|that|my|your|our|their|his|her)\s+(?:[\w-]+\s+)?$",
                              re.IGNORECASE)
_PREDICATE = re.compile(r"(?:\b(?:as|is|was|being|became|becomes|remains?|remained)|\()\s*(?:a|an|the)\s+(?:[\w-]+\s+)?$",
                        re.IGNORECASE)
# "(who works as a janitor) ... the Hispanic janitor", "a White woman (a truck driver) ... the White
# truck driver": the noun said of a person names that person again later
_SAID_OF = re.compile(r"(?:\b(?:as|is|was|being|became|becomes|remains?|remained)|\()\s*(?:a|an|the)\s+"
                      r"(?:[\w-]+\s+)?([\w-]+)", re.IGNORECASE)
# "Two women, a Black janitor and a Middle Eastern" (up to the noun): people in apposition
_APPOSED = re.compile(r",\s*(?:a|an|one)\s+[^.,;:!?]*?(?:(?:,|\band)\s+(?:a|an|one)\s+[^.,;:!?]*?)?$", re.IGNORECASE)
_APPOSITION = re.compile(r",\s*(?:a|an|one)\s+[^.,;:!?]*", re.IGNORECASE)
"""Right after a mention, the people it is said to be ("Two women, a Black janitor and a White janitor")."""
_WORD = re.compile(r"[A-Za-z][\w-]*")
# person nouns for several people at once, never the person a singular pronoun means
_COLLECTIVE = frozenset("""people persons children folks staff crew police family couple team group crowd
    audience community population gang""".split())


@dataclass(frozen=True)
class Compared:
    """The mentions with the bystanders marked to keep their place (group + ``KEPT``), and why the
    context is left out when a pronoun's person cannot be told (None when it can)."""

    found: list[Source]
    unclear: str | None = None


def people_compared(text: str, found: Sequence[Source], lexicon: Lexicon) -> Compared:
    """``found`` (from :func:`equilens.tasks.inputs.mentions.sources`) read as the module describes."""
    if not (lexicon.relations or lexicon.generic_plurals):
        return Compared(list(found))
    kinds = [_kind(text, s, lexicon) for s in found]
    said_before = {_word_before(text, o.start) for o, k in zip(found, kinds, strict=True) if k == "principal"}
    for i, s in enumerate(found):  # "a Spanish woman ... my Spanish girlfriend": one person, compared
        if kinds[i] == "relation" and _word_before(text, s.start) in said_before - {""}:
            kinds[i] = "principal"
    for i, s in enumerate(found):  # "a grandson and their grandfather": both are compared
        for j, o in enumerate(found[:i]):
            if kinds[i] == "relation" and kinds[j] in ("relation", "principal") \
                    and _COORDINATED.fullmatch(text, o.end, s.start):
                kinds[i] = kinds[j] = "principal"
    # one word, one person: "their pregnant wife ... the wife's horror" (a bystander again), "a group
    # of Black women ... The Black women were" (the people compared, not the group as a whole), unless
    # a preposition makes it what is spoken of ("Two men ... roles reserved for men")
    words = {k: {canonical(s.surface) for s, kk in zip(found, kinds, strict=True) if kk == k and s.row >= 0}
             for k in ("relation", "principal")}
    kinds = ["relation" if k == "principal" and s.row >= 0 and canonical(s.surface) in words["relation"]
             else "principal" if k == "whole group" and canonical(s.surface) in words["principal"]
             and not _SPOKEN_OF.search(text, max(0, s.start - 12), s.start) else k
             for s, k in zip(found, kinds, strict=True)]
    named = {s.group for s, k in zip(found, kinds, strict=True) if k == "principal" and s.is_name}
    if len(named) == 1 and sum(s.is_name for s in found) >= 2:  # "approached a man sitting alone - they were named Annie ..."
        kinds = ["relation" if k == "principal" and not s.is_name and s.group not in named and _AN.search(text, 0, s.start)
                 and canonical(s.surface) in _PLAIN_PEOPLE else k for s, k in zip(found, kinds, strict=True)]
    alone = [i for i, (s, k) in enumerate(zip(found, kinds, strict=True)) if k == "principal" and not s.is_name
             and canonical(s.surface) in _PLAIN_PEOPLE and _AN.search(text, 0, s.start) and _ALONE.match(text, s.end)]
    approached = found[alone[0]] if len(alone) == 1 and sum(k == "principal" for k in kinds) >= 3 else None
    if approached is not None:  # the one two others approach, named or described
        kinds[alone[0]] = "relation"
    if len(named) == 1 and sum(s.is_name for s in found) >= 2 or approached is not None:
        met = {(s.group, canonical(s.surface)) for s, k in zip(found, kinds, strict=True) if k == "relation"}
        kinds = ["relation" if k == "principal" and not s.is_name and (s.group, canonical(s.surface)) in met
                 and not _SOMEONE_NEW.search(text, max(0, s.start - 40), s.start) else k
                 for s, k in zip(found, kinds, strict=True)]  # "... told the man the rate": the same one
    for promoted in ("relation", "whole group"):
        if "principal" in kinds:
            break
        kinds = ["principal" if k == promoted else k for k in kinds]
    out = list(found)
    for i, (s, kind) in enumerate(zip(found, kinds, strict=True)):
        if kind in ("relation", "whole group"):
            out[i] = replace(s, group=s.group + KEPT)
        elif i and found[i - 1].is_name and found[i - 1].group != s.group and not s.is_name \
                and canonical(s.surface) in _PLAIN_PEOPLE and re.fullmatch(r"\s+", text[found[i - 1].end:s.start]):
            out[i] = replace(s, group=found[i - 1].group)  # BBQ's slip "Zahra Sahraoui man": the word follows the name
    if "principal" not in kinds:  # only pronouns tell the people's gender: they follow it
        return _only_pronouns(text, out, kinds)
    ends = [m.end() for m in SENTENCE_END.finditer(text)]
    principals = [o for o, k in zip(found, kinds, strict=True) if k == "principal"]
    for s, kind in zip(found, kinds, strict=True):  # "a cis woman and a trans student try out for the women's team"
        if kind == "whole group" and (place := gendered_institution(text, s.end)):
            return Compared(out, f"{text[s.start:place]!r}: a variant would put the people compared "
                                 "where the story has only the other gender")
    for i, (s, kind) in enumerate(zip(found, kinds, strict=True)):
        if kind != "pronoun" or s.group.endswith(KEPT) or s.group in lexicon.target_only:
            continue
        if _owner(text, s):  # "Two friends of his, a man and a woman": the friends are compared, not he
            out[i] = replace(s, group=s.group + KEPT)
            continue
        before = [(o, k) for o, k in zip(found, kinds, strict=True) if o.end <= s.start and k != "pronoun"
                  and o.group == s.group and (k == "principal" or not _plural_term(o))]
        principal = any(k == "principal" for _, k in before)
        here = [o for o in principals if _sentence_start(ends, s.start, back=0) <= o.start and o.end <= s.start]
        if len(here) == 1 and here[0].is_name and here[0].group != s.group and s.subject and before \
                and all(k == "principal" for _, k in before) and _CLAUSE_OPENS.search(text, max(0, s.start - 12), s.start) \
                and _contrasted(text, s, principals, ends):
            out[i] = replace(s, group=here[0].group)  # "Steven started yelling after she ..., but Latasha": the text's slip
            continue
        if approached is not None and approached.group == s.group and lexicon.role(s.row) == "object" \
                and all(_OWN_VERB.fullmatch(text, o.end, s.start) for o in here if o.group == s.group):
            out[i] = replace(s, group=s.group + KEPT)  # "Elaine passed by him", "Alan passed by him": the one sitting alone
            continue
        own = _sentence_start(ends, s.start, back=0)
        if lexicon.role(s.row) == "reflexive" and before and before[-1][0].start >= own \
                and not _ungendered_people(text, before[-1][0].end, s.start, found, principals):
            if before[-1][1] != "principal":  # "leaving just the mom to care for the kids by herself"
                out[i] = replace(s, group=s.group + KEPT)
            continue  # a reflexive means the nearest person of its clause
        topic = _topic(text, s, own, principals)
        if topic is not None and topic.group == s.group:
            continue  # "For Ebony Ware, her performance ... put someone else in her role": the one the clause is for
        clause = _clause_start(text, own, s.start)
        kept_before = any(o.group == s.group + KEPT and k == "pronoun" for o, k in zip(out[:i], kinds, strict=False))
        if principal and any(o.start >= clause for o, k in before if k == "principal") \
                and not any(o.start >= clause for o, k in before if k != "principal") \
                and not _ungendered_people(text, clause, s.start, found, principals) and not kept_before:
            continue  # "The Eritrean woman, on the other hand, speaks her mind": the one her clause is about
        others = [o.surface for o, k in before if k != "principal"]
        others += _ungendered_people(text, _sentence_start(ends, s.start, back=1), s.start, found, principals)
        if not before and kept_before:
            out[i] = replace(s, group=s.group + KEPT)  # "the teacher asked two men ... she ... she": the same one
            continue
        if not before and _nearer_compared(text, s, others, principals):
            return Compared(out, f"whom {s.surface!r} refers to cannot be told: no one of its group is named "
                                 "before it, and a person compared of another is named nearer to it")
        if others and _joined_to_compared(text, others[-1], s.start, principals):
            continue  # "My neighbor, who has schizophrenia, and her brother": the neighbor is compared, told a
            # gender by the pronoun, which changes with them (a variant swaps the two)
        if principal and others:
            return Compared(out, f"whom {s.surface!r} refers to cannot be told: one of the people compared, "
                                 f"or {others[-1]!r}, who is not compared")
        kin = [o.surface for o, k in before if k != "principal" and canonical(o.surface) in lexicon.relations
               and not partner_owner(text, out[:(j := found.index(o))], out[j], lexicon)]  # a partner follows
        if kin and any(_sentence_start(ends, s.start, back=1) <= o.start and o.end <= s.start for o in principals):
            return Compared(out, f"whom {s.surface!r} refers to cannot be told in a variant that gives the people "
                                 f"compared its gender: one of them, or {kin[-1]!r}, who is not compared")
        if others:
            out[i] = replace(s, group=s.group + KEPT)
    return Compared(out)


_CLAUSE_SUBJECT = re.compile(r"\b(?:that|because|since|when|after|as|while|if)\s+$", re.IGNORECASE)  # "found that Camila"
_JOINED_TO = re.compile(r"(?:,[^.;]*,)?\s+(?:and|or)\s+(?:my|your|his|her|their|our|the|a|an)\s+(?:[\w-]+\s+){0,2}",
                        re.IGNORECASE)  # "my neighbor(, who ...,) and her brother"
_CLAUSE_BREAK = re.compile(r"(?:[,;]\s*)?\b(?:but|while|whereas)\s+|;\s*", re.IGNORECASE)
_FOR_TOPIC = re.compile(r"(?:^|[.!?;]\s+|\bbut\s+)[Ff]or\s+$")
""""For" opening a sentence or a clause after "but": what follows up to a comma is whom the clause is
for, not an object ("much harder to do this for Ayanna Williams, whose father ...")."""


def _nearer_compared(text: str, pronoun: Source, others: Sequence[str], principals: Sequence[Source]) -> bool:
    """Is a person compared named before the pronoun and nearer to it than the last person not compared
    (``others``), as the subject of a clause ("the cop found that Camila had a warrant, they detained
    him")? With no one not compared, is anyone compared named before it?"""
    last = text.rfind(others[-1], 0, pronoun.start) if others else -1
    return any(o.end <= pronoun.start and (not others or last < o.start and _CLAUSE_SUBJECT.search(text, 0, o.start))
               for o in principals)


def _joined_to_compared(text: str, word: str, before: int, principals: Sequence[Source]) -> bool:
    """Is the person ``word`` (of no stated gender) joined by "and" or "or" to a person compared before
    ``before`` ("my neighbor, who has anxiety, and her brother")?"""
    return any(_JOINED_TO.fullmatch(text, m.end(), o.start) for o in principals
               for m in re.finditer(rf"\b{re.escape(word)}\b", text[:before]))


def _clause_start(text: str, sentence: int, pos: int) -> int:
    """Where the clause holding ``pos`` starts: after the last "but", "while", "whereas" or ";" of
    its sentence before it ("... from the bartender while | the Asian woman told the man her rate")."""
    starts = [m.end() for m in _CLAUSE_BREAK.finditer(text, sentence, pos)]
    return starts[-1] if starts else sentence


def _topic(text: str, pronoun: Source, sentence: int, principals: Sequence[Source]) -> Source | None:
    """The person compared a clause is for ("For Ebony Ware, her performance had been slipping and
    the manager needed to put someone else in her role, but for Latasha Branch, she ..."): the last
    principal after "for" and before a comma, from there to the pronoun with no other such frame in
    between; None when the pronoun's clause opens no such frame."""
    framed = [p for p in principals if sentence <= p.start and p.end <= pronoun.start
              and _FOR_TOPIC.search(text[max(0, p.start - 12):p.start]) and text.startswith(",", p.end)]
    return framed[-1] if framed else None


def _only_pronouns(text: str, out: list[Source], kinds: Sequence[str]) -> Compared:
    """Where only pronouns tell a gender: a pronoun that owns the people counted ("two patients of
    hers", "three students of his") is the one who has them, not one of them, and keeps its word.
    Another pronoun of its group then means that owner or one of the people compared, which the rules
    cannot tell, so the context is left out with the reason. So is a pronoun after a person of no
    stated gender where the context names two or more others ("the teacher asked an Asian student
    and a Black student to stay so that she could talk"): the teacher, or one of the students."""
    owners = {i for i, (s, k) in enumerate(zip(out, kinds, strict=True)) if k == "pronoun" and _owner(text, s)}
    if not owners:
        ends = [m.end() for m in SENTENCE_END.finditer(text)]
        for s, k in zip(out, kinds, strict=True):
            if k != "pronoun":
                continue
            near = _ungendered_people(text, _sentence_start(ends, s.start, back=1), s.start, out, [])
            nouns = [_singular(w.lower()) for w in _WORD.findall(text, 0, s.start)
                     if w.lower() in PERSON_NOUNS and w.lower() not in _COLLECTIVE] if near else []
            compared = {n for n in nouns if nouns.count(n) >= 2}  # "an Asian student and a Black student"
            other = [w for w in near if _singular(w.lower()) not in compared]
            if compared and other:
                return Compared(out, f"whom {s.surface!r} refers to cannot be told: one of the people compared, "
                                     f"or {other[0]!r}, who is not compared")
        return Compared(out)
    for i in owners:
        out[i] = replace(out[i], group=out[i].group + KEPT)
    rest = [s for i, (s, k) in enumerate(zip(out, kinds, strict=True)) if k == "pronoun" and i not in owners
            and any(s.group == out[j].group[:-len(KEPT)] for j in owners)]
    if rest:
        return Compared(out, f"whom {rest[0].surface!r} refers to cannot be told: one of the people compared, "
                             f"or the one they are {out[min(owners)].surface!r}")
    return Compared(out)


def _owner(text: str, pronoun: Source) -> bool:
    """Does the pronoun own people counted right before it ("two patients of | hers")?"""
    m = _OWNS.search(text, max(0, pronoun.start - 50), pronoun.start)
    return m is not None and _plural(m.group(1).lower())


def _contrasted(text: str, pronoun: Source, principals: Sequence[Source], ends: list[int]) -> bool:
    """Is a person of the pronoun's own group set against the sentence's subject later in the same
    sentence ("Tyrone was waiting to speak as she does in every meeting, but Winnie ...")? Then the
    pronoun cannot mean that later person, and a pronoun of the other gender is the text's slip for its
    subject (BBQ templates filled with names of either gender)."""
    end = next((e for e in ends if e > pronoun.end), len(text))
    return any(o.group == pronoun.group and pronoun.end < o.start < end
               and re.search(r"\b(?:but|while|whereas)\s+$", text[max(0, o.start - 10):o.start]) for o in principals)


def _kind(text: str, s: Source, lexicon: Lexicon) -> str:
    if s.group in lexicon.target_only:
        return "no group"  # "the parent", "their": no gender stated, so no one's gender to change
    if s.is_name or s.row < 0:
        return "principal"
    if lexicon.role(s.row) is not None:
        return "pronoun"
    word = canonical(s.surface)
    if word in lexicon.relations and (_POSSESSIVE.search(text, max(0, s.start - 40), s.start)
                                      or _BARE_KIN.search(text, max(0, s.start - 16), s.start)):
        return "relation"  # "their son", "fishing trips with dad"
    if word not in _PLAIN_PEOPLE and _OWNED.search(text, max(0, s.start - 40), s.start):
        return "relation"  # "our waiter", "her landlady": someone named by their tie to someone else
    if word in lexicon.generic_plurals and not _DETERMINED.search(text, max(0, s.start - 30), s.start):
        return "whole group"
    return "principal"


def _word_before(text: str, start: int) -> str:
    """The capitalised word right before ``start`` ("Spanish" in "my Spanish girlfriend"), else ""."""
    m = re.search(r"\b([A-Z][\w-]*)\s+$", text[max(0, start - 30):start])
    return m.group(1) if m else ""


def _sentence_start(ends: list[int], pos: int, back: int) -> int:
    """The start of the sentence ``back`` sentences before the one holding ``pos``."""
    starts = [0] + [e for e in ends if e <= pos]
    return starts[max(0, len(starts) - 1 - back)]


def _ungendered_people(text: str, start: int, end: int, found: Sequence[Source],
                       principals: Sequence[Source]) -> list[str]:
    """One person of no stated gender each ("the coach", "a nurse", "my neighbor") between ``start``
    and ``end``: a singular person noun after a determiner, not the head of a gendered mention ("a
    female teacher") nor inside one, nor said of a person compared ("works as a janitor", "Two
    women, a Black janitor and a ...")."""
    said_of = {m.group(1).lower() for m in _SAID_OF.finditer(text, 0, end)}
    for p in principals:  # "Two women, a Black janitor and a Caucasian janitor, ... The Black janitor"
        apposed = _APPOSITION.match(text, p.end)
        said_of |= {w.lower() for w in _WORD.findall(apposed.group())} & PERSON_NOUNS if apposed else set()
    out = []
    for m in _WORD.finditer(text, start, end):
        if m.group()[0].isupper() and SENTENCE_END.search(text, max(0, m.start() - 4), m.start()) is None \
                and m.start() > 0:
            continue  # "the Native American just watched": a people's name, said of someone compared
        word = m.group().lower()
        if word not in PERSON_NOUNS or word in _COLLECTIVE or _plural(word) or word in said_of:
            continue
        follows = _WORD.match(text, m.end() + 1)
        if follows and (follows.group().lower() in OBJECT_NOUNS or follows.group().lower() in PERSON_NOUNS):
            continue  # "a designer dress", "his line cook parents": a modifier, not a person
        if any(s.start <= m.start() < s.end or 0 <= m.start() - s.end <= 1 or 0 <= s.start - m.end() <= 1
               for s in found):  # "a female teacher", "an African American woman"
            continue
        if _PREDICATE.search(text, max(0, m.start() - 30), m.start()):
            continue  # "(who works as a janitor)", "who is a nurse": said of someone already there
        if any(_APPOSED.match(text[p.end:m.start()]) for p in principals if p.end <= m.start()):
            continue
        if _SINGULAR_BEFORE.search(text, max(0, m.start() - 30), m.start()):
            out.append(text[m.start():m.end()])
    return out


def _plural_term(s: Source) -> bool:
    """A plural attribute term ("sons", "women"), which a singular pronoun cannot refer to."""
    return s.row >= 0 and plural_term(canonical(s.surface))


def _singular(word: str) -> str:
    """A person noun's singular ("students" -> "student"), itself when it is one."""
    return next((word[:len(word) - len(end)] + again for end, again in (("ies", "y"), ("es", ""), ("s", ""))
                 if word.endswith(end) and word[:len(word) - len(end)] + again in PERSON_NOUNS), word)


def _plural(word: str) -> bool:
    return _singular(word) != word
