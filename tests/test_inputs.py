"""Config and prompt-file errors: one readable paragraph naming the file, line and expectation."""

from __future__ import annotations

from pathlib import Path

import pytest
from equilens.tasks.config import PromptsConfig, load_config, parse_config
from equilens.tasks.errors import ConfigError, InputDataError
from equilens.tasks.inputs.prompts import load_prompts, prompt_id


def _load(path: Path, **kw: object):
    return load_prompts(PromptsConfig(path=str(path), **kw))


def test_csv_jsonl_txt_parquet_give_the_same_ids(tmp_path: Path) -> None:
    prompts = ["He is a nurse.", "Describe a Black engineer."]
    (tmp_path / "p.csv").write_text("prompt\n" + "\n".join(f'"{p}"' for p in prompts) + "\n")
    (tmp_path / "p.jsonl").write_text("\n".join(f'{{"prompt": "{p}"}}' for p in prompts) + "\n")
    (tmp_path / "p.txt").write_text("\n".join(prompts) + "\n\n")
    import pandas as pd

    pd.DataFrame({"prompt": prompts}).to_parquet(tmp_path / "p.parquet")
    ids = [prompt_id(p) for p in prompts]
    for name in ("p.csv", "p.jsonl", "p.txt", "p.parquet"):
        assert _load(tmp_path / name)["prompt_id"].tolist() == ids
    inline = load_prompts(PromptsConfig(items=prompts + [prompts[0]]))
    assert inline["prompt_id"].tolist() == ids  # duplicates collapse onto one stable id


def test_wrong_column_lists_the_columns(tmp_path: Path) -> None:
    (tmp_path / "p.csv").write_text("question,answer\nhi,there\n")
    with pytest.raises(InputDataError, match=r"no column 'prompt'.*question, answer"):
        _load(tmp_path / "p.csv")


def test_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(InputDataError, match="does not exist"):
        _load(tmp_path / "nope.csv")
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(InputDataError, match="is empty"):
        _load(tmp_path / "empty.csv")
    (tmp_path / "header.csv").write_text("prompt\n")
    with pytest.raises(InputDataError, match="no prompts found"):
        _load(tmp_path / "header.csv")


def test_non_utf8_reports_the_line(tmp_path: Path) -> None:
    (tmp_path / "p.txt").write_bytes(b"fine\nalso fine\ncaf\xe9 latin-1\n")
    with pytest.raises(InputDataError, match=r"line 3: bytes that are not UTF-8"):
        _load(tmp_path / "p.txt")


def test_blank_prompt_and_bad_json_report_the_line(tmp_path: Path) -> None:
    (tmp_path / "p.csv").write_text('prompt\n"ok"\n"   "\n')
    with pytest.raises(InputDataError, match=r"line 3: the prompt is empty"):
        _load(tmp_path / "p.csv")
    (tmp_path / "p.jsonl").write_text('{"prompt": "ok"}\n{"prompt": \n')
    with pytest.raises(InputDataError, match=r"line 2: not valid JSON"):
        _load(tmp_path / "p.jsonl")


def test_huge_single_line_is_refused(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("x" * (50 * 1024 * 1024))
    with pytest.raises(InputDataError, match=r"line 1: the prompt has 52,428,800 characters"):
        _load(tmp_path / "big.txt")


def _config_error(tmp_path: Path, yaml_text: str) -> tuple[Path, str]:
    """Write ``yaml_text`` as a config file; the ConfigError message loading it gives."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml_text)
    with pytest.raises(ConfigError) as err:
        load_config(cfg)
    return cfg, str(err.value)


def test_config_unknown_keys_and_wrong_types(tmp_path: Path) -> None:
    _, text = _config_error(tmp_path, "prompts: {items: [hi]}\nllm: {temprature: 1, count: many}\n")
    assert "llm.temprature: unknown key" in text
    assert "llm.count: Input should be a valid integer" in text


def test_old_bias_test_bootstrap_key_names_its_new_name(tmp_path: Path) -> None:
    cfg, text = _config_error(tmp_path, "assessment: bias_test\nbias_test: {bootstrap_resamples: 30}\n")
    assert "bias_test: bias_test.bootstrap_resamples was renamed bias_test.subsample_rounds" in text
    assert "Value error" not in text and "metrics.bootstrap_resamples is a different setting" in text
    assert load_config(cfg, {"bias_test": {"subsample_rounds": 12}}).bias_test.subsample_rounds == 12


def test_config_overrides_and_hash(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("prompts: {items: [hi]}\n")
    a = load_config(cfg)
    b = load_config(cfg, {"llm.count": 3})
    assert b.llm.count == 3 and a.config_hash() != b.config_hash()
    with pytest.raises(ConfigError, match="give prompts.path"):
        parse_config({"prompts": {}})
    with pytest.raises(ConfigError, match="not valid YAML"):
        (tmp_path / "bad.yaml").write_text("prompts: [unclosed\n")
        load_config(tmp_path / "bad.yaml")
