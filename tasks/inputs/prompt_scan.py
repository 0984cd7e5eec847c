"""How many prompts a source holds, and a uniform sample of them, read in bounded memory: what a
plan needs before a run, in seconds even for a file of millions of rows.

A source smaller than :data:`WHOLE_BELOW` bytes (and inline items) is read whole by
:func:`equilens.tasks.inputs.prompts.load_prompts`, so its count is exact and duplicates are dropped. A
larger file is streamed in chunks (CSV through pandas, Parquet by record batch, JSONL and text by
line), its conversations (``turns``) read as the loader reads them: its count is of non-empty rows,
duplicates included, so a plan calls it "about". The sample
is the rows with the smallest of one random key each (a bottom-k sample, the same rows for the same
seed), then checked like any prompt (:func:`equilens.tasks.inputs.prompts.build_prompt_frame`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from equilens.tasks.config import PromptsConfig
from equilens.tasks.errors import InputDataError, json_error
from equilens.tasks.inputs.prompts import TURNS, build_prompt_frame, load_prompts, row_prompt, table_prompts

WHOLE_BELOW = 20_000_000  # bytes
CHUNK = 200_000  # rows


@dataclass
class PromptScan:
    total: int  # prompts in the source (after prompts.limit)
    sample: pd.DataFrame  # a prompt frame of at most the sample size
    exact: bool  # read whole (duplicates dropped) rather than streamed


def scan_prompts(cfg: PromptsConfig, size: int, seed: int = 0) -> PromptScan:
    """The count of ``cfg``'s prompts and a uniform sample of at most ``size`` of them."""
    path = Path(cfg.path) if cfg.path else None
    if path is None or path.stat().st_size < WHOLE_BELOW:
        frame = load_prompts(cfg)
        sample = frame if len(frame) <= size else frame.sample(size, random_state=seed).sort_index()
        return PromptScan(len(frame), sample, True)
    rng = np.random.default_rng(seed)
    keys, kept, total = np.empty(0), [], 0
    for lines, texts in _chunks(path, cfg.column):
        if cfg.limit is not None:
            lines, texts = lines[: cfg.limit - total], texts[: cfg.limit - total]
        total += len(texts)
        both = np.concatenate([keys, rng.random(len(texts))])
        rows = kept + list(zip(lines, texts, strict=True))
        order = np.argsort(both, kind="stable")[:size]
        keys, kept = both[order], [rows[i] for i in order]
        if cfg.limit is not None and total >= cfg.limit:
            break
    if not total:
        raise InputDataError(f"{path}: no prompts found (expected at least one non-empty prompt).")
    unit = "row" if path.suffix.lower() == ".parquet" else "line"
    return PromptScan(total, build_prompt_frame(sorted(kept, key=lambda row: row[0]), str(path), cfg.max_chars,
                                                max_turns=cfg.max_turns, unit=unit), False)


def _chunks(path: Path, column: str) -> Iterator[tuple[list[int], list[object]]]:
    """(line numbers, prompts) a chunk at a time, each prompt its text or a conversation's turns (a
    ``turns`` column or key, as :func:`~equilens.tasks.inputs.prompts.load_prompts` reads it); blank
    lines of a text or JSONL file are left out."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        try:
            names = _columns(path, column, pd.read_csv(path, nrows=0, encoding="utf-8").columns)
            reader = pd.read_csv(path, usecols=names, dtype=str, keep_default_na=False, chunksize=CHUNK,
                                 encoding="utf-8")
            start = 2
            for chunk in reader:
                yield _chunk(path, column, "line", start, chunk)
                start += len(chunk)
        except ValueError as err:  # a parser error
            raise InputDataError(f"{path}: cannot read column {column!r} (prompts.column): {err}") from None
    elif suffix == ".parquet":
        import pyarrow.parquet as pq

        file, start = pq.ParquetFile(path), 1
        names = _columns(path, column, file.schema_arrow.names)
        for batch in file.iter_batches(batch_size=CHUNK, columns=names):
            yield _chunk(path, column, "row", start, batch.to_pandas())
            start += batch.num_rows
    else:
        lines, values = [], []
        with path.open(encoding="utf-8", errors="strict") as fh:
            for i, line in enumerate(fh, start=1):
                if line.strip():
                    lines.append(i)
                    values.append(_jsonl_value(path, i, line, column) if suffix == ".jsonl" else line.strip())
                if len(lines) >= CHUNK:
                    yield lines, values
                    lines, values = [], []
        if lines:
            yield lines, values


def _columns(path: Path, column: str, found: Iterable[object]) -> list[str]:
    """The columns of a table that give its prompts: ``column``, ``turns``, or both."""
    names = [name for name in (column, TURNS) if name in set(map(str, found))]
    if not names:
        raise InputDataError(f"{path}: no column {column!r} (prompts.column) or {TURNS!r} (conversations).")
    return names


def _chunk(path: Path, column: str, unit: str, start: int, frame: pd.DataFrame) -> tuple[list[int], list[object]]:
    """A table chunk's line numbers and prompts, starting at line (or row) ``start``."""
    lines = list(range(start, start + len(frame)))
    return lines, table_prompts(frame, column, str(path), unit, lines)


def _jsonl_value(path: Path, line: int, text: str, column: str) -> object:
    try:
        record = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputDataError(f"{path}, line {line}: not valid JSON ({json_error(err)}).") from None
    if not isinstance(record, dict) or (column not in record and TURNS not in record):
        raise InputDataError(f"{path}, line {line}: expected an object with key {column!r} (prompts.column) or "
                             f"{TURNS!r} (a conversation).")
    return row_prompt(record.get(column), record.get(TURNS), f"{path}, line {line}", column, parse=False)
