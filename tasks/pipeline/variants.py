"""Prompts to variants: the fairness-through-unawareness check (which prompts mention a group) and
the counterfactual expansion (one variant per group, with same-group controls), as DataFrames."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from equilens.tasks.config import CounterfactualConfig
from equilens.tasks.inputs.controls import CONTROL, VARIANT
from equilens.tasks.pipeline.memo import computed_once


def lexicons_for(cfg: CounterfactualConfig) -> dict:
    """Lexicon per attribute under test (built-in and custom); names separately under "name"."""
    from equilens.tasks.inputs.lexicon import custom_lexicon, load_lexicon

    data_dir = Path(cfg.lexicon_dir) if cfg.lexicon_dir else None
    out = {a: load_lexicon(a, data_dir) for a in cfg.attributes}
    for attribute, groups in cfg.custom.items():
        out[attribute] = custom_lexicon(attribute, groups)
    return out


def names_lexicon(cfg: CounterfactualConfig):  # noqa: ANN201 - NameTable | None
    """The first-name table (gender and race mentions), or None when names are switched off."""
    from equilens.tasks.inputs.names import load_names

    if not cfg.detect_names:
        return None
    return load_names(Path(cfg.lexicon_dir) if cfg.lexicon_dir else None)


@dataclass
class FTUReport:
    holds: bool
    prompts_total: int
    counts: dict[str, int]
    summary: str
    mentions: list[dict[str, list[str]]] = field(repr=False)


def check_ftu_stage(prompts: pd.DataFrame, cfg: CounterfactualConfig) -> FTUReport:
    from equilens.tasks.inputs.ftu import check_ftu

    lexicons = list(lexicons_for(cfg).values())
    names = names_lexicon(cfg)
    if names is not None:
        lexicons.append(names)
    result = check_ftu(prompts["text"].tolist(), lexicons)
    return FTUReport(
        holds=result.holds,
        prompts_total=len(prompts),
        counts=dict(result.counts),
        summary=result.summary(),
        mentions=[dict(m) for m in result.per_prompt],
    )


def variant_id(prompt_id: str, attribute: str, group: str) -> str:
    return hashlib.sha256(f"{prompt_id}|{attribute}|{group}".encode()).hexdigest()[:16]


VARIANT_COLUMNS = ["variant_id", "prompt_id", "attribute", "grp", "text", "swapped", "valid", "problems", "role",
                   "control_kind"]
NONE_JSON = "[]"
"""``swapped`` and ``problems`` of a variant with none: both columns hold JSON text, as they are stored
(a Python list per row cost ~0.3 GB at 100,000 prompts and was pickled into the cached result)."""


def as_json(items: tuple | list) -> str:
    """A variant's swaps ((original, replacement) pairs) or problems as JSON text."""
    return json.dumps(list(items)) if items else NONE_JSON  # a pair (a tuple) is written as a list


def uses_controls(cfg: CounterfactualConfig) -> bool:
    return cfg.noise_floor in ("controls", "both")


@computed_once
def expand_stage(prompts: pd.DataFrame, cfg: CounterfactualConfig) -> pd.DataFrame:
    """One row per (prompt mentioning an attribute, variant group of that attribute).

    A prompt skipped by ``multi_group: skip`` gets one invalid row (group "*") whose problem says
    why, so the record keeps it and the flow drops it. With same-group controls on
    (``noise_floor: controls|both``) each valid variant is followed by its control (``role`` =
    "control", ``control_kind`` says how it was made, see :mod:`equilens.tasks.inputs.controls`). ``swapped``
    and ``problems`` are JSON text (:func:`as_json`).
    """
    from equilens.tasks.inputs.controls import control_text
    from equilens.tasks.inputs.expansion import SKIPPED, expand_prompts

    names = names_lexicon(cfg)
    pairs = list(zip(prompts["prompt_id"], prompts["text"], strict=True))
    columns: dict[str, list] = {name: [] for name in VARIANT_COLUMNS}  # a list per column, not a dict per row
    add = [columns[name].append for name in VARIANT_COLUMNS]

    def row(*values: object) -> None:
        for append, value in zip(add, values, strict=True):
            append(value)

    for attribute, lexicon in lexicons_for(cfg).items():
        use_names = names if attribute in ("gender", "race") else None
        for v in expand_prompts(pairs, lexicon, use_names, multi_group=cfg.multi_group):
            if attribute == "gender" and v.group == "neutral" and not cfg.include_neutral_gender:
                continue
            row(variant_id(v.prompt_id, attribute, v.group), v.prompt_id, attribute, v.group, v.text,
                as_json(v.swapped), not v.problems, as_json(v.problems), VARIANT, None)
            if uses_controls(cfg) and v.group != SKIPPED and not v.problems:
                text, kind = control_text(v.text, v.prompt_id, lexicon, use_names)
                row(variant_id(v.prompt_id, attribute, f"{v.group}|{CONTROL}"), v.prompt_id, attribute, v.group,
                    text, NONE_JSON, True, NONE_JSON, CONTROL, kind)
    return pd.DataFrame(columns, columns=VARIANT_COLUMNS)
