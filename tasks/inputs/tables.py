"""Files a user brings (responses, predictions, answers): CSV / JSONL / Parquet read one way, with
one-paragraph errors that name the file and the setting it came from."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from equilens.tasks.errors import InputDataError
from equilens.tasks.files import require_file


def read_table(path: str | Path, what: str) -> pd.DataFrame:
    """A CSV / JSONL / Parquet file as a DataFrame of strings (missing cells are empty strings)."""
    p = require_file(path, what)
    suffix = p.suffix.lower()
    try:
        if suffix == ".csv":
            frame = pd.read_csv(p, dtype=str, keep_default_na=False, encoding="utf-8")
        elif suffix == ".jsonl":
            frame = pd.read_json(p, lines=True, dtype=False)
        elif suffix == ".parquet":
            frame = pd.read_parquet(p)
        else:
            raise InputDataError(f"{what}: unsupported file type {suffix!r} ({p}); use .csv, .jsonl or .parquet.")
    except UnicodeDecodeError as err:
        raise InputDataError(f"{what}: {p} is not UTF-8 ({err.reason} at byte {err.start}).") from None
    except ValueError as err:
        raise InputDataError(f"{what}: cannot read {p} ({err}).") from None
    if frame.empty:
        raise InputDataError(f"{what}: {p} has no rows.")
    return frame


def require_columns(frame: pd.DataFrame, columns: list[str], where: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputDataError(f"{where}: missing column(s) {', '.join(missing)}. "
                             f"Columns found: {', '.join(map(str, frame.columns))}.")
