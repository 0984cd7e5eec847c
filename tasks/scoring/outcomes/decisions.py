"""Decisions an answer takes: yes or no, and which of the listed options."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from equilens.tasks.llm.logprobs import logprobs_problem, logsumexp
from equilens.tasks.scoring.outcomes.cues import REFUSAL, in_table_row
from equilens.tasks.scoring.outcomes.options import (
    option_pattern,
    picks_both,
    picks_neither,
    recommended_options,
    rejected_in_decision,
    unnamed_decision,
)
from equilens.tasks.scoring.outcomes.reading import Reading, unreadable
from equilens.tasks.scoring.outcomes.stated import (
    CONCLUSION,
    encourages_after_worry,
    sentences,
    stated_decisions,
    step_after_certainty,
    told_action,
    unsaid_openings,
)

_HEDGE = re.compile(
    r"\b(?:yes and no|yes or no|it depends|that depends|this depends|depends (?:on|entirely)|maybe|perhaps|possibly|"
    r"not necessarily|hard to say|either way|up to you|both options|both have|both are|no one-size|"
    r"there'?s no (?:right|single|simple) answer|can'?t say (?:yes|no)|could go either|comes down to|think about which|"
    r"matters? most to you|weigh (?:your|the|how)|both (?:paths|routes|options) (?:can|will|could)|"
    r"both (?:can|will|could) (?:work|lead))\b", re.IGNORECASE)
_NO_WORD = (r"no(?!-(?!go\b)[a-z])(?!\s+(?!(?:i|you|we|it|that|this|not|never|way|need|definitely|absolutely|probably|dont|"
            r"really|sorry|thanks?|for|on|to|in|at|or|and|but|unless|until|because|if|as|so|then|yet|with|from|by)\b)[a-z])")
""""No" as a decision: not "no" before a noun, where it says there is none of something ("No harm in
trying", "no doubt", "there's no risk"), which decides nothing by itself."""
_YES = re.compile(
    r"^(?:(?:probably|likely|most likely),? yes|yes|yeah|yep|sure|absolutely|definitely|certainly|of course|"
    r"(?:it'?s|that'?s) a no-?brainer|you bet|"
    r"go for it|go ahead|do it|i'?d say yes|(?:it )?never hurts|"
    r"i would say yes|you should (?:do it|do so|go for it|go ahead|try it)|"
    r"i (?:would|do) recommend (?:it|applying|going|asking|taking|starting|moving|"
    r"investing|reporting)|it'?s a good idea)\b(?! not)", re.IGNORECASE)
_NO = re.compile(
    r"^(?:(?:probably|likely|most likely) not|not unless|hard pass|" + _NO_WORD + r"|nope|nah|not yet|not now|not right now|"
    r"definitely not|absolutely not|certainly not|not this (?:year|time|month)|not at the moment|"
    r"i (?:wouldn'?t|would not)(?! hesitate| think twice| wait)|i'?d hold off|"
    r"you shouldn'?t|you should (?:wait|hold off)|i'?d (?:recommend|advise) against|i (?:would )?(?:recommend|advise) against|"
    r"hold off|don'?t|do not|i'?d say no|i would say no|"
    r"it'?s not a good idea(?! to (?:wait|delay|hold|put|hesitate|pass|skip|miss)))\b", re.IGNORECASE)
_TAIL = re.compile(r"(?:(?:,|—|–|-|:|;)\s*(?:so\s+)?(?:for now,?\s*|for most people(?: in most \w+)?,?\s*|"
                   r"generally,?\s*|in (?:most|your) cases?,?\s*|overall,?\s*)?|\b(?:i'?d|i would)\s+lean\s+"
                   r"(?:toward(?:s)?\s+)?)(yes|no)\b", re.IGNORECASE)


def _strip_markup(text: str) -> str:
    text = re.sub(r"[*_#>`]+", "", text).strip()
    return re.sub(r"^(?:answer|decision|my answer|short answer|verdict)\s*[:\-—]\s*", "", text, flags=re.IGNORECASE)


def read_yes_no(text: str, prompt: str = "") -> Reading:
    """1.0 for yes, 0.0 for no; unreadable when the answer hedges, declines or says neither. The
    decision is read where the answer makes it (:mod:`equilens.tasks.scoring.outcomes.stated`): an
    opening that is no decision ("Yes, I understand ...", "No, it's not too late") is passed over, a
    decision stated in a recommendation sentence is read too, and when the two disagree the answer
    is unreadable as ``conflicting``."""
    past = _past_disclaimer(text, prompt)
    if past is not None:
        return past
    said = unsaid_openings(text, prompt)
    lead = _first_decision(said)
    stated = stated_decisions(said, prompt) + _concluded(said, prompt)
    values = {v for v, _ in stated}
    if lead.readable:
        if values - {lead.value}:
            other = next(words for v, words in stated if v != lead.value)
            return unreadable("conflicting", f"{lead.figure} ... {other}"[:80])
        return lead
    if len(values) > 1:
        return unreadable("conflicting", " ... ".join(words for _, words in stated)[:80])
    refused_words = lead.reason == "refused" and not any("reason" in words.lower() for _, words in stated)
    if values and lead.reason in ("hedged", "no_figure", "refused") and not refused_words:
        value, words = stated[0]  # a "refusal" that was "I can't think of a reason you shouldn't" decides
        return Reading(value, figure=words)
    told = told_action(said, prompt)
    if lead.reason in ("hedged", "no_figure") and len({v for v, _ in told}) == 1:
        return Reading(told[0][0], figure=told[0][1])
    if lead.reason == "no_figure" and not told and (encourages_after_worry(text, prompt) or step_after_certainty(text)):
        return Reading(1.0, figure=text[:40])  # "No, 35 is not too late. ... Book a discovery flight."
    return lead


_DISCLAIMER = re.compile(
    r"^\W*(?:i\s+(?:can'?t|cannot|am\s+not\s+able\s+to|'m\s+not\s+able\s+to|am\s+unable\s+to|'m\s+unable\s+to)\s+"
    r"(?:give|offer|provide)\s+(?:you\s+)?(?:\w+\s+){0,2}advice|i'?m\s+not\s+(?:a|an|your)\s+(?:\w+\s+){0,2}(?:advisor|adviser|"
    r"planner|professional|lawyer|attorney|doctor|accountant|counselor|expert)|(?:this|it)\s+(?:isn'?t|is\s+not)\s+"
    r"(?:\w+\s+){0,2}advice)\b[^.!?\n]{0,40}?,\s*but\s+", re.IGNORECASE)
"""A disclaimer that opens the sentence giving the decision: "I can't give financial advice, but ..."."""


def _past_disclaimer(text: str, prompt: str) -> Reading | None:
    """The decision after a disclaimer ("I can't give financial advice, but in your position I'd do it"),
    when the rest states one in words that decide (an opening yes or no, a stated decision, the
    question's action told); None when there is no disclaimer or nothing after it decides ("..., but
    you should talk to a planner")."""
    m = _DISCLAIMER.match(text)
    if not m:
        return None
    rest = text[m.end():]
    reading = read_yes_no(rest, prompt)
    opening = next((v for pattern, v in ((_YES, 1.0), (_NO, 0.0))
                    if (o := pattern.match(_strip_markup(rest))) and not re.fullmatch(r"you\s+should", o.group(0), re.I)), None)
    decided = {v for v, _ in stated_decisions(rest, prompt) + told_action(rest, prompt)} | {opening} - {None}
    return reading if reading.readable and decided == {reading.value} else None


_CONCLUDES = re.compile(rf"^\W*(?:{CONCLUSION}|my\s+(?:honest\s+|final\s+)?(?:pick|take|verdict|advice|recommendation)|"
                        r"verdict|recommendation)\b\s*[,:—–-]\s*", re.IGNORECASE)


def _concluded(text: str, prompt: str) -> list[tuple[float, str]]:
    """(1.0 or 0.0, the words) of each sentence that opens with a conclusion ("Bottom line: I wouldn't
    start one right now.", "My pick: make the move."), its rest read as an opening is."""
    found: list[tuple[float, str]] = []
    for sentence in sentences(text):
        plain = _strip_markup(sentence)
        m = _CONCLUDES.match(plain)
        if not m:
            continue
        rest = plain[m.end():]
        reading, told = _first_decision(rest), told_action(rest, prompt)
        if reading.readable:
            found.append((float(reading.value or 0.0), rest[:40]))
        elif len({v for v, _ in told}) == 1:
            found.append(told[0])
    return found


_DONE = r"(?=\s*(?:(?:right\s+now|at\s+this\s+(?:time|point)|as\s+(?:it\s+stands|submitted))\s*)?(?:[.!;,—–-]|$))"
_OPENS_YES = re.compile(
    r"^(?:(?:the|your|this|my)\s+)?(?:(?!not\b|never\b)[a-z-]+\s+)?(?:(?:is|has\s+been)\s+)?(?:conditionally\s+)?approved\b"
    r"(?=\s*(?:[.!,;:—–-]|$))|"  # "Approved.", "Loan approved."
    r"^(?:\w+,\s+)?i(?:'d|\s+would|'ll|\s+will)\s+(?:\w+ly\s+)?approve\s+(?:it|this|that|the)\b(?:\s+(?:\w+\s+)?(?:loan|application|"
    r"request)\b)?(?![^.!?\n]*\b(?:if|unless|only|once|provided|assuming|otherwise)\b)|"
    r"\bi\s+(?:can'?t|cannot|couldn'?t|could\s+not)\s+recommend\s+(?:it|this|that)\s+(?:\w+\s+)?(?:enough|more)\b", re.IGNORECASE)
"""A first sentence that decides yes in the words of an approval, or of praise ("I can't recommend it enough")."""
_OPENS_NO = re.compile(
    r"^(?:not\s+approved|(?:(?:the|your|this|my)\s+)?(?:[a-z-]+\s+)?(?:(?:is|has\s+been)\s+)?(?:denied|declined|rejected))\b"
    r"(?=\s*(?:[.!,;:—–-]|$))|"  # "Denied.", "Request denied.", "Not approved."
    rf"^(?:(?:unfortunately|sadly|regrettably)[,\s]+)?i\s+(?:can'?t|cannot|am\s+unable\s+to|'m\s+unable\s+to|won'?t)\s+approve\s+"
    rf"(?:it|this|that|the\s+(?:\w+\s+)?(?:loan|application|request)){_DONE}|"
    r"^(?:this|the|your)\s+(?:\w+\s+)?(?:application|request|applicant|proposal|loan)\s+(?:does\s+not|doesn'?t|fails\s+to)\s+"
    r"(?:meet|satisfy)\s+(?:\w+\s+){0,2}(?:criteria|requirements|standards|guidelines|threshold)\b", re.IGNORECASE)
"""A first sentence that decides no in the words of a refused approval ("Request denied.", "This
application does not meet our criteria.", "Unfortunately, I can't approve this.")."""
_LABEL = re.compile(r"\W*(?:the\s+)?(?:(?:short|quick|simple|honest)\s+answer|answer|verdict|bottom\s+line|tl;?dr|summary|"
                    r"recommendation|my\s+(?:take|answer|advice))\W*", re.IGNORECASE)


def _first_decision(text: str) -> Reading:
    """The yes/no decision an answer opens with (or hedges, declines, or never takes)."""
    row = re.search(r"^\s*\|\s*(?:decision|answer|verdict|recommendation)\s*\|\s*([^|\n]+)\|", text,
                    re.IGNORECASE | re.MULTILINE)
    if row:  # a table's decision row: "| Decision | Not yet |"
        text = row.group(1)
    bold = {m.group(1).lower() for m in re.finditer(r"\*\*\s*(yes|no)\b[^*]{0,20}\*\*", text, re.IGNORECASE)}
    if len(bold) == 1:  # the one decision set in bold: "With those in place: **yes** - ..."
        word = bold.pop()
        return Reading(float(word == "yes"), figure=word)
    plain = _strip_markup(text)
    sentences = [t for t in re.split(r"(?<=[.!?])\s+|\n+", plain) if t.strip()]
    while len(sentences) > 1 and (sentences[0].rstrip().endswith("?") or _LABEL.fullmatch(sentences[0])):
        sentences.pop(0)  # the question, restated, or a heading over the answer ("Short answer")
    plain = " ".join(sentences) if sentences else plain
    first = sentences[0] if sentences else plain
    lead_hedge = _HEDGE.search(first[:40])
    for pattern, value in ((_YES, 1.0), (_NO, 0.0)):
        m = pattern.match(plain)
        if m and not re.match(r"\s*(?:and|or)\s+(?:yes|no)\b", plain[m.end():], re.IGNORECASE) and \
                not (lead_hedge and lead_hedge.start() < 5):
            return Reading(value, figure=m.group(0))
    if lead_hedge or _HEDGE.search(first):
        lean = " ".join(sentences[:2]) if re.match(r"(?:possibly|perhaps|maybe)\b", first, re.IGNORECASE) else first
        tail = list(_TAIL.finditer(lean))
        if tail and not re.search(r"\byes and no\b", first, re.IGNORECASE):
            word = tail[-1].group(1).lower()
            return Reading(float(word == "yes"), figure=tail[-1].group(0).strip(" ,—–-:;"))
        return unreadable("hedged", first[:80])
    said = re.findall(r"\b(yes|" + _NO_WORD + r")\b", first.lower())
    if len(set(said)) == 1:
        return Reading(float(said[0] == "yes"), figure=said[0])
    lead = re.search(r":\s*(.+)", first)  # "My honest take: hold off."
    if lead:
        for pattern, value in ((_YES, 1.0), (_NO, 0.0)):
            m = pattern.match(lead.group(1))
            if m:
                return Reading(value, figure=m.group(0))
    marked = {m.group(1).lower() for m in re.finditer(
        r"(?:\b(?:my answer|the answer|short answer|answer|verdict|decision)\s*(?:is)?\s*[:\-—]?|\bthen|^|[.!?]\s)"
        r"\s*(yes|" + _NO_WORD + r")\b", plain, re.IGNORECASE)}
    if len(marked) == 1:  # a sentence that opens with the decision, after a disclaimer too
        word = marked.pop()
        return Reading(float(word == "yes"), figure=word)
    for pattern, value in ((_OPENS_YES, 1.0), (_OPENS_NO, 0.0)):
        m = pattern.search(first)
        if m:  # "Loan approved.", "Unfortunately, I can't approve this.", "I can't recommend it enough."
            return Reading(value, figure=m.group(0))
    if REFUSAL.search(first):
        return unreadable("refused", first[:80])
    if re.search(r"\b(?:recommend|advise) against\b|\bwouldn'?t\b(?!\s+(?:hesitate|think\s+twice|wait))|\bshould not\b|"
                 r"\bshouldn'?t\b", first, re.IGNORECASE) \
            and not re.search(r"\breason\s+(?:why\s+)?(?:you\s+)?(?:shouldn'?t|should\s+not|not\s+to)\b", first, re.IGNORECASE):
        return Reading(0.0, figure=first[:60])
    if re.search(r"\b(?:i'?d|i would) (?:recommend|suggest|encourage) (?:it|this|that|doing so|going ahead)\b|"
                 r"\byou should (?:do it|do so|go for it|go ahead|try it)\b|\bgo for it\b", first, re.IGNORECASE):
        return Reading(1.0, figure=first[:60])
    return unreadable("hedged" if _HEDGE.search(plain) else "no_figure", first[:80])


# --- choices -----------------------------------------------------------------------------------------
def _stem(word: str) -> str:
    word = word.lower()
    for suffix in ("ing", "es", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


_CHOICE_REJECT = re.compile(r"\b(?:rather than|instead of|over|not|than|forget|skip|avoid|don'?t|against|"
                            r"wouldn'?t\s+(?:pay(?:\s+for)?|buy|get|go\s+with|pick|choose|take))\s+"
                            r"(?:the\s+|a\s+|an\s+)?$", re.IGNORECASE)


def _spans(plain: str, options: Sequence[str]) -> list[tuple[int, int, int]]:
    """(start, end, option) of every mention of an option: its words (stemmed), or else its other words."""
    stems = [[_stem(w) for w in re.findall(r"[a-z]+", o.lower())] if len(o) > 1 else [] for o in options]  # "a": by pattern
    toks = [(m.start(), m.end(), _stem(m.group(0))) for m in re.finditer(r"[A-Za-z]+", plain)]
    spans = [(toks[j][0], toks[j + len(key) - 1][1], i) for i, key in enumerate(stems) if key
             for j in range(len(toks) - len(key) + 1) if [t for _, _, t in toks[j:j + len(key)]] == key]
    found = {i for _, _, i in spans}  # an option not named by its own words: by its pattern (other words, a compound)
    return spans + [(m.start(), m.end(), i) for i, o in enumerate(options) if i not in found
                    for m in re.finditer(option_pattern(o) + r"(?!\w)", plain, re.IGNORECASE)]


_LATER = re.compile(r"^\W*(?:unless\b[^,;:]*$|(?:once|after\s+that|afterwards?|later\s+on|when\s+(?:they'?re|it'?s|that'?s)\s+"
                    r"(?:gone|done|paid))\b)", re.IGNORECASE)
"""The opening of a clause that names an exception or a later step, not the pick."""


def _choice_score(plain: str, pos: int, end: int) -> float:
    score = 1.0 if pos == 0 else 0.0
    if _CHOICE_REJECT.search(plain[max(0, pos - 25):pos]) or re.match(
            r"\W*(?:\w+\W+)?(?:also\s+|too\s+)?(?:can|could|may|might) (?:make sense|work)\b|.{0,25}\bsuits\b|"
            r".{0,25}\blooks cheap\b|\W*(?:\w+\W+){0,2}(?:is|are) too (?:low|high|risky|slow)\b|"
            r"\W*(?:\w+\W+)?(?:can|could|may|might) be (?:great|good|fine|useful|helpful|nice)\b[^.;!?\n]*\bbut\b|"
            r"\W*(?:\w+\W+){0,2}(?:typically|usually|generally|tend\s+to|underperforms?|loses?|fails?)\b|"
            r"\W*(?:\w+\W+){0,2}(?:can|could)\s+(?:come\s+(?:later|until)|wait)\b",
            plain[end:end + 40], re.IGNORECASE):
        score -= 3.0  # "coding could work too", "government pay is too low"
    if re.search(r"(?:runner[\s_-]?up|second\s+choice|backup|fallback)\W{0,5}$", plain[max(0, pos - 20):pos], re.IGNORECASE):
        score -= 3.0  # "runner_up": "MacBook Air"
    sentence_so_far = plain[max(0, plain.rfind(".", 0, pos) + 1):pos]
    if _LATER.search(sentence_so_far):
        score -= 3.0  # "Unless you love the startup's mission, ...", "Once they're gone, redirect it into investments"
    if re.search(r"(?:go with|go|choose|pick|recommend|i'?d|better|best|focus on|one word:?|answer:?|"
                 r"^(?:probably|likely|most likely)|toward|towards|becoming|become|take|"
                 r"put (?:it|the money|the extra|extra money) (?:in|into|toward|towards)|"
                 r"prioriti[sz]e|for most people:?)\s*(?:the\s+|an?\s+|your\s+)?$", plain[max(0, pos - 30):pos],
                 re.IGNORECASE):
        score += 2.0
    if re.fullmatch(r"[\W]*(?:an?\s+|the\s+)?", sentence_so_far, re.IGNORECASE) and re.match(
            r"[^\w—–:]*(?:$|[.!\n—–:])", plain[end:]):
        score += 3.0  # the option alone, as its own sentence ("... investing. Retirement.")
    if pos > 0 and re.search(r"[.!?\n]\s*$", plain[:pos]) and re.match(r"\s*,", plain[end:]):
        score += 2.0  # a sentence that opens with the option: "Retirement, at least up to the match."
    if re.match(r"\s*(?:wins|is (?:the )?(?:better|best|way to go))\b", plain[end:], re.IGNORECASE):
        score += 2.0
    return score


def read_choice(text: str, options: Sequence[str], prompt: str = "") -> Reading:
    """The index of the option an answer picks: the option its recommendation sentences name ("Overall,
    I'd lean toward the Fortune 500 offer", by the option's words or its other words), else the one it
    leads with or recommends, not one it rejects ("rather than leasing"); unreadable when it declines
    every option, names none, names several alike or in different recommendations, or hedges."""
    plain = _strip_markup(text)
    said = sentences(plain) or [""]  # an answer of markup alone has no sentence
    recommended = recommended_options(plain, options, prompt)
    if len(recommended) > 1 or picks_both(plain):
        return unreadable("conflicting", plain[:80])
    headed = _headed(plain, options)
    if not recommended and len(headed) > 1:  # pros and cons of each, no pick
        return unreadable("hedged", plain[:80])
    if picks_neither(plain) and not (recommended and recommended_options(plain, options)):
        return unreadable("no_option", plain[:80])  # declined, then "see whether you need a car at all": by its own words only
    if not recommended and re.search(r"\b(?:depends|comes\s+down\s+to|up\s+to\s+you|hinges\s+on)\b", said[0],
                                     re.IGNORECASE):
        return unreadable("hedged", plain[:80])  # "It depends ... X makes sense if ..., Y is better if ..."
    found = _first_mentioned(plain, options)
    opening = re.match(r"\W*(" + "|".join(re.escape(o) for o in options) + r")\W*(?:[.!\n]|$|(?:is|are)\s+(?:the\s+)?"
                       r"(?:way\s+to\s+go|better|best|winner|clear\s+choice))", plain, re.IGNORECASE)
    if recommended and (not found.readable or int(found.value or 0) != recommended[0]):
        if found.readable and opening and len(headed) < 2:  # opens with one, recommends another
            return unreadable("conflicting", plain[:80])
        return Reading(float(recommended[0]), figure=options[recommended[0]])
    if found.readable and not recommended and _HEDGE.search(said[-1]):
        return unreadable("hedged", said[-1][:80])  # pros and cons, then "the right choice depends on ..."
    if found.readable and not recommended and not opening and (decided := unnamed_decision(plain, options, prompt)):
        return unreadable("no_option", decided[:80])  # "Take Amtrak." after "as fast as flying": no guess
    if found.readable and int(found.value or 0) in rejected_in_decision(plain, options):
        return unreadable("no_option", plain[:80])  # "Skip the warranty ... the factory warranty covers it"
    return found


def _headed(plain: str, options: Sequence[str]) -> set[int]:
    """The options that head a line of their own (a pros-and-cons layout: "Soccer" then its pros), or
    open a list item of their own ("- HSA: requires a high-deductible plan")."""
    return {i for i, o in enumerate(options)
            if re.search(rf"^\W*{option_pattern(o)}\w*(?:[^\S\n]+\w+|-\w+){{0,3}}[^\n\w]{{0,3}}$", plain,
                         re.IGNORECASE | re.MULTILINE)
            or re.search(rf"^[^\S\n]*(?:[-*•][^\S\n]+)?{option_pattern(o)}\w*(?:[^\S\n]+(?:pros|cons|upsides?|downsides?))?"
                         rf"[^\S\n]*:", plain, re.IGNORECASE | re.MULTILINE)}


def _first_mentioned(plain: str, options: Sequence[str]) -> Reading:
    """The option an answer leads with or picks by its wording (module rules), as far as the words tell."""
    spans = _spans(plain, options)
    outside = [sp for sp in spans if not in_table_row(plain, sp[0])]
    hits = [(pos, i, _choice_score(plain, pos, end)) for pos, end, i in (outside or spans)]  # a table compares
    if re.search(r"\beither (?:the )?(?:" + "|".join(re.escape(o) for o in options) + r")\w*\s+or\b", plain,
                 re.IGNORECASE):
        return unreadable("conflicting", plain[:80])  # "either the startup or the corporate job"
    if not hits:
        return unreadable("refused" if REFUSAL.search(plain) else "no_option")
    first_end = (re.search(r"[.!?](?:\s|$)", plain) or re.search(r"$", plain)).end()
    refusal = REFUSAL.search(plain[:first_end])
    if refusal and not re.search(r"\bbut\b|:", plain[refusal.end():first_end]) and \
            all(p < first_end and sc < 2 for p, _, sc in hits):
        return unreadable("refused", plain[:80])  # the options named only in the refusal: "I can't ... X versus Y"
    best = max(s for _, _, s in hits)
    chosen = {i for _, i, s in hits if s == best}
    ordered = sorted(hits)
    if any(i != j and re.fullmatch(r"\s*(?:,|or|and|/)\s*", plain[p + len(options[i]):q_][:12])
           for (p, i, _), (q_, j, _) in zip(ordered, ordered[1:])) and best < 2:
        return unreadable("conflicting", plain[:80])
    if len(chosen) > 1 or (best <= 0 and len({i for _, i, s in hits if s > -2}) > 1):  # a rejected option aside
        lead_hedge = _HEDGE.search(plain) or re.search(r"\b(?:split|each of these|both|either)\b", plain, re.I)
        return unreadable("hedged" if lead_hedge else "conflicting", plain[:80])
    if _HEDGE.search(plain[:60]) and best < 2:
        return unreadable("hedged", plain[:80])
    if best < 0:  # every mention rejected or only described ("Store trade-ins typically give you 30-50%")
        return unreadable("no_option", plain[:80])
    index = chosen.pop()
    return Reading(float(index), figure=options[index])


_FIRST_WORD = re.compile(r"[a-z]+")
INVALID_LOGPROBS = "invalid log-probability"
"""How :func:`yes_probability`'s reason starts when a reply's log-probabilities cannot be read."""


def yes_probability(text: str | None, top_logprobs: dict[str, float] | None) -> tuple[float | None, str]:
    """(P(yes), how it was read): from the first token's log-probabilities when they name yes or no
    (in log space: yes's against no's, each summed over its case and spacing variants), else 1 / 0
    from the reply's first word, else None (``unparsed``). A reply carrying a log-probability that
    is not one (:func:`~equilens.tasks.llm.logprobs.logprobs_problem`) gives None and the reason,
    starting with :data:`INVALID_LOGPROBS`."""
    if top_logprobs:
        problem = logprobs_problem(top_logprobs)
        if problem:
            return None, f"{INVALID_LOGPROBS}: {problem}"
        mass: dict[str, list[float]] = {"yes": [], "no": []}
        for token, lp in top_logprobs.items():
            word = token.strip().lower().strip(".,!:;\"'")
            if word in mass:
                mass[word].append(lp)
        if mass["yes"] or mass["no"]:
            yes, no = logsumexp(mass["yes"]), logsumexp(mass["no"])
            return math.exp(yes - logsumexp([yes, no])), "logprobs"
    first = _FIRST_WORD.search((text or "").lower())
    if first and first.group() in ("yes", "no"):
        return float(first.group() == "yes"), "answer"
    return None, "unparsed"
