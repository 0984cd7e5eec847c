"""`equilens compare`: which metrics moved beyond their intervals, and in which direction."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from equilens.tasks.reporting.compare import compare_runs
from equilens.tasks.storage.store import Store

from tests.fakes.cli import Ran, equilens


def _seed(store: Store) -> None:
    store.append("metrics", pd.DataFrame(_seed_rows()))


def _seed_rows() -> list[dict]:
    rows = []
    for run, cos, parity in (("A", (0.80, 0.75, 0.85), (0.10, 0.05, 0.15)), ("B", (0.60, 0.55, 0.65), (0.11, 0.06, 0.16))):
        rows.append({"run_id": run, "family": "counterfactual", "attribute": "gender", "group_a": "male",
                     "group_b": "female", "metric": "cosine_similarity", "value": cos[0], "ci_low": cos[1],
                     "ci_high": cos[2], "direction": "higher"})
        rows.append({"run_id": run, "family": "counterfactual", "attribute": "gender", "group_a": "male",
                     "group_b": "female", "metric": "strict_sentiment_parity", "value": parity[0],
                     "ci_low": parity[1], "ci_high": parity[2], "direction": "lower"})
    return rows


def test_disjoint_intervals_count_as_changed(tmp_path: Path) -> None:
    store = Store(tmp_path / "e.duckdb")
    _seed(store)
    diff = compare_runs(store, "A", "B").set_index("metric")
    # cosine fell from 0.80 [0.75, 0.85] to 0.60 [0.55, 0.65]: disjoint, and less fair (higher is fairer)
    assert bool(diff.loc["cosine_similarity", "changed"]) and diff.loc["cosine_similarity", "fairer"] == "no"
    assert abs(diff.loc["cosine_similarity", "delta"] + 0.2) < 1e-12
    # parity moved 0.10 -> 0.11 inside overlapping intervals: not a change
    assert not bool(diff.loc["strict_sentiment_parity", "changed"])


def test_cli_exit_code_flags_a_regression(tmp_path: Path) -> None:
    store = Store(tmp_path / "e.duckdb")
    _seed(store)
    out = _cli(tmp_path, "A", "B")
    assert out.returncode == 1
    assert "1 of 2 metrics changed beyond their intervals; 1 moved in the less fair direction" in out.stdout
    assert _cli(tmp_path, "A", "A").returncode == 0


def _row(run: str, metric: str, value: float, lo: float, hi: float, family: str = "probability",
         a: str | None = None, b: str | None = None, attribute: str | None = "gender_career", **details: object) -> dict:
    return {"run_id": run, "family": family, "attribute": attribute, "group_a": a, "group_b": b, "metric": metric,
            "value": value, "ci_low": lo, "ci_high": hi, "direction": "x", "details": details or None}


def _db(tmp_path: Path, rows: list[dict]) -> Store:
    store = Store(tmp_path / "e.duckdb")
    store.append("metrics", pd.DataFrame(rows))
    return store


def _cli(tmp_path: Path, *args: str) -> Ran:
    return equilens("compare", *args, "--db", str(tmp_path / "e.duckdb"), columns=None)


def test_a_target_metric_moving_away_from_its_target_is_a_regression(tmp_path: Path) -> None:
    # 0.80 -> 0.95 with disjoint intervals moves away from the target 0.5: a regression, not "same"
    _db(tmp_path, [_row("A", "stereotype_score", 0.80, 0.75, 0.85), _row("B", "stereotype_score", 0.95, 0.92, 0.98),
                   _row("A", "weat_effect_size", -0.9, -1.2, -0.6, family="embedding"),
                   _row("B", "weat_effect_size", 0.1, -0.1, 0.3, family="embedding")])
    diff = compare_runs(Store(tmp_path / "e.duckdb"), "A", "B").set_index("metric")
    assert diff.loc["stereotype_score", "fairer"] == "no" and bool(diff.loc["stereotype_score", "changed"])
    # an effect size going from -0.9 to 0.1 moves towards its fair value 0, although it grew
    assert diff.loc["weat_effect_size", "fairer"] == "yes"
    out = _cli(tmp_path, "A", "B")
    assert out.returncode == 1 and "1 moved in the less fair direction" in out.stdout


def test_noise_floor_rows_are_never_judged_and_gaps_are(tmp_path: Path) -> None:
    # a temperature change lowered every similarity, within and across groups alike.
    # Cross-group cosine fell beyond its interval, but its gap beyond the noise floor did not move.
    rows = []
    for run, cross, floor in (("A", 0.80, 0.82), ("B", 0.60, 0.62)):
        rows.append(_row(run, "cosine_similarity", cross, cross - 0.02, cross + 0.02, family="counterfactual",
                         a="male", b="female", attribute="gender", gap=floor - cross, gap_ci=[-0.01, 0.05],
                         noise_floor=floor))
        for g in ("male", "female"):
            rows.append(_row(run, "cosine_similarity", floor, floor - 0.02, floor + 0.02, family="counterfactual",
                             a=g, b=g, attribute="gender"))
    _db(tmp_path, rows)
    diff = compare_runs(Store(tmp_path / "e.duckdb"), "A", "B")
    assert len(diff) == 1 and diff.iloc[0]["group_a"] == "male" and diff.iloc[0]["group_b"] == "female"
    assert not bool(diff.iloc[0]["changed"]) and diff.iloc[0]["basis_b"] == "gap beyond noise floor"
    assert _cli(tmp_path, "A", "B").returncode == 0


def test_unknown_or_empty_runs_exit_2_with_one_line(tmp_path: Path) -> None:
    store = _db(tmp_path, [_row("A", "stereotype_score", 0.8, 0.7, 0.9)])
    store.start_run("F", name="x", flow="counterfactual_assessment", config={}, config_hash="h")
    store.finish_run("F", "failed", summary={"error": "ProviderError: could not connect"})
    typo = _cli(tmp_path, "A", "A-typo")
    assert typo.returncode == 2 and "no run 'A-typo'" in typo.stderr + typo.stdout
    assert "Traceback" not in typo.stderr + typo.stdout
    failed = _cli(tmp_path, "A", "F")
    assert failed.returncode == 2 and "run F (failed: ProviderError: could not connect) has no metrics" in (
        failed.stderr + failed.stdout)


def test_config_differences_are_listed(tmp_path: Path) -> None:
    from equilens.tasks.reporting.compare import config_differences

    store = Store(tmp_path / "e.duckdb")
    store.start_run("A", name="x", flow="f", config={"llm": {"temperature": 0.7, "model": "m"}}, config_hash="1")
    store.start_run("B", name="x", flow="f", config={"llm": {"temperature": 1.3, "model": "m"}}, config_hash="2")
    assert config_differences(store, "A", "B") == [("llm.temperature", 0.7, 1.3)]


def test_the_table_keeps_metric_and_group_names_whole_at_100_columns(tmp_path: Path) -> None:
    # at 100 columns every cell was folded: "bleu_similarit" over "y", "native_amer" over "ican"

    rows = [_row(run, metric, v, v - 0.01, v + 0.01, family="counterfactual", a="native_american",
                 b="middle_eastern", attribute="race")
            for run, shift in (("A", 0.0), ("B", 0.3)) for metric, v in (("bleu_similarity", 0.2 + shift),
                                                                         ("strict_sentiment_parity", 0.1 + shift))]
    _db(tmp_path, rows)
    out = equilens("compare", "A", "B", "--db", str(tmp_path / "e.duckdb"), columns=100)
    assert out.returncode == 1, out.stderr  # parity rose beyond its interval: less fair
    table = [line for line in out.stdout.splitlines() if "│" in line]
    assert table and all(len(line) <= 100 for line in table)
    words = set(" ".join(table).replace("│", " ").split())
    assert {"bleu_similarity", "strict_sentiment_parity", "native_american", "middle_eastern", "CHANGED"} <= words
    assert "hidden to fit: judged on (--format csv|json has them all)" in out.stdout


def test_an_outcome_gap_closing_from_below_is_fairer_and_opening_below_is_not(tmp_path: Path) -> None:
    # female offered 22% less (a negative gap), then no gap: the gap moved up towards 0, which is fairer
    def gap(run: str, value: float) -> dict:
        return _row(run, "number_outcome_gap", value, value - 0.005, value + 0.005, family="identity",
                    a="female", b="male", attribute="gender", gap=value, gap_ci=[value - 0.005, value + 0.005])

    _db(tmp_path, [gap("A", -0.22), gap("B", 0.002)])
    diff = compare_runs(Store(tmp_path / "e.duckdb"), "A", "B").set_index("metric")
    assert bool(diff.loc["number_outcome_gap", "changed"]) and diff.loc["number_outcome_gap", "fairer"] == "yes"
    assert _cli(tmp_path, "A", "B").returncode == 0
    assert compare_runs(Store(tmp_path / "e.duckdb"), "B", "A").set_index("metric").loc["number_outcome_gap", "fairer"] == "no"
    assert _cli(tmp_path, "B", "A").returncode == 1


def test_a_row_judged_on_its_gap_in_one_run_and_its_value_in_the_other_compares_values(tmp_path: Path) -> None:
    """The same bleu_similarity 0.5452 in both runs, with a gap beyond its noise floor in A (-0.30)
    and none in B (a floor with no spread): comparing the gap with the value called it CHANGED and
    less fair."""
    store = _db(tmp_path, [
        _row("A", "bleu_similarity", 0.5452, 0.50, 0.59, "counterfactual", "female", "male", gap=-0.30,
             gap_ci=[-0.35, -0.25]),
        _row("B", "bleu_similarity", 0.5452, 0.50, 0.59, "counterfactual", "female", "male"),
    ])
    (row,) = compare_runs(store, "A", "B").itertuples()
    assert not row.changed and row.fairer == "same" and row.basis_a == row.basis_b == "value"


def test_a_task_s_row_names_its_task_beside_its_groups() -> None:
    from equilens.tasks.reporting.compare import _groups

    row = pd.Series({"group_a": "female", "group_b": "male", "attribute": "gender | pricing"})
    assert _groups(row) == "female vs male | pricing"
    assert _groups(row.replace({"gender | pricing": "gender"})) == "female vs male"


def test_compare_takes_a_unique_prefix_of_a_run_id_as_show_does(tmp_path: Path) -> None:
    store = Store(tmp_path / "e.duckdb")
    for run_id in ("20261208-aaaa", "20261208-bbbb"):
        store.start_run(run_id, name="n", flow="counterfactual_assessment", started_at=pd.Timestamp("2026-12-08"),
                        config={}, config_hash="h", provider="openai", model="m")
    rows = [{**row, "run_id": new} for row in _seed_rows() for old, new in (("A", "20261208-aaaa"), ("B", "20261208-bbbb"))
            if row["run_id"] == old]
    store.append("metrics", pd.DataFrame(rows))
    out = _cli(tmp_path, "20261208-a", "20261208-b")
    assert out.returncode == 1 and "1 of 2 metrics changed beyond their intervals" in out.stdout, out.stdout + out.stderr
    ambiguous = _cli(tmp_path, "20261208", "20261208-b")
    assert ambiguous.returncode == 2 and "matches 2 runs" in ambiguous.stderr
