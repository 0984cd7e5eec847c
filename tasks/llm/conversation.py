"""Conversations through the LLM stage: every turn in order, each with the history before it.

A conversation is a prompt whose text holds several user turns (:mod:`equilens.tasks.turns`). It is
answered in waves: the first turn of every conversation, then the second turn of each with its
first turn and the model's answer to it as history, and so on. Each wave is an ordinary call of the
stage (:func:`equilens.tasks.llm.runner.answer_requests`: the same concurrency, rate limit, retries,
local batching and cache), so a 3-turn conversation costs three calls' worth of client time.

* The answer to the last turn is the conversation's answer: it is the one read and compared, and it
  is cached under the conversation's own key (which covers every turn's text, the system prompt and
  the person's fields). The row keeps every turn's answer (``turns``).
* Each earlier turn is cached under a key of its own, derived from the conversation's key and the
  turn's position, so a conversation interrupted midway resumes at the turn it reached: its answered
  turns come back from the cache, with the same history.
* An application that keeps the history itself (``llm.session``) holds state the cache cannot bring
  back, so its conversations are cached only whole: one cut short starts again from its first turn.
* A turn that fails ends its conversation: the row fails, naming the turn and its error.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import replace

from equilens.tasks.config import LLMConfig
from equilens.tasks.errors import ConfigError
from equilens.tasks.llm.base import LLMRequest, LLMResult, Provider
from equilens.tasks.storage.store import Store
from equilens.tasks.turns import split_turns


def turn_key(conversation_key: str, turn: int) -> str:
    """The cache key of an earlier turn (0-based ``turn``) of the conversation keyed ``conversation_key``."""
    return hashlib.sha256(f"{conversation_key}\x00turn {turn}".encode()).hexdigest()


def run_conversations(
    requests: Sequence[LLMRequest], cfg: LLMConfig, store: Store | None = None, provider: Provider | None = None,
    progress: Callable[[int, int], None] | None = None, answer: Callable[..., list[LLMResult]] | None = None,
) -> list[LLMResult]:
    """One result per request, in request order; a single prompt among them is a conversation of one turn.
    ``answer`` answers one wave of single calls (the stage's own
    :func:`~equilens.tasks.llm.runner.answer_requests`, which calls this module for conversations)."""
    from equilens.tasks.llm.answer_cache import CacheWriter, cached_results, in_order, missing, report_cached, turns_said
    from equilens.tasks.llm.calls import make_provider

    if answer is None:
        raise TypeError("run_conversations needs the stage's answer function")

    done = cached_results(requests, store)  # whole conversations answered before
    report_cached(requests, done, cfg)
    todo = missing(requests, done)
    if not todo:
        return in_order(requests, done)
    turns = {r.cache_key: split_turns(r.prompt) for r in todo}
    provider = provider or make_provider(cfg)
    check_takes_history(provider)
    session = getattr(cfg, "session", None) is not None
    total, offset = sum(len(t) for t in turns.values()), 0
    said: dict[str, list[dict]] = {r.cache_key: [] for r in todo}  # each conversation's turns so far
    origin = {r.cache_key: r for r in todo}

    def wave_progress(finished: int, _wave_total: int) -> None:
        # in the caller's units (one a conversation), moving with every turn answered
        if progress is not None:
            progress(min(len(todo), (offset + finished) * len(todo) // total), len(todo))

    for k in range(max(len(t) for t in turns.values())):
        wave = [_turn(r, turns[r.cache_key], k, said[r.cache_key]) for r in todo
                if k < len(turns[r.cache_key]) and r.cache_key not in done]
        if not wave:
            break
        # a session's earlier turns are neither read from nor written to the cache (the app holds the state)
        wave_store = None if session else store
        # the provider is this function's own, so the wave runs in this process (never client processes,
        # which would rebuild requests without their history)
        for res in answer(wave, cfg, wave_store, provider, wave_progress, report=False):
            key = res.request.conversation or res.request.cache_key
            conv, n = origin[key], len(turns[key])
            if not res.ok:
                done[key] = replace(res, request=conv, error_message=_failed_turn(res, k, n), turns=said[key] or None)
                continue
            said[key] = turns_said(res) or []
            if k == n - 1:
                done[key] = replace(res, request=conv, turns=said[key] or None)
        offset += len(wave)
    if session and store is not None:  # only whole conversations are kept
        writer = CacheWriter(store, cfg)
        for r in todo:
            writer.add(done[r.cache_key])
        writer.flush()
    return in_order(requests, done)


def _turn(conv: LLMRequest, turns: list[str], k: int, said: list[dict]) -> LLMRequest:
    """The request of turn ``k`` of ``conv``: the last turn keeps the conversation's key."""
    if len(turns) == 1:
        return conv
    history = tuple(pair for t in said for pair in (("user", t["user"]), ("assistant", t["answer"])))
    key = conv.cache_key if k == len(turns) - 1 else turn_key(conv.cache_key, k)
    return LLMRequest(turns[k], conv.sample_idx, key, {**conv.meta, "turn": k + 1}, conv.system, conv.user, history,
                      conv.cache_key)


def _failed_turn(res: LLMResult, k: int, n: int) -> str:
    message = res.error_message or res.error_class or "failed"
    return message if n == 1 else f"turn {k + 1} of {n} failed, so the conversation ends there: {message}"


def check_takes_history(provider: Provider) -> None:
    """A provider that cannot carry a conversation's history is refused before any call: one
    registered without a ``history=`` (``histories=``) parameter, or an application whose own
    ``conversation_problem()`` names what is missing (a function without ``messages``, a request
    template with no place for them)."""
    from equilens.tasks.llm.targets import accepts

    method = provider.complete_batch if provider.batched else provider.acomplete
    wanted = "histories" if provider.batched else "history"
    if not accepts(method, wanted):
        raise ConfigError(f"the prompts hold conversations, but provider {provider.name!r} takes no {wanted}= "
                          "(the earlier messages): answer them with a provider that carries a conversation.")
    problem = getattr(provider, "conversation_problem", None)
    said = problem() if callable(problem) else None
    if said:
        raise ConfigError(f"The prompts hold conversations, but {said}")
