"""Text as a reader sees it, for rules that look for words: what the eye cannot see is dropped and
letters that look alike are read as one.

An answer can hide "Ignore the question" from a word rule and not from a person: a zero-width space
inside a word ("Ign\\u200bore"), a variation selector (U+FE0F) or a combining grapheme joiner
(U+034F) between letters, full-width or styled letters ("Ｉｇｎｏｒｅ"), or letters of another
script that look Latin (Cyrillic "Іgnоrе"). :func:`as_seen` undoes all of them:

1. every **default-ignorable code point** (Unicode's ``Default_Ignorable_Code_Point`` property:
   format characters, variation selectors, the combining grapheme joiner, fillers, tags) and every
   other format character (category Cf) is dropped;
2. **NFKC** folds compatibility forms (full-width, mathematical styled letters, ligatures);
3. each remaining non-ASCII letter that is **confusable** with a Latin letter (Unicode TR39's
   confusables data, as the maintained ``confusable_homoglyphs`` package ships it) is read as that
   letter: the one its Unicode name says where the name ends in one Latin letter ("CYRILLIC SMALL
   LETTER O" is o), else the library's Latin homoglyph ("GREEK SMALL LETTER ALPHA" is a).

What a rule then matches is what a reader would read; the text stored and shown is never changed.
"""

from __future__ import annotations

import functools
import unicodedata

DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)
"""The ranges of Unicode's Default_Ignorable_Code_Point property (DerivedCoreProperties.txt)."""


def ignorable(c: str) -> bool:
    """Does a reader not see ``c`` (a default-ignorable code point or a format character)?"""
    cp = ord(c)
    return unicodedata.category(c) == "Cf" or any(lo <= cp <= hi for lo, hi in DEFAULT_IGNORABLE)


@functools.lru_cache(maxsize=4096)
def latin_lookalike(c: str) -> str:
    """The Latin letter ``c`` reads as, or ``c`` itself (ASCII, or nothing Latin looks like it)."""
    if c.isascii() or not c.isalpha():
        return c
    name = unicodedata.name(c, "")
    last = name.rsplit(" ", 1)[-1]
    if len(last) == 1 and "A" <= last <= "Z" and " LETTER " in name:
        return last.lower() if " SMALL " in name or c.islower() else last
    from confusable_homoglyphs import confusables

    found = confusables.is_confusable(c, preferred_aliases=["latin"], greedy=True) or []
    for entry in found:
        for glyph in entry.get("homoglyphs", []):
            letter = glyph.get("c", "")
            if len(letter) == 1 and letter.isascii() and letter.isalpha():
                return letter
    return c


def as_seen(text: str) -> str:
    """``text`` as a reader sees it (see the module docstring)."""
    visible = "".join(c for c in text if not ignorable(c))
    folded = unicodedata.normalize("NFKC", visible)
    return folded if folded.isascii() else "".join(latin_lookalike(c) for c in folded)
