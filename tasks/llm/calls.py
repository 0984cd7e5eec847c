"""One LLM call: the provider for a config, error classification, retries with backoff and
``Retry-After``, the request-rate limit, and the result row of a call (answer or scrubbed failure)."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass

from equilens.tasks.config import LLMConfig
from equilens.tasks.llm.base import (
    ANSWER_CUT,
    PROVIDERS,
    SECRET_REMOVED,
    Completion,
    LLMRequest,
    LLMResult,
    Provider,
    looks_like_refusal,
    scrub_answer,
    scrub_secrets,
)


@dataclass(frozen=True)
class ErrorInfo:
    error_class: str
    retryable: bool
    refusal: bool = False
    retry_after: float | None = None


def classify_error(err: BaseException) -> ErrorInfo:
    """Map an exception from any provider to a recorded error class and a retry decision."""
    import openai

    name = type(err).__name__
    if isinstance(err, (asyncio.TimeoutError, TimeoutError, openai.APITimeoutError)):
        return ErrorInfo("Timeout", True)
    if isinstance(err, openai.RateLimitError):
        return ErrorInfo("RateLimitError", True, retry_after=_retry_after(err))
    if isinstance(err, openai.APIConnectionError):
        return ErrorInfo("ConnectionError", True)
    if isinstance(err, openai.APIStatusError):
        body = err.body if isinstance(err.body, dict) else {}
        code = (body.get("error") or body).get("code") if isinstance(body, dict) else None
        if code == "content_filter" or "content_filter" in str(err).lower():
            return ErrorInfo("ContentFilter", False, refusal=True)
        if err.status_code >= 500:
            return ErrorInfo("ServerError", True, retry_after=_retry_after(err))
        return ErrorInfo(name, err.status_code in (408, 409))
    return _classify_other(err, name)


def _classify_other(err: BaseException, name: str) -> ErrorInfo:
    """Errors of the other providers: an HTTP status on the exception (:class:`EndpointStatusError`,
    the Anthropic SDK, ...), httpx's and other clients' timeouts and dropped connections, a reply of the
    wrong kind from an application (not retried: it would be the same again)."""
    if getattr(err, "retryable", None) is False:
        return ErrorInfo(name, False)
    status = getattr(err, "status_code", None)
    if isinstance(status, int) and status >= 400:
        if status == 429:
            return ErrorInfo("RateLimitError", True, retry_after=_retry_after(err))
        if status >= 500:
            return ErrorInfo("ServerError", True, retry_after=_retry_after(err))
        return ErrorInfo(name, status in (408, 409))
    if "Timeout" in name:
        return ErrorInfo("Timeout", True)
    if "Connect" in name or name in ("RemoteProtocolError", "ReadError", "WriteError"):
        return ErrorInfo("ConnectionError", True)
    return ErrorInfo(name, True)  # malformed replies, an application's own exceptions: usually transient


def _retry_after(err: BaseException) -> float | None:
    response = getattr(err, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


class RateLimiter:
    """Async rate limiter: request starts at least ``1 / rate`` seconds apart, from the first on.

    The gap is measured from the moment the previous caller actually went ahead, and callers wait
    their turn one at a time, so a stalled event loop (imports, a slow disk write) delays the queue
    instead of releasing the waiting calls as a burst when it resumes.
    """

    def __init__(self, rate: float) -> None:
        self.interval = 1.0 / rate
        self._last: float | None = None
        self._lock = asyncio.Lock()

    async def acquire(self) -> None:
        async with self._lock:
            if self._last is not None:
                while (wait := self._last + self.interval - time.monotonic()) > 0:
                    await asyncio.sleep(wait)
            self._last = time.monotonic()


TokenBucket = RateLimiter  # the earlier name


def scrub_message(message: str, secrets: Sequence[str]) -> str:
    return scrub_secrets(message, secrets, limit=500)


def failure_text(err: BaseException, cfg: LLMConfig) -> str:
    """A failed call's message: ``"ClassName: message"``, and for a deadline with no message of its own
    what it was ("no complete reply within 30 s (llm.timeout)": none, or a stream that had not ended)."""
    text = str(err).strip()
    if not text and isinstance(err, (TimeoutError, asyncio.TimeoutError)):
        text = f"no complete reply within {cfg.timeout:g} s (llm.timeout)"
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


MAX_TOKENS_READ = 100_000_000
"""The largest token count read as usage: a count past it (or negative, or not a whole number) is
implausible for one call and is stored as unknown, with a note, never written into an INTEGER column."""


def token_count(value: object) -> int | None:
    """A usage count as stored: a whole number from 0 to :data:`MAX_TOKENS_READ`, else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not (value == value and value.is_integer()):
        return None
    return int(value) if 0 <= value <= MAX_TOKENS_READ else None


def ok_result(req: LLMRequest, comp: Completion, attempts: int, latency: float,
              held: Sequence[str] | None = None) -> LLMResult:
    """The row of an answer. A content filter makes it a refusal; an answer cut at the answer cap
    stays an answer, with ``truncated`` set and an ``error_message`` starting with :data:`ANSWER_CUT`.
    A secret the run holds (a key, an expanded ``${VAR}``) or a key-formatted string is taken out of
    the answer before anything stores or shows it, and ``error_message`` says so (:data:`SECRET_REMOVED`);
    ``held`` is the stage's :func:`~equilens.tasks.llm.base.held_secrets`, read once per stage (default:
    read now)."""
    filtered = comp.finish_reason == "content_filter"
    if comp.text is None and not filtered:
        raise EmptyResponseError("the endpoint returned no message content")
    text, removed = scrub_answer(comp.text or "", held)
    cut = comp.truncated and not filtered
    notes = [f"{ANSWER_CUT} at {len(text):,} characters (llm.max_answer_chars): the endpoint sent more than "
             "max_tokens allows"] if cut else []
    if removed:
        notes.append(f"{SECRET_REMOVED} from the answer (a key or ${{VAR}} value the run sent, or a key-shaped "
                     "string): shown as ***")
    prompt_tokens, completion_tokens = token_count(comp.prompt_tokens), token_count(comp.completion_tokens)
    unread = [f"{k}={v!r}"[:60] for k, v, read in (("prompt_tokens", comp.prompt_tokens, prompt_tokens),
                                                  ("completion_tokens", comp.completion_tokens, completion_tokens))
              if v is not None and read is None]
    if unread:
        notes.append(f"warning: usage unreadable ({', '.join(unread)}): stored as unknown")
    note = "; ".join(notes) or None
    return LLMResult(
        request=req,
        text=text if not filtered or text else None,
        ok=not filtered,
        refusal=filtered or looks_like_refusal(text),
        error_class="ContentFilter" if filtered else None,
        error_message="finish_reason=content_filter" if filtered else note,
        attempts=attempts,
        latency_s=latency,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        top_logprobs=comp.top_logprobs,
        truncated=cut,
        first_token_s=comp.first_token_s,
    )


class EmptyResponseError(RuntimeError):
    """A 200 reply without any message content (e.g. an empty ``choices`` list)."""


async def call_with_retries(
    provider: Provider, req: LLMRequest, cfg: LLMConfig, limiter: RateLimiter | None, secrets: Sequence[str],
    held: Sequence[str] | None = None,
) -> LLMResult:
    attempt = 0
    while True:
        attempt += 1
        if limiter is not None:
            await limiter.acquire()
        t0 = time.perf_counter()
        try:
            own = {} if req.system is None else {"system": req.system}  # providers take them only when set
            if req.user is not None:
                own["user"] = dict(req.user)
            if req.history is not None:
                own["history"] = list(req.history)
                own["conversation"] = req.conversation
            # the whole request, connection to last byte, within llm.timeout; asyncio.timeout runs the
            # call in this task (wait_for would start a task and a timer handle per call)
            async with asyncio.timeout(cfg.timeout):
                comp = await provider.acomplete(req.prompt, req.sample_idx, **own)
            return ok_result(req, comp, attempt, time.perf_counter() - t0, held)
        except asyncio.CancelledError:
            raise
        except Exception as err:  # noqa: BLE001 - every failure is classified and recorded
            info = classify_error(err)
            if not info.retryable or attempt > cfg.max_retries:
                return LLMResult(
                    request=req,
                    text=None,
                    ok=False,
                    refusal=info.refusal,
                    error_class=info.error_class,
                    error_message=scrub_message(failure_text(err, cfg), secrets),
                    attempts=attempt,
                    latency_s=time.perf_counter() - t0,
                )
            backoff = cfg.backoff_base * 2 ** (attempt - 1) * (0.5 + random.random())
            await asyncio.sleep(min(60.0, max(info.retry_after or 0.0, backoff)))


def load_providers() -> None:
    """Register every built-in provider (each module adds its own to :data:`PROVIDERS`)."""
    import equilens.tasks.llm.function_provider  # registers "python"
    import equilens.tasks.llm.http_provider  # registers "http"
    import equilens.tasks.llm.langchain_provider  # registers "langchain"
    import equilens.tasks.llm.local  # registers "local"
    import equilens.tasks.llm.openai_provider  # noqa: F401 - registers "openai" and "azure"


def make_provider(cfg: LLMConfig) -> Provider:
    load_providers()
    return PROVIDERS.get(cfg.provider)(cfg)
