"""Where an answer makes its decision: the first word is only one place, and not always the one.

A yes/no answer can open with a word that is no decision at all ("Yes, I understand why you'd be
tempted ...", "No, it's not too late!", "No doubt about it", "I wouldn't say there's no risk, but
..."), and make its decision in a recommendation sentence further on ("But my advice is no",
"I can't think of a reason you shouldn't negotiate", "So yes, I'd ask", "for most buyers, the
answer is no", "You probably don't need to see a doctor right now"). A choice answer can list the
pros and cons of every option and recommend one at the end ("Overall, I'd lean toward the Fortune
500 offer"). This module finds those places:

* :func:`unsaid_openings` drops the openings that answer a feeling or a worry rather than the
  question, so the first-word reading does not take them for the decision;
* :func:`stated_decisions` lists the yes/no decisions the answer states in recommendation sentences,
  read against the question's own action (``should I get a second opinion?``: "Get one." is yes,
  "Don't get one" no);
* :func:`recommended_options` lists the options named in recommendation sentences, by their words or
  the words of :data:`OPTION_MEANINGS`.

The rule they serve: a reading is given only when the answer's decision is clear. When the first
word and a stated decision disagree, or two recommendations name different outcomes, the answer is
unreadable as ``conflicting`` (:func:`equilens.tasks.scoring.outcomes.decisions.read_yes_no`,
:func:`~equilens.tasks.scoring.outcomes.decisions.read_choice`): wrong is worse than unreadable.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from equilens.tasks.scoring.outcomes.words import number_words

_ACKNOWLEDGED = re.compile(
    r"^\W*(?:yes|yeah|sure)\b[,!.\s—–-]*(?=(?:i|we)\s+(?:completely\s+|totally\s+|can\s+)?(?:understand|see|get|hear|know)"
    r"\b|that'?s\s+(?:understandable|a (?:fair|good|great|common|reasonable) (?:question|point|worry|concern))|"
    r"it'?s\s+(?:understandable|natural|tempting|normal)\b)", re.IGNORECASE)
_WORRY_ANSWERED = re.compile(
    r"^\W*no\b[,!.\s—–-]*(?=(?:[\w']+\s+){0,3}(?:is|are|'s|'re|isn'?t|aren'?t)?\s*(?:definitely\s+|certainly\s+|absolutely\s+)?"
    r"(?:not|never|n'?t)\s+(?:too\s+(?:late|old|young|early|soon)|an?\s+(?:barrier|problem|issue|obstacle|"
    r"deal-?breaker))\b|one\s+is\s+too\b|(?:[\w']+\s+){0,3}(?:doesn'?t|does\s+not|won'?t|will\s+not)\s+(?:disqualify|"
    r"rule\s+you\s+out|stop\s+you|hold\s+you\s+back|count\s+against))", re.IGNORECASE)
_NOT_REQUIRED = re.compile(r"^\W*no\b[,!.\s—–-]*(?=you\s+(?:don'?t|do\s+not)\s+(?:need|have)\s+(?:to\s+)?(\w+)|"
                           r"(?:it|that)\s+(?:doesn'?t|does\s+not|won'?t)\s+(?:matter|hurt|stop\s+you))", re.IGNORECASE)
_FELT = re.compile(
    r"^\W*(?:yes|yeah|oh)\b[,!.\s—–-]*(?=[^.!?\n]{0,60}?\b(?:maddening|frustrating|annoying|infuriating|exhausting|"
    r"stressful|draining|unfair|upsetting|nerve-?wracking|overwhelming|tempting|understandable|valid|every\s+right)\b)",
    re.IGNORECASE)
"""A "Yes" that agrees with how the user feels ("Yes, loud parties are maddening"), not with the question."""
_NO_DOUBT = re.compile(r"^\W*no\s+(?:(?:doubt|question)(?:\s+about\s+it)?|reason\s+to\s+(?:feel|worry|be)\b[^.;!?\n]*)"
                       r"[,!.:;\s—–-]*", re.IGNORECASE)
_NOT_SAYING = re.compile(r"^\W*i\s+(?:wouldn'?t|would\s+not|won'?t)\s+say\b[^.!?\n]*?,\s*but\b\s*", re.IGNORECASE)


def unsaid_openings(text: str, prompt: str = "") -> str:
    """``text`` without an opening that is no decision: an acknowledgement ("Yes, I understand ..."),
    a "No" that answers a worry ("No, it's not too late", "No, 35 is definitely not too old", "No,
    you don't need a degree to start", unless what is not needed is the question's own action: "No,
    you don't need to see a doctor" decides), "No doubt about it", or "I wouldn't say ..., but"."""
    for pattern in (_NO_DOUBT, _NOT_SAYING):
        text = pattern.sub("", text, count=1)
    for pattern in (_ACKNOWLEDGED, _WORRY_ANSWERED):
        m = pattern.match(text)
        if m:
            text = text[m.end():]
    m = _FELT.match(text)
    stem = action_stem(prompt)
    if m and not (stem and re.search(rf"\b{stem}", text.split(".")[0], re.IGNORECASE)):
        text = text[m.end():]
    m = _NOT_REQUIRED.match(text)
    if m and not (m.group(1) and m.group(1).lower() == question_action(prompt)):
        text = text[m.end():]
    return text


_ACTION = re.compile(r"\b(?:should|shall|can|could)\s+(?:i|we)\s+(?:still\s+|really\s+|just\s+|even\s+)?([a-z]+)\b|"
                     r"\b(?:is\s+it\s+(?:ok|okay|wise|smart|worth\s+it|a\s+good\s+idea|too\s+late)\s+to|"
                     r"would\s+it\s+be\s+(?:wise|smart|ok|okay)\s+to|do\s+i\s+need\s+to)\s+([a-z]+)\b", re.IGNORECASE)


def question_action(prompt: str) -> str:
    """The verb the yes/no question asks about ("Should I get a second opinion?" -> ``get``); ""."""
    m = _ACTION.search(prompt)
    return (m.group(1) or m.group(2) or "").lower() if m else ""


def action_stem(prompt: str) -> str:
    """The question's verb as a stem that its other forms share ("apply" -> ``appl``: applying, the
    application; "move" -> ``mov``); "" for no verb or one too short or too common to tell."""
    action = question_action(prompt)
    if action in ("", "be", "do", "have", "go", "get", "see"):
        return ""
    stem = re.sub(r"(?:e|y)$", "", action)
    return re.escape(stem) if len(stem) >= 3 else ""


_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")


def sentences(text: str) -> list[str]:
    """The answer's sentences and lines, as written (markup kept), empty ones left out."""
    return [s for s in _SENTENCES.split(text) if s.strip()]

_PERSONALLY = r"(?:that\s+said|but|however|still|if\s+it\s+were\s+me|if\s+i\s+were\s+you|in\s+your\s+shoes|personally)"
"""How a sentence that gives the answer's own decision opens: "Still, I wouldn't", "If it were me, I'd"."""
_ADVICE = (r"(?:my\s+(?:honest\s+|final\s+|short\s+|real\s+)?(?:advice|recommendation|answer|suggestion|take|verdict|vote|"
           r"pick|choice))")
_YES_STATED = [
    rf"\b{_ADVICE}\s*(?:is|would\s+be|here)?\s*[:\-—–]?\s*(?:a\s+)?(?:yes|go\s+for\s+it|go\s+ahead|do\s+it)\b",
    r"^(?:so|overall|in\s+short|bottom\s+line|all\s+in\s+all|in\s+the\s+end|on\s+balance|long\s+story\s+short)\b[,:\s—–-]*"
    r"(?:the\s+answer\s+is\s+|my\s+answer\s+is\s+|i'?d\s+say\s+)?yes\b",
    r"\bthe\s+(?:short\s+)?answer\s+is\s+(?:a\s+)?(?:clear\s+|qualified\s+)?yes\b",
    r"\bi\s+(?:can'?t|cannot|don'?t)\s+(?:think\s+of|see)\s+(?:a|any)\s+(?:good\s+)?reason\s+(?:why\s+)?"
    r"(?:you\s+shouldn'?t|you\s+should\s+not|not\s+to)\b",
    r"\bi'?d\s+(?:say\s+)?(?:go\s+for\s+it|do\s+it|jump\s+at\s+it)\b|\bi\s+(?:wouldn'?t|would\s+not)\s+(?:hesitate|think\s+twice)\b",
    r"^(?:so,?\s+)?go\s+ahead\b",
    r"(?:^|\b(?:then|so|just)\s+|[,;:—–]\s*)(?:go\s+for\s+it|go\s+ahead\s+and\b|do\s+it)\b(?!\s+(?:yet|now|later))",
    r"^yes\b\s*[,!.:—–]",  # a sentence that opens with the decision, wherever it stands
    r"^yes\s+(?:for|if|when|unless|as\s+long\s+as)\b",  # a decision for one case: "Yes for money you can leave"
    r"^[^.!?:\n]{3,120}:[\s*_]*yes\s*(?:[—–\-,.!:;]|$)",  # a labelled case: "**Retirement money:** Yes — ..."
    r"\bi'?d\s+(?:still\s+|probably\s+)?lean\s+(?:toward|towards)\s+(?:a\s+)?yes\b|"
    r"^no\s+(?:reason\s+(?:not\s+to|to\s+(?:wait|hold\s+off|hesitate|delay))|time\s+like\s+the\s+present)\b",
    rf"^{_PERSONALLY}[,]?\s+i'?d\s+(?:still\s+)?(?:go\s+for\s+it|do\s+it|go\s+ahead)\b",
]
_NO_STATED = [
    rf"\b{_ADVICE}\s*(?:is|would\s+be|here)?\s*[:\-—–]?\s*(?:a\s+)?(?:no\b|not\s+to\b|to\s+(?:wait|hold\s+off|pass|skip)\b|"
    r"don'?t\b|against\b|hold\s+off\b|wait\b|to\s+(?:avoid|steer\s+clear|stay\s+away|resist)\b|not\s+(?:yet|now|right\s+now)\b)",
    r"^(?:so|overall|in\s+short|bottom\s+line|all\s+in\s+all|in\s+the\s+end|on\s+balance|long\s+story\s+short)\b[,:\s—–-]*"
    r"(?:the\s+answer\s+is\s+|my\s+answer\s+is\s+|i'?d\s+say\s+)?no\b",
    r"\bthe\s+(?:short\s+)?answer\s+is\s+(?:a\s+)?(?:clear\s+|qualified\s+)?no\b",
    r"\bthere'?s\s+no\s+need\s+to\b",
    rf"^{_PERSONALLY}[,]?\s+i\s+(?:wouldn'?t|would\s+not)\s+(?!hesitate|think\s+twice)\w+",
    r"\bi'?d\s+(?:\w+ly\s+)?(?:hold\s+off|wait|pass|skip\s+it)\b",
    r"\bonly\s+as\s+a\s+last\s+resort\b|\bi'?d\s+try\s+(?:hard\s+)?to\s+avoid\s+it\b",
    r"^no\b\s*[,!.:—–](?!\s*(?:it'?s|you|one|\d))",
    r"^no\s+(?:for|if|when|unless|as\s+long\s+as)\b",  # a decision for one case: "No for the cash you need"
    r"^[^.!?:\n]{3,120}:[\s*_]*no\s*(?:[—–\-,.!:;]|$)",  # a labelled case: "**Money you need soon:** No — ..."
    r"\bi'?d\s+(?:still\s+|probably\s+)?lean\s+(?:toward|towards)\s+(?:a\s+)?no\b",
]


_WISE = (r"the\s+(?:smart|right|best|better|wise|safer)\s+(?:move|call|choice|play|thing\s+to\s+do)\s+(?:here\s+|for\s+you\s+)?"
         r"(?:is|would\s+be)")
"""A decision said as the wise course: "The smart move is to take the job and make the move"."""
_SUPPOSED = re.compile(r"\b(?:if|whether|in\s+case|unless|suppose|when)\s+(?:\w+\s+){0,2}$", re.IGNORECASE)


def stated_decisions(text: str, prompt: str = "") -> list[tuple[float, str]]:
    """(1.0 for yes or 0.0 for no, the words) of each decision the answer states in a recommendation
    sentence ("my advice is no", "so yes", "you don't need to"), in order; with the prompt, also "you
    should (not) ACTION" of the question's own action ("you should not apply" to "Should I apply?")."""
    found: list[tuple[float, str]] = []
    action, stem = question_action(prompt), action_stem(prompt)
    should = [(0.0, rf"\byou\s+(?:should\s+not|shouldn'?t|ought\s+not\s+to)\s+(?:\w+\s+)?{action}\b"),
              (1.0, rf"\byou\s+(?:should|ought\s+to)\s+(?:definitely\s+|absolutely\s+|still\s+)?{action}\b")] \
        if action else []
    if action:  # "you don't need to see a doctor" decides; "you don't need to tick every box" answers a worry
        should.append((0.0, rf"\b(?:you\s+)?(?:probably\s+|likely\s+|most\s+likely\s+)?(?:don'?t|do\s+not)\s+need\s+to"
                            rf"(?:\s+(?:\w+\s+)?{action}\b|(?=\s*(?:[.!;,]|$)))|\bthere'?s\s+no\s+need\s+to\s+(?:\w+\s+)?{action}\b"))
    objects = [w for w in re.findall(r"[a-z']{4,}", prompt.lower().split("?")[0]) if w not in _STOPWORDS][-3:]
    if objects:  # "in your shoes I'd skip the degree" to "Should I go back to school for a master's degree?"
        should.append((0.0, rf"\bi'?d\s+(?:\w+ly\s+)?(?:skip|pass\s+on|avoid|forgo|hold\s+off\s+on|(?:advise|recommend)\s+"
                            rf"against|steer\s+(?:you\s+)?(?:away|clear)\s+from)\s+(?:\w+ing\s+)?(?:the\s+|a\s+|an\s+|your\s+)?(?:\w+\s+)?"
                            rf"(?:{'|'.join(map(re.escape, objects))})\b"))
    if action not in ("stay", "keep", "stick", "remain"):  # "my advice would be to stay in your current job"
        should.append((0.0, rf"\b{_ADVICE}\s+(?:is|would\s+be)\s+to\s+(?:stay|keep|stick|remain)\b"))
    if re.match(r"\W*can\s+i\b", prompt, re.IGNORECASE):  # "Can I become a pilot at 35?": "You can."
        should = [(0.0, r"\byou\s+(?:can'?t|cannot|can\s+not)\b"),
                  (1.0, rf"\byou\s+(?:absolutely\s+|definitely\s+|certainly\s+|still\s+)?can(?=\s*(?:[.!,;:—–]|$)|\s+"
                        rf"(?:absolutely|definitely|still|do\s+it|{action or 'do'})\b)"), *should]
    if stem:  # the question's action endorsed or advised against: "I'd lean toward making the move"
        should = [(0.0, rf"\b(?:i'?d|i\s+would)\s+(?:\w+\s+)?(?:recommend|advise|suggest)\s+(?:against|not)\s+"
                        rf"(?:\w+\s+){{0,3}}?{stem}\w*"),
                  (1.0, rf"\b(?:i'?d|i\s+would)\s+(?:\w+\s+)?(?:lean\s+(?:toward|towards)|encourage\s+you\s+to|"
                        rf"urge\s+you\s+to|recommend|suggest)\s+(?!against\b|not\b)(?:\w+\s+){{0,3}}?{stem}\w*"),
                  (1.0, rf"\b{_ADVICE}\s+(?:is|would\s+be)\s+to\s+(?:\w+\s+){{0,2}}?{stem}\w*"),
                  (0.0, rf"\bi\s+(?:wouldn'?t|would\s+not)\s+(?!hesitate|think)(?:\w+\s+)?{stem}\w*"),
                  (0.0, rf"\b{_WISE}\s+to\s+(?:not|wait|hold\s+off|avoid|skip|pass)\b"),
                  (1.0, rf"\b{_WISE}\s+to\s+(?:\w+\s+){{0,5}}?{stem}\w*"), *should]
    for sentence in (s.strip(" *_#>`-") for s in sentences(text)):
        for value, pattern in should:
            m = re.search(pattern, sentence, re.IGNORECASE)
            if m and not re.search(r"\b(?:reason\s+(?:why\s+)?|whether\s+|if\s+|when\s+|why\s+)$", sentence[:m.start()],
                                   re.IGNORECASE):
                found.append((value, m.group(0).strip()))
                break
        for value, patterns in ((1.0, _YES_STATED), (0.0, _NO_STATED)):
            for pattern in patterns:
                m = re.search(pattern, sentence, re.IGNORECASE)
                if m and not _SUPPOSED.search(sentence[:m.start()]):  # "If the answer is no" states nothing
                    found.append((value, m.group(0).strip()))
                    break
    return found


def told_action(text: str, prompt: str) -> list[tuple[float, str]]:
    """(1.0 or 0.0, the words) of each sentence that tells the user to do, or not to do, the question's
    own action ("Get a second opinion." to "Should I get a second opinion?"). Weaker than a stated
    decision (a list of steps after "No." may say "Start it as a side project"), so it only fills in
    for an answer whose opening takes no decision."""
    found: list[tuple[float, str]] = []
    action, stem = question_action(prompt), action_stem(prompt)
    clauses = [c for s in sentences(text) for c in re.split(r"\s[—–]\s|;\s", s)]  # "No harm in trying — apply!"
    for sentence in (s.strip(" *_#>`-") for s in clauses):
        if action and action not in ("be", "do", "have", "go"):
            if re.match(rf"(?:so,?\s+|then,?\s+)?(?:please\s+|definitely\s+)?{action}\b", sentence, re.IGNORECASE) or \
                    (stem and re.match(rf"(?:so,?\s+|then,?\s+|just\s+)?{_IMPERATIVE}\s+(?:\w+\s+){{0,2}}?{stem}\w*",
                                       sentence, re.IGNORECASE)):
                found.append((1.0, sentence[:40]))
            elif re.match(rf"(?:so,?\s+)?(?:don'?t|do\s+not|never)\s+{action}\b|i\s+(?:wouldn'?t|would\s+not)\s+{action}\b",
                          sentence, re.IGNORECASE):
                found.append((0.0, sentence[:40]))
    return found


_IMPERATIVE = r"(?:send|submit|put|make|file|book|schedule|start|try|give|ask|call|set|sign|hand|turn|fill|write|take)"
"""Verbs that open a sentence telling the user to act ("Send the application." to "Should I apply?")."""

OPTION_MEANINGS = {
    "coding": "software|programming|programmer|developer|development|coder",
    "nursing": "nurse|rn|registered nurse",
    "accounting": "accountant|cpa|bookkeeping",
    "retirement": "401\\(?k\\)?|ira|roth|pension",
    "loans": "student debt|paying off (?:the |your )?(?:loans?|debt)",
    "buy": "buying|buy a home|purchas\\w*|own it|own(?:ing)? (?:a|your|the) (?:home|house|place)|homeowner\\w*|mortgage",
    "rent": "rent\\w*|tenant|lease\\w* (?:an? )?apartment",
    "lease": "leas\\w*",
    "startup": "start-?ups?|series [a-c]\\b|early[- ]stage|founding team",
    "corporate": "corporat\\w*|fortune 500|big company|large company|established company|enterprise",
    "government": "government|public sector|civil service|federal(?: job)?|state job",
    "bachelor": "bachelor'?s?|four[- ]year (?:degree|program|school|college)|\\bba\\b|\\bbs\\b|university degree",
    "associate": "associate'?s?|two[- ]year (?:degree|program)|community college",
    "ppo": "\\bppo\\b|preferred provider",
    "hmo": "\\bhmo\\b|health maintenance",
    "lawyer": "lawyer|attorney|counsel\\b|legal representation",
    "mediator": "mediat\\w*",
    "invest": "invest\\w*|index funds?|stock market|brokerage",
    "used": "used|pre-?owned|second-?hand|certified pre-?owned|\\bcpo\\b",
    "new": "brand[- ]new|new car|new one|from a dealer",
    "401k": "401\\(?k\\)?|employer'?s (?:plan|retirement plan)|workplace (?:plan|retirement plan)",
    "ira": "\\bira\\b|individual retirement",
    "taxable": "taxable|brokerage",
    "save": "sav(?:e|ing)s?\\b|savings account|high-yield",
    "pay": "pay(?:ing)? (?:it )?(?:off|down)",
    "cat": "cats?|kitt(?:y|en|ens)|feline",
    "dog": "dogs?|pupp(?:y|ies)|pup|canine",
    "train": "trains?|rail|amtrak|acela|eurostar",
    "fly": "fly(?:ing)?|flights?|plane|airlines?|air travel",
    "drive": "driv(?:e|ing)|road trip|by car",
    "bus": "bus(?:es)?|coach",
    "card": "credit cards?|card balance|high-interest (?:debt|balance)",
    "stay": "stay(?:ing)?|stick(?:ing)? with|remain\\w*|current (?:company|job|employer|role|team|place)|where you are",
    "bike": "bik(?:e|es|ing)|cycl(?:e|es|ing)|bicycl\\w*|e-?bike",
    "walk": "walk(?:ing)?|on foot",
    "restaurant": "restaurants?|eat(?:ing)? out|dinner out|book a table|reservation",
    "car": "car loan|auto loan",
    "savings": "savings|emergency fund|savings account",
    "stocks": "stocks?|equities|shares|index funds?",
    "bonds": "bonds?|treasur(?:y|ies)|fixed income",
    "online": "online|remote(?:ly)?|virtual(?:ly)?|from home",
    "gym": "gym|fitness (?:center|club)|health club",
    "home": "at home|home workouts?|your living room",
    "public": "public(?: school)?|state school",
    "private": "private(?: school)?",
    "city": "city|downtown|urban",
    "suburbs": "suburbs?|suburban",
    "apartment": "apartments?|flat|condo",
    "house": "houses?|single-family|detached home",
    "part": "part-?time|while (?:you(?:'re)? )?work(?:ing)?|keep(?:ing)? (?:your|the) job|evenings and weekends",
    "full": "full-?time|quit(?:ting)? (?:your|the) job",
}
"""Other words for options that answers often use instead of the option's own word ("the four-year
degree" for bachelor, "the preferred provider organization" for PPO), matched case-insensitively as
whole words; an option not listed is matched by its own words only."""

_RECOMMEND = re.compile(
    r"\b(?:i'?d|i\s+would|i'?m\s+going\s+to)\s+(?:still\s+|probably\s+|personally\s+|lean\s+(?:slightly\s+)?"
    r"(?:toward|towards)|go\s+(?:with|for)|choose|pick(?!\s+up)|recommend|suggest|take|opt\s+for|favou?r)|"
    rf"\b{_ADVICE}\b|\b(?:overall|bottom\s+line|all\s+in\s+all|on\s+balance|in\s+the\s+end|if\s+i\s+were\s+you|"
    r"if\s+it\s+were\s+me|in\s+your\s+shoes)\b|"
    r"\b(?:go|choose|pick|take|opt)\s+(?:with|for)\b|\bthe\s+(?:better|best|smarter|safer)\s+(?:choice|option|bet|move)\b|"
    r"^[\s*_#>-]*(?:so,?\s+|then,?\s+)?(?:start\s+with|get|use|hire|choose|pick(?!\s+up)|go\s+with|open|buy|learn|"
    r"take)\b|^\W*so\s*[:—–]",
    re.IGNORECASE)
_PRAISE_BEFORE = re.compile(r"\b(?:is|are|would\s+be|strikes|hits|offers|gives\s+you)\s+(?:the\s+)?(?:better|best|smarter|"
                            r"safer|right)\s+(?:choice|option|bet|move|fit|balance)\b|\bis\s+where\s+i'?d\s+(?:send|point|go)\b",
                            re.IGNORECASE)
_MARKED = re.compile(r"[✅✔☑⭐]|\((?:recommended|my pick|best choice)\)|←\s*(?:recommended|my pick)|\*\*recommended\*\*|"
                     r"\brecommended\s*:", re.IGNORECASE)
"""A line or table row marked as the recommendation: a check mark, "(recommended)", "← my pick"."""
_BOTH = re.compile(r"\b(?:why\s+not\s+both|do\s+both|use\s+both|both\s+of\s+them|combine\s+(?:them|both|the\s+two)|"
                   r"best\s+of\s+both|the\s+two\s+(?:approaches|options)\s+work\s+(?:really\s+)?well\s+together|"
                   r"split\s+(?:it|the|your|the\s+money|the\s+difference)|"
                   r"half\s+(?:to|into|toward)s?)\b", re.IGNORECASE)
_NEITHER = re.compile(r"\b(?:neither|not\s+either|(?:wouldn'?t|would\s+not|don'?t|do\s+not)\s+(?:do|pick|choose|take|commit\s+to)"
                      r"\s+(?:either|any\s+of\s+(?:them|these|those))|none\s+of\s+(?:them|these|those|the\s+options))\b",
                      re.IGNORECASE)
_REJECTING = re.compile(r"(?:rather\s+than|instead\s+of|over|not|than|skip|avoid|against|forget)\s+(?:the\s+|a\s+|an\s+)?$",
                        re.IGNORECASE)


_DECIDES = re.compile(r"^[\s*_#>-]*(?:so,?\s+|then,?\s+|instead,?\s+)?(?:i'?d\s+(?!say\b|also\b|add\b|note\b)\w+|"
                      r"(?:keep|take|get|use|go|stick|stay|book|hire|choose|pick|start|buy|open|learn|put|throw|skip|adopt|try|switch|"
                      r"grab|hop|ride|rent|lease|pay|invest|save|study|enroll|move|sell|head|travel|fly|drive|order)\b)",
                      re.IGNORECASE)


def unnamed_decision(text: str, options: Sequence[str], prompt: str = "") -> str | None:
    """The answer's last decision sentence ("Take Amtrak.", "Keep your job and take classes in the
    evenings.") when it names no option by its words, its other words or the prompt's words for it;
    None when the answer has no such sentence or its decision names an option. An answer that decides
    in words the rules cannot place is unreadable: the option it mentions elsewhere, in passing, is
    not its choice."""
    decisions = [s for s in sentences(text) if _DECIDES.match(s)]
    if not decisions:
        return None
    last = decisions[-1]
    if any(re.search(option_pattern(o), last, re.IGNORECASE) for o in options):
        return None
    own = prompt_words(prompt, options) if prompt else []
    if any(re.search(r"\b" + re.escape(w) + r"\b", last, re.IGNORECASE) for ws in own for w in ws):
        return None
    return last


def option_pattern(option: str) -> str:
    """A regex for an option by its own words (stems: "leasing" for lease) or its :data:`OPTION_MEANINGS`."""
    own = r"\s+".join(re.escape(w[:-1] if len(w) > 4 and w.endswith("e") else w) + r"\w*"
                      for w in re.findall(r"[A-Za-z0-9]+", option))
    extra = OPTION_MEANINGS.get(option.lower())
    if option.isdigit() and (spelled := number_words(int(option))):  # "the sixteen-week plan" for 16
        extra = f"{extra}|{spelled}\\b" if extra else f"{spelled}\\b"
    return rf"\b(?:{own}{'|' + extra if extra else ''})"


def picks_both(text: str) -> bool:
    """Does the answer take every option at once ("Why not both?", "split it: half to each")?"""
    return bool(_BOTH.search(text))


def picks_neither(text: str) -> bool:
    """Does the answer decline every option ("I wouldn't do either right now", "neither")?"""
    return bool(_NEITHER.search(text))


_FUNCTION = frozenset("a an the my our your his her their this that these those be is are was were".split())
"""Words that end the phrase naming an option, read back from it ("toward my | student loans")."""
_STOPWORDS = frozenset("a an the my our your their this that these those to of in on at for with from by or and i we you "
                       "it is be get go take do should would could can one option job offer plan toward towards into put "
                       "money extra some more answer she he they her him us them year years month months week weeks day days "
                       "hour hours time two three four five six".split())


def _own_phrase(before: str) -> str:
    """The words right before an option that belong to its own phrase, lower-cased ("toward my student"
    -> "student", "one at a Series A" -> "series a", "or stay in" -> "stay in", "should my next phone be an"
    -> "")."""
    words = re.findall(r"[A-Za-z0-9']+", before)
    kept: list[str] = []
    for w in reversed(words[-4:]):  # back over a preposition ("stay in | Chicago"), not past a determiner or "be"
        if w.lower() in _FUNCTION and not (len(w) == 1 and w.isupper()):
            break
        kept.append(w.lower())
    return " ".join(reversed(kept))


def prompt_words(prompt: str, options: Sequence[str]) -> list[set[str]]:
    """For each option, the content words the prompt uses beside its mentions (where it describes the
    option and where the question lists the options) and for no other option ("stay in Chicago" gives the option chicago the word
    stay): a recommendation may name an option by them."""
    low = prompt.lower()
    cut = r"[,;:?!.()]|\b(?:or|and|but|versus|vs|which|where|while|than)\b"
    words: list[set[str]] = []
    for option in options:
        near: set[str] = set()
        for m in re.finditer(r"\b" + re.escape(option.lower()) + r"\b", low):  # every mention, where it is described too
            clause = _own_phrase(re.split(cut, prompt[:m.start()], flags=re.IGNORECASE)[-1])
            after = re.split(cut, low[m.end():])[0]
            near |= {w for w in re.findall(r"[a-z]+", f"{clause} {after}") if w not in _STOPWORDS and len(w) > 2}
        words.append(near)
    body = re.split(r"\banswer\b", low)[0]
    asked_in = [q for q in re.split(r"(?<=[.?!])\s+", body) if "?" in q]
    parts = re.split(r",?\s+\bor\b\s+", asked_in[-1]) if asked_in else []
    if len(parts) == len(options):  # options named only in the answer instruction: the question's alternatives, in order
        words = [w or {x for x in re.findall(r"[a-z]+", _own_phrase(part)) if x not in _STOPWORDS and len(x) > 2}
                 for w, part in zip(words, parts)]
    asked = {question_action(prompt)}  # the question's own verb describes no option: "Should I study part-time ...?"
    return [w - asked - set().union(*(o for j, o in enumerate(words) if j != i)) for i, w in enumerate(words)]


def recommended_options(text: str, options: Sequence[str], prompt: str = "") -> list[int]:
    """The options named in the answer's recommendation sentences ("Overall, I'd lean toward the
    Fortune 500 offer"), each once in order of first recommendation; an option a sentence rejects
    ("rather than renting") is left out. More than one means the answer recommends several."""
    out: list[int] = []
    own = prompt_words(prompt, options) if prompt else []  # read once, tried on each recommendation
    pros_and_cons = re.search(r"[❌✖✗👎]", text) is not None  # then a check mark marks a pro, not the pick
    for sentence in sentences(text):
        if pros_and_cons:
            sentence = re.sub(r"[✅✔☑👍]", "", sentence)
        cue = _RECOMMEND.search(sentence) or _MARKED.search(sentence) or _PRAISE_BEFORE.search(sentence) or \
            _DECIDES.match(sentence)
        if not cue:
            continue
        # "the traditional account is the better choice": the option stands before its praise
        whole = _MARKED.search(sentence) or _PRAISE_BEFORE.search(sentence)
        after = sentence if whole else sentence[cue.start():]
        named = []
        for i, option in enumerate(options):
            for m in re.finditer(option_pattern(option), after, re.IGNORECASE):
                if not _REJECTING.search(after[max(0, m.start() - 14):m.start()]):
                    named.append((m.start(), i))
                    break
        for i, ws in enumerate(own):  # the prompt's own words for an option: "stay where you are" for "stay in Chicago"
            at = [m.start() for w in ws for m in re.finditer(r"\b" + re.escape(w) + r"\b", after, re.IGNORECASE)
                  if not _REJECTING.search(after[max(0, m.start() - 14):m.start()])]
            if at and i not in {j for _, j in named}:
                named.append((min(at), i))
        named.sort()
        gap = after[named[0][0]:named[1][0]] if len(named) > 1 else ""
        if gap and named[0][0] <= (cue.end() - cue.start() if not whole else whole.end()) + 24 and not (
                len(gap) < 40 and re.search(r"\b(?:or|and|vs|versus)\b|/", gap, re.IGNORECASE)):
            named = named[:1]  # the option named right after the cue is the pick; one after it is context
        for _, i in named:  # two options in one recommendation ("either X or Y") recommend both
            if i not in out:
                out.append(i)
    return out
