"""Sentence templates and stereotype / anti-stereotype pairs (BiasTestGPT step 3).

A sentence becomes a template by replacing its group term with ``[T]``. Each template yields
one pair: the sentence with the group-1 term and with the parallel group-2 term. By the spec's
convention group 1 goes with attribute 1 and group 2 with attribute 2, so for an attribute-1
sentence the group-1 version is the stereotyped one, and for an attribute-2 sentence it is the
group-2 version.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from equilens.tasks.assessments.bias_test.bias_specs import BiasSpec
from equilens.tasks.assessments.bias_test.generation import GeneratedSentence, term_pattern
from equilens.tasks.errors import InputDataError

PLACEHOLDER = "[T]"


@dataclass(frozen=True)
class StereoPair:
    bias: str
    template: str
    attribute: str
    attribute_term: str
    group_terms: tuple[str, str]
    """(group-1 term, group-2 term) filled into the template."""
    stereotyped_term: str
    anti_stereotyped_term: str
    stereotyped_sentence: str
    anti_stereotyped_sentence: str
    source_sentence: str
    discarded: bool = False
    reason: str = ""


def make_template(sentence: str, group_term: str, placeholder: str = PLACEHOLDER) -> str | None:
    """``sentence`` with every whole-word occurrence of ``group_term`` replaced, or None if absent."""
    template, n = term_pattern(group_term).subn(placeholder, sentence)
    return template if n else None


def fill_template(template: str, term: str, placeholder: str = PLACEHOLDER) -> str:
    """Put ``term`` in every placeholder, capitalised where a sentence starts."""
    parts = template.split(placeholder)
    out = parts[0]
    for part in parts[1:]:
        starts = re.search(r"(^|[.!?]\s+)[\"'\u201c]?$", out) is not None
        out += (term[:1].upper() + term[1:] if starts else term) + part
    return out


def _discarded(row: GeneratedSentence, template: str, reason: str) -> StereoPair:
    return StereoPair(
        row.bias,
        template,
        row.attribute,
        row.attribute_term,
        ("", ""),
        "",
        "",
        "",
        "",
        row.sentence,
        True,
        reason,
    )


def build_pairs(rows: Sequence[GeneratedSentence], specs: Sequence[BiasSpec]) -> list[StereoPair]:
    """One pair per row; rows that are discarded, untemplatable or repeat a template come back
    with ``discarded=True`` and a reason, so the export shows every sentence's fate."""
    by_name = {s.name: s for s in specs}
    seen: set[tuple[str, str, str]] = set()
    pairs: list[StereoPair] = []
    for row in rows:
        spec = by_name.get(row.bias)
        if spec is None:
            raise InputDataError(
                f"Sentence row names bias {row.bias!r}, which the spec lacks ({sorted(by_name)})."
            )
        attr_idx = _attribute_index(spec, row)
        found = spec.counterpart(row.group_term)
        if found is None:
            raise InputDataError(f"{row.group_term!r} is not a social-group term of bias {row.bias!r}.")
        template = make_template(row.sentence, row.group_term) or ""
        if row.discarded:
            pairs.append(_discarded(row, template, row.reason or "discarded by reviewer"))
            continue
        if not template:
            pairs.append(_discarded(row, "", f"group term {row.group_term!r} not in sentence"))
            continue
        key = (row.bias, row.attribute_term.lower(), template.lower())
        if key in seen:
            pairs.append(_discarded(row, template, "duplicate template"))
            continue
        seen.add(key)
        group_idx, other = found
        g1, g2 = (row.group_term, other) if group_idx == 0 else (other, row.group_term)
        stereo, anti = (g1, g2) if attr_idx == 0 else (g2, g1)
        pairs.append(
            StereoPair(
                row.bias,
                template,
                spec.attribute_names[attr_idx],
                row.attribute_term,
                (g1, g2),
                stereo,
                anti,
                fill_template(template, stereo),
                fill_template(template, anti),
                row.sentence,
            )
        )
    return pairs


def _attribute_index(spec: BiasSpec, row: GeneratedSentence) -> int:
    if row.attribute in spec.attribute_names:
        return spec.attribute_names.index(row.attribute)
    for i, terms in enumerate(spec.attributes):
        if row.attribute_term.lower() in (t.lower() for t in terms):
            return i
    raise InputDataError(
        f"Attribute {row.attribute!r} / term {row.attribute_term!r} is not in bias {spec.name!r}."
    )
