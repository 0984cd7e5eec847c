"""What a change of gender cannot carry into a variant of a story.

* A pregnancy (:data:`PREGNANCY`): a male variant would change what happens, so it is refused.
* Clothes and features the story gives a person of one sex (:func:`worn`): "one woman was dressed in a
  designer dress" made male reads as a man in a dress, and "one man had a beard" made female as a
  bearded woman, which changes who the person is; such a variant is refused (the context is left out
  for that variant, with the reason), while a neutral variant keeps them.
* A boy or girl at college is a student, not a child: the neutral word for them there is "student"
  (:func:`student_word`; "my roommates, a Namibian boy and a Palestinian boy" -> "... student").
* An institution named by a group's possessive ("the women's softball team", "the men's restroom",
  :func:`gendered_institution`): a neutral variant ("the people's softball team") would change what it is.
"""

from __future__ import annotations

import re

PREGNANCY = re.compile(r"\b(?:pregnan\w*|maternity|trimester|breast-?fe\w+|gave\s+birth|miscarri\w+|"
                       r"expecting\s+(?:a|her|their)\s+(?:baby|child|first))", re.IGNORECASE)
PREGNANT_MALE = "a pregnancy in the context: a male variant would change what happens"
_WORN = {  # (from, to): what the story gives a person of the first sex, with a determiner or verb before it
    ("female", "male"): re.compile(r"\b(?:a|an|the|her|his|their|wore|wearing|in)\s+(?:[\w-]+\s+){0,2}?"
                                   r"(?:dress|dresses|sundress(?:es)?|skirts?|miniskirts?|pantsuits?|gowns?|blouses?|bikinis?|lipstick|"
                                   r"high\s+heels|stilettos?)\b(?!\s+code)",
                                   re.IGNORECASE),
    ("male", "female"): re.compile(r"\b(?:beards?|bearded|mustaches?|moustaches?)\b", re.IGNORECASE),
}


def worn(text: str, group: str, target: str) -> str | None:
    """Why a person of ``group`` cannot become ``target`` in ``text`` (what the story has them wear or
    grow), or None."""
    rule = _WORN.get((group, target))
    found = rule.search(text) if rule is not None else None
    if found is None:
        return None
    return (f"{found.group(0)!r} in the context goes with a {group} person: a {target} variant would change "
            "who they are")


# What a group's possessive names as an institution ("the women's softball team", "the men's
# restroom"): a neutral variant ("the people's softball team") would change what it is.
_INSTITUTIONS = frozenset("""
    team teams league leagues squad club clubs college colleges university school schools division
    championship championships tournament cup event events restroom restrooms bathroom bathrooms room
    rooms toilet toilets locker shelter shelters prison prisons ward clinic magazine magazines clothing
    apparel wear section department choir chorus dormitory dorm hostel
""".split())
_POSSESSIVE_THEN = re.compile(r"['’]s?((?:\s+[a-z-]+){1,3})")


def gendered_institution(text: str, end: int) -> int | None:
    """The end of the institution noun when a group word ending at ``end`` is its possessive
    ("women's softball team"), within three words; None otherwise."""
    m = _POSSESSIVE_THEN.match(text, end)
    if not m:
        return None
    pos = m.start(1)
    for word in m.group(1).split():
        pos = text.index(word, pos) + len(word)
        if word in _INSTITUTIONS:
            return pos
    return None


_COLLEGE = re.compile(r"\b(?:college|university|campus|dorm|dormitory|roommates?|freshman|freshmen|sophomores?|"
                      r"semester|fraternity|sorority|high[\s-]school|admitted|admissions?|GPA|SATs?)\b", re.IGNORECASE)
"""A setting of students past childhood: college, or a high school and its admissions ("kids from my
high school got into Yale - a Black boy and ...": a student, not a child)."""


def student_word(word: str, text: str) -> str | None:
    """The neutral word for ``word`` ("boy", "girls") where ``text`` is set at college or high school: "student(s)";
    None elsewhere (a child stays a child)."""
    if word in ("boy", "girl") and _COLLEGE.search(text):
        return "student"
    if word in ("boys", "girls") and _COLLEGE.search(text):
        return "students"
    return None
