"""Where the shipped lexicons and the first-name table live (``data/lexicons``), below every module that
reads them, so the lexicon and name loaders need not import each other for it."""

from __future__ import annotations

from equilens.tasks.shipped import DATA_DIR

LEXICON_DIR = DATA_DIR / "lexicons"


def _read_words(name: str) -> frozenset[str]:
    """The lowercase words of a word list in ``data/lexicons`` (``#`` lines are comments)."""
    words = []
    for line in (LEXICON_DIR / name).read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            words += line.lower().split()
    return frozenset(words)


PERSON_NOUNS = _read_words("person_nouns.txt")
OBJECT_NOUNS = _read_words("object_nouns.txt")
STOPWORDS = _read_words("stopwords.txt")
NATIONAL_ORIGINS = _read_words("national_origins.txt")
