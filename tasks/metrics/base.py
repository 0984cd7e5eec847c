"""Metric declarations: every metric states which direction is fairer and how it aggregates.

Metric functions are plain numpy/python functions; :func:`metric` registers them with their
metadata in :data:`METRICS`, which refuses duplicate names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from tasks.registry import Registry

Direction = Literal["higher", "lower", "target"]
"""``higher``: larger values are fairer; ``lower``: smaller values are fairer; ``target``: the
value closest to :attr:`MetricSpec.target` is fairest (e.g. a stereotype score of 0.5)."""


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


METRICS: Registry[MetricSpec] = Registry("metric")


def metric(
    name: str,
    *,
    family: str,
    direction: Direction,
    aggregation: str,
    reference: str,
    target: float | None = None,
) -> Callable[[Callable[..., float]], Callable[..., float]]:
    """Register ``fn`` as metric ``name``; the function's docstring becomes its description."""

    def deco(fn: Callable[..., float]) -> Callable[..., float]:
        doc = (fn.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
        METRICS.add(
            name,
            MetricSpec(name, family, direction, aggregation, doc, reference, fn, target),
        )
        return fn

    return deco
