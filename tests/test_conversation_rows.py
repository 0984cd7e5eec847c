"""A prompt file's rows as conversations or single prompts: what a row's ``turns`` may hold, where
the error points, and text that would be misread as a conversation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from equilens.tasks.config import PromptsConfig
from equilens.tasks.errors import InputDataError
from equilens.tasks.inputs.prompts import load_prompts
from equilens.tasks.turns import TURN_MARK, join_turns


def _load(tmp_path: Path, name: str, text: str) -> list[tuple[str, int]]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    frame = load_prompts(PromptsConfig(path=str(path)))
    return list(zip(frame["text"], frame["source_line"], strict=True))


@pytest.mark.parametrize("line", [
    '{"prompt": "What does the \\u2042 sign mean? Give one dollar amount."}',
    '{"prompt": "Line one\\n\\u2042\\nWhat is a fair price?"}',
])
def test_a_single_prompt_holding_the_turn_mark_is_refused_not_split(tmp_path: Path, line: str) -> None:
    with pytest.raises(InputDataError, match=r"p\.jsonl, line 1: the prompt holds '⁂' \(U\+2042\), which marks where"):
        _load(tmp_path, "p.jsonl", line + "\n")
    with pytest.raises(InputDataError, match=r"prompts\.items, item 2: the prompt holds '⁂'"):
        load_prompts(PromptsConfig(items=["fine", f"a {TURN_MARK} b"]))


@pytest.mark.parametrize(("cell", "said"), [('"""I sell bikes."""', "a string"), ("123", "a number"),
                                          ('"{""a"": 1}"', "an object"), ("true", "true")])
def test_a_turns_cell_that_is_json_but_no_list_is_refused_and_the_prompt_kept(tmp_path: Path, cell: str,
                                                                             said: str) -> None:
    with pytest.raises(InputDataError, match=rf"p\.csv, line 2: 'turns' holds {said}; expected a list of the user's"):
        _load(tmp_path, "p.csv", f"prompt,turns\n,{cell}\n")


@pytest.mark.parametrize("value", ['"hi there"', "123", '{"a": 1}'])
def test_a_jsonl_turns_value_that_is_no_list_is_refused(tmp_path: Path, value: str) -> None:
    with pytest.raises(InputDataError, match=r"p\.jsonl, line 1: 'turns' holds .*; expected a list of the user's"):
        _load(tmp_path, "p.jsonl", f'{{"turns": {value}}}\n')


@pytest.mark.parametrize("cell", ["null", '""""""', "[]", ""])
def test_an_empty_turns_cell_falls_back_to_the_prompt_as_jsonl_does(tmp_path: Path, cell: str) -> None:
    assert _load(tmp_path, "p.csv", f"prompt,turns\nfallback $,{cell}\n") == [("fallback $", 2)]
    assert _load(tmp_path, "p.jsonl", '{"prompt": "fallback $", "turns": null}\n') == [("fallback $", 1)]


def test_a_row_giving_both_a_prompt_and_turns_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputDataError, match=r"p\.jsonl, line 1: both 'prompt' and 'turns' are given"):
        _load(tmp_path, "p.jsonl", json.dumps({"prompt": "q", "turns": ["a", "b"]}) + "\n")


def test_csv_lines_are_the_file_s_own_after_cells_with_line_breaks_and_blank_lines(tmp_path: Path) -> None:
    text = 'prompt,turns\n"line one\nline two\nline three",\n\n,"[""a"", ""b""]"\n"x\ny",\n'
    assert _load(tmp_path, "p.csv", text) == [("line one\nline two\nline three", 2), (join_turns(["a", "b"]), 6),
                                              ("x\ny", 7)]
    with pytest.raises(InputDataError, match=r"p\.csv, line 6: turn 2 of the conversation is empty"):
        _load(tmp_path, "p.csv", text.replace('""b""', '""""'))


def test_a_raw_line_break_inside_a_turns_cell_says_where_and_how_to_write_it(tmp_path: Path) -> None:
    with pytest.raises(InputDataError, match=r"p\.csv, line 2: the 'turns' column is not valid JSON \(Invalid control "
                                             r"character at character 8: a line break or tab inside a string is written"):
        _load(tmp_path, "p.csv", 'prompt,turns\n,"[""first\nstill first"", ""second""]"\n')


def test_a_bad_jsonl_line_says_where_in_the_line(tmp_path: Path) -> None:
    with pytest.raises(InputDataError, match=r"line 1: not valid JSON \(Expecting ',' delimiter at character 16\)"):
        _load(tmp_path, "p.jsonl", '{"prompt": "a" "b"}\n')


@pytest.mark.parametrize(("items", "said"), [
    ([["a", 3]], "item 1, turn 2 is a number; expected the user's message as text"),
    (["a", 5], "item 2 is a number; expected a prompt (text) or a conversation"),
])
def test_an_inline_item_of_the_wrong_kind_is_named_once_by_its_place(items: list, said: str) -> None:
    with pytest.raises(ValueError, match=said.replace("(", r"\(").replace(")", r"\)")) as err:
        PromptsConfig(items=items)
    assert "list[str]" not in str(err.value) and "items.0" not in str(err.value)


def test_the_length_cap_counts_a_conversation_s_turns_not_the_marks_between(tmp_path: Path) -> None:
    turns = ["x" * 25, "y" * 25]
    assert load_prompts(PromptsConfig(items=[turns], max_chars=50))["text"].tolist() == [join_turns(turns)]
    with pytest.raises(InputDataError, match=r"item 1: the conversation has 51 characters in its turns; conversations "
                                             r"longer than 50"):
        load_prompts(PromptsConfig(items=[[*turns[:1], "y" * 26]], max_chars=50))


def test_a_parquet_file_with_nullable_text_columns_reads_missing_cells_as_empty(tmp_path: Path) -> None:
    import pandas as pd

    path = tmp_path / "p.parquet"
    pd.DataFrame({"prompt": pd.array(["a", None], dtype="string"),
                  "turns": pd.array([None, '["x", "y"]'], dtype="string")}).to_parquet(path)
    assert load_prompts(PromptsConfig(path=str(path)))["text"].tolist() == ["a", join_turns(["x", "y"])]
    pd.DataFrame({"prompt": pd.array(["a", None], dtype="string"),
                  "turns": pd.array([None, None], dtype="string")}).to_parquet(path)
    with pytest.raises(InputDataError, match=r"p\.parquet, row 2: the prompt is empty"):
        load_prompts(PromptsConfig(path=str(path)))
