"""`equilens compare`: which metrics moved beyond their intervals, and in which direction."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd

from tasks.compare import compare_runs
from tasks.store import Store

ROOT = Path(__file__).resolve().parents[1]


def _seed(store: Store) -> None:
    rows = []
    for run, cos, parity in (("A", (0.80, 0.75, 0.85), (0.10, 0.05, 0.15)), ("B", (0.60, 0.55, 0.65), (0.11, 0.06, 0.16))):
        rows.append({"run_id": run, "family": "counterfactual", "attribute": "gender", "group_a": "male",
                     "group_b": "female", "metric": "cosine_similarity", "value": cos[0], "ci_low": cos[1],
                     "ci_high": cos[2], "direction": "higher"})
        rows.append({"run_id": run, "family": "counterfactual", "attribute": "gender", "group_a": "male",
                     "group_b": "female", "metric": "strict_sentiment_parity", "value": parity[0],
                     "ci_low": parity[1], "ci_high": parity[2], "direction": "lower"})
    store.append("metrics", pd.DataFrame(rows))


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
    out = subprocess.run([sys.executable, "-m", "flows", "compare", "A", "B", "--db", str(tmp_path / "e.duckdb")],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    assert "1 of 2 metrics changed beyond their intervals; 1 moved in the less fair direction" in out.stdout
    same = subprocess.run([sys.executable, "-m", "flows", "compare", "A", "A", "--db", str(tmp_path / "e.duckdb")],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert same.returncode == 0
