"""The people a person compared courts or marries, who follow that person's change.

A context that compares people may say whom one of them loves: "the dad ... slapped his wife", "The
African American woman flirted with a lot of men", "each of his wives". The partner is not one of the
people compared, but a variant that changes the person and keeps the partner's word turns a couple
into another kind of couple ("the mom ... slapped her wife"), which changes the story beyond the
group compared. So a partner (a lexicon ``partners`` term kept as a bystander by
:mod:`~equilens.tasks.inputs.compared`) follows its person: of the person's own group before the
change, it takes the person's new group ("her wife" -> "his husband"); of the other group, it takes
the person's old one ("his wife" -> "her husband", "a woman flirted with men" -> "a man flirted with
women"). Where the person becomes a group that states no gender ("neutral"), the partner keeps its
word ("the parent ... slapped their wife"), as it does where its person is not compared.

A partner belongs to a person compared when it is owned by that person, through a pronoun that
changes with them or a possessive ("his first wife", "the mom's wife"), or when it is courted by them
in the same clause ("Tamika flirted with a lot of women", "married to a man"). A pronoun kept for the
partner then follows it too ("slapped his wife, and she cried" -> "slapped her husband, and he
cried"): the partner is the one bystander of its group before that pronoun.

Counterfactual fairness changes the protected attribute of the people compared and keeps what does
not descend from it (Kusner et al. 2017); a partner's gender is said relative to the person's, as the
readers of the variants judge it, so the relation, not the partner's word, is what is kept.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from equilens.tasks.inputs.lexicon import Lexicon, canonical
from equilens.tasks.inputs.mentions import KEPT, SENTENCE_END, Source

__all__ = ["partner_group", "partner_owner", "partners_of"]

_OWNED_BY = re.compile(r"^(?:['’]s?)?\s+(?:[\w-]+\s+){0,2}$")
"""Between an owner and its partner: a possessive's ending, then up to two words ("his first | wife")."""
_COURTS = re.compile(
    r"\b(?:flirt(?:s|ed|ing)?\s+with|dat(?:es|ed|ing)|married\s+to|marr(?:y|ies|ying)|engaged\s+to|"
    r"attracted\s+to|in\s+love\s+with|hit(?:s|ting)?\s+on|sle(?:pt|eps?|eping)\s+with|"
    r"kiss(?:es|ed|ing)?|seduc(?:e|es|ed|ing)|court(?:s|ed|ing)?)\s+"
    r"(?:(?:a\s+lot\s+of|lots\s+of|a\s+few|all\s+the|many|several|some|other|the|a|an|two|three|every)\s+)*"
    r"(?:[\w-]+\s+)?$", re.IGNORECASE)
"""A courting verb and the words of its object up to the partner ("flirted with a lot of | men")."""
_THEIRS = re.compile(r"\btheir\s+(?:[\w-]+\s+){0,2}$", re.IGNORECASE)
"""A plural possessive before a partner: the partners of the people compared before it, if they share a group."""
_CLAUSE = re.compile(r"[.!?;]|,\s*(?:but|while|whereas|and)\b", re.IGNORECASE)
_POSSESSIVE_PRONOUNS = frozenset({"his", "her"})


def partners_of(text: str, found: Sequence[Source], lexicon: Lexicon) -> dict[int, str]:
    """{start of a partner mention: the group of the person compared it belongs to} over ``found``
    (mentions as :func:`~equilens.tasks.inputs.compared.people_compared` marks them)."""
    if not lexicon.partners:
        return {}
    out: dict[int, str] = {}
    for i, s in enumerate(found):
        owner = partner_owner(text, found[:i], s, lexicon)
        if owner is None:
            continue
        out[s.start] = owner
        later = [o for o in found[i + 1:] if o.group == s.group and lexicon.role(o.row) is not None]
        others = [o for o in found[i + 1:] if o.group == s.group and lexicon.role(o.row) is None]
        for o in later:  # "slapped his wife, and she cried": she is the wife, the one bystander of her group
            if not any(b.start < o.start for b in others):
                out[o.start] = owner
    return out


def partner_group(partner: str, owner: str, mapping: Mapping[str, str], lexicon: Lexicon) -> str:
    """The group a partner of group ``partner`` takes in the variant ``mapping``, where its person
    had group ``owner``: the same relation to the person's new group (see the module doc)."""
    stated = [g for g in lexicon.groups if g not in lexicon.target_only]
    new = mapping.get(owner, owner)
    if len(stated) != 2 or new == owner or new not in stated or {partner, owner} - set(stated):
        return partner
    return new if partner == owner else owner


def partner_owner(text: str, before: Sequence[Source], partner: Source, lexicon: Lexicon) -> str | None:
    """The group of the person compared who owns or courts ``partner`` (a bystander's mention, after
    the mentions ``before``), None when it is no partner or no one compared owns it."""
    if not partner.group.endswith(KEPT) or partner.row < 0 or lexicon.role(partner.row) is not None \
            or canonical(partner.surface) not in lexicon.partners:
        return None
    people = [o for o in before if not o.group.endswith(KEPT) and o.group not in lexicon.target_only]
    theirs = _THEIRS.search(text, max(0, partner.start - 40), partner.start)
    if theirs and not any(o.end > theirs.start() for o in before if o.group not in lexicon.target_only):
        sentence = max((m.end() for m in SENTENCE_END.finditer(text, 0, theirs.start())), default=0)
        groups = {o.group for o in people if o.start >= sentence}
        return groups.pop() if len(groups) == 1 else None  # "two guys talking about their wives": theirs
    if not people:
        return None
    last = people[-1]
    between = text[last.end:partner.start]
    if _OWNED_BY.match(between) and (canonical(last.surface) in _POSSESSIVE_PRONOUNS or between[:1] in "'’"):
        return last.group  # "his first wife", "the mom's wife"
    if before[-1] is not last or _CLAUSE.search(between) or not _COURTS.search(between):
        return None  # someone kept stands between them, or no courting verb joins them
    return last.group  # "Tamika flirted with a lot of women"
