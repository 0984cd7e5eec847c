"""Typed exceptions. Input checks raise these, never ``assert``.

Every :class:`EquilensError` carries a one-paragraph message meant for a person; the CLI prints it
and exits non-zero without a traceback.
"""

from __future__ import annotations

import json


class EquilensError(Exception):
    """Base class of every error equilens reports to a user."""

    exit_code: int = 2


class ConfigError(EquilensError):
    """A run config is missing, malformed, or has unknown keys or wrong types."""


class InputDataError(EquilensError):
    """A prompt, response, lexicon or spec file cannot be read as expected."""


class RegistryError(EquilensError):
    """An unknown or duplicate name in a registry."""


class ValidationFailed(EquilensError):
    """A great-expectations suite failed between two stages."""

    exit_code = 3


class StorageError(EquilensError):
    """The DuckDB file cannot be opened, locked, or written."""


class DiskFullError(StorageError):
    """The disk holding the DuckDB file has no room for a write (DuckDB rolled the write back)."""


class ProviderError(EquilensError):
    """An LLM provider is misconfigured (not a per-call failure: those are recorded per row)."""


class ModelLoadError(EquilensError):
    """A scorer or language model cannot be loaded, or its labels do not match the config."""


def clipped(text: str, limit: int = 300) -> str:
    """``text`` at most about ``limit`` characters long, for a message that quotes it: cut at the last
    space within the limit (a word is not split), "..." saying it goes on, and a full stop where it
    ends without one, so the message's next sentence stands apart."""
    text = " ".join(text.split())
    if len(text) > limit:
        head = text[:limit]
        text = (head.rsplit(" ", 1)[0] if " " in head else head) + " ..."
    return text if text.endswith((".", "!", "?", "...")) else text + "."


def json_error(err: json.JSONDecodeError) -> str:
    """A JSON parse error in words, with where it is: "Expecting ',' delimiter at character 17"; a line
    break or tab written raw inside a string says how to write it."""
    what = err.msg.removesuffix(" at")
    text = f"{what} at character {err.pos + 1}"
    if what.startswith("Invalid control character"):
        text += ": a line break or tab inside a string is written \\n or \\t"
    return text


def json_kind(value: object) -> str:
    """What a message calls a value read from JSON or YAML, in the words of those formats: "a string",
    "a number", "true", "a list", "an object", "null" (another Python value: its type, with "a")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return with_article(type(value).__name__)


def with_article(word: str) -> str:
    """``word`` after its indefinite article, by its first letter: "a task", "an outcome"."""
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"
