"""Application providers' throughput against calling the application directly, side by side.

Two comparisons, each side run in this process with the same latency and concurrency, alternating
(``--repeats`` runs of each side, compared by their medians), so both see the same machine:

* ``python``: equilens' LLM stage (``run_requests``, ``llm.provider: python``, no store, so no cache)
  calling an async function that awaits ``asyncio.sleep(latency)`` and returns a string, against a
  bare ``asyncio.gather`` over the same function under a semaphore of the same concurrency;
* ``langchain``: the stage with ``llm.provider: langchain`` calling a LangChain chat model whose
  ``_agenerate`` sleeps the latency and returns a fixed message (usage metadata included), against
  that model's own ``abatch`` over the same messages with ``max_concurrency`` set alike.

Each side counts from its event loop's start to its last answer; the stage's requests (with their
cache keys) are built before the clock starts, as a run builds them in an earlier stage. Prints calls/s per side, the ideal
(concurrency / latency) and, last, the two ratios (target: 0.9 or more). Run:

    .venv/bin/python tests/benchmarks/bench_application_providers.py [--calls 2000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from equilens.tasks.config import LLMConfig
from equilens.tasks.llm import LLMRequest, cache_key, run_requests
from equilens.tasks.llm.targets import hand_over
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult

SYSTEM = "You are a helpful assistant."
ANSWER = "A fixed answer of a few words."
LATENCY = 0.02  # set from --latency before any call


async def answer(prompt: str, system: str | None = None) -> str:
    """The application of the python comparison: waits the latency, answers a fixed string."""
    await asyncio.sleep(LATENCY)
    return ANSWER


class SleepingChat(BaseChatModel):
    """A chat model that waits the latency and answers a fixed message, as a remote one does."""

    latency: float = 0.02

    @property
    def _llm_type(self) -> str:
        return "sleeping-chat"

    def _result(self) -> ChatResult:
        usage = {"input_tokens": 12, "output_tokens": 7, "total_tokens": 19}
        return ChatResult(generations=[ChatGeneration(message=AIMessage(ANSWER, usage_metadata=usage))])

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        time.sleep(self.latency)
        return self._result()

    async def _agenerate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                         **kwargs: Any) -> ChatResult:
        await asyncio.sleep(self.latency)
        return self._result()


def requests(cfg: LLMConfig, calls: int) -> list[LLMRequest]:
    """The stage's requests, built before the clock starts (a run builds them in its expand stage)."""
    return [LLMRequest(f"prompt {i}", 0, cache_key(cfg, f"prompt {i}", 0)) for i in range(calls)]


def stage(cfg: LLMConfig, reqs: list[LLMRequest]) -> None:
    """Every call through equilens' LLM stage, checked answered."""
    results = run_requests(reqs, cfg, store=None)
    failed = [r for r in results if not r.ok]
    if failed:
        raise SystemExit(f"{len(failed)} calls failed, e.g. {failed[0].error_class}: {failed[0].error_message}")


def bare_gather(calls: int, concurrency: int) -> None:
    """The python ceiling: the same function over every prompt, ``concurrency`` at a time."""
    async def run() -> None:
        gate = asyncio.Semaphore(concurrency)

        async def one(i: int) -> str:
            async with gate:
                return await answer(f"prompt {i}", system=SYSTEM)

        await asyncio.gather(*(one(i) for i in range(calls)))

    asyncio.run(run())


def bare_abatch(model: SleepingChat, calls: int, concurrency: int) -> None:
    """The langchain ceiling: the model's own ``abatch`` over the same messages."""
    inputs = [[SystemMessage(SYSTEM), HumanMessage(f"prompt {i}")] for i in range(calls)]

    async def run() -> None:
        out = await model.abatch(inputs, config={"max_concurrency": concurrency})
        assert all(m.content == ANSWER for m in out)

    asyncio.run(run())


def timed(fn: Callable[[], None]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def compare(label: str, ours: Callable[[], None], ceiling: Callable[[], None], calls: int, repeats: int,
            ceiling_name: str) -> float:
    """Runs the two sides alternately ``repeats`` times; prints each run and returns the median ratio."""
    ours_s, ceiling_s = [], []
    for rep in range(repeats):
        first, second = (ours, ceiling) if rep % 2 == 0 else (ceiling, ours)  # neither side always goes first
        a, b = timed(first), timed(second)
        ours_s.append(a if first is ours else b)
        ceiling_s.append(b if first is ours else a)
        print(f"  {label} run {rep + 1}: equilens {calls / ours_s[-1]:7.0f} calls/s, {ceiling_name} "
              f"{calls / ceiling_s[-1]:7.0f} calls/s", flush=True)
    return statistics.median(ceiling_s) / statistics.median(ours_s)


def main() -> None:
    global LATENCY
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per run of each side")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each side; ratios of the medians")
    parser.add_argument("--latency", type=float, default=0.02, help="seconds each call waits")
    parser.add_argument("--concurrency", type=int, default=32, help="max_concurrency of both sides")
    args = parser.parse_args()
    LATENCY = args.latency
    ideal = args.concurrency / args.latency
    print(f"{len(os.sched_getaffinity(0))} CPU cores usable, load average {os.getloadavg()[0]:.1f}; {args.calls} "
          f"calls per run, latency {1000 * args.latency:.0f} ms, concurrency {args.concurrency} "
          f"(ideal {ideal:.0f} calls/s)")
    common = {"max_concurrency": args.concurrency, "max_retries": 0, "timeout": 30, "system_prompt": SYSTEM}

    python_cfg = LLMConfig(provider="python", target=hand_over(answer), **common)
    stage(python_cfg, requests(python_cfg, 50))  # warm-up: imports and first calls are not timed
    bare_gather(50, args.concurrency)
    python_reqs = requests(python_cfg, args.calls)
    py = compare("python", lambda: stage(python_cfg, python_reqs), lambda: bare_gather(args.calls, args.concurrency),
                 args.calls, args.repeats, "asyncio.gather")

    model = SleepingChat(latency=args.latency)
    lc_cfg = LLMConfig(provider="langchain", target=hand_over(model), **common)
    stage(lc_cfg, requests(lc_cfg, 50))
    bare_abatch(model, 50, args.concurrency)
    lc_reqs = requests(lc_cfg, args.calls)
    lc = compare("langchain", lambda: stage(lc_cfg, lc_reqs),
                 lambda: bare_abatch(model, args.calls, args.concurrency), args.calls, args.repeats, "abatch")

    print(f"python provider / bare asyncio.gather: ratio {py:.2f}")
    print(f"langchain provider / abatch: ratio {lc:.2f}")


if __name__ == "__main__":
    main()
