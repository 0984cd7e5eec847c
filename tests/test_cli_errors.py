"""Bad input of every kind: one `error:` paragraph, exit 2, no traceback, and found before Prefect starts."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

import pytest

from tests.fakes.cli import Ran, equilens


def _no_traceback(out: Ran) -> None:
    whole = out.stdout + out.stderr
    assert "Traceback" not in whole, whole
    assert out.stderr.startswith("error: "), whole


def _write(folder: Path, name: str, data: str | bytes) -> Path:
    path = folder / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


# (config body, files to write, message expected in stderr); storage goes to tmp_path
CASES = {
    "missing column": ("prompts: {path: p.csv}\n", {"p.csv": "text\nIs he a nurse?\n"},
                       "no column 'prompt' (prompts.column) or 'turns' (conversations). Columns found: text."),
    "whitespace-only prompt": ("prompts: {path: p.txt}\n", {"p.txt": "   \n \t \n"},
                               "no prompts found"),
    "blank csv cell": ("prompts: {path: p.csv}\n", {"p.csv": "prompt\nIs he a nurse?\n\"   \"\n"},
                       "line 3: the prompt is empty"),
    "not utf-8": ("prompts: {path: p.csv}\n", {"p.csv": b"prompt\nIs he a caf\xe9 owner?\n"},
                  "bytes that are not UTF-8"),
    "prompt too long": ("prompts: {path: p.csv}\n", {"p.csv": "prompt\n" + "he " * 350_000 + "\n"},
                        "prompts longer than 20,000 are refused"),
    "no api key": ("prompts: {items: ['Is he a nurse?']}\nllm: {provider: openai, model: gpt-4o-mini, "
                   "api_key_env: EQUILENS_TEST_NO_SUCH_KEY}\n", {}, "No API key: set the environment variable "
                   "EQUILENS_TEST_NO_SUCH_KEY"),
    "azure without endpoint": ("prompts: {items: ['Is he a nurse?']}\nllm: {provider: azure, model: m}\n", {},
                               "provider azure needs llm.azure_endpoint"),
    "unknown provider": ("prompts: {items: ['Is he a nurse?']}\nllm: {provider: opneai}\n", {},
                         "llm.provider: unknown provider 'opneai'"),
    "unknown metric": ("prompts: {items: ['Is he a nurse?']}\nmetrics: {names: [cosine_similarty]}\n", {},
                       "unknown metric 'cosine_similarty' (did you mean 'cosine_similarity'?)"),
    "mismatched custom words": ("prompts: {items: ['Is the young man a nurse?']}\ncounterfactual: "
                                "{attributes: [], custom: {age: {young: [young, youth], old: [old]}}}\n", {},
                                "same number of words"),
    "no attributes": ("prompts: {items: ['Is he a nurse?']}\ncounterfactual: {attributes: []}\n", {},
                      "counterfactual.attributes is empty"),
    "unknown key": ("prompts: {items: ['Is he a nurse?']}\nllm: {temprature: 1}\n", {},
                    "llm.temprature: unknown key (check the spelling; `equilens options` lists every key) (line 2)"),
    "unreachable dask scheduler": ("prompts: {items: ['Is he a nurse?']}\nexecution: {task_runner: dask, "
                                   "dask_address: 'tcp://127.0.0.1:1'}\n", {},
                                   "execution.dask_address: no Dask scheduler answers at tcp://127.0.0.1:1"),
    "not a dask address": ("prompts: {items: ['Is he a nurse?']}\nexecution: {task_runner: dask, "
                           "dask_address: 'scheduler'}\n", {}, "is not a scheduler address; write tcp://HOST:PORT"),
    "shard size of zero": ("prompts: {items: ['Is he a nurse?']}\nexecution: {task_runner: dask, shard_size: 0}\n",
                           {}, "execution.shard_size"),
    "duckdb parent not creatable": ("prompts: {items: ['Is he a nurse?']}\n", {"blocker": "a file"},
                                    "storage.duckdb_path: cannot create"),
    "reports_dir not writable": ("prompts: {items: ['Is he a nurse?']}\n", {"blocker": "a file"},
                                 "storage.reports_dir: cannot write to"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_is_one_paragraph_exit_2_before_prefect(tmp_path: Path, case: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[bool] = []
    monkeypatch.setattr("equilens.tasks.orchestration.prefect_api.start_prefect_api", lambda *a, **k: started.append(True))
    body, files, message = CASES[case]
    for name, data in files.items():
        _write(tmp_path, name, data)
    db = tmp_path / "blocker" / "sub" / "e.duckdb" if case == "duckdb parent not creatable" else tmp_path / "e.duckdb"
    reports = tmp_path / "blocker" / "runs" if case == "reports_dir not writable" else tmp_path / "runs"
    cfg = _write(tmp_path, "c.yaml", body + f"storage: {{duckdb_path: '{db}', reports_dir: '{reports}'}}\n")
    t0 = time.perf_counter()
    out = equilens("run", str(cfg), cwd=tmp_path, env={"EQUILENS_TEST_NO_SUCH_KEY": ""})
    seconds = time.perf_counter() - t0
    assert out.returncode == 2, out.stdout + out.stderr
    _no_traceback(out)
    assert message in out.stderr
    assert not started and "Flow run" not in out.stderr  # Prefect never started
    assert seconds < 60  # in seconds (a loaded 2-core machine), not after the model calls


def test_yaml_error_in_set_is_one_line(tmp_path: Path) -> None:
    cfg = _write(tmp_path, "c.yaml", "prompts: {items: ['Is he a nurse?']}\n")
    out = equilens("run", str(cfg), "--set", "counterfactual.attributes=[gender", cwd=tmp_path)
    assert out.returncode == 2
    _no_traceback(out)
    assert "--set 'counterfactual.attributes=[gender': the value is not valid YAML" in out.stderr


@pytest.mark.parametrize("where", ["config", "prompts.path", "--set"])
def test_special_paths_and_deep_yaml_are_one_paragraph(tmp_path: Path, where: str) -> None:
    """A symbolic-link loop and /dev/null are named for what they are, not "does not exist"; YAML
    nested a few thousand levels deep is one paragraph, not a RecursionError traceback."""
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    deep = "[" * 3000 + "]" * 3000
    ok = _write(tmp_path, "ok.yaml", "prompts: {items: ['Is he a nurse?']}\n")
    cases = {"config": [(("run", str(tmp_path / "a")), "is a loop of symbolic links"),
                        (("run", "/dev/null"), "is a character device, not a regular file"),
                        (("run", str(_write(tmp_path, "deep.yaml", f"name: {deep}\n"))), "nests lists or mappings too deeply")],
             "prompts.path": [(("run", str(ok), "--set", f"prompts.path={tmp_path / 'a'}"), "is a loop of symbolic links"),
                              (("run", str(ok), "--set", "prompts.path=/dev/null"), "/dev/null is a character device")],
             "--set": [(("run", str(ok), "--set", f"name={deep}"), "nests too deeply")]}
    for args, message in cases[where]:
        out = equilens(*args, cwd=tmp_path)
        assert out.returncode == 2, out.stderr
        _no_traceback(out)
        assert message in out.stderr and "does not exist" not in out.stderr, out.stderr


def test_config_path_that_is_a_directory(tmp_path: Path) -> None:
    out = equilens("run", str(tmp_path), cwd=tmp_path)
    assert out.returncode == 2
    _no_traceback(out)
    assert "is a directory" in out.stderr and "does not exist" not in out.stderr


def test_duplicate_prompts_are_reported(tmp_path: Path) -> None:
    # a bad metric name stops the run right after the prompt check, so no model is needed
    cfg = _write(tmp_path, "c.yaml", "prompts: {items: ['Is he a nurse?', 'Is he a nurse?', ' Is he a nurse? ']}\n"
                 f"storage: {{duckdb_path: '{tmp_path / 'e.duckdb'}', reports_dir: null}}\n")
    from equilens.flows.running.preflight import preflight
    from equilens.tasks.config import load_config

    warnings = preflight(load_config(cfg))
    assert warnings[0] == "2 duplicate prompt(s) dropped: each distinct prompt is asked once."


def test_prompts_needed_for_a_permutation_test_to_pass_holm() -> None:
    from equilens.tasks.metrics.judged import prompts_needed

    # smallest two-sided p with n prompts = 2**(1-n); Holm's first threshold = 0.05 / pairs
    # 1 pair: 0.05 -> n = 6 (2**-5 = 0.031; n = 5 gives 0.0625); 3 pairs (gender): 0.0167 -> n = 7 (0.0156)
    # 15 pairs (six race groups): 0.00333 -> n = 10 (2**-9 = 0.00195; n = 9 gives 0.0039)
    assert [prompts_needed(k, 0.05) for k in (1, 3, 15)] == [6, 7, 10]


def test_too_few_prompts_per_attribute_is_a_warning(tmp_path: Path) -> None:
    from equilens.flows.running.preflight import preflight
    from equilens.tasks.config import parse_config

    jobs = ("nurse", "pilot", "cook", "judge", "coach", "baker", "tailor", "clerk", "guard")
    items = [f"Is he a good {job}?" for job in jobs]
    cfg = parse_config({"prompts": {"items": items + ["Is the white man kind?"]},
                        "counterfactual": {"detect_names": False},
                        "storage": {"duckdb_path": str(tmp_path / "e.duckdb"), "reports_dir": None}})
    warnings = preflight(cfg)
    # 9 gender prompts: enough for 3 pairs x 4 judged metrics (2^(1-9) < 0.05 / 12)
    assert not any("mention gender" in w for w in warnings)
    [race] = [w for w in warnings if "mention race" in w]
    assert race.startswith("1 prompt(s) mention race; with 15 group pairs and 4 judged metrics its permutation "
                           "test needs at least 12")
    fewer = preflight(parse_config({**cfg.model_dump(), "prompts": {"items": items[:8]}}))
    assert any(w.startswith("8 prompt(s) mention gender") for w in fewer)
    # a prompt naming a person is expanded for gender (and race) too: 8 + 1 = 9 is enough, as the
    # verdict then finds (a warning counting 8 would call any gender difference unshowable)
    named = parse_config({**cfg.model_dump(), "prompts": {"items": items[:8] + ["Write a note to Emily."]},
                          "counterfactual": {"detect_names": True}})
    assert not any("mention gender" in w for w in preflight(named))


def test_report_out_unwritable(tmp_path: Path) -> None:
    from equilens.tasks.storage.store import Store

    db = tmp_path / "e.duckdb"
    store = Store(db)
    store.init()
    store.start_run("r1", name="n", flow="counterfactual_assessment", started_at=datetime(2026, 1, 1), config={},
                    config_hash="h", provider="openai", model="m", versions={})
    _write(tmp_path, "blocker", "a file")
    out = equilens("report", "r1", "--db", str(db), "--out", str(tmp_path / "blocker" / "r.html"), cwd=tmp_path)
    assert out.returncode == 2
    _no_traceback(out)
    assert "cannot write the report to" in out.stderr


@pytest.mark.parametrize(("argv", "words"), [
    (["show"], "Missing argument 'run_id'"),
    (["shw"], "No such command 'shw'. Did you mean 'show'?"),
    (["run", "--nope"], "No such option: --nope"),
])
def test_a_usage_error_is_the_usage_and_exit_2_never_a_traceback(argv: list[str], words: str,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """What the command line's entry point (not a test runner's) does with a missing argument, an
    unknown command or option: typer's own copy of click raises errors the click package does not catch."""
    from equilens.flows.cli import main

    assert main(argv) == 2
    err = capsys.readouterr().err
    assert words in err and "Usage: " in err and "Traceback" not in err, err


@pytest.mark.parametrize(("value", "said"), [(3, "a number"), (2.5, "a number"), (True, "true"), (None, "null"),
                                             ("x", "a string"), ([1], "a list"), ({"a": 1}, "an object"),
                                             (b"x", "a bytes"), (object(), "an object")])
def test_a_message_names_a_value_read_from_json_or_yaml_as_those_formats_do(value: object, said: str) -> None:
    from equilens.tasks.errors import json_kind

    assert json_kind(value) == said


def test_a_config_that_is_a_list_says_so_in_yaml_s_words(tmp_path: Path) -> None:
    """A list where the settings go is one paragraph before anything reads a setting from it."""
    out = equilens("run", str(_write(tmp_path, "c.yaml", "- name: x\n")))
    _no_traceback(out)
    assert out.returncode == 2 and "expected a mapping at the top level" in out.stderr, out.stderr
    assert "got a list" in out.stderr, out.stderr


def test_duplicate_prompts_are_reported_for_every_assessment_that_reads_prompts(tmp_path: Path) -> None:
    from equilens.flows.running.preflight import preflight
    from equilens.tasks.config import load_config

    cfg = _write(tmp_path, "c.yaml", "assessment: identity\n"
                 "prompts: {items: [[Hi, 'What should I ask for?'], [Hi, 'What should I ask for?'], 'Is it fair?']}\n"
                 f"storage: {{duckdb_path: '{tmp_path / 'e.duckdb'}', reports_dir: null}}\n")
    assert preflight(load_config(cfg))[0] == "1 duplicate prompt(s) dropped: each distinct prompt is asked once."


def test_a_conversation_signal_at_a_turn_the_prompts_do_not_reach_is_warned_of(tmp_path: Path) -> None:
    from equilens.flows.running.preflight import preflight
    from equilens.tasks.config import load_config

    cfg = _write(tmp_path, "c.yaml", "assessment: identity\n"
                 "prompts: {items: [[Hi, 'What should I ask for?'], 'Is it fair?', [a, b, c]]}\n"
                 "identity: {signals: [{name: intro, placement: conversation, at: 3, template: 'I am {name}.'}]}\n"
                 f"storage: {{duckdb_path: '{tmp_path / 'e.duckdb'}', reports_dir: null}}\n")
    assert preflight(load_config(cfg)) == ["identity.signals 'intro': at 3 is past the turns of 2 of 3 prompts (the "
                                           "shortest has 1); there the line is told just before the prompt's last turn."]


def test_a_yaml_syntax_error_names_its_file_line_and_column(tmp_path: Path) -> None:
    from equilens.tasks.config import load_config
    from equilens.tasks.errors import ConfigError

    path = _write(tmp_path, "c.yaml", "name: x\nllm: {provider: python\n  target: a:b\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert f"Config file {path} is not valid YAML" in str(err.value) and "at line 3, column 9" in str(err.value)
    assert "<unicode string>" not in str(err.value)


def test_a_config_error_says_the_line_of_its_key_or_that_it_came_from_set(tmp_path: Path) -> None:
    from equilens.tasks.config import load_config
    from equilens.tasks.errors import ConfigError

    path = _write(tmp_path, "c.yaml", "name: x\nprompts: {items: [a]}\nidentity:\n  signals:\n    - name: s\n"
                                      "      placement: app\n      template: '{identity}'\n      wrong: 1\nllm:\n"
                                      "  count: many\n")
    with pytest.raises(ConfigError) as err:
        load_config(path, {"assessment": "identity", "llm.nope": 3})
    said = str(err.value)
    assert "  - llm.count: Input should be a valid integer, unable to parse string as an integer (line 10)" in said, said
    assert "  - llm.nope: unknown key (check the spelling; `equilens options` lists every key) (given with --set)" \
        in said, said
    assert "identity.signals #1" in said and "(line 8)" in said, said  # the list item's key, counted from 1
