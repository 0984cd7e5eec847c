"""LLM stage throughput against the loopback OpenAI-compatible server with 50 ms latency.

Prints calls/s at concurrency 8, 32 and 128 through langchain-openai, the ideal (concurrency /
latency), their ratio, the client's CPU time per call (all client processes counted, their start
included) and the loopback server's CPU time per call (it shares the machine's cores). With
``--compare`` (the default) the earlier client path ("before": ``ChatOpenAI.ainvoke`` per call, one
httpx pool, one process) and the current one ("after": prebuilt request through the OpenAI client
that ChatOpenAI configured, small connection pools, ``llm.client_processes`` chosen by size) run
alternately, each concurrency level once per path per round, so both see the same machine. Run:

    .venv/bin/python tests/benchmarks/bench_llm_stage.py [--calls 2000] [--rounds 1] [--processes 0] [--no-compare]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from tasks.config import LLMConfig  # noqa: E402
from tasks.llm import Completion, LLMRequest, cache_key, run_requests  # noqa: E402
from tasks.llm.openai_provider import OpenAIChatProvider  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LATENCY = 0.05


class BeforeProvider(OpenAIChatProvider):
    """The provider as it was before its batched transport: one ``ainvoke`` per call, langchain's own httpx pool."""

    async def aopen(self) -> None:
        self._client()

    async def acomplete(self, prompt: str, sample_idx: int) -> Completion:
        msg = await self._client().ainvoke([("system", self.cfg.system_prompt), ("human", prompt)])
        usage = getattr(msg, "usage_metadata", None) or {}
        meta = getattr(msg, "response_metadata", None) or {}
        content = msg.content if isinstance(msg.content, str) else str(msg.content)
        return Completion(content, meta.get("finish_reason"), usage.get("input_tokens"), usage.get("output_tokens"))


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the client processes), not the server's."""
    own = time.process_time()
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own + kids.ru_utime + kids.ru_stime


def proc_cpu_seconds(pid: int) -> float:
    """CPU time of another process (the server) from /proc; 0 where /proc is missing."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(path: str, concurrency: int, calls: int, base_url: str, processes: int, tag: int,
            server_pid: int = 0) -> tuple:
    cfg = LLMConfig(provider="openai", model="bench", base_url=base_url, max_concurrency=concurrency,
                    max_retries=0, timeout=30, system_prompt=f"bench {path} {concurrency} {tag}",
                    client_processes=processes)
    reqs = [LLMRequest(f"prompt {i}", 0, cache_key(cfg, f"prompt {i}", 0)) for i in range(calls)]
    provider = BeforeProvider(cfg) if path == "before" else None
    wall0, cpu0, srv0 = time.perf_counter(), cpu_seconds(), proc_cpu_seconds(server_pid)
    results = run_requests(reqs, cfg, store=None, provider=provider)
    wall, cpu = time.perf_counter() - wall0, cpu_seconds() - cpu0
    srv = proc_cpu_seconds(server_pid) - srv0
    failed = [r for r in results if not r.ok]
    if failed:
        raise SystemExit(f"{len(failed)} calls failed, e.g. {failed[0].error_class}: {failed[0].error_message}")
    from tasks.llm.runner import client_processes

    nproc = 1 if path == "before" else client_processes(cfg, calls)
    return calls / wall, wall, 1000 * cpu / calls, nproc, 1000 * srv / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--processes", type=int, default=0, help="llm.client_processes for 'after' (0 = auto)")
    parser.add_argument("--levels", type=int, nargs="*", default=[8, 32, 128])
    parser.add_argument("--no-compare", action="store_true", help="only the current path")
    args = parser.parse_args()
    paths = ["after"] if args.no_compare else ["before", "after"]
    # The server runs in its own process so it does not compete with the client for the GIL.
    server = subprocess.Popen([sys.executable, "-m", "tests.fakes.openai_server", "--latency", str(LATENCY)],
                              cwd=ROOT, stdout=subprocess.PIPE, text=True)
    base_url = server.stdout.readline().strip()
    print(f"{len(os.sched_getaffinity(0))} CPU cores usable, load average {os.getloadavg()[0]:.1f}; {args.calls} calls per cell")
    print(f"{'path':>6} {'conc':>5} {'procs':>5} {'seconds':>8} {'calls/s':>8} {'ideal':>6} {'ratio':>6} "
          f"{'cpu ms/call':>11} {'server ms':>10}")
    try:
        for path in paths:  # warm-up: imports and first connections are not timed
            measure(path, 4, 20, base_url, 1, -1)
        rows: dict[tuple, list] = {}
        for rnd in range(args.rounds):
            for concurrency in args.levels:
                for path in paths:
                    rate, wall, cpu, nproc, srv = measure(path, concurrency, args.calls, base_url, args.processes,
                                                          rnd, server.pid)
                    ideal = concurrency / LATENCY
                    rows.setdefault((path, concurrency), []).append((rate, cpu))
                    print(f"{path:>6} {concurrency:>5} {nproc:>5} {wall:>8.2f} {rate:>8.1f} {ideal:>6.0f} "
                          f"{rate / ideal:>6.2f} {cpu:>11.2f} {srv:>10.2f}", flush=True)
        if len(paths) == 2:
            print("\nafter / before (median over rounds): throughput ratio, CPU per call")
            for concurrency in args.levels:
                b, a = rows[("before", concurrency)], rows[("after", concurrency)]
                med = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
                print(f"  concurrency {concurrency:>4}: {med([x[0] for x in a]) / med([x[0] for x in b]):5.2f}x calls/s, "
                      f"{med([x[1] for x in b]):.2f} -> {med([x[1] for x in a]):.2f} ms CPU per call")
    finally:
        server.kill()


if __name__ == "__main__":
    main()
