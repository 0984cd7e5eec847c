"""How many prompts a source holds, and a uniform sample of them, read in bounded memory: what a
plan needs before a run, in seconds even for a file of millions of rows.

A source smaller than :data:`WHOLE_BELOW` bytes (and inline items) is read whole by
:func:`equilens.tasks.inputs.prompts.load_prompts`, so its count is exact and duplicates are dropped. A
larger file is streamed in chunks (CSV through pandas, Parquet by record batch, JSONL and text by
line): its count is of non-empty rows, duplicates included, so a plan calls it "about". The sample
is the rows with the smallest of one random key each (a bottom-k sample, the same rows for the same
seed), then checked like any prompt (:func:`equilens.tasks.inputs.prompts.build_prompt_frame`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from equilens.tasks.config import PromptsConfig
from equilens.tasks.errors import InputDataError, json_error
from equilens.tasks.inputs.prompts import build_prompt_frame, load_prompts

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
    return PromptScan(total, build_prompt_frame(sorted(kept), str(path), cfg.max_chars), False)


def _chunks(path: Path, column: str) -> Iterator[tuple[list[int], list[object]]]:
    """(line numbers, prompt values) a chunk at a time; empty text and JSON lines are left out."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        try:
            reader = pd.read_csv(path, usecols=[column], dtype=str, keep_default_na=False, chunksize=CHUNK,
                                 encoding="utf-8")
            start = 2
            for chunk in reader:
                yield list(range(start, start + len(chunk))), chunk[column].tolist()
                start += len(chunk)
        except ValueError as err:  # usecols names a missing column; a parser error
            raise InputDataError(f"{path}: cannot read column {column!r} (prompts.column): {err}") from None
    elif suffix == ".parquet":
        import pyarrow.parquet as pq

        start = 1
        for batch in pq.ParquetFile(path).iter_batches(batch_size=CHUNK, columns=[column]):
            values = batch.column(0).to_pylist()
            yield list(range(start, start + len(values))), values
            start += len(values)
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


def _jsonl_value(path: Path, line: int, text: str, column: str) -> object:
    try:
        record = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputDataError(f"{path}, line {line}: not valid JSON ({json_error(err)}).") from None
    if not isinstance(record, dict) or column not in record:
        raise InputDataError(f"{path}, line {line}: expected an object with key {column!r} (prompts.column).")
    return record[column]
