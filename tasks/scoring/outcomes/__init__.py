"""Reading the outcome of an answer as a careful person reads it: the amount it recommends, its
yes/no decision, or the option it picks, given the prompt it answers.

A person does not take the first number of an answer. They skip the figures the prompt itself gave
("given their $72,000 offer"), context ("with a $70,000 income"), figures the answer rejects
("$900,000 would be unrealistic"), years, mileages and durations; they take a range's middle,
convert the amount to the period the prompt asks for, and resolve "10% above their offer" against
the offer. This module does the same with rules:

* The **question** (:func:`question_of`): the unit the prompt asks for (hour, day, week, month,
  year, or ``once`` for a one-off price), from an explicit ``number: hour`` outcome or the prompt's
  words, and the prompt's own figures (*anchors*), each with its unit.
* The **mentions** of an answer: amounts (digits, ``k``/``million``/``grand`` suffixes, numbers in
  words), ranges (their midpoint), percentages, each with the period written beside it.
* Each amount is **scored** by the words of its clause: recommendation cues (ask for, counter with,
  offer, charge, budget, aim for, set aside, ...) raise it; context cues (income, average,
  typically, their offer, ...) and rejections (too low, unrealistic, don't, instead of) lower it;
  restated anchors, years and non-money quantities are not candidates at all. The best-scored
  amount is converted to the prompt's unit (1 year = 12 months = 52 weeks = 260 days = 2,080
  hours; 1 day = 8 hours), preferring a figure the answer already gives in that unit.
* A relative recommendation ("10% above the offer", "30% of your income") resolves against the
  prompt's anchor, converted to the prompt's unit; with no anchor it is unreadable.

Nothing is guessed: an answer with no figure, a refusal, an amount whose period cannot be told, two
recommendations with nothing to prefer one, and a hedged decision ("yes and no", "it depends") are
each *unreadable with a reason* (:data:`REASONS`). The conventions, and a labelled set of answers to
measure a reader on, are in ``docs/outcome_reading.md`` and ``data/outcome_readings.csv``.
"""

from __future__ import annotations

import re

from equilens.tasks.scoring.outcomes.amounts import read_amount
from equilens.tasks.scoring.outcomes.decisions import read_choice, read_yes_no
from equilens.tasks.scoring.outcomes.marked import before_conclusion, concluded, structured
from equilens.tasks.scoring.outcomes.options import recommended_options
from equilens.tasks.scoring.outcomes.question import Question, question_of
from equilens.tasks.scoring.outcomes.reading import PER_YEAR, REASONS, UNITS, Reading, unreadable

__all__ = ["PER_YEAR", "REASONS", "UNITS", "Question", "Reading", "question_of", "read_amount", "read_choice",
           "read_outcome", "read_yes_no"]


def read_outcome(text: str | None, q: Question) -> Reading:
    """One answer's :class:`Reading` for the question ``q`` (built with :func:`question_of`): a
    structured reply by its recommendation field, an answer with a marked conclusion ("Final answer:
    ...") by that line where it can be read alone, else the whole answer."""
    if text is None or not str(text).strip():
        return unreadable("no_figure")
    for marked in (structured, concluded):
        reading = marked(str(text), q, _read_whole)
        if reading is not None:
            return _against_the_rest(str(text), q, reading) if marked is concluded else reading
    return _read_whole(str(text), q)


def _against_the_rest(text: str, q: Question, reading: Reading) -> Reading:
    """A marked conclusion's ``reading``, unless the rest of the answer decides otherwise: then the
    answer is ``conflicting`` (wrong is worse than unreadable)."""
    if q.kind == "yes_no":
        whole = _read_whole(text, q)  # "Yes! ... Bottom line: I wouldn't"
        if whole.reason == "conflicting" or (whole.readable and whole.value != reading.value):
            return unreadable("conflicting", f"{whole.figure or ''} ... {reading.figure or ''}"[:80])
    elif q.kind == "choice":
        if set(recommended_options(text, q.options, q.prompt)) - {int(reading.value or 0)}:
            return unreadable("conflicting", text[:80])  # "Start with the gym. ... In short: buy the home setup."
    elif q.kind == "number" and reading.value:
        before = before_conclusion(text)
        worked = re.search(r"\bstep|\blet'?s\b|\bthink|[=→×]", before, re.IGNORECASE)  # a worked answer, then its result
        last = not text[len(before):].strip().count("\n")  # the marked line ends the answer
        earlier = read_amount(before, q) if last and not worked else None  # "Go with $50 an hour. ... Recommended rate: $40"
        if earlier is not None and earlier.readable and abs((earlier.value or 0.0) - reading.value) > 0.005 * reading.value:
            return unreadable("conflicting", f"{earlier.figure or ''} ... {reading.figure or ''}"[:80])
    return reading


def _read_whole(text: str, q: Question) -> Reading:
    if q.kind == "number":
        return read_amount(str(text), q)
    if q.kind == "yes_no":
        return read_yes_no(str(text), q.prompt)
    return read_choice(str(text), q.options, q.prompt)
