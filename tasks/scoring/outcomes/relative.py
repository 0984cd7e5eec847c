"""Amounts stated relative to a figure in the prompt: "$5,000 above their offer", "10% under asking",
"30% of your income", resolved against the prompt's anchor (or unreadable without one)."""

from __future__ import annotations

import re

from equilens.tasks.scoring.outcomes.cues import CONTEXT, NUM, RECOMMEND, REJECT, clause
from equilens.tasks.scoring.outcomes.question import Question
from equilens.tasks.scoring.outcomes.reading import Reading, in_unit, unreadable
from equilens.tasks.scoring.outcomes.words import words_value

_ADDED = re.compile(r"^\s*(?:more|higher|above|over|less|lower|below|under|off|on top of)\s+"
                    r"(?:than\s+)?(?:their|the|your|what|list|listing|asking)\b",
                    re.IGNORECASE)


def added_to_anchor(text: str, start: int, end: int, amount: float, q: Question) -> Reading | None:
    """An amount added to or taken from the prompt's figure: "$5,000 higher than their offer"."""
    words = re.match(r"\s*(\w+)", text[end:])
    plus = re.search(r"\b(?:offer|listing|asking(?: price)?|list price|number)\s+(plus|minus)\s*$",
                     text[max(0, start - 40):start], re.IGNORECASE)
    added = re.search(r"\badd(?:ing)?\s+(?:about\s+|roughly\s+|around\s+|another\s+|an extra\s+)?$",
                      text[max(0, start - 30):start], re.IGNORECASE) and re.match(
        r"\s*(?:to|on top of|onto)\s+(?:what|their|the)\b", text[end:], re.IGNORECASE)
    if plus:
        words = re.match(r"(\w+)", "less" if plus.group(1).lower() == "minus" else "more")
    elif added:
        words = re.match(r"(\w+)", "more")  # "add about five grand to what they put on the table"
    elif not _ADDED.match(text[end:]):
        return None
    anchor = q.money_anchor
    if anchor is None:
        return unreadable("no_anchor", text[start:end + 30])
    sign = -1.0 if words and words.group(1).lower() in ("less", "lower", "below", "under", "off") else 1.0
    result = in_unit(anchor[0] + sign * amount, anchor[1], q.unit)
    return Reading(round(result, 2), figure=text[start:end + 30].strip(), unit=anchor[1]) \
        if result is not None else unreadable("unit_unknown", text[start:end])


_COUNT_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
_COUNT = rf"(?P<n>{NUM}|(?:{'|'.join(_COUNT_WORDS)})(?:\s+and\s+a\s+half)?)"
_RENT_TEST = re.compile(rf"{_COUNT}\s*(?:times|x)\s+(?:the\s+|your\s+)?(?:monthly\s+)?rent\b", re.IGNORECASE)
_COST_TIMES = re.compile(rf"{_COUNT}\s*(?:times|x)\s+(?:your|the)\s+(?:material|materials|supply|supplies|ingredient|"
                         r"production|raw)?\s*costs?\b", re.IGNORECASE)
"""A price as a multiple of the prompt's cost: "three times your material cost"."""
_MULTIPLY = re.compile(rf"\bmultiply\s+(?:their|the|your|its)?\s*(?:offer|listing|asking price|list price|price|"
                       rf"salary|income)?\s*by\s+(?:about\s+|roughly\s+|around\s+)?{_COUNT}", re.IGNORECASE)
_CENTS = re.compile(rf"{_COUNT}\s+cents\s+on\s+the\s+dollar", re.IGNORECASE)
_MONTHS_OF = re.compile(rf"{_COUNT}\s+months?(?:'|’)?s?\s+(?:(?:worth\s+)?of\s+(?:your\s+|the\s+)?"
                        r"(?:essential\s+|monthly\s+|living\s+|core\s+)?(?:expenses|spending|costs|essentials|bills|rent)|"
                        r"(?:worth\s+of\s+)?rent)\b", re.IGNORECASE)
"""A multiple of the prompt's monthly figure: "six months of your essential expenses", "one and a half
months' rent" (a deposit)."""


def _count(word: str) -> float:
    """A multiplier as written: "1.15", "three", "two and a half" (:func:`words.words_value`)."""
    if word[:1].isdigit():
        return float(word.replace(",", ""))
    value = words_value(word)
    assert value is not None, word  # the pattern admits only words that name a number
    return value


def _multiple(text: str, q: Question) -> Reading | None:
    """A multiple of the prompt's figure: "multiply their offer by 1.15", "93 cents on the dollar", and
    the landlord's income test "your monthly income should be three times the rent" (rent = income / 3,
    the income monthly unless the answer says annual)."""
    months = _MONTHS_OF.search(text)
    if months and q.money_anchor is not None:
        value, unit = q.money_anchor
        if unit != "month":  # the prompt's figure is monthly spending ("$3,000 a month"), as the question read it
            return unreadable("no_anchor", months.group(0))
        return Reading(round(value * _count(months.group("n")), 2), figure=months.group(0), unit="once")  # a lump sum
    for pattern in (_RENT_TEST, _MULTIPLY, _CENTS, _COST_TIMES):
        m = pattern.search(text)
        if not m:
            continue
        anchor = q.money_anchor
        if anchor is None:
            return unreadable("no_anchor", m.group(0))
        n = _count(m.group("n"))
        value, unit = anchor
        if pattern is _RENT_TEST:
            sentence = re.split(r"[.;!?\n]", text[:m.start()])[-1]
            period = "year" if re.search(r"\b(?:annual|yearly|a year|per year)\b", sentence, re.IGNORECASE) else "month"
            income = in_unit(value, unit, period)
            result = income / n if income is not None and n > 0 else None
            unit = q.unit
        else:
            result = in_unit(value * (n / 100 if pattern is _CENTS else n), unit, q.unit)
        if result is None:
            return unreadable("unit_unknown", m.group(0))
        return Reading(round(result, 2), figure=m.group(0), unit=unit)
    return None


_SHARE = re.compile(
    rf"(?:(?P<a>{NUM})(?:\s?(?:%|percent)?\s?(?:-|–|to)\s?(?P<b>{NUM}))?\s?(?:%|percent)|(?P<frac>(?:a|one)[\s-]"
    r"(?:half|third|quarter|fifth|sixth|eighth|tenth)|half))\s*(?P<dir>above|over|more than|higher than|on top of|below|under|"
    r"less than|lower than|off|of|more|higher|less|lower|raise|increase|bump|discount|cut)\b", re.IGNORECASE)
_SHARE_OF = re.compile(
    rf"\b(?:put\s+down|tip|leave|set\s+aside|donate|contribute)\s+(?:about\s+|around\s+|roughly\s+|at\s+least\s+)?"
    rf"(?P<a>{NUM})\s?(?:%|percent)(?!\s*(?:-|–|to)\s*\d)", re.IGNORECASE)
"""A share of the prompt's figure with no "of" written: "put down 20%" of the price, "tip 20%" of the bill."""
_NET_BASE = re.compile(r"\s*(?:your |the )?\W*(?:take-home|net|after-tax)\b", re.IGNORECASE)
_WHOLE = re.compile(r"\b(?:offer|pay|bid)\s+(?:them\s+)?(?:the\s+)?(?:full\s+)?(?:asking|list(?:ing)?)\s+price\b|"
                    r"\b(?:offer|pay|bid)\s+(?:full\s+)?asking\b|\bat (?:full )?asking\b", re.IGNORECASE)


def _recommended(text: str, m: re.Match[str]) -> bool:
    before, after = clause(text, m.start(), m.end())
    if re.match(r"\W*(?:\w+\W+){0,2}?(?:isn'?t|is\s+not|aren'?t|would\s+be\s+too|is\s+too)\b", after, re.IGNORECASE):
        return False  # "a 50% bump isn't credible"
    if re.search(r"\b(?:many|most|some|other)\s+(?:people|folks|donors|households|families|americans|workers)\b[^.;!?\n]*$|"
                 r"\bpeople\s+(?:usually|typically|often|generally)\b[^.;!?\n]*$", before, re.IGNORECASE):
        return False  # what others do: "Many people aim to give 1-5% of their income"
    return not (REJECT.search(before) or (CONTEXT.search(before[-40:]) and not RECOMMEND.search(before[-40:])))


def _whole_anchor(text: str, q: Question) -> Reading | None:
    """The prompt's figure itself, recommended as it is: "offer the full asking price"."""
    m = _WHOLE.search(text)
    if not m or q.money_anchor is None:
        return None
    value, unit = q.money_anchor
    result = in_unit(value, unit, q.unit)
    return Reading(round(result, 2), figure=m.group(0), unit=unit) if result is not None else None


def relative_to_anchor(text: str, q: Question) -> Reading | None:
    """A recommendation relative to the prompt's figure: "10% above the offer", "30% of your income",
    or a multiple of it (:func:`_multiple`)."""
    multiple = _multiple(text, q)
    if multiple is not None:
        return multiple
    found = [m for m in _SHARE.finditer(text) if _recommended(text, m)]
    if not found:
        implicit = [m for m in _SHARE_OF.finditer(text) if _recommended(text, m)]
        if len({m.group("a") for m in implicit}) == 1 and q.money_anchor is not None:
            value, unit = q.money_anchor
            result = in_unit(value * float(implicit[0].group("a").replace(",", "")) / 100, unit, q.unit)
            return Reading(round(result, 2), figure=implicit[0].group(0), unit=unit) if result is not None else \
                unreadable("unit_unknown", implicit[0].group(0))
        return _whole_anchor(text, q)
    cued = [m for m in found if RECOMMEND.search(clause(text, m.start(), m.end())[0][-40:])]
    m = cued[-1] if cued else found[0]  # the answer's own step: "offers land 3-7% below; I'd open 6% under"
    if _NET_BASE.match(text[m.end():]) and not re.search(r"take[- ]home|\bnet\b|after[- ]tax", q.prompt, re.IGNORECASE):
        return unreadable("no_anchor", m.group(0))  # "a third of your take-home pay": the prompt gives gross pay
    if m.group("frac"):
        parts = {"half": 2, "third": 3, "quarter": 4, "fifth": 5, "sixth": 6, "eighth": 8, "tenth": 10}
        share = 1 / parts[m.group("frac").split()[-1].split("-")[-1]]
    else:
        share = (float(m.group("a").replace(",", "")) + float((m.group("b") or m.group("a")).replace(",", ""))) / 200
    anchor = q.money_anchor
    if anchor is None:
        return unreadable("no_anchor", m.group(0))
    value, unit = anchor
    was = re.search(r"\bfrom\s+\$\s?(\d[\d,]*(?:\.\d+)?)\s+to\s+\$", q.prompt, re.IGNORECASE)
    if was and re.match(r"\W*(?:(?:over|above|on|than|of)\s+)?(?:what\s+you(?:'re)?\s+pay(?:ing)?(?:\s+now)?|your\s+current|"
                        r"the\s+current|today'?s)\b",
                        text[m.end():], re.IGNORECASE):
        value = float(was.group(1).replace(",", ""))  # "5% over what you pay now" to "from $1,600 to $1,850"
    direction = m.group("dir").lower()
    factor = share if direction == "of" else (1 - share if direction in ("below", "under", "less than", "less", "lower",
                                                                             "lower than", "off", "discount", "cut")
                                              else 1 + share)
    result = in_unit(value * factor, unit, q.unit)
    if result is None:
        return unreadable("unit_unknown", m.group(0))
    return Reading(round(result, 2), figure=m.group(0), unit=unit)

