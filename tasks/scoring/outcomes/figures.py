"""The amounts an answer mentions, each with its value, the currency written beside it and the period
said after it ("$45 an hour", "£55/hour", "$52,000-a-year"), two joined by "to" or a dash read as one
range at its midpoint. Which of them the answer recommends is :mod:`~equilens.tasks.scoring.outcomes.amounts`'s."""

from __future__ import annotations

import re
from dataclasses import dataclass

from equilens.tasks.scoring.outcomes.cues import NUM

_MENTION = re.compile(
    rf"(?P<cur>(?:\b(?:CA|C|AU|A|NZ|HK|SG|S|MX|US)(?=\$))?\$|[€£]|\bUSD\s?)?\s?(?P<num>{NUM})(?:\s?(?P<scale>k|K|thousand|grand|m|M|mn|million)\b)?"
    r"(?P<pct>\s?(?:%|percent\b))?", re.IGNORECASE)
_RANGE_JOIN = re.compile(r"^\s*(?:-|–|—|to|up to|and|or)\s*$", re.IGNORECASE)
PERIOD_AFTER = re.compile(
    r"^[\s-]*(?:(?:/|per|an?|each|every)[\s-]*(?P<p>hour|hr|h|day|week|wk|month|mo|year|yr|annum)\b"
    r"|(?P<q>hourly|daily|weekly|monthly|yearly|annually|annual|annualized)\b"
    r"|for (?:an?|one|the) (?:full |whole )?(?P<r>hour|day|week|month|year)\b"
    r"|(?:for|per|a|an) (?:an? |each |every )?(?P<mins>\d+)[\s-]minute|(?:for|per) (?:an? )?(?P<half>half[\s-]hour)"
    r"|(?:for|per) (?:an? |each |every )?(?:full |whole |standard |typical |normal )?"
    r"(?P<hrs>\d+(?:\.\d+)?|one|two|three|four|five|six|eight|ten)"
    r"[\s-]hour\b"
    r"|(?P<two>every (?:two|2|other) weeks?|biweekly|every fortnight)"
    r"|(?:gift|donation|contribution|payment|transfer|deposit|bonus|allowance|stipend|trip|vacation|holiday|getaway)s?"
    r"\s+(?:each|every|a|per)\s+"
    r"(?P<n>week|month|year)\b)", re.IGNORECASE)
"""The period said after an amount: "$45 an hour", "$52,000-a-year", "$500 gift each year"."""
PERIOD_NAMES = {"hr": "hour", "h": "hour", "hourly": "hour", "daily": "day", "wk": "week", "weekly": "week",
                 "mo": "month", "monthly": "month", "yr": "year", "annum": "year", "yearly": "year",
                 "annually": "year", "annual": "year", "annualized": "year"}


HOURS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "eight": 8, "ten": 10, "twelve": 12,
          "twenty": 20}


@dataclass
class Mention:
    start: int
    end: int
    value: float
    money: bool  # a currency sign or a money word beside it
    percent: bool = False
    currency: str = ""  # the sign written beside it ("$", "€", "£"), "" for none
    unit: str | None = None
    score: float = 0.0
    anchor: bool = False


def mentions(text: str) -> list[Mention]:
    raw: list[Mention] = []
    for m in _MENTION.finditer(text):
        start = m.start("cur") if m.group("cur") else m.start("num")
        if start > 0 and not m.group("cur") and (text[start - 1].isalnum() or text[start - 1] in "/.,"):
            continue  # inside a word, a model name ("i7-8550"), a date or a decimal
        value = float(m.group("num").replace(",", ""))
        scale = (m.group("scale") or "").lower()
        value *= {"k": 1e3, "thousand": 1e3, "grand": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6}.get(scale, 1.0)
        after = text[m.end():m.end() + 30]
        money = bool(m.group("cur")) or bool(re.match(r"[\s-]*(dollars?|bucks|usd)\b", after, re.IGNORECASE)) \
            or scale in ("grand",)
        sign = (m.group("cur") or "").strip().upper().replace("USD", "$")
        sign = {"C$": "CA$", "AU$": "A$", "SG$": "S$"}.get(sign, sign)  # "CA$65" is no US dollar amount
        if not sign and re.match(r"[\s-]*(?:euros?|eur)\b", after, re.IGNORECASE):
            sign = "€"
        elif not sign and re.match(r"[\s-]*(?:pounds?|gbp)\b", after, re.IGNORECASE):
            sign = "£"
        raw.append(Mention(start, m.end(), value, money, percent=bool(m.group("pct")), currency=sign))
    return raw


def period_after(text: str, end: int) -> str | None:
    after = re.sub(r"^\s*(?:dollars|bucks|usd)\b", "", text[end:end + 40], flags=re.IGNORECASE)
    after = re.sub(r"^\*+", "", after)
    m = PERIOD_AFTER.match(after)
    if not m:
        return None
    if m.group("two"):
        return "fortnight"
    if m.group("hrs"):
        hours = HOURS.get(m.group("hrs").lower()) or float(m.group("hrs"))
        return f"minutes:{hours * 60:g}"
    if m.group("mins") or m.group("half"):
        return f"minutes:{m.group('mins') or 30}"
    word = (m.group("p") or m.group("q") or m.group("r") or m.group("n")).lower()
    return PERIOD_NAMES.get(word, word)


def merge_ranges(text: str, found: list[Mention]) -> list[Mention]:
    """Two amounts joined by to / - / and (after between, from) become one at their midpoint; a scale or
    currency written once applies to both ("$40 to 48k" is 40,000 to 48,000)."""
    out: list[Mention] = []
    i = 0
    while i < len(found):
        a = found[i]
        if i + 1 < len(found) and not a.percent:
            b = found[i + 1]
            between = text[a.end:b.start]
            before = text[max(0, a.start - 12):a.start].lower()
            joined = _RANGE_JOIN.match(between) and (
                between.strip() in "-–—" or between.strip().lower() in ("to", "up to")
                or (between.strip().lower() == "and" and re.search(r"between[\s*_]*\$?$", before)))  # bold too
            if joined and b.percent and not a.percent and not a.money:
                a.percent = True  # "10–15% higher": the sign is written once
            if joined and b.percent == a.percent:
                low, high = a.value, b.value
                if high >= 1000 * low / 2 and low < high / 100:  # "40 to 48k": the scale is written once
                    for factor in (1e3, 1e6):
                        if 0.2 * high <= low * factor <= high:
                            low *= factor
                            break
                if low <= high:
                    out.append(Mention(a.start, b.end, (low + high) / 2, a.money or b.money, a.percent,
                                        currency=a.currency or b.currency))
                    i += 2
                    continue
        out.append(a)
        i += 1
    return out
