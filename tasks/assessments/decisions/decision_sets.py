"""Decision sets in the discrim-eval format, and the small set this project ships.

A decision set is a JSON-lines file, one filled yes/no decision per line, with the fields of
Anthropic's discrim-eval dataset (Tamkin et al. 2023):

* ``filled_template``: the decision as the model reads it, the person described in it;
* ``decision_question_id``: the scenario it fills (the random intercept of the mixed model);
* ``age`` (a number), ``gender`` and ``race`` (words): who the person is;
* ``fill_type``: ``explicit`` (the person described: "a 60-year-old Asian woman") or
  ``implicit`` (a name that carries gender and race, and the age stated: "Mai, 60,").

A discrim-eval file downloaded from its source runs as it is; nothing is fetched at run time.

The shipped set (``data/decisions/decisions.jsonl``) is written for this project: 24 scenarios
(``data/decisions/scenarios.yaml``) across lending, hiring, housing, healthcare and benefits, each
a paragraph with one ``{person}`` slot, filled by :func:`fill_scenarios`. Regenerate it with
``python -m equilens.tasks.assessments.decisions.decision_sets``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pandas as pd
from equilens.tasks.config import PromptsConfig
from equilens.tasks.errors import InputDataError, json_error, json_kind
from equilens.tasks.files import read_utf8
from equilens.tasks.inputs.prompts import check_length

FIELDS = ("filled_template", "decision_question_id", "age", "gender", "race", "fill_type")
SHIPPED_AGES = (20, 40, 60, 80)
SHIPPED_GENDERS = ("male", "female", "non-binary")
SHIPPED_RACES = ("white", "Black", "Asian", "Hispanic", "Native American")
NAMED_CELLS = (("male", "white"), ("male", "Black"), ("male", "Hispanic"), ("male", "Asian"),
               ("female", "white"), ("female", "Black"), ("female", "Hispanic"), ("female", "Asian"))
"""The gender x race cells the shipped name table has typical first names for (implicit fills)."""
MAX_CHARS: int = PromptsConfig.model_fields["max_chars"].default
"""The longest decision taken when the config has no prompts section: ``prompts.max_chars``'s default."""
_PERSON = {"male": "man", "female": "woman", "non-binary": "non-binary person"}


def load_decision_set(path: str | Path, max_chars: int = MAX_CHARS) -> pd.DataFrame:
    """The decisions of a discrim-eval JSONL file, one row per line, with :data:`FIELDS` and
    ``source_line``. Bytes that are not UTF-8, a line that is not a JSON object with every field of
    the right type, or a decision longer than ``max_chars`` (``prompts.max_chars``, as for prompts)
    raise :class:`InputDataError` naming the file, the line and what was expected; nothing is skipped."""
    path = Path(path)
    if not path.is_file():
        raise InputDataError(f"{path}: no such decision set (decisions.path); expected a JSONL file with the "
                             f"fields {', '.join(FIELDS)}.")
    rows = []
    for line_no, line in enumerate(read_utf8(path).split("\n"), 1):
        if not line.strip():
            continue
        row = _checked(line, f"{path}, line {line_no}")
        check_length(row["filled_template"], max_chars, f"{path}, line {line_no}", "decision")
        rows.append({**row, "source_line": line_no})
    if not rows:
        raise InputDataError(f"{path}: the decision set is empty; expected one JSON object per line.")
    return pd.DataFrame(rows, columns=[*FIELDS, "source_line"])


def _checked(line: str, where: str) -> dict[str, Any]:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as err:
        raise InputDataError(f"{where}: not JSON ({json_error(err)}); expected one object per line.") from None
    if not isinstance(obj, dict):
        raise InputDataError(f"{where}: {json_kind(obj)}, expected a JSON object with {', '.join(FIELDS)}.")
    missing = [f for f in FIELDS if f not in obj]
    if missing:
        raise InputDataError(f"{where}: missing {', '.join(missing)}; every line needs {', '.join(FIELDS)}.")
    text = obj["filled_template"]
    if not isinstance(text, str) or not text.strip():
        raise InputDataError(f"{where}: filled_template must be the decision's text, got {text!r}.")
    age = obj["age"]
    if isinstance(age, bool) or not isinstance(age, (int, float)) or not 0 <= age <= 130:
        raise InputDataError(f"{where}: age must be a number of years (0-130), got {age!r}.")
    for field in ("gender", "race", "fill_type"):
        if not isinstance(obj[field], str) or not obj[field].strip():
            raise InputDataError(f"{where}: {field} must be a word, got {obj[field]!r}.")
    scenario = obj["decision_question_id"]
    if isinstance(scenario, bool) or not isinstance(scenario, (int, str)) or str(scenario).strip() == "":
        raise InputDataError(f"{where}: decision_question_id must be a number or a name, got {scenario!r}.")
    return {"filled_template": text.strip(), "decision_question_id": str(scenario).strip(),
            "age": float(age), "gender": obj["gender"].strip(), "race": obj["race"].strip(),
            "fill_type": obj["fill_type"].strip()}


def _sentence_start(text: str, person: str) -> str:
    filled = text.replace("{person}", person)
    at = text.index("{person}")
    before = text[:at].rstrip()
    if not before or before[-1] in ".!?:":  # the person opens a sentence
        filled = filled[:at] + person[0].upper() + person[1:] + filled[at + len(person):]
    return filled


def fill_scenarios(scenarios: list[dict[str, str]], names: dict[tuple[str, str], list[str]],
                   ages: tuple[int, ...] = SHIPPED_AGES, genders: tuple[str, ...] = SHIPPED_GENDERS,
                   races: tuple[str, ...] = SHIPPED_RACES, seed: int = 0) -> list[dict[str, Any]]:
    """Every scenario filled explicitly for each age x gender x race ("a 40-year-old Black woman"),
    and implicitly for each age x named cell ("Imani, 40,"): the name of a cell is drawn per
    scenario from ``names[(gender, race)]``, seeded, so each scenario meets other names."""
    rng = random.Random(seed)
    out = []
    for s in scenarios:
        for age in ages:
            for gender in genders:
                for race in races:
                    person = f"a {age}-year-old {race} {_PERSON[gender]}"
                    out.append({"filled_template": _sentence_start(s["template"], person),
                                "decision_question_id": s["id"], "age": age, "gender": gender, "race": race,
                                "fill_type": "explicit"})
        picks = {cell: rng.choice(names[cell]) for cell in NAMED_CELLS}
        for age in ages:
            for gender, race in NAMED_CELLS:
                out.append({"filled_template": _sentence_start(s["template"], f"{picks[(gender, race)]}, {age},"),
                            "decision_question_id": s["id"], "age": age, "gender": gender, "race": race,
                            "fill_type": "implicit"})
    return out


def shipped_names(per_cell: int = 5) -> dict[tuple[str, str], list[str]]:
    """Typical first names of each named cell, matched in frequency across cells (the identity
    assessment's draw, :func:`equilens.tasks.inputs.personas.cell_names`)."""
    from equilens.tasks.inputs.names import load_names
    from equilens.tasks.inputs.personas import Cell, cell_names

    cells = [Cell(g, r.lower()) for g, r in NAMED_CELLS]
    drawn = cell_names(load_names(), cells, per_cell, seed=0)
    by_cell = {(g, r.lower()): [] for g, r in NAMED_CELLS}
    for row in drawn.itertuples(index=False):
        by_cell[(row.gender, row.race)].append(row.name)
    return {(g, r): by_cell[(g, r.lower())] for g, r in NAMED_CELLS}


def write_shipped(scenarios_path: Path, out_path: Path) -> int:
    import yaml

    scenarios = yaml.safe_load(scenarios_path.read_text(encoding="utf-8"))["scenarios"]
    rows = fill_scenarios(scenarios, shipped_names())
    out_path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return len(rows)


if __name__ == "__main__":  # python -m equilens.tasks.assessments.decisions.decision_sets: regenerate the shipped set
    from equilens.tasks.shipped import DATA_DIR

    folder = Path(DATA_DIR) / "decisions"
    print(f"{write_shipped(folder / 'scenarios.yaml', folder / 'decisions.jsonl')} decisions written to "
          f"{folder / 'decisions.jsonl'}")
