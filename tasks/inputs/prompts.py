"""Prompt loading from CSV, JSONL, Parquet, plain text, or an inline list.

A prompt may be a conversation: a ``turns`` column or key (a JSON list of user messages) in place of
the prompt text, or an inline item that is a list. It is kept as one text, its turns joined by
:data:`equilens.tasks.turns.TURN_BREAK`; the LLM stage sends them in order.

Prompt ids are content hashes, so the same prompt has the same id in every run and every file.
Bad input raises :class:`InputDataError` naming the file, the line, and what was expected.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from equilens.tasks.config import PromptsConfig
from equilens.tasks.errors import InputDataError, json_kind
from equilens.tasks.files import file_problem, read_utf8
from equilens.tasks.turns import TURN_MARK, join_turns

SUFFIXES = (".csv", ".jsonl", ".parquet", ".txt")
TURNS = "turns"
"""The column (key) that holds a conversation: a JSON list of user messages, used where it is not empty."""
EXTRA_COLUMNS = ("task", "outcome")
"""Optional columns (keys) read beside the prompt: ``task`` groups results (advice, pricing, ...);
``outcome`` says what to read from the answer (number, yes_no, choice: a | b | c). Assessments
that do not use them ignore them."""


def prompt_id(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


def _read_text_file(path: Path) -> list[tuple[int, str]]:
    text = read_utf8(path)
    return [(i, line.strip()) for i, line in enumerate(text.splitlines(), start=1) if line.strip()]


def _read_jsonl(path: Path, column: str) -> list[tuple[int, object, dict]]:
    text = read_utf8(path)
    rows = []
    for i, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise InputDataError(f"{path}, line {i}: not valid JSON ({err.msg}).") from None
        if not isinstance(record, dict) or (column not in record and TURNS not in record):
            if not isinstance(record, dict):
                keys = json_kind(record)
            else:
                keys = f"the keys {', '.join(map(repr, record))}" if record else "an empty object"
            raise InputDataError(
                f"{path}, line {i}: expected an object with key {column!r} (prompts.column) or {TURNS!r} (a "
                f"conversation); found {keys}."
            )
        turns = record.get(TURNS)
        value = turns if _given(turns) or column not in record else record[column]
        rows.append((i, value, {k: record[k] for k in EXTRA_COLUMNS if k in record}))
    return rows


def _read_table(path: Path, column: str) -> list[tuple[int, object, dict]]:
    if path.suffix == ".csv":
        text = read_utf8(path)
        try:
            from io import StringIO

            frame = pd.read_csv(StringIO(text), dtype=str, keep_default_na=False)
        except pd.errors.ParserError as err:
            raise InputDataError(f"{path}: not a readable CSV file ({err}).") from None
        except pd.errors.EmptyDataError:
            raise InputDataError(f"{path} is empty: expected a header row with a {column!r} column.") from None
        first_line = 2  # 1-based, after the header
    else:
        try:
            frame = pd.read_parquet(path)
        except Exception as err:  # noqa: BLE001 - pyarrow raises many types for a bad file
            raise InputDataError(f"{path}: not a readable Parquet file ({type(err).__name__}: {err}).") from None
        first_line = 1
    if column not in frame.columns and TURNS not in frame.columns:
        raise InputDataError(
            f"{path}: no column {column!r} (prompts.column) or {TURNS!r} (conversations). Columns found: "
            f"{', '.join(map(str, frame.columns))}."
        )
    extras = [k for k in EXTRA_COLUMNS if k in frame.columns]
    texts = frame[column].tolist() if column in frame.columns else [None] * len(frame)
    if TURNS in frame.columns:  # a row's conversation where it has one, else its prompt
        texts = [_turns_cell(t, i + first_line, path) if _given(t) else v
                 for i, (v, t) in enumerate(zip(texts, frame[TURNS].tolist(), strict=True))]
    return [(i + first_line, v, {k: frame[k].iloc[i] for k in extras}) for i, v in enumerate(texts)]


def _given(cell: object) -> bool:
    if cell is None or (isinstance(cell, float) and cell != cell):
        return False
    return len(cell) > 0 if hasattr(cell, "__len__") else True


def _turns_cell(cell: object, line: int, path: Path) -> object:
    """A ``turns`` cell as a list: a JSON list written as text (CSV), or a list (Parquet)."""
    if isinstance(cell, str):
        try:
            return json.loads(cell)
        except json.JSONDecodeError as err:
            raise InputDataError(f"{path}, line {line}: the {TURNS!r} column is not a JSON list of messages "
                                 f"({err.msg}); write it as [\"first message\", \"second message\"].") from None
    return list(cell) if hasattr(cell, "tolist") or isinstance(cell, tuple) else cell


def load_prompts(cfg: PromptsConfig, base_dir: Path | None = None) -> pd.DataFrame:
    """Return a DataFrame with ``prompt_id``, ``text`` and ``source_line``, duplicates removed."""
    if cfg.path:
        path = Path(cfg.path)
        if not path.is_absolute() and base_dir is not None and not path.exists():
            path = base_dir / path
        if problem := file_problem(path):
            raise InputDataError(f"Prompt file {path} {problem} (prompts.path).")
        suffix = path.suffix.lower()
        if suffix not in SUFFIXES:
            raise InputDataError(f"{path}: unsupported file type {suffix!r}; use one of {', '.join(SUFFIXES)}.")
        if suffix == ".txt":
            rows = _read_text_file(path)
        elif suffix == ".jsonl":
            rows = _read_jsonl(path, cfg.column)
        else:
            rows = _read_table(path, cfg.column)
        where = str(path)
    else:
        rows = list(enumerate(cfg.items, start=1))
        where = "prompts.items"
    return build_prompt_frame(rows, where, cfg.max_chars, cfg.limit, cfg.max_turns)


def _conversation(turns: list, where: str, max_turns: int | None) -> str:
    """A conversation's user turns as one prompt text; an empty or non-text turn, or more turns than
    ``prompts.max_turns``, is refused naming ``where`` and the turn."""
    if not turns:
        raise InputDataError(f"{where}: the conversation has no turns (expected a list of user messages).")
    if max_turns is not None and len(turns) > max_turns:
        raise InputDataError(f"{where}: the conversation has {len(turns)} turns; at most {max_turns} are sent "
                             "(prompts.max_turns).")
    for k, turn in enumerate(turns, start=1):
        if not isinstance(turn, str):
            raise InputDataError(f"{where}: turn {k} is {json_kind(turn)}; expected the user's message as text.")
        if not turn.strip():
            raise InputDataError(f"{where}: turn {k} of the conversation is empty (expected the user's message).")
        if TURN_MARK in turn:
            raise InputDataError(f"{where}: turn {k} holds {TURN_MARK!r}, which marks where turns break.")
    return join_turns(turns)


def check_length(text: str, max_chars: int, where: str, what: str = "prompt") -> None:
    """Refuse a ``what`` (a prompt, a decision) longer than ``max_chars`` (``prompts.max_chars``),
    naming ``where`` it is ("file, line 3")."""
    if len(text) > max_chars:
        raise InputDataError(f"{where}: the {what} has {len(text):,} characters; {what}s longer than {max_chars:,} "
                             "are refused (prompts.max_chars).")


def build_prompt_frame(
    rows: Sequence[tuple[int, object] | tuple[int, object, dict]], where: str, max_chars: int,
    limit: int | None = None, max_turns: int | None = None,
) -> pd.DataFrame:
    """The prompt frame; rows are (line, text) or (line, text, {extra column: value}), the text a
    string or a conversation's list of user turns. An extra column present in the file must have a
    value on every line."""
    texts: list[str] = []
    lines: list[int] = []
    extras: dict[str, list[str]] = {}
    for line, value, *more in rows:
        if isinstance(value, list):
            value = _conversation(value, f"{where}, line {line}", max_turns)
        if value is None or (isinstance(value, float) and value != value):
            raise InputDataError(f"{where}, line {line}: the prompt is empty (expected text).")
        if not isinstance(value, str):
            raise InputDataError(f"{where}, line {line}: expected a text prompt, got {type(value).__name__}.")
        text = value.strip()
        if not text:
            raise InputDataError(f"{where}, line {line}: the prompt is empty (expected text).")
        check_length(text, max_chars, f"{where}, line {line}")
        for key, raw in (more[0] if more else {}).items():
            cell = "" if raw is None or (isinstance(raw, float) and raw != raw) else str(raw).strip()
            if not cell:
                raise InputDataError(f"{where}, line {line}: the {key!r} column is empty. Give every prompt a "
                                     f"{key}, or remove the column.")
            extras.setdefault(key, []).append(cell)
        texts.append(text)
        lines.append(line)
    for key, values in extras.items():  # a JSONL key given on some lines only
        if len(values) != len(texts):
            missing = next(ln for ln, _value, *more in rows if key not in (more[0] if more else {}))
            raise InputDataError(f"{where}, line {missing}: no {key!r}, which other lines give. Give every prompt a "
                                 f"{key}, or remove it from every line.")
    if not texts:
        raise InputDataError(f"{where}: no prompts found (expected at least one non-empty prompt).")
    frame = pd.DataFrame({"text": texts, "source_line": lines, **extras})
    frame.insert(0, "prompt_id", [prompt_id(t) for t in texts])
    frame = frame.drop_duplicates("prompt_id", keep="first").reset_index(drop=True)
    frame.attrs["duplicates_dropped"] = len(texts) - len(frame)  # reported by the CLI's preflight
    if limit is not None:
        frame = frame.head(limit)
    return frame
