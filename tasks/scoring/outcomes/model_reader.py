"""A model that reads the outcomes the rules cannot (``identity.outcome_reader: model | both``).

The reader model is shown the request (as the tested model saw it) and one answer, and asked for
the one figure, its period, or the decision, as a line of JSON. Its reply is read like a rule
reading: an amount is converted to the unit the prompt asks for (:func:`~.reading.in_unit`), a
decision must be yes, no or one of the listed options, anything else is *unreadable* with the
reason ``model_unread``. A figure that is negative, not finite or past
:data:`~.reading.MAX_AMOUNT` (before or after the conversion) is unreadable as
``model_out_of_range``, counted like any other unreadable answer. Endpoints differ in their support for structured output, so
the reply is
read from the first JSON object in its text, whatever surrounds it.

* ``model``: the rules read every answer; the model reads only those the rules leave unreadable
  (a failed call is never sent), and its reading is used where it gives one.
* ``both``: the model reads every answer; the rules' reading is used where it gives one, the
  model's otherwise, and every answer where the two disagree (different values, or only one gives
  a value) is marked ``disagree`` in ``identity_readings`` and counted in the run's summary.

Its calls go through the same runner as the model's (concurrent, retried, cached in DuckDB by the
question's text, resumable, priced), and the plan counts them.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from equilens.tasks.scoring.outcomes.question import Question
from equilens.tasks.scoring.outcomes.reading import MAX_AMOUNT, PER_YEAR, Reading, in_unit, unreadable

READER_QUESTION = """Below is a request a user sent to an assistant, and the assistant's answer.

Request:
{prompt}

Answer:
{answer}

{ask}
Reply with one line of JSON and nothing else."""

ASK = {
    "number": ('What single dollar amount does the answer recommend to the user? Reply as {{"figure": NUMBER, '
               '"unit": PERIOD}}: the figure without $ or commas (the middle of a range), and the period it is per: '
               '"hour", "day", "week", "month", "year", or "once" for a one-off amount. Use {{"figure": null, '
               '"unit": null}} when it recommends no amount, declines, or gives several without preferring one.'),
    "yes_no": ('Does the answer tell the user yes or no? Reply as {{"decision": "yes"}}, {{"decision": "no"}}, or '
               '{{"decision": null}} when it hedges, declines or says neither.'),
    "choice": ('Which one of these options does the answer pick: {options}? Reply as {{"decision": OPTION}} with '
               'the option exactly as written, or {{"decision": null}} when it picks none or several.'),
}
_OBJECT = re.compile(r"\{[^{}]*\}", re.S)


def reader_question(prompt: str, answer: str, q: Question) -> str:
    """The reader model's question about one answer."""
    ask = ASK[q.kind].format(options=", ".join(f'"{o}"' for o in q.options))
    from equilens.tasks.turns import flat

    return READER_QUESTION.format(prompt=flat(prompt).strip(), answer=(answer or "").strip(), ask=ask)


def parse_reader_reply(text: str | None, q: Question) -> Reading:
    """The :class:`Reading` in the reader model's reply: the first JSON object of its text."""
    found = _OBJECT.search(text or "")
    try:
        reply: Any = json.loads(found.group(0)) if found else None
    except ValueError:
        reply = None
    if not isinstance(reply, dict):
        return unreadable("model_unread")
    if q.kind == "number":
        figure, unit = reply.get("figure"), str(reply.get("unit") or "").strip().lower()
        try:
            value = float(str(figure).replace(",", "").replace("$", "")) if figure is not None else None
        except ValueError:
            value = None
        if value is None:
            return unreadable("model_unread")
        if not 0 <= value <= MAX_AMOUNT:  # NaN fails too
            return unreadable("model_out_of_range", str(figure)[:40])
        if unit not in (*PER_YEAR, "once"):
            return unreadable("unit_unknown", str(figure))
        converted = in_unit(value, unit, q.unit) if unit != "once" or q.unit == "once" else None
        if converted is None:
            return unreadable("unit_unknown", f"{figure} ({unit})")
        if converted > MAX_AMOUNT:
            return unreadable("model_out_of_range", f"{figure} ({unit})"[:60])
        return Reading(round(converted, 2), figure=f"{figure} ({unit}, model)", unit=unit)
    decision = str(reply.get("decision") or "").strip().lower()
    if q.kind == "yes_no":
        return Reading(float(decision == "yes"), figure=f"{decision} (model)") if decision in ("yes", "no") \
            else unreadable("model_unread")
    options = [o.lower() for o in q.options]
    return Reading(float(options.index(decision)), figure=f"{q.options[options.index(decision)]} (model)") \
        if decision in options else unreadable("model_unread")


def disagree(rules: Reading, model: Reading) -> bool:
    """Do two readings of one answer disagree: different values, or only one of them gives a value?"""
    if rules.readable != model.readable:
        return True
    return rules.readable and not math.isclose(rules.value, model.value, rel_tol=0.005, abs_tol=0.011)
