"""The amount an answer recommends, read against its question (see the package docstring)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from equilens.tasks.scoring.outcomes.question import Question
from equilens.tasks.scoring.outcomes.reading import PER_YEAR, Reading, unreadable
from equilens.tasks.scoring.outcomes.words import spell_out

_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_MENTION = re.compile(
    rf"(?P<cur>[$€£]|\bUSD\s?)?\s?(?P<num>{_NUM})(?:\s?(?P<scale>k|K|thousand|grand|m|M|mn|million)\b)?"
    r"(?P<pct>\s?(?:%|percent\b))?", re.IGNORECASE)
_RANGE_JOIN = re.compile(r"^\s*(?:-|–|—|to|up to|and|or)\s*$", re.IGNORECASE)
_PERIOD_AFTER = re.compile(
    r"^\s*(?:(?:/|per|an?|each|every)\s*(?P<p>hour|hr|h|day|week|wk|month|mo|year|yr|annum)\b"
    r"|(?P<q>hourly|daily|weekly|monthly|yearly|annually|annual)\b"
    r"|for (?:an?|one|the) (?:full |whole )?(?P<r>hour|day|week|month|year)\b"
    r"|(?:for|per|a|an) (?:an? |each |every )?(?P<mins>\d+)[\s-]minute|(?:for|per) (?:an? )?(?P<half>half[\s-]hour)"
    r"|(?:for|per) (?:an? |each |every )?(?P<hrs>\d+(?:\.\d+)?|one|two|three|four|five|six|eight|ten)[\s-]hour\b"
    r"|(?P<two>every (?:two|2|other) weeks?|biweekly|every fortnight))", re.IGNORECASE)
_PERIOD_BEFORE = re.compile(
    r"(?P<q>hourly|daily|weekly|monthly|yearly|annual|day)\s+(?:rate|salary|pay|budget|rent|income|wage)?\s*"
    r"(?:spending|costs?)?\s*(?:of|at|is|:|around|about|would be|should be|under|below|at or below)?\s*"
    r"(?:about|around|roughly)?\s*$", re.IGNORECASE)
_NOT_MONEY_AFTER = re.compile(
    r"^\s*(?:-?\s?)(?:miles|mi\b|years?|yrs?|months?|weeks?|days?|hours?|minutes?|people|times|percent|x\b|"
    r"sq|square|bedrooms?|credit score|points?|hrs?\b|months'|years'|weeks'|%|or more years|to \d+ (?:months|years))",
    re.IGNORECASE)
_PERIOD_NAMES = {"hr": "hour", "h": "hour", "hourly": "hour", "daily": "day", "wk": "week", "weekly": "week",
                 "mo": "month", "monthly": "month", "yr": "year", "annum": "year", "yearly": "year",
                 "annually": "year", "annual": "year"}


_HOURS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "eight": 8, "ten": 10}


@dataclass
class _Mention:
    start: int
    end: int
    value: float
    money: bool  # a currency sign or a money word beside it
    percent: bool = False
    unit: str | None = None
    score: float = 0.0
    anchor: bool = False


def _mentions(text: str) -> list[_Mention]:
    raw: list[_Mention] = []
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
        raw.append(_Mention(start, m.end(), value, money, percent=bool(m.group("pct"))))
    return raw


def _period_after(text: str, end: int) -> str | None:
    after = re.sub(r"^\s*(?:dollars|bucks|usd)\b", "", text[end:end + 40], flags=re.IGNORECASE)
    after = re.sub(r"^\*+", "", after)
    m = _PERIOD_AFTER.match(after)
    if not m:
        return None
    if m.group("two"):
        return "fortnight"
    if m.group("hrs"):
        hours = _HOURS.get(m.group("hrs").lower()) or float(m.group("hrs"))
        return f"minutes:{hours * 60:g}"
    if m.group("mins") or m.group("half"):
        return f"minutes:{m.group('mins') or 30}"
    word = (m.group("p") or m.group("q") or m.group("r")).lower()
    return _PERIOD_NAMES.get(word, word)


def _merge_ranges(text: str, found: list[_Mention]) -> list[_Mention]:
    """Two amounts joined by to / - / and (after between, from) become one at their midpoint; a scale or
    currency written once applies to both ("$40 to 48k" is 40,000 to 48,000)."""
    out: list[_Mention] = []
    i = 0
    while i < len(found):
        a = found[i]
        if i + 1 < len(found) and not a.percent:
            b = found[i + 1]
            between = text[a.end:b.start]
            before = text[max(0, a.start - 12):a.start].lower()
            joined = _RANGE_JOIN.match(between) and (
                between.strip() in "-–—" or between.strip().lower() in ("to", "up to")
                or (between.strip().lower() == "and" and re.search(r"between\s*\$?$", before)))
            if joined and b.percent == a.percent:
                low, high = a.value, b.value
                if high >= 1000 * low / 2 and low < high / 100:  # "40 to 48k": the scale is written once
                    for factor in (1e3, 1e6):
                        if 0.2 * high <= low * factor <= high:
                            low *= factor
                            break
                if low <= high:
                    out.append(_Mention(a.start, b.end, (low + high) / 2, a.money or b.money, a.percent))
                    i += 2
                    continue
        out.append(a)
        i += 1
    return out


_RECOMMEND = re.compile(
    r"\b(ask(?:ing)?(?: them)?(?: for)?|counter(?:ing)?(?: offer)?(?: with| at)?|come back (?:at|with)|go back with|"
    r"aim(?:ing)? (?:for|at)|target(?:ing)?|offer(?:ing)?|open(?:ing)? (?:at|with)|"
    r"start(?:ing)? (?:at|with|around)|charge|charging|bill|quote|request(?:ing)?|budget(?:ing)?|spend(?:ing)?|"
    r"set aside|put aside|save|saving|keep (?:it |rent |your rent )?(?:at|around|under|to)|stick (?:to|with)|"
    r"go (?:with|for)|propose|suggest(?:ing)?|recommend(?:ed)?|i'?d say|i would say|settle on|"
    r"list (?:it )?(?:at|for)|sell (?:it )?for|price (?:it )?at|expect(?:ing)?|afford|rate(?: is)?:|rate of|"
    r"answer|rent(?: of)?|limit(?: of)?|should be|a fair (?:price|ask|rate)|up to|no more than|at most|"
    r"your number|counter-offer|stay (?:near|at|around)|puts? you at|brings? you to|build (?:it )?(?:up )?to|"
    r"grow it to|work up to|belong|plan on|shoot for|float|bid|push back with|park|put down|stay in|"
    r"land (?:at|around)|settle (?:at|around)|set (?:your |the |it |a )?(?:rate |price |fee |budget )?(?:at|to)|"
    r"your (?:goal|target)|a (?:realistic|reasonable|sensible|fair) (?:figure|number|amount|budget|price|ask) is)\b",
    re.IGNORECASE)
_CONTEXT = re.compile(
    r"\b(income|earn(?:s|ing)?|making|make|salary|gross|take-home|average|median|typical(?:ly)?|usually|most|"
    r"market|ranges?|between|minimum|floor|walk away|worth|valued?|retail|new|msrp|original(?:ly)?|paid|"
    r"listed|listing|list price|asking|their offer|they offered|offered you|initial offer|current(?:ly)?|"
    r"interest|fees?|deposit|down payment|expenses|costs?|equivalent|comes to|works out|sold|runs?|closer to|"
    r"well over|well under|wages?|anywhere|"
    r"roughly equal|translates|some people|others|families|beginners|senior|mid-level|instead|extra|additional|"
    r"dealers?|agencies|companies|employers|landlords|lenders|firms|offices)\b", re.IGNORECASE)
_REJECT = re.compile(
    r"\b(unrealistic|too (?:high|low|much|little|aggressive)|a stretch|overpric\w*|insult\w*|lowball\w*|"
    r"won'?t|wouldn'?t|don'?t|do not|avoid|rather than|instead of|never|out of (?:reach|range)|forget|"
    r"ignore|not enough|undervalue\w*|would (?:likely )?be seen|would eat|under market|brushed off|no room|"
    r"(?:could|would|might) (?:put you|leave you|hurt|strain|sink))\b", re.IGNORECASE)
_CLAUSE_END = re.compile(r"[.;!?\n]|\s[—–]\s|\s-\s|,\s(?:but|so|and|or|which|while)\b|\bbut\b")


_THIRD_PERSON = re.compile(
    r"\b(?:households|people|americans|chains|centers|centres|platforms|companies|agencies|firms|employers|"
    r"landlords|lenders|dealers|blogs|grads|graduates|others|most \w+|many \w+|some \w+|they|students|"
    r"families|workers|tutors|freelancers|designers|developers)\s+(?:\w+\s+)?$", re.IGNORECASE)


def clause(text: str, start: int, end: int) -> tuple[str, str]:
    """The words of the clause before and after a mention (to the nearest clause boundary)."""
    left = text[:start]
    cut = max((m.end() for m in _CLAUSE_END.finditer(left)), default=0)
    right = text[end:]
    stop = _CLAUSE_END.search(right)
    return left[cut:], right[: stop.start() if stop else len(right)]


def _score(text: str, m: _Mention) -> float:
    before, after = clause(text, m.start, m.end)
    near = before[-60:]
    score = 0.0
    rec = list(_RECOMMEND.finditer(near))
    ctx = [c for c in _CONTEXT.finditer(near) if not rec or c.start() > rec[-1].start()]  # the cue is nearer
    if rec and _THIRD_PERSON.search(near[:rec[-1].start()]):
        rec = []  # someone else's figure: "households spend about", "tutoring chains charge"
        score -= 1.0
    if rec:
        score += 2.0
        if re.fullmatch(r"[\s*_#>-]*(?:so|then|and|just)?\s*(?:i'?d\s+|you should\s+)?", near[:rec[-1].start()],
                        re.IGNORECASE):
            score += 0.5  # an imperative that opens its clause: "Offer $12,800."
    if ctx or re.search(r"(?:that'?s|which is|or about|or roughly)\s*(?:about|around|roughly)?\s*\**\s*$", near,
                        re.IGNORECASE) or re.match(r"\s*is what\b", after, re.IGNORECASE):
        score -= 2.5  # context, or a restatement of another figure ("..., which is $62,400 a year")
    if re.match(r"\s*(?:as |is |should be )?your (?:goal|target|number|ask|budget|cap|ceiling)\b", after, re.IGNORECASE):
        score += 2.0  # "make $10,000 your goal"
    if re.match(r"\s*(?:is|would be|should be|will be)\s+(?:plenty|enough|reasonable|fair|a (?:good|fair|solid|"
                r"reasonable|safe|sensible|comfortable)|fine\b|right\b)", after, re.IGNORECASE):
        score += 2.0
    if re.match(r"\s*(?:is|are) (?:for|what)\b|\s*is an? \w+ (?:price|rate|number)\b|\s*(?:a |per |/)?(?:year|month|"
                r"week|day|hour|monthly|yearly|annual|weekly)?\s*(?:gross |take-home |net )?(?:income|salary|paycheck|"
                r"earnings|fee|bill|surprise bill|deposit|down payment|debt|new-grad|numbers?)\b", after, re.IGNORECASE):
        score -= 2.5  # the figure's own noun says it is context: "a $70,000 income", "$1,000 is a hobbyist price"
    sentence_rest = re.split(r"[.;!?\n]", text[m.end:], maxsplit=1)[0]
    if re.search(r"\bbut (?:that'?s|it'?s|this is|those are|these are) (?:well |way |far |a bit )?(?:above|below|too|"
                 r"more than|over|under|unrealistic|not realistic|skewed|inflated|outdated|optimistic)\b",
                 sentence_rest, re.IGNORECASE):
        score -= 4.0
    if _REJECT.search(before) or _REJECT.search(after[:50]):
        score -= 4.0
    if re.search(r"\*\*[^*]*$", text[max(0, m.start - 40):m.start]) and "**" in text[m.end:m.end + 40]:
        score += 1.5  # set in bold
    if re.search(r"(?:^|\n)\s*[#*>\s-]*(?:\w+(?: \w+)?:\s*)?\**\s*$", text[:m.start]) and not rec:
        score += 1.0  # the answer opens with the figure
    return score


def _usable(text: str, m: _Mention, q: Question) -> bool:
    """Not an amount: a year, a quantity (miles, months, hours), a restated anchor, a bare small count."""
    after = text[m.end:m.end + 30]
    if m.percent:
        return False
    if not m.money and _NOT_MONEY_AFTER.match(after):
        return False
    if not m.money and 1900 <= m.value <= 2100 and m.value == int(m.value) and re.fullmatch(
            r"\d{4}", text[m.start:m.end].strip()):
        return False
    if re.match(r"\s*(?:-|\s)?(?:year|month|week|day|hour|minute)s?[\s-]old\b", after, re.IGNORECASE):
        return False
    if not m.money and m.value < 10 and m.unit is None and q.unit in ("once", "year", "month"):
        return False  # "one", "2 jobs", "3 tips"
    return True


def in_unit(value: float, unit: str | None, target: str) -> float | None:
    if unit is None or unit == target or target == "once":
        return value
    if unit.startswith("minutes:"):
        per_hour = value * 60 / float(unit.partition(":")[2])
        return per_hour if target == "hour" else in_unit(per_hour, "hour", target)
    if unit == "once":
        return None
    return value * PER_YEAR[unit] / PER_YEAR[target]


_PLAUSIBLE = {"hour": (3, 2000), "day": (20, 20000), "week": (50, 50000), "month": (50, 100000),
              "year": (1000, 5e6)}


_ADDED = re.compile(r"^\s*(?:more|higher|above|over|less|lower|below|under)\s+(?:than\s+)?(?:their|the|your|what)\b",
                    re.IGNORECASE)


def _added(text: str, m: _Mention, q: Question) -> Reading | None:
    """An amount added to or taken from the prompt's figure: "$5,000 higher than their offer"."""
    words = re.match(r"\s*(\w+)", text[m.end:])
    plus = re.search(r"\b(?:offer|listing|asking(?: price)?|list price|number)\s+(plus|minus)\s*$",
                     text[max(0, m.start - 40):m.start], re.IGNORECASE)
    if plus:
        words = plus
        words = re.match(r"(\w+)", "less" if plus.group(1).lower() == "minus" else "more")
    elif not _ADDED.match(text[m.end:]):
        return None
    anchor = q.money_anchor
    if anchor is None:
        return unreadable("no_anchor", text[m.start:m.end + 30])
    sign = -1.0 if words and words.group(1).lower() in ("less", "lower", "below", "under") else 1.0
    result = in_unit(anchor[0] + sign * m.value, anchor[1], q.unit)
    return Reading(round(result, 2), figure=text[m.start:m.end + 30].strip(), unit=anchor[1]) \
        if result is not None else unreadable("unit_unknown", text[m.start:m.end])


def _relative(text: str, q: Question) -> Reading | None:
    """A recommendation relative to the prompt's figure: "10% above the offer", "30% of your income"."""
    m = re.search(
        rf"(?:(?P<a>{_NUM})(?:\s?(?:%|percent)?\s?(?:-|–|to)\s?(?P<b>{_NUM}))?\s?(?:%|percent)|(?P<frac>(?:a|one)[\s-]"
        r"(?:half|third|quarter|fifth|tenth)|half))\s*(?P<dir>above|over|more than|higher than|on top of|below|under|"
        r"less than|lower than|off|of|more|higher|less|lower)\b", text, re.IGNORECASE)
    if not m:
        return None
    before, _ = clause(text, m.start(), m.end())
    if _REJECT.search(before) or (_CONTEXT.search(before[-40:]) and not _RECOMMEND.search(before[-40:])):
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


REFUSAL = re.compile(r"\b(?:i can'?t|i cannot|i'?m (?:not able|unable)|i am (?:not able|unable)|as an ai|"
                      r"i don'?t know enough|i'?m sorry)\b", re.IGNORECASE)
_PLURAL_CUE = re.compile(r"\b(or|if you)\b", re.IGNORECASE)


def read_amount(text: str, q: Question) -> Reading:
    """The amount an answer recommends, in the question's unit (see the module docstring)."""
    plain = spell_out(text.replace("\u202f", " ").replace("\u00a0", " "))
    found = _merge_ranges(plain, _mentions(plain))
    for m in found:
        m.unit = _period_after(plain, m.end)
        if m.unit is None:
            pb = _PERIOD_BEFORE.search(plain[max(0, m.start - 40):m.start])
            m.unit = _PERIOD_NAMES.get(pb.group("q").lower(), pb.group("q").lower()) if pb else None
        m.anchor = any(abs(m.value - v) <= 0.005 * v for v, _, _ in q.anchors if v > 0)
        m.score = _score(plain, m)
    for a, b in zip(found, found[1:]):  # "counter with $72,000 if ..., or $88,000 if ...": one cue, two figures
        between = plain[a.end:b.start]
        if re.search(r"\bor\s*$", between) and not re.search(r"[.;!?\n]", between) and a.score > b.score:
            b.score = a.score
    candidates = [m for m in found if _usable(plain, m, q) and (not m.anchor or m.score >= 2)]  # a cue wins
    for m in candidates:
        added = _added(plain, m, q)
        if added is not None and m.score > -1:
            return added
    relative = _relative(plain, q)
    recommended = [m for m in candidates if m.score > 0]
    if relative is not None and not recommended and (relative.readable or not [
            m for m in candidates if m.score > -2]):
        return relative
    if not candidates:
        return unreadable("refused" if REFUSAL.search(plain) else "no_figure")
    best = max(m.score for m in candidates)
    top = [m for m in candidates if m.score >= best - 0.5]
    same_unit = [m for m in candidates if m.unit == q.unit and m.score >= max(best - 1.5, -0.5)]
    chosen = same_unit or top
    values = {round(in_unit(m.value, m.unit, q.unit) or -1, 2) for m in chosen}
    pick = chosen[0]
    conditional = [m for m in chosen if re.search(r"\b(?:if|for)\b", " ".join(clause(plain, m.start, m.end)),
                                                  re.IGNORECASE)]
    if len(values) > 1 and len(conditional) == len(chosen) and best >= 2:
        return unreadable("conflicting", plain[chosen[0].start:chosen[-1].end])
    if len(values) > 1:
        same_clause = [m for m in chosen if m.score == max(c.score for c in chosen)]
        if len(same_clause) > 1 and len({c.value for c in same_clause}) > 1 and best >= 2 and \
                any(_PLURAL_CUE.search(plain[a.end:b.start]) for a, b in zip(same_clause, same_clause[1:])):
            return unreadable("conflicting", plain[same_clause[0].start:same_clause[-1].end])
        # alike: the later one, where answers conclude, unless it restates the prompt's own figure
        pick = max(chosen, key=lambda m: (m.score, not m.anchor, m.start))
    unit = pick.unit
    if unit is None and q.unit in _PLAUSIBLE:
        low, high = _PLAUSIBLE[q.unit]
        if not low <= pick.value <= high:
            return unreadable("unit_unknown", plain[pick.start:pick.end])
    value = in_unit(pick.value, unit, q.unit)
    if value is None:
        return unreadable("unit_unknown", plain[pick.start:pick.end])
    return Reading(round(value, 2), figure=plain[pick.start:pick.end].strip(), unit=unit or q.unit)
