"""Where the shipped lexicons and the first-name table live (``data/lexicons``), below every module that
reads them, so the lexicon and name loaders need not import each other for it."""

from __future__ import annotations

from tasks.config import REPO_ROOT

LEXICON_DIR = REPO_ROOT / "data" / "lexicons"
