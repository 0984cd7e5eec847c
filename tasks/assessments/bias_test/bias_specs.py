"""Bias specifications (BiasTestGPT format): two social groups and two attributes per bias.

A spec file is JSON: ``{"biases": [bias, ...]}``, a bare list of biases, or one bias. A bias is::

    {"name": "Career_Family_vs_Male_Female",
     "social_groups": {"male": ["he", "man", ...], "female": ["she", "woman", ...]},
     "attributes": {"career": ["office", ...], "family": ["home", ...]},
     "source": "optional free text",
     "templates": ["[T] thinks about [A].", ...]}

``templates`` (optional) are the sentence frames of the masked-LM probability tests (LPBS, CBS;
Kurita et al. 2019): ``[T]`` takes a social-group term, ``[A]`` an attribute term, exactly once
each. Without them :data:`DEFAULT_TEMPLATES` are used.

Order matters: the *stereotyped* associations are group 1 with attribute 1 and group 2 with
attribute 2. Term ``i`` of group 1 is swapped with term ``i`` of group 2 (wrapping around when
the lists differ in length), so list parallel terms in the same position (he/she, man/woman).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any

from equilens.tasks.errors import InputDataError, json_kind

_KEYS = {"name", "social_groups", "attributes", "source", "templates", "description"}

DEFAULT_TEMPLATES: tuple[str, ...] = (
    "[T] thinks about [A].",
    "[T] talks about [A].",
    "[T] is associated with [A].",
    "[T] cares about [A].",
)
"""Frames for LPBS/CBS when a spec lists none: neutral verbs that take a noun or adjective."""


@dataclass(frozen=True)
class BiasSpec:
    name: str
    group_names: tuple[str, str]
    groups: tuple[tuple[str, ...], tuple[str, ...]]
    attribute_names: tuple[str, str]
    attributes: tuple[tuple[str, ...], tuple[str, ...]]
    source: str = ""
    templates: tuple[str, ...] = ()
    """LPBS/CBS frames with ``[T]`` and ``[A]``; empty means :data:`DEFAULT_TEMPLATES`."""

    @property
    def probability_templates(self) -> tuple[str, ...]:
        return self.templates or DEFAULT_TEMPLATES

    def counterpart(self, term: str) -> tuple[int, str] | None:
        """(group index of ``term``, the parallel term of the other group), or None if not a group term."""
        low = term.lower()
        for g in (0, 1):
            terms = [t.lower() for t in self.groups[g]]
            if low in terms:
                other = self.groups[1 - g]
                return g, other[terms.index(low) % len(other)]
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "social_groups": dict(zip(self.group_names, map(list, self.groups), strict=True)),
            "attributes": dict(zip(self.attribute_names, map(list, self.attributes), strict=True)),
            "source": self.source,
            **({"templates": list(self.templates)} if self.templates else {}),
        }


def _terms(where: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise InputDataError(f"{where} must be a non-empty list of terms.")
    out: list[str] = []
    for i, t in enumerate(value):
        if not isinstance(t, str) or not t.strip():
            raise InputDataError(f"{where}[{i}] must be a non-empty string, got {t!r}.")
        term = re.sub(r"\s+", " ", t.strip())
        if term.lower() in (o.lower() for o in out):
            raise InputDataError(f"{where} lists {term!r} twice.")
        out.append(term)
    return tuple(out)


def _pair(where: str, value: Any) -> tuple[tuple[str, str], tuple[tuple[str, ...], tuple[str, ...]]]:
    if not isinstance(value, dict) or len(value) != 2:
        n = len(value) if isinstance(value, dict) else type(value).__name__
        raise InputDataError(f"{where} must be an object with exactly two named term lists, got {n}.")
    (n1, t1), (n2, t2) = value.items()
    return (str(n1), str(n2)), (_terms(f"{where}.{n1}", t1), _terms(f"{where}.{n2}", t2))


def parse_bias(raw: Any, where: str = "bias") -> BiasSpec:
    """One bias object -> :class:`BiasSpec`; ``where`` prefixes error messages."""
    if not isinstance(raw, dict):
        raise InputDataError(f"{where} must be a JSON object, got {json_kind(raw)}.")
    unknown = set(raw) - _KEYS
    if unknown:
        raise InputDataError(f"{where} has unknown field(s) {sorted(unknown)}; allowed: {sorted(_KEYS)}.")
    for key in ("name", "social_groups", "attributes"):
        if key not in raw:
            raise InputDataError(f"{where} is missing the field {key!r}.")
    name = raw["name"]
    if not isinstance(name, str) or not name.strip():
        raise InputDataError(f"{where}.name must be a non-empty string.")
    where = f"{where} ({name})"
    group_names, groups = _pair(f"{where}.social_groups", raw["social_groups"])
    attr_names, attrs = _pair(f"{where}.attributes", raw["attributes"])
    shared = {t.lower() for t in groups[0]} & {t.lower() for t in groups[1]}
    if shared:
        raise InputDataError(f"{where}.social_groups: {sorted(shared)} appear in both groups.")
    shared = {t.lower() for t in attrs[0]} & {t.lower() for t in attrs[1]}
    if shared:
        raise InputDataError(f"{where}.attributes: {sorted(shared)} appear in both attribute lists.")
    source = raw.get("source", "")
    templates = _templates(f"{where}.templates", raw.get("templates"))
    return BiasSpec(name.strip(), group_names, groups, attr_names, attrs, str(source or ""), templates)


def _templates(where: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    out = _terms(where, value)
    for i, t in enumerate(out):
        if t.count("[T]") != 1 or t.count("[A]") != 1:
            raise InputDataError(f"{where}[{i}] ({t!r}) needs exactly one [T] (group term) and one [A] (attribute).")
    return out


def parse_bias_specs(data: Any, where: str = "spec") -> list[BiasSpec]:
    """Biases from parsed JSON (``{"biases": [...]}``, a list, or one bias object)."""
    if isinstance(data, dict) and "biases" in data:
        data = data["biases"]
        where = f"{where}: biases"
    elif isinstance(data, dict):
        data = [data]
    if not isinstance(data, list) or not data:
        raise InputDataError(f"{where} must hold a non-empty list of biases.")
    specs = [parse_bias(b, f"{where}[{i}]") for i, b in enumerate(data)]
    names = [s.name for s in specs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise InputDataError(f"{where}: bias names must be unique; repeated: {dupes}.")
    return specs


def load_bias_specs(path: str | os.PathLike[str]) -> list[BiasSpec]:
    """Read and validate a bias-spec JSON file; errors name the file and the field."""
    from equilens.tasks.files import require_file

    p = require_file(path, "Bias spec file")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise InputDataError(f"Cannot read bias spec {str(p)!r}: {err}") from None
    except json.JSONDecodeError as err:
        raise InputDataError(f"Bias spec {str(p)!r} is not valid JSON: {err}") from None
    return parse_bias_specs(data, where=str(p))
