"""Metric declarations and the one metric-row builder.

Every metric states which direction is fairer (or which target value is fairest), how it
aggregates, how its interval is computed and what inputs it needs. :func:`metric` registers a
plain function with that metadata in :data:`METRICS`, which refuses duplicate names. Every stage
builds its stored rows with :func:`metric_row` / :func:`skipped_row`, so a row always carries the
declaration of the metric it belongs to. A family's legend under a metric table is declared with
:func:`family_legend`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from equilens.tasks.registry import Registry

Direction = Literal["higher", "lower", "target", "none"]
"""``higher``: larger values are fairer; ``lower``: smaller values are fairer; ``target``: the
value closest to :attr:`MetricSpec.target` is fairest (e.g. a stereotype score of 0.5); ``none``: a
description with no fair value of its own (a cell's yes rate: fairness is in its gap to other cells)."""

CLUSTER_BOOTSTRAP = "percentile cluster bootstrap over prompts"


@dataclass(frozen=True)
class MetricSpec:
    name: str
    family: str
    direction: Direction
    aggregation: str
    description: str
    reference: str
    fn: Callable[..., float]
    target: float | None = None
    interval: str = CLUSTER_BOOTSTRAP
    inputs: str = ""
    per_item: Callable[..., Any] | None = None  # the per-row or per-pair step, when the metric has one
    reads: tuple[tuple[str, str], ...] = ()  # (keyword, key of the run's config section) it takes from a run
    summarizes: str = ""  # the metric whose per-group values ``fn`` summarises across groups, if any
    cdf_statistic: Callable[..., Any] | None = None  # fn as a function of the two sides' CDF difference
    largest: float | None = None  # the largest magnitude a value can take (a share, or two shares' difference: 1)
    outcome: str = ""  # the outcome kind read from answers (number, yes_no, choice) whose values it compares
    smallest: float | None = None  # the smallest value it can take, where not -largest (a share: 0)

    def value_range(self) -> tuple[float, float] | None:
        """The values the metric can take, where it declares them (``largest``, and ``smallest``,
        else -``largest``); None for an unbounded one. Charts keep their axes within it."""
        if self.largest is None:
            return None
        return (-self.largest if self.smallest is None else self.smallest), self.largest

    def settings(self, cfg: Any) -> dict[str, Any]:
        """The keywords ``fn`` and its per-item step take from ``cfg`` (:attr:`reads`), with their values:
        ``cfg`` is the config section the metric's stage runs with (``metrics``, or its assessment's)."""
        return {keyword: getattr(cfg, key) for keyword, key in self.reads}

    def distance_from_fair(self, value: float) -> float:
        """How far ``value`` is from fair, on the metric's own scale: larger is less fair.

        ``lower``: the value itself; ``higher``: its negative; ``target``: |value - target|;
        ``none``: 0 (a description is never less fair than another).
        """
        if self.direction == "none":
            return 0.0
        if self.direction == "higher":
            return -value
        if self.direction == "target":
            return abs(value - (self.target or 0.0))
        return value

    @property
    def fairer(self) -> str:
        """Which values are fairer, in words."""
        if self.direction == "target":
            return f"closer to {self.target:g}"
        if self.direction == "none":
            return "no fair value (compare cells by its gap)"
        return f"{self.direction} is fairer"


METRICS: Registry[MetricSpec] = Registry("metric")

LEGENDS: Registry[str] = Registry("table legend")
"""Family -> what its rows in a metric table say beyond their names and arrows (what a pair compares,
in which units, what a noise floor is), printed under the tables that show rows of the family. A
family declares it once, beside its metrics, with :func:`family_legend`; one without shows its rows
with the arrows alone."""


def family_legend(family: str, text: str) -> str:
    """Declare the legend of ``family``'s rows (see :data:`LEGENDS`)."""
    return LEGENDS.add(family, text)


PAIRED: Registry[bool] = Registry("paired family")
"""The families judged per attribute (or comparison) from pairs of groups: one verdict per comparison,
from the gaps between the two groups of each pair; the value says whether every pair row with a
p-value is judged (else only the metrics :func:`equilens.tasks.metrics.judged.judged_metric` names).
A family declares it once, beside its metrics, with :func:`paired_family`
(:func:`equilens.tasks.metrics.judged.paired_families` reads them)."""


def paired_family(family: str, every_pair_judged: bool = False) -> str:
    """Declare ``family`` judged from pairs of groups (see :data:`PAIRED`): with ``every_pair_judged``,
    each of its pair rows with a p-value counts toward the verdict (an outcome gap, the judge's harm)."""
    PAIRED.add(family, every_pair_judged)
    return family


def metrics_of(*families: str) -> list[str]:
    """Names of the registered metrics of the given families, in registry (alphabetical) order."""
    return [name for name, spec in METRICS.items() if spec.family in families]


def wanted_metrics(names: list[str] | None, *families: str) -> list[str]:
    """The metrics of ``families`` a run computes: all of them, or those of ``names`` (``metrics.names``)
    that belong to these families. Unknown names raise the registry's error listing the known ones."""
    if not names:
        return metrics_of(*families)
    for name in names:
        METRICS.get(name)
    return [n for n in names if METRICS.get(n).family in families]


def with_inputs(names: Sequence[str] | None, *inputs: str) -> list[str]:
    """The metrics of ``names`` (every registered one when None) whose declared ``inputs`` is one
    of ``inputs``: how a stage picks the metrics it can compute from the data it has."""
    chosen = METRICS.names() if names is None else list(names)
    return [name for name in chosen if METRICS.get(name).inputs in inputs]


def metric(
    name: str,
    *,
    family: str,
    direction: Direction,
    aggregation: str,
    reference: str,
    target: float | None = None,
    interval: str = CLUSTER_BOOTSTRAP,
    inputs: str = "",
    per_item: Callable[..., Any] | None = None,
    reads: dict[str, str] | None = None,
    summarizes: str = "",
    cdf_statistic: Callable[..., Any] | None = None,
    largest: float | None = None,
    outcome: str = "",
    smallest: float | None = None,
) -> Callable[[Callable[..., float]], Callable[..., float]]:
    """Register ``fn`` as metric ``name``; the function's docstring becomes its description.
    ``per_item``: its step per row or pair of rows, which a stage calls to get one value per item
    before aggregating or resampling (a metric on ``inputs="texts"`` gets the distinct texts and
    each pair's two places among them, so a stage numbers its answers once); ``reads``: keyword of
    ``fn`` (or ``per_item``) -> key of the config section its stage runs with (``metrics``, or the
    assessment's own), read by :meth:`MetricSpec.settings`, so a stage passes settings without naming the metric;
    ``summarizes``: the metric whose per-group values ``fn`` summarises across groups;
    ``cdf_statistic``: for a parity metric, the same value computed from the running sum of the
    signed mass of the two sides on a sorted grid (:mod:`equilens.tasks.stats.resampling`), which resamples,
    label swaps and planted differences all reuse without a sort or a loop per resample; ``largest``: the
    largest magnitude a value can take, where the metric has one (a gap no larger can be shown at all);
    ``outcome``: the kind of outcome read from answers (number, yes_no, choice) whose per-cell values
    the metric takes (one cell's values) or compares (two cells', a gap): :func:`outcome_metrics`;
    ``smallest``: the smallest value it can take where that is not -``largest`` (a share: 0)."""
    if direction == "target" and target is None:
        raise ValueError(f"metric {name!r}: direction 'target' needs a target value")

    def deco(fn: Callable[..., float]) -> Callable[..., float]:
        doc = (fn.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
        METRICS.add(
            name,
            MetricSpec(name, family, direction, aggregation, doc, reference, fn, target, interval, inputs,
                       per_item, tuple((reads or {}).items()), summarizes, cdf_statistic, largest, outcome,
                       smallest),
        )
        return fn

    return deco


METRIC_ROW_COLUMNS = ["family", "attribute", "group_a", "group_b", "metric", "value", "ci_low", "ci_high", "n",
                      "direction", "aggregation", "details"]


def metric_row(
    name: str,
    value: float | None,
    ci: tuple[float | None, float | None] = (None, None),
    n: int = 0,
    *,
    attribute: str | None = None,
    group_a: str | None = None,
    group_b: str | None = None,
    details: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One stored metric row; family, direction and aggregation come from the registry."""
    spec = METRICS.get(name)
    return {
        "family": spec.family, "attribute": attribute, "group_a": group_a, "group_b": group_b, "metric": name,
        "value": value, "ci_low": ci[0], "ci_high": ci[1], "n": int(n), "direction": spec.direction,
        "aggregation": spec.aggregation, "details": dict(details or {}),
    }


def estimate_row(name: str, est: Any, **where: Any) -> dict[str, Any]:
    """:func:`metric_row` from a :class:`equilens.tasks.stats.Estimate` (value, ci_low, ci_high, n)."""
    return metric_row(name, est.value, (est.ci_low, est.ci_high), est.n, **where)


def skipped_row(name: str, reason: str, *, details: dict[str, Any] | None = None, **where: Any) -> dict[str, Any]:
    """A metric that could not be computed: no value, ``details.skipped`` says why."""
    return metric_row(name, None, (None, None), 0, details={**(details or {}), "skipped": reason}, **where)


def interval_verdict(spec: Any, value: float | None, ci_low: float | None, ci_high: float | None) -> str:
    """One word on the interval: ``fair`` (it holds the fair value), ``unfair`` (it excludes it),
    or ``undetermined`` (no interval). Lower/higher-is-fairer metrics have no fair value: ``n/a``."""
    if spec.direction != "target":
        return "n/a"
    if value is None or ci_low is None or ci_high is None or ci_low != ci_low:
        return "undetermined"
    return "fair" if ci_low <= spec.target <= ci_high else "unfair"


def compares_two(spec: MetricSpec) -> bool:
    """Does this metric take two cells' values (a gap), where a per-cell metric takes one?"""
    return len(inspect.signature(spec.fn).parameters) == 2


def outcome_metrics() -> dict[str, tuple[str, str]]:
    """Outcome kind -> (its per-cell metric, its per-pair gap), from the metrics that declare an
    ``outcome``: a gap takes two cells' values, a per-cell metric one."""
    cells: dict[str, str] = {}
    gaps: dict[str, str] = {}
    for name, spec in METRICS.registered():
        if spec.outcome:
            (gaps if compares_two(spec) else cells)[spec.outcome] = name
    return {kind: (cells[kind], gaps[kind]) for kind in cells if kind in gaps}


def outcome_gaps() -> tuple[str, ...]:
    """Every outcome kind's per-pair gap (:func:`outcome_metrics`)."""
    return tuple(gap for _, gap in outcome_metrics().values())
