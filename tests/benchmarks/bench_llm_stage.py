"""LLM stage throughput against the loopback OpenAI-compatible server with 50 ms latency.

Prints calls/s at concurrency 8, 32 and 128 through the real langchain-openai client, the ideal
(concurrency / latency), their ratio, and CPU time per call. Run:

    .venv/bin/python tests/benchmarks/bench_llm_stage.py [--calls 600]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import subprocess  # noqa: E402

from tasks.config import LLMConfig  # noqa: E402
from tasks.llm import LLMRequest, cache_key, run_requests  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

LATENCY = 0.05


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=600)
    args = parser.parse_args()
    print(f"{'concurrency':>11} {'calls':>6} {'seconds':>8} {'calls/s':>8} {'ideal':>7} {'ratio':>6} {'cpu ms/call':>11}")
    # The server runs in its own process so it does not compete with the client for the GIL.
    server = subprocess.Popen([sys.executable, "-m", "tests.fakes.openai_server", "--latency", str(LATENCY)],
                              cwd=ROOT, stdout=subprocess.PIPE, text=True)
    base_url = server.stdout.readline().strip()
    try:
        for concurrency in (8, 32, 128):
            cfg = LLMConfig(provider="openai", model="bench", base_url=base_url, max_concurrency=concurrency,
                            max_retries=0, timeout=30, system_prompt=f"bench {concurrency}")
            reqs = [LLMRequest(f"prompt {i}", 0, cache_key(cfg, f"prompt {i}", 0)) for i in range(args.calls)]
            wall0, cpu0 = time.perf_counter(), time.process_time()
            results = run_requests(reqs, cfg, store=None)
            wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
            failed = [r for r in results if not r.ok]
            if failed:
                raise SystemExit(f"{len(failed)} calls failed, e.g. {failed[0].error_class}: {failed[0].error_message}")
            rate, ideal = args.calls / wall, concurrency / LATENCY
            print(f"{concurrency:>11} {args.calls:>6} {wall:>8.2f} {rate:>8.1f} {ideal:>7.0f} {rate / ideal:>6.2f} "
                  f"{1000 * cpu / args.calls:>11.2f}")
    finally:
        server.kill()


if __name__ == "__main__":
    main()
