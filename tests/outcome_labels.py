"""The labelled answers of ``data/outcome_readings.csv`` and how a reading is judged against its label:
shared by the outcome-reader test and its benchmark."""

from __future__ import annotations

import math

import pandas as pd
from equilens.tasks.assessments.identity.stages import outcome_of
from equilens.tasks.scoring.outcomes import question_of, read_outcome


def load_labelled(path: str, split: str = "all") -> pd.DataFrame:
    rows = pd.read_csv(path, dtype={"reading": str, "unreadable": str, "unit": str}, keep_default_na=False)
    if split != "all":
        rows = rows[rows["split"] == split]
    return rows.reset_index(drop=True)


def _right(label: str, kind: str, options: list[str], value: float | None) -> bool:
    if not label:
        return value is None
    if value is None:
        return False
    if kind == "number":
        want = float(label)
        return math.isclose(value, want, rel_tol=0.005, abs_tol=0.011)
    if kind == "yes_no":
        return value == (1.0 if label == "yes" else 0.0)
    return options[int(value)] == label


def judge_readings(rows: pd.DataFrame, readings: list | None = None) -> pd.DataFrame:
    """``rows`` with ``type``, ``label``, ``read`` (the value or the unreadable reason) and ``right``:
    the rule reader's readings, or the given ones (one :class:`Reading` per row, in order)."""
    out = []
    for i, r in enumerate(rows.itertuples(index=False)):
        kind, options = outcome_of(r.outcome)
        q = question_of(r.prompt, kind, options)
        reading = read_outcome(r.answer, q) if readings is None else readings[i]
        label = r.reading
        out.append({**r._asdict(), "type": kind, "label": label or f"unreadable ({r.unreadable})",
                    "read": reading.value if reading.readable else f"unreadable ({reading.reason})",
                    "right": _right(label, kind, options, reading.value)})
    return pd.DataFrame(out)
