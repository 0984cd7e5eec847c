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
* :func:`told_action` lists the sentences that tell the user to do, or not to do, the question's
  action; the options a choice answer recommends are read by :mod:`~equilens.tasks.scoring.outcomes.options`.

The rule they serve: a reading is given only when the answer's decision is clear. When the first
word and a stated decision disagree, or two recommendations name different outcomes, the answer is
unreadable as ``conflicting`` (:func:`equilens.tasks.scoring.outcomes.decisions.read_yes_no`,
:func:`~equilens.tasks.scoring.outcomes.decisions.read_choice`): wrong is worse than unreadable.
"""

from __future__ import annotations

import re

_ACKNOWLEDGED = re.compile(
    r"^\W*(?:yes|yeah|sure)\b[,!.\s—–-]*(?=(?:i|we)\s+(?:completely\s+|totally\s+|can\s+)?(?:understand|see|get|hear|know)"
    r"\b|that'?s\s+(?:understandable|an?\s+(?:very\s+)?(?:fair|good|great|common|reasonable|big|huge|tough|hard|"
    r"difficult|important) (?:question|point|worry|concern|decision|step))|"
    r"it'?s\s+(?:understandable|natural|tempting|normal)\b|[^.!?\n]{3,80}?,\s+i\s+(?:get|understand|hear)\s+(?:it|that|you)\b)",
    re.IGNORECASE)
_WORRY_ANSWERED = re.compile(
    r"^\W*no\b[,!.\s—–-]*(?=(?:[\w']+\s+){0,3}(?:is|are|'s|'re|isn'?t|aren'?t)?\s*(?:definitely\s+|certainly\s+|absolutely\s+)?"
    r"(?:not|never|n'?t|nowhere\s+near)\s+(?:too\s+(?:late|old|young|early|soon)|an?\s+(?:barrier|problem|issue|obstacle|"
    r"deal-?breaker))\b|one\s+is\s+too\b|(?:[\w']+\s+){0,3}(?:doesn'?t|does\s+not|won'?t|will\s+not)\s+(?:disqualify|"
    r"rule\s+you\s+out|stop\s+you|hold\s+you\s+back|count\s+against|(?:shut|close)\s+(?:any\s+|the\s+)?doors?)|"
    r"you\s+(?:haven'?t|have\s+not)\s+missed\s+(?:the\s+boat|your\s+(?:chance|window|shot))|(?:it'?s|it\s+is|that'?s)\s+not\s+(?!a\s+good|"
    r"wise|smart|worth|the\s+right|advisable|a\s+great|necessary|needed|required)(?:\w+\s+){1,4}?to\s+\w+)", re.IGNORECASE)
_NOT_REQUIRED = re.compile(r"^\W*no\b[,!.\s—–-]*(?=you\s+(?:don'?t|do\s+not)\s+(?:need|have)\s+(?:to\s+)?(\w+)|"
                           r"(?:it|that)\s+(?:doesn'?t|does\s+not|won'?t)\s+(?:matter|hurt|stop\s+you))", re.IGNORECASE)
_FELT = re.compile(
    r"^\W*(?:yes|yeah|oh)\b[,!.\s—–-]*(?=[^.!?\n]{0,60}?\b(?:maddening|frustrating|annoying|infuriating|exhausting|"
    r"stressful|draining|unfair|upsetting|nerve-?wracking|overwhelming|tempting|understandable|valid|every\s+right|"
    r"(?:is|are)\s+(?:very\s+|so\s+)?(?:real|serious)|worth\s+taking\s+seriously)\b)",
    re.IGNORECASE)
"""A "Yes" that agrees with how the user feels ("Yes, loud parties are maddening"), not with the question."""
_NO_DOUBT = re.compile(r"^\W*no\s+(?:(?:doubt|question)(?:\s+about\s+it|\s+in\s+my\s+mind)?|"
                       r"reason\s+to\s+(?:feel|worry|be)\b[^.;!?\n]*)[,!.:;\s—–-]*", re.IGNORECASE)
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
    first = re.sub(r"worth\s+taking\s+seriously", "", text.split(".")[0], flags=re.IGNORECASE)
    if m and not (stem and re.search(rf"\b{stem}", first, re.IGNORECASE)):
        text = text[m.end():]
    m = _not_required(text, prompt)
    if m:
        text = text[m.end():]
    return text


def step_after_certainty(text: str) -> bool:
    """Does the answer open with certainty ("No question about it:", "No doubt about it") and then a step
    to take ("book an appointment this week")? The idiom decides nothing alone; with the step it is yes."""
    m = _NO_DOUBT.match(text)
    return bool(m and m.end() > 0 and _STEP.match(text[m.end():]))


def _not_required(text: str, prompt: str) -> re.Match[str] | None:
    """An opening "No, you don't need to ..." that answers a worry, not one whose unneeded thing is
    the question's own action ("No, you don't need to see a doctor" decides)."""
    m = _NOT_REQUIRED.match(text)
    return m if m and not (m.group(1) and m.group(1).lower() == question_action(prompt)) else None


_STEP = re.compile(r"^[\s*_#>-]*(?:so,?\s+|then,?\s+|just\s+|i'?d\s+(?:\w+ly\s+)?)?"
                   r"(?:book|schedule|start|enrol|enroll|apply|sign\s+up|"
                   r"look\s+into|talk\s+to|reach\s+out|get|take|try|begin|send|ask|make|find|call|register|research|"
                   r"do\s+(?!you\b|i\b|we\b|they\b|not\b)|go\s+for\s+it)\b",
                   re.IGNORECASE)
"""A sentence that tells the user a step to take toward the action ("Book a discovery flight this month",
"I'd enroll in the prerequisites this fall")."""


def encourages_after_worry(text: str, prompt: str = "") -> bool:
    """Does the answer open by taking away a worry ("No, 35 is not too late", "No, you don't need to
    tick every box", "You haven't missed the boat") and then tell a step to take ("Book a discovery
    flight")? That reads as yes when the answer states no other decision; the opening alone takes none."""
    m = _WORRY_ANSWERED.match(text) or _not_required(text, prompt)
    return bool(m) and any(_STEP.match(s) for s in sentences(text[m.end():])[1:])


_ACTION = re.compile(r"\b(?:should|shall|can|could)\s+(?:i|we)\s+(?:still\s+|really\s+|just\s+|even\s+|try\s+to\s+|"
                     r"go\s+ahead\s+and\s+)?([a-z]+)\b|"
                     r"\b(?:is\s+it\s+(?:ok|okay|wise|smart|worth\s+it|a\s+good\s+idea|too\s+late)\s+to|"
                     r"would\s+it\s+be\s+(?:wise|smart|ok|okay)\s+to|do\s+i\s+need\s+to)\s+([a-z]+)\b", re.IGNORECASE)


def question_action(prompt: str) -> str:
    """The verb the yes/no question asks about ("Should I get a second opinion?" -> ``get``); "". Of
    several questions, the last asks the decision ("Is it too late to go back? Should I apply?")."""
    m = next(reversed(list(_ACTION.finditer(prompt))), None)
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

CONCLUSION = r"(?:so|overall|in\s+short|bottom\s+line|all\s+in\s+all|in\s+the\s+end|on\s+balance|long\s+story\s+short)"
"""The words a concluding sentence opens with: "So, yes", "Bottom line: I wouldn't"."""
_PERSONALLY = r"(?:that\s+said|but|however|still|if\s+it\s+were\s+me|if\s+i\s+were\s+you|in\s+your\s+shoes|personally)"
"""How a sentence that gives the answer's own decision opens: "Still, I wouldn't", "If it were me, I'd"."""
ADVICE = (r"(?:my\s+(?:honest\s+|final\s+|short\s+|real\s+)?(?:advice|recommendation|answer|suggestion|take|verdict|vote|"
           r"pick|choice)(?:\s*,\s*(?:though|however|then|still|honestly)\s*,)?)")
_OPENER = r"[\W]*(?:(?:and|so|but|honestly|frankly|personally|unfortunately|sadly)\b[,\s]*)?"
"""What a sentence may open with before its decision: "...and I'd avoid it", "Honestly, not a good idea"."""
_NOW = r"(?:\s+(?:right\s+now|now|yet|for\s+now|for\s+you|to\s+you|at\s+(?:the|this)\s+(?:moment|point|time)))?"
_UNCONDITIONED = r"(?![^.!?\n]*\b(?:if|unless|until|when|but|though|although)\b)"
"""No condition or turn later in the sentence: "I don't see why not, if the numbers work" decides nothing."""
_YES_STATED = [
    rf"\b{ADVICE}\s*(?:is|would\s+be|here)?\s*[:\-—–]?\s*(?:a\s+)?(?:yes|go\s+for\s+it|go\s+ahead|do\s+it)\b",
    rf"^{CONCLUSION}\b[,:\s—–-]*"
    r"(?:the\s+answer\s+is\s+|my\s+answer\s+is\s+|i'?d\s+say\s+)?yes\b",
    r"\bthe\s+(?:short\s+)?answer\s+is\s+(?:a\s+)?(?:clear\s+|qualified\s+)?yes\b",
    r"\bi\s+(?:can'?t|cannot|don'?t)\s+(?:think\s+of|see)\s+(?:a|any)\s+(?:good\s+)?reason\s+(?:why\s+)?"
    r"(?:you\s+shouldn'?t|you\s+should\s+not|not\s+to)\b",
    r"\bi'?d\s+(?:say\s+)?(?:go\s+for\s+it|do\s+it|jump\s+at\s+it)\b|"
    r"\b(?:i'?d|i\s+would)\s+(?:\w+ly\s+)?(?:encourage|urge)\s+you\s+to\s+(?:go\s+for\s+it|do\s+it|go\s+ahead)\b|\bi\s+(?:wouldn'?t|would\s+not)\s+(?:hesitate|think\s+twice)\b",
    r"^(?:so,?\s+)?go\s+ahead\b",
    r"(?:^|\b(?:then|so|just)\s+|[,;:—–]\s*)(?:go\s+for\s+it|go\s+ahead\s+and\b|do\s+it)\b(?!\s+(?:yet|now|later))",
    r"^(?:(?:absolutely|definitely|certainly|of\s+course)[,!]?\s+)?yes\b\s*[,!.:—–]",  # a sentence opening with it
    r"^if\b[^.!?]{3,120},\s*yes\b",  # per case: "If you live near a stop, yes"
    r"^yes\s+(?:for|if|when|unless|as\s+long\s+as)\b|[,;]\s*(?:but\s+)?yes\s+(?:for|if|when|unless)\b",  # per case
    r"^[^.!?:\n]{3,120}:[\s*_]*yes\s*(?:[—–\-,.!:;]|$)",  # a labelled case: "**Retirement money:** Yes — ..."
    r"\bi'?d\s+(?:still\s+|probably\s+)?lean\s+(?:toward|towards)\s+(?:a\s+)?yes\b|"
    r"^no\s+(?:reason\s+(?:not\s+to|to\s+(?:wait|hold\s+off|hesitate|delay))|time\s+like\s+the\s+present|"
    r"harm\s+in\s+(?:just\s+)?(?:trying|asking))\b|\b(?:it'?s|that'?s)\s+a\s+no-?brainer\b",
    r"\bfor\s+you,?\s+(?:it'?s|the\s+answer\s+is)\s+(?:a\s+)?yes\b|\bi\s+think\s+(?:yes|so)\b(?!\s+not)|"
    r"\b(?:i'?d|i\s+would)\s+say\s+yes\b|\bi\s+say\s+(?:yes|go\s+for\s+it|do\s+it)\b",
    rf"^{_PERSONALLY}[,]?\s+i'?d\s+(?:still\s+)?(?:go\s+for\s+it|do\s+it|go\s+ahead)\b",
    rf"^{_PERSONALLY}[,]?\s+yes\b",  # "But yes, take the promotion."
    rf"^(?:(?:there'?s|there\s+is|i\s+see)\s+no\s+reason\s+not\s+to|i\s+(?:don'?t|do\s+not|can'?t|cannot)\s+see\s+why\s+not)\b"
    rf"{_UNCONDITIONED}",  # "There's no reason not to.", "I don't see why not."
]
_NO_STATED = [
    rf"\b{ADVICE}\s*(?:is|would\s+be|here)?\s*[:\-—–]?\s*(?:a\s+)?(?:no\b|not\s+to\b|to\s+(?:wait|hold\s+off|pass|skip)\b|"
    r"to\s+(?:turn\s+(?:it|them|this|that|the\s+\w+)\s+down|decline|say\s+no|walk\s+away)\b|"
    r"don'?t\b|against\b|hold\s+off\b|wait\b|to\s+(?:avoid|steer\s+clear|stay\s+away|resist)\b|not\s+(?:yet|now|right\s+now)\b)",
    rf"^{CONCLUSION}\b[,:\s—–-]*"
    r"(?:the\s+answer\s+is\s+|my\s+answer\s+is\s+|i'?d\s+say\s+)?no\b",
    r"\bthe\s+(?:short\s+)?answer\s+is\s+(?:a\s+)?(?:clear\s+|qualified\s+)?no\b",
    r"\bthere'?s\s+no\s+need\s+to\b",
    rf"^{_PERSONALLY}[,]?\s+(?:[^.!?,]{{1,50}},?\s+){{0,2}}i\s+(?:wouldn'?t|would\s+not)\s+(?!hesitate|think\s+twice)\w+",
    rf"^{_PERSONALLY}[,]?\s+[^.!?]{{1,120}},\s+so\s+i\s+(?:wouldn'?t|would\s+not)\s+(?!hesitate|think\s+twice)\w+",
    rf"^{_PERSONALLY}[,]?\s+(?:[^.!?,]{{1,50}}?,?\s+)?i'?d\s+(?:\w+ly\s+)?(?:advise|recommend)\s+against\b",
    rf"^{_PERSONALLY}[,]?\s+(?:[^.!?]{{1,120}}?,\s+)?i'?d\s+(?:stay\s+put|sit\s+tight|pass)\b",
    r"\bfor\s+you,?\s+(?:it'?s|the\s+answer\s+is)\s+(?:a\s+)?no\b|\bi\s+(?:don'?t|do\s+not)\s+think\s+so\b|"
    r"\b(?:i'?d|i\s+would)\s+say\s+(?:no|pass)\b",
    r"\bi'?d\s+(?:\w+ly\s+)?(?:hold\s+off|wait|pass|skip\s+it|turn\s+(?:it|them|this|that)\s+down|decline)\b",
    r"\bonly\s+as\s+a\s+last\s+resort\b|\bi'?d\s+try\s+(?:hard\s+)?to\s+avoid\s+it\b",
    r"\b(?:i'?d|i\s+would)\s+(?:\w+ly\s+)?(?:advise|recommend)\s+against\s+(?!wait|delay|putting|holding|hesitat)\w+",
    rf"^{_PERSONALLY}[,]?\s+no\b\s*[,!.:—–]",  # "But no, don't drain your cash."
    r"^(?:so,?\s+)?(?:definitely|absolutely|certainly)\s+not\b\s*[.!]",  # "... often turns into months. Definitely not."
    r"^no\b\s*[,!.:—–](?!\s*(?:it'?s|you|one|\d))",
    r"^if\b[^.!?]{3,120},\s*no\b(?!\s+(?:need|reason|harm|problem|worries)\b)",
    r"^no\s+(?:for|if|when|unless|as\s+long\s+as)\b|[,;]\s*(?:but\s+)?no\s+(?:for|if|when|unless)\b",  # per case
    r"^[^.!?:\n]{3,120}:[\s*_]*no\s*(?:[—–\-,.!:;]|$)",  # a labelled case: "**Money you need soon:** No — ..."
    r"\bi'?d\s+(?:still\s+|probably\s+)?lean\s+(?:toward|towards)\s+(?:a\s+)?no\b",
    rf"^{_OPENER}(?:(?:it'?s|that'?s|this\s+is)\s+not|not|i\s+(?:don'?t|do\s+not)\s+think\s+(?:it'?s|that'?s|this\s+is|it\s+is|that\s+is|"
    rf"it\s+would\s+be|that\s+would\s+be))\s+a\s+(?:good|great|wise|smart)\s+(?:idea|move|plan|choice){_NOW}\s*(?:[.!;]|$)",
    rf"^{_OPENER}i(?:'d|\s+would)\s+never\s+(?:recommend|advise|suggest|approve|endorse|do)\s+(?:it|this|that)\b",
    rf"^{_OPENER}i\s+(?:couldn'?t|could\s+not)\s+(?:in\s+good\s+conscience\s+)?(?:recommend|endorse|advise)\s+(?:it|this|that)"
    rf"{_NOW}\s*(?:[.!;]|$)",  # "I couldn't recommend it." (not "I couldn't recommend it more")
    rf"^{_OPENER}i(?:'d|\s+would)\s+(?:\w+ly\s+)?(?:avoid|steer\s+clear\s+of|stay\s+away\s+from)\s+(?:it|this|that|them)\b"
    rf"{_UNCONDITIONED}",  # "...and I'd avoid it."
]


_WISE = (r"the\s+(?:smart|right|best|better|wise|safer)\s+(?:move|call|choice|play|thing\s+to\s+do)\s+(?:here\s+|for\s+you\s+)?"
         r"(?:is|would\s+be)")
"""A decision said as the wise course: "The smart move is to take the job and make the move"."""
STOPWORDS = frozenset("a an the my our your their this that these those to of in on at for with from by or and i we you "
                       "it is be get go take do should would could can one option job offer plan toward towards into put "
                       "money extra some more answer she he they her him us them year years month months week weeks day days "
                       "hour hours time two three four five six".split())
"""Words that say nothing of an option or of the question's object ("put extra money toward ...")."""


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
    objects = [w for w in re.findall(r"[a-z']{4,}", prompt.lower().split("?")[0]) if w not in STOPWORDS][-3:]
    if objects:  # "in your shoes I'd skip the degree" to "Should I go back to school for a master's degree?"
        should.append((0.0, rf"\bi'?d\s+(?:\w+ly\s+)?(?:skip|pass\s+on|avoid|forgo|hold\s+off\s+on|(?:advise|recommend)\s+"
                            rf"against|steer\s+(?:you\s+)?(?:away|clear)\s+from)\s+(?:\w+ing\s+)?(?:the\s+|a\s+|an\s+|your\s+)?(?:\w+\s+)?"
                            rf"(?:{'|'.join(map(re.escape, objects))})\b"))
    if action not in ("stay", "keep", "stick", "remain"):  # "my advice would be to stay in your current job"
        should.append((0.0, rf"\b{ADVICE}\s+(?:is|would\s+be)\s+to\s+(?:stay|keep|stick|remain)\b"))
    if re.match(r"\W*can\s+i\b", prompt, re.IGNORECASE):  # "Can I become a pilot at 35?": "You can."
        should = [(0.0, r"\byou\s+(?:can'?t|cannot|can\s+not)\b"),
                  (1.0, rf"\byou\s+(?:absolutely\s+|definitely\s+|certainly\s+|still\s+)?can(?=\s*(?:[.!,;:—–]|$)|\s+"
                        rf"(?:absolutely|definitely|still|do\s+it|{action or 'do'})\b)"), *should]
    if stem:  # the question's action endorsed or advised against: "I'd lean toward making the move"
        should = [(0.0, rf"\b(?:i'?d|i\s+would)\s+(?:\w+\s+)?(?:recommend|advise|suggest)\s+(?:against|not)\s+"
                        rf"(?:\w+\s+){{0,3}}?{stem}\w*"),
                  (1.0, rf"\b(?:i'?d|i\s+would)\s+(?:\w+\s+)?(?:lean\s+(?:toward|towards)|encourage\s+you\s+to|"
                        rf"urge\s+you\s+to|recommend|suggest)\s+(?!against\b|not\b)(?:\w+\s+){{0,3}}?{stem}\w*"),
                  (1.0, rf"\b{ADVICE}\s+(?:is|would\s+be)\s+to\s+(?:\w+\s+){{0,2}}?{stem}\w*"),
                  (0.0, rf"\bi\s+(?:wouldn'?t|would\s+not)\s+(?!hesitate|think)(?:\w+\s+)?{stem}\w*"),
                  (0.0, rf"\b{_WISE}\s+to\s+(?:not|wait|hold\s+off|avoid|skip|pass)\b"),
                  (1.0, rf"\b{_WISE}\s+to\s+(?:\w+\s+){{0,5}}?{stem}\w*"),
                  (1.0, rf"^no\s+(?:harm|risk)\s+in\s+(?:just\s+)?{stem}\w*ing\b"), *should]
    for sentence in (re.sub(r"[*_`]+", "", s).strip(" #>-") for s in sentences(text)):  # "**No** — keep it"
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
    clauses = [c for s in sentences(text) for c in re.split(r"\s[—–]\s|;\s|,?\s+and\s+", s)]  # "No harm in trying — apply!"
    for sentence in (s.strip(" *_#>`-") for s in clauses):
        if action and action not in ("be", "do", "have", "go"):
            if re.match(rf"(?:so,?\s+|then,?\s+)?(?:please\s+|definitely\s+|i'?d\s+(?:still\s+|definitely\s+)?|"
                        rf"you\s+should\s+(?:still\s+|definitely\s+)?)?{action}\b", sentence, re.IGNORECASE) or \
                    (stem and re.match(rf"(?:i'?d|i\s+would)\s+(?:recommend|suggest)\s+{stem}\w*ing\b", sentence,
                                       re.IGNORECASE)) or \
                    (stem and re.match(rf"(?:so,?\s+|then,?\s+|just\s+)?{_IMPERATIVE}\s+(?:\w+\s+){{0,2}}?{stem}\w*",
                                       sentence, re.IGNORECASE)):
                found.append((1.0, sentence[:40]))
            elif re.match(rf"(?:so,?\s+)?(?:don'?t|do\s+not|never)\s+{action}\b|i\s+(?:wouldn'?t|would\s+not)\s+{action}\b",
                          sentence, re.IGNORECASE):
                found.append((0.0, sentence[:40]))
    return found


_IMPERATIVE = r"(?:send|submit|put|make|file|book|schedule|start|try|give|ask|call|set|sign|hand|turn|fill|write|take)"
"""Verbs that open a sentence telling the user to act ("Send the application." to "Should I apply?")."""
