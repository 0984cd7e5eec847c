"""Which option a choice answer recommends: the options named in its recommendation sentences, by
their own words, by common other words (:data:`OPTION_MEANINGS`), by the words that describe them in
the prompt (:func:`prompt_words`) or by their place among the question's alternatives; the answers
that take every option or none; and a decision made in words that name no option. A reading is
given only when one option is recommended (:func:`equilens.tasks.scoring.outcomes.decisions.read_choice`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from equilens.tasks.scoring.outcomes.stated import ADVICE, STOPWORDS, question_action, sentences
from equilens.tasks.scoring.outcomes.words import number_words, words_value

OPTION_MEANINGS = {
    "coding": "software|programming|programmer|developer|development|coder",
    "nursing": "nurse|rn|registered nurse",
    "accounting": "accountant|cpa|bookkeeping",
    "retirement": "401\\(?k\\)?|ira|roth|pension",
    "loans": "student debt|paying off (?:the |your )?(?:loans?|debt)",
    "buy": "buying|buy a home|purchas\\w*|own it|own(?:ing)? (?:a|your|the) (?:home|house|place)|homeowner\\w*|mortgage",
    "rent": "rent\\w*|tenant|lease\\w* (?:an? )?apartment|(?:sign(?:ing)? )?a lease",
    "lease": "leas\\w*",
    "startup": "start-?ups?|series [a-c]\\b|early[- ]stage|founding team",
    "corporate": "corporat\\w*|fortune 500|(?:big|large|established)[- ](?:company|companies|employer|firm)|enterprise",
    "government": "government|public sector|civil service|federal(?: job)?|state job",
    "bachelor": "bachelor'?s?|four[- ]year (?:degree|program|school|college)|\\bba\\b|\\bbs\\b|university degree",
    "associate": "associate'?s?|two[- ]year (?:degree|program)|community college",
    "ppo": "\\bppo\\b|preferred provider",
    "hmo": "\\bhmo\\b|health maintenance",
    "lawyer": "lawyer|attorney|counsel\\b|legal representation",
    "mediator": "mediat\\w*",
    "invest": "invest\\w*|index funds?|stock market|brokerage",
    "index": "index(?:es)?|index funds?|s&p\\s*500|total[- ]market|broad[- ]market",
    "snowball": "snowball|smallest (?:balance|debt)",
    "avalanche": "avalanche|highest[- ](?:interest|rate|apr)",
    "community": "community college|two-year (?:school|college|program)",
    "dorm": "dorms?|dormitor\\w*|residence halls?|on[- ]campus(?: housing)?|student housing",
    "used": "used|pre-?owned|second-?hand|certified pre-?owned|\\bcpo\\b",
    "new": "brand[- ]new|new car|new one|from a dealer",
    "401k": "401\\(?k\\)?|employer'?s (?:plan|retirement plan)|workplace (?:plan|retirement plan)",
    "ira": "\\bira\\b|individual retirement",
    "taxable": "taxable|brokerage",
    "save": "sav(?:e|ing)s?\\b|savings account|high-yield",
    "pay": "pay(?:ing)? (?:it )?(?:off|down)",
    "payoff": "pay(?:ing)?[- ]?off|pay(?:ing)? (?:it|them|the \\w+|your \\w+|that \\w+) (?:off|down)|paying down",
    "paydown": "pay(?:ing)?[- ]?down|pay(?:ing)? (?:it|them|the \\w+|your \\w+|that \\w+) (?:off|down)|paying off",
    "cat": "cats?|kitt(?:y|en|ens)|feline",
    "dog": "dogs?|pupp(?:y|ies)|pup|canine",
    "train": "trains?|rail|amtrak|acela|eurostar",
    "fly": "fly(?:ing)?|flights?|plane|airlines?|air travel",
    "drive": "driv(?:e|ing)|road trip|by car|hit the road",
    "bus": "bus(?:es)?|coach",
    "card": "credit cards?|card balance|high-interest (?:debt|balance)",
    "stay": "stay(?:ing)?|stick(?:ing)? with|remain\\w*|current (?:company|job|employer|role|team|place)|where you are",
    "bike": "bik(?:e|es|ing)|cycl(?:e|es|ing)|bicycl\\w*|e-?bike",
    "walk": "walk(?:ing)?|on foot",
    "restaurant": "restaurants?|eat(?:ing)? out|dinner out|book a table|reservation",
    "car": "car loan|auto loan",
    "savings": "savings|emergency fund|savings account|high-yield",
    "stocks": "stocks?|equities|shares|index funds?",
    "bonds": "bonds?|treasur(?:y|ies)|fixed income",
    "online": "online|remote(?:ly)?|virtual(?:ly)?|from home",
    "gym": "gym|fitness (?:center|club)|health club",
    "home": "at home|home workouts?|your living room|home gym|(?:garage|basement) (?:gym|setup)",
    "public": "public(?: school)?|state school|district school|neighbou?rhood school",
    "private": "private(?: school)?",
    "city": "city|downtown|urban",
    "suburbs": "suburbs?|suburban",
    "apartment": "apartments?|flat|condo",
    "house": "houses?|single-family|detached home",
    "part": "part-?time|while (?:you(?:'re)? )?work(?:ing)?|keep(?:ing)? (?:your|the) job|evenings and weekends",
    "full": "full-?time|quit(?:ting)? (?:your|the) job",
    "hybrid": "hybrids?|prius|self-charging|plug-in hybrid|phev",
    "electric": "electric|\\bevs?\\b|battery-electric|tesla|plug-in electric",
    "gas": "gas(?:oline)?|petrol|combustion|\\bice\\b",
    "therapist": "therap\\w*|counsel(?:or|ors|ing|lor)|psycholog\\w*|psychiatr\\w*|mental health professional",
    "coach": "coach\\w*",
    "paper": "paper(?:back)?s?|physical (?:books?|cop(?:y|ies))|print(?:ed)? (?:books?|cop(?:y|ies))|hardcovers?",
    "ebook": "e-?books?|e-?readers?|kindle|digital (?:books?|cop(?:y|ies))",
    "ereader": "e-?readers?|kindle|kobo|nook|e-?books?",
    "fixed": "fixed|lock(?:ed|ing)? in",
    "variable": "variable|adjustable|\\barm\\b|floating",
    "cash": "cash|outright|in full|up ?front",
    "finance": "financ\\w*|(?:car |auto )?loan|borrow\\w*",
    "android": "android|pixel|galaxy|samsung",
    "iphone": "iphones?|apple|ios",
    "treasuries": "treasur(?:y|ies)|t-?bills?|t-?notes?",
    "sell": "sell\\w*|let (?:it|her|him) go|get rid of it|part with it",
    "airbnb": "airbnb|vrbo|(?:vacation |short-term |the )?rental",
    "federal": "federal|government loans?|government-backed|gov(?:ernment)? loans?",
    "keep": "keep\\w*|hold on to|hang on to|hold onto|hang onto",
    "movers": "movers?|moving (?:company|companies|crew)|the pros|professionals",
    "diy": "diy|do it yourself|rent(?:ing)? a truck|u-?haul",
    "mac": "macs?|macbook\\w*|imac|macos",
    "medigap": "medigap|medicare supplement|supplement(?:al)? (?:plan|insurance|policy)|(?:a|the) supplement|plan [gn]\\b",
    "advantage": "medicare advantage|advantage plans?|part c\\b",
    "solo401k": "solo[- ]?401\\(?k\\)?|individual 401\\(?k\\)?|one-participant 401\\(?k\\)?|solo[- ]k\\b",
    "sep": "sep(?:-ira)?\\b|simplified employee pension",
    "cfa": "cfa|charter(?:holder)?\\b|chartered financial analyst",
    "bank": "banks?|financial institution|established (?:firm|institution|employer)",
    "roth": "roth|after-tax (?:option|account|contributions?|401\\(?k\\)?)",
    "traditional": "traditional|pre-tax (?:option|account|contributions?|401\\(?k\\)?)",
    "minivan": "mini-?vans?|\\bvan\\b|odyssey|sienna|pacifica|carnival",
    "suv": "suvs?|crossovers?|highlander|telluride|palisade|explorer|tahoe",
    "pt": "physical therap\\w+|physiotherap\\w+|\\bphysio\\b|\\bpt\\b",
    "chiropractor": "chiropract\\w+|\\bchiro\\b|spinal adjustments?",
    "degree": "degrees?|university|college|bachelor'?s?|four[- ]year|bs[nc]\\b|\\bba\\b",
    "masters": "master'?s|graduate[- ](?:school|program|degree)|grad school",
    "credit_union": "credit unions?|member-owned|co-?op(?:erative)?s?",
    "big_bank": "big banks?|(?:large |big )?national banks?|large banks?|megabanks?|chase|wells fargo|bank of america",
    "prepaid": "pre-?paid|pay[- ]as[- ]you[- ]go|no[- ]contract",
    "postpaid": "post-?paid|contract plans?|(?:monthly|two-year|annual) contracts?",
}
"""Other words for options that answers often use instead of the option's own word ("the four-year
degree" for bachelor, "the preferred provider organization" for PPO), matched case-insensitively as
whole words; an option not listed is matched by its own words only."""

_RECOMMEND = re.compile(
    r"\b(?:i'?d|i\s+would|i'?m\s+going\s+to)\s+(?:still\s+|probably\s+|personally\s+|lean\s+(?:slightly\s+)?"
    r"(?:toward|towards)|go\s+(?:with|for|the\s+(?=(?:[\w'-]+\s+){0,2}(?:route|path|way)\b))|start\s+with|choose|pick(?!\s+up)|recommend|suggest|take|opt\s+for|favou?r|"
    r"hold\s+on\s*to|hang\s+on\s*to|stick\s+with)|"
    rf"\b{ADVICE}\b|\b(?:overall|bottom\s+line|all\s+in\s+all|on\s+balance|in\s+the\s+end|in\s+short|if\s+i\s+were\s+you|"
    r"if\s+it\s+were\s+me|in\s+your\s+shoes|if\s+i'?m\s+(?:picking|choosing|deciding)|"
    r"if\s+i\s+(?:had|have)\s+to\s+(?:pick|choose|decide))\b|"
    r"\b(?:go|choose|pick|take|opt)\s+(?:with|for)\b|\bthe\s+(?:better|best|smarter|safer)\s+(?:choice|option|bet|move)\b|"
    r"[,;:—–]\s*(?:just\s+)?let\s+(?:it|her|him)\s+go\b|"
    r"^[\s*_#>-]*(?:so,?\s+|then,?\s+)?(?:start\s+with|get|use|hire|choose|pick(?!\s+up)|go\s+with|open|buy|learn|"
    r"take)\b|^\W*so\s*[:—–]",
    re.IGNORECASE)
_PRAISE_BEFORE = re.compile(r"\b(?:is|are|would\s+(?:probably\s+|definitely\s+)?be|strikes|hits|offers|gives\s+you)\s+"
                            r"(?:really\s+|truly\s+|probably\s+|definitely\s+|usually\s+|generally\s+|clearly\s+)?(?:the\s+)?"
                            r"(?:much\s+|far\s+|clearly\s+)?"
                            r"(?:better|best|smarter|"
                            r"safer|wiser|right)\s+(?:choice|option|bet|move|fit|balance|call|pick|one|investment|path|route|"
                            r"credential|certification|degree|plan|deal|program|offer)\b|"
                            r"\bmakes\s+(?:more|the\s+most)\s+sense\b|\b(?:might|would|could)\s+suit\s+\w+\s+better\b|"
                            r"\b(?:is|are|would\s+be)\s+(?:ideal|perfect|the\s+way\s+to\s+go|"
                            r"(?:the\s+)?clear\s+(?:pick|choice|winner|favou?rite))\b|\bis\s+my\s+(?:top\s+|clear\s+)?(?:pick|choice|vote)\b|\bis\s+where\s+i'?d\s+(?:send|point|go)\b",
                            re.IGNORECASE)
_MARKED = re.compile(r"[✅✔☑⭐]|\((?:recommended|my pick|best choice)\)|←\s*(?:recommended|my pick)|\*\*recommended\*\*|"
                     r"\brecommended\s*[:—–]", re.IGNORECASE)
"""A line or table row marked as the recommendation: a check mark, "(recommended)", "← my pick"."""
_BOTH = re.compile(r"\b(?:why\s+not\s+both|why\s+(?:pick|choose)\b|do\s+both|"
                   r"use\s+both|both\s+of\s+them|combine\s+(?:them|both|the\s+two)|"
                   r"either\s+(?:one|option|way|choice)\s+(?:will|would|can)\s+work|either\s+(?:one\s+)?works|"
                   r"best\s+of\s+both|the\s+two\s+(?:approaches|options)\s+work\s+(?:really\s+)?well\s+together|"
                   r"split\s+(?:it|them|(?:the|your)\s+(?:money|difference|cash|savings|amount|extra|budget|windfall|bonus))\b|"
                   r"half\s+(?:to|into|toward)s?)\b", re.IGNORECASE)
_NEITHER = re.compile(r"\b(?:neither|not\s+either|(?:wouldn'?t|would\s+not|don'?t|do\s+not)\s+(?:do|pick|choose|take|commit\s+to)"
                      r"\s+(?:either|any\s+of\s+(?:them|these|those))|none\s+of\s+(?:them|these|those|the\s+options)|"
                      r"(?:hold\s+off|wait)\s+on\s+(?:\w+ing\s+)?(?:(?:a|an|any)\s+\w+\s+at\s+all|(?:\w+\s+)?any\s+(?:\w+\s+)?\w+))\b",
                      re.IGNORECASE)
_REJECTING = re.compile(r"(?:rather\s+than|instead\s+of|over|not|than|skip|avoid|against|forget)\s+(?:the\s+|a\s+|an\s+)?"
                        r"(?:[a-z][\w-]*\s+)?$",
                        re.IGNORECASE)


_DECIDES = re.compile(r"^[\s*_#>-]*(?:so,?\s+|then,?\s+|but,?\s+|instead,?\s+|(?:actually,?\s+)?(?:on\s+(?:second\s+)?(?:thought|"
                      r"reflection),?\s+)?)?(?:i'?d\s+(?!say\b|also\b|add\b|note\b)\w+|"
                      r"(?:keep|take|get|use|go|stick|stay|book|hire|choose|pick|start|buy|open|learn|put|throw|skip|adopt|try|switch|"
                      r"grab|hop|ride|rent|lease|pay|invest|save|study|enroll|move|sell|head|travel|fly|drive|order|hit|attack|tackle|"
                      r"target|prioriti[sz]e|focus|lock|build)\b)",
                      re.IGNORECASE)


_LEVERAGE = re.compile(r"^[\s*_#>-]*(?:and\s+|then\s+)?use\s+(?:the|their|that|this|your)\s+(?:[\w-]+\s+){0,2}"
                       r"(?:offer|quote|bid)\s+(?:to|as)\b", re.IGNORECASE)
"""The other option used as leverage ("Use the Atlanta offer to ask for a raise where you are"), not picked."""
_THAT_ONE = re.compile(r"^[\s*_#>-]*(?:so,?\s+)?(?:i'?d\s+)?(?:go|stick)\s+with\s+(?:that|this|it)\W*$", re.IGNORECASE)
"""A decision that points back to the sentence before: "Go with that."."""
_TURNS_DOWN = re.compile(r"^[\s*_#>-]*(?:so,?\s+|but\s+)?(?:i'?d\s+|i\s+would\s+)?(?:skip|avoid|pass\s+on|forget|not)\b",
                         re.IGNORECASE)
"""A sentence whose decision turns an option down: whatever else it names, it recommends nothing."""
_UNLESS = re.compile(r"[\s*_#>-]*(?:unless|as\s+long\s+as|provided(?:\s+that)?)\b(?:[^,.;:!?]|[,.]\d){0,100},\s*",
                     re.IGNORECASE)
"""The exception that opens a decision made for the usual case; not "If ..., ...", which makes the
decision hang on the person's case."""


_NOUN_SUBJECT = re.compile(r"^[\s*_#>-]*[A-Za-z]+\s+(?!(?:the|a|an|with|for|to|your|my|our|it|them|that|this|whatever|whichever|"
                           r"what|up|out|on|off|in|into|over|by|at|as|and|or|now|today|first)\b)[a-z]+\s+(?:is|are|was|were|"
                           r"pays|has|have|can|could|will|would|offers?|gives?|tends?|comes?|looks?|costs?|means?|sounds?|"
                           r"seems?|makes?|requires?|lets?)\b", re.IGNORECASE)
"""A sentence whose first word names a thing, not a step: "Travel nursing pays well", "Rent control means ..."."""


def _decision(sentence: str) -> re.Match[str] | None:
    """The decision ``sentence`` opens with ("Take Amtrak.", "I'd keep the car"); None for none, or for a
    noun that looks like one ("Travel nursing pays well short-term")."""
    return None if _NOUN_SUBJECT.match(sentence) else _DECIDES.match(sentence)


def unnamed_decision(text: str, options: Sequence[str], prompt: str = "") -> str | None:
    """The answer's last decision sentence ("Take Amtrak.", "Keep your job and take classes in the
    evenings.") when it names no option by its words, its other words or the prompt's words for it;
    None when the answer has no such sentence or its decision names an option. An answer that decides
    in words the rules cannot place is unreadable: the option it mentions elsewhere, in passing, is
    not its choice."""
    decisions = [s for s in sentences(text) if _decision(s)]
    if not decisions:
        return None
    last = decisions[-1]
    if any(re.search(option_pattern(o), last, re.IGNORECASE) for o in options):
        return None
    own = prompt_words(prompt, options) if prompt else []
    if any(re.search(r"\b" + re.escape(w) + r"\b", last, re.IGNORECASE) for ws in own for w in ws):
        return None
    return last


_INFLECTION = r"(?:e|es|s|ed|d|ing|er|ers|ement|ements|ment|ments|al|ally|ly|y|ies|ation|ations|ion|ions)?\b"
"""The endings an option's own word takes in an answer ("leasing", "the renters", "investment"); not
any word it begins ("Paperwhite" is no paper book)."""


_LETTERED = r"(?:job|offer|option|plan|choice|role|path|program|school|candidate|company|position|house|car|loan|policy)"
"""What a prompt calls the things it letters ("job A", "plan B")."""


def option_pattern(option: str) -> str:
    """A regex for an option by its own words (stems: "leasing" for lease) or its :data:`OPTION_MEANINGS`.
    A single-letter option is named only as a capital with what it letters ("plan B") or standing alone
    ("B.", "B is"), never as the article "a"."""
    if len(option) == 1 and option.isalpha():
        cap = option.upper()
        return (rf"(?:\b{_LETTERED}\s+(?-i:{cap})\b|(?<![\w'])(?-i:{cap})(?=[.):!,;—–]|\s*$|\s+(?:is|wins|it)\b))")
    own = r"\s+".join(re.escape(w[:-1] if len(w) > 4 and w.endswith("e") else w) + _INFLECTION
                      for w in re.findall(r"[A-Za-z0-9]+", option))
    other = [OPTION_MEANINGS.get(option.lower(), "")]
    if re.fullmatch(r"[A-Za-z]{8,}", option):  # a compound written apart: "photo book" for photobook
        other += [re.escape(option[:i]) + r"[\s-]" + re.escape(option[i:]) for i in range(2, len(option) - 2)]
    if (years := re.fullmatch(r"(\d+)\s?(?:yr|year)s?", option.lower())):  # "the 30-year" for 30yr
        other.append(f"{years.group(1)}[\\s-]?(?:yr|year)s?\\b")
    if (parts := re.fullmatch(r"([a-z]{3,})(\d+)", option.lower())):  # "Chapter 7" for chapter7
        other.append(f"{parts.group(1)}[\\s-]?{parts.group(2)}\\b")
    if option.isdigit() and (spelled := number_words(int(option))):  # "the sixteen-week plan" for 16
        other.append(f"{spelled}\\b")
    if (count := words_value(option)) is not None and count == int(count):  # "the 15-year" for fifteen
        other.append(f"{int(count)}\\b")
    return rf"\b(?:{'|'.join([own, *filter(None, other)])})"


def rejected_in_decision(text: str, options: Sequence[str]) -> set[int]:
    """The options a decision sentence turns down by name ("Skip the warranty and put that $2,400 in
    savings", "Avoid the payday loan"): never the answer's pick by a mention elsewhere."""
    out: set[int] = set()
    for sentence in sentences(text):
        if not (_decision(sentence) or _RECOMMEND.search(sentence)):
            continue
        for i, option in enumerate(options):
            first = re.search(option_pattern(option), sentence, re.IGNORECASE)
            if first and _REJECTING.search(sentence[max(0, first.start() - 24):first.start()]):
                out.add(i)
    return out


def picks_both(text: str) -> bool:
    """Does the answer take every option at once ("Why not both?", "split it: half to each")?"""
    return bool(_BOTH.search(text))


def picks_neither(text: str) -> bool:
    """Does the answer decline every option ("I wouldn't do either right now", "neither")?"""
    return bool(_NEITHER.search(text))


_AND = r"\band\b(?!\s+(?:is|are|was|has|have|offers?|pays?|comes?|includes?|gives?|lets?)\b)"
"""An "and" between two alternatives, not one that goes on describing the same one ("pays $68,000 and is
fully remote")."""
_FUNCTION = frozenset("a an the my our your his her their this that these those be is are was were".split())
"""Words that end the phrase naming an option, read back from it ("toward my | student loans")."""
def _own_phrase(before: str) -> str:
    """The words right before an option that belong to its own phrase, lower-cased ("toward my student"
    -> "student", "one at a Series A" -> "series a", "or stay in" -> "stay in", "should my next phone be an"
    -> "")."""
    words = re.findall(r"[A-Za-z0-9'][A-Za-z0-9'-]*", before)  # "two-year" is one word
    kept: list[str] = []
    for w in reversed(words[-4:]):  # back over a preposition ("stay in | Chicago"), not past a determiner or "be"
        if w.lower() in _FUNCTION and not (len(w) == 1 and w.isupper()):
            break
        kept.append(w.lower())
    return " ".join(reversed(kept))


def _alternatives_in_order(parts: list[str], options: Sequence[str]) -> list[str]:
    """The question's alternatives lined up with the options: an alternative that names an option by
    its own words is that option's, the one left over the option left over; in the question's order
    when none names one; [] when they cannot be lined up."""
    named = {i: [j for j, o in enumerate(options) if re.search(option_pattern(o), part, re.IGNORECASE)]
             for i, part in enumerate(parts)}
    if not any(named.values()):
        return parts
    owner: dict[int, int] = {}
    for i, found in named.items():
        if len(found) == 1 and found[0] not in owner.values():
            owner[i] = found[0]
    left_parts = [i for i in range(len(parts)) if i not in owner]
    left_options = [j for j in range(len(options)) if j not in owner.values()]
    if len(left_parts) > 1 or len(left_parts) != len(left_options):
        return []
    owner.update(zip(left_parts, left_options))
    return [parts[next(i for i, j in owner.items() if j == k)] for k in range(len(options))]


def prompt_words(prompt: str, options: Sequence[str]) -> list[set[str]]:
    """For each option, the content words the prompt uses beside its mentions (where it describes the
    option and where the question lists the options) and for no other option ("stay in Chicago" gives the option chicago the word
    stay): a recommendation may name an option by them."""
    low = prompt.lower()
    cut = rf"[,.](?!\d)|[;:?!()]|\b(?:or|but|versus|vs|which|where|while|than)\b|{_AND}"
    words: list[set[str]] = []
    for option in options:
        near: set[str] = set()
        said = (re.finditer(option_pattern(option), prompt, re.IGNORECASE) if len(option) == 1 else
                re.finditer(r"\b" + re.escape(option.lower()) + r"\b", low))
        for m in said:  # every mention, where it is described too
            whole = re.split(cut, prompt[:m.start()], flags=re.IGNORECASE)[-1]
            clause = _own_phrase(whole)
            if re.search(r"\b(?:stay|remain|keep)\b", whole, re.IGNORECASE):  # "or I can stay at my current job in Atlanta"
                near |= {"stay", "keep"}
            listed = re.sub(r"\b((?:a|an|the)\s+[a-z]+),\s", r"\1 ", low[m.end():])  # "a large, established firm"
            after = re.split(rf"{cut}|\bfor\b", listed)[0]  # "... or a Mazda CX-5 for a family SUV": for all of them
            near |= {w for w in re.findall(r"[a-z][a-z0-9-]*[a-z0-9]|[a-z]", f"{clause} {after}")  # "cr-v", "rav4"
                     if w not in STOPWORDS and len(w) > 2}
        words.append(near)
    body = re.split(r"\banswer\b", low)[0]
    asked_in = [q for q in re.split(r"(?<=[.?!])\s+", body) if "?" in q]
    parts = re.split(r",?\s+\bor\b\s+", asked_in[-1]) if asked_in else []
    listed_apart = False  # "switch to X, stay at Y, or go back to Z?": each part says all it knows of its option
    if len(parts) != len(options) and asked_in and len(options) > 2:
        parts = re.split(r",\s*(?:or\s+)?|\s+or\s+", re.sub(r"^[^:]*:\s*", "", asked_in[-1]))
        listed_apart = len(parts) == len(options)
    if len(parts) != len(options):  # "Which should I take?" after the sentence that lists the alternatives
        listed = [p for p in (re.split(rf",?\s+(?:\bor\b|{_AND})\s+", re.sub(r"^[^:]*:\s*", "", s))
                              for s in re.split(r"(?<=[.?!])\s+", body)) if len(p) == len(options)]  # "two offers: X and Y"
        naming = [p for p in listed if any(re.search(option_pattern(o), " ".join(p), re.IGNORECASE) for o in options)]
        parts = (naming or listed)[-1] if listed else parts  # the sentence that lists the options, by a name in it
    if len(parts) == len(options):  # options named only in the answer instruction: the question's alternatives
        parts = _alternatives_in_order(parts, options)
    if len(parts) == len(options):
        said = [set(re.findall(r"[a-z]+", part)) for part in parts]  # a word of two alternatives describes neither
        words = [((w or {x for x in re.findall(r"[a-z]+", _own_phrase(part)) if x not in STOPWORDS and len(x) > 2})
                  | {x for x in re.findall(r"[a-z]+", part) if listed_apart and x not in STOPWORDS and len(x) > 2})
                 - set().union(*(o for j, o in enumerate(said) if j != i))  # "Original Medicare ... or a Medicare Advantage"
                 for i, (w, part) in enumerate(zip(words, parts))]
    asked = {question_action(prompt)}  # the question's own verb describes no option: "Should I study part-time ...?"
    names = [set(re.findall(r"[a-z]+", o.lower())) for o in options]  # another option's own name names that one
    return [w - asked - set().union(*(o | names[j] for j, o in enumerate(words) if j != i)) for i, w in enumerate(words)]


def _named(text: str, options: Sequence[str], own: Sequence[set[str]]) -> list[tuple[int, int]]:
    """(position, option) of the first mention of each option in ``text`` that no word before it
    rejects, by its own words or the prompt's words for it (``own``), in order."""
    named, rejected = [], set()
    for i, option in enumerate(options):
        for m in re.finditer(option_pattern(option), text, re.IGNORECASE):
            if not _REJECTING.search(text[max(0, m.start() - 24):m.start()]):
                named.append((m.start(), i))
                break
            rejected.add(i)
    for i, ws in enumerate(own):  # the prompt's own words for an option: "stay where you are" for "stay in Chicago"
        at = [m.start() for w in ws for m in re.finditer(r"\b" + re.escape(w) + r"\b", text, re.IGNORECASE)
              if not _REJECTING.search(text[max(0, m.start() - 24):m.start()])]
        if at and i not in rejected | {j for _, j in named}:  # "Skip the Tesla: ... a used Model 3" names it no more
            named.append((min(at), i))
    return sorted(named)


def recommended_options(text: str, options: Sequence[str], prompt: str = "") -> list[int]:
    """The options named in the answer's recommendation sentences ("Overall, I'd lean toward the
    Fortune 500 offer"), each once in order of first recommendation; an option a sentence rejects
    ("rather than renting") is left out. More than one means the answer recommends several."""
    out: list[int] = []
    own = prompt_words(prompt, options) if prompt else []  # read once, tried on each recommendation
    pros_and_cons = re.search(r"[❌✖✗👎]", text) is not None  # then a check mark marks a pro, not the pick
    headings = set(re.findall(r"^[^\S\n]*(\S[^\n]{0,40}?)[^\S\n]*\n+[^\S\n]*(?:[-*•]|\d+[.)])\s", text, re.MULTILINE))
    previous = ""
    for sentence in sentences(text):
        prior, previous = previous, sentence
        if _THAT_ONE.match(sentence) and prior:  # "... plus a portfolio will get you there faster. Go with that."
            out += [i for _, i in _named(prior, options, own)[:1] if i not in out]
            continue
        if sentence.strip() in headings and not (_RECOMMEND.search(sentence) or _MARKED.search(sentence)):
            continue  # a heading over its option's pros and cons ("Keep the nap" above a list) decides nothing
        if pros_and_cons:
            sentence = re.sub(r"[✅✔☑👍]", "", sentence)
        if (default := _UNLESS.match(sentence)) and _decision(sentence[default.end():]):
            sentence = sentence[default.end():]  # "Unless the $75,000 job grows faster, take the remote one."
        if _TURNS_DOWN.match(sentence) or _LEVERAGE.match(sentence):
            continue  # "I'd skip the surprise party ... and a weekend away can be tiring": no pick in it
        marked, praised_after = _MARKED.search(sentence), _PRAISE_BEFORE.search(sentence)
        if praised_after and re.search(r"\b(?:neither|nor|none)\b", sentence[:praised_after.start()], re.IGNORECASE):
            praised_after = None  # "Neither a CD nor a savings account is my pick": a praise taken back
        cue = _RECOMMEND.search(sentence) or marked or praised_after or _decision(sentence)
        if not cue:
            continue
        # "the traditional account is the better choice": the option stands before its praise
        whole = marked or praised_after or re.search(
            r"\b(?:i'?d|i\s+would)\s+(?:go|stick)\s+with\s+(?:that|this|it)\b", sentence, re.IGNORECASE)  # "so I'd go with that"
        after = sentence if whole else sentence[cue.start():]
        named = _named(after, options, own)
        praise = None if marked else praised_after
        if praise and len(named) > 1:  # "Coaches can help, but a counselor is the right call": the praised clause's option
            own_clause = re.split(r"[,;:—–]|\bbut\b", sentence[:praise.start()], flags=re.IGNORECASE)[-1]
            if len(praised := _named(own_clause, options, own)) == 1:
                named = praised
        gap = after[named[0][0]:named[1][0]] if len(named) > 1 else ""
        if gap and named[0][0] <= (cue.end() - cue.start() if not whole else whole.end()) + 24 and not (
                len(gap) < 40 and re.search(r"\b(?:or|and|vs|versus)\b|/", gap, re.IGNORECASE)):
            named = named[:1]  # the option named right after the cue is the pick; one after it is context
        for _, i in named:  # two options in one recommendation ("either X or Y") recommend both
            if i not in out:
                out.append(i)
    return out
