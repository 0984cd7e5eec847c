"""Stage logic of the classification-fairness assessment, as plain functions over DataFrames.

Items come from a prompts file with a group column (and a ground-truth column when there is
one); the model's answers are parsed into the allowed labels, or predictions come from a file the
user brings. Rates per group and their disparities get cluster-bootstrap intervals over items
(or over ``cluster_column``) and a verdict: does the interval exclude the fair value?
"""

from __future__ import annotations

import hashlib
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from equilens.tasks.assessments.classification.config import ClassificationConfig
from equilens.tasks.config import MetricsConfig, PromptsConfig
from equilens.tasks.errors import InputDataError
from equilens.tasks.inputs.prompts import TURNS, prompt_id, prompt_text, table_prompts
from equilens.tasks.inputs.tables import read_table, require_columns
from equilens.tasks.pipeline.prefect_tasks import CACHED
from equilens.tasks.scoring.parsing import parse_label
from prefect import task

FAMILY = "classification"


def positive_label(cfg: ClassificationConfig) -> str:
    return cfg.positive_label or cfg.labels[0]


def label_value(label: str | None, cfg: ClassificationConfig) -> float:
    """1.0 for the positive label, 0.0 for any other allowed label, NaN for none."""
    if label is None:
        return float("nan")
    return 1.0 if label == positive_label(cfg) else 0.0


def _truth(frame: pd.DataFrame, cfg: ClassificationConfig, where: str) -> np.ndarray:
    if not cfg.truth_column or cfg.truth_column not in frame.columns:
        return np.full(len(frame), np.nan)
    values = []
    for i, raw in enumerate(frame[cfg.truth_column].astype(str).tolist()):
        if not raw.strip() or raw.strip().lower() in ("nan", "none"):
            values.append(np.nan)
            continue
        label = parse_label(raw, cfg.labels, cfg.aliases)
        if label is None:
            raise InputDataError(f"{where}, row {i + 1}: ground truth {raw!r} is not one of {cfg.labels} "
                                 f"(classification.labels / aliases).")
        values.append(label_value(label, cfg))
    return np.asarray(values, float)


def _item_id(i: int, text: str, group: str) -> str:
    return hashlib.sha256(f"{i}|{group}|{text}".encode()).hexdigest()[:16]


def _frame_items(frame: pd.DataFrame, text_col: str | None, cfg: ClassificationConfig, where: str) -> pd.DataFrame:
    require_columns(frame, [cfg.group_column] + ([text_col] if text_col else []), where)
    groups = frame[cfg.group_column].astype(str).str.strip()
    if (groups == "").any():
        raise InputDataError(f"{where}: row {int(np.argmax((groups == '').to_numpy())) + 1} has an empty "
                             f"{cfg.group_column!r} (classification.group_column).")
    texts = frame[text_col].astype(str).str.strip().tolist() if text_col else [""] * len(frame)
    ids = [_item_id(i, t, g) for i, (t, g) in enumerate(zip(texts, groups, strict=True))]
    if cfg.cluster_column:
        require_columns(frame, [cfg.cluster_column], where)
        clusters = frame[cfg.cluster_column].astype(str).tolist()
    else:
        clusters = ids
    return pd.DataFrame({"item_id": ids, "prompt_id": [prompt_id(t) for t in texts], "prompt": texts,
                         "grp": groups.tolist(), "truth": _truth(frame, cfg, where), "cluster": clusters})


def load_items(prompts: PromptsConfig | None, cfg: ClassificationConfig) -> pd.DataFrame:
    """Items to classify: the prompts file with its group (and truth, cluster) columns."""
    if prompts is None or not prompts.path:
        raise InputDataError("The classification assessment needs prompts.path: a file with a prompt column and a "
                             f"{cfg.group_column!r} column (inline prompts.items carry no groups).")
    frame = read_table(prompts.path, "prompts.path")
    if TURNS in frame.columns:  # conversations: a row's turns (its prompt where it has none), one text each
        frame = frame.assign(**{prompts.column: _prompt_texts(frame, prompts, str(prompts.path))})
    items = _frame_items(frame, prompts.column, cfg, str(prompts.path))
    if (items["prompt"] == "").any():
        raise InputDataError(f"{prompts.path}: some prompts are empty (column {prompts.column!r}).")
    return items.head(prompts.limit) if prompts.limit else items


def _prompt_texts(frame: pd.DataFrame, prompts: PromptsConfig, where: str) -> list[str]:
    """Each row's prompt as the prompt loader reads it from a file with a ``turns`` column: a
    conversation's turns joined into one text (the label instruction then follows its last turn)."""
    rows = range(1, len(frame) + 1)
    return [prompt_text(value, f"{where}, row {i}", prompts.max_chars, prompts.max_turns)
            for i, value in zip(rows, table_prompts(frame, prompts.column, where, "row", rows), strict=True)]


def generation_frame(items: pd.DataFrame, cfg: ClassificationConfig) -> pd.DataFrame:
    """Items shaped like counterfactual variants for the LLM runner, with the label instruction."""
    suffix = cfg.instruction.format(labels=", ".join(cfg.labels)) if cfg.instruction else ""
    texts = [f"{p}\n\n{suffix}" if suffix else p for p in items["prompt"]]
    return pd.DataFrame({"variant_id": items["item_id"], "prompt_id": items["prompt_id"], "attribute": cfg.attribute,
                         "grp": items["grp"], "text": texts})


def load_byo_predictions(cfg: ClassificationConfig) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(items, responses) from a predictions file: group, prediction (a label or a raw answer), truth."""
    where = str(cfg.predictions_path)
    frame = read_table(cfg.predictions_path or "", "classification.predictions_path")
    require_columns(frame, [cfg.prediction_column], where)
    text_col = "prompt" if "prompt" in frame.columns else None
    items = _frame_items(frame, text_col, cfg, where)
    texts = frame[cfg.prediction_column].astype(str).tolist()
    responses = pd.DataFrame({"variant_id": items["item_id"], "prompt_id": items["prompt_id"], "attribute": cfg.attribute,
                              "grp": items["grp"], "sample_idx": 0, "text": texts, "ok": True, "refusal": False,
                              "error_class": None, "error_message": None, "cached": False})
    return items, responses


def predictions(responses: pd.DataFrame, items: pd.DataFrame, cfg: ClassificationConfig) -> pd.DataFrame:
    """One row per response: item, group, cluster, parsed label, prediction (1/0/NaN), truth.

    Failed calls and unparseable answers both get a NaN prediction; they stay in the frame.
    """
    by_id = items.set_index("item_id")
    labels = [parse_label(t, cfg.labels, cfg.aliases) if ok else None
              for t, ok in zip(responses["text"], responses["ok"], strict=True)]
    ids = responses["variant_id"].tolist()
    return pd.DataFrame({
        "item_id": ids, "sample_idx": responses["sample_idx"].to_numpy(), "grp": responses["grp"].tolist(),
        "cluster": by_id.loc[ids, "cluster"].tolist(), "label": labels,
        "pred": [label_value(lbl, cfg) for lbl in labels], "truth": by_id.loc[ids, "truth"].to_numpy(float),
        "failed": ~responses["ok"].to_numpy(bool),
    })


def _rates_by_group(fn: Any, pred: np.ndarray, truth: np.ndarray, codes: np.ndarray, k: int) -> np.ndarray:
    return np.array([fn(pred[codes == g], truth[codes == g]) for g in range(k)])


def classification_metrics(frame: pd.DataFrame, cfg: ClassificationConfig, mcfg: MetricsConfig) -> pd.DataFrame:
    """Every registered classification metric the run wants: each per-group rate (a metric that
    summarises none), then each disparity of a rate (its ``summarizes``) per pair of groups and
    across all groups, with intervals and verdicts. A rate that needs ground truth (see
    :func:`equilens.tasks.assessments.classification.metrics.needs_truth`) is skipped, with the reason, when there is none."""
    from equilens.tasks.assessments.classification.metrics import needs_truth
    from equilens.tasks.metrics import METRICS, estimate_row, skipped_row, wanted_metrics
    from equilens.tasks.metrics.base import interval_verdict
    from equilens.tasks.stats import bootstrap_stat

    specs = [METRICS.get(n) for n in wanted_metrics(mcfg.names, FAMILY)]
    boot = {"resamples": mcfg.bootstrap_resamples, "confidence": mcfg.confidence, "seed": mcfg.seed}
    attr = cfg.attribute
    groups = sorted(frame["grp"].unique())
    codes = frame["grp"].map({g: i for i, g in enumerate(groups)}).to_numpy()
    pred, truth, clusters = frame["pred"].to_numpy(float), frame["truth"].to_numpy(float), frame["cluster"].to_numpy()
    failed = frame["failed"].to_numpy(bool)
    has_truth = bool(np.isfinite(truth).any())
    rows: list[dict[str, Any]] = []

    def add(spec: Any, est: Any, **where: Any) -> None:
        if est.value is None or not np.isfinite(est.value):
            rows.append(skipped_row(spec.name, where.pop("reason", "an empty denominator"), **where))
            return
        where.pop("reason", None)
        verdict = interval_verdict(spec, est.value, est.ci_low, est.ci_high)
        details = {**where.pop("details", {}), "verdict": verdict}
        rows.append(estimate_row(spec.name, est, details=details, **where))

    for spec in specs:
        rate = METRICS.get(spec.summarizes) if spec.summarizes else spec
        if needs_truth(rate) and not has_truth:
            reason = f"no ground truth: classification.truth_column {cfg.truth_column!r} is absent or empty"
            rows.append(skipped_row(spec.name, reason, attribute=attr))
        elif not spec.summarizes:
            for g, name in enumerate(groups):
                m = codes == g
                est = bootstrap_stat(rate.fn, [pred[m], truth[m]], clusters[m], **boot)
                counts = {"answers": int(m.sum()), "failed_calls": int(failed[m].sum()),
                          "unparsed": int(np.isnan(pred[m]).sum() - failed[m].sum())}
                add(spec, est, attribute=attr, group_a=name, details=counts,
                    reason=f"group {name}: the rate's denominator is empty")
        else:
            _disparity_rows(spec, rate.fn, pred, truth, codes, clusters, groups, attr, boot, add)
    if not rows:
        return pd.DataFrame(columns=["family", "metric"])
    return pd.DataFrame(rows)


def _disparity_rows(spec: Any, fn: Any, pred: np.ndarray, truth: np.ndarray, codes: np.ndarray,
                    clusters: np.ndarray, groups: list[str], attr: str, boot: dict, add: Any) -> None:
    """A disparity (``spec.fn`` of two rates of ``fn``) per pair of groups, then across all groups
    (``spec.fn`` of the largest and smallest defined rate), each passed to ``add``."""
    from equilens.tasks.stats import bootstrap_stat

    combine = spec.fn
    for ia, ib in combinations(range(len(groups)), 2):
        def stat(p: np.ndarray, t: np.ndarray, c: np.ndarray, ia: int = ia, ib: int = ib) -> float:
            return combine(fn(p[c == ia], t[c == ia]), fn(p[c == ib], t[c == ib]))

        est = bootstrap_stat(stat, [pred, truth, codes], clusters, **boot)
        add(spec, est, attribute=attr, group_a=groups[ia], group_b=groups[ib],
            reason=f"{groups[ia]} vs {groups[ib]}: a rate is undefined or the ratio's denominator is 0")
    if len(groups) >= 2:
        def spread(p: np.ndarray, t: np.ndarray, c: np.ndarray) -> float:
            r = _rates_by_group(fn, p, t, c, len(groups))
            r = r[np.isfinite(r)]
            return combine(r.max(), r.min()) if len(r) >= 2 else np.nan

        est = bootstrap_stat(spread, [pred, truth, codes], clusters, **boot)
        point = _rates_by_group(fn, pred, truth, codes, len(groups))
        finite = [(v, g) for v, g in zip(point, groups, strict=True) if np.isfinite(v)]
        details = {"aggregate": spec.aggregation, "max_group": max(finite)[1] if finite else None,
                   "min_group": min(finite)[1] if finite else None}
        add(spec, est, attribute=attr, details=details,
            reason="fewer than two groups with a defined rate, or a minimum of 0")


def prediction_items(frame: pd.DataFrame) -> pd.DataFrame:
    """Per response: the parsed prediction (1 positive, 0 negative, NULL unparsed) for ``metric_items``."""
    return pd.DataFrame({"family": FAMILY, "metric": "prediction", "item_kind": "response",
                         "item": [f"{i}:{s}:{g}" for i, s, g in zip(frame["item_id"], frame["sample_idx"], frame["grp"],
                                                                   strict=True)],
                         "value": frame["pred"].to_numpy(float)})


def parse_summary(frame: pd.DataFrame) -> dict[str, dict[str, int]]:
    """Per group: answers, parsed, unparsed, failed calls (for the run summary)."""
    out = {}
    for g, sub in frame.groupby("grp", sort=True):
        failed = int(sub["failed"].sum())
        unparsed = int(sub["pred"].isna().sum()) - failed
        out[str(g)] = {"answers": len(sub), "parsed": int(sub["pred"].notna().sum()), "unparsed": unparsed,
                       "failed": failed}
    return out


@task(name="classification-metrics", **CACHED)
def classification_metrics_task(frame: pd.DataFrame, cfg: ClassificationConfig, mcfg: MetricsConfig,
                                fingerprint: str) -> pd.DataFrame:
    return classification_metrics(frame, cfg, mcfg)
