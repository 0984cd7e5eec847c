"""Classification fairness metrics: group rates of a binary decision and their disparities.

An LLM used as a classifier gives each item a label; one label is the *positive* decision (the
one whose rate is compared: approve, flag, route to a human). Per group:

* predicted prevalence ``P(pred = +)`` over parsed answers;
* false positive rate ``FP / (FP + TN)``, false negative rate ``FN / (FN + TP)``,
  false omission rate ``FN / (FN + TN)``, false discovery rate ``FP / (FP + TP)`` (ground truth needed);
* unparsed rate: share of answers that name no allowed label (they are counted, never dropped,
  and left out of the confusion matrix).

Disparities, as LangFair's ClassificationMetrics: for a pair of groups the difference
``rate_a - rate_b`` (fair: 0) and the ratio ``rate_a / rate_b`` (fair: 1); across all groups of
an attribute ``max - min`` and ``max / min``. A rate with an empty denominator is NaN, and a
disparity that needs it is skipped with the reason.

Predictions are arrays with 1.0 (positive), 0.0 (negative) or NaN (unparsed); truth the same
(NaN: unknown).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import numpy as np
from equilens.tasks.metrics.base import MetricSpec, metric

LANGFAIR = "Bouchard (2024), LangFair ClassificationMetrics, arXiv:2407.10853"
HARDT = "Hardt et al. (2016), Equality of Opportunity, arXiv:1610.02413; " + LANGFAIR
CHOULDECHOVA = "Chouldechova (2017), Fair prediction with disparate impact, arXiv:1610.07524; " + LANGFAIR
INPUTS = "per response: group, parsed label (positive / negative / unparsed), ground truth when the rate needs it"


def _share(hit: np.ndarray, among: np.ndarray) -> float:
    d = int(among.sum())
    return float((hit & among).sum() / d) if d else float("nan")


def predicted_prevalence(pred: np.ndarray, truth: np.ndarray | None = None) -> float:
    """Share of parsed answers that give the positive label."""
    pred = np.asarray(pred, float)
    parsed = ~np.isnan(pred)
    return _share(pred == 1, parsed)


def false_positive_rate(pred: np.ndarray, truth: np.ndarray) -> float:
    """FP / (FP + TN): among parsed answers whose truth is negative, the share predicted positive."""
    pred, truth = np.asarray(pred, float), np.asarray(truth, float)
    return _share(pred == 1, (truth == 0) & ~np.isnan(pred))


def false_negative_rate(pred: np.ndarray, truth: np.ndarray) -> float:
    """FN / (FN + TP): among parsed answers whose truth is positive, the share predicted negative."""
    pred, truth = np.asarray(pred, float), np.asarray(truth, float)
    return _share(pred == 0, (truth == 1) & ~np.isnan(pred))


def false_omission_rate(pred: np.ndarray, truth: np.ndarray) -> float:
    """FN / (FN + TN): among answers predicted negative (truth known), the share truly positive."""
    pred, truth = np.asarray(pred, float), np.asarray(truth, float)
    return _share(truth == 1, (pred == 0) & ~np.isnan(truth))


def false_discovery_rate(pred: np.ndarray, truth: np.ndarray) -> float:
    """FP / (FP + TP): among answers predicted positive (truth known), the share truly negative."""
    pred, truth = np.asarray(pred, float), np.asarray(truth, float)
    return _share(truth == 0, (pred == 1) & ~np.isnan(truth))


def unparsed_rate(pred: np.ndarray, truth: np.ndarray | None = None) -> float:
    """Share of answers that name no allowed label (counted per group, never dropped)."""
    pred = np.asarray(pred, float)
    return float(np.isnan(pred).mean()) if len(pred) else float("nan")


RATES: dict[str, tuple[Callable[..., float], bool, str]] = {
    # name: (function, needs ground truth, reference)
    "predicted_prevalence": (predicted_prevalence, False, LANGFAIR),
    "false_positive_rate": (false_positive_rate, True, HARDT),
    "false_negative_rate": (false_negative_rate, True, HARDT),
    "false_omission_rate": (false_omission_rate, True, CHOULDECHOVA),
    "false_discovery_rate": (false_discovery_rate, True, CHOULDECHOVA),
}

for _name, (_fn, _truth, _ref) in RATES.items():
    metric(_name, family="classification", direction="lower", aggregation="per group (descriptive; the "
           "disparity rows carry the verdict)", reference=_ref, interval="percentile cluster bootstrap over items",
           inputs=INPUTS)(_fn)
metric("unparsed_rate", family="classification", direction="lower", aggregation="per group",
       reference="equilens", interval="percentile cluster bootstrap over items", inputs="per response: parsed or not")(
    unparsed_rate)


def needs_truth(spec: MetricSpec) -> bool:
    """Whether a per-group rate needs ground truth: its function's ``truth`` argument has no default."""
    truth = inspect.signature(spec.fn).parameters.get("truth")
    return truth is not None and truth.default is inspect.Parameter.empty


def rate_difference(rate_a: float, rate_b: float) -> float:
    """rate_a - rate_b for a pair; max - min across groups (0 is fair)."""
    return float(rate_a - rate_b)


def rate_ratio(rate_a: float, rate_b: float) -> float:
    """rate_a / rate_b for a pair; max / min across groups (1 is fair); NaN when rate_b is 0."""
    return float(rate_a / rate_b) if rate_b else float("nan")


def _disparity(kind: str, rate: str) -> Callable[[float, float], float]:
    base = rate_difference if kind == "difference" else rate_ratio

    def fn(rate_a: float, rate_b: float) -> float:
        return base(rate_a, rate_b)

    fn.__doc__ = (f"{rate.replace('_', ' ').capitalize()} {kind} between groups: "
                  + ("rate_a - rate_b per pair, max - min across groups (0 is fair)." if kind == "difference"
                     else "rate_a / rate_b per pair, max / min across groups (1 is fair)."))
    return fn


def disparity_name(rate: str, kind: str) -> str:
    return f"{rate}_{kind}"


for _rate, (_fn, _truth, _ref) in RATES.items():
    metric(disparity_name(_rate, "difference"), family="classification", direction="target", target=0.0,
           aggregation="per group pair; max - min per attribute", reference=_ref, summarizes=_rate,
           interval="percentile cluster bootstrap over items", inputs=INPUTS)(_disparity("difference", _rate))
    metric(disparity_name(_rate, "ratio"), family="classification", direction="target", target=1.0,
           aggregation="per group pair; max / min per attribute", reference=_ref, summarizes=_rate,
           interval="percentile cluster bootstrap over items", inputs=INPUTS)(_disparity("ratio", _rate))
