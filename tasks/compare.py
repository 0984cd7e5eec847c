"""Run comparison: which metrics moved beyond their confidence intervals between two runs."""

from __future__ import annotations

import pandas as pd

from tasks.store import Store

KEY = ["family", "attribute", "group_a", "group_b", "metric"]


def compare_runs(store: Store, run_a: str, run_b: str) -> pd.DataFrame:
    """One row per metric present in both runs, with the change and a verdict.

    ``changed`` is True when the two intervals do not overlap (a conservative test: overlapping
    95% intervals can still hide a significant difference, disjoint ones cannot). Without
    intervals, any difference larger than 1e-9 counts. ``fairer`` says whether B moved in the
    metric's fairer direction.
    """
    frame = store.query(
        "SELECT run_id, family, attribute, group_a, group_b, metric, value, ci_low, ci_high, direction "
        "FROM metrics WHERE run_id IN (?, ?) AND value IS NOT NULL",
        [run_a, run_b],
    )
    a = frame[frame["run_id"] == run_a].drop(columns="run_id")
    b = frame[frame["run_id"] == run_b].drop(columns=["run_id", "direction"])
    for part in (a, b):
        part[["attribute", "group_a", "group_b"]] = part[["attribute", "group_a", "group_b"]].fillna("")
    merged = a.merge(b, on=KEY, suffixes=("_a", "_b"))
    merged["delta"] = merged["value_b"] - merged["value_a"]
    has_ci = merged[["ci_low_a", "ci_high_a", "ci_low_b", "ci_high_b"]].notna().all(axis=1)
    disjoint = (merged["ci_low_b"] > merged["ci_high_a"]) | (merged["ci_high_b"] < merged["ci_low_a"])
    merged["changed"] = (has_ci & disjoint) | (~has_ci & (merged["delta"].abs() > 1e-9))
    sign = merged["direction"].map({"higher": 1.0, "lower": -1.0}).fillna(0.0)
    merged["fairer"] = (merged["delta"] * sign).map(lambda d: "yes" if d > 0 else ("no" if d < 0 else "same"))
    return merged.sort_values(["changed", "family", "attribute", "metric"], ascending=[False, True, True, True])
