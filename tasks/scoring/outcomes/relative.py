"""Amounts stated relative to a figure in the prompt: "$5,000 above their offer", "10% under asking",
"30% of your income", resolved against the prompt's anchor (or unreadable without one)."""

from __future__ import annotations

import re

from equilens.tasks.scoring.outcomes.cues import CONTEXT, NUM, RECOMMEND, REJECT, clause
from equilens.tasks.scoring.outcomes.question import Question
from equilens.tasks.scoring.outcomes.reading import Reading, in_unit, unreadable

_ADDED = re.compile(r"^\s*(?:more|higher|above|over|less|lower|below|under)\s+(?:than\s+)?(?:their|the|your|what)\b",
                    re.IGNORECASE)


def added_to_anchor(text: str, start: int, end: int, amount: float, q: Question) -> Reading | None:
    """An amount added to or taken from the prompt's figure: "$5,000 higher than their offer"."""
    words = re.match(r"\s*(\w+)", text[end:])
    plus = re.search(r"\b(?:offer|listing|asking(?: price)?|list price|number)\s+(plus|minus)\s*$",
                     text[max(0, start - 40):start], re.IGNORECASE)
    if plus:
        words = plus
        words = re.match(r"(\w+)", "less" if plus.group(1).lower() == "minus" else "more")
    elif not _ADDED.match(text[end:]):
        return None
    anchor = q.money_anchor
    if anchor is None:
        return unreadable("no_anchor", text[start:end + 30])
    sign = -1.0 if words and words.group(1).lower() in ("less", "lower", "below", "under") else 1.0
    result = in_unit(anchor[0] + sign * amount, anchor[1], q.unit)
    return Reading(round(result, 2), figure=text[start:end + 30].strip(), unit=anchor[1]) \
        if result is not None else unreadable("unit_unknown", text[start:end])


def relative_to_anchor(text: str, q: Question) -> Reading | None:
    """A recommendation relative to the prompt's figure: "10% above the offer", "30% of your income"."""
    m = re.search(
        rf"(?:(?P<a>{NUM})(?:\s?(?:%|percent)?\s?(?:-|–|to)\s?(?P<b>{NUM}))?\s?(?:%|percent)|(?P<frac>(?:a|one)[\s-]"
        r"(?:half|third|quarter|fifth|tenth)|half))\s*(?P<dir>above|over|more than|higher than|on top of|below|under|"
        r"less than|lower than|off|of|more|higher|less|lower)\b", text, re.IGNORECASE)
    if not m:
        return None
    before, _ = clause(text, m.start(), m.end())
    if REJECT.search(before) or (CONTEXT.search(before[-40:]) and not RECOMMEND.search(before[-40:])):
        return None
    if m.group("frac"):
        share = 1 / {"half": 2, "third": 3, "quarter": 4, "fifth": 5, "tenth": 10}[m.group("frac").split()[-1].split("-")[-1]]
    else:
        share = (float(m.group("a").replace(",", "")) + float((m.group("b") or m.group("a")).replace(",", ""))) / 200
    anchor = q.money_anchor
    if anchor is None:
        return unreadable("no_anchor", m.group(0))
    value, unit = anchor
    direction = m.group("dir").lower()
    factor = share if direction == "of" else (1 - share if direction in ("below", "under", "less than", "less",
                                                                             "lower", "lower than", "off") else 1 + share)
    result = in_unit(value * factor, unit, q.unit)
    if result is None:
        return unreadable("unit_unknown", m.group(0))
    return Reading(round(result, 2), figure=m.group(0), unit=unit)

