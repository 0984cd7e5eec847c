"""What a change of gender cannot carry into a variant of a story.

* A pregnancy (:data:`PREGNANCY`): a male variant would change what happens, so it is refused.
* An institution named by a group's possessive ("the women's softball team", "the men's restroom",
  :func:`gendered_institution`): a neutral variant ("the people's softball team") would change what it is.
"""

from __future__ import annotations

import re

PREGNANCY = re.compile(r"\b(?:pregnan\w*|maternity|trimester|breast-?fe\w+|gave\s+birth|miscarri\w+|"
                       r"expecting\s+(?:a|her|their)\s+(?:baby|child|first))", re.IGNORECASE)
PREGNANT_MALE = "a pregnancy in the context: a male variant would change what happens"
# What a group's possessive names as an institution ("the women's softball team", "the men's
# restroom"): a neutral variant ("the people's softball team") would change what it is.
_INSTITUTIONS = frozenset("""
    team teams league leagues squad club clubs college colleges university school schools division
    championship championships tournament cup event events restroom restrooms bathroom bathrooms room
    rooms toilet toilets locker shelter shelters prison prisons ward clinic magazine magazines clothing
    apparel wear section department choir chorus dormitory dorm hostel
""".split())
_POSSESSIVE_THEN = re.compile(r"['’]s((?:\s+[a-z-]+){1,3})")


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
