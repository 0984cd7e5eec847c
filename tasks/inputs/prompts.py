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
from equilens.tasks.errors import InputDataError, json_error, json_kind, with_article
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
            raise InputDataError(f"{path}, line {i}: not valid JSON ({json_error(err)}).") from None
        if not isinstance(record, dict) or (column not in record and TURNS not in record):
            if not isinstance(record, dict):
                keys = json_kind(record)
            else:
                keys = f"the keys {', '.join(map(repr, record))}" if record else "an empty object"
            raise InputDataError(
                f"{path}, line {i}: expected an object with key {column!r} (prompts.column) or {TURNS!r} (a "
                f"conversation); found {keys}."
            )
        value = row_prompt(record.get(column), record.get(TURNS), f"{path}, line {i}", column, parse=False)
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
        starts = _record_lines(text, len(frame))
    else:
        try:
            frame = pd.read_parquet(path)
        except Exception as err:  # noqa: BLE001 - pyarrow raises many types for a bad file
            raise InputDataError(f"{path}: not a readable Parquet file ({type(err).__name__}: {err}).") from None
        starts = range(1, len(frame) + 1)  # rows, 1-based
    if column not in frame.columns and TURNS not in frame.columns:
        raise InputDataError(
            f"{path}: no column {column!r} (prompts.column) or {TURNS!r} (conversations). Columns found: "
            f"{', '.join(map(str, frame.columns))}."
        )
    extras = [k for k in EXTRA_COLUMNS if k in frame.columns]
    texts = table_prompts(frame, column, str(path), "line" if path.suffix == ".csv" else "row", starts)
    return [(n, v, {k: frame[k].iloc[i] for k in extras}) for i, (n, v) in enumerate(zip(starts, texts, strict=True))]


def _record_lines(text: str, records: int) -> Sequence[int]:
    """The line of a CSV file each record after the header starts on. A quoted cell may hold line
    breaks and blank lines are skipped, so records and lines can part; where the file's records do not
    come out as pandas read them, the records are counted from line 2."""
    lines = text.count("\n") + (not text.endswith("\n"))
    if lines == records + 1:  # one record a line
        return range(2, records + 2)
    import csv
    from io import StringIO

    reader, starts, end = csv.reader(StringIO(text)), [], 0
    for row in reader:
        if row:  # a blank line is no record
            starts.append(end + 1)
        end = reader.line_num
    return starts[1:] if len(starts) == records + 1 else range(2, records + 2)


def table_prompts(frame: pd.DataFrame, column: str, where: str, unit: str, lines: Sequence[int]) -> list[object]:
    """Each row's prompt in a table: its ``turns`` (a conversation) where the table has that column
    and the row gives them, else its ``column`` text (:func:`row_prompt`); ``lines`` number the rows
    in ``unit`` ("line", "row") for the errors."""
    texts = frame[column].tolist() if column in frame.columns else [None] * len(frame)
    if TURNS not in frame.columns:
        return texts
    return [row_prompt(v, t, f"{where}, {unit} {n}", column)
            for n, v, t in zip(lines, texts, frame[TURNS].tolist(), strict=True)]


def row_prompt(prompt: object, turns: object, where: str, column: str, parse: bool = True) -> object:
    """A row's prompt: the list of its user turns where its ``turns`` gives a conversation, else its
    ``column`` text. A row that gives both is refused: which one is the prompt cannot be told."""
    conversation = _turns_list(turns, where, parse)
    if conversation is None:
        return prompt  # missing too: "the prompt is empty"
    if isinstance(prompt, str) and prompt.strip():
        raise InputDataError(f"{where}: both {column!r} and {TURNS!r} are given; a conversation's prompt is its "
                             f"last turn. Leave {column!r} empty on a conversation's row.")
    return conversation


def _turns_list(value: object, where: str, parse: bool = True) -> list | None:
    """A ``turns`` value as a conversation's user turns; None where it gives none (absent, null, empty
    text, an empty list), so the row's prompt is read instead. Text is read as JSON where ``parse`` (a
    CSV or Parquet cell; a JSONL value is JSON already)."""
    if parse and isinstance(value, str) and value.strip():
        try:
            value = json.loads(value)
        except json.JSONDecodeError as err:
            raise InputDataError(f"{where}: the {TURNS!r} column is not valid JSON ({json_error(err)}); write it as "
                                 "[\"first message\", \"second message\"].") from None
    if hasattr(value, "tolist") and not _missing(value):  # a Parquet list cell (a NumPy array)
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return list(value) or None
    if _missing(value) or (isinstance(value, str) and not value.strip()):
        return None
    raise InputDataError(f"{where}: {TURNS!r} holds {json_kind(value)}; expected a list of the user's messages, "
                         "such as [\"first message\", \"second message\"].")


def _missing(value: object) -> bool:
    """A cell that holds nothing: None, NaN, or a missing value of a nullable column (``pd.NA``)."""
    return value is None or (not isinstance(value, (str, list, tuple, dict)) and bool(pd.api.types.is_scalar(value))
                             and bool(pd.isna(value)))


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
        where, unit = str(path), "row" if suffix == ".parquet" else "line"
    else:
        rows = list(enumerate(cfg.items, start=1))
        where, unit = "prompts.items", "item"
    return build_prompt_frame(rows, where, cfg.max_chars, cfg.limit, cfg.max_turns, unit)


def _conversation(turns: list, where: str, max_turns: int | None, max_chars: int) -> str:
    """A conversation's user turns as one prompt text; an empty or non-text turn, more turns than
    ``prompts.max_turns`` or more characters in its turns than ``prompts.max_chars`` is refused naming
    ``where`` and the turn."""
    if not turns:
        raise InputDataError(f"{where}: the conversation has no turns (expected a list of user messages).")
    if max_turns is not None and len(turns) > max_turns:
        raise InputDataError(f"{where}: the conversation has {len(turns)} turns; at most {max_turns} are read "
                             "(prompts.max_turns).")
    for k, turn in enumerate(turns, start=1):
        if not isinstance(turn, str):
            raise InputDataError(f"{where}: turn {k} is {json_kind(turn)}; expected the user's message as text.")
        if not turn.strip():
            raise InputDataError(f"{where}: turn {k} of the conversation is empty (expected the user's message).")
        if TURN_MARK in turn:
            raise InputDataError(f"{where}: turn {k} holds {TURN_MARK!r}, which marks where turns break.")
    check_length("".join(turns), max_chars, where, "conversation", "in its turns")
    return join_turns(turns)


def check_length(text: str, max_chars: int, where: str, what: str = "prompt", counted: str = "") -> None:
    """Refuse a ``what`` (a prompt, a decision) longer than ``max_chars`` (``prompts.max_chars``),
    naming ``where`` it is ("file, line 3") and what was ``counted`` ("in its turns")."""
    if len(text) > max_chars:
        raise InputDataError(f"{where}: the {what} has {len(text):,} characters{' ' + counted if counted else ''}; "
                             f"{what}s longer than {max_chars:,} are refused (prompts.max_chars).")


def prompt_text(value: object, at: str, max_chars: int, max_turns: int | None = None) -> str:
    """A row's prompt as one text: its own text, or a conversation's list of user turns joined; an
    empty or non-text prompt, a text holding the turn mark, or one past ``prompts.max_chars`` (or
    ``max_turns``) is refused naming where it is (``at``: "file, line 3")."""
    conversation = isinstance(value, list)
    if conversation:
        value = _conversation(value, at, max_turns, max_chars)
    if _missing(value):
        raise InputDataError(f"{at}: the prompt is empty (expected text).")
    if not isinstance(value, str):
        raise InputDataError(f"{at}: the prompt is {json_kind(value)}; expected text.")
    text = value.strip()
    if not text:
        raise InputDataError(f"{at}: the prompt is empty (expected text).")
    if not conversation:
        if TURN_MARK in text:
            raise InputDataError(f"{at}: the prompt holds {TURN_MARK!r} (U+2042), which marks where a conversation's "
                                 f"turns break; give a conversation as a {TURNS!r} list, or write the prompt "
                                 "without it.")
        check_length(text, max_chars, at)
    return text


def build_prompt_frame(
    rows: Sequence[tuple[int, object] | tuple[int, object, dict]], where: str, max_chars: int,
    limit: int | None = None, max_turns: int | None = None, unit: str = "line",
) -> pd.DataFrame:
    """The prompt frame; rows are (line, text) or (line, text, {extra column: value}), the text a
    string or a conversation's list of user turns, the line counted in ``unit`` ("line" of a file,
    "row" of a table, "item" of a list). An extra column present in the file must have a value on
    every line. A text holding the turn mark is refused: it would be read as a conversation."""
    texts: list[str] = []
    lines: list[int] = []
    extras: dict[str, list[str]] = {}
    for line, value, *more in rows:
        at = f"{where}, {unit} {line}"
        text = prompt_text(value, at, max_chars, max_turns)
        for key, raw in (more[0] if more else {}).items():
            cell = "" if _missing(raw) else str(raw).strip()
            if not cell:
                raise InputDataError(f"{at}: the {key!r} column is empty. Give every prompt {with_article(key)}, or remove "
                                     "the column.")
            extras.setdefault(key, []).append(cell)
        texts.append(text)
        lines.append(line)
    for key, values in extras.items():  # a JSONL key given on some lines only
        if len(values) != len(texts):
            missing = next(ln for ln, _value, *more in rows if key not in (more[0] if more else {}))
            raise InputDataError(f"{where}, {unit} {missing}: no {key!r}, which other lines give. Give every prompt "
                                 f"{with_article(key)}, or remove it from every line.")
    if not texts:
        raise InputDataError(f"{where}: no prompts found (expected at least one non-empty prompt).")
    frame = pd.DataFrame({"text": texts, "source_line": lines, **extras})
    frame.insert(0, "prompt_id", [prompt_id(t) for t in texts])
    frame = frame.drop_duplicates("prompt_id", keep="first").reset_index(drop=True)
    frame.attrs["duplicates_dropped"] = len(texts) - len(frame)  # reported by the CLI's preflight
    frame.attrs["source"] = (where, unit)  # where later checks of a column say a bad value is
    if limit is not None:
        frame = frame.head(limit)
    return frame
