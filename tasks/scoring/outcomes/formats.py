"""Numbers written the European way, rewritten in the form the amount reader reads everywhere else:
a currency sign after the number, dots grouping thousands, a comma before the cents, spaces
grouping thousands beside a currency (:func:`european_numbers`)."""

from __future__ import annotations

import re

_CURRENCY_AFTER = re.compile(r"(?<![\d.,$€£])(\d[\d.,]*\d|\d)\s?(€|\$|£|EUR\b|euros?\b|USD\b)", re.IGNORECASE)
_DOT_THOUSANDS = re.compile(r"(?<![\d.,])(\d{1,3}(?:\.\d{3})+)(?:,(\d{1,2}))?(?![\d.,]*\d)")
_SPACE_THOUSANDS = re.compile(r"(?<![\d.,])(\d{1,3}(?: \d{3})+)(?![\d])")


def european_numbers(text: str) -> str:
    """``text`` with amounts written the European way in the form read everywhere else: a currency sign
    or the word euro after the number moves before it, its dots read as thousands and its comma as
    the decimal point ("72 000 €" -> "€72000", "288.000 $" -> "$288000", "42,50 $" -> "$42.50"); thousands grouped by spaces
    beside a currency ("€ 72 000") or by dots beside a euro sign or with decimal commas ("€72.000",
    "1.250,50 €") become plain digits, and a euro amount's decimal comma a point ("45,50 €"). A dotted
    figure with no euro sign and no decimal comma ("2.500") is left alone: it may be a decimal."""
    def spaced(m: re.Match) -> str:
        around = text[max(0, m.start() - 3):m.end() + 4]
        return m.group(1).replace(" ", "") if re.search(r"[$€£]|EUR|USD", around) else m.group(0)

    text = _SPACE_THOUSANDS.sub(spaced, text)

    def sign_first(m: re.Match) -> str:  # a sign after the number is the European way: its dots group, its comma decimals
        number, sign = m.group(1), m.group(2)
        sign = {"$": "$", "£": "£", "usd": "$"}.get(sign.lower(), "€")
        if re.fullmatch(r"\d{1,3}(?:\.\d{3})+(?:,\d{1,2})?", number):
            number = number.replace(".", "").replace(",", ".")
        elif re.fullmatch(r"\d+,\d{1,2}", number):
            number = number.replace(",", ".")
        return f"{sign}{number}"

    text = _CURRENCY_AFTER.sub(sign_first, text)

    def dotted(m: re.Match) -> str:
        euro = text[max(0, m.start() - 2):m.start()].strip().endswith("€")
        if not (euro or m.group(2)):
            return m.group(0)
        return m.group(1).replace(".", "") + (f".{m.group(2)}" if m.group(2) else "")

    text = _DOT_THOUSANDS.sub(dotted, text)
    text = re.sub(r"(?<=[$€£])(\d{1,3}(?:\.\d{3})+)(?![\d,]|\.\d)", lambda m: m.group(1).replace(".", ""), text)  # "$81.000"
    return re.sub(r"€(\d+),(\d{1,2})(?![\d,])", r"€\1.\2", text)  # a decimal comma: "€45,50"
