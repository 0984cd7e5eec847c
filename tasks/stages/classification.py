"""Stage logic of the classification-fairness assessment, as plain functions over DataFrames.

Items come from a prompts file with a group column (and a ground-truth column when there is
one); the model's answers are parsed into the allowed labels, or predictions come from a file the
user brings. Rates per group and their disparities get cluster-bootstrap intervals over items
(or over ``cluster_column``) and a verdict: does the interval exclude the fair value?
"""

from __future__ import annotations

import hashlib
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tasks.config import ClassificationConfig, MetricsConfig, PromptsConfig
from tasks.errors import InputDataError
from tasks.inputs.tables import read_table, require_columns
from tasks.scoring.parsing import parse_label
from tasks.inputs.prompts import prompt_id

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
    items = _frame_items(frame, prompts.column, cfg, str(prompts.path))
    if (items["prompt"] == "").any():
        raise InputDataError(f"{prompts.path}: some prompts are empty (column {prompts.column!r}).")
    return items.head(prompts.limit) if prompts.limit else items


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


def interval_verdict(spec: Any, value: float | None, ci_low: float | None, ci_high: float | None) -> str:
    """One word on the interval: ``fair`` (it holds the fair value), ``unfair`` (it excludes it),
    or ``undetermined`` (no interval). Lower/higher-is-fairer metrics have no fair value: ``n/a``."""
    if spec.direction != "target":
        return "n/a"
    if value is None or ci_low is None or ci_high is None or np.isnan(ci_low):
        return "undetermined"
    return "fair" if ci_low <= spec.target <= ci_high else "unfair"


def _rates_by_group(fn: Any, pred: np.ndarray, truth: np.ndarray, codes: np.ndarray, k: int) -> np.ndarray:
    return np.array([fn(pred[codes == g], truth[codes == g]) for g in range(k)])


def classification_metrics(frame: pd.DataFrame, cfg: ClassificationConfig, mcfg: MetricsConfig) -> pd.DataFrame:
    """Per-group rates, unparsed rates, and pair / max-min disparities, with intervals and verdicts."""
    from tasks.metrics import METRICS, estimate_row, skipped_row, wanted_metrics
    from tasks.metrics.classification import RATES, disparity_name
    from tasks.stats import bootstrap_stat

    wanted = set(wanted_metrics(mcfg.names, FAMILY))
    boot = {"resamples": mcfg.bootstrap_resamples, "confidence": mcfg.confidence, "seed": mcfg.seed}
    attr = cfg.attribute
    groups = sorted(frame["grp"].unique())
    codes = frame["grp"].map({g: i for i, g in enumerate(groups)}).to_numpy()
    pred, truth, clusters = frame["pred"].to_numpy(float), frame["truth"].to_numpy(float), frame["cluster"].to_numpy()
    has_truth = bool(np.isfinite(truth).any())
    rows: list[dict[str, Any]] = []

    def add(name: str, est: Any, **where: Any) -> None:
        if est.value is None or not np.isfinite(est.value):
            rows.append(skipped_row(name, where.pop("reason", "an empty denominator"), **where))
            return
        where.pop("reason", None)
        verdict = interval_verdict(METRICS.get(name), est.value, est.ci_low, est.ci_high)
        details = {**where.pop("details", {}), "verdict": verdict}
        rows.append(estimate_row(name, est, details=details, **where))

    if "unparsed_rate" in wanted:
        for g, name in enumerate(groups):
            m = codes == g
            est = bootstrap_stat(lambda p: float(np.isnan(p).mean()), [pred[m]], clusters[m], **boot)
            rows.append(estimate_row("unparsed_rate", est, attribute=attr, group_a=name,
                                     details={"unparsed": int(np.isnan(pred[m]).sum() - frame["failed"][m].sum()),
                                              "failed_calls": int(frame["failed"][m].sum()), "answers": int(m.sum())}))
    for rate, (fn, needs_truth, _ref) in RATES.items():
        names = [n for n in (rate, disparity_name(rate, "difference"), disparity_name(rate, "ratio")) if n in wanted]
        if not names:
            continue
        if needs_truth and not has_truth:
            reason = f"no ground truth: classification.truth_column {cfg.truth_column!r} is absent or empty"
            rows += [skipped_row(n, reason, attribute=attr) for n in names]
            continue
        if rate in wanted:
            for g, name in enumerate(groups):
                m = codes == g
                est = bootstrap_stat(fn, [pred[m], truth[m]], clusters[m], **boot)
                add(rate, est, attribute=attr, group_a=name, reason=f"group {name}: the rate's denominator is empty")
        for kind in ("difference", "ratio"):
            dname = disparity_name(rate, kind)
            if dname not in wanted:
                continue
            combine = (lambda a, b: a - b) if kind == "difference" else (lambda a, b: a / b if b else np.nan)
            for ia, ib in combinations(range(len(groups)), 2):
                def stat(p: np.ndarray, t: np.ndarray, c: np.ndarray, ia: int = ia, ib: int = ib,
                         fn: Any = fn, combine: Any = combine) -> float:
                    return combine(fn(p[c == ia], t[c == ia]), fn(p[c == ib], t[c == ib]))

                est = bootstrap_stat(stat, [pred, truth, codes], clusters, **boot)
                add(dname, est, attribute=attr, group_a=groups[ia], group_b=groups[ib],
                    reason=f"{groups[ia]} vs {groups[ib]}: a rate is undefined or the ratio's denominator is 0")
            if len(groups) >= 2:
                def spread(p: np.ndarray, t: np.ndarray, c: np.ndarray, fn: Any = fn, combine: Any = combine) -> float:
                    r = _rates_by_group(fn, p, t, c, len(groups))
                    r = r[np.isfinite(r)]
                    if len(r) < 2:
                        return np.nan
                    return combine(r.max(), r.min())

                est = bootstrap_stat(spread, [pred, truth, codes], clusters, **boot)
                point = _rates_by_group(fn, pred, truth, codes, len(groups))
                finite = [(v, g) for v, g in zip(point, groups, strict=True) if np.isfinite(v)]
                details = {"aggregate": f"{'max - min' if kind == 'difference' else 'max / min'} over groups",
                           "max_group": max(finite)[1] if finite else None,
                           "min_group": min(finite)[1] if finite else None}
                add(dname, est, attribute=attr, details=details,
                    reason="fewer than two groups with a defined rate, or a minimum of 0")
    if not rows:
        return pd.DataFrame(columns=["family", "metric"])
    return pd.DataFrame(rows)


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
