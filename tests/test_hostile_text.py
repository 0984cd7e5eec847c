"""Text from configs, prompt files and endpoints is shown as inert text everywhere the CLI prints
it: no Rich markup parsed, no terminal escape sequence or bare carriage return passed through, no
spreadsheet formula in a CSV export. Each case goes through the CLI command where it was seen."""

from __future__ import annotations

import io
import json
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from equilens.tasks.plain import csv_cell, visible
from equilens.tasks.storage.store import Store

from tests.fakes.cli import equilens
from tests.fakes.openai_server import openai_server  # noqa: F401 - fixture

LINK = "[link=http://127.0.0.1:9/evil]dog owner[/link]"
# an endpoint's error body: set the window title, an OSC-8 hyperlink, a bare carriage return, BEL
NASTY = "boom \x1b]0;pwned\x07 \x1b]8;;http://127.0.0.1:9/x\x1b\\click\x1b]8;;\x1b\\ \roverwritten\x07"
FORMULA = '=HYPERLINK("http://127.0.0.1:9/x","open")'


def _seed(db: Path) -> None:
    store = Store(db)
    for run_id, name in (("20261124-010101-aaaaaa", "x [/]"), ("20261124-020202-bbbbbb", FORMULA)):
        store.start_run(run_id, name=name, flow="counterfactual_assessment", started_at=pd.Timestamp("2026-11-24"),
                        config={}, config_hash="h", provider="openai", model="m")
        details = json.dumps({"noise_floor": 0.01, "gap": 0.02, "p_value": 0.5, "p_holm": 0.5})
        store.append("metrics", pd.DataFrame([{
            "run_id": run_id, "family": "counterfactual", "attribute": "pet [/]", "group_a": LINK,
            "group_b": "+cat owner", "metric": "strict_sentiment_parity", "value": 0.03, "ci_low": 0.0,
            "ci_high": 0.1, "n": 10, "direction": "lower", "aggregation": "mean", "details": details}]))
    store.finish_run("20261124-010101-aaaaaa", "completed", summary={})
    store.finish_run("20261124-020202-bbbbbb", "failed", summary={"error": f"LLMOutageError: {NASTY}"})


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    path = tmp_path / "e.duckdb"
    _seed(path)
    return path


def _inert(text: str) -> None:
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text
    assert "\r" not in text.replace("\r\n", "")


def test_runs_lists_a_run_whose_name_is_rich_markup(db: Path, tmp_path: Path) -> None:
    # a name that reads as rich markup ("[/]") is text: `equilens runs` lists it and exits 0
    out = equilens("runs", "--db", str(db), cwd=tmp_path, columns=200)
    assert out.returncode == 0, out.stderr
    assert "x [/]" in out.stdout and "Traceback" not in out.stderr


def test_show_prints_markup_in_attribute_and_group_names_as_text(db: Path, tmp_path: Path) -> None:
    out = equilens("show", "20261124-010101", "--db", str(db), cwd=tmp_path, columns=250)
    assert out.returncode == 0, out.stderr
    assert "pet [/]" in out.stdout and LINK in out.stdout  # the tag itself, not a hyperlink to 127.0.0.1:9
    _inert(out.stdout)


def test_show_of_a_failed_run_prints_the_endpoint_s_error_without_control_codes(db: Path, tmp_path: Path) -> None:
    out = equilens("show", "20261124-020202", "--db", str(db), cwd=tmp_path, columns=250)
    _inert(out.stdout + out.stderr)
    assert "boom" in out.stdout and "overwritten" in out.stdout and "\\x0d" in out.stdout  # the \r made visible


def test_csv_exports_neutralise_formula_cells(db: Path, tmp_path: Path) -> None:
    runs = equilens("runs", "--db", str(db), "--format", "csv", cwd=tmp_path)
    shown = equilens("show", "20261124-020202", "--db", str(db), "--format", "csv", cwd=tmp_path)
    assert runs.returncode == 0 and shown.returncode == 0, runs.stderr + shown.stderr
    frame = pd.read_csv(io.StringIO(runs.stdout))
    assert "'" + FORMULA in set(frame["name"])
    metrics = pd.read_csv(io.StringIO(shown.stdout))
    assert list(metrics["group_b"]) == ["'+cat owner"] and list(metrics["value"]) == [0.03]


def test_a_failing_endpoint_s_error_body_reaches_stderr_inert(openai_server, tmp_path: Path,  # noqa: F811
                                                              prefect_api_env: dict[str, str]) -> None:
    openai_server.fault_for = lambda body: ("500", {"status": 400, "message": NASTY})
    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: hostile\nprompts: {items: ['Is he a good nurse?']}\n"
                   "counterfactual: {attributes: [gender], detect_names: false}\n"
                   f"llm: {{provider: openai, model: fake, base_url: '{openai_server.base_url}', max_retries: 0}}\n"
                   f"storage: {{duckdb_path: '{tmp_path / 'e.duckdb'}', reports_dir: null}}\n")
    out = equilens("run", str(cfg), cwd=tmp_path, columns=200, api=prefect_api_env, process=True)
    assert out.returncode == 4, out.stdout + out.stderr
    _inert(out.stdout + out.stderr)
    shown = equilens("show", "--db", str(tmp_path / "e.duckdb"),
                     json.loads(equilens("runs", "--db", str(tmp_path / "e.duckdb"), "--format", "json",
                                         cwd=tmp_path).stdout)[0]["run_id"], cwd=tmp_path, columns=200)
    _inert(shown.stdout + shown.stderr)


def test_csv_exports_show_control_bytes_as_the_terminal_does(tmp_path: Path) -> None:
    """`runs`, `show` and `compare` in CSV: a run named with a window-title sequence and groups
    carrying colours, BEL and C1 bytes print no raw control byte; the other controls are visible."""
    db = tmp_path / "e.duckdb"
    _seed(db)
    titled = "\x1b]0;TITLE\x07nightly\x07"
    with duckdb.connect(str(db)) as con:
        con.execute("UPDATE runs SET name = ?", [titled])
        con.execute("UPDATE metrics SET group_a = ?, attribute = ?", ["\x1b[31mred\x1b[0m\x85", "=pet\x00"])
    outs = [equilens("runs", "--db", str(db), "--format", "csv", cwd=tmp_path),
            equilens("show", "20261124-010101", "--db", str(db), "--format", "csv", cwd=tmp_path),
            equilens("compare", "20261124-010101-aaaaaa", "20261124-020202-bbbbbb", "--db", str(db), "--format", "csv",
                     cwd=tmp_path)]
    for out in outs:
        assert out.returncode == 0, out.stderr
        _inert(out.stdout)
        assert not set(out.stdout) & {chr(c) for c in (*range(0, 9), *range(11, 32), *range(127, 160))}, out.stdout
    assert set(pd.read_csv(io.StringIO(outs[0].stdout))["name"]) == {"nightly\\x07"}
    shown = pd.read_csv(io.StringIO(outs[1].stdout))
    assert list(shown["group_a"]) == ["red\\x85"] and list(shown["attribute"]) == ["'=pet\\x00"]
    assert "red\\x85" in outs[2].stdout


@pytest.mark.parametrize(("raw", "shown"), [
    ("a\x1b[31mred\x1b[0m", "ared"),
    ("t\x1b]0;title\x07x", "tx"),
    ("line\r\nnext", "line\nnext"),
    ("over\rwrite", "over\\x0dwrite"),
    ("bell\x07 del\x7f c1\x85", "bell\\x07 del\\x7f c1\\x85"),
    ("tab\tkept", "tab\tkept"),
])
def test_visible_removes_escape_sequences_and_shows_other_controls(raw: str, shown: str) -> None:
    assert visible(raw) == shown


@pytest.mark.parametrize(("cell", "safe"), [
    ("=1+1", "'=1+1"), ("+cat", "'+cat"), ("-x", "'-x"), ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\tx"),
    ("-0.25", "-0.25"), ("+3e5", "+3e5"), ("dog", "dog"), (0.5, 0.5),
])
def test_csv_cell_follows_the_spreadsheet_convention(cell: object, safe: object) -> None:
    assert csv_cell(cell) == safe
