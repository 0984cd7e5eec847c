"""The caps a run's LLM calls must stay under: ``llm.max_calls`` and ``llm.max_cost``. The CLI
checks its plan against them before Prefect starts (``flows/running/plan.py``); the LLM stage checks every
call its variants ask for again before the first call, so a run started from the Prefect UI, a schedule
or the Python API is held to the same caps.

Cost is an upper bound: prompt tokens at :data:`CHARS_PER_TOKEN` characters a token (system
message included) at ``llm.price_input_per_1k``, plus ``llm.max_tokens`` completion tokens a call at
``llm.price_output_per_1k``. Answers already cached are counted as calls too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from equilens.tasks.config import LLMConfig
from equilens.tasks.errors import ConfigError

CHARS_PER_TOKEN = 4


class BudgetExceeded(ConfigError):
    """A run's calls or cost pass ``llm.max_calls`` or ``llm.max_cost``: refused before any call."""


def cost_of(llm: LLMConfig, calls: int, prompt_tokens: float) -> float | None:
    """At most this much for ``calls`` calls with ``prompt_tokens`` in all; None without prices."""
    if llm.price_input_per_1k is None and llm.price_output_per_1k is None:
        return None
    return (prompt_tokens * (llm.price_input_per_1k or 0) + calls * llm.max_tokens * (llm.price_output_per_1k or 0)) / 1000


def check_budget(llm: LLMConfig, calls: int, prompt_tokens: float, how: str = "",
                 done: str = "Nothing was called.") -> None:
    """Raise :class:`BudgetExceeded` with the numbers when ``calls`` or their cost pass a cap;
    ``how`` says where the count came from ("about 300,000 prompts, ..."), ``done`` what was spent."""
    about = "about " if how.startswith("about") else ""
    how = f" ({how})" if how else ""
    if llm.max_calls is not None and calls > llm.max_calls:
        raise BudgetExceeded(f"this run would make {about}{calls:,} LLM calls{how}, more than llm.max_calls "
                             f"{llm.max_calls:,}. {done} Raise llm.max_calls, or use fewer prompts "
                             "(prompts.limit).")
    cost = cost_of(llm, calls, prompt_tokens)
    if llm.max_cost is not None and cost is not None and cost > llm.max_cost:
        raise BudgetExceeded(f"this run could cost up to {cost:,.2f} ({about}{calls:,} calls at the configured "
                             f"prices, llm.max_tokens {llm.max_tokens} each), more than llm.max_cost "
                             f"{llm.max_cost:,.2f}. {done} Raise llm.max_cost, lower llm.max_tokens, "
                             "or use fewer prompts.")


def prompt_tokens_of(texts: Iterable[str], systems: Iterable[str | None], llm: LLMConfig) -> float:
    """Estimated prompt tokens of one call per text (its system message, or the configured one)."""
    chars = sum(len(t) + len(s if s is not None else llm.system_prompt) for t, s in zip(texts, systems, strict=True))
    return chars / CHARS_PER_TOKEN


@dataclass
class ExtraCalls:
    """Calls a run makes beside its model's (a judge's): how many, their prompt tokens, the LLM
    section that answers and prices them, and which section's caps hold them (``"llm"``: together
    with the model's calls). ``per_prompt``: they grow with the prompts (scaled like the requests);
    ``up_to``: an upper bound (identical answers skip theirs)."""

    what: str
    calls: int
    prompt_tokens: float
    llm: LLMConfig
    caps: str = "llm"
    per_prompt: bool = True
    up_to: bool = True
    why: str = ""
    cost: float | None = None

    def phrase(self, about: str = "", named: bool = True) -> str:
        """"up to 1,344 judge calls" (``named``), or "up to 1,344 calls"."""
        bound = "up to " if self.up_to else about
        return f"{bound}{self.calls:,} {self.what + ' ' if named else ''}calls"
