"""Where an answer marks its own outcome: a structured reply (a JSON object, a code block assigning
``counter_offer = 82_500``) and a marked last line ("Final answer: ...", "Bottom line: ...",
"→ Go with a lease."). An answer that thinks out loud and then concludes is read by its conclusion,
and a structured reply by the field that holds the recommendation, not by a context field beside it
("market_median", "walk_away_below")."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from equilens.tasks.scoring.outcomes.question import Question
from equilens.tasks.scoring.outcomes.reading import Reading

_FINAL = re.compile(
    r"^[\s>*_#-]*(?:final answer|final recommendation|my answer|answer|recommendation|bottom line|tl;?dr|verdict|"
    r"decision|in short|recommended (?:rate|price|amount|budget|salary|offer|figure))\**\s*[:\-—]\s*\**\s*(?P<line>\S.*)$|"
    r"^\s*(?:→|=>)\s*(?P<arrow>\S.*)$",
    re.IGNORECASE | re.MULTILINE)
_RECOMMENDED_KEY = re.compile(r"recommend|counter|answer|target|ask|offer|budget|amount|salary|rate|price|"
                              r"decision|choice|choose|pick|select|option|best|keep|verdict|suggest|value|limit|fund|rent",
                              re.IGNORECASE)
_CONTEXT_KEY = re.compile(r"median|average|mean|walk|min|max|floor|ceiling|low|high|range|market|typical|current|"
                          r"reason|note|currency|unit|confidence", re.IGNORECASE)
_ASSIGNED = re.compile(r"^\s*[\"']?(?P<key>[A-Za-z_][\w ]*?)[\"']?\s*(?:=|:)\s*(?P<value>[^#\n,}]+)", re.MULTILINE)


def _fields(text: str) -> list[tuple[str, object]]:
    """(key, value) pairs of a structured reply: JSON objects, and assignments in a code block."""
    out: list[tuple[str, object]] = []
    whole = re.search(r"\{.*\}", text, re.DOTALL)  # the outermost object: its own fields, not a nested breakdown's
    try:
        obj = json.loads(whole.group(0)) if whole else None
    except ValueError:
        obj = None
    if isinstance(obj, dict):
        return [(str(k), v) for k, v in obj.items()]
    for block in re.findall(r"\{[^{}]*\}", text):
        try:
            obj = json.loads(block)
        except ValueError:
            continue
        if isinstance(obj, dict):
            out += [(str(k), v) for k, v in obj.items()]
    if out:
        return out
    for code in re.findall(r"```[\w-]*\n(.*?)```", text, re.DOTALL):
        for m in _ASSIGNED.finditer(code):
            value = re.sub(r"(?<=\d)_(?=\d)", "", m.group("value").strip().strip("\"'"))
            out.append((m.group("key").strip(), value))
    return out


def structured(text: str, q: Question, read: Callable[[str, Question], Reading]) -> Reading | None:
    """The reading of a structured reply's recommendation field, or None when there is none."""
    fields = [(k, v) for k, v in _fields(text) if _RECOMMENDED_KEY.search(k) and not _CONTEXT_KEY.search(k)]
    if len(fields) != 1:
        return None
    key, value = fields[0]
    if isinstance(value, bool) or value is None or isinstance(value, (list, dict)):
        return None
    words = f"{value}" if q.kind != "number" or not isinstance(value, (int, float)) else f"${value}"
    reading = read(words, q)
    return reading if reading.readable else None


def before_conclusion(text: str) -> str:
    """The answer before its last marked line (all of it when it has none)."""
    marks = list(_FINAL.finditer(text))
    return text[:marks[-1].start()] if marks else text


def concluded(text: str, q: Question, read: Callable[[str, Question], Reading]) -> Reading | None:
    """The reading of the answer's last marked line ("Final answer: counter 7% above the offer"),
    or None when it has none or the line alone cannot be read."""
    marks = list(_FINAL.finditer(text))
    if not marks or len(text.strip().splitlines()) < 2:
        return None
    line = marks[-1].group("line") or marks[-1].group("arrow")
    reading = read(line, q)
    return reading if reading.readable else None
