"""A conversation as one prompt text: its user turns joined by :data:`TURN_BREAK`.

Every stage before the LLM (the FTU check, counterfactual expansion, identity placements) works on
the joined text as on any prompt, so a name told in the first turn is found and swapped there; only
the LLM stage (:mod:`equilens.tasks.llm.conversation`) splits it and sends the turns in order, each
with the history of the turns before it and the model's answers to them. The marker is a line of its
own holding the asterism (U+2042), which reads as a break in reports and occurs in no ordinary prompt.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

TURN_MARK = "\u2042"
TURN_BREAK = f"\n\n{TURN_MARK}\n\n"
_SPLIT = re.compile(r"\s*\u2042\s*")


def join_turns(turns: Sequence[str]) -> str:
    """The prompt text of a conversation whose user turns are ``turns`` (one turn: the turn itself)."""
    return TURN_BREAK.join(t.strip() for t in turns)


def split_turns(text: str) -> list[str]:
    """The user turns of a prompt text (a single prompt is one turn)."""
    if TURN_MARK not in text:
        return [text]
    return _SPLIT.split(text.strip())


def is_conversation(text: str) -> bool:
    return TURN_MARK in text


def last_turn(text: str) -> str:
    """The turn whose answer is read: the last one (the prompt itself for a single prompt)."""
    return split_turns(text)[-1]


def flat(text: str) -> str:
    """The turns of a prompt text as plain paragraphs (no marker), for a prompt shown inside another
    model's question (a judge's, an outcome reader's), which must stay one message."""
    return "\n\n".join(split_turns(text))


def unfit_prompt(items: list) -> tuple[int, int | None, object] | None:
    """The first inline prompt that is neither text nor a list of texts: (its place, the place of its
    first turn that is not text or None, the value at fault), counted from 1; None when all fit."""
    for i, item in enumerate(items, start=1):
        if not isinstance(item, list):
            if not isinstance(item, str):
                return i, None, item
        elif (k := next((k for k, t in enumerate(item, start=1) if not isinstance(t, str)), None)) is not None:
            return i, k, item[k - 1]
    return None
