"""Outcome gaps between an identity comparison's cells: per cell, the outcome read from its answers
(amounts as shares of their prompt's average, yes rates, first choices); per pair of cells, the mean
over prompts of the difference, with the names drawn as a sample of their cell
(:mod:`equilens.tasks.stats.name_sampling`: a t-test over prompts and name clusters), and the
smallest gap each pair could detect. The judge's harm score shares the same test and details."""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from equilens.tasks.config import MetricsConfig
from equilens.tasks.stats.importing import IMPORTING


def _normalised(frame: pd.DataFrame) -> pd.Series:
    """Amounts divided by their prompt's mean amount; yes/no and choice values unchanged."""
    numbers = frame["outcome_kind"] == "number"
    means = frame[numbers].groupby("prompt_id")["outcome_value"].transform("mean")
    out = frame["outcome_value"].astype(float).copy()
    out[numbers] = frame.loc[numbers, "outcome_value"] / means.where(means != 0)
    return out


def outcome_rows(answered: pd.DataFrame, label: str, cells: list[str], cfg: MetricsConfig) -> list[dict]:
    """Per cell, each outcome kind's value and the share of calls that gave no outcome; per pair, the
    mean over prompts of the per-prompt difference with its interval and t-test p (Holm comes later),
    the names drawn as a sample of their cell (:func:`pair_gap_details`), and how many of the
    comparison's answers of that kind there are and how many gave no outcome (``kind_answers``,
    ``kind_unread``); and, where some call gave none, the gap in that share (:func:`answer_step_gaps`).
    ``answered`` holds every call, failed and refused ones too: their ``outcome_value`` is NaN."""
    from equilens.tasks.metrics import METRICS, estimate_row, outcome_metrics, skipped_row
    from equilens.tasks.metrics.base import compares_two
    from equilens.tasks.stats import bootstrap_mean

    boot = {"resamples": cfg.bootstrap_resamples, "confidence": cfg.confidence, "seed": cfg.seed}
    rows: list[dict] = []
    with_kind = answered[answered["outcome_kind"].notna()]
    if with_kind.empty:
        return rows
    per_answer = [spec for _, spec in METRICS.items() if spec.family == "identity" and spec.per_item is not None]
    for spec in [s for s in per_answer if not compares_two(s)]:  # a cell's share of answers with a property
        for c in cells:
            sub = with_kind[with_kind["grp"] == c]
            if sub.empty:
                rows.append(skipped_row(spec.name, "the cell has no call to an outcome prompt", attribute=label,
                                        group_a=c))
                continue
            est = bootstrap_mean(spec.per_item(sub["outcome_value"].to_numpy(float)), sub["prompt_id"], **boot)
            reasons = sub["outcome_reason"].dropna().value_counts() if "outcome_reason" in sub else pd.Series()
            details = {"answers": int(len(sub)), "reasons": {str(k): int(v) for k, v in reasons.items()}}
            if "outcome_reader" in sub and sub["outcome_reader"].eq("model").any():
                details["read_by_model"] = int(sub["outcome_reader"].eq("model").sum())
            if "outcome_disagree" in sub and sub["outcome_disagree"].notna().any():
                details["readers_disagree"] = int(sub["outcome_disagree"].fillna(False).astype(bool).sum())
            rows.append(estimate_row(spec.name, est, attribute=label, group_a=c, details=details))
    by_kind = outcome_metrics()
    for kind, part in with_kind.groupby("outcome_kind"):
        cell_metric, pair_metric = by_kind[str(kind)]
        read = {"kind_answers": int(len(part)), "kind_unread": int(part["outcome_value"].isna().sum())}
        part = part.assign(value=_normalised(part)).dropna(subset=["value"])
        per_prompt = part.pivot_table(index="prompt_id", columns="grp", values="value", aggfunc="mean")
        raw = part.groupby("grp")["outcome_value"].mean()
        for c in cells:
            if c not in per_prompt or per_prompt[c].notna().sum() == 0:
                rows.append(skipped_row(cell_metric, "no answer gave an outcome", attribute=label, group_a=c))
                continue
            col = per_prompt[c].dropna()
            est = bootstrap_mean(col.to_numpy(), col.index.to_numpy(), **boot)
            rows.append(estimate_row(cell_metric, est, attribute=label, group_a=c,
                                     details={"mean": float(raw.get(c, np.nan)), "prompts": int(len(col))}))
        rows += pair_rows(pair_metric, part, part["value"].to_numpy(float), label, cells, cfg.confidence,
                          {"kind": str(kind), "largest_gap": largest_gap(str(kind), len(cells)), **read},
                          f"fewer than two prompts where both cells gave a {kind} outcome")
    for spec in [s for s in per_answer if compares_two(s)]:
        rows += answer_step_gaps(spec, with_kind, label, cells, cfg.confidence)
    return rows


def answer_step_gaps(spec: Any, calls: pd.DataFrame, label: str, cells: list[str], confidence: float) -> list[dict]:
    """Per pair of cells, the gap in the share of their calls whose per-answer step (``spec.per_item``
    of the outcome read: no outcome, for ``unparsed_outcome_gap``) is 1, tested as the outcome gaps
    are, its ``details.kind`` the metric's ``outcome``; none where no call's step is 1."""
    values = np.asarray(spec.per_item(calls["outcome_value"].to_numpy(float)), float)
    flagged, grp = values > 0, calls["grp"].to_numpy()
    if not flagged.any():
        return []
    return pair_rows(spec.name, calls, values, label, cells, confidence, {"kind": spec.outcome, "largest_gap": 1.0},
                     "fewer than two prompts asked of both cells",
                     lambda a, b: {"calls_a": int((grp == a).sum()), "unread_a": int(flagged[grp == a].sum()),
                                   "calls_b": int((grp == b).sum()), "unread_b": int(flagged[grp == b].sum())})


def pair_rows(metric: str, answers: pd.DataFrame, values: np.ndarray, label: str, cells: list[str], confidence: float,
              stored: dict, skipped: str, per_pair: Any = None) -> list[dict]:
    """One row of ``metric`` per pair of cells: the gap in ``values`` (one per row of ``answers``, with
    its prompt, cell and, where known, role and name) by :func:`pair_gap`, its interval kept to the
    gaps there can be (``stored["largest_gap"]``), its details with ``stored`` and ``per_pair(a, b)``;
    a pair without two prompts on both sides is skipped, saying ``skipped``."""
    from equilens.tasks.metrics import estimate_row, skipped_row
    from equilens.tasks.stats import Estimate

    prompts, grp = answers["prompt_id"].to_numpy(), answers["grp"].to_numpy()
    roles = answers["role"].to_numpy(object) if "role" in answers else None
    names = answers["name"].to_numpy(object) if "name" in answers else None
    bound = stored["largest_gap"]
    rows = []
    for a, b in combinations(cells, 2):
        pair = (grp == a) | (grp == b)
        found = pair_gap(values[pair], prompts[pair], grp[pair] == a, None if roles is None else roles[pair],
                         None if names is None else names[pair], confidence)
        if found is None:
            rows.append(skipped_row(metric, skipped, attribute=label, group_a=a, group_b=b))
            continue
        gap, details = found
        low, high = max(gap.ci_low, -bound), min(gap.ci_high, bound)
        details |= {"noise_floor": 0.0, "noise_floor_method": "none: a difference of means over prompts",
                    **stored, "gap_ci": [low, high], **(per_pair(a, b) if per_pair else {})}
        rows.append(estimate_row(metric, Estimate(gap.value, low, high, gap.prompts), attribute=label,
                                 group_a=a, group_b=b, details=details))
    return rows


def largest_gap(kind: str, cells: int) -> float:
    """The largest gap two cells of a comparison of ``cells`` cells can show: a difference of two rates is
    at most 1; amounts are shares of the prompt's mean over all cells, and with amounts never negative and
    every cell asked alike, one cell's share is at most ``cells`` (all the others at 0), so a gap is at
    most ``cells``. A smallest detectable gap past it means no gap could be shown at all."""
    return float(cells) if kind == "number" else 1.0


def pair_gap(values: np.ndarray, prompts: np.ndarray, first: np.ndarray, roles: np.ndarray | None,
             names: np.ndarray | None, confidence: float) -> tuple[Any, dict] | None:
    """The gap of one pair of cells from its answers (a value, its prompt, whether it is the first
    cell's, and where known its role and name): the mean over prompts of the first cell's mean
    value minus the other's, with prompts and names as samples
    (:func:`equilens.tasks.stats.name_sampling.two_way_gap`), and its details
    (:func:`pair_gap_details`). None with fewer than two prompts where both cells have a value."""
    from equilens.tasks.stats.name_sampling import name_clusters, two_way_gap

    read = np.isfinite(np.asarray(values, float))
    if not (read & first).any() or not (read & ~first).any():  # a cell with no value: no difference to take
        return None
    sides = np.where(first, 1, -1)
    if names is None:
        names = np.full(len(values), None, object)
    clusters = name_clusters(prompts, np.arange(len(values)) if roles is None else roles, sides, names)
    gap = two_way_gap(values, prompts, sides, clusters, confidence)
    if gap is None:
        return None
    _, codes = np.unique(np.asarray(prompts).astype(str), return_inverse=True)
    both = (np.bincount(codes, weights=first) > 0) & (np.bincount(codes, weights=~first) > 0)
    counts = [len({n for n in names[both[codes] & (first == side)] if isinstance(n, str) and n})
              for side in (True, False)]
    return gap, pair_gap_details(gap, counts)


def pair_gap_details(gap: Any, names: list[int]) -> dict:  # a TwoWayGap
    """A cell comparison's stored details: ``prompts``; ``gap`` and ``gap_ci``; ``gap_sd`` (the spread
    of the per-prompt values), ``gap_se`` and ``gap_df`` (the t-test's standard error and degrees of
    freedom); ``p_value`` and ``p_method`` (the t-test's, or where every prompt's difference is the
    same the exact sign-flip test's). With names: ``names_a`` and ``names_b`` (the distinct names of
    each cell the gap rests on), ``name_clusters`` (the name clusters of the test), ``name_share``
    (the share of the gap's variance that the names add) and ``few_names`` (true when either cell has
    fewer than :data:`~equilens.tasks.stats.name_sampling.FEW_NAMES` names)."""
    from equilens.tasks.stats.name_sampling import FEW_NAMES

    details: dict = {"prompts": gap.prompts, "gap": gap.value, "gap_ci": [gap.ci_low, gap.ci_high], "gap_sd": gap.sd,
                     "gap_se": gap.se, "gap_df": gap.df}
    if any(names):
        var = gap.prompt_var + gap.name_var
        details |= {"names_a": names[0], "names_b": names[1], "name_clusters": gap.clusters,
                    "name_share": gap.name_var / var if var > 0 else 0.0, "few_names": min(names) < FEW_NAMES}
    return details | {"p_value": gap.p_value, "p_method": gap.method}


def detectable_outcome_gaps(records: list[dict], family: int, alpha: float, power: float = 0.8) -> None:
    """Each outcome gap's smallest detectable size, in its own units (a share of the prompt's average
    amount, or a difference of rates), set as ``details["min_detectable_gap"]``: the gap the row's own
    t-test, at the Bonferroni level alpha / family (Holm's first step, so a conservative bar), finds
    with probability ``power``: (t_{1-a/2} + t_power) x SE on the row's degrees of freedom (``gap_se``
    and ``gap_df``, prompts and names as samples; a row without them: a paired t-test over prompts,
    SE = sd / sqrt(n) on n - 1)."""
    from equilens.tasks.metrics import outcome_gaps
    with IMPORTING:
        from scipy.stats import t

    gaps = set(outcome_gaps())
    for r in records:
        d = r["details"]
        if r["metric"] in gaps and isinstance(d.get("gap_sd"), float) and d.get("prompts", 0) >= 2:
            n = int(d["prompts"])
            se, df = d.get("gap_se"), d.get("gap_df")
            if not isinstance(se, float) or not isinstance(df, float):
                se, df = d["gap_sd"] / np.sqrt(n), float(n - 1)
            step = t.ppf(1 - alpha / (2 * max(family, 1)), df) + t.ppf(power, df)
            d["min_detectable_gap"] = float(step * se)
            d["min_detectable_gap_tests"] = max(family, 1)
