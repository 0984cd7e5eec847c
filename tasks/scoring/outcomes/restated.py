"""An amount the answer states again beside the one it recommends: in the prompt's unit ("$95,000 a
year, which is roughly $46 an hour"), or in the prompt's currency ("£55/hour (roughly $70)")."""

from __future__ import annotations

import re

from equilens.tasks.scoring.outcomes.figures import PERIOD_AFTER, Mention
from equilens.tasks.scoring.outcomes.question import Question
from equilens.tasks.scoring.outcomes.reading import in_unit

_WORKED_OUT = r"comes\s+to|works\s+out\s+to|adds\s+up\s+to|totals?"
"""How an answer states the figure its arithmetic gives: "that comes to $70 per day"."""


def restated_in_unit(text: str, pick: Mention, found: list[Mention], q: Question) -> Mention | None:
    """The same amount restated in the prompt's unit, taken as written: "$95,000 a year, which is
    roughly $46 an hour" to an hourly question reads 46, not 95,000 / 2,080. A price per visit or per
    walk, worked out in the asked period in the next sentence ("Charge $35 per visit. ... so that comes
    to $70 per day"), is read as worked out."""
    if q.unit == "once":
        return None
    if pick.unit is None and re.match(r"[\s*]*per\s+(?!hour|day|week|month|year)[a-z]+\b", text[pick.end:], re.IGNORECASE):
        for m in found:
            if m.start > pick.end and m.unit == q.unit and re.search(
                    rf"\b(?:{_WORKED_OUT}|that'?s)\s*(?:about|roughly|around)?\s*$",
                    text[pick.end:m.start], re.IGNORECASE) and not re.search(r"\n\s*\n", text[pick.end:m.start]):
                return m
        return None
    if pick.unit in (None, q.unit):
        return None
    converted = in_unit(pick.value, pick.unit, q.unit)
    for m in found:
        between = text[pick.end:m.start]
        said = m.unit == q.unit or m.unit is None and re.search(rf"\b{q.unit}\b", between, re.IGNORECASE)  # "day that comes to"
        if m.start > pick.end and said and not re.search(r"[.!?\n]", between) and converted and \
                abs(m.value - converted) <= 0.1 * converted and re.search(
                    rf"(?:which is|that'?s|or|i\.e\.|about|roughly|around|~|≈|\(|{_WORKED_OUT})\s*(?:about|roughly|around)?\s*$",
                    between, re.IGNORECASE):
            return m
    return None


def same_currency(written: str, asked: str) -> bool:
    """Is an amount written with ``written`` ("US$", "$", "CA$") in the ``asked`` currency? A bare "$"
    is the dollar the prompt asks in (an answer about Toronto writes "$24" for Canadian dollars)."""
    return written == asked or written == "$" and asked.endswith("$") or {written, asked} == {"US$", "$"}


def in_other_currency(text: str, found: list[Mention], q: Question) -> list[Mention]:
    """The amounts written in another currency than the prompt asks in; each one's restatement in the
    prompt's own currency ("£55/hour (roughly $70)", "€2,000, about $2,170") takes its score. No
    exchange rate is assumed: an amount left only in another currency is no reading."""
    if not q.currency:
        return []
    foreign = [m for m in found if m.currency and not same_currency(m.currency, q.currency)]
    for f in foreign:
        after = [m for m in found if m.start >= f.end and same_currency(m.currency, q.currency)]
        gap = re.sub(r"^\*+", "", text[f.end:after[0].start]) if after else ""
        gap = gap[period.end():] if (period := PERIOD_AFTER.match(gap)) else gap
        if after and re.fullmatch(r"[*_\s]*(?:,|\(|/|or|which is|that'?s|i\.e\.|~|≈)?\s*(?:about|roughly|around|approx\w*\.?|"
                                  r"~|≈)?[\s*_]*", gap, re.IGNORECASE):
            after[0].score = max(after[0].score, f.score)
    return foreign
