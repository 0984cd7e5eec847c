"""The LLM stage engine: cache lookup, concurrent calls, retries, per-row failures, persistence.

* Every request has a cache key (provider, model, endpoint, parameters, system prompt, prompt,
  sample index; for an application, what stands for its version: :mod:`equilens.tasks.llm.reuse`).
  Before the first call the stage says how many answers come from the cache and why. Successful
  responses are written to DuckDB's ``response_cache`` as they arrive (flushed every half second,
  off the event loop), so a killed run that restarts pays only for the calls it had not finished,
  and a re-run with other metric settings makes no call at all.
* Remote providers run ``max_concurrency`` calls at once under an optional rate limit that holds
  from the first request on. Each attempt has a whole-request deadline (``llm.timeout``). Rate
  limits, server errors, timeouts and malformed replies are retried with exponential backoff and
  jitter (``Retry-After`` honoured); what still fails is returned as a failed row with its error
  class and a scrubbed message (:mod:`equilens.tasks.llm.calls`). Nothing is dropped.
* Calls go out in :func:`call_order`: all groups of one (prompt, sample) next to each other, so a
  server lost mid-run leaves complete rows to compare rather than scattered answers.
* ``max_concurrency`` call loops share one iterator over the requests (no coroutine per request), in
  one process, or for big runs in several client processes (:mod:`equilens.tasks.llm.parallel`,
  ``llm.client_processes``) that share one rate limit and send their answers to this process's one
  cache writer.
* In-process providers get length-sorted batches instead.
* A stop request (Ctrl-C, SIGTERM: :mod:`equilens.tasks.llm.stop`) wakes the stage at once: calls in flight are
  cancelled (a local batch stops between tokens and is dropped), the answers already in hand are
  flushed to the cache, and :class:`~equilens.tasks.llm.stop.RunInterrupted` is raised. While the loop runs
  in the main thread, SIGINT and SIGTERM only request that stop (:func:`~equilens.tasks.llm.stop.signals_as_stop_requests`).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable, Sequence

from equilens.tasks.config import LLMConfig
from equilens.tasks.llm.answer_cache import (
    CacheWriter,
    cached_results,
    in_order,
    missing,
    report_cached,
)
from equilens.tasks.llm.base import LLMRequest, LLMResult, Provider, held_secrets, secret_values
from equilens.tasks.llm.calls import (
    RateLimiter,
    call_with_retries,
    classify_error,
    make_provider,
    ok_result,
    scrub_message,
)
from equilens.tasks.llm.first_calls import FirstCalls
from equilens.tasks.llm.loops import Loops
from equilens.tasks.llm.stop import (
    RunInterrupted,
    on_stop,
    raise_if_stopped,
    signals_as_stop_requests,
    stop_requested,
    wait_for_stop,
)
from equilens.tasks.storage.store import Store

ProgressFn = Callable[[int, int], None]
HAND_OVER_S = 0.5  # how often the concurrent loop hands answers to the cache writer and the progress bar


CallFn = Callable[..., Awaitable[LLMResult]]
"""How one request is answered: :func:`~equilens.tasks.llm.calls.call_with_retries`, or for a
conversation all its turns in turn (:class:`equilens.tasks.llm.conversation.TurnByTurn`), called as
``call(provider, req, cfg, limiter, secrets, held, writer)``."""


async def _run_concurrent(
    provider: Provider, todo: Sequence[LLMRequest], cfg: LLMConfig, writer: CacheWriter,
    on_result: Callable[[LLMResult], None], secrets: Sequence[str], held: Sequence[str] | None = None,
    call: CallFn | None = None,
) -> None:
    """``max_concurrency`` call loops take the requests in call order from one shared iterator, so the
    number of coroutines is bounded whatever the run's size."""
    limiter = RateLimiter(cfg.rate_limit) if cfg.rate_limit else None
    order = iter(call_order(todo))
    answered: list[LLMResult] = []
    closing = False
    first = FirstCalls(cfg, len(todo))  # a wrong key, URL or reply path stops the stage after a handful

    async def calls() -> None:
        for req in order:  # each loop takes the next request not yet started
            if closing or first.failed or stop_requested():  # no new call once the stage closes or must stop
                return
            res = await (call_with_retries(provider, req, cfg, limiter, secrets, held) if call is None
                         else call(provider, req, cfg, limiter, secrets, held, writer))
            answered.append(res)
            first.add(res)  # the first calls all failing alike raise here, and no loop starts another

    def hand_over() -> None:
        batch = answered[:]
        del answered[:]
        for res in batch:
            writer.add(res)
            on_result(res)

    try:
        aopen = getattr(provider, "aopen", None)
        if aopen is not None:  # imports and client set-up before the first call is timed or paced
            await aopen()
        raise_if_stopped("before the first LLM call")
        loops = Loops(asyncio.ensure_future(calls()) for _ in range(min(cfg.max_concurrency, len(todo))))
        loop = asyncio.get_running_loop()
        unhook = on_stop(lambda _signum: loop.call_soon_threadsafe(loops.wake))  # seen at once, even while calls hang
        if stop_requested():  # asked before the hook was in place
            loops.wake()
        try:
            while loops.running:
                for fut in await loops.ended(HAND_OVER_S):
                    fut.result()
                hand_over()
                if stop_requested():
                    raise_if_stopped(f"with {len(todo) - writer.seen} LLM calls not finished")
                if writer.due:  # a DuckDB write (maybe waiting for another run's lock) off the loop
                    await asyncio.to_thread(writer.flush)
        finally:
            unhook()
            closing = True
            for fut in loops.running:
                fut.cancel()
            await asyncio.gather(*loops.running, return_exceptions=True)
            for res in answered:  # answers that came in with the stop: cached, not reported
                writer.add(res)
    finally:
        try:
            writer.flush()
        finally:  # a write that failed (a full disk) still closes the connections
            await provider.aclose()


def _run_batched(
    provider: Provider, todo: Sequence[LLMRequest], cfg: LLMConfig, writer: CacheWriter,
    on_result: Callable[[LLMResult], None], secrets: Sequence[str], held: Sequence[str] | None = None,
) -> None:
    order = sorted(todo, key=lambda r: len(r.prompt))
    try:
        for start in range(0, len(order), cfg.batch_size):
            batch = order[start : start + cfg.batch_size]
            attempt = 0
            while True:
                attempt += 1
                raise_if_stopped(f"after {start} of {len(order)} local generations")
                t0 = time.perf_counter()
                try:
                    systems = [r.system for r in batch]  # passed only when some call has its own
                    own: dict = {"systems": systems} if any(s is not None for s in systems) else {}
                    if any(r.history is not None for r in batch):  # a conversation's turns
                        own["histories"] = [None if r.history is None else list(r.history) for r in batch]
                    comps = provider.complete_batch([r.prompt for r in batch], [r.sample_idx for r in batch], **own)
                    raise_if_stopped(f"after {start} of {len(order)} local generations")  # a cut batch is dropped
                    per_row = (time.perf_counter() - t0) / len(batch)
                    results = [ok_result(r, c, attempt, per_row, held) for r, c in zip(batch, comps, strict=True)]
                    break
                except RunInterrupted:
                    raise
                except Exception as err:  # noqa: BLE001 - recorded per row below
                    info = classify_error(err)
                    if attempt > cfg.max_retries or not info.retryable:
                        msg = scrub_message(f"{type(err).__name__}: {err}", secrets)
                        results = [
                            LLMResult(r, None, False, info.refusal, info.error_class, msg, attempt)
                            for r in batch
                        ]
                        break
                    wait_for_stop(cfg.backoff_base * 2 ** (attempt - 1))  # wakes at once on a stop
            for res in results:
                writer.add(res)
                on_result(res)
            if writer.due:
                writer.flush()
    finally:
        writer.flush()


def call_order(requests: Sequence[LLMRequest]) -> list[LLMRequest]:
    """The order remote calls are made: each (prompt, attribute) unit's samples in turn, every group of
    one sample together (male 0, female 0, male 1, female 1, ...), units in order of first appearance.

    Requests without ``meta["prompt_id"]`` keep their place.
    """
    first: dict[tuple, int] = {}
    keys = []
    for i, req in enumerate(requests):
        prompt_id = req.meta.get("prompt_id")
        if prompt_id is None:
            keys.append((i, 0, i))
            continue
        unit = first.setdefault((prompt_id, req.meta.get("attribute")), i)
        keys.append((unit, req.sample_idx, i))
    return [req for _, req in sorted(zip(keys, requests, strict=True), key=lambda kr: kr[0])]


PARALLEL_MIN_CALLS = 5000  # below this, one process: each worker costs ~1.5 s of CPU to start
PARALLEL_MIN_CONCURRENCY = 16  # below this, one process is not CPU-bound
MAX_AUTO_PROCESSES = 4


def client_processes(cfg: LLMConfig, calls: int) -> int:
    """How many client processes answer ``calls`` remote calls: ``llm.client_processes``, or by size.

    Auto (0): one process for the aiohttp transport, which needs about 0.3 ms of CPU per call (one
    core keeps ~3,000 calls/s going; a second process measured 0.55 of one's throughput at
    concurrency 128, see ``tests/benchmarks/bench_llm_stage.py``). For the httpx transport, one per
    CPU core (at most 4) for remote providers with 5,000+ calls to make at ``max_concurrency`` 16+,
    else 1. Never more processes than in-flight slots.
    """
    if cfg.provider not in ("openai", "azure"):  # in-process models and applications: this process only
        return 1
    n = cfg.client_processes
    if n == 0 and cfg.http_client == "aiohttp":
        n = 1
    if n == 0:
        big = calls >= PARALLEL_MIN_CALLS and cfg.max_concurrency >= PARALLEL_MIN_CONCURRENCY
        n = min(len(os.sched_getaffinity(0)), MAX_AUTO_PROCESSES) if big else 1
    return max(1, min(n, cfg.max_concurrency, calls))


def _run_in_processes(
    provider: Provider, todo: Sequence[LLMRequest], cfg: LLMConfig, writer: CacheWriter,
    on_result: Callable[[LLMResult], None], secrets: Sequence[str], nproc: int,
) -> None:
    from equilens.tasks.llm.parallel import run_in_processes

    def add(res: LLMResult) -> None:
        writer.add(res)
        on_result(res)

    def flush_due() -> None:
        if writer.due:
            writer.flush()

    try:
        raise_if_stopped("before the first LLM call")
        run_in_processes(call_order(todo), cfg, nproc, getattr(provider, "_key", None), add, flush_due, secrets)
    finally:
        writer.flush()


def run_requests(
    requests: Sequence[LLMRequest],
    cfg: LLMConfig,
    store: Store | None = None,
    provider: Provider | None = None,
    progress: ProgressFn | None = None,
) -> list[LLMResult]:
    """Answer every request: from the cache where possible, else from the provider.

    Returns one result per request, in request order. Requests sharing a cache key are called once.
    A conversation (a prompt of several turns) is answered turn by turn
    (:func:`equilens.tasks.llm.conversation.run_conversations`), each turn through this same stage.
    """
    from equilens.tasks.turns import is_conversation

    if any(is_conversation(r.prompt) for r in requests):
        from equilens.tasks.llm.conversation import run_conversations

        return run_conversations(requests, cfg, answer_requests, store, provider, progress)
    return answer_requests(requests, cfg, store, provider, progress)


def answer_requests(
    requests: Sequence[LLMRequest], cfg: LLMConfig, store: Store | None = None, provider: Provider | None = None,
    progress: ProgressFn | None = None, report: bool = True, call: CallFn | None = None,
) -> list[LLMResult]:
    """:func:`run_requests` for single calls (a conversation's turns are single calls too); ``report``:
    say how many answers come from the cache; ``call``: how a request is answered by a provider
    called one request at a time (default: :func:`~equilens.tasks.llm.calls.call_with_retries`)."""
    done = cached_results(requests, store)
    if report:
        report_cached(requests, done, cfg)
    todo = missing(requests, done)
    total, finished = len(todo), 0

    def on_result(res: LLMResult) -> None:
        nonlocal finished
        done[res.request.cache_key] = res
        finished += 1
        if progress is not None:
            progress(finished, total)

    if todo:
        injected = provider is not None
        provider = provider or make_provider(cfg)
        secrets = secret_values(cfg.api_key_env)
        held = held_secrets()  # once per stage, not per answer: the provider has registered its keys by now
        writer = CacheWriter(store, cfg)
        nproc = 1 if injected else client_processes(cfg, len(todo))
        if provider.batched:
            _run_batched(provider, todo, cfg, writer, on_result, secrets, held)
        elif nproc > 1:
            _run_in_processes(provider, todo, cfg, writer, on_result, secrets, nproc)
        else:
            with signals_as_stop_requests():  # in the main thread, a signal must not raise inside the loop
                asyncio.run(_run_concurrent(provider, todo, cfg, writer, on_result, secrets, held, call))
    return in_order(requests, done)
