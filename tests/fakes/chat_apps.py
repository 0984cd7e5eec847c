"""Chat applications that see a whole conversation, for the tests of conversations as the unit of
test: each takes ``messages`` (the conversation so far, this turn last) and records what it got."""

from __future__ import annotations

import hashlib
import re
import threading
from typing import Any

CALLS: list[dict[str, Any]] = []
_LOCK = threading.Lock()
FAIL_ONCE: set[str] = set()  # turns (their text) that fail the first time they are asked


def reset() -> None:
    with _LOCK:
        CALLS.clear()
        FAIL_ONCE.clear()


def remembers(prompt: str, messages: list[dict] | None = None) -> str:
    """Answers with how many messages it saw and the first thing the user said."""
    with _LOCK:
        CALLS.append({"prompt": prompt, "messages": messages})
        if prompt in FAIL_ONCE:
            FAIL_ONCE.discard(prompt)
            raise RuntimeError(f"the app fell over on {prompt!r}")
    first = (messages or [{"content": prompt}])[0]["content"]
    return f"{len(messages or [])} messages; you first said: {first}"


def rewrites(prompt: str, messages: list[dict] | None = None, history: list[dict] | None = None) -> str:
    """Records what it was given, then edits the messages it got in place (upper case), as an
    application that normalises its input might."""
    given = messages if messages is not None else [*(history or []), {"role": "user", "content": prompt}]
    with _LOCK:
        CALLS.append({"prompt": prompt, "messages": [dict(m) for m in given]})
    for message in given:
        message["content"] = message["content"].upper()
    return f"answer to {prompt}"


def no_messages(prompt: str) -> str:
    return f"single: {prompt}"


_NAME = re.compile(r"\bmy name is ([A-Z][a-z]+)", re.IGNORECASE)


def banker(prompt: str, messages: list[dict] | None = None, lowered: frozenset[str] = frozenset(),
           from_turn: int = 1) -> str:
    """A salary adviser that reads the user's name from what they said earlier in the conversation
    (never from this turn) and offers 10% less to the first names in ``lowered``, from the user's
    ``from_turn``-th message on."""
    earlier = " ".join(m["content"] for m in (messages or [])[:-1] if m["role"] == "user")
    found = _NAME.search(earlier)
    name = found.group(1) if found else ""
    with _LOCK:
        CALLS.append({"prompt": prompt, "name": name, "turns": len(messages or [])})
    if not re.search(r"salary|pay|offer|amount|how much", prompt, re.IGNORECASE):
        return "Happy to help with that. What would you like to know?"
    jitter = int(hashlib.sha256(f"{name}|{prompt}".encode()).hexdigest()[:4], 16) % 5 - 2  # -2..2 percent
    turn = sum(m["role"] == "user" for m in messages or [])
    low = name in lowered and turn >= from_turn
    amount = (60_000 + 1_000 * len(prompt) % 20_000) * (1 + jitter / 100) * (0.9 if low else 1.0)
    return f"I'd ask for ${amount:,.0f} a year."


def loan_officer(prompt: str, messages: list[dict] | None = None) -> str:
    """Approves whoever said, earlier in the conversation, that they are a woman; denies the rest."""
    earlier = " ".join(m["content"] for m in (messages or [])[:-1] if m["role"] == "user")
    with _LOCK:
        CALLS.append({"prompt": prompt, "messages": messages})
    return "Approve." if "a woman" in earlier else "Deny."
