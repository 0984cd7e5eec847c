"""Conversations through the LLM stage: every turn in order, each with the history before it.

A conversation is a prompt whose text holds several user turns (:mod:`equilens.tasks.turns`).

* A provider called one request at a time (an endpoint, an application) answers each conversation
  in one of the stage's call loops (:class:`TurnByTurn`): its turns one after the other, the
  conversations side by side, ``max_concurrency`` at a time, under the same rate limit, retries and
  deadline per turn as any call, so a 3-turn conversation costs about three calls' worth of client
  time (``tests/benchmarks/bench_conversations.py``).
* An in-process model that batches (``local``) answers in waves: the first turn of every
  conversation in its batches, then every second turn with the first and its answer as history,
  and so on, each wave an ordinary call of the stage
  (:func:`equilens.tasks.llm.runner.answer_requests`).
* The answer to the last turn is the conversation's answer: it is the one read and compared, and it
  is cached under the conversation's own key (which covers every turn's text, the system prompt and
  the person's fields). The row keeps every turn's answer (``turns``).
* Each earlier turn is cached under a key of its own, derived from the conversation's key and the
  turn's position, so a conversation interrupted midway resumes at the turn it reached: its answered
  turns come back from the cache, with the same history.
* An application that keeps the history itself (``llm.session``) holds state the cache cannot bring
  back, so its conversations are cached only whole: one cut short starts again from its first turn.
* A turn that fails ends its conversation: the row fails, naming the turn and its error.
* The conversation's calls run in this process, never in client processes (which rebuild requests
  without their history).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from equilens.tasks.config import LLMConfig
from equilens.tasks.errors import ConfigError
from equilens.tasks.llm.answer_cache import cached_results, in_order, missing, report_cached, said_in, turns_said
from equilens.tasks.llm.base import LLMRequest, LLMResult, Provider
from equilens.tasks.llm.calls import call_with_retries, make_provider
from equilens.tasks.storage.store import Store
from equilens.tasks.turns import split_turns


def turn_key(conversation_key: str, turn: int) -> str:
    """The cache key of an earlier turn (0-based ``turn``) of the conversation keyed ``conversation_key``."""
    return hashlib.sha256(f"{conversation_key}\x00turn {turn}".encode()).hexdigest()


def run_conversations(
    requests: Sequence[LLMRequest], cfg: LLMConfig, answer: Callable[..., list[LLMResult]],
    store: Store | None = None, provider: Provider | None = None, progress: Callable[[int, int], None] | None = None,
) -> list[LLMResult]:
    """One result per request, in request order; a single prompt among them is a conversation of one turn.
    ``answer`` answers requests as single calls (the stage's own
    :func:`~equilens.tasks.llm.runner.answer_requests`, which calls this module for conversations)."""
    done = cached_results(requests, store)  # whole conversations answered before
    report_cached(requests, done, cfg)
    todo = missing(requests, done)
    if not todo:
        return in_order(requests, done)
    turns = {r.cache_key: split_turns(r.prompt) for r in todo}
    provider = provider or make_provider(cfg)
    check_takes_history(provider)
    session = getattr(cfg, "session", None) is not None  # the app holds the history: whole conversations only
    before = [] if session or store is None else [
        LLMRequest("", 0, turn_key(r.cache_key, k)) for r in todo for k in range(len(turns[r.cache_key]) - 1)]
    earlier = cached_results(before, store)  # a conversation cut short resumes at the turn it reached
    report_cached(before, earlier, cfg, "earlier turns of the conversations not yet answered")
    if not provider.batched:  # one call loop per conversation, its turns in turn, conversations side by side
        answered = answer(todo, cfg, store, provider, progress, report=False,
                          call=TurnByTurn(turns, earlier, keep=not session and store is not None))
        done.update((r.request.cache_key, r) for r in answered)
        return in_order(requests, done)
    total, offset = sum(len(t) for t in turns.values()), 0
    said: dict[str, list[dict]] = {r.cache_key: [] for r in todo}  # each conversation's turns so far
    history: dict[str, tuple[dict[str, str], ...]] = {r.cache_key: () for r in todo}  # and its messages
    origin = {r.cache_key: r for r in todo}

    def wave_progress(finished: int, _wave_total: int) -> None:
        # in the caller's units (one a conversation), moving with every turn answered
        if progress is not None:
            progress(min(len(todo), (offset + finished) * len(todo) // total), len(todo))

    for k in range(max(len(t) for t in turns.values())):
        wave = [_turn(r, turns[r.cache_key], k, history[r.cache_key]) for r in todo
                if k < len(turns[r.cache_key]) and r.cache_key not in done]
        if not wave:
            break
        for res in answer(wave, cfg, store, provider, wave_progress, report=False):
            key = res.request.conversation or res.request.cache_key
            conv, n = origin[key], len(turns[key])
            if not res.ok:
                done[key] = replace(res, request=conv, error_message=_failed_turn(res, k, n), turns=said[key] or None)
                continue
            said[key], history[key] = turns_said(res) or [], _after(res)
            if k == n - 1:
                done[key] = replace(res, request=conv, turns=said[key] or None)
        offset += len(wave)
    return in_order(requests, done)


class TurnByTurn:
    """How the stage's call loop answers a conversation (a single prompt is one turn): each turn in
    order, with the history before it, an earlier turn the cache holds taken from it (``cached``, by
    turn key) and each earlier turn answered kept in the cache as it comes (``keep``: not for an
    application that holds the history itself, whose state a cache cannot bring back, nor without a
    cache; an earlier turn that is not kept needs no key of its own). The result is the last turn's,
    for the conversation's own request, with every turn in ``turns``."""

    def __init__(self, turns: dict[str, list[str]], cached: dict[str, LLMResult], keep: bool = True) -> None:
        self.turns, self.cached, self.keep = turns, cached, keep

    async def __call__(self, provider: Provider, conv: LLMRequest, cfg: LLMConfig, limiter: Any,
                       secrets: Sequence[str], held: Sequence[str] | None, writer: Any) -> LLMResult:
        turns = self.turns[conv.cache_key]
        n = len(turns)
        if n == 1:
            return await call_with_retries(provider, conv, cfg, limiter, secrets, held)
        history: tuple[dict[str, str], ...] = ()
        res: LLMResult | None = None
        for k in range(n):
            req = _turn(conv, turns, k, history, keyed=self.keep or bool(self.cached))
            hit = self.cached.get(req.cache_key) if k < n - 1 else None
            if hit is not None:
                res = replace(hit, request=req)
            else:
                res = await call_with_retries(provider, req, cfg, limiter, secrets, held)
                if k < n - 1 and self.keep:
                    writer.keep(res)
            if not res.ok:  # the turns said are those before this one
                return replace(res, request=conv, error_message=_failed_turn(res, k, n), turns=said_in(history) or None)
            if k < n - 1:
                history = _after(res)
        assert res is not None  # a conversation has a turn
        res.turns = turns_said(res)  # the last turn's result is this call's own (a cache hit is a copy)
        res.request = conv
        return res


def _turn(conv: LLMRequest, turns: list[str], k: int, history: tuple[dict[str, str], ...],
          keyed: bool = True) -> LLMRequest:
    """The request of turn ``k`` of ``conv`` after the messages ``history``: the last turn keeps the
    conversation's key, an earlier one has its own (``keyed``) or, where no cache sees it, the
    conversation's too."""
    if len(turns) == 1:
        return conv
    key = conv.cache_key if k == len(turns) - 1 or not keyed else turn_key(conv.cache_key, k)
    return LLMRequest(turns[k], conv.sample_idx, key, conv.meta, conv.system, conv.user, history, conv.cache_key)


def _after(res: LLMResult) -> tuple[dict[str, str], ...]:
    """The history of the turn after ``res``'s: its own history, its turn and the answer to it (the
    earlier messages are the same objects, each built once)."""
    return (*(res.request.history or ()), {"role": "user", "content": res.request.prompt},
            {"role": "assistant", "content": res.text or ""})


def _failed_turn(res: LLMResult, k: int, n: int) -> str:
    message = res.error_message or res.error_class or "failed"
    return message if n == 1 else f"turn {k + 1} of {n} failed, so the conversation ends there: {message}"


FAILED_TURN = re.compile(r"turn \d+ of \d+ failed, so the conversation ends there: ")
"""How a failed conversation's message starts (:func:`_failed_turn`)."""


CONVERSATIONS = "The calls are conversations (the prompts' turns, or an identity told in the conversation)"


def check_takes_history(provider: Provider) -> None:
    """A provider that cannot carry a conversation's history is refused before any call: one
    registered without a ``history=`` (``histories=``) parameter, or an application whose own
    ``conversation_problem()`` names what is missing (a function without ``messages``, a request
    template with no place for them)."""
    from equilens.tasks.llm.targets import accepts

    method = provider.complete_batch if provider.batched else provider.acomplete
    wanted = "histories" if provider.batched else "history"
    if not accepts(method, wanted):
        raise ConfigError(f"{CONVERSATIONS}, but provider {provider.name!r} takes no "
                          f"{wanted}= (the earlier messages): answer them with a provider that carries a conversation.")
    problem = getattr(provider, "conversation_problem", None)
    said = problem() if callable(problem) else None
    if said:
        raise ConfigError(f"{CONVERSATIONS}, but {said}")
