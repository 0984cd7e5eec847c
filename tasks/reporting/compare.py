"""Run comparison: which group-pair metrics moved beyond their intervals, and which way is fairer."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
from equilens.tasks.errors import InputDataError
from equilens.tasks.reporting.verdict import details_of
from equilens.tasks.storage.store import Store

KEY = ["family", "attribute", "group_a", "group_b", "metric"]


def _judged(frame: pd.DataFrame) -> pd.DataFrame:
    """The quantity compared per row: the gap beyond the noise floor where the row has one (so a
    change that moves cross-group and same-group values together, such as a new temperature, is not
    a fairness change), otherwise the value; and its unfairness (larger = less fair) by the
    metric's registered direction or target."""
    from equilens.tasks.metrics import METRICS
    from equilens.tasks.metrics.judged import two_sided

    out = frame.copy()
    judged, low, high, unfair, basis, by_value = [], [], [], [], [], []
    for _, r in out.iterrows():
        d = details_of(r["details"])
        spec = METRICS.get(r["metric"]) if r["metric"] in METRICS else None
        by_value.append(spec.distance_from_fair(r["value"]) if spec else r["value"])
        ci = d.get("gap_ci") or [None, None]
        if d.get("gap") is not None and ci[0] is not None and ci[1] is not None:
            judged.append(d["gap"]), low.append(ci[0]), high.append(ci[1]), basis.append("gap beyond noise floor")
            # a two-sided gap (an outcome, a judge's harm) is as unfair either way; others: positive = less fair
            unfair.append(abs(d["gap"]) if two_sided(r["metric"]) else d["gap"])
            continue
        judged.append(r["value"]), low.append(r["ci_low"]), high.append(r["ci_high"]), basis.append("value")
        unfair.append(by_value[-1])
    return out.assign(judged=judged, judged_low=low, judged_high=high, unfairness=unfair, basis=basis,
                      unfairness_by_value=by_value)


def _by_value_where_bases_differ(merged: pd.DataFrame) -> pd.DataFrame:
    """Rows judged on a gap beyond its noise floor in one run and on the value in the other (a floor
    with no spread in one of them) compare the values in both: a gap is not comparable with a value."""
    mixed = merged["basis_a"] != merged["basis_b"]
    out = merged.copy()
    for side in ("a", "b"):
        out.loc[mixed, f"judged_{side}"] = out.loc[mixed, f"value_{side}"]
        out.loc[mixed, f"judged_low_{side}"] = out.loc[mixed, f"ci_low_{side}"]
        out.loc[mixed, f"judged_high_{side}"] = out.loc[mixed, f"ci_high_{side}"]
        out.loc[mixed, f"unfairness_{side}"] = out.loc[mixed, f"unfairness_by_value_{side}"]
        out.loc[mixed, f"basis_{side}"] = "value"
    return out


def _metrics_of(store: Store, run_id: str) -> pd.DataFrame:
    frame = store.query(
        "SELECT family, attribute, group_a, group_b, metric, value, ci_low, ci_high, details FROM metrics "
        "WHERE run_id = ? AND value IS NOT NULL", [run_id])
    if frame.empty:
        run = store.query("SELECT status, summary FROM runs WHERE run_id = ?", [run_id])
        if run.empty:
            raise InputDataError(f"no run {run_id!r} in {store.path} (see `equilens runs` for the ids).")
        summary = json.loads(run["summary"].iloc[0]) if isinstance(run["summary"].iloc[0], str) else {}
        why = f": {summary['error']}" if summary.get("error") else ""
        raise InputDataError(f"run {run_id} ({run['status'].iloc[0]}{why}) has no metrics to compare.")
    frame[["attribute", "group_a", "group_b"]] = frame[["attribute", "group_a", "group_b"]].fillna("")
    floor = (frame["group_b"] != "") & (frame["group_a"] == frame["group_b"])
    return _judged(frame[~floor])


def compare_runs(store: Store, run_a: str, run_b: str) -> pd.DataFrame:
    """One row per metric present in both runs (group pairs and per-group or overall metrics; the
    noise-floor rows of a group against itself are the baseline of a gap, never judged).

    ``changed`` is True when the two intervals of the judged quantity do not overlap (a
    conservative test: overlapping 95% intervals can still hide a significant difference,
    disjoint ones cannot). Without intervals, any difference larger than 1e-9 counts. ``fairer``
    says whether B is fairer than A: closer to the fair value for a target metric, lower or
    higher by the metric's direction, or a smaller gap beyond the noise floor.
    """
    a, b = _metrics_of(store, run_a), _metrics_of(store, run_b)
    merged = _by_value_where_bases_differ(
        a.drop(columns="details").merge(b.drop(columns="details"), on=KEY, suffixes=("_a", "_b")))
    merged["delta"] = merged["value_b"] - merged["value_a"]
    lo_a, hi_a, lo_b, hi_b = (merged[c] for c in ("judged_low_a", "judged_high_a", "judged_low_b", "judged_high_b"))
    has_ci = pd.concat([lo_a, hi_a, lo_b, hi_b], axis=1).notna().all(axis=1)
    disjoint = (lo_b > hi_a) | (hi_b < lo_a)
    moved = (merged["judged_b"] - merged["judged_a"]).abs() > 1e-9
    merged["changed"] = (has_ci & disjoint) | (~has_ci & moved)
    worse = merged["unfairness_b"] - merged["unfairness_a"]
    merged["fairer"] = worse.map(lambda d: "no" if d > 1e-12 else ("yes" if d < -1e-12 else "same"))
    return merged.sort_values(["changed", "family", "attribute", "metric"], ascending=[False, True, True, True])


def diff_table(diff: pd.DataFrame, title: str, width: int) -> tuple[Any, list[str]]:
    """The :func:`compare_runs` frame as a Rich table no wider than ``width``, and the columns left
    out to fit: the basis of the judgement first, then attribute, fairer and changed (metric,
    groups, A and B always stay; a long group pair wraps between its words)."""
    from equilens.tasks.reporting.terminal import Column, fitted_table

    columns = [Column("metric"), Column("groups", wrap=True), Column("A"), Column("B"), Column("changed", 1),
               Column("fairer", 2), Column("attribute", 3), Column("judged on", 4, shorten=12)]
    rows = [[str(r["metric"]), _groups(r),
             f"{r['value_a']:.4f}", f"{r['value_b']:.4f}", "CHANGED" if r["changed"] else "",
             str(r["fairer"]), str(r["attribute"]), str(r["basis_b"])] for _, r in diff.iterrows()]
    return fitted_table(title, columns, rows, width)


def _groups(row: pd.Series) -> str:
    """A row's groups, and the part of its comparison where it has one ("female vs male | pricing"),
    so a task's row can be told from the comparison's own with the attribute column left out."""
    from equilens.tasks.reporting.outcome_words import PART

    groups = f"{row['group_a']} vs {row['group_b']}" if row["group_b"] else str(row["group_a"])
    part = str(row["attribute"]).split(PART, 1)
    return f"{groups}{PART}{part[1]}" if len(part) == 2 else groups


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}{k}."))
        return out
    return {prefix.rstrip("."): value}


def config_differences(store: Store, run_a: str, run_b: str) -> list[tuple[str, Any, Any]]:
    """(key, value in A, value in B) for every config key that differs between two runs."""
    fa, fb = _flatten(store.run_config(run_a)), _flatten(store.run_config(run_b))
    return [(k, fa.get(k), fb.get(k)) for k in sorted(set(fa) | set(fb)) if fa.get(k) != fb.get(k)]
