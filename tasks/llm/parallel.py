"""Remote LLM calls from several client processes: one event loop and one chat model per process.

Past ~30 calls in flight one Python process is CPU-bound on the client side (HTTP and JSON work per
call), and a second core sits idle. :func:`run_in_processes` starts ``n`` spawned workers; the parent
keeps every guarantee of the single-process runner:

* requests go out in :func:`~equilens.tasks.llm.runner.call_order`, in chunks through one bounded queue (at most
  two chunks per worker wait in it), so no process holds the whole run's coroutines;
* each worker runs its share of ``max_concurrency`` through the same retry loop
  (:func:`~equilens.tasks.llm.calls.call_with_retries`: backoff, ``Retry-After``, per-row failures);
* one rate limit holds across the processes (:class:`SharedRateLimiter`);
* answers come back to the parent in small batches, and the parent's one cache writer puts them in
  DuckDB as they arrive;
* a stop request (Ctrl-C reaches the workers too; they ignore it and wait for the parent) makes the
  workers cancel their calls and send what they have; the parent flushes and raises
  :class:`~equilens.tasks.llm.stop.RunInterrupted`;
* a worker that dies leaves its unanswered requests as failed rows (``ClientProcessDied``), never
  dropped and never cached, so a re-run retries them.
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import os
import queue
import signal
import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from equilens.tasks.config import LLMConfig
from equilens.tasks.llm.base import LLMRequest, LLMResult

CHUNK = 32  # requests per queue item
SEND_EVERY_S = 0.05  # a worker sends its answers at least this often
POLL_S = 0.1  # how often the parent looks for a stop request and for dead workers
STOP_GRACE_S = 3.0  # how long the parent waits for workers to hand back answers after a stop

Row = tuple  # (index, text, ok, refusal, error_class, error_message, attempts, latency_s, prompt_tokens,
#               completion_tokens, top_logprobs)


class SharedRateLimiter:
    """Request starts at least ``1 / rate`` s apart across processes (state in shared memory).

    Like :class:`~equilens.tasks.llm.calls.RateLimiter`, the gap is measured from when the previous caller
    actually went ahead (``time.monotonic`` is one clock for every process on the machine), so a
    stalled process delays its calls instead of releasing them as a burst.
    """

    def __init__(self, rate: float, ctx: Any) -> None:
        self.interval = 1.0 / rate
        self._last = ctx.Value("d", -1.0, lock=False)
        self._lock = ctx.Lock()
        self._local: asyncio.Lock | None = None

    def __getstate__(self) -> dict:
        return {"interval": self.interval, "_last": self._last, "_lock": self._lock}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state, _local=None)

    async def acquire(self) -> None:
        if self._local is None:
            self._local = asyncio.Lock()
        async with self._local:  # one waiter per process polls the shared clock
            while True:
                with self._lock:
                    now = time.monotonic()
                    wait = self._last.value + self.interval - now if self._last.value >= 0 else 0.0
                    if wait <= 0:
                        self._last.value = now
                        return
                await asyncio.sleep(min(wait, 0.05))


def split_concurrency(total: int, n: int) -> list[int]:
    """``total`` in-flight slots over ``n`` processes, as evenly as possible, none empty."""
    n = max(1, min(n, total))
    return [total // n + (1 if i < total % n else 0) for i in range(n)]


def run_in_processes(
    todo: Sequence[LLMRequest], cfg: LLMConfig, nproc: int, api_key: str | None,
    add: Callable[[LLMResult], None], flush_due: Callable[[], None], secrets: Sequence[str],
) -> None:
    """Answer ``todo`` (already in call order) from ``nproc`` worker processes.

    ``add`` receives every result as it arrives (cache writer and progress), ``flush_due`` is called
    between batches. Raises :class:`RunInterrupted` on a stop request, after handing over what came back.
    """
    from equilens.tasks.llm.stop import raise_if_stopped, stop_requested

    ctx = mp.get_context("spawn")  # the parent may run threads (Prefect): never fork it
    shares = split_concurrency(cfg.max_concurrency, nproc)
    tasks: Any = ctx.Queue(maxsize=2 * len(shares))
    results: Any = ctx.Queue()
    stop = ctx.Event()
    limiter = SharedRateLimiter(cfg.rate_limit, ctx) if cfg.rate_limit else None
    workers = [
        ctx.Process(target=_worker_main, name=f"equilens-llm-client-{i}", daemon=True,
                    args=(i, cfg.model_copy(update={"max_concurrency": share}), api_key, tasks, results, stop,
                          limiter, list(secrets), os.getpid()))
        for i, share in enumerate(shares)
    ]
    for w in workers:
        w.start()
    answered: set[int] = set()
    finished: set[int] = set()
    fatal: dict[int, str] = {}
    chunks = ((s, [(i, r.prompt, r.sample_idx, r.system) for i, r in enumerate(todo[s : s + CHUNK], s)])
              for s in range(0, len(todo), CHUNK))
    next_chunk = next(chunks, None)
    sentinels = len(workers)

    def take(msg: tuple) -> None:
        kind = msg[0]
        if kind == "rows":
            for row in msg[1]:
                idx = row[0]
                if idx in answered:
                    continue
                answered.add(idx)
                add(LLMResult(todo[idx], *row[1:10], top_logprobs=row[10]))
        elif kind == "done":
            finished.add(msg[1])
        elif kind == "fatal":
            finished.add(msg[1])
            fatal[msg[1]] = msg[2]

    try:
        while True:
            while next_chunk is not None or sentinels:  # keep the bounded queue topped up
                item = next_chunk[1] if next_chunk is not None else None
                try:
                    tasks.put_nowait(item)
                except queue.Full:
                    break
                if next_chunk is not None:
                    next_chunk = next(chunks, None)
                else:
                    sentinels -= 1
            try:
                take(results.get(timeout=POLL_S))
                while True:
                    take(results.get_nowait())
            except queue.Empty:
                pass
            flush_due()
            if stop_requested():
                stop.set()
                _drain_after_stop(workers, results, finished, take)
                raise_if_stopped(f"with {len(todo) - len(answered)} LLM calls not finished")
            alive = [w for i, w in enumerate(workers) if i not in finished and w.exitcode is None]
            if not alive:
                break
    finally:
        stop.set()
        for w in workers:
            w.join(timeout=2.0)
            if w.exitcode is None:
                w.terminate()
                w.join(timeout=1.0)
        for q in (tasks, results):
            q.cancel_join_thread()
            q.close()
    try:  # answers sent just before a worker ended
        while True:
            take(results.get_nowait())
    except (queue.Empty, OSError, ValueError):
        pass
    why = "; ".join(f"client process {i}: {m}" for i, m in sorted(fatal.items())) or "a client process ended early"
    for idx, req in enumerate(todo):
        if idx not in answered:
            add(LLMResult(req, None, False, False, "ClientProcessDied", why[:500], 0))


def _drain_after_stop(workers: list, results: Any, finished: set[int], take: Callable[[tuple], None]) -> None:
    deadline = time.monotonic() + STOP_GRACE_S
    while time.monotonic() < deadline:
        if all(i in finished or w.exitcode is not None for i, w in enumerate(workers)):
            break
        try:
            take(results.get(timeout=0.05))
        except queue.Empty:
            pass
    try:
        while True:
            take(results.get_nowait())
    except queue.Empty:
        pass


def _worker_main(wid: int, cfg: LLMConfig, api_key: str | None, tasks: Any, results: Any, stop: Any,
                 limiter: SharedRateLimiter | None, secrets: list[str], parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the parent decides
    try:
        asyncio.run(_worker(cfg, api_key, tasks, results, stop, limiter, secrets, parent))
        results.put(("done", wid))
    except BaseException as err:  # noqa: BLE001 - reported to the parent, which records the rows
        results.put(("fatal", wid, f"{type(err).__name__}: {err}"[:300]))
        traceback.print_exc()


def _provider(cfg: LLMConfig, api_key: str | None) -> Any:
    from equilens.tasks.llm.calls import make_provider

    if cfg.provider in ("openai", "azure"):
        from equilens.tasks.llm.openai_provider import OpenAIChatProvider

        return OpenAIChatProvider(cfg, azure=cfg.provider == "azure", api_key=api_key)
    return make_provider(cfg)


async def _worker(cfg: LLMConfig, api_key: str | None, tasks: Any, results: Any, stop: Any,
                  limiter: SharedRateLimiter | None, secrets: list[str], parent: int) -> None:
    from equilens.tasks.llm.base import held_secrets
    from equilens.tasks.llm.calls import RateLimiter, call_with_retries
    from equilens.tasks.llm.loops import Loops

    provider = _provider(cfg, api_key)
    held = held_secrets()  # once per worker, after the provider registered its keys
    pace = limiter or (RateLimiter(cfg.rate_limit) if cfg.rate_limit else None)
    loop = asyncio.get_running_loop()
    local: asyncio.Queue = asyncio.Queue(maxsize=cfg.max_concurrency)
    out: list[Row] = []

    async def feed() -> None:
        while True:
            chunk = await loop.run_in_executor(None, _get_chunk, tasks, stop)
            if chunk is None:
                break
            for item in chunk:
                await local.put(item)
        for _ in range(cfg.max_concurrency):
            await local.put(None)

    async def call() -> None:
        while (item := await local.get()) is not None:
            idx, prompt, sample_idx, system = item  # a user profile travels as the call's system message
            res = await call_with_retries(provider, LLMRequest(prompt, sample_idx, "", system=system), cfg, pace,
                                          secrets, held)
            out.append((idx, res.text, res.ok, res.refusal, res.error_class, res.error_message, res.attempts,
                        res.latency_s, res.prompt_tokens, res.completion_tokens, res.top_logprobs))

    def send() -> None:
        if out:
            batch = out[:]
            del out[:]
            results.put(("rows", batch))

    await provider.aopen()
    jobs = [asyncio.ensure_future(feed())] + [asyncio.ensure_future(call()) for _ in range(cfg.max_concurrency)]
    try:
        loops = Loops(jobs[1:])
        while loops.running:
            for fut in await loops.ended(SEND_EVERY_S):
                fut.result()
            send()
            if stop.is_set() or os.getppid() != parent:
                break
    finally:
        for fut in jobs:
            fut.cancel()
        await asyncio.gather(*jobs, return_exceptions=True)
        send()
        await provider.aclose()


def _get_chunk(tasks: Any, stop: Any) -> list | None:
    while not stop.is_set():
        try:
            return tasks.get(timeout=POLL_S)
        except queue.Empty:
            continue
    return None
