"""Where the shipped lexicons and the first-name table live (``data/lexicons``), below every module that
reads them, so the lexicon and name loaders need not import each other for it."""

from __future__ import annotations

from pathlib import Path

from equilens.tasks.shipped import DATA_DIR

LEXICON_DIR = DATA_DIR / "lexicons"


def read_words(path: Path) -> frozenset[str]:
    """The lowercase words of the word list at ``path`` (``#`` lines are comments)."""
    words = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            words += line.lower().split()
    return frozenset(words)


PERSON_NOUNS = read_words(LEXICON_DIR / "person_nouns.txt")
OBJECT_NOUNS = read_words(LEXICON_DIR / "object_nouns.txt")
STOPWORDS = read_words(LEXICON_DIR / "stopwords.txt")
NATIONAL_ORIGINS = read_words(LEXICON_DIR / "national_origins.txt")
