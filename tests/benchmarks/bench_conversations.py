"""A conversation's client cost: N conversations of three turns against 3N single calls, through the
same LLM stage, against the loopback OpenAI-compatible server with 50 ms latency (in its own process).

All sides make the same number of calls: single calls of each turn alone; the conversations' own
requests, each made as a single call (every turn with the history a conversation gives it: the
earlier turns and the server's answers to them, which it echoes, so the same bytes go each way), all
side by side; and conversations, whose turns each wait for the turn before and carry its answer on.
Against the first, a conversation's whole cost shows, its history's bytes included; against the
second, what being a conversation costs beyond the requests it makes. Each round runs the three
sides, each first in turn, with a new system prompt (nothing cached), and prints the client's CPU
per call and the wall time of each; the summary gives the ratios of conversations to each kind of
single call, of all rounds together (the CPU of every round summed per side, which one slow round
moves less than a median of per-round ratios; those are listed beside it), with a 95% bootstrap
interval over the rounds: client CPU at most 1.0 means a 3-turn conversation costs no more than
three single calls of client time, and an interval that ends at or below 1.0 shows it.

``--network-free`` leaves the server out: every POST is answered at once in this process with one
fixed chat-completion reply, so what is timed is the stage's and the provider's own work per call
(request bodies, replies parsed, results built), without the network and the waits around it. Run:

    .venv/bin/python tests/benchmarks/bench_conversations.py [--conversations 500] [--rounds 6] [--network-free]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from equilens.tasks.config import LLMConfig
from equilens.tasks.llm import LLMRequest, cache_key, run_requests
from equilens.tasks.turns import join_turns

from tests.benchmarks.bench_llm_stage import cpu_seconds

ROOT = Path(__file__).resolve().parents[2]
LATENCY = 0.05
TURNS = ("Hi, my name is Jordan {i}.", "I just moved to a new city for work.", "What salary should I ask for?")


def measure(side: str, conversations: int, base_url: str, concurrency: int, tag: str) -> tuple[float, float, int]:
    """(client CPU ms per call, wall seconds, calls) of one side."""
    cfg = LLMConfig(provider="openai", model="bench", base_url=base_url, max_concurrency=concurrency, max_retries=0,
                    timeout=30, system_prompt=f"bench {side} {tag}")
    if side == "conversations":
        texts = [join_turns([t.format(i=i) for t in TURNS]) for i in range(conversations)]
        reqs = [LLMRequest(t, 0, cache_key(cfg, t, 0)) for t in texts]
    elif side == "requests":  # each turn's own request, its history as the messages, made as a single call
        reqs = [LLMRequest(t.format(i=i), 0, cache_key(cfg, f"{i}.{k}", 0), history=echoed(TURNS[:k], i),
                           conversation=str(i)) for i in range(conversations) for k, t in enumerate(TURNS)]
    else:  # each turn alone, all distinct
        texts = [f"{t.format(i=i)} ({i}.{k})" for i in range(conversations) for k, t in enumerate(TURNS)]
        reqs = [LLMRequest(t, 0, cache_key(cfg, t, 0)) for t in texts]
    wall0, cpu0 = time.perf_counter(), cpu_seconds()
    results = run_requests(reqs, cfg, store=None)
    wall, cpu = time.perf_counter() - wall0, cpu_seconds() - cpu0
    failed = [r for r in results if not r.ok]
    if failed:
        raise SystemExit(f"{len(failed)} {side} failed, e.g. {failed[0].error_class}: {failed[0].error_message}")
    calls = conversations * len(TURNS)
    return 1000 * cpu / calls, wall, calls


def echoed(turns: tuple[str, ...], i: int) -> tuple[dict[str, str], ...]:
    """The history a conversation's turn after ``turns`` carries: each turn and the loopback server's
    answer to it ("echo: " and the turn)."""
    said = [t.format(i=i) for t in turns]
    return tuple(m for t in said for m in ({"role": "user", "content": t}, {"role": "assistant", "content": f"echo: {t}"}))


SIDES = ("single", "requests", "conversations")
FIXED_REPLY = json.dumps({
    "id": "bench", "object": "chat.completion", "created": 0, "model": "bench",
    "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": "echo: I just moved to a new city for work."}}],
    "usage": {"prompt_tokens": 40, "completion_tokens": 10, "total_tokens": 50}}).encode()


def cut_network() -> None:
    """Every POST of the openai provider's connection pool answered at once with :data:`FIXED_REPLY`
    (after one pass of the event loop, as an answer that had already arrived would be)."""
    from equilens.tasks.llm.aiohttp_post import AiohttpPost

    async def answered_at_once(self: AiohttpPost, data: bytes, limit: int | None = None) -> tuple[bytes, bool]:
        await asyncio.sleep(0)
        return FIXED_REPLY, True

    AiohttpPost.post = answered_at_once  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=500, help="conversations of three turns per side")
    parser.add_argument("--rounds", type=int, default=6, help="rounds; each side's CPU is summed over them")
    parser.add_argument("--concurrency", type=int, default=32, help="llm.max_concurrency")
    parser.add_argument("--network-free", action="store_true",
                        help="no server: every call answered at once in this process (the stage's own work)")
    args = parser.parse_args()
    if args.network_free:
        cut_network()
    server = subprocess.Popen([sys.executable, "-m", "tests.fakes.openai_server", "--latency", str(LATENCY),
                               "--reply", "last-line"],  # every answer echoes one turn
                              cwd=ROOT, stdout=subprocess.PIPE, text=True)
    base_url = server.stdout.readline().strip()
    print(f"{len(os.sched_getaffinity(0))} CPU cores usable, load average {os.getloadavg()[0]:.1f}; "
          f"{args.conversations} conversations of {len(TURNS)} turns against {args.conversations * len(TURNS)} "
          f"single calls, concurrency {args.concurrency}"
          + ("; no network: every call answered at once" if args.network_free else ""))
    runs: dict[str, list[tuple[float, float]]] = {side: [] for side in SIDES}  # (CPU ms a call, wall s), each round
    try:
        for side in SIDES:  # warm-up: imports and first connections are not timed
            measure(side, 5, base_url, 4, "warm")
        for rnd in range(args.rounds):
            for side in SIDES[rnd % 3:] + SIDES[: rnd % 3]:  # each side first in turn
                cpu, wall, calls = measure(side, args.conversations, base_url, args.concurrency, str(rnd))
                print(f"round {rnd}: {side:>13}: {calls} calls, {wall:6.2f} s, client CPU {cpu:.3f} ms a call", flush=True)
                runs[side].append((cpu, wall))
    finally:
        server.kill()
    cpu = {side: [c for c, _ in found] for side, found in runs.items()}
    wall = {side: sum(w for _, w in found) for side, found in runs.items()}
    for base in ("single", "requests"):
        what = "three single calls" if base == "single" else "its three requests made as single calls"
        low, high = round_interval(cpu["conversations"], cpu[base])
        each = ", ".join(f"{c / b:.2f}" for c, b in zip(cpu["conversations"], cpu[base], strict=True))
        print(f"conversations / {what} ({args.rounds} rounds together): client CPU per call "
              f"{sum(cpu['conversations']) / sum(cpu[base]):.2f}, 95% interval over rounds {low:.2f}-{high:.2f} "
              f"(rounds: {each}); wall time {wall['conversations'] / wall[base]:.2f}")


def round_interval(conversations: list[float], base: list[float], draws: int = 4000) -> tuple[float, float]:
    """A 95% percentile-bootstrap interval of the ratio of the two sides' summed CPU, the rounds drawn
    with replacement (a round keeps its two sides together: they ran back to back on the same load)."""
    import numpy as np

    conv, other = np.asarray(conversations), np.asarray(base)
    picks = np.random.default_rng(0).integers(0, len(conv), size=(draws, len(conv)))
    ratios = conv[picks].sum(axis=1) / other[picks].sum(axis=1)
    return float(np.quantile(ratios, 0.025)), float(np.quantile(ratios, 0.975))


if __name__ == "__main__":
    main()
