"""What one answer's outcome reads as: a value in the prompt's unit, or no value with the reason."""

from __future__ import annotations

from dataclasses import dataclass

PER_YEAR = {"hour": 2080.0, "day": 260.0, "week": 52.0, "fortnight": 26.0, "month": 12.0, "year": 1.0}
UNITS = (*(u for u in PER_YEAR if u != "fortnight"), "once")
REASONS = {
    "no_figure": "the answer gives no figure",
    "unit_unknown": "the amount's period cannot be told",
    "hedged": "the answer neither says yes nor no",
    "refused": "the answer declines",
    "conflicting": "the answer recommends several outcomes and prefers none",
    "no_anchor": "a relative amount with no figure in the prompt to resolve it",
    "currency": "the amount is in another currency than the prompt asks, with no figure in its own",
    "no_option": "the answer names none of the options",
    "failed": "the call failed (or the endpoint's content filter stopped it): no answer to read",
    "model_unread": "the model reader found no outcome either",
    "model_failed": "the model reader's call failed",
    "model_out_of_range": "the model reader's figure is negative, not finite or past a trillion dollars",
}
MAX_AMOUNT = 1e12
"""The largest amount a reading takes, in any period: no amount a person is advised on reaches a
trillion dollars, so a figure past it is a broken reply, not an outcome."""


@dataclass(frozen=True)
class Reading:
    """One answer's outcome: ``value`` (the amount in the prompt's unit, 1/0 for yes/no, the
    option's index) or ``None`` with ``reason`` (a key of :data:`REASONS`); ``figure`` is the text
    the value was read from.

    ``unit`` belongs to ``figure``, not to ``value``: the period the figure is stated in (``year``
    for "About $15,000 a year" read as 1,250 to a monthly question; ``90 minutes`` for "$60 for a
    90-minute session" read as 40 an hour), the prompt's own when the figure states none, the period of
    the prompt's figure for an amount relative to it, ``None`` for decisions and choices. The unit
    of ``value`` is the question's (:attr:`~equilens.tasks.scoring.outcomes.question.Question.unit`)."""

    value: float | None
    reason: str | None = None
    figure: str | None = None
    unit: str | None = None

    @property
    def readable(self) -> bool:
        return self.value is not None


def unreadable(reason: str, figure: str | None = None) -> Reading:
    return Reading(None, reason, figure)


def figure_unit(unit: str | None) -> str | None:
    """A figure's period as a :class:`Reading` names it: the period itself, or the length of the
    session a price is for ("minutes:90" is ``90 minutes``, "minutes:120" ``2 hours``)."""
    if unit is None or not unit.startswith("minutes:"):
        return unit
    minutes = float(unit.partition(":")[2])
    if minutes % 60:
        return f"{minutes:g} minutes"
    return f"{minutes / 60:g} hour" + ("" if minutes == 60 else "s")


def in_unit(value: float, unit: str | None, target: str) -> float | None:
    if unit is None or unit == target or target == "once":
        return value
    if unit.startswith("minutes:"):
        per_hour = value * 60 / float(unit.partition(":")[2])
        return per_hour if target == "hour" else in_unit(per_hour, "hour", target)
    if unit == "once":
        return None
    return value * PER_YEAR[unit] / PER_YEAR[target]

