"""A loopback model that answers the shipped identity prompts (``data/identity_prompts.csv``) the way
chat models do, for tests of a whole identity run against the loopback server.

Amounts are phrased as real answers phrase them, in rotation: a plain figure, a range ("$55,000 to
$60,000": its middle), "k" ("around 58k"), the prompt's own figure restated beside the advice
("Given their $60,000 offer, counter with $66,000"), a figure with its period ("$45 an hour"), and
context beside the recommendation ("the average is ..., so ask for ..."). Each answer's amount is
the prompt's typical amount, moved by the user's name (about 6% either way: the name-to-name
spread of a real model at temperature 0) and by ``factor(name)`` (0.7 for a planted 30% lower
amount). Decisions start with yes or no, mostly the prompt's usual answer and, for about one name
in six, the other one; writing and advice are one of a few wordings, some gloomy, picked by the
name. Everything is deterministic: the same request gets the same answer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

AMOUNTS = {  # a phrase of the prompt -> (typical amount, the period its answers name, or "")
    "junior accountant": (58_000, " a year"),
    "data analyst": (74_000, ""),
    "graphic designer": (55, " an hour"),
    "as a nurse": (84_000, " a year"),
    "math tutoring": (45, " an hour"),
    "marketing job": (66_000, ""),
    "wedding photographer": (2_200, " a day"),
    "software developer": (88_000, " a year"),
    "Honda Civic": (13_500, ""),
    "two-bedroom condo": (288_000, ""),
    "laptop": (260, ""),
    "groceries": (420, " a month"),
    "engagement ring": (5_500, ""),
    "monthly rent": (1_400, " a month"),
    "emergency fund": (15_000, ""),
    "credit limit": (1_500, ""),
}
USUAL_NO = ("report my neighbor", "invest my savings", "loan to buy a car")  # decisions usually answered no
WRITING = [
    "Here is a short draft: I am a dedicated professional who loves solving problems and helping people grow.",
    "Sure. I bring energy, care and a steady hand to everything I do, and I would be glad to help your team.",
    "Here's an idea: start small, stay curious, and keep a simple plan so a bad week does not derail you.",
    "Try this: be clear and polite, say what went wrong and what you need, and avoid sounding angry or upset.",
    "A good option: prepare two or three examples, listen carefully, and follow up with a short thank-you note.",
]


def _unit(key: str) -> float:
    """A number in [0, 1) drawn from ``key``."""
    return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) / 16 ** 8


def _money(x: float) -> str:
    return f"${x:,.0f}"


def _nice(x: float) -> float:
    """``x`` rounded the way an answer rounds it: to 2 significant figures, 3 above 10,000."""
    step = 10 ** max(0, len(str(int(x))) - (3 if x >= 10_000 else 2))
    return round(x / step) * step


def amount_answer(prompt: str, name: str, factor: float) -> str:
    """An answer to an amount prompt, for the user ``name``, its amount times ``factor``."""
    typical, period = next(v for k, v in AMOUNTS.items() if k in prompt)
    spread = 1 + 0.12 * (_unit(f"spread|{prompt}|{name}") - 0.5) * 2 ** 0.5  # sd about 5%
    x = _nice(typical * spread * factor)
    style = int(_unit(f"style|{prompt}|{name}") * 6)
    if "60000 dollars" in prompt:  # the prompt's own figure restated beside the advice
        return f"Given their $60,000 offer, I'd counter with {_money(x)}; it leaves room to settle a little lower."
    if "300000 dollars" in prompt:
        return f"Since it is listed at $300,000, offer around {_money(x)} and be ready to negotiate."
    if "50000 dollar" in prompt:
        return f"On a $50,000 salary, aim to keep rent at about {_money(x)}{period} or less."
    if style == 0:
        return f"I'd suggest {_money(x)}{period}."
    if style == 1:
        low, high = _nice(x * 0.95), _nice(x * 1.05)
        return f"Somewhere between {_money(low)} and {_money(high)}{period} is reasonable for you."
    if style == 2 and x >= 10_000:
        return f"Ask for around {x / 1000:g}k{period}; that's in line with the market."
    if style == 3:
        return f"The average is about {_money(_nice(typical * 1.1))}, so I'd go for {_money(x)}{period}."
    if style == 4:
        return f"A fair number would be {_money(x)}{period}, depending on your experience."
    return f"Aim for {_money(x)}{period}."


def decision_answer(prompt: str, name: str) -> str:
    """A yes/no answer: the prompt's usual answer, the other one for about one name in six."""
    usual = not any(k in prompt for k in USUAL_NO)
    says = usual != (_unit(f"flip|{prompt}|{name}") < 1 / 6)
    return ("Yes, if your finances and plans allow it, it can be a good step." if says
            else "No, I would wait until you are on firmer ground.")


def identity_reply(factor: Callable[[str], float]) -> Callable[[dict], str]:
    """The server's reply to an identity variant (the name in the system message, "The user's name is
    X."): amounts times ``factor(name)``."""
    def reply(body: dict) -> str:
        system, prompt = body["messages"][0]["content"], body["messages"][-1]["content"]
        name = system.rsplit(" ", 1)[-1].rstrip(".")
        if "dollar amount" in prompt:
            return amount_answer(prompt, name, factor(name))
        if "yes or no" in prompt:
            return decision_answer(prompt, name)
        return WRITING[int(_unit(f"text|{prompt}|{name}") * len(WRITING))]

    return reply
