"""Markdown tables in an answer: the row its own words point to ("that's the row that applies to
you", "the second band", "the top tier", "| Full day | $2,800 ← start here |")."""

from __future__ import annotations

import re

_POINTER = re.compile(r"\b(?:that'?s the (?:row|band|line|one)|(?:row|band|line|one) that applies|applies to you|"
                      r"(?:the )?(?:top|first|bottom|last) (?:row|line|one)|your \w+(?: \w+)? is the\b|"
                      r"assuming you|if you(?:'re| are| work| live)|in your case|for you|your situation|you fall|"
                      r"(?:place|put) yourself|you'?d (?:be|fit|sit)|start in|row|band|tier|bracket)\b",
                      re.IGNORECASE)


def _first_amount(row: str) -> float | None:
    m = re.search(r"\$\s?(\d[\d,]*(?:\.\d+)?)", row)
    return float(m.group(1).replace(",", "")) if m else None


def pointed_row(text: str) -> tuple[int, int] | None:
    """(start, end) of the markdown table row the answer's own words point to ("Assuming you work at a
    community hospital, that's the row that applies to you"): the one row whose label the text
    outside the table names, beside a pointer; None when no row, or several, are named so."""
    rows = [(m.start(), m.end(), m.group(1).strip(" *_")) for m in re.finditer(r"^\s*\|([^|\n]+)\|[^\n]*$", text, re.M)]
    labels = [(s, e, label) for s, e, label in rows if label and not re.fullmatch(r"[-: ]+", label)][1:]  # no header
    if len(labels) < 2:
        return None
    arrowed = [(s, e) for s, e, _ in labels if re.search(r"[←⬅👈]|\bstart here\b", text[s:e], re.IGNORECASE)]
    if len(arrowed) == 1:  # "| Full day | $2,800 ← start here |"
        return arrowed[0]
    outside = re.sub(r"^\s*\|[^\n]*$", "", text, flags=re.M)
    position = re.search(r"\b(top|first|second|third|fourth|fifth|middle|bottom|last)\W+(?:row|line|band|tier|bracket)\b",
                         outside, re.IGNORECASE)  # a row named by its place points to it by itself
    if not position and not _POINTER.search(outside):
        return None
    if position:  # "the top row is the one that applies to you", "start in the **second band**"
        at = {"top": 0, "first": 0, "second": 1, "third": 2, "fourth": 3, "fifth": 4}.get(position.group(1).lower(), -1)
        if position.group(1).lower() in ("top", "bottom") and not re.match(r"\W+(?:row|line)", outside[position.end(1):]):
            values = [_first_amount(text[s:e]) for s, e, _ in labels]  # the top band: the highest, wherever it stands
            if None in values:
                return None
            ranked = sorted(range(len(labels)), key=lambda i: values[i] or 0.0)
            at = ranked[-1] if position.group(1).lower() == "top" else ranked[0]
        if position.group(1).lower() == "middle":  # the middle of an odd number of rows; of an even one, none
            if len(labels) % 2 == 0:
                return None
            at = len(labels) // 2
        return labels[at][:2] if at < len(labels) else None
    heads = [(s, e, re.split(r"\s*[(/,]", label)[0]) for s, e, label in labels]  # "Mid-level (3–6 yrs)": mid-level
    low = outside.lower()
    named = [(s, e) for s, e, head in heads if head.strip() and
             re.search(r"\b" + r"[\s-]+".join(map(re.escape, re.split(r"[\s-]+", head.lower().strip()))) + r"\b", low)]
    return named[0] if len(named) == 1 else None
