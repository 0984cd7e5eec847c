"""Numbers written in words, turned into digits where they are amounts ("sixty-five thousand dollars")."""

from __future__ import annotations

import re

_SMALL = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen".split())}
_TENS = {w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
_SCALES = {"hundred": 100, "thousand": 1_000, "grand": 1_000, "million": 1_000_000}
_NUMBER_WORD = "|".join([*_SMALL, *_TENS, *_SCALES, "a", "and", "half"])
_WORD_RUN = re.compile(rf"\b(?:{_NUMBER_WORD})(?:[\s-]+(?:{_NUMBER_WORD}))*\b", re.IGNORECASE)


def words_value(run: str) -> float | None:
    """"sixty-five thousand" -> 65000, "twelve hundred" -> 1200, "one hundred and five thousand"
    -> 105000; None when the run holds no number or only one bare small word ("one", "a")."""
    toks = [t for t in re.split(r"[\s-]+", run.lower()) if t and t != "and"]
    if not toks or not any(t in _SMALL or t in _TENS or t in _SCALES for t in toks if t != "a"):
        return None
    total, current, seen = 0.0, 0.0, False
    for i, t in enumerate(toks):
        nxt = toks[i + 1] if i + 1 < len(toks) else ""
        if t == "a" and nxt == "half":
            continue
        if t == "half":
            current += 0.5  # "eleven and a half thousand"
        elif t == "a":
            current = current or (1.0 if nxt in _SCALES else 0.0)
        elif t in _SMALL or t in _TENS:
            current += _SMALL.get(t, 0) + _TENS.get(t, 0)
            seen = True
        elif t == "hundred":
            current = (current or 1.0) * 100  # "a hundred bucks" is an amount on its own
            seen = True
        else:
            total += (current or 1.0) * _SCALES[t]
            current = 0.0
            seen = True
    return total + current if seen else None


def spell_out(text: str) -> str:
    """Numbers written in words replaced by digits where they are amounts (they hold a scale word or
    are followed by dollars/bucks): "sixty-five thousand dollars" -> "65000 dollars". Two amounts
    joined by "and" stay two ("eight hundred and twelve hundred dollars"); "one hundred and five
    thousand" is one."""
    text = _SPOKEN_HUNDREDS.sub(_spoken_hundreds, text)

    def amount(run: str, end: int) -> str:
        if run[:1].isdigit():  # written out already: the lower end of a range sharing its scale
            return run
        tail = ""
        trailing = re.search(r"(?:[\s-]+(?:a|and))+$", run, re.IGNORECASE)
        if trailing:  # "four hundred a month": the "a" belongs to the period
            run, tail = run[:trailing.start()], trailing.group(0)
        toks = {t.lower() for t in re.split(r"[\s-]+", run)}
        after = text[end:end + 12].lower()
        if not (toks & set(_SCALES) or re.match(r"\s*(dollars?|bucks|an hour|a month|a year|per|k\b)", after,
                                               re.IGNORECASE)):
            return run + tail
        lead = re.match(r"(?:(?:a|and)[\s-]+)+(?!half)", run, re.IGNORECASE)
        value = words_value(run[lead.end():] if lead else run)
        if value is None:
            return run + tail
        scale_only = toks <= set(_SCALES) | {"a", "and"}
        if scale_only and "a" not in toks:
            return run + tail  # "thousand" alone ("thousands of dollars") is no amount
        return f"{int(value) if value == int(value) else value}{tail}"

    def numbers(m: re.Match[str]) -> str:
        parts = re.split(r"([\s-]+and[\s-]+)", m.group(0), flags=re.IGNORECASE)  # runs, then the "and"s between
        out, piece = [], parts[0]
        for joint, run in zip(parts[1::2], parts[2::2], strict=True):
            if re.match(r"(?:a[\s-]+)?half\b", run, re.IGNORECASE):  # "eleven and a half thousand": one amount
                piece += joint + run
            elif 0 < _top_scale(run) <= _top_scale(piece):  # a scale no larger than one said before: a new amount
                out += [piece, joint]
                piece = run
            elif _top_scale(piece) == 0 and _top_scale(run) > 0 and (low := words_value(piece)) is not None \
                    and low == int(low) and _top_scale(run) > 100:  # "between two and three thousand": the scale is shared
                out += [str(int(low * _top_scale(run))), joint]
                piece = run
            else:
                piece += joint + run
        out.append(piece)  # each amount is read against what follows the whole run ("... dollars")
        return "".join(part if i % 2 else amount(part, m.end()) for i, part in enumerate(out))
    return _WORD_RUN.sub(numbers, text)


def _top_scale(run: str) -> int:
    """The largest scale word of a run of number words ("twelve hundred" -> 100), 0 for none."""
    return max((_SCALES.get(t, 0) for t in re.split(r"[\s-]+", run.lower())), default=0)


_SPOKEN_HUNDREDS = re.compile(
    rf"\b({'|'.join(w for w in _SMALL if w != 'zero')})[\s-]({'|'.join(_TENS)})(?:[\s-](one|two|three|four|five|six|"
    r"seven|eight|nine))?(?=\s+(?:a|an|per|each|every)\s+(?:hour|day|week|month|year)\b|\s+(?:dollars|bucks)\b)",
    re.IGNORECASE)


def _spoken_hundreds(m: re.Match[str]) -> str:
    """Hundreds as they are said aloud: "three-fifty a month" is 350, "twelve-seventy-five" 1275."""
    return str(_SMALL[m.group(1).lower()] * 100 + _TENS[m.group(2).lower()] + _SMALL.get((m.group(3) or "").lower(), 0))


def number_words(number: int) -> str | None:
    """A whole number below 100 as words, spelled with a space or a hyphen (16 -> ``sixteen``, 25 ->
    ``twenty[- ]five``) as a regex; None outside that range."""
    if not 0 <= number < 100:
        return None
    if number < 20:
        return next(w for w, i in _SMALL.items() if i == number)
    tens = next(w for w, i in _TENS.items() if i == number - number % 10)
    return tens if number % 10 == 0 else f"{tens}[- ]{number_words(number % 10)}"
