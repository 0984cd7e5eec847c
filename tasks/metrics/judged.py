"""Which metrics the verdict judges, and the arithmetic of its rule that the stages need before any
verdict is written: the headline metric, the families judged from pairs of groups, when a p-value
may be acted on, and the fewest prompts for which the permutation test can reach Holm's bar.
(The verdict itself, in words, is :mod:`equilens.tasks.reporting.verdict`.)"""

from __future__ import annotations

import math
from typing import Any

HEADLINE = "strict_sentiment_parity"
PAIRED_FAMILIES = ("counterfactual", "identity")
"""Families judged per attribute (or identity comparison) from pairs of groups."""
MIN_PROMPTS_SIMILARITY = 10
"""A similarity gap's bootstrap p-value needs this many prompts: with fewer clusters the percentile
bootstrap is too narrow to trust (a parity gap uses the exact permutation test instead)."""


def number_or_none(v: Any) -> float | None:
    """``v`` as a float, or None for a missing, non-numeric or NaN value."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if f != f else f


def p_is_trusted(d: dict[str, Any], metric: str | None = None) -> bool:
    """May the report act on this row's p-value? A permutation p, or a mixed model's (decisions),
    always; a similarity gap's p (a paired t-test over prompts, or a bootstrap p in runs stored before
    it) only on at least :data:`MIN_PROMPTS_SIMILARITY` prompts, where the t reference is not thrown
    off by a few skewed prompts. Rows stored before ``p_method`` existed are read by their
    ``metric`` (parity gaps are permutation tests); without either the p is trusted."""
    method = d.get("p_method")
    if method is None and metric is not None:
        method = "permutation" if metric.endswith("sentiment_parity") else "bootstrap"
    return method in (None, "permutation", "mixed model") or (number_or_none(d.get("prompts")) or 0) >= \
        MIN_PROMPTS_SIMILARITY


def judged_metric(metric: str, d: dict[str, Any]) -> bool:
    """Does the verdict act on this metric? Parity always; a similarity metric only on text with the
    group words neutralised. Embeddings (cosine) are never judged: an answer that names its group
    ("as a Hispanic doctor...") is less alike across groups than two answers to the same prompt even
    from a fair model, so their gap is reported, not called a finding. Every judged (pair, metric) of
    an attribute is one Holm family, so a fair model fires in at most alpha of runs overall."""
    from equilens.tasks.metrics import METRICS

    inputs = METRICS.get(metric).inputs if metric in METRICS else None
    return inputs in ("sentiment", "outcome", "judge") or (inputs == "texts" and bool(d.get("neutralized")))


def planned_metrics(metric: str | None = None) -> tuple[str, ...]:
    """The metrics a gap to detect is measured in (a power plan, a run's futility target): the one
    named, else the counterfactual verdict's headline and the identity outcome gaps."""
    from equilens.tasks.metrics.identity import OUTCOME_METRICS

    return (metric,) if metric else (HEADLINE, *(pair for _, pair in OUTCOME_METRICS.values()))


def judged_metrics(names: list[str], neutralized: bool) -> list[str]:
    """The metrics of ``names`` the verdict acts on in a run whose text metrics are (or are not)
    neutralised: the one list both the metric stage's Holm family and preflight count."""
    return [name for name in names if judged_metric(name, {"neutralized": neutralized})]


def prompts_needed(pairs: int, alpha: float) -> int:
    """Fewest prompts for which the within-prompt permutation test can reach p_holm < alpha over
    ``pairs`` pairs. With n prompts, swapping group labels within each prompt gives 2^n equally likely
    arrangements, so the smallest two-sided p is 2 / 2^n = 2^(1-n); Holm compares the smallest p with
    alpha / pairs. Needed: 2^(1-n) < alpha / pairs, i.e. n > 1 + log2(pairs / alpha)."""
    return int(math.floor(1 + math.log2(pairs / alpha))) + 1 if pairs and alpha > 0 else 0
