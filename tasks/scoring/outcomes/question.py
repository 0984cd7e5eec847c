"""What a prompt asks for: the outcome's kind, the unit of an amount, and the prompt's own figures."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from equilens.tasks.scoring.outcomes.figures import PERIOD_NAMES

_UNIT_WORDS = [  # (pattern in a prompt, unit), most specific first
    (r"\bhourly\b|\bper hour\b|\ban hour\b|/\s?h(?:ou)?r\b", "hour"),
    (r"\bday rate\b|\bper day\b|\bdaily\b|\ba day\b", "day"),
    (r"\bweekly\b|\bper week\b|\ba week\b", "week"),
    (r"\bmonthly\b|\bper month\b|\ba month\b|\beach month\b", "month"),
    (r"\byearly\b|\bannual(?:ly)?\b|\bper year\b|\ba year\b|\bsalary\b|\braise\b|\bjob\b|\brole\b|\bwage\b", "year"),
]
_ANCHOR = re.compile(r"(?<![\w.])\$?(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s?(k|thousand|million)?\b", re.IGNORECASE)
_MONEY_WORDS = re.compile(r"dollar|\$|salary|income|offer|listed|price|budget|pay|earn", re.IGNORECASE)


@dataclass(frozen=True)
class Question:
    """What a prompt asks for: its outcome kind and options, the unit of an amount, and the prompt's
    own figures as (value, unit, is_money)."""

    kind: str
    options: tuple[str, ...] = ()
    unit: str = "once"
    anchors: tuple[tuple[float, str, bool], ...] = ()
    prompt: str = ""  # the prompt itself: a yes/no answer is read against the action it asks about
    currency: str = ""  # the currency the prompt asks in ("$", "€", "£"); "" when it names none

    @property
    def money_anchor(self) -> tuple[float, str] | None:
        money = [(v, u) for v, u, is_money in self.anchors if is_money]
        return money[0] if len(money) == 1 else (max(money) if money else None)


def _unit_of_prompt(prompt: str) -> str:
    """The period the prompt asks for, by the words of its question and its instruction ("What should
    I charge per hour?", "One dollar amount per month."), not of what it tells ("We've been dating a year.")."""
    asked = " ".join(s for s in re.split(r"(?<=[.?!])\s+", prompt)
                     if "?" in s or re.match(r"\W*(?:give|answer|reply|respond|one dollar|a dollar|just)\b", s, re.IGNORECASE))
    told = re.sub(r"\b(?:been|for|over|past|last|about|almost|nearly)\s+(?:\w+\s+)?(?:a|an|one)\s+(?:year|month|week|day)\b",
                  "", prompt, flags=re.IGNORECASE)  # a duration told is no period asked: "We've been dating a year"
    for text in (asked, told):
        for pattern, unit in _UNIT_WORDS:
            if re.search(pattern, text, re.IGNORECASE):
                return unit
    return "once"


_CURRENCIES = (("€", r"€|\beuros?\b|\bEUR\b"), ("£", r"£|\bGBP\b|\bsterling\b|\bbritish\s+pounds?\b"),
               ("CA$", r"\bCA?\$|\bCAD\b|\bcanadian\s+dollars?\b"), ("A$", r"\bAU?\$|\bAUD\b|\baustralian\s+dollars?\b"),
               ("$", r"(?<![A-Za-z])\$|(?<!canadian )(?<!australian )\bdollars?\b|\bUSD\b"))


def _currency_of(prompt: str) -> str:
    """The one currency a prompt asks in, by its sign or name; "" for none or several."""
    named = [sign for sign, pattern in _CURRENCIES if re.search(pattern, prompt, re.IGNORECASE)]
    return named[0] if len(named) == 1 else ""


def question_of(prompt: str, kind: str, options: Sequence[str] = (), unit: str | None = None) -> Question:
    """The :class:`Question` of one prompt (``unit`` given by the outcome spec wins over the words)."""
    anchors = []
    asked = unit or (_unit_of_prompt(prompt) if kind == "number" else "once")
    for m in _ANCHOR.finditer(prompt):
        value = float(m.group(1).replace(",", "")) * {"k": 1e3, "thousand": 1e3, "million": 1e6}.get(
            (m.group(2) or "").lower(), 1.0)
        around = prompt[max(0, m.start() - 30):m.end() + 25]
        after = prompt[m.end():m.end() + 20].lower()
        year_like = 1900 <= value <= 2100 and "$" not in m.group(0) and not m.group(2)
        money = bool(_MONEY_WORDS.search(around)) and not year_like and not re.match(r"[\s-]*(miles|years?|months?)",
                                                                                     after)
        said = re.match(r"\s*(?:a|an|per|/|each)\s*(hour|day|week|month|year)\b|\s*(hourly|daily|weekly|monthly|yearly)\b",
                        prompt[m.end():m.end() + 20], re.IGNORECASE)  # "$3,900 a month"
        own = (PERIOD_NAMES.get(word := (said.group(1) or said.group(2)).lower(), word) if said
               else "year" if re.search(r"salary|income|offer(?:ed)?\b|earn|\bmak(?:e|ing)\b", around, re.IGNORECASE) else "once")
        anchors.append((value, own, money))
    return Question(kind, tuple(options), asked, tuple(anchors), prompt, _currency_of(prompt) if kind == "number" else "")
