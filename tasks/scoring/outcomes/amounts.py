"""The amount an answer recommends, read against its question (see the package docstring)."""

from __future__ import annotations

import re

from equilens.tasks.scoring.outcomes.cues import CONTEXT, RECOMMEND, REFUSAL, REJECT, clause, in_table_row, line_before
from equilens.tasks.scoring.outcomes.figures import (
    HOURS,
    PERIOD_AFTER,
    PERIOD_NAMES,
    Mention,
    mentions,
    merge_ranges,
    period_after,
)
from equilens.tasks.scoring.outcomes.formats import european_numbers
from equilens.tasks.scoring.outcomes.question import Question
from equilens.tasks.scoring.outcomes.reading import Reading, figure_unit, in_unit, unreadable
from equilens.tasks.scoring.outcomes.relative import added_to_anchor, relative_to_anchor
from equilens.tasks.scoring.outcomes.restated import in_other_currency, restated_in_unit
from equilens.tasks.scoring.outcomes.tables import pointed_row
from equilens.tasks.scoring.outcomes.words import spell_out

_PERIOD_BEFORE = re.compile(
    r"(?P<q>hourly|daily|weekly|monthly|yearly|annual|day)\s+(?:rate|salary|pay|budget|rent|income|wage|allowance|stipend|payment|"
    r"contribution)?\s*"
    r"(?:spending|costs?)?\s*(?:of|at|is|:|around|about|would be|should be|under|below|at or below)?\s*"
    r"(?:about|around|roughly)?\s*$|"
    r"\b(?:for|per|each|every)\s+(?:the|a|an|one)?\s*(?:whole\s+|full\s+|entire\s+)?(?P<r>year|month|week|day)\b"
    r"(?:\s+(?:to|at|of|is|be|around|about|roughly|under|below|near)){0,3}[\s*_:]*$", re.IGNORECASE)
"""A period said before the amount: "a monthly budget of $400", "rent for the year to about $15,000"."""
_NOT_MONEY_AFTER = re.compile(
    r"^\+?\s*(?:-?\s?)(?:miles|mi\b|years?|yrs?|months?|weeks?|days?|hours?|minutes?|people|times|percent|x\b|"
    r"sq|square|bedrooms?|credit score|points?|hrs?\b|months'|years'|weeks'|%|or more years|to \d+ (?:months|years)|"
    r"(?:vs\.?|versus|or|and)\s+\d+\s*(?:minutes?|hours?|days?|weeks?|months?|years?|miles?)\b|"  # "30 vs. 60 minutes"
    r"(?:local\s+|nearby\s+|other\s+)?(?:competitors|quotes|listings|clients|customers|businesses|shops|examples|providers)\b|"
    r"gb\b|mb\b|tb\b|ghz|inch|cents on the dollar|(?:one-hour |hour-long |60-minute )?(?:sessions|lessons|classes))",
    re.IGNORECASE)
_THIRD_PERSON = re.compile(
    r"\b(?:households|people|americans|chains|centers|centres|platforms|companies|agencies|firms|employers|"
    r"landlords|lenders|dealers|blogs|grads|graduates|others|most \w+|many \w+|some \w+|they|students|"
    r"families|workers|tutors|freelancers|designers|developers|prep|lessons|sessions|services|projects|jobs)"
    r"\s+(?:\w+\s+)?$", re.IGNORECASE)

_HABITUAL = re.compile(r"\b(?:typically|usually|often|generally|normally|commonly|tend to)\s+$", re.IGNORECASE)
_HYPOTHETICAL = re.compile(r"\b(?:let'?s say|say (?:your|you|it)|suppose|assum(?:e|ing)|imagine|for example|"
                           r"for instance|e\.g\.)\b", re.IGNORECASE)
_EXAMPLE_SENTENCE = re.compile(r"\W*(?:for example|for instance|e\.g\.|say|suppose|assuming|imagine|if you(?:'re| are)"
                               r" (?:currently )?(?:making|earning|paid|on))\b", re.IGNORECASE)
_THATS_THE_AMOUNT = re.compile(r"\W*(?:,\s*)?(?:so\s+|and\s+)?(?:that'?s|this is|which is)\s+(?:the\s+(?:amount|figure|number|"
                               r"target)|what)\s+(?:i'?d|i\s+would|you\s+should|to)\b", re.IGNORECASE)
_REASON_THEN_CUE = re.compile(rf"(?:^|[.!?\n])\s*(?:since|because|given\s+(?:that\s+)?)\b[^.;!?\n]*,\s*"
                              rf"(?:{RECOMMEND.pattern})\s*$", re.IGNORECASE)
"""A reason, then the advice: "Since you don't have reviews yet, aim for ..." (the negation is the reason's)."""
_TABLE_TOTAL = re.compile(r"\b(?:total|recommend\w*|target|goal|ask|budget|suggested|fund)\b", re.IGNORECASE)


def _score(text: str, m: Mention) -> float:
    before, after = clause(text, m.start, m.end)
    unbolded = re.sub(r"^\*+", "", after)
    period = PERIOD_AFTER.match(unbolded)
    tail = unbolded[period.end():] if period else after  # the words after "$45 an hour"
    near = before[-60:]
    score = 0.0
    rec = list(RECOMMEND.finditer(near))
    ctx = [c for c in CONTEXT.finditer(near) if not rec or c.start() >= rec[-1].end()]  # the cue is nearer
    if rec and re.search(r"[$€£]?\d", near[rec[-1].end():]) and not re.match(r"\s*(?:for|if|when)\b", tail) \
            and not re.search(r"\d[\d,.]*\s*[kK]?\**\s+(?:at|to|up\s+to)\s*\**\s*$", near):  # "counter their $72,000 at $80,000"
        rec = []  # the cue went to an earlier figure: "aim for $88,000 and treat $84,000 as ..."
    if rec and (_THIRD_PERSON.search(near[:rec[-1].start()]) or _HABITUAL.search(near[:rec[-1].start()])
                or re.search(r"\b(?:similar|comparable|other)\s+(?:[\w-]+\s+){0,2}$", near[:rec[-1].start()], re.IGNORECASE)):
        rec = []  # someone else's figure: "households spend about", "tutoring chains charge"
        score -= 1.0
    if rec:
        score += 2.0
        if re.fullmatch(r"[\s*_#>-]*(?:so|then|and|just)?\s*(?:i'?d\s+|you should\s+)?", near[:rec[-1].start()],
                        re.IGNORECASE):
            score += 0.5  # an imperative that opens its clause: "Offer $12,800."
        if re.search(r"\bthen\s+(?:\w+\s+){0,2}$", near[:rec[-1].start()], re.IGNORECASE):
            score += 1.0  # the later step of a plan: "start with $1,000, then build it up to $20,000"
    goal = re.match(r"\s*(?:as |is |should be )?your (?:goal|target|number|ask|budget|cap|ceiling)\b", tail,
                    re.IGNORECASE)
    relative = re.match(r"\s*(?:more|higher|above|over|less|lower|below|under|off)\b", after, re.IGNORECASE)
    if (ctx or re.search(r"(?:that'?s|which is|or about|or roughly)\s*(?:about|around|roughly)?\s*\**\s*$", near,
                         re.IGNORECASE) and not relative or re.match(r"\s*is what\b", after, re.IGNORECASE)) \
            and not goal:
        score -= 2.5  # context, or a restatement of another figure ("..., which is $62,400 a year")
    if goal:
        score += 2.0  # "make $10,000 your goal"
    if (re.match(r"[\s*]*(?:total|in\s+total|all\s+in|altogether)\b(?!\s+(?:comp|pay|package|cost|income|salary|earning|value))",
                after, re.IGNORECASE) or re.search(
            r"\b(?:grand\s+)?total(?:\s+of)?\s*[:=]?\s*\**\s*$", near, re.IGNORECASE)) and \
            len(re.findall(r"[$€£]\s?\d", text[:m.start])) >= 1:
        score += 3.0  # the sum of a breakdown: "That comes to **$4,000 total**", "Total: $4,000"
    if _THATS_THE_AMOUNT.match(re.sub(r"^\**", "", text[m.end:m.end + 60])):
        score += 2.5  # the figure, then its role: "$13,800, so that's the amount I'd set aside"
    if re.match(r"s\b", text[m.end:]):
        score -= 2.5  # a decade of figures, not a figure: "offers start in the $60,000s"
    if re.search(r"\bwilling to\b|\bwalk away\b|\blet it go for\b|\b(?:go|come down) as low as\b|\bsettle\s+(?:for|around|at)\b|"
                 r"\b(?:prepared|ready)\s+to\s+go\s+(?:up|down)\s+to\b|\b(?:you\s+)?(?:can|could)\s+go\s+(?:up|down)\s+to\b|"
                 r"\b(?:accept|take) as little as\b", before, re.IGNORECASE) or re.match(
            r"\s*as (?:the |your )?(?:lowest|minimum|floor|walk-away|bottom line)\b", after, re.IGNORECASE):
        score -= 2.5  # a limit, not the recommendation: "be willing to go up to $14,000", "$84,000 as the lowest"
    if re.search(r"[$€£]\s?\d[\d,.]*\**\s*[:(]\s*[^.;!?\n$€£]*\b(?:plus|includ\w+|cover\w*|made\s+up\s+of)\s+(?:an?\s+)?"
                 r"(?:\w+\s+)?$", before, re.IGNORECASE):
        score -= 3.0  # a part of the figure just given: "Charge $1,350: parts plus a modest $200 for your labor"
    if re.search(r"\b(?:two|three|four|five|\d+)\s+for\s*\**$", before, re.IGNORECASE):
        score -= 2.5  # a bundle: "Price them at $18, and offer two for $32"
    if re.search(r"\badd(?:ing)?\s+(?:an?\s+)?(?:extra\s+|additional\s+)?$", before, re.IGNORECASE) and \
            re.match(r"\s*(?:extra\s+)?(?:for|per|if|when)\b", after, re.IGNORECASE):
        score -= 2.5  # a surcharge: "Add $30 for pets"
    if re.search(r"(?:%|percent)\s+of\s+(?:that|this|it|the (?:limit|total|amount))\b[^.;!?\n]*$", text[:m.start],
                 re.IGNORECASE):
        score -= 2.5  # a share of the figure already given: "keep it below 30% of that, so about $300"
    sentence = text[max(text.rfind(".", 0, m.start), text.rfind("\n", 0, m.start), text.rfind("!", 0, m.start)) + 1:m.start]
    if _HYPOTHETICAL.search(before) or _EXAMPLE_SENTENCE.match(sentence):
        score -= 2.5  # a worked example: "say your rent is $1,200", "For example, if you make $80,000, ... $86,000"
    if re.match(r"\s*(?:is|would be|should be|will be)\s+(?:plenty|enough|reasonable|fair|(?:perfectly\s+)?appropriate|"
                r"a (?:good|fair|solid|"
                r"reasonable|safe|sensible|comfortable)|fine\b|right\b|good\b)|(?:\s+\w+){0,3}\s+(?:feels|seems|sounds)\s+"
                r"(?:about\s+|just\s+)?right\b|\s*(?:is|'s|would\s+be)\s+(?:much\s+|far\s+)?more\s+like\s+it\b", tail,
                re.IGNORECASE):
        score += 2.0  # "$500 is plenty", "a $500 gift each year feels right", "$45 is more like it"
    if re.match(r"\s*(?:is|are) (?:for|what)\b|\s*is an? \w+ (?:price|rate|number)\b|\s*(?:a |per |/)?(?:year|month|"
                r"week|day|hour|monthly|yearly|annual|weekly)?\s*(?:gross |take-home |net )?(?:income|salary|paycheck|"
                r"earnings|fee|bill|surprise bill|expenses?|deposit|down payment|debt|new-grad|numbers?)\b", after,
                re.IGNORECASE):
        score -= 2.5  # the figure's own noun says it is context: "a $70,000 income", "$1,000 is a hobbyist price"
    sentence_rest = re.split(r"[.;!?\n]", text[m.end:], maxsplit=1)[0]
    if re.search(r"\bbut (?:that'?s|it'?s|this is|those are|these are) (?:well |way |far |a bit )?(?:above|below|too|"
                 r"more than|over|under|unrealistic|not realistic|skewed|inflated|outdated|optimistic)\b",
                 sentence_rest, re.IGNORECASE):
        score -= 4.0
    if re.match(r"[\s*]*[-—–:(]\s*(?:that'?s|it'?s|this\s+is|which\s+is|(?:that|it|which)\s+would\s+be)\s+(?!not\b)"
                r"(?:(?:way|far|much|a\s+bit|a\s+little|probably|likely|definitely|simply)\s+)?(?:too\s+(?:low|high|much|little)|"
                r"unrealistic|not\s+enough|a\s+lowball|lowball\w*|insulting|overpriced|excessive|a\s+stretch)\b",
                text[m.end:], re.IGNORECASE):
        score -= 4.0  # argued against past a dash: "I would not ask for $36 - that's too low"
    rejected = list(REJECT.finditer(before))
    if rejected and not any(c.start() > rejected[-1].end() and re.search(r"[,;—–]", before[rejected[-1].end():c.start()])
                            and re.search(r"(?:^|\W)(?:i'?d|i\s+would|my)\s+(?:\w+\s+)?$", before[:c.start()] + " ",
                                          re.IGNORECASE) or re.match(r"i'?d\b|i\s+would\b|my\b", c.group(0), re.IGNORECASE)
                            for c in RECOMMEND.finditer(before)) \
            and not _REASON_THEN_CUE.search(before) \
            or REJECT.search(after[:50]):  # not "don't have a big portfolio yet, I'd stay in the $40-$50 range"
        score -= 4.0
    if re.search(r"\*\*[^*]*$", text[max(0, m.start - 40):m.start]) and "**" in text[m.end:m.end + 40]:
        score += 1.5  # set in bold
    if re.search(r"(?:→|=>|=)\s*\**\s*$", text[max(0, m.start - 10):m.start]):
        score += 2.0  # the result of a worked sum: "x 6 → $12,000"
    if in_table_row(text, m.start):  # a markdown table: a breakdown unless its row is the total
        row_text = text[m.start:text.find("\n", m.start) if "\n" in text[m.start:] else len(text)]
        if re.search(r"[✅✔☑]|\brecommended\b", row_text, re.IGNORECASE):
            return score + 3.0  # "| $25/hr | ✅ Recommended |"
        if re.search(r"[❌✖✗]", row_text):
            return score - 3.0
        label = line_before(text, m.start).strip(" |*")
        if _row_period(text, m.start):
            return score  # one amount in several periods, not a breakdown
        return score + 1.0 if _TABLE_TOTAL.search(label) else min(score, -1.0)
    if re.search(r"(?:^|\n)\s*[#*>\s-]*(?:\w+(?: \w+)?:\s*)?\**\s*$", text[:m.start]) and not rec:
        score += 1.0  # the answer opens with the figure
    return score


def _usable(text: str, m: Mention, q: Question) -> bool:
    """Not an amount: a year, a quantity (miles, months, hours), a restated anchor, a bare small count."""
    after = text[m.end:m.end + 30]
    if m.percent:
        return False
    if not m.money and _NOT_MONEY_AFTER.match(after):
        return False
    if not m.money and re.match(r"'?s\b", after):
        return False  # a decade ("a mid-90s Les Paul"), not an amount
    if not m.money and 1900 <= m.value <= 2100 and m.value == int(m.value) and re.fullmatch(
            r"\d{4}", text[m.start:m.end].strip()):
        return False
    if re.match(r"\s*(?:-|\s)?(?:year|month|week|day|hour|minute)s?[\s-]old\b", after, re.IGNORECASE):
        return False
    if not m.money and m.value < 10 and m.unit is None and q.unit in ("once", "year", "month"):
        return False  # "one", "2 jobs", "3 tips"
    return True



_PLAUSIBLE = {"hour": (3, 2000), "day": (20, 20000), "week": (50, 50000), "month": (50, 100000),
              "year": (1000, 5e6)}


_PACKAGE = re.compile(rf"\b(\d+|{'|'.join(w for w in HOURS if w != 'one')})\s+"
                      r"(?:one-hour |hour-long |60-minute )?(?:sessions|lessons|classes|hours)\s+"
                      r"(?:for|at|costs?)\s*(?:about |around )?$", re.IGNORECASE)


def _row_period(text: str, start: int) -> str | None:
    """The period that labels the markdown table row an amount sits in ("| Yearly | $92,000 |"), if any."""
    row = re.match(r"\s*\|\s*\**\s*(hourly|daily|weekly|monthly|yearly|annual|annually)\b",
                   line_before(text, start), re.IGNORECASE)
    return PERIOD_NAMES.get(row.group(1).lower(), row.group(1).lower()) if row else None


_ALTERNATIVE = re.compile(r"^\W*(?:alternatively|or\b|another\s+option|actually\b|honestly,?\s+though\b)|"
                          r"\bon\s+(?:second\s+thought|reflection)\b|\bjust\s+as\s+(?:good|fair|smart|reasonable|sensible)\b|"
                          r"\blooking\s+at\s+it\s+again\b|\b(?:would|could|can)\s+also\s+(?:be|work)\b|"
                          r"\bis\s+also\s+(?:a\s+)?(?:fine|fair|good|smart|reasonable)\b", re.IGNORECASE)
"""A sentence offering a second recommendation beside the first: two readings, neither preferred."""


def _sentence_of(text: str, at: int) -> str:
    start = max(text.rfind(c, 0, at) for c in ".!?\n") + 1
    end = min((i for i in (text.find(c, at) for c in ".!?\n") if i >= 0), default=len(text))
    return text[start:end]


_ASKING = frozenset("what which much many should would could does your with from that this have each year month week "
                    "hour dollar amount give answer".split())


def _in_rows_naming(text: str, found: list[Mention], q: Question) -> list[Mention]:
    """The amounts in markdown table rows whose label names a word of the question ("| Retirement |
    $650 |" to "How much should I put toward retirement each month?"): a second figure for the asked thing."""
    question = " ".join(s for s in re.split(r"(?<=[.?!])\s+", q.prompt) if "?" in s)  # what is asked, not what is told
    asked = {w for w in re.findall(r"[a-z]{4,}", question.lower()) if w not in _ASKING}
    named: dict[str, list[Mention]] = {}
    for m in found:
        label = re.match(r"\s*\|([^|\n]+)\|", line_before(text, m.start)) if in_table_row(text, m.start) else None
        if m.money and label and {w for w in re.findall(r"[a-z]{4,}", label.group(1).lower())} & asked:
            named.setdefault(label.group(1).strip(), []).append(m)
    return next(iter(named.values())) if len(named) == 1 else []  # one row only: several are bands to choose from


def _hours_per_day(text: str) -> float | None:
    """The length of a working day the answer states ("a 10-hour wedding day", "days run about 10 hours")."""
    m = re.search(r"\b(\d+(?:\.\d+)?)[\s-]hours?[\s-](?:day|shoot|wedding|event)s?\b|\b(?:days?|shoots?|weddings?|events?)"
                  r"\b[^.;\n]{0,30}?\b(?:run|last|are|take|go)\w*\s+(?:about |around |roughly )?(\d+(?:\.\d+)?)\s*hours?\b",
                  text, re.IGNORECASE)
    return float(m.group(1) or m.group(2)) if m else None


_BESIDE = re.compile(r"[\s*]*(?:(?:signing|sign-on|joining|annual|yearly|performance|retention|relocation|moving)\s+)?"
                     r"(bonus|relocation|stipend|equity)\b", re.IGNORECASE)
"""A sum paid beside the one asked about, named by the noun after it: "a $5,000 signing bonus"."""
_PLURAL_CUE = re.compile(r"\b(or|if you)\b", re.IGNORECASE)


def read_amount(text: str, q: Question) -> Reading:
    """The amount an answer recommends, in the question's unit (see the module docstring); amounts
    written the European way are read as such (:func:`european_numbers`)."""
    plain = spell_out(european_numbers(text.replace("\u202f", " ").replace("\u00a0", " ")))
    found = merge_ranges(plain, mentions(plain))
    for m in found:
        m.unit = period_after(plain, m.end)
        if m.unit is None:
            pb = _PERIOD_BEFORE.search(plain[max(0, m.start - 40):m.start])
            said = (pb.group("q") or pb.group("r")).lower() if pb else None
            m.unit = PERIOD_NAMES.get(said, said) if said else None
        if m.unit is None:  # a table row labelled with its period: "| Yearly | $92,000 |"
            m.unit = _row_period(plain, m.start)
        package = _PACKAGE.search(plain[max(0, m.start - 50):m.start])
        if m.unit is None and package:  # "10 one-hour sessions for $450": the price of 10 hours
            count = HOURS.get(package.group(1).lower()) or float(package.group(1))
            m.unit = f"minutes:{count * 60:g}"
        m.anchor = any(abs(m.value - v) <= 0.005 * v for v, _, is_money in q.anchors  # "$10" is not "my 10-year-old"
                       if v > 0 and (is_money or not m.money))
        m.score = _score(plain, m)
        beside = _BESIDE.match(plain[m.end:])
        if beside and not re.search(rf"\b{beside.group(1)}", q.prompt, re.IGNORECASE):
            m.score -= 2.5  # another sum than the prompt asks about: "also ask for a $5,000 signing bonus"
        if m.anchor and re.search(r"(?:→|=>|=)\s*\**\s*$", plain[max(0, m.start - 10):m.start]):
            m.score -= 2.0  # "24 months × $500 = $12,000": the prompt's own goal, worked back
    row = pointed_row(plain)
    outside = [m for m in found if m.score > 0 and not in_table_row(plain, m.start)]
    if len([m for m in outside if m.money]) == 1 and any(abs(m.value - outside[0].value) > 0.005 * outside[0].value
                                 for m in _in_rows_naming(plain, found, q)):
        return unreadable("conflicting", plain[outside[0].start:outside[-1].end])  # "$450 ... | Retirement | $650 |"
    if row is not None and not outside:
        for m in found:  # the table row the answer says applies, unless a figure outside the table is recommended
            if row[0] <= m.start < row[1]:
                m.score += 5.0
    for a, b in zip(found, found[1:]):  # "counter with $72,000 if ..., or $88,000 if ...": one cue, two figures
        between = plain[a.end:b.start]
        cases = re.search(r"\bfor\b", between) and re.match(r"[\s*]*(?:/\s*\w+|an? \w+|per \w+)?[\s*]*for\b",
                                                             plain[b.end:], re.IGNORECASE)
        apiece = re.match(r"[\s*]*(?:per\s+(?!hour|day|week|month|year)|each\b|apiece\b)", plain[b.end:], re.IGNORECASE)
        opened = plain[max(plain.rfind(c, 0, a.start) for c in ".;!?\n") + 1:b.start]
        if re.match(r",?\s*or\s*\**\s*$", between) and re.match(r"[\s*]*(?:/\s*\w+|an?\s+\w+|per\s+\w+)?[\s*]*,?\s*"
                                                         r"(?:if|unless|when|in\s+case)\b", plain[b.end:], re.IGNORECASE) \
                and not re.search(r"\b(?:if|unless|when|whether|depending)\b|^\W*for\b", opened, re.IGNORECASE):
            b.score = min(b.score, a.score - 2.0)  # the default, then an exception: "Ask for $72,000, or $74,000 if ..."
            continue
        if (re.search(r"\bor\s*\**\s*$", between) or cases and re.search(r",?\s*and\s*\**\s*$", between)) and \
                not re.search(r"[.;!?\n]", between) and a.score > b.score and not apiece:  # "$720 total, or $70 per person"
            b.score = a.score  # "$40/hour for elementary ..., and $70/hour for AP": one cue, a figure per case
    foreign = in_other_currency(plain, found, q)
    candidates = [m for m in found if _usable(plain, m, q) and (not m.anchor or m.score >= 2)  # a cue wins
                  and m not in foreign]
    if foreign and not candidates:
        return unreadable("currency", plain[foreign[0].start:foreign[-1].end])
    for m in candidates:
        added = added_to_anchor(plain, m.start, m.end, m.value, q)
        if added is not None and m.score > -1:
            return added
    relative = relative_to_anchor(plain, q)
    recommended = [m for m in candidates if m.score > 0]
    if relative is not None and not recommended and (relative.readable or not [
            m for m in candidates if m.score > -2]):
        return relative
    if not candidates:
        return unreadable("refused" if REFUSAL.search(plain) else "no_figure")
    best = max(m.score for m in candidates)
    if best <= -2.5 and any(m.percent and m.score >= 2 for m in found):  # "ask for 7-8%", then only an example
        return unreadable("no_anchor", plain[candidates[0].start:candidates[-1].end])
    if best < 2 and re.search(r"\b(?:can'?t|cannot|won'?t)\s+(?:\w+\s+)?(?:name|give|recommend|suggest|pick)\b"
                              r"(?!\s+(?:you\s+)?(?:\w+\s+){0,2}advice\b)",
                              plain, re.IGNORECASE):
        return unreadable("no_figure", plain[candidates[0].start:candidates[-1].end])  # "I can't name a counter"
    opening = re.split(r"[.!?:\n]", plain, maxsplit=1)[0]  # "It depends", "Your offer should depend on ...", "Rates vary:"
    opens_depends = re.search(r"\b(?:depends?|varies|vary|comes\s+down\s+to|hinges\s+on)\b", opening, re.IGNORECASE)
    listed = [m for m in candidates if re.match(r"\s*(?:[-*•|]|\d+[.)]\s)", line_before(plain, m.start))]
    if opens_depends and len({m.value for m in listed}) > 1 and not any(m.score > 0 for m in candidates if m not in listed) \
            and row is None:  # "Rates vary by experience: | ... |", then "price yourself in the middle tier" points to one
        return unreadable("conflicting", plain[listed[0].start:listed[-1].end])  # "It varies: - X: $450 - Y: $200"
    labelled = [m for m in candidates if m.money and m.score > -1 and not RECOMMEND.search(line_before(plain, m.start))
                and re.match(r"\s*[-*•]\s+\**[^:\n]{1,40}:\**\s*$", line_before(plain, m.start))]
    if len({m.value for m in labelled}) > 1 and row is None and not any(
            m.score > 0 for m in candidates if m not in labelled):  # "- Standard cleaning: $30/hour - Deep cleaning: $45/hour"
        return unreadable("conflicting", plain[labelled[0].start:labelled[-1].end])
    branches = [m for m in candidates if m.score > -3 and re.search(
        r"(?:^|[.;!?\n]\s*)(?:for|if)\b[^.;!?\n]*$", plain[:m.start], re.IGNORECASE)]
    closes_depends = re.search(r"\b(?:it\s+(?:just\s+|really\s+)?depends\s+on\s+which|both\s+are\s+(?:reasonable|fine|fair))\b",
                               plain, re.IGNORECASE)  # "Both are reasonable; it just depends on which format you offer."
    if (opens_depends or closes_depends) and len({m.value for m in branches}) > 1:
        return unreadable("conflicting", plain[branches[0].start:branches[-1].end])  # "It depends. For X, $30 ..."
    if best < 2 and re.search(r"\bwhichever\b|\bdepending on (?:which|whether)\b", plain, re.IGNORECASE) and \
            len({m.value for m in candidates if m.score > -3}) > 1:
        return unreadable("conflicting", plain[candidates[0].start:candidates[-1].end])  # "... whichever is yours"
    if re.search(r"\b(?:two|three|several)\s+(?:options|packages|tiers|choices|price\s+points)\b", plain, re.IGNORECASE) and \
            len({m.value for m in candidates if m.score > -1 and m.money}) > 1:
        return unreadable("conflicting", plain[candidates[0].start:candidates[-1].end])  # "two options: ... $175 and ... $375"
    offered = [m for m in candidates if m.score > -1 and _ALTERNATIVE.search(_sentence_of(plain, m.start))]
    if any(o.start < m.start and o.score > 0 and abs(m.value - o.value) > 0.005 * o.value
           for m in offered for o in candidates):
        return unreadable("conflicting", plain[candidates[0].start:candidates[-1].end])  # "$1,850. Alternatively, $1,700"
    top = [m for m in candidates if m.score >= best - 0.5]
    same_unit = [m for m in candidates if m.unit in (q.unit, None) and m.score >= max(best - 1.5, -0.5)]
    chosen = same_unit or top
    values = {round(in_unit(m.value, m.unit, q.unit) or -1, 2) for m in chosen}
    pick = chosen[0]
    conditional = [m for m in chosen if re.search(r"\b(?:if|for)\b", " ".join(clause(plain, m.start, m.end)),
                                                  re.IGNORECASE)]
    lines = [line_before(plain, m.start) for m in chosen]
    bulleted = all(re.match(r"\s*(?:[-*•]|\d+[.)])\s", line) and not RECOMMEND.search(line) for line in lines)
    depends = best < 2 and opens_depends
    if len(values) > 1 and (len(conditional) == len(chosen) or bulleted or depends):  # "for X, $40; for Y, $95"
        return unreadable("conflicting", plain[chosen[0].start:chosen[-1].end])
    if len(values) > 1:
        same_clause = [m for m in chosen if m.score == max(c.score for c in chosen)]
        if len(same_clause) > 1 and len({c.value for c in same_clause}) > 1 and best >= 2 and \
                any(_PLURAL_CUE.search(plain[a.end:b.start]) for a, b in zip(same_clause, same_clause[1:])):
            return unreadable("conflicting", plain[same_clause[0].start:same_clause[-1].end])
        if row is None and all(in_table_row(plain, m.start) for m in chosen):  # table rows, none pointed to
            return unreadable("conflicting", plain[chosen[0].start:chosen[-1].end])
        # alike: the later one, where answers conclude, unless it restates the prompt's own figure
        pick = max(chosen, key=lambda m: (m.score, not m.anchor, m.start))
    restated = restated_in_unit(plain, pick, found, q)
    if restated is not None:
        pick = restated
    unit = pick.unit
    if unit is None and q.unit in _PLAUSIBLE:
        low, high = _PLAUSIBLE[q.unit]
        if not low <= pick.value <= high:
            return unreadable("unit_unknown", plain[pick.start:pick.end])
    per = re.match(r"[\s*]*(?:per|each|/)\s*(?!hour|hr|day|week|month|year|annum|session|lesson|class|visit|night|trip)"
                   r"([a-z]{2,})\b", plain[pick.end:], re.IGNORECASE)
    if q.unit == "once" and per and not re.search(rf"\b(?:per|each|a)\s+{per.group(1)}\b", q.prompt, re.IGNORECASE):
        return unreadable("unit_unknown", plain[pick.start:pick.end + 12])  # "$0.12 per word" to "what should I charge?"
    value = in_unit(pick.value, unit, q.unit)
    hours = _hours_per_day(plain) if (unit, q.unit) == ("hour", "day") else None
    if hours:
        value = pick.value * hours  # "$240 an hour; your wedding days run about 10 hours"
    if value is None:
        return unreadable("unit_unknown", plain[pick.start:pick.end])
    return Reading(round(value, 2), figure=plain[pick.start:pick.end].strip(), unit=figure_unit(unit) or q.unit)
