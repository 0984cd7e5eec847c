"""CLI output a person and a CI job can rely on: no number hidden at 80 columns, json/csv, prefixes,
significance marks, YAML in `options`, progress lines in logs, a Prefect UI form with defaults."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from equilens.tasks.storage.store import Store

from tests.fakes.cli import equilens
from tests.fakes.runs import gender_run, how_tested

ROOT = Path(__file__).resolve().parents[1]
GROUPS = ["white", "black", "asian", "hispanic", "native_american", "middle_eastern"]
METRICS = {"strict_sentiment_parity": "lower", "weak_sentiment_parity": "lower", "cosine_similarity": "higher",
           "bleu_similarity": "higher", "rougel_similarity": "higher"}


def _metrics(run_id: str) -> pd.DataFrame:
    """Every pair of six race groups x five metrics, distinct values with intervals, some significant."""
    rows, k = [], 0
    for i, a in enumerate(GROUPS):
        for b in GROUPS[i + 1:]:
            for name, direction in METRICS.items():
                k += 1
                v = round(0.001 * k + 0.1, 3)
                rows.append({"run_id": run_id, "family": "counterfactual", "attribute": "race", "group_a": a,
                             "group_b": b, "metric": name, "value": v, "ci_low": round(v - 0.05, 3),
                             "ci_high": round(v + 0.111, 3), "n": 12, "direction": direction, "aggregation": "mean",
                             "details": json.dumps({"p_holm": 0.01 if k % 7 == 0 else 0.4, **how_tested(name)})})
    return pd.DataFrame(rows)


def _cells(frame: pd.DataFrame) -> list[str]:
    return [f"{v:.3f} ({lo:.3f}–{hi:.3f})" for v, lo, hi in zip(frame["value"], frame["ci_low"], frame["ci_high"],
                                                                   strict=True)]


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    path = tmp_path / "e.duckdb"
    store = Store(path)
    for run_id, started in (("20261122-101010-aaaaaa", "2026-11-22 10:10"), ("20261122-111111-bbbbbb", "2026-11-22 11:11")):
        store.start_run(run_id, name="nightly", flow="counterfactual_assessment", started_at=pd.Timestamp(started),
                        config={"llm": {"temperature": 1.0}}, config_hash="h", provider="openai", model="m")
        store.append("metrics", _metrics(run_id))
        store.finish_run(run_id, "completed", summary={})
    return path


def test_metrics_table_hides_no_number_at_80_columns(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    from equilens.tasks.reporting.terminal import print_metrics_table

    monkeypatch.setenv("COLUMNS", "80")
    frame = _metrics("r")
    print_metrics_table(frame)
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "…" not in out
    for cell in _cells(frame):
        assert cell in out  # every value with both interval bounds, whole on one line
    for a, b in zip(frame["group_a"], frame["group_b"], strict=True):
        assert f"{a} vs {b}" in out


def test_wide_terminals_keep_one_column_per_metric(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    from equilens.tasks.reporting.terminal import print_metrics_table

    monkeypatch.setenv("COLUMNS", "200")
    frame = _metrics("r")
    print_metrics_table(frame)
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if "groups" in line)
    assert "strict parity" in header and "ROUGE-L" in header
    for cell in _cells(frame):
        assert cell in out
    # the counterfactual family's own legend under its tables (a decisions run has its own: test_decisions)
    assert "* Holm-adjusted p < 0.05; noise floor = parity: group labels swapped within prompts, similarity: a " \
           "same-group control (or two samples, see counterfactual.noise_floor); a similarity gap's * needs 10 or " \
           "more prompts" in " ".join(out.split()), out


def test_significance_mark_follows_the_holm_p_value(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    from equilens.tasks.reporting.terminal import print_metrics_table, significance_mark

    assert significance_mark('{"p_holm": 0.049, "p_value": 0.01}') == "*"
    assert significance_mark({"p_holm": 0.2, "p_value": 0.01}) == ""  # the adjusted p decides
    assert significance_mark({"p_value": 0.01}) == "*" and significance_mark({}) == "" and significance_mark(None) == ""
    # Old defect: the demo's race table starred cosine gaps on 6 prompts while the verdict above it
    # said no difference could be shown; a bootstrap p on fewer than 10 prompts is not trusted.
    assert significance_mark({"p_holm": 0.01, "p_method": "bootstrap", "prompts": 6}) == ""
    assert significance_mark({"p_holm": 0.01, "p_method": "bootstrap", "prompts": 12}) == "*"
    assert significance_mark({"p_holm": 0.01, "p_method": "permutation", "prompts": 6}) == "*"
    monkeypatch.setenv("COLUMNS", "200")
    frame = _metrics("r")
    print_metrics_table(frame)
    out = capsys.readouterr().out
    for cell, details, name in zip(_cells(frame), frame["details"], frame["metric"], strict=True):
        marked = json.loads(details)["p_holm"] < 0.05 and name != "cosine_similarity"  # cosine: reported only
        assert (cell + "*" in out) == marked


def test_show_accepts_a_prefix_and_prints_json_and_csv(db: Path, tmp_path: Path) -> None:
    out = equilens("show", "20261122-1111", "--db", str(db), "--format", "json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    shown = json.loads(out.stdout)
    assert shown["run_id"] == "20261122-111111-bbbbbb" and shown["verdicts"] and "findings" in shown
    for finding in shown["findings"]:  # the verdict's findings as objects, each with its numbers
        assert set(finding) == {"subject", "metric", "groups", "value", "interval", "p_holm", "direction", "sentence"}
    rows = shown["metrics"]
    assert len(rows) == 75 and {r["run_id"] for r in rows} == {"20261122-111111-bbbbbb"}
    assert isinstance(rows[0]["details"], dict) and "p_holm" in rows[0]["details"]
    out = equilens("show", "20261122-1111", "--db", str(db), "--format", "csv", cwd=tmp_path)
    assert out.returncode == 0
    frame = pd.read_csv(pd.io.common.StringIO(out.stdout))
    assert len(frame) == 75 and frame["ci_high"].notna().all()
    ambiguous = equilens("show", "20261122-", "--db", str(db), cwd=tmp_path)
    assert ambiguous.returncode == 2 and "matches 2 runs" in ambiguous.stderr


def test_show_table_at_80_columns_through_the_cli(db: Path, tmp_path: Path) -> None:
    out = equilens("show", "20261122-1010", "--db", str(db), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    for cell in _cells(_metrics("x")):
        assert cell in out.stdout
    assert "…" not in out.stdout


def test_runs_show_full_ids_and_formats(db: Path, tmp_path: Path) -> None:
    out = equilens("runs", "--db", str(db), cwd=tmp_path)
    assert "20261122-101010-aaaaaa" in out.stdout and "20261122-111111-bbbbbb" in out.stdout
    assert "…" not in out.stdout
    out = equilens("runs", "--db", str(db), "--format", "json", cwd=tmp_path)
    assert [r["run_id"] for r in json.loads(out.stdout)] == ["20261122-111111-bbbbbb", "20261122-101010-aaaaaa"]
    bad = equilens("runs", "--db", str(db), "--format", "xml", cwd=tmp_path)
    assert bad.returncode == 2 and "use one of table, json, csv" in bad.stderr


def test_compare_json_keeps_the_exit_codes(db: Path, tmp_path: Path) -> None:
    out = equilens("compare", "20261122-101010-aaaaaa", "20261122-111111-bbbbbb", "--db", str(db),
                   "--format", "json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr  # identical metrics: nothing moved
    assert len(json.loads(out.stdout)) > 0
    missing = equilens("compare", "20261122-101010-aaaaaa", "nope", "--db", str(db), "--format", "json", cwd=tmp_path)
    assert missing.returncode == 2


def test_metrics_command_keeps_names_whole_at_80_columns(tmp_path: Path) -> None:
    from equilens.tasks.metrics import METRICS

    for columns in (80, 200):
        out = equilens("metrics", cwd=tmp_path, columns=columns)
        assert out.returncode == 0
        assert "…" not in out.stdout and max(len(line) for line in out.stdout.splitlines()) <= columns
        words = set(out.stdout.replace("│", " ").split())
        for name in dict(METRICS.items()):
            assert name in words, (columns, name)  # whole, never cut or folded


def test_options_prints_yaml_values(tmp_path: Path) -> None:
    out = equilens("options", cwd=tmp_path).stdout
    assert "counterfactual.attributes = [gender, race]" in out
    assert "prompts.path = null" in out and "validation.enabled = true" in out
    assert "None" not in out and "True" not in out and "False" not in out


def test_prefect_form_shows_defaults_descriptions_and_a_provider_dropdown() -> None:
    from equilens.tasks.assessments.counterfactual.config import CounterfactualRunConfig

    defs = CounterfactualRunConfig.model_json_schema()["$defs"]
    assert defs["CounterfactualConfig"]["properties"]["attributes"]["default"] == ["gender", "race"]
    llm = defs["LLMConfig"]["properties"]
    assert llm["provider"]["enum"] == ["local", "openai", "azure", "langchain", "python", "http"]
    for key in ("temperature", "azure_endpoint", "azure_deployment", "api_version"):
        assert llm[key].get("description"), key


def test_progress_lines_when_not_a_terminal() -> None:
    code = ("from equilens.tasks.orchestration.progress import ProgressReporter\n"
            "with ProgressReporter('LLM calls') as p:\n"
            "    [p(i, 40) for i in range(1, 41)]\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    lines = [line for line in out.stderr.splitlines() if line.startswith("LLM calls:")]
    # a line at the first call and then at every further 10%: 1, 5, 9, ... 37, 40
    assert lines[0] == "LLM calls: 1/40 (2%)" and lines[-1] == "LLM calls: 40/40 (100%)"
    assert 10 <= len(lines) <= 11


def test_html_report_shows_holm_p_values_and_marks(db: Path) -> None:
    from equilens.tasks.reporting.html import build_html_report

    html = build_html_report(Store(db), "20261122-101010-aaaaaa")
    section = html.split("<section id=all-metrics>")[1].split("</section>")[0]
    assert "<th>p_holm</th>" in section and "<th>sig</th>" in section
    rows = section.split("<tr>")[2:]
    marked = [r for r in rows if "<td>*</td>" in r]
    # the rows given p_holm = 0.01, but cosine (every fifth metric from the third): it is never judged
    assert len(marked) == sum(1 for k in range(1, 76) if k % 7 == 0 and k % 5 != 3)
    assert all("<td>0.01</td>" in r for r in marked)


def test_show_stars_no_metric_the_verdict_does_not_judge(tmp_path: Path) -> None:
    # `make demo`'s gender table showed "0.418 (0.363–0.475)*" for cosine under a verdict of no
    # difference beyond sampling noise: embeddings are never judged, so they carry no star
    from equilens.tasks.reporting.verdict import judged_metric

    frame = gender_run(Store(tmp_path / "e.duckdb"), "20261122-101010-demo00")
    out = equilens("show", "20261122-101010-demo00", "--db", str(tmp_path / "e.duckdb"), cwd=tmp_path, columns=200)
    assert out.returncode == 0, out.stderr
    assert "gender: no difference beyond sampling noise" in out.stdout
    table = [line for line in out.stdout.splitlines() if "│" in line]
    assert "0.418 (0.363–0.475)" in out.stdout and not any("*" in line for line in table)
    for name, details in zip(frame["metric"], frame["details"], strict=True):  # none judged is below 0.05
        assert not judged_metric(name, json.loads(details)) or json.loads(details)["p_holm"] >= 0.05
    assert "cosine carries no *: answers that name their group are less alike, so an embedding gap is reported, " \
           "not judged" in " ".join(out.stdout.split())


def test_show_of_a_finished_run_with_nothing_to_compare_says_so(tmp_path: Path) -> None:
    """A completed run whose prompts gave nothing to compare has no metrics, and that is its answer:
    exit 0 and a sentence (an empty table as CSV, empty lists as JSON); a run still going has none yet."""
    store = Store(tmp_path / "e.duckdb")
    for run_id in ("r-done", "r-going"):
        store.start_run(run_id, name="n", flow="counterfactual_assessment", started_at=pd.Timestamp("2026-11-22"),
                        config={}, config_hash="h", provider="openai", model="m")
    store.finish_run("r-done", "completed", summary={})
    db = str(tmp_path / "e.duckdb")
    table = equilens("show", "r-done", "--db", db, cwd=tmp_path)
    assert table.returncode == 0 and "completed and stored no metrics" in table.stdout, table.stdout + table.stderr
    as_json = json.loads(equilens("show", "r-done", "--db", db, "--format", "json", cwd=tmp_path).stdout)
    assert as_json == {"run_id": "r-done", "status": "completed", "verdicts": [], "findings": [], "metrics": []}
    as_csv = equilens("show", "r-done", "--db", db, "--format", "csv", cwd=tmp_path).stdout
    assert as_csv.startswith("run_id,") and len(as_csv.splitlines()) == 1
    going = equilens("show", "r-going", "--db", db, cwd=tmp_path)
    assert going.returncode == 2 and "no metrics stored for run 'r-going'" in going.stderr
    unknown = equilens("show", "r-none", "--db", db, cwd=tmp_path)
    assert unknown.returncode == 2 and "no run 'r-none' in " in unknown.stderr, unknown.stderr


def test_runs_are_newest_first_within_a_minute(tmp_path: Path) -> None:
    store = Store(tmp_path / "e.duckdb")
    for run_id, started in (("r-05", "2026-11-22 10:10:05"), ("r-50", "2026-11-22 10:10:50"),
                            ("r-30", "2026-11-22 10:10:30")):
        store.start_run(run_id, name="nightly", flow="counterfactual_assessment", started_at=pd.Timestamp(started),
                        config={}, config_hash="h", provider="openai", model="m")
    store.finish_run("r-05", "completed", summary={})  # its seconds beside the others' none (still running)
    out = equilens("runs", "--db", str(tmp_path / "e.duckdb"), "--format", "json", cwd=tmp_path)
    assert [r["run_id"] for r in json.loads(out.stdout)] == ["r-50", "r-30", "r-05"]
    table = equilens("runs", "--db", str(tmp_path / "e.duckdb"), cwd=tmp_path, columns=120)
    assert table.returncode == 0, table.stderr
    assert table.stdout.index("r-50") < table.stdout.index("r-30") < table.stdout.index("r-05")


RUN_IDS = ("20261122-101010-aaaaaa", "20261122-111111-bbbbbb")
WHOLE = ("nightly-counterfactual", "SmolLM2-135M-Instruct", "counterfactual", *RUN_IDS, *GROUPS, *METRICS,
         "strict parity", "weak parity", "cosine", "BLEU", "ROUGE-L")
"""What a table shows whole, never split across lines: run ids, names, group and metric names."""


def _split_names(out: str, columns: int) -> list[str]:
    """The cells of a Rich table in ``out`` that are a piece of a name in WHOLE, and its lines wider
    than ``columns``."""
    lines = out.splitlines()
    wide = [line for line in lines if len(line) > columns and any(c in line for c in "│┃━─")]
    cells = {c.strip() for line in lines if "│" in line or "┃" in line for c in line.replace("┃", "│").split("│")}
    return wide + sorted(c for c in cells if len(c) >= 3 and any(c != n and c in n for n in WHOLE))


@pytest.mark.parametrize("columns", [80, 100, 120])
def test_tables_never_split_a_name_across_lines(tmp_path: Path, columns: int) -> None:
    db = tmp_path / "e.duckdb"
    store = Store(db)
    for run_id in RUN_IDS:
        store.start_run(run_id, name="nightly-counterfactual", flow="counterfactual_assessment",
                        started_at=pd.Timestamp(f"2026-11-22 {run_id[9:11]}:{run_id[11:13]}"), config={},
                        config_hash="h", provider="local", model="SmolLM2-135M-Instruct")
        store.append("metrics", _metrics(run_id))
        store.finish_run(run_id, "completed", summary={})
    runs = equilens("runs", "--db", str(db), cwd=tmp_path, columns=columns)
    compare = equilens("compare", *RUN_IDS, "--db", str(db), cwd=tmp_path, columns=columns)
    show = equilens("show", RUN_IDS[0], "--db", str(db), cwd=tmp_path, columns=columns)
    for out in (runs, compare, show):
        assert out.returncode == 0, out.stderr
        assert _split_names(out.stdout, columns) == [], (columns, out.stdout)
    assert all(run_id in runs.stdout for run_id in RUN_IDS) and "nightly-counterfactual" in runs.stdout
    assert "bleu_similarity" in compare.stdout and "white vs" in compare.stdout
    for out, hidden in ((runs, {80: "flow, model, started_at, seconds", 100: "flow, started_at, seconds",
                                120: "flow, seconds"}), (compare, {80: "fairer, attribute, judged on",
                                                                  100: "judged on", 120: ""})):
        said = [line for line in out.stdout.splitlines() if line.startswith("hidden to fit")]
        assert said == ([f"hidden to fit: {hidden[columns]} (--format csv|json has them all)"] if hidden[columns]
                        else []), out.stdout
    whole = equilens("runs", "--db", str(db), "--format", "csv", cwd=tmp_path, columns=columns).stdout
    assert whole.splitlines()[0] == "run_id,name,flow,status,model,started_at,seconds"
