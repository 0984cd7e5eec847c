"""The LLM stage from several client processes (llm.client_processes): same answers, same guarantees."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from equilens.tasks.config import LLMConfig
from equilens.tasks.llm import LLMRequest, cache_key, run_requests
from equilens.tasks.llm.parallel import split_concurrency
from equilens.tasks.llm.runner import PARALLEL_MIN_CALLS, client_processes
from equilens.tasks.llm.stop import RunInterrupted, clear_stop, request_stop
from equilens.tasks.storage.store import Store

from tests.fakes.openai_server import FakeOpenAIServer, openai_server  # noqa: F401 - fixture


def _cfg(server: FakeOpenAIServer, **kw: object) -> LLMConfig:
    base = dict(provider="openai", model="fake", base_url=server.base_url, max_retries=2, backoff_base=0.01,
                timeout=5.0, max_concurrency=6, client_processes=2)
    return LLMConfig(**{**base, **kw})


def _reqs(cfg: LLMConfig, prompts: list[str], count: int = 1) -> list[LLMRequest]:
    return [LLMRequest(p, i, cache_key(cfg, p, i), {"prompt_id": p, "attribute": "gender"})
            for p in prompts for i in range(count)]


def test_two_processes_answer_every_request_once_in_order_and_cache_them(
    openai_server: FakeOpenAIServer, tmp_path: Path,  # noqa: F811
) -> None:
    cfg = _cfg(openai_server)
    store = Store(tmp_path / "c.duckdb")
    prompts = [f"p{i}" for i in range(70)]  # three chunks of 32: both workers get some
    seen: list[int] = []
    results = run_requests(_reqs(cfg, prompts, count=2), cfg, store, progress=lambda done, total: seen.append(done))
    assert [r.text for r in results] == [f"echo: {p}" for p in prompts for _ in range(2)]
    assert all(r.ok and r.attempts == 1 and not r.cached for r in results)
    assert len(openai_server.requests) == 140 and seen[-1] == 140  # each call made once, progress counted
    assert len(store.cache_get([r.request.cache_key for r in results])) == 140
    again = run_requests(_reqs(cfg, prompts, count=2), cfg, store)  # resume: nothing left to call
    assert len(openai_server.requests) == 140 and all(r.cached for r in again)


def test_retries_and_per_row_failures_in_the_workers(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    cfg = _cfg(openai_server)
    openai_server.fault_for = lambda body: "500" if body["messages"][-1]["content"] == "boom" else None
    openai_server.fail_next("429", times=2, retry_after=0.05)  # the first two calls are retried
    results = run_requests(_reqs(cfg, ["boom", *[f"ok{i}" for i in range(20)]]), cfg)
    by = {r.request.prompt: r for r in results}
    assert (by["boom"].ok, by["boom"].error_class, by["boom"].attempts) == (False, "ServerError", 3)
    assert all(by[f"ok{i}"].ok and by[f"ok{i}"].text == f"echo: ok{i}" for i in range(20))
    assert openai_server.pending_faults == []  # both 429s were served ...
    assert sum(r.attempts for r in results) == len(openai_server.requests)  # ... and every attempt is counted
    assert sum(r.attempts for r in results) >= 20 + 3 + 1  # at least one 429 hit an answered row: retried
    assert len(results) == 21


def test_one_rate_limit_across_processes(openai_server: FakeOpenAIServer) -> None:  # noqa: F811
    cfg = _cfg(openai_server, rate_limit=8.0, client_processes=3)
    results = run_requests(_reqs(cfg, [f"r{i}" for i in range(12)]), cfg)
    assert all(r.ok for r in results)
    times = sorted(openai_server.times)
    # 8/s shared by three processes: starts 1/8 s apart, so at most 8 + 1 in any second, and the 12 calls
    # span at least 11/8 s (less the arrival jitter of a busy machine); three limiters of their own would
    # have sent all 12 within ~0.5 s, 12 in one second. Arrivals allow one more: a process takes its
    # first slot before its first call has a connection, so that call can arrive after the next slot's
    # (seen once in a full-suite run: arrivals 0.0, 0.001, 0.109, 0.239, ..., 10 in one second)
    busiest = max(sum(1 for u in times[i:] if u < t + 1.0) for i, t in enumerate(times))
    assert busiest <= 8 + 2, [round(t - times[0], 3) for t in times]
    assert times[-1] - times[0] >= 11 / 8 - 0.3


def test_stop_request_cancels_workers_and_keeps_the_answers(
    openai_server: FakeOpenAIServer, tmp_path: Path,  # noqa: F811
) -> None:
    cfg = _cfg(openai_server, timeout=30.0)
    quick = {f"q{i}" for i in range(4)}
    openai_server.fault_for = lambda body: None if body["messages"][-1]["content"] in quick else ("hang", {"seconds": 30})
    store = Store(tmp_path / "c.duckdb")
    reqs = _reqs(cfg, sorted(quick) + [f"h{i}" for i in range(40)])

    def stop_when_answered() -> None:
        deadline = time.monotonic() + 60
        while openai_server.answers < len(quick) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # the answers reach the parent
        request_stop()

    threading.Thread(target=stop_when_answered, daemon=True).start()
    t0 = time.monotonic()
    try:
        with pytest.raises(RunInterrupted):
            run_requests(reqs, cfg, store)
        stopped_after = time.monotonic() - t0
    finally:
        clear_stop()
    assert stopped_after < 25, stopped_after  # hanging calls were cancelled, not waited for (30 s each)
    cached = store.cache_get([r.cache_key for r in reqs])
    assert {v["text"] for v in cached.values()} == {f"echo: {q}" for q in quick}


def test_process_count_is_chosen_by_size() -> None:
    lean = LLMConfig(provider="openai", model="m", base_url="http://127.0.0.1:9/v1", max_concurrency=32)
    assert lean.http_client == "aiohttp" and client_processes(lean, 10**6) == 1  # one core keeps ~3,000 calls/s
    remote = lean.model_copy(update={"http_client": "httpx"})
    assert client_processes(remote, 100) == 1  # small run: one process, no start-up cost
    assert client_processes(remote, PARALLEL_MIN_CALLS) >= 1
    assert client_processes(remote.model_copy(update={"max_concurrency": 4}), 10**6) == 1  # not CPU-bound
    assert client_processes(remote.model_copy(update={"client_processes": 3}), 10) == 3  # explicit
    assert client_processes(remote.model_copy(update={"client_processes": 3, "max_concurrency": 2}), 10) == 2
    assert client_processes(LLMConfig(provider="local", client_processes=4), 10**6) == 1
    # 10 slots over 3 processes: 4 + 3 + 3, every slot used once
    assert split_concurrency(10, 3) == [4, 3, 3] and split_concurrency(2, 5) == [1, 1]


class _CountingProvider:
    """A remote-style provider that records how many asyncio tasks exist while it answers."""

    name, model, batched = "counting", "fake", False

    def __init__(self) -> None:
        self.most_tasks = 0

    async def acomplete(self, prompt: str, sample_idx: int):
        import asyncio

        from equilens.tasks.llm import Completion

        self.most_tasks = max(self.most_tasks, len(asyncio.all_tasks()))
        await asyncio.sleep(0)
        return Completion(f"echo: {prompt}")

    def complete_batch(self, prompts, sample_idxs):
        raise NotImplementedError

    async def aclose(self) -> None:
        return None


def test_requests_stream_through_a_bounded_number_of_call_loops() -> None:
    cfg = LLMConfig(provider="openai", model="fake", base_url="http://127.0.0.1:9/v1", max_concurrency=4)
    provider = _CountingProvider()
    reqs = [LLMRequest(f"p{i}", 0, cache_key(cfg, f"p{i}", 0)) for i in range(3000)]
    results = run_requests(reqs, cfg, provider=provider)
    assert [r.text for r in results] == [f"echo: p{i}" for i in range(3000)]
    # the main task and 4 call loops, whatever the run's size: each call runs in its loop's task under
    # its deadline (asyncio.wait_for would add a task per call in flight; one task per request: 3,000+)
    assert provider.most_tasks <= 1 + 4, provider.most_tasks


def test_client_processes_send_each_call_its_system_message_and_keep_log_probabilities(
    openai_server: FakeOpenAIServer, tmp_path: Path,  # noqa: F811
) -> None:
    # a worker process rebuilds each request whole: a user profile in the call's system message
    # must reach the endpoint, or every identity variant would ask the same question
    cfg = _cfg(openai_server, logprobs=5)
    openai_server.reply = lambda body: (f"yes {body['messages'][0]['content']}", {"yes": -0.2, "no": -1.8})
    reqs = [LLMRequest(f"p{i}", 0, cache_key(cfg, f"p{i}", 0, f"The user's name is N{i}."),
                       {"prompt_id": f"p{i}"}, system=f"The user's name is N{i}.") for i in range(40)]
    store = Store(tmp_path / "c.duckdb")
    results = run_requests(reqs, cfg, store)
    assert [r.text for r in results] == [f"yes The user's name is N{i}." for i in range(40)]
    assert all(r.top_logprobs == {"yes": -0.2, "no": -1.8} for r in results)
    assert all(body["logprobs"] is True and body["top_logprobs"] == 5 for body in openai_server.requests)
    again = run_requests(reqs, cfg, store)  # from the cache: the log-probabilities come back too
    assert all(r.cached and r.top_logprobs == {"yes": -0.2, "no": -1.8} for r in again)
