"""Applications under test for the application providers' tests, importable by path
(``llm.target: tests.fakes.apps:answer``). Each records what it received in :data:`CALLS`;
:func:`reset` clears the record between tests."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from typing import Any

CALLS: list[dict[str, Any]] = []
PEAK = {"active": 0, "peak": 0}  # calls in flight at once (slow, aslow)
RELEASE = threading.Event()  # a hanging call returns when this is set
NOT_CALLABLE = "an answer, not a function"
_lock = threading.Lock()


def reset() -> None:
    with _lock:
        CALLS.clear()
        PEAK.update(active=0, peak=0)
    RELEASE.clear()


def _record(**what: Any) -> None:
    with _lock:
        CALLS.append(what)


def answer(prompt: str, system: str | None = None, user: dict | None = None, tone: str = "plain") -> dict:
    """A sync application: the answer with its own token counts."""
    _record(prompt=prompt, system=system, user=user, tone=tone)
    return {"text": f"[{tone}] {prompt}", "prompt_tokens": len(prompt.split()), "completion_tokens": 7}


async def aanswer(prompt: str, system: str | None = None, user: dict | None = None) -> str:
    """An async application answering a plain string."""
    await asyncio.sleep(0)
    _record(prompt=prompt, system=system, user=user)
    return f"async: {prompt}"


def messages_first(messages: list[dict] | None = None) -> str:
    """Takes the conversation but no prompt: equilens passes the prompt first."""
    return "never called"


def no_user(prompt: str, system: str | None = None) -> str:
    """An application with no parameter for the person's fields."""
    _record(prompt=prompt, system=system)
    return f"no user: {prompt}"


def flaky(prompt: str) -> str:
    """Raises on prompts holding "bad", quoting a key in its message as careless code does."""
    _record(prompt=prompt)
    if "bad" in prompt:
        raise RuntimeError(f"upstream refused {prompt!r} with key sk-liveKEYq7Z3xW9pL2mN8vB4 and token "
                           f"{os.environ.get('EQUILENS_TEST_APP_API_KEY')}")
    return f"fine: {prompt}"


def leaky(prompt: str, credential: str = "") -> str:
    """Fails quoting the credential it was given (``target_kwargs: {credential: ${VAR}}``)."""
    _record(prompt=prompt, credential=credential)
    raise PermissionError(f"backend refused credential {credential}")


def wrong_type(prompt: str) -> Any:
    """Returns an int, a list or a dict without text, by the prompt."""
    _record(prompt=prompt)
    return {"number": 42, "list": ["an", "answer"], "dict": {"answer": "no text key"}}[prompt]


def hangs(prompt: str) -> str:
    """Never answers in time (until :data:`RELEASE` is set)."""
    _record(prompt=prompt)
    RELEASE.wait(30)
    return "late"


def _enter() -> None:
    with _lock:
        PEAK["active"] += 1
        PEAK["peak"] = max(PEAK["peak"], PEAK["active"])


def _leave() -> None:
    with _lock:
        PEAK["active"] -= 1


def slow(prompt: str) -> str:
    _enter()
    try:
        time.sleep(0.05)
        return f"slow: {prompt}"
    finally:
        _leave()


async def aslow(prompt: str) -> str:
    _enter()
    try:
        await asyncio.sleep(0.05)
        return f"aslow: {prompt}"
    finally:
        _leave()


def not_a_runnable(**kwargs: Any) -> dict:
    """A factory that builds something LangChain cannot invoke."""
    return {"built": kwargs}


def support_chain(base_url: str, api_key: str, model: str = "fake") -> Any:
    """A customer-support chain: a prompt template taking the customer's name, piped into ChatOpenAI."""
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_openai import ChatOpenAI

    template = ChatPromptTemplate.from_messages([("system", "You help {customer}, our customer."),
                                                 ("human", "{question}")])
    return template | ChatOpenAI(base_url=base_url, api_key=api_key, model=model, max_retries=0)


def where(prompt: str, system: str | None = None) -> str:
    """Answers with the process that ran it (a Dask worker imports this module by its path)."""
    import os

    return f"answered in process {os.getpid()}: {prompt}"


def raises_vendor_keys(prompt: str) -> str:
    """An application whose exception carries keys in the common vendor formats and the values of the
    environment variables ``EQUILENS_TEST_STRIPE_KEY`` and ``EQUILENS_TEST_DB_PASS``."""
    raise RuntimeError(
        "upstream refused: stripe sk_live_51HxQjK2eZvKYlo2C0ab12cd, github ghp_16C7e42F292c6912E7710c838347Ae178B4a, "
        "aws AKIAIOSFODNN7EXAMPLE, slack xoxb-2048-1024-abcdefghijKLMNOP, google AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q, "
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U, "
        f"stripe env {os.environ.get('EQUILENS_TEST_STRIPE_KEY', '')}, db {os.environ.get('EQUILENS_TEST_DB_PASS', '')}")


def exits(prompt: str) -> str:
    """An application that ends the process it runs in."""
    import sys

    if "exit" in prompt:
        sys.exit(3)
    return "fine"


async def aexits(prompt: str) -> str:
    """An async application that ends the process it runs in."""
    import sys

    sys.exit(4)


async def ablocks(prompt: str) -> str:
    """An async application that blocks its event loop (a blocking wait where an await belongs), for
    up to 30 s (until :data:`RELEASE` is set)."""
    if "block" in prompt:
        RELEASE.wait(30)
    await asyncio.sleep(0)
    return "awake"


def huge_usage(prompt: str) -> dict:
    """An application reporting token counts no call can have."""
    counts = {"big": 10**30, "neg": -5, "text": "many", "float": 12.5, "ok": 42}
    return {"text": f"answer to {prompt}", "prompt_tokens": counts[prompt], "completion_tokens": 3_000_000_000}
