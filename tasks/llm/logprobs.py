"""Log-probabilities as an endpoint sends them, checked before anything reads them.

A log-probability is a finite number at most 0 (a probability between 0 and 1). A reply's value
that is not one (1000, 1e308, ``Infinity``, ``NaN``, a string) is kept as a value no check passes,
so the reader of that reply can say why it cannot use it: P(yes) is then unreadable with that
reason, and the reply is not cached as a good answer. A value up to :data:`ROUNDING` above 0 is a
rounding error of the endpoint's arithmetic and reads as 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

ROUNDING = 1e-6
"""How far above 0 a log-probability may be and still read as 0 (float32 rounding of a log-softmax)."""


class NotANumber(float):
    """NaN standing for a value an endpoint sent that is not a number (a string, a boolean, an object):
    it keeps that value, so the reason names what was sent rather than "nan"."""

    sent: object

    def __new__(cls, sent: object) -> NotANumber:
        out = super().__new__(cls, math.nan)
        out.sent = sent
        return out


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def logprob_problem(value: object) -> str | None:
    """None when ``value`` is a log-probability (a finite number at most 0); else what it is instead."""
    if isinstance(value, NotANumber):
        return f"{_shown(value.sent)} ({type(value.sent).__name__}) is not a number"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"{_shown(value)} ({type(value).__name__}) is not a number"
    try:
        number = float(value)
    except OverflowError:  # an integer past any float
        return "a number past any float is not finite"
    if not math.isfinite(number):
        return f"{number} is not finite"
    if number > ROUNDING:
        return f"{number:g} is above 0 (a probability above 1)"
    return None


def checked_logprob(value: object) -> float:
    """``value`` as a log-probability; a value :func:`logprob_problem` refuses stays one it refuses:
    the number itself where it is a number (``inf`` past any float), NaN where it is not
    (:class:`NotANumber`, which keeps what was sent for the reason)."""
    if logprob_problem(value) is None:
        return min(float(value), 0.0)  # type: ignore[arg-type] - a number, checked
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return NotANumber(value)
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def logprobs_problem(top: Mapping[str, object] | None) -> str | None:
    """Why a reply's first-token log-probabilities cannot be read (the first bad one, with its
    token), or None when every one is a log-probability (or the reply has none)."""
    for token, value in (top or {}).items():
        problem = logprob_problem(value)
        if problem:
            return f"the log-probability of {token!r}: {problem}"
    return None


def logsumexp(values: list[float]) -> float:
    """log(sum(exp(v))) without overflow or underflow; -inf for no values."""
    if not values:
        return -math.inf
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))
