"""The words around an amount that tell a recommendation from context: recommendation cues (ask
for, counter with, budget), context cues (income, average, their offer), rejections (too low,
unrealistic), refusals, and the clause an amount sits in."""

from __future__ import annotations

import re

NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"

RECOMMEND = re.compile(
    r"\b(ask(?:ing)?(?: them)?(?: for)?|counter(?:ing)?(?: offer)?(?: with| at)?|come back (?:at|with)|go back with|"
    r"aim(?:ing)? (?:for|at)|target(?:ing)?|offer(?:ing)?|open(?:ing)? (?:at|with|around|roughly|about)|"
    r"start(?:ing)? (?:at|with|around|in)|charge|charging|bill|quote|request(?:ing)?|budget(?:ing)?|spend(?:ing)?|"
    r"set aside|put aside|save|saving|keep (?:it |rent |your rent |(?:your |the )?[a-z]+ (?:[a-z]+ )?(?:payment|budget|spending|"
    r"rent|costs?) )?(?:closer to|at or (?:below|under)|at|around|under|below|to)|"
    r"you can (?:handle|manage)|stick (?:to|with)|"
    r"go (?:with|for)|propose|suggest(?:ing)?|recommend(?:ed)?|i'?d say|i would say|settle on|i'?d put|put|"
    r"list (?:it |them )?(?:at|for|around)|sell (?:it |them )?for|price (?:it |them )?at|expect(?:ing)?|afford|"
    r"rate(?: is)?:|rate of|"
    r"answer|rent(?: of)?|limit(?: of)?|should be|a fair (?:price|ask|rate)|up to|no more than|at most|"
    r"your number|counter-offer|stay (?:near|at|around)|puts? you at|brings? you to|build (?:it )?(?:up )?to|"
    r"grow it to|work up to|belong|plan on|shoot for|float|bid|push back with|park|put down|stay in|"
    r"(?:i'?d|i would)\s+give|cap (?:it |the \w+ |your \w+ )?at|"
    r"land (?:at|around)|settle (?:at|around)|(?:position|place|put) yourself (?:at|around)|"
    r"set (?:your |the |it |a )?(?:rate |price |fee |budget )?(?:at|to)|"
    r"your (?:goal|target)|a (?:realistic|reasonable|sensible|fair) "
    r"(?:figure|number|amount|budget|price|ask|expectation|target)(?: for [^.,;]{0,40})? is)\b",
    re.IGNORECASE)
CONTEXT = re.compile(
    r"\b(income|earn(?:s|ing)?|making|make|salary|gross|take-home|average|median|typical(?:ly)?|usually|most|"
    r"market|ranges?|between|minimum|floor|walk away|worth|valued?|retail|new|msrp|original(?:ly)?|paid|"
    r"listed|listing|list price|asking|their offer|they offered|offered you|initial offer|current(?:ly)?|"
    r"interest|fees?|deposit|down payment|expenses|costs?|equivalent|comes to|works out|sold|runs?|closer to|"
    r"well over|well under|wages?|anywhere|anything|"
    r"roughly equal|translates|some people|others|families|beginners|senior|mid-level|instead|extra|additional|another|"
    r"dealers?|agencies|companies|employers|landlords|lenders|firms|offices)\b", re.IGNORECASE)
REJECT = re.compile(
    r"\b(unrealistic|too (?:high|low|much|little|aggressive)|a stretch|overpric\w*|insult\w*|lowball\w*|"
    r"won'?t|wouldn'?t|would not|don'?t|do not|avoid|rather than|instead of|never|out of (?:reach|range)|forget|"
    r"ignore|not enough|undervalue\w*|would (?:likely )?be seen|would eat|under market|brushed off|no room|"
    r"(?:could|would|might) (?:put you|leave you|hurt|strain|sink)|excessive|overkill|more than you need)\b", re.IGNORECASE)
CLAUSE_END = re.compile(r"[.;!?\n]|\s[—–]\s|\s-\s|,\s(?:but|so|and|or|which|while)\b|\bbut\b")



def line_before(text: str, start: int) -> str:
    """The text of ``start``'s line before it: "| Yearly | " for an amount in a table row, "- " in a list."""
    return text[text.rfind("\n", 0, start) + 1:start]


def in_table_row(text: str, start: int) -> bool:
    """Does ``start`` sit in a markdown table row?"""
    return line_before(text, start).lstrip().startswith("|")


def clause(text: str, start: int, end: int) -> tuple[str, str]:
    """The words of the clause before and after a mention (to the nearest clause boundary)."""
    left = text[:start]
    cut = max((m.end() for m in CLAUSE_END.finditer(left)), default=0)
    right = text[end:]
    stop = CLAUSE_END.search(right)
    return left[cut:], right[: stop.start() if stop else len(right)]



REFUSAL = re.compile(r"\b(?:i can'?t|i cannot|i'?m (?:not able|unable)|i am (?:not able|unable)|as an ai|"
                      r"i don'?t know enough|i'?m sorry)\b", re.IGNORECASE)
